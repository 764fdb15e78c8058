// Sibling bound (sibling_bound.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/sibling_bound.hpp"

namespace npumap::search::join_internal {

std::vector<std::uint32_t> find_siblings(const std::vector<PmappingRow>& rows, const std::vector<Column>& summed) {
  std::vector<std::uint32_t> sibling(rows.size(), kNoSibling);
  for (std::size_t j = 0; j < rows.size(); ++j) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      bool at_most = true;
      bool below = false;
      for (const Column c : summed) {
        at_most = at_most && rows[i].value(c) <= rows[j].value(c);
        below = below || rows[i].value(c) < rows[j].value(c);
      }
      std::uint32_t& best = sibling[j];
      if (at_most && below && (best == kNoSibling || rows[i].sram_bytes < rows[best].sram_bytes)) best = static_cast<std::uint32_t>(i);
    }
  }
  return sibling;
}

}  // namespace npumap::search::join_internal
