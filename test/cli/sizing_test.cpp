// The sizing answer (mapper/report/sizing.hpp) on fronts worked by hand.

#include <gtest/gtest.h>

#include <vector>

#include "mapper/report/sizing.hpp"

namespace npumap::report {
namespace {

search::FrontPoint point(double cycles, double offchip, double sram) {
  search::FrontPoint p;
  p.cycles = cycles;
  p.offchip_bytes = offchip;
  p.peak_sram_bytes = sram;
  return p;
}

TEST(Sizing, LeastSramWithinEachLatencySlackByHand) {
  // A front of a 3-layer network's kind, by hand: best latency 1000 cycles.
  //   within 1%  (<= 1010): points 0 (1000, 9000 B) and 1 (1010, 8000 B)   -> point 1
  //   within 5%  (<= 1050): also point 2 (1049, 5000 B)                     -> point 2
  //   within 10% (<= 1100): also point 3 (1100, 4000 B); point 4 (1101) not -> point 3
  //   best latency at the capacity: the least cycles, point 0
  const std::vector<search::FrontPoint> front{point(1000, 500, 9000), point(1010, 400, 8000), point(1049, 300, 5000),
                                              point(1100, 200, 4000), point(1101, 100, 1000)};
  const auto a = sizing_answer(front);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->least_sram_within, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(a->best_at_capacity, 0u);
}

TEST(Sizing, TiesGoToFewerCyclesThenFewerOffchipBytes) {
  // Equal least SRAM within 5%: the fewer cycles wins (point 2); equal cycles and SRAM: fewer off-chip
  // bytes (point 3 over point 2 would need fewer cycles, so the order is 2, then 3 only on off-chip).
  const std::vector<search::FrontPoint> front{point(2000, 50, 700), point(2050, 60, 500), point(2030, 80, 500), point(2030, 70, 500)};
  const auto a = sizing_answer(front);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->least_sram_within[0], 0u);  // <= 2020: only point 0
  EXPECT_EQ(a->least_sram_within[1], 3u);  // <= 2100: SRAM 500 at 2030 cycles, 70 B off-chip beats 80 B
  EXPECT_EQ(a->best_at_capacity, 0u);
  EXPECT_FALSE(sizing_answer({}).has_value());
}

}  // namespace
}  // namespace npumap::report
