// Vela's hill-climb tensor allocator as mapper/search/vela_sram.hpp replays it: a first-fit placement
// worked by hand, a case where that placement leaves a gap the search must close, and on random
// ranges the properties every allocation has (16-byte addresses, no two ranges live at one time
// sharing a byte, never below the largest sum of live sizes). Its agreement with Vela's printed
// "SRAM used" is the slow test's (test/tflite/vela_schedule_slow_test.cpp). And the live ranges of a
// schedule: Vela's elementwise merge in its graph's operand order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "mapper/search/vela_sram.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

TEST(VelaHillClimb, FirstFitInVelasPriorityOrder) {
  // R0 [0,1] 32 B, R1 [0,3] 48 B, R2 [2,3] 16 B. Live sums: 80 at slots 0-1, 64 at 2-3, so the
  // urgency (largest live sum over a range's slots) is 80, 80, 64. Order: urgency first, then the
  // longer range: R1, R0, R2. R1 goes to 0 (ends at 48); R0 overlaps R1 in time, so 48; R2 overlaps
  // R1 (not R0, which ends at slot 1), so 48. The end, 80, is the largest live sum: no search.
  const std::vector<VelaLiveRange> ranges = {{0, 1, 32}, {0, 3, 48}, {2, 3, 16}};
  EXPECT_EQ(vela_hillclimb_addresses(ranges), (std::vector<std::int64_t>{48, 0, 48}));
  EXPECT_EQ(vela_hillclimb_size(ranges), 80);
}

TEST(VelaHillClimb, SearchClosesTheGapOfTheFirstFit) {
  // P [0,1] 32, Q [2,5] 16, R [0,3] 16, S [4,5] 32: the largest live sum is 48 (slots 0-1: P+R,
  // 4-5: Q+S) and 48 can be reached (P 0, R 32, Q 0, S 16). Every urgency is 48, so the order is by
  // length then start: R, Q, P, S. First fit: R 0, Q 16 (after R), P 16 (after R), S 32 (Q holds
  // 16..32) ending at 64. The search must improve on that 64; nothing can be below 48.
  const std::vector<VelaLiveRange> ranges = {{0, 1, 32}, {2, 5, 16}, {0, 3, 16}, {4, 5, 32}};
  EXPECT_EQ(vela_hillclimb_size(ranges), 48);
}

TEST(VelaHillClimb, RandomRangesAreValidAllocations) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<VelaLiveRange> ranges(1 + rng() % 24);
    for (VelaLiveRange& r : ranges) {
      r.start = static_cast<int>(rng() % 20);
      r.end = r.start + 1 + static_cast<int>(rng() % 8);
      r.size = 16 * static_cast<std::int64_t>(1 + rng() % 12);
    }
    const std::vector<std::int64_t> at = vela_hillclimb_addresses(ranges);
    ASSERT_EQ(at.size(), ranges.size());
    std::int64_t end = 0, live_max = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      EXPECT_EQ(at[i] % 16, 0);
      EXPECT_GE(at[i], 0);
      end = std::max(end, at[i] + ranges[i].size);
      for (std::size_t j = i + 1; j < ranges.size(); ++j) {
        const bool same_time = ranges[i].start <= ranges[j].end && ranges[j].start <= ranges[i].end;
        const bool same_bytes = at[i] < at[j] + ranges[j].size && at[j] < at[i] + ranges[i].size;
        EXPECT_FALSE(same_time && same_bytes) << "trial " << trial << ": ranges " << i << " and " << j;
      }
    }
    for (int t = 0; t < 30; ++t) {
      std::int64_t live = 0;
      for (const VelaLiveRange& r : ranges) live += r.start <= t && t <= r.end ? r.size : 0;
      live_max = std::max(live_max, live);
    }
    EXPECT_EQ(vela_hillclimb_size(ranges), end);
    EXPECT_GE(end, live_max);
  }
}

/// Three NPU passes on U55 (the arena is SRAM): x (16 B, network input) -> P0 -> a (1,024 B) -> P1
/// (elementwise with a constant c) -> b (1,024 B) -> P2 -> y (16 B, network output).
JoinProblem elementwise_chain() {
  JoinProblem p;
  const auto& fm = testing::feature_map;
  p.tensors = {fm(16, -1, 0), fm(1024, 0, 1), fm(16, -1, 1), fm(1024, 1, 2), fm(16, 2, -1)};
  p.tensors[2].constant = true;
  p.tensors[4].network_output = true;
  p.steps = {{{0}, 1, {}}, {{1, 2}, 3, {}}, {{3}, 4, {}}};
  for (JoinStep& s : p.steps) {
    PmappingGroup g;
    g.compat = std::vector<TensorCompat>(s.inputs.size() + 1, TensorCompat{});
    g.rows = {PmappingRow{}};
    s.groups = {g};
  }
  p.arena_is_sram = true;
  p.sram_capacity = 1 << 20;
  return p;
}

TEST(VelaSramRanges, ElementwiseMergeReadsTheGraphsOperandOrder) {
  // Slots (two apart per pass): x at the root's first slot 0 and the NPU call's 2, P0 at 4, P1 at 6,
  // P2 at 8, the call's end 10. Ranges [first use, last use + 1]: x [0,5], a [4,7], b [6,9], y from 8.
  // P1's output may take a's storage (same shape and type, a read by P1 only): with the constant
  // second in the graph (written so), Vela merges b into a's range, [4,9] of 1,024 B, and the largest
  // live sum is 1,040 (x with a at slot 4, b with y at 8). With the constant first in the graph
  // (operands_swapped: our input 1 is its first operand), Vela tests the first operand's memory for
  // both and merges nothing: a and b both live at slot 6, 2,048 B.
  const JoinProblem p = elementwise_chain();
  FrontPoint point;
  point.group = point.row = {0, 0, 0};
  std::vector<VelaSramStep> steps(3);
  for (VelaSramStep& s : steps) s.npu = true;
  steps[1].merge_input = {true, false};
  EXPECT_EQ(vela_sram_ranges(p, point, steps).size(), 3U);
  EXPECT_EQ(vela_sram_used(p, point, steps), 1040);
  steps[1].operands_swapped = true;
  EXPECT_EQ(vela_sram_ranges(p, point, steps).size(), 4U);
  EXPECT_EQ(vela_sram_used(p, point, steps), 2048);
}

TEST(VelaPassOrder, PackingFirstFirstThenEachNpuSubgraphPredecessorsFirst) {
  // basic_lstm's start in small. Tensors: t0 the network input; s0 (NPU, its average pool) t0 -> t1;
  // s1 (CPU, Shape .. zeros) t1 -> t2; s2 (NPU, MatMul_11) t2 -> t3; s3 (CPU, transpose) t1 -> t4;
  // s4, s5 (NPU, projections) t4 -> t5, t4 -> t6; s6 (NPU, add) (t5, t3) -> t7; s7 (NPU, add_2)
  // (t6, t7) -> t8, the network output.
  // Vela's packing walks back from t8, each pass's inputs the first first: s7; t6 -> s5 (t4 read
  // once of twice); t7 -> s6; t5 -> s4 (t4 now read twice) -> s3 (t1 once of twice); t3 -> s2 -> s1
  // (t1 twice) -> s0. Reversed: s0 s1 s2 s3 s4 s6 s5 s7. Cut at the CPU passes: [s0] s1 [s2] s3
  // [s4 s6 s5 s7]. The last NPU subgraph re-ordered: from s7 (the one pass without a successor in
  // it), its inputs in order: t6 -> s5 (its input comes from outside), then t7 -> s6, whose t5 ->
  // s4 first: s5 s4 s6 s7. (The old last-first walk gave s0 s3 s5 s4 s1 s2 s6 s7.)
  JoinProblem p;
  p.tensors.resize(9);
  p.tensors[8].network_output = true;
  const std::vector<std::pair<std::vector<int>, int>> io = {{{0}, 1}, {{1}, 2}, {{2}, 3}, {{1}, 4},
                                                            {{4}, 5}, {{4}, 6}, {{5, 3}, 7}, {{6, 7}, 8}};
  for (std::size_t s = 0; s < io.size(); ++s) {
    JoinStep step;
    step.inputs = io[s].first;
    step.output = io[s].second;
    p.steps.push_back(step);
    p.tensors[static_cast<std::size_t>(step.output)].producer_step = static_cast<int>(s);
  }
  std::vector<VelaSramStep> steps(8);
  for (VelaSramStep& s : steps) s.npu = true;
  steps[1].npu = steps[3].npu = false;
  const std::vector<int> cascade = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(vela_pass_order(p, steps, cascade), (std::vector<std::size_t>{0, 1, 2, 3, 5, 4, 6, 7}));
}

}  // namespace
}  // namespace npumap::search
