// Vela's hill-climb tensor allocator as mapper/search/vela_sram.hpp replays it: a first-fit placement
// worked by hand, a case where that placement leaves a gap the search must close, and on random
// ranges the properties every allocation has (16-byte addresses, no two ranges live at one time
// sharing a byte, never below the largest sum of live sizes). Its agreement with Vela's printed
// "SRAM used" is the slow test's (test/tflite/vela_schedule_slow_test.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mapper/search/vela_sram.hpp"

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

}  // namespace
}  // namespace npumap::search
