#pragma once
// The merge kernel (docs/design/search.md "Join", steps 7-8): merges the rows of one new key's pairs,
// row by row in pair order, into one table pruned to the Pareto front whenever it has doubled, so
// memory stays near the size of the front. The hot loop of the join: it allocates nothing per row,
// and the rules it applies per row are inline (least_value_skips.hpp, sibling_bound.hpp,
// dominance_snapshot.hpp, incumbent_bound.hpp).
//
// The pairs' rows are cut into units of about kUnitRows merged rows (a pair with many left rows into
// several units), merged in parallel and combined in unit order by a deterministic reduction: pruning is
// "concatenate in canonical order, filter again" (pareto.hpp), so the result does not depend on how the
// units were grouped.

#include <cstdint>
#include <vector>

#include "mapper/search/dominance_filter.hpp"
#include "mapper/search/join/key_columns.hpp"
#include "mapper/search/join/step.hpp"

namespace npumap::search::join_internal {

/// Merges key `kw` of the step (its rows, counters and look-ahead verdict).
void merge_key(const PassContext& ctx, const PassRules& rules, const StepData& step, std::size_t num_keys, KeyWork& kw);

}  // namespace npumap::search::join_internal
