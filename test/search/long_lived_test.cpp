// Long-lived feature maps where the arena is not the SRAM (long_lived.hpp, docs/design/search.md
// "Long-lived feature maps"), on a 20-layer network whose first feature map `a` is read again by the
// last layer (live across 19 steps, more than kLongLivedSteps = 16):
//  (a) the two variants: the arena one never places `a` in SRAM, the pinned one always does, and in
//      every point of the pinned variant's front `a`'s bytes (by hand: 4x4x8 int8, 128 bytes linear,
//      4x4x16 = 256 in NHCWB16) are in the SRAM in use at every step from its producer to its reader;
//  (b) metamorphic: JoinOptions::known_mappings drops exactly the front points that a known mapping
//      strictly dominates, whatever the known values (the pinned front, the front itself, points
//      slightly better than some of it), so join_long_lived's front is the same with and without the
//      bound: the Pareto front of the union of the two variants' unbounded fronts;
//  (c) on an arch whose arena is the SRAM (ethos-u55) nothing is long-lived in the join's sense and
//      join_long_lived is join.

#include <gtest/gtest.h>

#include "mapper/search/long_lived.hpp"
#include "mapper/search/map_network.hpp"
#include "mapper/search/point_memory.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;

/// conv c0 -> a; 18 1x1 convolutions b1..b18 on it in a chain; add(b18, a) -> y.
workloads::Workload long_chain() {
  std::string text = R"(
name: long_chain
inputs:
  - {name: x, shape: [1, 4, 4, 8], dtype: int8}
layers:
  - {name: c0, op: conv2d, inputs: [x], output: a, output_shape: [1, 4, 4, 8], kernel: 3, padding: SAME}
)";
  std::string prev = "a";
  for (int i = 1; i <= 18; ++i) {
    const std::string out = "b" + std::to_string(i);
    text += "  - {name: c" + std::to_string(i) + ", op: conv2d, inputs: [" + prev + "], output: " + out +
            ", output_shape: [1, 4, 4, 8], kernel: 1, padding: VALID}\n";
    prev = out;
  }
  text += "  - {name: sum, op: add, inputs: [" + prev + ", a], output: y, output_shape: [1, 4, 4, 8]}\n";
  return workloads::load_workload_from_string(text, "long_chain.yaml");
}

int tensor_index(const workloads::Workload& w, const std::string& name) {
  for (std::size_t t = 0; t < w.tensors.size(); ++t)
    if (w.tensors[t].name == name) return static_cast<int>(t);
  return -1;
}

/// Residence of tensor `t` in group `g` of step `step` (the output slot is the last compat).
std::vector<Residence> residences_of(const JoinStep& step, const PmappingGroup& g, int t) {
  std::vector<Residence> out;
  for (std::size_t i = 0; i < step.inputs.size(); ++i)
    if (step.inputs[i] == t) out.push_back(g.compat.at(i).residence);
  if (step.output == t) out.push_back(g.compat.back().residence);
  return out;
}

struct Fixture {
  workloads::Workload w = long_chain();
  arch::Arch a = preset("ethos-u65-256");
  StageResult stage = run_per_layer(a, w, StageOptions{});
  JoinProblem problem = make_join_problem(a, w, stage, true);
  int t_a = tensor_index(w, "a");
};

std::vector<double> values(const std::vector<FrontPoint>& front, const std::vector<Objective>& objectives) {
  std::vector<double> v;
  for (const FrontPoint& p : front)
    for (Objective o : objectives) v.push_back(p.objective(o));
  return v;
}

TEST(LongLived, VariantsPlaceTheLongLivedMapAsTheySay) {
  Fixture f;
  ASSERT_GE(f.t_a, 0);
  ASSERT_TRUE(f.problem.tensors.at(static_cast<std::size_t>(f.t_a)).long_lived);
  EXPECT_TRUE(pinnable_tensors(f.problem).at(static_cast<std::size_t>(f.t_a)));
  EXPECT_EQ(long_lived_joins(f.problem), 2U);
  for (const bool pinned : {false, true}) {
    const LongLivedVariant v = long_lived_variant(f.problem, pinned);
    for (std::size_t s = 0; s < v.problem.steps.size(); ++s) {
      ASSERT_FALSE(v.problem.steps[s].groups.empty()) << "step " << s;
      for (const PmappingGroup& g : v.problem.steps[s].groups)
        for (Residence r : residences_of(v.problem.steps[s], g, f.t_a))
          EXPECT_EQ(r, pinned ? Residence::Sram : Residence::Arena) << "step " << s;
    }
  }
  const LongLivedVariant pinned = long_lived_variant(f.problem, true);
  JoinOptions options;
  options.objectives = all_objectives();
  const JoinResult r = join(pinned.problem, options);
  ASSERT_FALSE(r.front.empty());
  const JoinTensor& ta = f.problem.tensors[static_cast<std::size_t>(f.t_a)];
  EXPECT_EQ(ta.linear_bytes, 128);   // 4 x 4 x 8 x 1 byte
  EXPECT_EQ(ta.nhcwb16_bytes, 256);  // channels rounded up to 16
  for (const FrontPoint& p : r.front) {
    const PointMemory mem = point_memory(pinned.problem, p);
    for (int s = ta.producer_step; s <= ta.last_consumer_step; ++s)
      EXPECT_GE(mem.sram_bytes.at(static_cast<std::size_t>(s)), 128.0) << "step " << s;
  }
}

TEST(LongLived, KnownMappingsDropOnlyWhatTheyStrictlyDominate) {
  Fixture f;
  const LongLivedVariant arena = long_lived_variant(f.problem, false);
  const LongLivedVariant pinned = long_lived_variant(f.problem, true);
  for (const auto& objectives : std::vector<std::vector<Objective>>{{Objective::Cycles, Objective::OffchipBytes},
                                                                    all_objectives()}) {
    JoinOptions options;
    options.objectives = objectives;
    const std::size_t k = objectives.size();
    const JoinResult plain = join(arena.problem, options);
    ASSERT_FALSE(plain.front.empty());
    // Known values: the pinned front; the front itself; every other front point made 0.1% better in
    // its first objective (so it strictly dominates that point and perhaps others).
    std::vector<std::vector<double>> knowns{values(join(pinned.problem, options).front, objectives),
                                            values(plain.front, objectives)};
    std::vector<double> better = values(plain.front, objectives);
    for (std::size_t i = 0; i < plain.front.size(); i += 2) better[i * k] *= 0.999;
    knowns.push_back(better);
    for (const std::vector<double>& known : knowns) {
      JoinOptions bounded = options;
      bounded.known_mappings = known;
      const JoinResult got = join(arena.problem, bounded);
      // Oracle: the unbounded front less the points some known mapping strictly dominates.
      std::vector<double> want;
      for (const FrontPoint& p : plain.front) {
        bool dominated = false;
        for (std::size_t m = 0; m + k <= known.size() && !dominated; m += k) {
          bool le = true, lt = false;
          for (std::size_t j = 0; j < k; ++j) {
            le = le && known[m + j] <= p.objective(objectives[j]);
            lt = lt || known[m + j] < p.objective(objectives[j]);
          }
          dominated = le && lt;
        }
        if (!dominated)
          for (Objective o : objectives) want.push_back(p.objective(o));
      }
      EXPECT_EQ(values(got.front, objectives), want) << k << " objectives";
      if (&known == &knowns.back()) EXPECT_LT(want.size(), values(plain.front, objectives).size()) << "nothing dropped";
      if (&known == &knowns[1]) EXPECT_EQ(want, values(plain.front, objectives)) << "a front never drops itself";
    }
  }
}

TEST(LongLived, MergedFrontIsTheFrontOfBothVariants) {
  Fixture f;
  const LongLivedVariant arena = long_lived_variant(f.problem, false);
  const LongLivedVariant pinned = long_lived_variant(f.problem, true);
  JoinOptions options;
  options.objectives = all_objectives();
  const JoinResult merged = join_long_lived(f.problem, options);
  // Oracle: every point of either variant's unbounded front is matched or strictly dominated by a
  // merged point, and no merged point is strictly dominated by one of them.
  std::vector<FrontPoint> both = join(arena.problem, options).front;
  for (const FrontPoint& p : join(pinned.problem, options).front) both.push_back(p);
  const auto dominates = [&](const FrontPoint& x, const FrontPoint& y) {
    bool le = true, lt = false;
    for (Objective o : options.objectives) le = le && x.objective(o) <= y.objective(o), lt = lt || x.objective(o) < y.objective(o);
    return le && lt;
  };
  ASSERT_FALSE(merged.front.empty());
  for (const FrontPoint& p : both) {
    bool covered = false;
    for (const FrontPoint& m : merged.front) covered = covered || dominates(m, p) || values({m}, options.objectives) == values({p}, options.objectives);
    EXPECT_TRUE(covered);
    for (const FrontPoint& m : merged.front) EXPECT_FALSE(dominates(p, m));
  }
  // The merged points are points of the original problem: their groups index its steps' groups and
  // their values are their rows' sums.
  for (const FrontPoint& m : merged.front) {
    double cycles = 0.0;
    for (std::size_t s = 0; s < f.problem.steps.size(); ++s)
      cycles += f.problem.steps[s].groups.at(m.group[s]).rows.at(m.row[s]).cycles;
    EXPECT_EQ(cycles, m.cycles);
  }
  // Some merged point holds `a` in SRAM: the arena front's point of least off-chip bytes, with `a`
  // moved to SRAM, no longer writes it to DRAM once and reads it twice (3 x 128 bytes less off-chip,
  // the rest unchanged), so the pinned variant's least off-chip bytes are below the arena's and the
  // merged front's point of least off-chip bytes is pinned.
  bool some_pinned = false;
  for (const FrontPoint& m : merged.front) {
    const PmappingGroup& g = f.problem.steps[0].groups.at(m.group[0]);
    some_pinned = some_pinned || g.compat.back().residence == Residence::Sram;
  }
  EXPECT_TRUE(some_pinned);
}

TEST(LongLived, NothingLongLivedWhereTheArenaIsTheSram) {
  const workloads::Workload w = long_chain();
  const arch::Arch a = preset("ethos-u55-128");
  const StageResult stage = run_per_layer(a, w, StageOptions{});
  const JoinProblem problem = make_join_problem(a, w, stage, true);
  for (const JoinTensor& t : problem.tensors) EXPECT_FALSE(t.long_lived);
  EXPECT_EQ(long_lived_joins(problem), 1U);
  JoinOptions options;
  options.objectives = all_objectives();
  EXPECT_EQ(values(join_long_lived(problem, options).front, options.objectives),
            values(join(problem, options).front, options.objectives));
}

}  // namespace
}  // namespace npumap::search
