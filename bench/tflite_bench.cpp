// Throughput of the .tflite reader (workloads/tflite/reader.hpp): read_model on real models from
// ../shared/models (the largest file and the 697-operator unrolled LSTM), reported as models per
// second and bytes per second. Each iteration checks the operator count read against the first
// read, so a fast but wrong reader fails the benchmark. Without ../shared the benchmarks skip with
// a message (a plain clone has no models).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "workloads/tflite/reader.hpp"

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

}  // namespace

BENCHMARK(bm_read_largest)->Name("ReadModel/largest")->Unit(benchmark::kMillisecond);
BENCHMARK(bm_read_lstm)->Name("ReadModel/lstm_697_ops")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
