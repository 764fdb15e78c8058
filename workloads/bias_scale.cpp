#include "workloads/bias_scale.hpp"

#include <algorithm>

namespace npumap::workloads {

BiasScaleSize packed_bias_scale_size(int ofm_depth, int cores, int depth_step) {
  const int step = depth_step == 0 ? ofm_depth : depth_step;
  const auto round_up16 = [](std::int64_t v) { return (v + 15) / 16 * 16; };
  // 10 bytes per channel (40-bit bias, 32-bit scale, 6-bit shift); each (step, core) sub-stream padded to 16.
  BiasScaleSize s;
  for (int first = 0; first < ofm_depth; first += step) {
    const int channels = std::min(step, ofm_depth - first);
    for (int core = 0; core < std::min(cores, ofm_depth); ++core) {
      const int n = channels > core ? (channels - core + cores - 1) / cores : 0;
      s.packed_bytes += round_up16(static_cast<std::int64_t>(n) * 10);
    }
  }
  const std::int64_t padding = s.packed_bytes - static_cast<std::int64_t>(ofm_depth) * 10;
  s.elements = ofm_depth + (padding + 9) / 10;
  s.storage_bytes = round_up16(s.elements * 10);
  return s;
}

}  // namespace npumap::workloads
