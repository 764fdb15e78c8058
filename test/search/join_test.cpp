// Tests of the join (mapper/search/join/): an exhaustive oracle (join_oracle.hpp) over every combination of per-layer pmappings
// on tiny networks, with an independent simulation of liveness, cascades and SRAM; and metamorphic
// checks (look-ahead and collapsing off, more SRAM, fusion on vs off, thread counts).

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <tuple>

#include "mapper/search/stage.hpp"
#include "mapper/search/join/join.hpp"
#include "join_oracle.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;
using testing::tiny;

workloads::Workload named(const std::string& name) {
  if (name == "branch_rejoin") return testing::branch_rejoin();
  if (name == "chain5") return testing::chain5();
  if (name == "pair_residual") return testing::pair_residual();
  if (name == "peak_then_pair") return testing::peak_then_pair();
  return tiny(name);
}

using testing::Objectives;

/// A join problem with its options.
struct Joinable {
  JoinProblem problem;
  JoinOptions options;
};

JoinResult join(const Joinable& j, int threads = 1) {
  JoinRunContext context;
  context.threads = threads;
  return search::join(j.problem, j.options, context);
}

std::vector<Objectives> join_front(const Joinable& j) { return testing::front_values(join(j), j.options.objectives); }

struct Case {
  std::string arch;
  std::string workload;
  std::int64_t capacity;  // 0: the preset's
  std::vector<Objective> objectives;
};

class JoinOracle : public ::testing::TestWithParam<Case> {};

TEST_P(JoinOracle, ExhaustiveEnumerationGivesTheSameFront) {
  const Case c = GetParam();
  arch::Arch a = preset(c.arch);
  if (c.capacity > 0) a.sram_capacity_bytes = c.capacity;
  const workloads::Workload w = named(c.workload);
  StageOptions so;
  so.objectives = c.objectives;
  const StageResult stage = run_per_layer(a, w, so);
  Joinable p{make_join_problem(a, w, stage, true), {}};
  p.options.objectives = c.objectives;
  const std::uint64_t combos = testing::combinations(p.problem);
  ASSERT_LT(combos, 30'000'000u) << "case too large for the exhaustive oracle";
  const auto expected = testing::exhaustive(p.problem, c.objectives).front;
  const auto got = join_front(p);
  EXPECT_FALSE(got.empty());
  EXPECT_EQ(got, expected) << combos << " combinations";
  // Quick passes of 2 rows per key thin even these networks, so the exact pass runs under the
  // incumbent bound, with the key bound forced on.
  Joinable bounded = p;
  bounded.options.speedups.quick_beams = {2};
  bounded.options.speedups.key_bound = KeyBound::On;
  EXPECT_EQ(join_front(bounded), expected) << "bounded by quick passes of 2 rows per key, key bound on";
  bounded.options.speedups.quick_keys = 1;
  EXPECT_EQ(join_front(bounded), expected) << "bounded by quick passes of 2 rows per key and 1 key per step";
}

const std::vector<Objective> kAll = all_objectives();
const std::vector<Objective> kCyclesSram = {Objective::Cycles, Objective::Sram};
const std::vector<Objective> kThree = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
const std::vector<Objective> kTwo = {Objective::Cycles, Objective::OffchipBytes};

INSTANTIATE_TEST_SUITE_P(
    TinyNetworks, JoinOracle,
    ::testing::Values(Case{"ethos-u55-256", "tiny_chain", 0, kCyclesSram}, Case{"ethos-u55-256", "tiny_chain", 0, kAll},
                      Case{"ethos-u55-256", "tiny_residual", 0, kAll}, Case{"ethos-u65-256", "tiny_chain", 0, kCyclesSram},
                      Case{"ethos-u65-256", "tiny_residual", 0, kCyclesSram},
                      Case{"ethos-u55-256", "branch_rejoin", 0, kAll},
                      Case{"ethos-u55-256", "chain5", 0, kCyclesSram},
                      // tight SRAM: rows dropped over capacity, cascades that must stay small
                      Case{"ethos-u55-256", "tiny_chain", 7000, kCyclesSram},
                      Case{"ethos-u55-256", "chain5", 3000, kCyclesSram},
                      Case{"ethos-u65-256", "tiny_residual", 6000, kCyclesSram},
                      // the default objectives (cycles, off-chip bytes, peak SRAM)
                      Case{"ethos-u55-256", "tiny_chain", 0, kThree}, Case{"ethos-u55-256", "tiny_residual", 0, kThree},
                      Case{"ethos-u65-256", "tiny_chain", 4096, kThree}, Case{"ethos-u65-256", "tiny_residual", 0, kThree},
                      Case{"ethos-u55-256", "branch_rejoin", 0, kThree}, Case{"ethos-u55-256", "chain5", 0, kThree},
                      Case{"ethos-u55-256", "chain5", 3000, kThree}, Case{"ethos-u65-256", "tiny_residual", 6000, kAll},
                      // two objectives: each point carries the least SRAM reaching exactly its values
                      Case{"ethos-u55-256", "tiny_chain", 0, kTwo}, Case{"ethos-u55-256", "tiny_residual", 0, kTwo},
                      Case{"ethos-u65-256", "tiny_residual", 0, kTwo}, Case{"ethos-u55-256", "branch_rejoin", 0, kTwo},
                      Case{"ethos-u55-256", "chain5", 0, kTwo}, Case{"ethos-u55-256", "chain5", 3000, kTwo},
                      // two objectives in tight SRAM: cascades whose SRAM decides which completions fit
                      Case{"ethos-u55-256", "tiny_chain", 7000, kTwo}, Case{"ethos-u55-256", "chain5", 4000, kTwo},
                      Case{"ethos-u55-256", "chain5", 6000, kTwo}, Case{"ethos-u65-256", "tiny_chain", 4096, kTwo},
                      // cascades that close one step after they open, with SRAM as an objective
                      Case{"ethos-u55-256", "pair_residual", 0, kThree}, Case{"ethos-u65-256", "pair_residual", 0, kThree},
                      Case{"ethos-u55-256", "pair_residual", 12000, kThree}, Case{"ethos-u65-256", "pair_residual", 8000, kAll},
                      Case{"ethos-u55-256", "peak_then_pair", 0, kThree}, Case{"ethos-u55-256", "peak_then_pair", 24000, kThree}));

Joinable problem_for(const arch::Arch& a, const workloads::Workload& w, StageResult& stage, bool fusion = true) {
  stage = run_per_layer(a, w, StageOptions{});
  return {make_join_problem(a, w, stage, fusion), {}};
}

std::uint64_t stored_rows(const JoinResult& r) {
  std::uint64_t n = 0;
  for (const JoinStepStats& s : r.steps) n += s.rows_stored;
  return n;
}

TEST(JoinMetamorphic, LookAheadCollapsingTheBoundsTheDominanceFilterTheCascadeClampCombiningTheKeyAndSiblingBoundsDoNotChangeTheFront) {
  // Exact speed-ups: the same front, point for point, with the same choice of mapping per point.
  bool some_bound_dropped = false;
  bool some_key_bound_dropped = false;
  bool some_sibling_skipped = false;
  for (const char* wl : {"tiny_residual", "branch_rejoin", "chain5"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      for (const auto& objectives : {kTwo, kThree, kAll}) {
        const arch::Arch a = preset(an);
        const workloads::Workload w = named(wl);
        StageResult stage;
        Joinable j = problem_for(a, w, stage);
        j.options.objectives = objectives;
        JoinSpeedups& p = j.options.speedups;
        // Quick passes of 2 rows per key thin these small networks, so the bound really runs (a
        // pass that never thins is returned as the exact join).
        p.quick_beams = {2};
        const auto base = join_front(j);
        // Every combination of the first six switches; combining left groups on for half of them (by
        // parity), so each switch meets it both on and off.
        for (int mask = 0; mask < 64; ++mask) {
          p.lookahead = mask & 1;
          p.collapse = mask & 2;
          p.future_sram_bound = mask & 4;
          p.incumbent_bound = mask & 8;
          p.dominance_filter = mask & 16;
          p.cascade_clamp = mask & 32;
          p.combine_left = std::popcount(static_cast<unsigned>(mask)) % 2 == 0;
          // The key bound by the parity of three other switches: on and off with each switch and
          // with combining.
          p.key_bound = std::popcount(static_cast<unsigned>(mask) & 0x2Au) % 2 == 0 ? KeyBound::On : KeyBound::Off;
          // The sibling bound by the parity of three more: on and off with each switch, with
          // combining and with the key bound.
          p.sibling_bound = std::popcount(static_cast<unsigned>(mask) & 0x15u) % 2 == 1;
          // Quick passes that keep one key per step, by the parity of three more.
          p.quick_keys = std::popcount(static_cast<unsigned>(mask) & 0x31u) % 2 == 1 ? 1 : 0;
          // The least-value skips by the parity of the future SRAM and the incumbent bound's switches.
          p.least_value_skips = std::popcount(static_cast<unsigned>(mask) & 0x0Cu) % 2 == 0;
          EXPECT_EQ(join_front(j), base) << wl << " " << an << " " << objectives.size() << " objectives, mask " << mask;
        }
        // The bound must have had something to do somewhere (checked after the loops).
        p.lookahead = p.collapse = p.future_sram_bound = p.dominance_filter = p.cascade_clamp = p.combine_left = true;
        p.sibling_bound = false;
        p.least_value_skips = true;
        const std::uint64_t unskipped = stored_rows(join(j));
        p.sibling_bound = true;
        some_sibling_skipped = some_sibling_skipped || stored_rows(join(j)) < unskipped;
        p.incumbent_bound = true;
        p.key_bound = KeyBound::On;
        const std::uint64_t key_bounded = join(j).totals().rows_paired;
        p.key_bound = KeyBound::Off;
        const std::uint64_t bounded = join(j).totals().rows_paired;
        some_key_bound_dropped = some_key_bound_dropped || key_bounded < bounded;
        p.incumbent_bound = false;
        some_bound_dropped = some_bound_dropped || bounded < join(j).totals().rows_paired;
      }
    }
  }
  EXPECT_TRUE(some_bound_dropped) << "the incumbent bound never dropped a row";
  EXPECT_TRUE(some_key_bound_dropped) << "the key bound never dropped a row the rest sets kept";
  EXPECT_TRUE(some_sibling_skipped) << "the sibling bound never skipped a row the dominance filter kept";
}

double best_cycles(const Joinable& p) {
  const JoinResult r = join(p);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& f : r.front) best = std::min(best, f.cycles);
  return best;
}

TEST(JoinMetamorphic, MoreSramNeverGivesWorseBestCycles) {
  for (const char* wl : {"tiny_chain", "tiny_residual", "chain5"}) {
    arch::Arch a = preset("ethos-u65-256");
    const workloads::Workload w = named(wl);
    double previous = std::numeric_limits<double>::infinity();
    for (std::int64_t cap : {4096, 6000, 8192, 16384, 65536, 393216}) {
      a.sram_capacity_bytes = cap;
      StageResult stage;
      const double best = best_cycles(problem_for(a, w, stage));
      EXPECT_LE(best, previous) << wl << " at " << cap << " bytes";
      previous = best;
    }
    EXPECT_LT(previous, std::numeric_limits<double>::infinity());
  }
}

TEST(JoinMetamorphic, FusionNeverGivesAWorseFront) {
  for (const char* wl : {"tiny_chain", "chain5", "tiny_residual"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      arch::Arch a = preset(an);
      const workloads::Workload w = named(wl);
      StageResult stage;
      const Joinable fused = problem_for(a, w, stage, true);
      const JoinResult with = join(fused);
      const JoinResult without = join(Joinable{make_join_problem(a, w, stage, false), {}});
      ASSERT_FALSE(without.front.empty());
      for (const auto& u : without.front) {
        bool covered = false;
        for (const auto& f : with.front) {
          covered = covered || (f.cycles <= u.cycles && f.offchip_bytes <= u.offchip_bytes &&
                                f.peak_sram_bytes <= u.peak_sram_bytes && f.energy_pj <= u.energy_pj);
        }
        EXPECT_TRUE(covered) << wl << " " << an;
      }
    }
  }
}

/// The points of a front whose first objective is the least, with their choices of mapping.
std::vector<std::tuple<double, double, double, double, std::vector<std::uint32_t>, std::vector<std::uint32_t>>> first_best(
    const JoinResult& r, Objective first) {
  std::vector<std::tuple<double, double, double, double, std::vector<std::uint32_t>, std::vector<std::uint32_t>>> out;
  for (const FrontPoint& f : r.front) {
    if (f.objective(first) == r.front.front().objective(first)) {
      out.emplace_back(f.cycles, f.offchip_bytes, f.peak_sram_bytes, f.energy_pj, f.group, f.row);
    }
  }
  return out;
}

TEST(JoinBest, GivesTheFrontsPointsWithTheLeastFirstObjective) {
  // join_best bounds the join by the least first objective (capped incumbent bound): the same
  // points, with the same choice of mapping, as the whole front's first ones; with or without
  // fusion, with every order of objectives (peak SRAM first: the whole join, filtered).
  bool some_dropped = false;
  for (const char* wl : {"tiny_chain", "tiny_residual", "branch_rejoin", "chain5", "pair_residual"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      for (const bool fusion : {true, false}) {
        for (const auto& objectives : {kTwo, kThree, kAll, std::vector<Objective>{Objective::OffchipBytes, Objective::Cycles},
                                       std::vector<Objective>{Objective::Sram, Objective::Cycles},
                                       std::vector<Objective>{Objective::Energy, Objective::Sram, Objective::Cycles}}) {
          const arch::Arch a = preset(an);
          const workloads::Workload w = named(wl);
          StageResult stage;
          Joinable p = problem_for(a, w, stage, fusion);
          p.options.objectives = objectives;
          const JoinResult whole = join(p);
          const JoinResult best = search::join_best(p.problem, p.options);
          ASSERT_FALSE(whole.front.empty()) << wl << " " << an;
          EXPECT_EQ(first_best(best, objectives.front()), first_best(whole, objectives.front()))
              << wl << " " << an << " fusion " << fusion << ", " << objectives.size() << " objectives";
          EXPECT_EQ(best.front.size(), first_best(whole, objectives.front()).size()) << "only the least first objective's points";
          // Against the exact join without the incumbent bound, the cap must drop rows somewhere.
          p.options.speedups.incumbent_bound = false;
          some_dropped = some_dropped || (objectives.front() != Objective::Sram &&
                                          best.totals().rows_paired < join(p).totals().rows_paired);
        }
      }
    }
  }
  EXPECT_TRUE(some_dropped) << "the cap never dropped a row";
}

TEST(JoinMetamorphic, FusionIsUsedWhenItSavesSram) {
  // On U55 the arena is SRAM: a rolling buffer of a few rows replaces a whole intermediate tensor,
  // so the front's smallest peak SRAM must come from a fused mapping of tiny_chain.
  const arch::Arch a = preset("ethos-u55-256");
  const workloads::Workload w = tiny("tiny_chain");
  StageResult stage;
  const JoinResult with = join(problem_for(a, w, stage, true));
  const JoinResult without = join(Joinable{make_join_problem(a, w, stage, false), {}});
  const auto min_sram = [](const JoinResult& r) {
    double m = std::numeric_limits<double>::infinity();
    for (const auto& f : r.front) m = std::min(m, f.peak_sram_bytes);
    return m;
  };
  EXPECT_LT(min_sram(with), min_sram(without));
}

JoinResult join_with(const arch::Arch& a, const workloads::Workload& w, const std::vector<Objective>& objectives) {
  StageOptions so;
  so.objectives = objectives;
  const StageResult stage = run_per_layer(a, w, so);
  Joinable p{make_join_problem(a, w, stage, true), {}};
  p.options.objectives = objectives;
  return join(p, 2);
}

TEST(JoinMetamorphic, TwoObjectiveFrontAppearsProjectedInTheThreeObjectiveFront) {
  // A point (c, o) of the cycles/off-chip front, with the least SRAM s* of the mappings reaching
  // exactly (c, o), is on the three-objective front: c' <= c and o' <= o force c' = c and o' = o, and
  // then s' >= s*. So every two-objective point appears, projected, in the three-objective front.
  const std::vector<Objective> two = {Objective::Cycles, Objective::OffchipBytes};
  const std::vector<Objective> three = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
  for (const char* wl : {"tiny_chain", "tiny_residual", "chain5", "branch_rejoin", "resnet18"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      // resnet18 with three objectives on ethos-u65 takes minutes (see docs/troubleshooting.md)
      if (std::string(wl) == "resnet18" && std::string(an) == "ethos-u65-256") continue;
      const arch::Arch a = preset(an);
      const workloads::Workload w = named(wl);
      const JoinResult r2 = join_with(a, w, two);
      const JoinResult r3 = join_with(a, w, three);
      ASSERT_FALSE(r2.front.empty()) << wl << " " << an;
      for (const FrontPoint& p : r2.front) {
        bool found = false;
        for (const FrontPoint& q : r3.front) found = found || (q.cycles == p.cycles && q.offchip_bytes == p.offchip_bytes);
        EXPECT_TRUE(found) << wl << " " << an << ": (" << p.cycles << ", " << p.offchip_bytes << ") missing";
      }
    }
  }
}

TEST(JoinMetamorphic, MoreSramNeverWorsensAnyObjectivesBest) {
  const std::vector<Objective> three = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
  for (const char* wl : {"tiny_chain", "tiny_residual", "chain5"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      arch::Arch a = preset(an);
      const workloads::Workload w = named(wl);
      std::array<double, 3> previous{};
      previous.fill(std::numeric_limits<double>::infinity());
      for (std::int64_t cap : {4096, 6000, 8192, 16384, 65536, 393216}) {
        a.sram_capacity_bytes = cap;
        const JoinResult r = join_with(a, w, three);
        for (std::size_t k = 0; k < three.size(); ++k) {
          double best = std::numeric_limits<double>::infinity();
          for (const FrontPoint& f : r.front) best = std::min(best, f.objective(three[k]));
          EXPECT_LE(best, previous[k]) << wl << " " << an << " " << objective_name(three[k]) << " at " << cap;
          previous[k] = best;
        }
      }
      EXPECT_LT(previous[0], std::numeric_limits<double>::infinity()) << wl << " " << an;
    }
  }
}

TEST(JoinDefaultObjectives, Resnet18FrontSramIsTheLeastForItsCycles) {
  // The case: resnet18 on ethos-u55-256 reported 980 KiB on every point of the default
  // (cycles, off-chip) front although 588 KiB reaches the same cycles and off-chip bytes. With SRAM
  // as the join's tie-break, every default point must carry exactly the least SRAM that the
  // three-objective front (a separate, exact join) has for its cycles and off-chip bytes, and the
  // best-cycles point no more than the cycles/SRAM front says the best cycles need. (Issue 36 keeps
  // the two-objective front the default; SRAM stays its tie-break.)
  const std::vector<Objective> defaults{Objective::Cycles, Objective::OffchipBytes};
  ASSERT_EQ(default_objectives(), (std::vector<Objective>{Objective::Cycles, Objective::OffchipBytes}));
  const arch::Arch a = preset("ethos-u55-256");
  const workloads::Workload w = tiny("resnet18");
  const JoinResult def = join_with(a, w, defaults);
  const JoinResult three = join_with(a, w, {Objective::Cycles, Objective::OffchipBytes, Objective::Sram});
  const JoinResult cs = join_with(a, w, {Objective::Cycles, Objective::Sram});
  ASSERT_FALSE(def.front.empty());
  ASSERT_FALSE(cs.front.empty());
  for (const FrontPoint& p : def.front) {
    double least = std::numeric_limits<double>::infinity();
    for (const FrontPoint& q : three.front) {
      if (q.cycles == p.cycles && q.offchip_bytes == p.offchip_bytes) least = std::min(least, q.peak_sram_bytes);
    }
    EXPECT_EQ(p.peak_sram_bytes, least) << p.cycles << " cycles, " << p.offchip_bytes << " off-chip bytes";
  }
  EXPECT_EQ(def.front.front().cycles, cs.front.front().cycles);  // both sorted by cycles first
  EXPECT_EQ(def.front.front().peak_sram_bytes, cs.front.front().peak_sram_bytes);
  EXPECT_LT(def.front.front().peak_sram_bytes, 980.0 * 1024);  // what the report said before
}

TEST(JoinMetamorphic, InPlaceElementwiseNeverGivesAWorseFront) {
  // In place only adds choices, so every point without it is matched or dominated with it; on
  // resnet18 (residual adds) on ethos-u55-256, where the arena is SRAM, it must lower the least SRAM.
  const std::vector<Objective> objs = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
  for (const char* wl : {"tiny_residual", "branch_rejoin", "resnet18"}) {
    for (const char* an : {"ethos-u55-256", "ethos-u65-256"}) {
      if (std::string(wl) == "resnet18" && std::string(an) == "ethos-u65-256") continue;  // minutes
      const arch::Arch a = preset(an);
      const workloads::Workload w = named(wl);
      std::array<JoinResult, 2> r;
      for (int on = 0; on < 2; ++on) {
        StageOptions so;
        so.objectives = objs;
        so.space.in_place = on == 1;
        const StageResult stage = run_per_layer(a, w, so);
        Joinable p{make_join_problem(a, w, stage, true), {}};
        p.options.objectives = objs;
        r[on] = join(p, 2);
      }
      ASSERT_FALSE(r[0].front.empty()) << wl << " " << an;
      for (const FrontPoint& u : r[0].front) {
        bool covered = false;
        for (const FrontPoint& f : r[1].front) {
          covered = covered || (f.cycles <= u.cycles && f.offchip_bytes <= u.offchip_bytes && f.peak_sram_bytes <= u.peak_sram_bytes);
        }
        EXPECT_TRUE(covered) << wl << " " << an;
      }
      if (std::string(wl) == "resnet18" && std::string(an) == "ethos-u55-256") {
        const auto least = [](const JoinResult& j) {
          double m = std::numeric_limits<double>::infinity();
          for (const FrontPoint& f : j.front) m = std::min(m, f.peak_sram_bytes);
          return m;
        };
        EXPECT_LT(least(r[1]), least(r[0]));
      }
    }
  }
}

TEST(JoinDeterminism, ThreadCountsGiveIdenticalFronts) {
  const arch::Arch a = preset("ethos-u65-256");
  const workloads::Workload w = testing::branch_rejoin();
  std::vector<FrontPoint> reference;
  for (int threads : {1, 2, 8}) {
    StageOptions o;
    o.threads = threads;
    const StageResult stage = run_per_layer(a, w, o);
    const JoinResult r = join(Joinable{make_join_problem(a, w, stage, true), {}});
    if (threads == 1) {
      reference = r.front;
      continue;
    }
    ASSERT_EQ(r.front.size(), reference.size());
    for (std::size_t i = 0; i < r.front.size(); ++i) {
      EXPECT_EQ(r.front[i].cycles, reference[i].cycles);
      EXPECT_EQ(r.front[i].group, reference[i].group);
      EXPECT_EQ(r.front[i].row, reference[i].row);
    }
  }
}

TEST(JoinRollingBuffer, HeightFollowsBothBlockHeights) {
  // docs/design/npu-model.md §9: height = round_up(consumer IFM block rows + producer rows, producer rows),
  // at most the tensor height; channels rounded up to 16; bytes rounded up to 16.
  JoinTensor t;
  t.height = 56;
  t.width = 56;
  t.channels = 24;
  t.element_bytes = 1;
  // producer 4 rows, consumer 10 rows: round_up(14, 4) = 16 rows x 56 x 32 = 28672 bytes
  EXPECT_EQ(rolling_buffer_bytes(t, 4, 10), 16 * 56 * 32);
  // producer 32 rows, consumer 40 rows: round_up(72, 32) = 96 -> capped at 56 rows
  EXPECT_EQ(rolling_buffer_bytes(t, 32, 40), 56 * 56 * 32);
}

}  // namespace
}  // namespace npumap::search
