// The sizing answer (sizing.hpp).

#include "mapper/report/sizing.hpp"

#include <tuple>

namespace npumap::report {

std::optional<SizingAnswer> sizing_answer(const std::vector<search::FrontPoint>& front) {
  if (front.empty()) return std::nullopt;
  SizingAnswer a;
  for (std::size_t i = 1; i < front.size(); ++i) {
    const search::FrontPoint& p = front[i];
    const search::FrontPoint& b = front[a.best_at_capacity];
    if (std::tie(p.cycles, p.peak_sram_bytes, p.offchip_bytes) < std::tie(b.cycles, b.peak_sram_bytes, b.offchip_bytes))
      a.best_at_capacity = i;
  }
  const double best = front[a.best_at_capacity].cycles;
  for (double slack : kSizingSlacks) {
    std::size_t chosen = a.best_at_capacity;
    for (std::size_t i = 0; i < front.size(); ++i) {
      const search::FrontPoint& p = front[i];
      const search::FrontPoint& c = front[chosen];
      if (p.cycles > (1.0 + slack) * best) continue;
      if (std::tie(p.peak_sram_bytes, p.cycles, p.offchip_bytes) < std::tie(c.peak_sram_bytes, c.cycles, c.offchip_bytes)) chosen = i;
    }
    a.least_sram_within.push_back(chosen);
  }
  return a;
}

}  // namespace npumap::report
