#pragma once
// Quick passes: where the incumbent bound's incumbents come from (incumbent_bound.hpp; docs/design/
// search.md "Join", "Incumbent bound"). A quick pass is the same join that keeps at most a few rows per
// key (64 with two objectives; 32, then 256, with three or four), at most kQuickStepRows rows per step
// (a step of many keys keeps fewer per key, down to kQuickMinRows) and at most kQuickMaxKeys keys per
// step (those holding the best rows, taken in turn by each summed objective's least value). Its front
// is a set of real complete mappings; each quick pass is bounded by the fronts of those before it, and
// the union of their fronts bounds the exact pass. Thinning drops rows, so a quick pass is not exact;
// it only chooses incumbents. A quick pass that never had to thin a key is itself the exact join (the
// bound of the passes before is exact) and is returned as the join's result (strategy.cpp).

#include <cstddef>
#include <vector>

#include "mapper/search/join/incumbent_bound.hpp"
#include "mapper/search/join/key_columns.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

struct KeyWork;

/// The default rows per key of the quick passes. With two objectives one pass of 64 comes close enough
/// to the front; with three or four, 32 then 256.
const std::vector<std::size_t>& default_quick_beams(std::size_t num_objectives);

/// The rows per key a quick pass of width `beam` keeps at a step of `num_keys` keys.
std::size_t step_beam(std::size_t beam, std::size_t num_keys);

/// Keeps at most about `beam` rows: evenly spaced in lexicographic order of the key's pruning columns,
/// plus each column's best row, in their original order.
void thin_to_beam(std::vector<PendingRow>& rows, const KeyColumns& key, std::size_t beam);

/// Keeps at most `max_keys` of the acceptable keys with rows (0: the default): those holding the best
/// rows, taken in turn by each summed objective's least value (ties: key order); the others lose their
/// rows and are marked thinned.
void keep_best_keys(std::vector<KeyWork>& work, std::size_t max_keys, const std::vector<Column>& summed_columns);

/// Adds a quick pass's front to the incumbents: their union's Pareto front, sorted by the objectives.
void add_incumbents(Incumbents& inc, const JoinResult& quick, const std::vector<Objective>& objectives);

}  // namespace npumap::search::join_internal
