#pragma once
// Sibling bound (JoinSpeedups::sibling_bound; docs/design/search.md "Join", "Sibling bound").
//
// Drops: the merge of a left row with layer row pr of a group (counted as `dominated_after_join`, never
// stored) when the merge of the same left row with pr's *sibling* q, the row of the same group that is
// at most pr in every summed objective (cycles, off-chip bytes, energy: those that are objectives) and
// below it in one, with the least own SRAM, fits the capacity and is at most the merge in the key's
// SRAM columns: with the layer's output rolling (an open cascade column), when q's own SRAM is no more
// than pr's; otherwise, when SRAM is an objective, when q's usage is at most the merge's bounded peak
// (max of the left row's peak, the merge's usage and the key's future SRAM floor); and when SRAM only
// breaks ties, always.
//
// Safe: the two merges have the same key; the sums keep the layer rows' order (rounding is monotone)
// and the strictness is checked on the sums themselves, so q's merge strictly dominates pr's in the
// pruning columns and the pruning would drop pr's merge: the front and every counter are unchanged
// (only the work is). Off with a tolerance, whose grid can make the two merges equal.

#include <cstdint>
#include <limits>
#include <vector>

#include "mapper/search/join/pairing.hpp"
#include "mapper/search/pmapping.hpp"

namespace npumap::search::join_internal {

constexpr std::uint32_t kNoSibling = std::numeric_limits<std::uint32_t>::max();

/// Per row of `rows`, its sibling (kNoSibling: none), comparing the summed objectives `summed`.
std::vector<std::uint32_t> find_siblings(const std::vector<PmappingRow>& rows, const std::vector<Column>& summed);

/// The merge of `lr` with q strictly dominates its merge with pr (whose usage is `usage`), given the
/// capacity, whether SRAM is an objective, the key's SRAM floor and the summed objectives; with `lows`
/// (the ε-front's join) only a sibling with no more own SRAM.
inline bool sibling_dominates(const PairTask& task, const JoinRow& lr, double cascade_in, double usage, const PmappingRow& pr,
                              const PmappingRow& q, double capacity, bool sram_objective, double sram_floor,
                              const std::vector<Column>& summed, bool lows = false) {
  if (q.sram_bytes > pr.sram_bytes) {
    // The ε-front's join (lows: rows carry a low of their peak, StepSlack) needs q's merge's low peak at
    // most pr's merge's, i.e. q's usage at most pr's.
    if (task.output_rolling || lows) return false;
    const double q_usage = task.full_bytes + cascade_in + q.sram_bytes;
    // With an SRAM grid (JoinOptions::sram_grid_ratio) both merges' peaks take their usage on the grid.
    if (q_usage > capacity ||
        (sram_objective && on_sram_grid(q_usage, task.sram_grid) > std::max({on_sram_grid(usage, task.sram_grid), lr.peak, sram_floor})))
      return false;
  }
  for (const Column c : summed) {
    if (lr.value(c) + q.value(c) < lr.value(c) + pr.value(c)) return true;
  }
  return false;
}

}  // namespace npumap::search::join_internal
