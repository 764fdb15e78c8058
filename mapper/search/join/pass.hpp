#pragma once
// One pass of the join over every step (docs/design/search.md "Join"): from one empty left group with
// one all-zero row, step after step (step.hpp), then the final front: the rows of every left group put
// in one table, Pareto-filtered on the objectives with their exact values (the SRAM tie-break when SRAM
// is not an objective), sorted by the objectives in their given order, each traced back to its choice
// of (group, row) per step.

#include <cstddef>

#include "mapper/search/join/cascade_clamp.hpp"
#include "mapper/search/join/incumbent_bound.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/join/key_bound.hpp"

namespace npumap::search::join_internal {

/// One pass. `beam` > 0: a quick pass keeping at most about that many rows per key (quick_passes.hpp);
/// 0: the exact pass. `incumbents`, when given, bound it (incumbent_bound.hpp). `thinned` is set when a
/// quick pass dropped rows by thinning. The passes of one join share `clamp_cache`.
JoinResult join_pass(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& run, std::size_t beam,
                     const Incumbents* incumbents, bool& thinned, const PassHistory& history, ClampCache& clamp_cache);

}  // namespace npumap::search::join_internal
