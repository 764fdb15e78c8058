// Cycle-model throughput: evaluate() over the 175 reference passes (all op kinds, all six accelerators,
// every memory placement of the reference data), single-threaded, reported as passes per second.
// Each run checks the sum of the Total cycles against the sum of Vela's own Totals in the data file's
// `expected` records, so a fast but wrong model fails the benchmark instead of reporting a figure.

#include <benchmark/benchmark.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "model/evaluate.hpp"
#include "model/pass_json.hpp"

namespace {

using npumap::model::PassInput;

struct Mix {
  std::vector<PassInput> passes;
  double expected_total = 0.0;  ///< sum of Vela's Total cycles over the mix
  std::string error;
};

const Mix& mix() {
  static const Mix m = [] {
    Mix out;
    const std::string path = std::string(NPUMAP_BENCH_DIR) + "/../test/data/npu_reference_passes.json";
    std::ifstream in(path);
    if (!in) {
      out.error = "cannot open " + path;
      return out;
    }
    const auto records = nlohmann::json::parse(in);
    for (std::size_t i = 0; i < records.size(); ++i) {
      out.passes.push_back(npumap::model::read_pass_input(records[i].at("input"), path,
                                                          "records[" + std::to_string(i) + "].input"));
      out.expected_total += records[i].at("expected").at("cycles").at("Total").get<double>();
    }
    return out;
  }();
  return m;
}

void BM_EvaluateReferenceMix(benchmark::State& state) {
  const Mix& m = mix();
  if (!m.error.empty() || m.passes.empty()) {
    state.SkipWithError(m.error.empty() ? "no passes loaded" : m.error.c_str());
    return;
  }
  double total = 0.0;
  for (auto _ : state) {
    total = 0.0;
    for (const PassInput& p : m.passes) {
      const npumap::model::PassMetrics metrics = npumap::model::evaluate(p.arch, p.pass);
      total += metrics.total_cycles();
      benchmark::DoNotOptimize(metrics);
    }
    benchmark::ClobberMemory();
  }
  if (std::abs(total - m.expected_total) > 1e-9 * m.expected_total) {
    state.SkipWithError("sum of Total cycles differs from the reference");
    return;
  }
  state.counters["passes_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(m.passes.size()),
                         benchmark::Counter::kIsRate);
  state.counters["total_cycles"] = total;
}
BENCHMARK(BM_EvaluateReferenceMix);

}  // namespace

BENCHMARK_MAIN();
