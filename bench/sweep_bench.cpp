// Throughput of design-space sweeps (mapper/sweep/sweep.hpp): arch points mapped per second, with the
// shared-layer cache (each distinct layer computed once per arch point across all workloads) and
// without it (every layer of every workload computed on its own); their ratio is the cache's speedup.
//
// Case: Sweep/zoo/sharing:{1,0}: the four zoo networks (resnet18, resnet50, mobilenet_v2,
// bert_base_layer) on two arch points (ethos-u55-128 and ethos-u55-256, 4 MiB SRAM), points run in
// parallel on a 2-worker oneTBB arena as `mapper sweep -j 2` runs them (without the file writes).
// points_per_second counts finished arch points; layers_distinct_fraction is distinct / total layers.
//
// Every iteration's records must reproduce a reference computed at setup on one thread without
// sharing (an FNV-1a hash over every front value), so a fast but wrong cache fails the run.
// With NPUMAP_BENCH_SMOKE=1 (the ctest smoke run) the sweep is tiny_chain and tiny_residual.
//
// Case: SweepSpec/grid/points:50000: reading and checking a spec of 50,000 arch points (a dry run).

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "common/hash.hpp"
#include "mapper/sweep/sweep.hpp"
#include "mapper/sweep/sweep_spec.hpp"

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

bool smoke() {
  const char* env = std::getenv("NPUMAP_BENCH_SMOKE");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

const npumap::sweep::SweepSpec& spec() {
  static const npumap::sweep::SweepSpec s = [] {
    const std::string workloads = smoke() ? "[tiny_chain, tiny_residual]" : "[resnet18, resnet50, mobilenet_v2, bert_base_layer]";
    const fs::path file = fs::temp_directory_path() / ("npumap-sweep-bench-" + std::to_string(getpid()) + ".yaml");
    std::ofstream(file) << "name: zoo\nworkloads: " << workloads
                        << "\ngrid:\n  accelerator: [ethos-u55-128, ethos-u55-256]\n";
    npumap::sweep::SweepSpec loaded = npumap::sweep::load_sweep_spec(file.string());
    fs::remove(file);
    return loaded;
  }();
  return s;
}

std::uint64_t hash_fronts(const std::vector<Json>& records) {
  npumap::common::Fnv1a hash;
  const auto add = [&hash](double v) { hash.add(v); };
  for (const Json& r : records) {
    for (const Json& w : r["workloads"]) {
      add(static_cast<double>(w["front"].size()));
      for (const Json& p : w["front"]) {
        add(p["cycles"].get<double>());
        add(p["offchip_bytes"].get<double>());
        add(p["sram_bytes"].get<double>());
        add(p["energy_pj"].get<double>());
      }
    }
  }
  return hash.value();
}

std::vector<Json> run_points(tbb::task_arena& arena, bool share) {
  const auto& s = spec();
  std::vector<Json> records(s.points.size());
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, s.points.size(), [&](std::size_t i) {
      bool complete = false;
      records[i] = npumap::sweep::compute_sweep_point(s, s.points[i], share, {}, complete);
    });
  });
  return records;
}

std::uint64_t reference_hash() {
  static const std::uint64_t h = [] {
    tbb::task_arena one(1);
    return hash_fronts(run_points(one, false));
  }();
  return h;
}

void bm_sweep(benchmark::State& state) {
  const bool share = state.range(0) != 0;
  try {
    const std::uint64_t ref = reference_hash();
    tbb::task_arena arena(2);
    double total = 0, distinct = 0;
    std::uint64_t points = 0;
    for (auto _ : state) {
      const std::vector<Json> records = run_points(arena, share);
      if (hash_fronts(records) != ref) {
        state.SkipWithError("sweep fronts differ from the single-threaded reference without sharing");
        std::exit(1);
      }
      points += records.size();
      total = distinct = 0;
      for (const Json& r : records) {
        total += r["layers"]["total"].get<double>();
        distinct += r["layers"]["distinct"].get<double>();
      }
    }
    state.counters["points_per_second"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
    state.counters["layers_distinct_fraction"] = total > 0 ? distinct / total : 0.0;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    std::exit(1);
  }
}

/// Checking a spec (what `mapper sweep --dry-run` does): a grid of state.range(0) SRAM capacities on
/// ethos-u55-256, every point's arch built. Issue 41 point 5 asks for 50,000 points in under a second.
void bm_sweep_spec(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::string pattern = (fs::temp_directory_path() / "npumap-bench-spec-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    std::exit(1);
  }
  const fs::path dir(pattern);
  {
    std::ofstream out(dir / "spec.yaml");
    out << "workloads: [tiny_chain]\nbase: ethos-u55-256\ngrid:\n  sram_capacity: [";
    for (std::size_t k = 1; k <= n; ++k) out << (k == 1 ? "" : ", ") << k << "KiB";
    out << "]\n";
  }
  std::size_t points = 0;
  for (auto _ : state) {
    const npumap::sweep::SweepSpec spec = npumap::sweep::load_sweep_spec((dir / "spec.yaml").string());
    points += spec.points.size();
    benchmark::DoNotOptimize(spec.points.back().arch.sram_capacity_bytes);
  }
  state.counters["points_per_second"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace

BENCHMARK(bm_sweep_spec)->Name("BM_SweepSpec/grid")->ArgName("points")->Arg(50000)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_sweep)->Name("BM_Sweep/zoo")->ArgName("sharing")->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
