#pragma once
// Least-value skips (JoinSpeedups::least_value_skips; docs/design/search.md "Join", "Dominance
// filter"): the dominance filter and the incumbent bound applied to whole batches of merges at once.
//
// Drops: before a left row is merged with the rows of a layer group, its merge with that group's least
// values (least cycles, off-chip bytes, energy and own SRAM, each alone) is formed; when the dominance
// filter (dominance_snapshot.hpp) drops that *least merge*, or the incumbent bound
// (incumbent_bound.hpp) finds every completion of it dominated, all the row's merges with the group
// are dropped. The same test runs first for each unit of work (a run of a source's rows with one
// layer group) from the source's least values in each column, and then for each block of kLeastBlock
// consecutive left rows from the block's least values (consecutive rows are often merges of one
// earlier row, so they lie close).
//
// Safe: every column of a merge grows with each of its inputs (sums and maxima), so every real merge of
// the batch is at least the least merge in every column. A snapshot row that strictly dominates the
// least merge strictly dominates each of them; a lower bound of every completion of a real merge is at
// least that of the least merge (the bound is monotone), so the incumbents dominate it too. Those rows
// would be dropped by the filter or by the bound after the pruning, so the front is unchanged; and the
// dropped merges are counted exactly as merging them one by one would count them (those over the SRAM
// capacity from the group's sorted own SRAM, the rest as dominated), so every counter is unchanged.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "mapper/search/join/pairing.hpp"
#include "mapper/search/join/state.hpp"
#include "mapper/search/pmapping.hpp"

namespace npumap::search::join_internal {

/// Consecutive left rows whose least values are checked together before their merges.
constexpr std::uint32_t kLeastBlock = 16;

/// A layer group's least values, column by column, and its rows' own SRAM sorted.
struct LayerGroupLeast {
  double cycles = 0.0;
  double offchip = 0.0;
  double energy = 0.0;
  double sram_bytes = 0.0;
  std::vector<double> sorted_sram;
};
LayerGroupLeast least_of_group(const PmappingGroup& g);

/// A source's (left group's or combined table's) least values: of all its rows, and of each block of
/// kLeastBlock consecutive rows.
struct SourceLeast {
  JoinRow all;
  std::vector<JoinRow> blocks;
};
void least_of_source(const std::vector<JoinRow>& rows, SourceLeast& out);

/// The merge of `lr` with the least values of layer group `g` through `task` (at most every real merge).
inline JoinRow least_merge(const PairTask& task, const JoinRow& lr, double cascade_in, const LayerGroupLeast& g) {
  return merged_row(task, lr, cascade_in, task.full_bytes + cascade_in + g.sram_bytes, g.cycles, g.offchip, g.energy, g.sram_bytes);
}

/// The counts of dropping every merge of `left_rows` left rows (each bringing `cascade_in`) with a
/// group of `rows` rows, as merging them one by one would count them: those over the SRAM capacity,
/// then the rest dominated.
struct DropCounts {
  std::uint64_t paired = 0;
  std::uint64_t over_capacity = 0;
  std::uint64_t dominated = 0;
};
inline void count_dropped(const PairTask& task, const LayerGroupLeast& g, std::size_t rows, double cascade_in, double capacity,
                          std::size_t left_rows, DropCounts& counts) {
  const std::size_t fit = static_cast<std::size_t>(
      std::partition_point(g.sorted_sram.begin(), g.sorted_sram.end(),
                           [&](double own) { return !(task.full_bytes + cascade_in + own > capacity); }) -
      g.sorted_sram.begin());
  counts.paired += left_rows * rows;
  counts.over_capacity += left_rows * (rows - fit);
  counts.dominated += left_rows * fit;
}

}  // namespace npumap::search::join_internal
