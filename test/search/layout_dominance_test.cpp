// Layouts that never pay (layout_dominance.hpp, docs/design/search.md "Layouts that never pay"):
//  (a) by hand, on a 3-layer chain x -> f (s0) -> u (s1, which may write u over f) -> y (s2): f and u
//      change layout together (s1's in-place groups), so f's NHCWB16 goes only where linear is no
//      worse at s0, s1 and s2; with s2 faster reading u NHCWB16 nothing is dropped;
//  (b) without in-place groups f is its own: its NHCWB16 goes although u's stays;
//  (c) oracle: on random chains with in-place choices the exhaustive front (all four objectives)
//      is the same before and after, and some chains lose groups while others keep them all.

#include <gtest/gtest.h>

#include <random>

#include "mapper/search/layout_dominance.hpp"
#include "test/search/join_oracle.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

constexpr TensorCompat kLinear{Residence::Arena, Layout::Linear, 0, -1};
constexpr TensorCompat kBricks{Residence::Arena, Layout::Nhcwb16, 0, -1};

TensorCompat over(TensorCompat c, int input) {
  c.over_input = static_cast<std::int8_t>(input);
  return c;
}

PmappingRow row(double cycles, double sram = 0.0) {
  PmappingRow r;
  r.cycles = cycles;
  r.offchip_bytes = 10.0;
  r.energy_pj = 1.0;
  r.sram_bytes = sram;
  return r;
}

/// x -> s0 -> f -> s1 -> u -> s2 -> y. f and u: 40 bytes linear, 48 NHCWB16 (a [1,1,1,40] map).
/// s0 and s1 cost the same in either layout; s2 reads u NHCWB16 at `s2_bricks_cycles` (linear: 50).
/// With `in_place`, s1 may also write u over f (same layout as f).
JoinProblem chain(double s2_bricks_cycles, bool in_place) {
  JoinProblem p;
  p.sram_capacity = 1 << 20;
  p.tensors = {testing::feature_map(40, -1, 0), testing::feature_map(40, 0, 1), testing::feature_map(40, 1, 2),
               testing::feature_map(40, 2, -1)};
  for (JoinTensor& t : p.tensors) t.nhcwb16_bytes = 48;
  p.tensors[0].nhcwb16_bytes = p.tensors[3].nhcwb16_bytes = 40;
  p.tensors[3].network_output = true;
  p.steps.resize(3);
  p.steps[0] = JoinStep{{0}, 1, std::vector<PmappingGroup>{{{kLinear, kLinear}, {row(100)}}, {{kLinear, kBricks}, {row(100)}}}};
  std::vector<PmappingGroup> s1;
  for (const TensorCompat in : {kLinear, kBricks})
    for (const TensorCompat out : {kLinear, kBricks}) s1.push_back({{in, out}, {row(30, 8)}});
  if (in_place) {
    s1.push_back({{kLinear, over(kLinear, 0)}, {row(30)}});
    s1.push_back({{kBricks, over(kBricks, 0)}, {row(30)}});
  }
  p.steps[1] = JoinStep{{1}, 2, s1};
  p.steps[2] = JoinStep{{2}, 3, std::vector<PmappingGroup>{{{kLinear, kLinear}, {row(50)}}, {{kBricks, kLinear}, {row(s2_bricks_cycles)}}}};
  return p;
}

std::size_t groups_storing(const JoinProblem& p, std::size_t step, std::size_t slot, Layout layout) {
  std::size_t n = 0;
  for (const PmappingGroup& g : p.steps[step].groups.vector()) n += g.compat[slot].layout == layout ? 1 : 0;
  return n;
}

const std::vector<Objective> kFourObjectives = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram, Objective::Energy};

TEST(LayoutDominance, InPlaceTiesLayoutsTogether) {
  // s2 reads u NHCWB16 in 40 cycles against 50: u's NHCWB16 pays, and f's is u's (in place at s1):
  // nothing goes. The best mapping (by hand): 100 + 30 + 40 = 170 cycles, f and u NHCWB16, u over f.
  JoinProblem pays = chain(40, true);
  drop_dominated_layouts(pays);
  EXPECT_EQ(groups_storing(pays, 0, 1, Layout::Nhcwb16), 1u);
  EXPECT_EQ(pays.steps[1].groups.size(), 6u);
  EXPECT_EQ(groups_storing(pays, 2, 0, Layout::Nhcwb16), 1u);
  EXPECT_EQ(testing::exhaustive(pays, kFourObjectives).front, testing::exhaustive(chain(40, true), kFourObjectives).front);
  // At 50 (a tie) linear is never worse anywhere: every group storing f or u NHCWB16 goes.
  JoinProblem ties = chain(50, true);
  drop_dominated_layouts(ties);
  EXPECT_EQ(groups_storing(ties, 0, 1, Layout::Nhcwb16), 0u);
  EXPECT_EQ(ties.steps[1].groups.size(), 2u);  // linear to linear, and linear over linear
  EXPECT_EQ(groups_storing(ties, 2, 0, Layout::Nhcwb16), 0u);
  EXPECT_EQ(testing::exhaustive(ties, kFourObjectives).front, testing::exhaustive(chain(50, true), kFourObjectives).front);
}

TEST(LayoutDominance, EachTensorOnItsOwnWithoutInPlace) {
  // Without in-place groups f and u are separate: f's NHCWB16 never pays (s0 and s1 cost the same,
  // 48 bytes against 40) and goes; u's pays at s2 and stays.
  JoinProblem p = chain(40, false);
  drop_dominated_layouts(p);
  EXPECT_EQ(groups_storing(p, 0, 1, Layout::Nhcwb16), 0u);
  EXPECT_EQ(groups_storing(p, 1, 0, Layout::Nhcwb16), 0u);
  EXPECT_EQ(groups_storing(p, 1, 1, Layout::Nhcwb16), 1u);
  EXPECT_EQ(groups_storing(p, 2, 0, Layout::Nhcwb16), 1u);
  EXPECT_EQ(testing::exhaustive(p, kFourObjectives).front, testing::exhaustive(chain(40, false), kFourObjectives).front);
}

/// A random chain of `n` layers, each reading the previous map; each intermediate map may be linear or
/// NHCWB16 (a few bytes more), and a layer may write over its input. A layer's rows are the same two
/// mappings in every group: a base row plus, per map it stores NHCWB16, that map's delta (each value
/// moved by 0..+3, or by -1 one time in 16, so NHCWB16 sometimes pays); writing in place has a base
/// of its own.
JoinProblem random_chain(std::mt19937& rng, int n) {
  std::uniform_int_distribution<int> sixteenth(0, 15), base(5, 40), coin(0, 3);
  const auto delta = [&] {
    const int d = sixteenth(rng);
    return d == 0 ? -1.0 : static_cast<double>(d / 4);
  };
  JoinProblem p;
  p.sram_capacity = 1 << 20;
  for (int t = 0; t <= n; ++t) {
    JoinTensor jt = testing::feature_map(16 + 8 * coin(rng), t - 1, t < n ? t : -1);
    jt.nhcwb16_bytes = jt.linear_bytes + 8 * coin(rng);
    jt.network_output = t == n;
    p.tensors.push_back(jt);
  }
  const auto moved = [](PmappingRow r, const std::array<double, 4>& d) {
    r.cycles += d[0], r.offchip_bytes += d[1], r.energy_pj += d[2], r.sram_bytes = std::max(0.0, r.sram_bytes + d[3]);
    return r;
  };
  for (int s = 0; s < n; ++s) {
    const bool first = s == 0, last = s == n - 1;
    std::array<PmappingRow, 2> plain = {row(base(rng), base(rng)), row(base(rng), base(rng))};
    std::array<PmappingRow, 2> in_place = {row(base(rng), base(rng)), row(base(rng), base(rng))};
    std::array<std::array<double, 4>, 2> d_in{}, d_out{};
    for (auto* d : {&d_in, &d_out})
      for (auto& per_row : *d)
        for (double& v : per_row) v = delta();
    const auto rows_of = [&](const std::array<PmappingRow, 2>& from, bool in_bricks, bool out_bricks) {
      std::vector<PmappingRow> rows;
      for (std::size_t r = 0; r < 2; ++r) {
        PmappingRow x = from[r];
        if (in_bricks) x = moved(x, d_in[r]);
        if (out_bricks) x = moved(x, d_out[r]);
        rows.push_back(x);
      }
      return rows;
    };
    std::vector<PmappingGroup> groups;
    const bool may_write_over = !first && !last && coin(rng) != 0;
    for (const TensorCompat in : first ? std::vector<TensorCompat>{kLinear} : std::vector<TensorCompat>{kLinear, kBricks}) {
      for (const TensorCompat out : last ? std::vector<TensorCompat>{kLinear} : std::vector<TensorCompat>{kLinear, kBricks}) {
        const bool in_bricks = in.layout == Layout::Nhcwb16, out_bricks = out.layout == Layout::Nhcwb16;
        groups.push_back({{in, out}, rows_of(plain, in_bricks, out_bricks)});
        if (may_write_over && in == out) groups.push_back({{in, over(out, 0)}, rows_of(in_place, in_bricks, out_bricks)});
      }
    }
    p.steps.push_back(JoinStep{{s}, s + 1, groups});
  }
  return p;
}

TEST(LayoutDominance, TheExhaustiveFrontIsUnchanged) {
  std::mt19937 rng(7);
  int dropped = 0, kept = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const JoinProblem before = random_chain(rng, 4);
    JoinProblem after = before;
    drop_dominated_layouts(after);
    std::size_t groups_before = 0, groups_after = 0;
    for (std::size_t s = 0; s < before.steps.size(); ++s) {
      groups_before += before.steps[s].groups.size();
      groups_after += after.steps[s].groups.size();
    }
    (groups_after < groups_before ? dropped : kept) += 1;
    EXPECT_EQ(testing::exhaustive(after, kFourObjectives).front, testing::exhaustive(before, kFourObjectives).front) << "trial " << trial;
  }
  // Both outcomes occur, so the comparison above tests the drop.
  EXPECT_GT(dropped, 40);
  EXPECT_GT(kept, 100);
}

}  // namespace
}  // namespace npumap::search
