// Long-lived feature maps where the arena is not the SRAM (long_lived.hpp, docs/design/search.md
// "Long-lived feature maps"), on a 21- or 23-layer chain whose first one or three feature maps (`a`,
// then `b1`, `b2`) are read again by adds at its end (each live across 19 steps, more than
// kLongLivedSteps = 16):
//  (a) with three live at once (more than kFreeLongLived = 1) join_long_lived joins two variants: the
//      arena one never places them in SRAM, the pinned one always does, and in every point of the
//      pinned variant's front their bytes (by hand: 4x4x8 int8, 128 bytes each linear, 4x4x16 = 256
//      in NHCWB16) are in the SRAM in use at every step where all three are live;
//  (b) metamorphic: JoinOptions::known_mappings drops exactly the front points that a known mapping
//      strictly dominates, whatever the known values (the pinned front, the front itself, points
//      slightly better than some of it), so join_long_lived's front is the same with and without the
//      bound: the Pareto front of the union of the two variants' unbounded fronts;
//  (c) with one, the join chooses per mapping (the problem as it is) and its front holds a point
//      with `a` in SRAM;
//  (d) on an arch whose arena is the SRAM (ethos-u55) nothing is long-lived in the join's sense and
//      join_long_lived is join.

#include <gtest/gtest.h>

#include "mapper/search/long_lived.hpp"
#include "mapper/search/map_network.hpp"
#include "mapper/search/point_memory.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;

/// conv c0 -> a; 18 1x1 convolutions b1..b18 on it in a chain; add(b18, a) -> s1 and, with `kept` 3,
/// add(s1, b1) -> s2, add(s2, b2) -> y: the first `kept` maps are read again at the end.
workloads::Workload long_chain(int kept) {
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
  const std::vector<std::string> again = {"a", "b1", "b2"};
  for (int i = 0; i < kept; ++i) {
    const std::string out = "s" + std::to_string(i + 1);
    text += "  - {name: sum" + std::to_string(i + 1) + ", op: add, inputs: [" + prev + ", " + again[static_cast<std::size_t>(i)] +
            "], output: " + out + ", output_shape: [1, 4, 4, 8]}\n";
    prev = out;
  }
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
  explicit Fixture(int kept) : w(long_chain(kept)) {}
  workloads::Workload w;
  arch::Arch a = preset("ethos-u65-256");
  StageResult stage = run_per_layer(a, w, StageOptions{});
  JoinProblem problem = make_join_problem(a, w, stage, true);
  std::vector<int> kept_maps() const {
    std::vector<int> out;
    for (const char* name : {"a", "b1", "b2"})
      if (problem.tensors.at(static_cast<std::size_t>(tensor_index(w, name))).long_lived) out.push_back(tensor_index(w, name));
    return out;
  }
};

std::vector<double> values(const std::vector<FrontPoint>& front, const std::vector<Objective>& objectives) {
  std::vector<double> v;
  for (const FrontPoint& p : front)
    for (Objective o : objectives) v.push_back(p.objective(o));
  return v;
}

TEST(LongLived, VariantsPlaceTheLongLivedMapsAsTheySay) {
  Fixture f(3);
  const std::vector<int> maps = f.kept_maps();
  ASSERT_EQ(maps.size(), 3U);
  for (int t : maps) EXPECT_TRUE(pinnable_tensors(f.problem).at(static_cast<std::size_t>(t)));
  EXPECT_EQ(long_lived_join_kind(f.problem), LongLivedJoin::Variants);
  EXPECT_EQ(long_lived_joins(f.problem), 2U);
  for (const bool pinned : {false, true}) {
    const LongLivedVariant v = long_lived_variant(f.problem, pinned);
    for (std::size_t s = 0; s < v.problem.steps.size(); ++s) {
      ASSERT_FALSE(v.problem.steps[s].groups.empty()) << "step " << s;
      for (const PmappingGroup& g : v.problem.steps[s].groups)
        for (int t : maps)
          for (Residence r : residences_of(v.problem.steps[s], g, t))
            EXPECT_EQ(r, pinned ? Residence::Sram : Residence::Arena) << "step " << s;
    }
  }
  const LongLivedVariant pinned = long_lived_variant(f.problem, true);
  JoinOptions options;
  options.objectives = all_objectives();
  const JoinResult r = join(pinned.problem, options);
  ASSERT_FALSE(r.front.empty());
  for (int t : maps) {
    EXPECT_EQ(f.problem.tensors[static_cast<std::size_t>(t)].linear_bytes, 128);   // 4 x 4 x 8 x 1 byte
    EXPECT_EQ(f.problem.tensors[static_cast<std::size_t>(t)].nhcwb16_bytes, 256);  // channels rounded up to 16
  }
  // All three are live from b2's producer (step 2) to a's last reader (step 19).
  const JoinTensor& b2 = f.problem.tensors[static_cast<std::size_t>(maps[2])];
  const JoinTensor& ta = f.problem.tensors[static_cast<std::size_t>(maps[0])];
  EXPECT_EQ(b2.producer_step, 2);
  EXPECT_EQ(ta.last_consumer_step, 19);
  for (const FrontPoint& p : r.front) {
    const PointMemory mem = point_memory(pinned.problem, p);
    for (int s = b2.producer_step; s <= ta.last_consumer_step; ++s)
      EXPECT_GE(mem.sram_bytes.at(static_cast<std::size_t>(s)), 3 * 128.0) << "step " << s;
  }
}

TEST(LongLived, KnownMappingsDropOnlyWhatTheyStrictlyDominate) {
  Fixture f(3);
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
      if (&known == &knowns.back()) {
        EXPECT_LT(want.size(), values(plain.front, objectives).size()) << "nothing dropped";
      }
      if (&known == &knowns[1]) {
        EXPECT_EQ(want, values(plain.front, objectives)) << "a front never drops itself";
      }
    }
  }
}

TEST(LongLived, MergedFrontIsTheFrontOfBothVariants) {
  Fixture f(3);
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
  // Metamorphic: the same front without the bound (the incumbent bound off: join ignores
  // known_mappings).
  JoinOptions unbounded = options;
  unbounded.speedups.set(Speedup::IncumbentBound, false);
  EXPECT_EQ(values(join_long_lived(f.problem, unbounded).front, options.objectives), values(merged.front, options.objectives));
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
  // Some merged point holds the three in SRAM: the arena front's point of least off-chip bytes, with
  // them moved to SRAM, no longer writes each to DRAM once and reads it twice (9 x 128 bytes less
  // off-chip, the rest unchanged), so the pinned variant's least off-chip bytes are below the
  // arena's and the merged front's point of least off-chip bytes is pinned.
  bool some_pinned = false;
  for (const FrontPoint& m : merged.front) {
    const PmappingGroup& g = f.problem.steps[0].groups.at(m.group[0]);
    some_pinned = some_pinned || g.compat.back().residence == Residence::Sram;
  }
  EXPECT_TRUE(some_pinned);
}

TEST(LongLived, FewLiveAtOnceChooseFreely) {
  Fixture f(1);
  ASSERT_EQ(f.kept_maps().size(), 1U);
  EXPECT_EQ(long_lived_join_kind(f.problem), LongLivedJoin::Free);
  EXPECT_EQ(long_lived_joins(f.problem), 1U);
  JoinOptions options;
  options.objectives = {Objective::Cycles, Objective::OffchipBytes};
  const JoinResult r = join_long_lived(f.problem, options);
  EXPECT_EQ(values(r.front, options.objectives), values(join(f.problem, options).front, options.objectives));
  // The point of least off-chip bytes holds `a` in SRAM (by the argument above: 3 x 128 bytes less).
  ASSERT_FALSE(r.front.empty());
  const FrontPoint& least_offchip = r.front.back();  // sorted by cycles, then off-chip: the last has the least
  EXPECT_EQ(f.problem.steps[0].groups.at(least_offchip.group[0]).compat.back().residence, Residence::Sram);
}

TEST(LongLived, NothingLongLivedWhereTheArenaIsTheSram) {
  const workloads::Workload w = long_chain(3);
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
