// The join's incumbent bound on real networks (labelled slow: whole zoo networks, about 10 s in a
// Release build; left out of the sanitizer stage of CI). The tiny networks' version of this check runs
// with every other exact speed-up in join_test.cpp.

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "mapper/search/join/join.hpp"
#include "mapper/search/stage.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;
using testing::tiny;

const std::vector<Objective> kTwo = {Objective::Cycles, Objective::OffchipBytes};
const std::vector<Objective> kThree = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
const std::vector<Objective> kAll = all_objectives();

JoinProblem problem_for(const arch::Arch& a, const workloads::Workload& w, StageResult& stage) {
  stage = run_per_layer(a, w, StageOptions{});
  return make_join_problem(a, w, stage, true);
}

/// The join of `p` with `options` on two threads.
JoinResult join2(const JoinProblem& p, const JoinOptions& options) {
  JoinRunContext context;
  context.threads = 2;
  return join(p, options, context);
}

/// A front as values and, per point, the chosen (group, row) of every layer.
std::vector<std::tuple<double, double, double, double, std::vector<std::uint32_t>, std::vector<std::uint32_t>>> front_of(
    const JoinResult& r) {
  std::vector<std::tuple<double, double, double, double, std::vector<std::uint32_t>, std::vector<std::uint32_t>>> out;
  for (const FrontPoint& f : r.front) out.emplace_back(f.cycles, f.offchip_bytes, f.peak_sram_bytes, f.energy_pj, f.group, f.row);
  return out;
}

TEST(JoinMetamorphic, TheIncumbentBoundKeepsTheExactFrontOfRealNetworks) {
  // Networks large enough that the bound drops rows (checked below), with 2, 3 and 4 objectives.
  bool some_dropped = false;
  for (const char* wl : {"resnet18", "mobilenet_v2"}) {
    for (const auto& objectives : {kTwo, kThree, kAll}) {
      if (std::string(wl) == "mobilenet_v2" && objectives.size() > 2) continue;  // minutes without the bound
      const arch::Arch a = preset("ethos-u55-256");
      const workloads::Workload w = tiny(wl);
      StageResult stage;
      const JoinProblem p = problem_for(a, w, stage);
      JoinOptions o;
      o.objectives = objectives;
      const JoinResult bounded = join2(p, o);
      o.speedups.incumbent_bound = false;
      const JoinResult plain = join2(p, o);
      EXPECT_EQ(front_of(bounded), front_of(plain)) << wl << " " << objectives.size() << " objectives";
      // A quick pass that never had to thin a key is itself the exact join and is returned as it is
      // (resnet18 with two objectives): then the bound did not run.
      EXPECT_LE(bounded.totals().rows_paired, plain.totals().rows_paired) << wl;
      some_dropped = some_dropped || bounded.totals().rows_paired < plain.totals().rows_paired;
    }
  }
  EXPECT_TRUE(some_dropped) << "the bound dropped nothing on any network";
}

TEST(JoinBest, GivesTheFirstPointOfRealNetworksFrontsWithFewerRows) {
  // As the report's comparison without fusion uses it: the whole front's first points, the same
  // choices of mapping, and far fewer rows paired than the whole front's exact pass.
  for (const char* wl : {"resnet18", "mobilenet_v2"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      for (const auto& objectives : {kTwo, kThree}) {
        if (std::string(an) == "ethos-u65-256" && objectives.size() > 2) continue;  // a 14k-point front
        if (std::string(wl) == "mobilenet_v2" && objectives.size() > 2) continue;   // seconds
        const arch::Arch a = preset(an);
        const workloads::Workload w = tiny(wl);
        StageResult stage;
        stage = run_per_layer(a, w, StageOptions{});
        const JoinProblem p = make_join_problem(a, w, stage, false);
        JoinOptions o;
        o.objectives = objectives;
        JoinRunContext context;
        context.threads = 2;
        const JoinResult whole = join(p, o, context);
        const JoinResult best = join_best(p, o, context);
        const std::string what = std::string(wl) + " " + an + " " + std::to_string(objectives.size()) + " objectives";
        ASSERT_FALSE(best.front.empty()) << what;
        std::size_t tied = 0;
        while (tied < whole.front.size() && whole.front[tied].cycles == whole.front.front().cycles) ++tied;
        const std::vector<FrontPoint> first(whole.front.begin(), whole.front.begin() + static_cast<std::ptrdiff_t>(tied));
        EXPECT_EQ(front_of(best), front_of(JoinResult{first, false, {}, {}})) << what;
        EXPECT_LT(best.totals().rows_paired * 4, whole.totals().rows_paired) << what << ": the cap saved little";
      }
    }
  }
}

std::uint64_t stored(const JoinResult& r) {
  std::uint64_t n = 0;
  for (const JoinStepStats& s : r.steps) n += s.rows_stored;
  return n;
}

bool same_counters(const JoinStepStats& a, const JoinStepStats& b) {
  return a.left_groups == b.left_groups && a.right_groups == b.right_groups && a.group_pairs_matched == b.group_pairs_matched &&
         a.rows_paired == b.rows_paired && a.dropped_sram_capacity == b.dropped_sram_capacity &&
         a.dropped_dominated == b.dropped_dominated && a.groups_dropped_incompatible == b.groups_dropped_incompatible &&
         a.rows_dropped_incompatible == b.rows_dropped_incompatible && a.rows_out == b.rows_out && a.groups_out == b.groups_out;
}

TEST(JoinMetamorphic, TheDominanceFilterAndTheSiblingBoundChangeNeitherTheFrontNorTheCounters) {
  // A skipped row counts as dominated (or over capacity, as merging it would have found), so every
  // step's counters are those of the join without the filter, and without the sibling bound, on
  // networks where they skip most rows (the stored rows show that each skipped some).
  bool filter_skipped = false;
  bool sibling_skipped = false;
  for (const char* wl : {"resnet18", "mobilenet_v2"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      for (const auto& objectives : {kTwo, kThree}) {
        if (std::string(wl) == "mobilenet_v2" && objectives.size() > 2) continue;  // seconds each
        if (std::string(an) == "ethos-u65-256" && objectives.size() > 2) continue;  // a 14k-point front
        const arch::Arch a = preset(an);
        const workloads::Workload w = tiny(wl);
        StageResult stage;
        const JoinProblem p = problem_for(a, w, stage);
        JoinOptions o;
        o.objectives = objectives;
        const JoinResult both = join2(p, o);
        o.speedups.sibling_bound = false;
        const JoinResult filter_only = join2(p, o);
        o.speedups.dominance_filter = false;
        const JoinResult plain = join2(p, o);
        o.speedups.sibling_bound = true;
        const JoinResult sibling_only = join2(p, o);
        for (const JoinResult* r : {&both, &filter_only, &sibling_only}) {
          EXPECT_EQ(front_of(*r), front_of(plain)) << wl << " " << an << " " << objectives.size() << " objectives";
          ASSERT_EQ(r->steps.size(), plain.steps.size());
          for (std::size_t s = 0; s < plain.steps.size(); ++s) {
            EXPECT_TRUE(same_counters(r->steps[s], plain.steps[s])) << wl << " " << an << " step " << s;
          }
        }
        filter_skipped = filter_skipped || stored(filter_only) < stored(plain);
        sibling_skipped = sibling_skipped || stored(sibling_only) < stored(plain);
      }
    }
  }
  EXPECT_TRUE(filter_skipped) << "the dominance filter skipped no row";
  EXPECT_TRUE(sibling_skipped) << "the sibling bound skipped no row";
}

std::uint64_t rows_out(const JoinResult& r) {
  std::uint64_t n = 0;
  for (const JoinStepStats& s : r.steps) n += s.rows_out;
  return n;
}

TEST(JoinMetamorphic, TheCascadeClampKeepsTheFrontAndDropsRows) {
  // With two objectives an open cascade's SRAM is compared by the least limit of the completions
  // it admits: the same front values (each point's least SRAM included), fewer rows along the way.
  // Small SRAMs on ethos-u65-256 (arena in DRAM) make the limits bind: there a wrong limit changes
  // the front (checked by shifting every limit by 20,000 bytes).
  struct Run {
    const char* workload;
    const char* arch;
    std::int64_t capacity;  // 0: the preset's
  };
  for (const Run& run : {Run{"resnet18", "ethos-u55-128", 0}, Run{"mobilenet_v2", "ethos-u55-128", 0},
                         Run{"resnet18", "ethos-u65-256", 0}, Run{"mobilenet_v2", "ethos-u65-256", 0},
                         Run{"mobilenet_v2", "ethos-u65-256", 32 * 1024}, Run{"mobilenet_v2", "ethos-u65-256", 64 * 1024},
                         Run{"mobilenet_v2", "ethos-u65-256", 128 * 1024}}) {
    arch::Arch a = preset(run.arch);
    if (run.capacity > 0) a.sram_capacity_bytes = run.capacity;
    const workloads::Workload w = tiny(run.workload);
    const std::string what = std::string(run.workload) + " " + run.arch + " " + std::to_string(run.capacity);
    StageResult stage;
    const JoinProblem p = problem_for(a, w, stage);
    JoinOptions o;
    o.objectives = kTwo;
    const JoinResult clamped = join2(p, o);
    o.speedups.cascade_clamp = false;
    const JoinResult plain = join2(p, o);
    const auto values = [](const JoinResult& r) {
      std::vector<std::tuple<double, double, double>> out;
      for (const FrontPoint& f : r.front) out.emplace_back(f.cycles, f.offchip_bytes, f.peak_sram_bytes);
      return out;
    };
    EXPECT_EQ(values(clamped), values(plain)) << what;
    // Rows compared without the incumbent bound: with it, a quick pass that never thins is returned
    // with its own (unbounded) counters, which the clamp makes more likely.
    o.speedups.incumbent_bound = false;
    const std::uint64_t plain_rows = rows_out(join2(p, o));
    o.speedups.cascade_clamp = true;
    EXPECT_LT(rows_out(join2(p, o)), plain_rows) << what << ": the clamp merged no rows";
  }
}

TEST(JoinMetamorphic, CombiningTheLeftGroupsOfAPairKeepsTheFrontAndPairsFewerRows) {
  // The left groups that meet one layer group in one new key are paired as one Pareto-filtered
  // table: the same front values (the least SRAM of each point included), fewer rows paired. The
  // choice among mappings with exactly equal values may differ, so values are compared.
  struct Run {
    const char* workload;
    const char* arch;
    std::vector<Objective> objectives;
  };
  for (const Run& run : {Run{"resnet18", "ethos-u55-256", kTwo}, Run{"resnet18", "ethos-u55-256", kThree},
                         Run{"resnet18", "ethos-u65-256", kTwo}, Run{"mobilenet_v2", "ethos-u55-128", kTwo},
                         Run{"mobilenet_v2", "ethos-u65-256", kTwo}}) {
    const arch::Arch a = preset(run.arch);
    const workloads::Workload w = tiny(run.workload);
    const std::string what = std::string(run.workload) + " " + run.arch + " " + std::to_string(run.objectives.size());
    StageResult stage;
    const JoinProblem p = problem_for(a, w, stage);
    JoinOptions o;
    o.objectives = run.objectives;
    const auto values = [&](const JoinResult& r) {
      std::vector<std::tuple<double, double, double>> out;
      for (const FrontPoint& f : r.front) out.emplace_back(f.cycles, f.offchip_bytes, f.peak_sram_bytes);
      return out;
    };
    const JoinResult combined = join2(p, o);
    o.speedups.combine_left = false;
    const JoinResult plain = join2(p, o);
    EXPECT_EQ(values(combined), values(plain)) << what;
    // Rows compared without the incumbent bound, whose quick passes may end the join early.
    o.speedups.incumbent_bound = false;
    const std::uint64_t plain_rows = join2(p, o).totals().rows_paired;
    o.speedups.combine_left = true;
    EXPECT_LT(join2(p, o).totals().rows_paired, plain_rows) << what << ": combining paired as many rows";
  }
}

}  // namespace
}  // namespace npumap::search
