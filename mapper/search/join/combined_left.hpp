#pragma once
// Combined left tables (JoinSpeedups::combine_left; docs/design/search.md "Join", "Combined left
// tables").
//
// Drops: rows of left groups before they are paired. The left groups that meet one layer group in the
// same new key differ only in entries that die at this layer (the tensors it reads for the last time:
// a rolling buffer's producer rows, an input's residence or layout); their merges with that layer group
// depend on a left row only through its sums, its peak and the cascade SRAM it brings into the layer
// (`cascade_in`: its cascade plus its own pair's rolling buffer), and the pair's whole tensors and held
// bytes are the same for all of them (asserted). So the rows of all those groups, each with its
// cascade_in in the cascade column, are put in one table in left-group order and Pareto-filtered on
// the objectives (plus that column when the layer reads a rolling buffer; the SRAM tie-break as in the
// pruning), and the layer group is paired once with the table instead of once with each group.
//
// Safe: a row of the table dominated there has every merge dominated (or equal with no more SRAM) by
// the merge of its dominator with the same layer row: sums and maxima are monotone, and both merges go
// to the same key. So the front is unchanged. What changes is the choice among mappings with exactly
// equal values (merged rows come in layer-group order, then table order) and the join's counters:
// fewer rows are paired.

#include <vector>

#include "mapper/search/join/pairing.hpp"
#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// Rewrites the pairs of `tasks` whose layer group meets several left groups in one key into one pair
/// with a combined table, and returns those tables: a pair's source is then left[i] (i < left.size())
/// or table i - left.size(). Tables are shared by every layer group that meets the same groups with
/// the same buffers, and built in parallel.
std::vector<LeftGroup> combine_left_tables(const PassContext& ctx, const std::vector<LeftGroup>& left, StepPairs& tasks);

}  // namespace npumap::search::join_internal
