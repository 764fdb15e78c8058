#pragma once
// Pareto pruning of the join's tables (docs/design/search.md "Join", step 8, and "SRAM tie-break"): a
// key's merged rows on the key's pruning columns (key_columns.hpp, through the tolerance grid), and the
// exact fronts of combined tables and of the final rows. Among rows equal in every pruning column, when
// peak SRAM is not an objective, the one with the least (bounded) peak survives (for a clamped key: the
// least raw cascade first, cascade_clamp.hpp), then the lowest index.

#include <cstdint>
#include <vector>

#include "mapper/search/join/key_columns.hpp"
#include "mapper/search/join/state.hpp"
#include "mapper/search/join/tolerance_grid.hpp"
#include "mapper/search/pareto.hpp"

namespace npumap::search::join_internal {

/// Scratch memory of a pruning (and of a dominance filter's snapshot), one per thread: keys are many
/// and often small (the unrolled LSTMs: about 100k keys per pass), and allocating it per key cost more
/// than using it. Nothing in it outlives one pruning, so which thread's scratch serves a key cannot
/// change a result.
struct PruneScratch {
  ParetoWorkspace ws;
  std::vector<std::uint32_t> keep;
  std::vector<double> tab;
  std::vector<double> tie;
  std::vector<double> scratch_a;  ///< the cascade clamp's tie-break ranks
  std::vector<double> scratch_b;
};
PruneScratch& prune_scratch();

/// Keeps the Pareto front of `rows` under `key` (values through `grid`), in order; with the ε-front's
/// `slack` (not exact), an ε-cover of them instead, each kept row's err raised to what it stands in for
/// (tolerance_grid.hpp, StepSlack). Returns how many rows it dropped.
std::size_t prune_rows(std::vector<PendingRow>& rows, const KeyColumns& key, const ToleranceGrid& grid, const StepSlack& slack,
                       bool sram_tiebreak);

/// The indices of the Pareto front of `rows` on `cols`, with their exact values; with `tiebreak`, rows
/// equal in every column keep the least peak SRAM. With `low_columns` (the ε-front's join, StepSlack)
/// each summed column's low (JoinRow::low) is compared too, so a row is dropped only for one that
/// stands in for all it stood in for. `table` is scratch.
void exact_front(const std::vector<JoinRow>& rows, const std::vector<Column>& cols, bool tiebreak, ParetoWorkspace& ws,
                 std::vector<double>& table, std::vector<std::uint32_t>& keep, bool low_columns = false);

}  // namespace npumap::search::join_internal
