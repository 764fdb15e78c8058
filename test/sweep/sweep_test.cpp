// Tests of the sweep's library side: the shared per-layer stage (sharing never changes a result, and
// the number of distinct layers is what a hand count says), spec expansion, the bandwidth key, the
// cross-arch Pareto front against brute force, the rendered files' consistency, and the order in
// which points are handed out.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tbb/task_arena.h>

#include "arch/arch_loader.hpp"
#include "mapper/search/stage.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/sweep/sweep.hpp"
#include "mapper/sweep/sweep_run.hpp"
#include "mapper/sweep/sweep_spec.hpp"
#include "../search/test_support.hpp"

namespace npumap::sweep {

using namespace search;  // NOLINT: the sweep is checked against the search it runs
namespace {

namespace fs = std::filesystem;
using testing::preset;
using testing::tiny;
using Json = nlohmann::ordered_json;

/// A spec file in a fresh temp folder, removed at the end.
class SpecFile {
 public:
  explicit SpecFile(const std::string& text) {
    std::string pattern = (fs::temp_directory_path() / "npumap-sweep-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    path_ = (dir_ / "spec.yaml").string();
    std::ofstream(path_) << text;
  }
  ~SpecFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }
  fs::path dir() const { return dir_; }

 private:
  fs::path dir_;
  std::string path_;
};

/// Four identical 16->16 3x3 convolutions in a chain. The stage reads a layer's context (is its input
/// a network input? may its output roll into the next layer?), so by hand: c1 (input from outside the
/// NPU) and c4 (output leaves the network) are each unique, and c2 and c3 (a conv on both sides) are
/// the same job set. Distinct: 3 of 4.
workloads::Workload four_identical(const std::string& name) {
  return workloads::load_workload_from_string(R"(
name: )" + name + R"(
inputs:
  - {name: x, shape: [1, 8, 8, 16], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: c2, op: conv2d, inputs: [a], output: b, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: c3, op: conv2d, inputs: [b], output: c, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: c4, op: conv2d, inputs: [c], output: d, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
)",
                                              name + ".yaml");
}

SharedStage shared_stage(const arch::Arch& a, const std::vector<const workloads::Workload*>& ws, bool share) {
  std::vector<LayerRef> refs;
  for (const auto* w : ws) {
    for (int l = 0; l < static_cast<int>(w->layers.size()); ++l) refs.push_back({w, l});
  }
  StageOptions o;
  SharedStage s;
  tbb::task_arena arena(2);
  arena.execute([&] { s = run_shared_stage(a, refs, o, nullptr, share); });
  return s;
}

/// Groups of two layer results are equal in everything but the job numbering: compat, and per row
/// the objectives, the template and the block config.
void expect_same_groups(const StageResult& sa, const LayerResult& a, const StageResult& sb, const LayerResult& b,
                        const std::string& what) {
  ASSERT_EQ(a.groups.size(), b.groups.size()) << what;
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    EXPECT_TRUE(a.groups[g].compat == b.groups[g].compat) << what << " group " << g;
    ASSERT_EQ(a.groups[g].rows.size(), b.groups[g].rows.size()) << what << " group " << g;
    for (std::size_t r = 0; r < a.groups[g].rows.size(); ++r) {
      const PmappingRow& x = a.groups[g].rows[r];
      const PmappingRow& y = b.groups[g].rows[r];
      EXPECT_EQ(x.cycles, y.cycles) << what;
      EXPECT_EQ(x.offchip_bytes, y.offchip_bytes) << what;
      EXPECT_EQ(x.energy_pj, y.energy_pj) << what;
      EXPECT_EQ(x.sram_bytes, y.sram_bytes) << what;
      EXPECT_EQ(x.candidate, y.candidate) << what;
      EXPECT_EQ(x.template_index, y.template_index) << what;
    }
  }
  // The same keep-rate counters per job (a copy of a layer shares its distinct layer's).
  ASSERT_EQ(a.space.templates.size(), b.space.templates.size()) << what;
  for (std::size_t t = 0; t < a.space.templates.size(); ++t) {
    EXPECT_EQ(sa.counters_of(a, t).evaluated, sb.counters_of(b, t).evaluated) << what << " job " << t;
    EXPECT_EQ(sa.counters_of(a, t).pareto, sb.counters_of(b, t).pareto) << what << " job " << t;
    EXPECT_EQ(sa.counters_of(a, t).removed, sb.counters_of(b, t).removed) << what << " job " << t;
  }
}

TEST(SharedStage, DistinctLayersMatchTheHandCount) {
  const workloads::Workload w1 = four_identical("first");
  const workloads::Workload w2 = four_identical("second");
  const arch::Arch a = preset("ethos-u55-128");
  const SharedStage one = shared_stage(a, {&w1}, true);
  EXPECT_EQ(one.stage.layers.size(), 3u);
  EXPECT_EQ(one.distinct_of, (std::vector<std::uint32_t>{0, 1, 1, 2}));
  // The second copy adds nothing new: 8 layers, still 3 distinct.
  const SharedStage two = shared_stage(a, {&w1, &w2}, true);
  EXPECT_EQ(two.stage.layers.size(), 3u);
  EXPECT_EQ(two.distinct_of, (std::vector<std::uint32_t>{0, 1, 1, 2, 0, 1, 1, 2}));
  // Without sharing every layer is its own.
  const SharedStage none = shared_stage(a, {&w1, &w2}, false);
  EXPECT_EQ(none.stage.layers.size(), 8u);
}

// Layers of one shape whose weights encode to other sizes are not the same job set: the stage reads
// each mapping's encoded size from the layer's weight_encodings (real weights: person_detect's
// depthwise convolutions 8, 10 and 11 had shared the rows of the first, with its cycles). The chain
// above with c2's and c3's weights given as encoded: with the same sizes c2 and c3 still share (3
// distinct of 4); with c3's weights encoding smaller they do not (4 of 4).
TEST(SharedStage, LayersWhoseWeightsEncodeOtherwiseDoNotShare) {
  const auto chain = [](int c3_bytes) {
    const std::string enc = "weight_encodings: [{traversal: depth_first, streamed: false, block_depths: [16], bytes: ";
    const std::string c2 = enc + "2304, scale: 1.0, worst_scale: 1.0}]";
    const std::string c3 = enc + std::to_string(c3_bytes) + ", scale: " + std::to_string(c3_bytes / 2304.0) +
                           ", worst_scale: " + std::to_string(c3_bytes / 2304.0) + "}]";
    return workloads::load_workload_from_string(R"(
name: encoded
inputs:
  - {name: x, shape: [1, 8, 8, 16], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: c2, op: conv2d, inputs: [a], output: b, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME, )" +
                                                    c2 + R"(}
  - {name: c3, op: conv2d, inputs: [b], output: c, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME, )" +
                                                    c3 + R"(}
  - {name: c4, op: conv2d, inputs: [c], output: d, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
)",
                                                "encoded.yaml");
  };
  const arch::Arch a = preset("ethos-u55-128");
  const workloads::Workload same = chain(2304);
  EXPECT_EQ(shared_stage(a, {&same}, true).distinct_of, (std::vector<std::uint32_t>{0, 1, 1, 2}));
  const workloads::Workload other = chain(1152);
  EXPECT_EQ(shared_stage(a, {&other}, true).distinct_of, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(SharedStage, EveryLayerGetsWhatItsOwnStageComputes) {
  // Metamorphic: sharing must not change any layer's groups. Checked on zoo networks with many
  // repeated layers (resnet18's basic blocks) and on small ones, against each layer computed on its
  // own (no sharing at all) and against run_per_layer, which shares within a workload.
  const std::vector<workloads::Workload> ws = {tiny("tiny_chain"), tiny("tiny_residual"), tiny("resnet18"),
                                               four_identical("four")};
  std::vector<const workloads::Workload*> ptrs;
  for (const auto& w : ws) ptrs.push_back(&w);
  for (const std::string name : {"ethos-u55-64", "ethos-u65-256"}) {
    const arch::Arch a = preset(name);
    const SharedStage shared = shared_stage(a, ptrs, true);
    EXPECT_LT(shared.stage.layers.size(), shared.distinct_of.size()) << "resnet18 repeats layers";
    const SharedStage alone = shared_stage(a, ptrs, false);
    ASSERT_EQ(alone.stage.layers.size(), alone.distinct_of.size());
    std::size_t ref = 0;
    for (const auto& w : ws) {
      StageOptions o;
      o.threads = 2;
      const StageResult own = run_per_layer(a, w, o);
      for (std::size_t l = 0; l < w.layers.size(); ++l, ++ref) {
        const std::string what = name + " " + w.name + " layer " + w.layers[l].name;
        expect_same_groups(shared.stage, shared.stage.layers[shared.distinct_of[ref]], alone.stage,
                           alone.stage.layers[ref], what + " (shared vs alone)");
        expect_same_groups(own, own.layers[l], alone.stage, alone.stage.layers[ref], what + " (run_per_layer vs alone)");
        EXPECT_EQ(own.layers[l].space.layer, static_cast<int>(l));
      }
    }
  }
}

TEST(SharedStage, IdenticalLayersShareTheirRowsInTheStageAndInTheJoinProblems) {
  // Memory (issue 41): c2 and c3 of four_identical are one computed layer; their results, and the
  // join problems' steps, hold one list of groups between them, not a copy each; c1 and c4 differ.
  const workloads::Workload w = four_identical("four");
  const arch::Arch a = preset("ethos-u55-128");
  StageOptions o;
  o.threads = 2;
  const StageResult stage = run_per_layer(a, w, o);
  ASSERT_EQ(stage.layers.size(), 4u);
  ASSERT_FALSE(stage.layers[1].groups.empty());
  EXPECT_TRUE(stage.layers[1].groups.shares_with(stage.layers[2].groups));
  EXPECT_FALSE(stage.layers[0].groups.shares_with(stage.layers[1].groups));
  EXPECT_FALSE(stage.layers[3].groups.shares_with(stage.layers[2].groups));
  EXPECT_EQ(stage.layers[1].first_counter, stage.layers[2].first_counter);
  EXPECT_NE(stage.layers[0].first_counter, stage.layers[1].first_counter);
  std::size_t templates = 0;  // a job per layer and template: identical layers' jobs each count
  for (const LayerResult& lr : stage.layers) templates += lr.space.templates.size();
  EXPECT_EQ(stage.num_jobs, templates);
  // A step holds its layer's list, or a list cut from it (layouts that never pay, layout_dominance.hpp),
  // which identical layers share too.
  const JoinProblem fused = make_join_problem(a, w, stage, true);
  for (std::size_t s = 0; s < 4; ++s) {
    const SharedVector<PmappingGroup>& own = stage.layers[static_cast<std::size_t>(w.topological_order[s])].groups;
    EXPECT_TRUE(fused.steps[s].groups.shares_with(own) || fused.steps[s].groups.size() < own.size());
  }
  const std::size_t s2 = static_cast<std::size_t>(std::find(w.topological_order.begin(), w.topological_order.end(), 1) - w.topological_order.begin());
  const std::size_t s3 = static_cast<std::size_t>(std::find(w.topological_order.begin(), w.topological_order.end(), 2) - w.topological_order.begin());
  EXPECT_TRUE(fused.steps[s2].groups.shares_with(fused.steps[s3].groups));
  // Without fusion the rolling groups are left out: one copy for c2 and c3 together.
  const JoinProblem plain = make_join_problem(a, w, stage, false);
  ASSERT_LT(plain.steps[s2].groups.size(), stage.layers[1].groups.size()) << "c2 has rolling groups to leave out";
  EXPECT_TRUE(plain.steps[s2].groups.shares_with(plain.steps[s3].groups));
  for (const PmappingGroup& g : plain.steps[s2].groups) {
    for (const TensorCompat& c : g.compat) EXPECT_NE(c.residence, Residence::Rolling);
  }
}

TEST(SharedStage, ASharedListIsCopiedOnWrite) {
  SharedVector<int> x(std::vector<int>{1, 2});
  SharedVector<int> y = x;
  EXPECT_TRUE(y.shares_with(x));
  y.edit().push_back(3);  // y is not the only holder: it gets a copy first
  EXPECT_EQ(x.vector(), (std::vector<int>{1, 2}));
  EXPECT_EQ(y.vector(), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(y.shares_with(x));
  const void* own = y.buffer();
  y.edit().push_back(4);  // now the only holder: changed in place
  EXPECT_EQ(y.buffer(), own);
  EXPECT_EQ(y.size(), 4u);
}

TEST(SweepSpec, GridExpandsLastKeyFastestThenTheList) {
  const SpecFile f(R"(
workloads: [tiny_chain]
grid:
  accelerator: [ethos-u55-64, ethos-u55-128]
  sram_capacity: [256KiB, 512KiB, 1MiB]
points:
  - {accelerator: ethos-u55-256, core_clock: 400e6}
)");
  const SweepSpec spec = load_sweep_spec(f.path());
  ASSERT_EQ(spec.points.size(), 7u);
  EXPECT_EQ(spec.name, "spec");
  EXPECT_EQ(spec.param_keys, (std::vector<std::string>{"accelerator", "sram_capacity", "core_clock"}));
  const std::vector<std::pair<std::string, std::string>> expect[] = {
      {{"accelerator", "ethos-u55-64"}, {"sram_capacity", "256KiB"}},
      {{"accelerator", "ethos-u55-64"}, {"sram_capacity", "512KiB"}},
      {{"accelerator", "ethos-u55-64"}, {"sram_capacity", "1MiB"}},
      {{"accelerator", "ethos-u55-128"}, {"sram_capacity", "256KiB"}},
      {{"accelerator", "ethos-u55-128"}, {"sram_capacity", "512KiB"}},
      {{"accelerator", "ethos-u55-128"}, {"sram_capacity", "1MiB"}},
      {{"accelerator", "ethos-u55-256"}, {"core_clock", "400e6"}},
  };
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(spec.points[i].id, fmt::format("p{}", i + 1));
    EXPECT_EQ(spec.points[i].params, expect[i]) << i;
  }
  EXPECT_EQ(spec.points[0].arch.accel.macs, 64);
  EXPECT_EQ(spec.points[2].arch.sram_capacity_bytes, 1 << 20);
  EXPECT_EQ(spec.points[4].arch.sram_capacity_bytes, 512 * 1024);
  EXPECT_EQ(spec.points[6].arch.core_clock, 400e6);
  EXPECT_EQ(spec.points[6].arch.sram_capacity_bytes, 4 << 20) << "the base preset's SRAM";
}

/// A spec with one grid key of `n` distinct SRAM capacities (n points).
std::string grid_spec(std::size_t n, const std::string& base) {
  std::string values;
  for (std::size_t k = 1; k <= n; ++k) values += fmt::format("{}{}KiB", k == 1 ? "" : ", ", k);
  return fmt::format("workloads: [tiny_chain]\nbase: {}\ngrid:\n  sram_capacity: [{}]\n", base, values);
}

TEST(SweepSpec, TheBaseArchIsReadOnceHoweverManyPoints) {
  // Issue 41 point 5: the base preset was read and parsed again for every point.
  for (const std::size_t n : {1u, 10u, 1000u}) {
    const SpecFile f(grid_spec(n, "ethos-u55-256"));
    const std::size_t before = arch::arch_files_read();
    const SweepSpec spec = load_sweep_spec(f.path());
    ASSERT_EQ(spec.points.size(), n);
    EXPECT_EQ(arch::arch_files_read() - before, 1u) << n << " points";
    EXPECT_EQ(spec.points[n - 1].arch.sram_capacity_bytes, static_cast<std::int64_t>(n) * 1024);
  }
}

TEST(SweepSpec, CheckingIsLinearInPoints) {
  // CPU time (not wall time: the machine may be busy) of reading specs of 2,000 and 20,000 points,
  // the best of three each. Linear is a ratio of 10; the quadratic merge of issue 41 point 5 made it
  // about 100. The bound leaves room for noise and cache effects.
  const auto cpu_seconds = [](std::size_t n) {
    const SpecFile f(grid_spec(n, "ethos-u55-256"));
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      const std::clock_t start = std::clock();
      const SweepSpec spec = load_sweep_spec(f.path());
      best = std::min(best, static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
      EXPECT_EQ(spec.points.size(), n);
    }
    return best;
  };
  const double small = cpu_seconds(2000);
  const double large = cpu_seconds(20000);
  EXPECT_LT(large, 30.0 * std::max(small, 0.005)) << "2,000 points " << small << " s, 20,000 points " << large << " s";
}

TEST(SweepSpec, BandwidthKeyIsClockScaleInBytesPerCycle) {
  // U55: 64-bit AXI, so 2 B/cycle of flash bandwidth is clock_scale 2 * 8 / 64 = 0.25.
  const SpecFile f(R"(
workloads: [tiny_chain]
points:
  - {memory.OffChipFlash.bandwidth: 2}
  - {memory.OffChipFlash.clock_scale: 0.25}
)");
  const SweepSpec spec = load_sweep_spec(f.path());
  const auto& a = spec.points[0].arch.mem(arch::MemArea::OffChipFlash);
  const auto& b = spec.points[1].arch.mem(arch::MemArea::OffChipFlash);
  EXPECT_DOUBLE_EQ(a.bandwidth_per_cycle, 2.0);
  EXPECT_DOUBLE_EQ(a.clock_scale, 0.25);
  EXPECT_DOUBLE_EQ(b.bandwidth_per_cycle, 2.0);
  EXPECT_DOUBLE_EQ(b.clock_scale, 0.25);
}

TEST(SweepSpec, ErrorsPointAtTheValueInTheSpec) {
  const SpecFile f("workloads: [tiny_chain]\ngrid:\n  sram_capacity: [1MiB, -2MiB]\n");
  try {
    load_sweep_spec(f.path());
    FAIL() << "a negative SRAM size must be rejected";
  } catch (const common::UserError& e) {
    EXPECT_EQ(e.where().file, f.path());
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 25);
    EXPECT_NE(std::string(e.what()).find("p2"), std::string::npos) << e.what();
  }
}

TEST(SweepSpec, WorkloadPathsAreRelativeToTheSpec) {
  const SpecFile f("workloads: [net.yaml]\n");
  fs::copy_file(fs::path(NPUMAP_SOURCE_DIR) / "workloads" / "tiny_chain.yaml", f.dir() / "net.yaml");
  const SweepSpec spec = load_sweep_spec(f.path());
  ASSERT_EQ(spec.workloads.size(), 1u);
  EXPECT_EQ(spec.workloads[0].id, "net");
  EXPECT_EQ(spec.points.size(), 1u) << "no grid and no list: the base arch alone";
}

TEST(SweepSpec, FingerprintFollowsTheSpecBytes) {
  const SpecFile a("workloads: [tiny_chain]\n");
  const SpecFile b("workloads: [tiny_chain]\n");
  const SpecFile c("workloads: [tiny_chain]\nfusion: false\n");
  EXPECT_EQ(load_sweep_spec(a.path()).fingerprint, load_sweep_spec(b.path()).fingerprint);
  EXPECT_NE(load_sweep_spec(a.path()).fingerprint, load_sweep_spec(c.path()).fingerprint);
}

std::vector<std::array<double, 4>> front_of(const Json& record, std::size_t workload) {
  std::vector<std::array<double, 4>> out;
  for (const Json& p : record["workloads"][workload]["front"]) {
    out.push_back({p["cycles"].get<double>(), p["offchip_bytes"].get<double>(), p["sram_bytes"].get<double>(),
                   p["energy_pj"].get<double>()});
  }
  return out;
}

TEST(SweepPoint, FrontsEqualSeparateRunsAndDoNotDependOnSharing) {
  const SpecFile f(R"(
workloads: [tiny_chain, tiny_residual, resnet18]
grid:
  accelerator: [ethos-u55-64, ethos-u55-256]
  sram_capacity: [64KiB, 4MiB]
)");
  const SweepSpec spec = load_sweep_spec(f.path());
  tbb::task_arena arena(2);
  for (const SweepPoint& point : spec.points) {
    bool complete_shared = false, complete_alone = false;
    Json shared, alone;
    arena.execute([&] {
      shared = compute_sweep_point(spec, point, true, {}, complete_shared);
      alone = compute_sweep_point(spec, point, false, {}, complete_alone);
    });
    ASSERT_TRUE(complete_shared && complete_alone);
    for (std::size_t wi = 0; wi < spec.workloads.size(); ++wi) {
      EXPECT_EQ(shared["workloads"][wi], alone["workloads"][wi]) << point.id << " " << spec.workloads[wi].id;
      // The same point as a standalone mapping run: per-layer stage, then the join.
      StageOptions o;
      o.threads = 2;
      o.objectives = spec.objectives;
      const StageResult stage = run_per_layer(point.arch, spec.workloads[wi].workload, o);
      const JoinProblem p = make_join_problem(point.arch, spec.workloads[wi].workload, stage, true);
      JoinOptions options;
      options.objectives = spec.objectives;
      options.epsilon = spec.epsilon;
      JoinRunContext context;
      context.threads = 2;
      bool some_empty = false;
      for (const auto& lr : stage.layers) some_empty = some_empty || lr.groups.empty();
      std::vector<std::array<double, 4>> expect;
      if (!some_empty) {
        for (const FrontPoint& fp : join(p, options, context).front) expect.push_back({fp.cycles, fp.offchip_bytes, fp.peak_sram_bytes, fp.energy_pj});
      }
      EXPECT_EQ(front_of(shared, wi), expect) << point.id << " " << spec.workloads[wi].id;
    }
    EXPECT_LT(shared["layers"]["distinct"].get<int>(), alone["layers"]["distinct"].get<int>());
    EXPECT_LT(shared["evaluated"].get<std::uint64_t>(), alone["evaluated"].get<std::uint64_t>());
  }
}

bool weakly_dominates(const std::array<double, 4>& a, const std::array<double, 4>& b) {
  for (int k = 0; k < 4; ++k) {
    if (a[k] > b[k]) return false;
  }
  return true;
}

TEST(SweepOrder, BiggestAcceleratorFirstThenPointOrder) {
  // sweeps/example.yaml: the grid (accelerator slowest) gives indices 0-5 to ethos-u55-64 (64 MACs),
  // 6-11 to ethos-u55-128 (128), 12-17 to ethos-u55-256 (256); the list adds 18 ethos-u65-256 (256)
  // and 19 ethos-u65-512 (2 cores x 256 = 512). Biggest first, ties in point order.
  const SweepSpec spec = load_sweep_spec("sweeps/example.yaml");
  std::vector<std::size_t> order(spec.points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  order_biggest_first(spec, order);
  const std::vector<std::size_t> want = {19, 12, 13, 14, 15, 16, 17, 18, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5};
  EXPECT_EQ(order, want);
  // A subset (what a resumed run or a shard has left) keeps the same relative order.
  std::vector<std::size_t> some = {1, 7, 19, 13};
  order_biggest_first(spec, some);
  EXPECT_EQ(some, (std::vector<std::size_t>{19, 13, 7, 1}));
}

TEST(CrossArchFront, HandExample) {
  // Rows (MACs/cycle, SRAM bytes, cycles, off-chip bytes):
  //   0: (64, 1M, 100, 10)   kept: nothing is cheaper and as fast
  //   1: (128, 1M, 50, 10)   kept: more MACs buy fewer cycles
  //   2: (64, 2M, 100, 10)   dropped: row 0 is as good with less SRAM
  //   3: (64, 1M, 100, 10)   dropped: a duplicate of row 0 keeps the first
  //   4: (64, 1M, 90, 12)    kept: fewer cycles than row 0, more off-chip bytes
  //   5: (128, 1M, 50, 11)   dropped: row 1 is better in off-chip bytes
  const std::vector<std::array<double, 4>> rows = {
      {64, 1e6, 100, 10}, {128, 1e6, 50, 10}, {64, 2e6, 100, 10}, {64, 1e6, 100, 10}, {64, 1e6, 90, 12}, {128, 1e6, 50, 11}};
  EXPECT_EQ(cross_arch_front(rows), (std::vector<std::uint32_t>{0, 1, 4}));
}

TEST(CrossArchFront, MatchesBruteForceOnRandomTables) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::uniform_int_distribution<int> n_dist(0, 60), v(0, 4);
    const int n = n_dist(rng);
    std::vector<std::array<double, 4>> rows(static_cast<std::size_t>(n));
    for (auto& r : rows) r = {64.0 * (1 + v(rng) % 3), 1e6 * (1 + v(rng) % 2), 100.0 + v(rng), 10.0 + v(rng)};
    std::vector<std::uint32_t> expect;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      bool keep = true;
      for (std::size_t j = 0; j < rows.size() && keep; ++j) {
        if (j == i) continue;
        if (rows[j] == rows[i]) keep = j > i;
        else if (weakly_dominates(rows[j], rows[i])) keep = false;
      }
      if (keep) expect.push_back(static_cast<std::uint32_t>(i));
    }
    EXPECT_EQ(cross_arch_front(rows), expect) << "trial " << trial;
  }
}

TEST(RenderSweep, FilesAgreeWithTheRecords) {
  const SpecFile f(R"(
workloads: [tiny_chain, tiny_residual]
grid:
  accelerator: [ethos-u55-64, ethos-u55-256]
  sram_capacity: [2KiB, 1MiB]
)");
  const SweepSpec spec = load_sweep_spec(f.path());
  std::vector<Json> records;
  tbb::task_arena arena(2);
  for (const SweepPoint& point : spec.points) {
    bool complete = false;
    arena.execute([&] { records.push_back(Json::parse(compute_sweep_point(spec, point, true, {}, complete).dump())); });
  }
  const SweepFiles files = render_sweep(spec, records);
  // One CSV row per (point, workload, front point), or one status row where a workload has no mapping.
  std::size_t expect_rows = 0, infeasible = 0;
  for (const Json& r : records) {
    for (const Json& w : r["workloads"]) {
      expect_rows += std::max<std::size_t>(1, w["front"].size());
      infeasible += w["front"].empty() ? 1 : 0;
    }
  }
  EXPECT_GT(infeasible, 0u) << "2 KiB of SRAM cannot hold tiny_chain's feature maps";
  const auto count_lines = [](const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); };
  EXPECT_EQ(count_lines(files.csv), 1 + expect_rows);
  // pareto.csv, the JSON fronts and the SVG's filled points all list the same rows.
  const Json doc = Json::parse(files.json);
  std::size_t on_front = 0;
  for (const auto& w : spec.workloads) on_front += doc["pareto"][w.id].size();
  EXPECT_GT(on_front, 0u);
  EXPECT_EQ(count_lines(files.pareto_csv), 1 + on_front);
  // Rows whose cross_arch_pareto field (counted from the header; quoted fields may hold commas) is 1.
  const auto fields_of = [](const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) fields.emplace_back();
      else fields.back() += c;
    }
    return fields;
  };
  std::istringstream csv_lines(files.csv);
  std::string line;
  std::getline(csv_lines, line);
  const std::vector<std::string> head = fields_of(line);
  const auto pareto_column = static_cast<std::size_t>(std::find(head.begin(), head.end(), "cross_arch_pareto") - head.begin());
  ASSERT_LT(pareto_column, head.size());
  std::size_t flagged = 0;
  while (std::getline(csv_lines, line)) flagged += fields_of(line).at(pareto_column) == "1" ? 1 : 0;
  EXPECT_EQ(flagged, on_front);
  std::size_t circles = 0;
  for (std::size_t pos = 0; (pos = files.svg.find("class=\"pareto\"", pos)) != std::string::npos; ++pos) ++circles;
  EXPECT_EQ(circles, on_front);
  EXPECT_EQ(files.svg.rfind("</svg>\n"), files.svg.size() - 7);
  // Rendering is a pure function of the records.
  EXPECT_EQ(render_sweep(spec, records).svg, files.svg);
}

}  // namespace
}  // namespace npumap::sweep
