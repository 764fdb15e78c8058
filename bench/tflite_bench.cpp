// Throughput of the .tflite front end on real models from ../shared/models:
//   ReadModel/...      read_model (workloads/tflite/reader.hpp) on the largest file and the
//                      697-operator unrolled LSTM: models and bytes per second; each iteration checks
//                      the operator count against the first read.
//   LowerForNpu/...    lower_for_npu (npu_lowering.hpp) on the largest model, ssd_mobilenet_v3 and the
//                      697-operator LSTM: models per second; each iteration checks the pass count.
//   EncodeWeights/...  encode_operator_weights (weight_encoding.hpp) over every weight operator of
//                      mobilenet_v2: weights per second; each iteration checks the total encoded
//                      bytes against the first run.
// So a fast but wrong front end fails the benchmark. Without ../shared the benchmarks skip with a
// message (a plain clone has no models).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "workloads/tflite/npu_lowering.hpp"
#include "workloads/tflite/reader.hpp"
#include "workloads/tflite/weight_encoding.hpp"

namespace {

namespace fs = std::filesystem;

fs::path models_dir() { return fs::path(NPUMAP_BENCH_DIR) / ".." / ".." / "shared" / "models"; }

std::size_t operator_count(const npumap::tflite::Model& m) {
  std::size_t n = 0;
  for (const auto& g : m.subgraphs) n += g.operators.size();
  return n;
}

void read(benchmark::State& state, const fs::path& file) {
  if (!fs::exists(file)) {
    state.SkipWithError((file.string() + " is absent: ../shared/models holds the real models").c_str());
    return;
  }
  const std::size_t expected = operator_count(npumap::tflite::read_model(file.string()));
  const auto bytes = static_cast<double>(fs::file_size(file));
  for (auto _ : state) {
    const npumap::tflite::Model m = npumap::tflite::read_model(file.string());
    if (operator_count(m) != expected) {
      state.SkipWithError("operator count differs between reads");
      return;
    }
    benchmark::DoNotOptimize(m);
  }
  state.counters["models_per_second"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_second"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["operators"] = static_cast<double>(expected);
}

/// The largest model file in ../shared/models.
fs::path largest_model() {
  fs::path best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models_dir(), ec)) {
    if (e.path().extension() != ".tflite") continue;
    if (best.empty() || fs::file_size(e.path()) > fs::file_size(best)) best = e.path();
  }
  return best.empty() ? models_dir() / "largest.tflite" : best;
}

void bm_read_largest(benchmark::State& state) { read(state, largest_model()); }
void bm_read_lstm(benchmark::State& state) { read(state, models_dir() / "mlexamples__basic_lstm_quantized_large.tflite"); }

void lower(benchmark::State& state, const fs::path& file) {
  if (!fs::exists(file)) {
    state.SkipWithError((file.string() + " is absent: ../shared/models holds the real models").c_str());
    return;
  }
  const npumap::tflite::Model m = npumap::tflite::read_model(file.string());
  const std::size_t expected = npumap::tflite::lower_for_npu(m).passes.size();
  for (auto _ : state) {
    const npumap::tflite::NpuGraph g = npumap::tflite::lower_for_npu(m);
    if (g.passes.size() != expected) {
      state.SkipWithError("pass count differs between runs");
      return;
    }
    benchmark::DoNotOptimize(g);
  }
  state.counters["models_per_second"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["npu_passes"] = static_cast<double>(expected);
}

void bm_lower_largest(benchmark::State& state) { lower(state, largest_model()); }
void bm_lower_ssd(benchmark::State& state) { lower(state, models_dir() / "mlzoo__ssd_mobilenet_v3_int8.tflite"); }
void bm_lower_lstm(benchmark::State& state) { lower(state, models_dir() / "mlexamples__basic_lstm_quantized_large.tflite"); }

void bm_encode_mobilenet(benchmark::State& state) {
  const fs::path file = models_dir() / "tflm__mobilenet_v2_quantized_1x3x224x224.tflite";
  if (!fs::exists(file)) {
    state.SkipWithError((file.string() + " is absent: ../shared/models holds the real models").c_str());
    return;
  }
  const npumap::tflite::Model m = npumap::tflite::read_model(file.string());
  const auto encode_all = [&m](std::int64_t& values) {
    std::int64_t bytes = 0;
    values = 0;
    for (std::size_t i = 0; i < m.subgraphs[0].operators.size(); ++i) {
      const auto c = m.subgraphs[0].operators[i].code;
      if (c != npumap::tflite::BuiltinOperator::CONV_2D && c != npumap::tflite::BuiltinOperator::DEPTHWISE_CONV_2D &&
          c != npumap::tflite::BuiltinOperator::FULLY_CONNECTED) {
        continue;
      }
      npumap::tflite::OperatorWeightOptions o;
      o.ofm_block_depth = 16;
      const auto e = npumap::tflite::encode_operator_weights(m, 0, static_cast<int>(i), o);
      bytes += e.total_bytes;
      values += e.elements_in_brick * static_cast<std::int64_t>(e.bricks.size());
    }
    return bytes;
  };
  std::int64_t values = 0;
  const std::int64_t expected = encode_all(values);
  for (auto _ : state) {
    std::int64_t v = 0;
    if (encode_all(v) != expected) {
      state.SkipWithError("encoded bytes differ between runs");
      return;
    }
  }
  state.counters["weights_per_second"] =
      benchmark::Counter(static_cast<double>(values), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["encoded_bytes"] = static_cast<double>(expected);
}

}  // namespace

BENCHMARK(bm_lower_largest)->Name("LowerForNpu/largest")->Unit(benchmark::kMillisecond);
BENCHMARK(bm_lower_ssd)->Name("LowerForNpu/ssd_mobilenet_v3")->Unit(benchmark::kMillisecond);
BENCHMARK(bm_lower_lstm)->Name("LowerForNpu/lstm_697_ops")->Unit(benchmark::kMillisecond);
BENCHMARK(bm_encode_mobilenet)->Name("EncodeWeights/mobilenet_v2")->Unit(benchmark::kMillisecond);
BENCHMARK(bm_read_largest)->Name("ReadModel/largest")->Unit(benchmark::kMillisecond);
BENCHMARK(bm_read_lstm)->Name("ReadModel/lstm_697_ops")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
