// Least-value skips (least_value_skips.hpp): what they drop and why that is safe is said there.

#include "mapper/search/join/least_value_skips.hpp"

namespace npumap::search::join_internal {

LayerGroupLeast least_of_group(const PmappingGroup& g) {
  LayerGroupLeast sm;
  if (g.rows.empty()) return sm;
  sm.cycles = sm.offchip = sm.energy = sm.sram_bytes = std::numeric_limits<double>::infinity();
  for (const PmappingRow& r : g.rows) {
    sm.cycles = std::min(sm.cycles, r.cycles);
    sm.offchip = std::min(sm.offchip, r.offchip_bytes);
    sm.energy = std::min(sm.energy, r.energy_pj);
    sm.sram_bytes = std::min(sm.sram_bytes, r.sram_bytes);
    sm.sorted_sram.push_back(r.sram_bytes);
  }
  std::sort(sm.sorted_sram.begin(), sm.sorted_sram.end());
  return sm;
}

void least_of_source(const std::vector<JoinRow>& rows, SourceLeast& out) {
  const auto lower = [](JoinRow& m, const JoinRow& r) {
    m.cycles = std::min(m.cycles, r.cycles);
    m.offchip = std::min(m.offchip, r.offchip);
    m.energy = std::min(m.energy, r.energy);
    m.peak = std::min(m.peak, r.peak);
    m.cascade = std::min(m.cascade, r.cascade);
  };
  JoinRow& m = out.all;
  m.cycles = m.offchip = m.energy = m.peak = m.cascade = std::numeric_limits<double>::infinity();
  out.blocks.assign((rows.size() + kLeastBlock - 1) / kLeastBlock, m);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    lower(m, rows[i]);
    lower(out.blocks[i / kLeastBlock], rows[i]);
  }
}

}  // namespace npumap::search::join_internal
