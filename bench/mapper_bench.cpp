// Wall time of the mapper pipeline: the per-layer stage alone, the whole run (stage + join) on the
// shipped workloads, and synthetic chains of growing length.
//
// The mapper promises results that do not depend on the thread count or on timing (mapper/search/stage.hpp,
// mapper/search/join/join.hpp), so every benchmark doubles as a determinism guard: at setup the same input is mapped
// once single-threaded and the size and an FNV-1a hash of the result are kept; every timed
// iteration, whatever its thread count, must reproduce both exactly or the benchmark calls
// SkipWithError and the process exits non-zero (Google Benchmark itself exits 0 after
// SkipWithError, so a fast but wrong or racy mapper cannot report a figure unnoticed).
//
// Cases:
//   PerLayerStage/<workload>/threads:N  run_per_layer only; pmappings_per_second counts the
//       workload's scored candidates (sum of KeepCounters::evaluated over every layer's jobs) per wall
//       second. Identical layers are computed once and share their counters, so this is the rate at
//       which the workload's mapspace is covered, not the rate of cycle-model calls.
//   EndToEnd/<workload>                 run_per_layer + join with fusion, as `mapper` does it for the
//       reported front (without the no-fusion comparison join), at 2 threads.
//   Chain/<N>                           N layers alternating a 3x3 conv 16->16 and a 3x3 depthwise
//       conv on 28x28x16, SAME padding; the time should grow about linearly in N.
//   Join/<workload>/<arch>/<k>obj       the join alone (the stage is computed once at setup), at 2
//       threads, with the first k of cycles, off-chip bytes, peak SRAM, energy (resnet50 and
//       mobilenet_v2 on ethos-u55-256 and ethos-u65-256); joins_per_second is whole joins per wall
//       second (the throughput the nightly compares) and rows_paired the candidate merged rows
//       (JoinStepStats::rows_paired) of one join: a speed-up that merges fewer rows lowers a rate of
//       rows, so rows are reported, not rated;
//       front_size and front_hash (low 32 bits of a hash of the front's values) identify the answer,
//       which must equal that of the same join without its speed-ups (future-SRAM bound,
//       look-ahead, cascade clamp) on one thread. Cases that take minutes (3-4 objectives on
//       ethos-u65-256, 4 objectives anywhere) run only with NPUMAP_BENCH_SLOW=1.
//   EpsilonJoin/<workload>/<arch>/3obj  the ε-front's join (ε = 0.01; cycles, off-chip bytes, peak
//       SRAM) alone, at 2 threads, on ethos-u65-256; front_size and front_hash, the same in every
//       iteration (resnet18 every night; mobilenet_v2 and resnet50 with NPUMAP_BENCH_SLOW=1).
// Other objectives are the CLI's default, cycles and off-chip bytes (RunOptions::objectives).
//
// With NPUMAP_BENCH_SMOKE=1 (the ctest smoke run) only tiny_chain and a 4-layer chain are run, so
// the smoke test stays well under a few seconds.

#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch.hpp"
#include "arch/arch_loader.hpp"
#include "common/hash.hpp"
#include "mapper/search/map_network.hpp"
#include "mapper/search/objectives.hpp"
#include "workloads/loader.hpp"
#include "workloads/workload.hpp"

namespace {

using npumap::search::JoinProblem;
using npumap::search::JoinResult;
using npumap::search::Objective;
using npumap::search::PmappingGroup;
using npumap::search::StageOptions;
using npumap::search::StageResult;

constexpr const char* kArch = "ethos-u55-256";
constexpr int kEndToEndThreads = 2;

bool smoke() {
  const char* env = std::getenv("NPUMAP_BENCH_SMOKE");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

/// NPUMAP_BENCH_SLOW=1 adds the join cases that still take minutes per run.
bool slow() {
  const char* env = std::getenv("NPUMAP_BENCH_SLOW");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

const npumap::arch::Arch& arch() {
  static const npumap::arch::Arch a = npumap::arch::load_arch(kArch);
  return a;
}

std::vector<Objective> objectives() { return {Objective::Cycles, Objective::OffchipBytes}; }

using Fnv1a = npumap::common::Fnv1a;

// The YAML of an N-layer chain: conv and depthwise alternate so both op kinds and the fusion of
// their pair are exercised; 16 channels and SAME padding keep every shape 28x28x16, so the layers
// chain without any shape bookkeeping.
std::string chain_yaml(int n) {
  std::string y = "name: chain" + std::to_string(n) + "\ninputs:\n  - {name: t0, shape: [1, 28, 28, 16], dtype: int8}\n";
  y += "layers:\n";
  for (int i = 0; i < n; ++i) {
    const char* op = i % 2 == 0 ? "conv2d" : "depthwise_conv2d";
    y += "  - {name: l" + std::to_string(i) + ", op: " + op + ", inputs: [t" + std::to_string(i) + "], output: t" +
         std::to_string(i + 1) + ", output_shape: [1, 28, 28, 16], kernel: 3, padding: SAME, activation: relu}\n";
  }
  return y;
}

std::string workload_path(const std::string& name) {
  return std::string(NPUMAP_BENCH_DIR) + "/../workloads/" + name + ".yaml";
}

/// Loaded once per name; `chain<N>` names are generated, others read from workloads/.
const npumap::workloads::Workload& workload(const std::string& name) {
  static std::map<std::string, npumap::workloads::Workload> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  npumap::workloads::Workload w;
  if (name.rfind("chain", 0) == 0) {
    w = npumap::workloads::load_workload_from_string(chain_yaml(std::stoi(name.substr(5))), name + ".yaml");
  } else {
    w = npumap::workloads::load_workload(workload_path(name));
  }
  return cache.emplace(name, std::move(w)).first->second;
}

StageOptions stage_options(int threads) {
  StageOptions o;
  o.threads = threads;
  o.objectives = objectives();
  o.space.fusion = true;
  return o;
}

/// The search as `mapper` runs it for its reported front (the comparison without fusion left out, as in
/// the baseline).
npumap::search::SearchOptions search_options(int threads) {
  npumap::search::SearchOptions o;
  o.objectives = objectives();
  o.threads = threads;
  o.compare_without_fusion = false;
  return o;
}

/// Summary of a per-layer stage that any thread count must reproduce.
struct StageDigest {
  std::uint64_t rows = 0;
  std::uint64_t hash = 0;
  std::uint64_t evaluated = 0;
  double layer0_best_cycles = -1.0;
};

StageDigest digest(const StageResult& stage) {
  StageDigest d;
  Fnv1a h;
  for (std::size_t l = 0; l < stage.layers.size(); ++l) {
    for (const PmappingGroup& g : stage.layers[l].groups) {
      for (const auto& r : g.rows) {
        ++d.rows;
        h.add(r.cycles);
        h.add(static_cast<std::uint64_t>(r.template_index));
        h.add(static_cast<std::uint64_t>(r.candidate));
        if (l == 0 && (d.layer0_best_cycles < 0 || r.cycles < d.layer0_best_cycles)) d.layer0_best_cycles = r.cycles;
      }
    }
  }
  for (const auto& lr : stage.layers) {
    for (std::size_t t = 0; t < lr.space.templates.size(); ++t) d.evaluated += stage.counters_of(lr, t).evaluated;
  }
  d.hash = h.value();
  return d;
}

/// Summary of a front that any thread count must reproduce.
struct FrontDigest {
  std::size_t size = 0;
  std::uint64_t hash = 0;
  double best_cycles = 0.0;
};

FrontDigest digest(const JoinResult& joined) {
  FrontDigest d;
  Fnv1a h;
  d.size = joined.front.size();
  d.best_cycles = joined.front.empty() ? 0.0 : joined.front[0].cycles;
  for (const auto& p : joined.front) {
    h.add(p.cycles);
    h.add(p.offchip_bytes);
    h.add(p.peak_sram_bytes);
    for (std::size_t s = 0; s < p.group.size(); ++s) {
      h.add(static_cast<std::uint64_t>(p.group[s]));
      h.add(static_cast<std::uint64_t>(p.row[s]));
    }
    if (p.cycles < d.best_cycles) d.best_cycles = p.cycles;
  }
  d.hash = h.value();
  return d;
}

/// The whole run as `mapper` does it for its reported front: stage, then the fused join.
struct EndToEnd {
  bool partial = false;
  FrontDigest front;
};

EndToEnd map_end_to_end(const npumap::workloads::Workload& w, int threads) {
  const npumap::search::SearchResult r = npumap::search::map_network(arch(), w, search_options(threads), {});
  return {r.partial || !r.joined, r.joined ? digest(*r.joined) : FrontDigest{}};
}

const StageDigest& reference_stage(const std::string& name) {
  static std::map<std::string, StageDigest> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  return cache.emplace(name, digest(npumap::search::run_per_layer(arch(), workload(name), stage_options(1))))
      .first->second;
}

const FrontDigest& reference_front(const std::string& name) {
  static std::map<std::string, FrontDigest> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  return cache.emplace(name, map_end_to_end(workload(name), 1).front).first->second;
}

// Set on any failed check so main() returns non-zero.
bool g_failed = false;

void fail(benchmark::State& state, const std::string& why) {
  g_failed = true;
  state.SkipWithError(why.c_str());
}

void per_layer_stage(benchmark::State& state, const std::string& name) {
  const int threads = static_cast<int>(state.range(0));
  const auto& w = workload(name);
  const StageDigest& ref = reference_stage(name);
  if (ref.rows == 0 || !(ref.layer0_best_cycles > 0.0)) {
    fail(state, "reference stage has no Pareto rows or a non-positive best cycle count on layer 0");
    return;
  }
  const StageOptions options = stage_options(threads);
  std::uint64_t evaluated = 0;
  for (auto _ : state) {
    const StageResult stage = npumap::search::run_per_layer(arch(), w, options);
    const StageDigest d = digest(stage);
    if (stage.partial || d.rows != ref.rows || d.hash != ref.hash) {
      fail(state, "per-layer stage differs from the single-threaded reference");
      return;
    }
    evaluated += d.evaluated;
  }
  state.counters["pmappings_per_second"] =
      benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
  state.counters["pareto_rows"] = static_cast<double>(ref.rows);
}

void end_to_end(benchmark::State& state, const std::string& name, std::size_t layers) {
  const auto& w = workload(name);
  const FrontDigest& ref = reference_front(name);
  if (ref.size == 0) {
    fail(state, "reference run found no mapping");
    return;
  }
  for (auto _ : state) {
    const EndToEnd r = map_end_to_end(w, kEndToEndThreads);
    if (r.partial || r.front.size != ref.size || r.front.hash != ref.hash) {
      fail(state, "front differs from the single-threaded reference");
      return;
    }
  }
  state.counters["front_size"] = static_cast<double>(ref.size);
  state.counters["best_cycles"] = ref.best_cycles;
  if (layers > 0) state.counters["layers"] = static_cast<double>(layers);
}

/// One BM_Join case: a workload, a preset and the first k objectives of cycles, off-chip bytes, peak
/// SRAM, energy.
struct JoinCase {
  std::string workload;
  std::string arch;
  std::size_t objectives = 2;
};

std::vector<Objective> first_objectives(std::size_t k) {
  const std::vector<Objective> all = npumap::search::all_objectives();
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k)};
}

/// Hash of a front's objective values (not of which rows reach them: an exact speed-up may pick
/// another of several equal mappings).
FrontDigest value_digest(const JoinResult& joined) {
  FrontDigest d;
  Fnv1a h;
  d.size = joined.front.size();
  d.best_cycles = joined.front.empty() ? 0.0 : joined.front[0].cycles;
  for (const auto& p : joined.front) {
    h.add(p.cycles);
    h.add(p.offchip_bytes);
    h.add(p.peak_sram_bytes);
    h.add(p.energy_pj);
    if (p.cycles < d.best_cycles) d.best_cycles = p.cycles;
  }
  d.hash = h.value();
  return d;
}

/// The join problem of case `c` exactly as map_network builds it for its objectives (only the join is
/// timed); empty, with the benchmark failed, when a layer has no valid pmapping.
std::optional<npumap::search::SearchResult> join_case_search(benchmark::State& state, const JoinCase& c) {
  const auto& w = workload(c.workload);
  const npumap::arch::Arch a = npumap::arch::load_arch(c.arch);
  npumap::search::SearchOptions options = search_options(kEndToEndThreads);
  options.objectives = first_objectives(c.objectives);
  npumap::search::SearchResult searched = npumap::search::map_network(a, w, options, {});
  if (!searched.problem || !searched.joined) {
    fail(state, "no join problem: a layer has no valid pmapping");
    return std::nullopt;
  }
  return searched;
}

void join_only(benchmark::State& state, const JoinCase& c) {
  const std::optional<npumap::search::SearchResult> searched = join_case_search(state, c);
  if (!searched) return;
  const JoinProblem& problem = *searched->problem;
  npumap::search::JoinOptions join_options;
  join_options.objectives = first_objectives(c.objectives);
  npumap::search::JoinRunContext context;
  context.threads = kEndToEndThreads;
  // The reference: the join without its exact speed-ups (future-SRAM bound, look-ahead, cascade
  // clamp) on one thread. A fast but wrong join, or a racy one, gives another front and fails the
  // benchmark.
  npumap::search::JoinOptions plain = join_options;
  plain.speedups.future_sram_bound = false;
  plain.speedups.lookahead = false;
  plain.speedups.cascade_clamp = false;
  const FrontDigest ref = value_digest(npumap::search::join(problem, plain));
  if (ref.size == 0) {
    fail(state, "reference join found no mapping");
    return;
  }
  std::uint64_t paired = 0;
  for (auto _ : state) {
    const JoinResult joined = npumap::search::join(problem, join_options, context);
    const FrontDigest d = value_digest(joined);
    if (joined.partial || d.size != ref.size || d.hash != ref.hash) {
      fail(state, "join front differs from the reference join without speed-ups");
      return;
    }
    for (const auto& st : joined.steps) paired += st.rows_paired;
  }
  state.counters["joins_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["rows_paired"] =
      state.iterations() > 0 ? static_cast<double>(paired) / static_cast<double>(state.iterations()) : 0.0;
  state.counters["front_size"] = static_cast<double>(ref.size);
  // The low 32 bits of the front's value hash (a double holds them exactly): compare across runs.
  state.counters["front_hash"] = static_cast<double>(ref.hash & 0xffffffffu);
  state.counters["best_cycles"] = ref.best_cycles;
}

/// The ε-front's join (cycles, off-chip bytes, peak SRAM; ε = 0.01, the sizing run) alone, at 2
/// threads: the front must be the same in every iteration (determinism); its size and hash are
/// reported (an ε-front is not compared with the exact one here: test/search checks the guarantee).
void epsilon_join_only(benchmark::State& state, const JoinCase& c) {
  const std::optional<npumap::search::SearchResult> searched = join_case_search(state, c);
  if (!searched) return;
  npumap::search::JoinOptions join_options;
  join_options.objectives = first_objectives(c.objectives);
  join_options.epsilon = 0.01;
  npumap::search::JoinRunContext context;
  context.threads = kEndToEndThreads;
  std::optional<FrontDigest> first;
  for (auto _ : state) {
    const JoinResult joined = npumap::search::join(*searched->problem, join_options, context);
    const FrontDigest d = value_digest(joined);
    if (joined.partial || d.size == 0 || (first && (d.size != first->size || d.hash != first->hash))) {
      fail(state, "ε-front join empty or not deterministic");
      return;
    }
    first = d;
  }
  state.counters["front_size"] = first ? static_cast<double>(first->size) : 0.0;
  state.counters["front_hash"] = first ? static_cast<double>(first->hash & 0xffffffffu) : 0.0;
}

// A bad workload file or preset must fail the run, not abort it with an uncaught exception.
template <typename F>
void guarded(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    fail(state, e.what());
  }
}

void bm_per_layer_stage(benchmark::State& state, const std::string& name) {
  guarded(state, [&] { per_layer_stage(state, name); });
}

void bm_end_to_end(benchmark::State& state, const std::string& name) {
  guarded(state, [&] { end_to_end(state, name, 0); });
}

void bm_join(benchmark::State& state, const JoinCase& c) {
  guarded(state, [&] { join_only(state, c); });
}

void bm_epsilon_join(benchmark::State& state, const JoinCase& c) {
  guarded(state, [&] { epsilon_join_only(state, c); });
}

void bm_chain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  guarded(state, [&] { end_to_end(state, "chain" + std::to_string(n), static_cast<std::size_t>(n)); });
}

}  // namespace

int main(int argc, char** argv) {
  const bool small = smoke();
  const std::string stage_workload = small ? "tiny_chain" : "resnet50";
  benchmark::RegisterBenchmark(("BM_PerLayerStage/" + stage_workload).c_str(), bm_per_layer_stage, stage_workload)
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  const std::vector<std::string> end_to_end =
      small ? std::vector<std::string>{"tiny_chain"}
            : std::vector<std::string>{"resnet18", "resnet50", "mobilenet_v2", "bert_base_layer"};
  for (const auto& name : end_to_end) {
    benchmark::RegisterBenchmark(("BM_EndToEnd/" + name).c_str(), bm_end_to_end, name)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  // BM_Join/<workload>/<arch>/<k>obj. Cases that still take minutes per run (three or four
  // objectives on ethos-u65-256, MobileNet-V2 with four objectives) only with NPUMAP_BENCH_SLOW=1;
  // ResNet-50 with four objectives on ethos-u55-256 takes 1-2 s and runs every night.
  std::vector<JoinCase> joins;
  if (small) {
    for (std::size_t k : {2, 3, 4}) joins.push_back({"tiny_chain", kArch, k});
  } else {
    for (const char* name : {"resnet50", "mobilenet_v2"}) {
      for (const char* preset : {"ethos-u55-256", "ethos-u65-256"}) {
        for (std::size_t k : {2, 3, 4}) {
          const bool slow_case = (k > 2 && std::string(preset) == "ethos-u65-256") ||
                                 (k == 4 && std::string(name) == "mobilenet_v2");
          if (!slow_case || slow()) joins.push_back({name, preset, k});
        }
      }
    }
  }
  for (const JoinCase& c : joins) {
    const std::string label = "BM_Join/" + c.workload + "/" + c.arch + "/" + std::to_string(c.objectives) + "obj";
    benchmark::RegisterBenchmark(label.c_str(), bm_join, c)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  // BM_EpsilonJoin/<workload>/<arch>/3obj: the ε-front (ε = 0.01) of the sizing run on ethos-u65-256,
  // whose off-chip arena made the fronts large; MobileNet-V2 and ResNet-50 there still take minutes
  // (NPUMAP_BENCH_SLOW=1).
  std::vector<JoinCase> eps_joins;
  if (small) {
    eps_joins.push_back({"tiny_chain", kArch, 3});
  } else {
    eps_joins.push_back({"resnet18", "ethos-u65-256", 3});
    if (slow()) {
      eps_joins.push_back({"mobilenet_v2", "ethos-u65-256", 3});
      eps_joins.push_back({"resnet50", "ethos-u65-256", 3});
    }
  }
  for (const JoinCase& c : eps_joins) {
    const std::string label = "BM_EpsilonJoin/" + c.workload + "/" + c.arch + "/" + std::to_string(c.objectives) + "obj";
    benchmark::RegisterBenchmark(label.c_str(), bm_epsilon_join, c)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(2);
  }
  auto* chain = benchmark::RegisterBenchmark("BM_Chain", bm_chain)->ArgName("layers");
  if (small) {
    chain->Arg(4);
  } else {
    for (int n : {4, 8, 16, 32, 64}) chain->Arg(n);
  }
  chain->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed ? 1 : 0;
}
