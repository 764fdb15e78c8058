#pragma once
// front.svg (report.hpp's render_svg), the sizing view: panel 1 plots latency against peak SRAM with
// the sizing staircase, off-chip bytes as colour and the arch's SRAM capacity; panel 2 plots latency
// against off-chip bytes; both mark the chosen point, the best mapping without fusion and Vela 2.1's
// schedule. This header exposes the staircase, the one computation the plot adds to the front.

#include <cstddef>
#include <vector>

namespace npumap::report {

/// One mapping as the plot sees it.
struct PlotPoint {
  double cycles = 0.0;
  double offchip_bytes = 0.0;
  double sram_bytes = 0.0;  ///< peak SRAM
};

/// One step of the sizing staircase: from `sram_bytes` of SRAM on, `cycles` is the best latency.
struct StairStep {
  double sram_bytes = 0.0;
  double cycles = 0.0;
  std::size_t point = 0;  ///< the index of the point that gives it
};

/// The sizing staircase of `points`, the lower-left envelope of (peak SRAM, cycles): for every SRAM
/// size s, the least cycles of a point needing at most s. Steps in increasing SRAM and strictly
/// decreasing cycles; at equal SRAM the point of fewer cycles gives the step (then fewer off-chip
/// bytes, then the earlier point). Empty for no points.
std::vector<StairStep> sizing_staircase(const std::vector<PlotPoint>& points);

}  // namespace npumap::report
