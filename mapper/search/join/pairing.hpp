#pragma once
// Pairing of compatible groups (docs/design/search.md "Join", steps 1-6): phase 1 of a step. Each left
// key is paired with every group of the layer that agrees with it on the tensors the layer reads that
// are already live (and on its output when an earlier writer made it live: a concatenation), which
// gives the new key (the left key, plus the network inputs the layer introduces, plus its output,
// less what it finishes) and what the pair reserves while the layer runs.
//
// Which inputs are live depends only on the step, so every left key is matched on the same positions:
// the layer's groups are bucketed once by their (residence, layout) there, and each left key looks up
// its bucket. A group that reads one tensor twice with two compatibilities, or reads a tensor not yet
// live (a network input read for the first time) through a rolling buffer, is never paired. An
// elementwise output written in place over input i is paired only when i comes from an earlier layer,
// dies here and is not a network output (the shared storage then counts once), and never when the
// output is already live (a tensor several layers write is never written in place).

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <utility>
#include <vector>

#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// A matching (left group, layer group) pair of a step and what the pair reserves.
struct PairTask {
  std::uint32_t left = 0;      ///< index of the left key (of the pass's left groups, or a combined table)
  std::uint32_t right = 0;     ///< index of the layer group
  double full_bytes = 0.0;     ///< whole tensors resident in SRAM while the layer runs
  double rolling_bytes = 0.0;  ///< the rolling buffer this layer closes, if any
  double held_bytes = 0.0;     ///< finished tensors that stay reserved until the cascade closes
  bool input_rolling = false;
  bool output_rolling = false;
  /// The pass's SRAM grid (JoinOptions::sram_grid_ratio) when SRAM is an objective; null: exact.
  const SramGrid* sram_grid = nullptr;
};

/// SRAM in use `usage` as the peak column keeps it: on the grid, or as it is without one.
inline double on_sram_grid(double usage, const SramGrid* grid) { return grid != nullptr ? (*grid)(usage) : usage; }

/// The merge of left row `lr` with a layer row's values through pair `task` (docs/design/search.md
/// "Join", step 7): the sums, the peak max(left peak, usage) and, while the output is rolling, the
/// cascade SRAM the next step inherits. `cascade_in` is the cascade this layer sees (the left row's
/// cascade plus the buffer it reads, 0 when it reads none), `usage` the SRAM in use while it runs (the
/// peak takes it on the task's SRAM grid; the capacity check is the caller's, on the true usage).
inline JoinRow merged_row(const PairTask& task, const JoinRow& lr, double cascade_in, double usage, double cycles, double offchip,
                          double energy, double own_sram) {
  JoinRow row;
  row.cycles = lr.cycles + cycles;
  row.offchip = lr.offchip + offchip;
  row.energy = lr.energy + energy;
  row.peak = std::max(lr.peak, on_sram_grid(usage, task.sram_grid));
  row.cascade = task.output_rolling ? cascade_in + own_sram + task.held_bytes : 0.0;
  std::copy(std::begin(lr.err), std::end(lr.err), std::begin(row.err));  // the ε-front's errors carry over
  if (lr.err[3] != 0.0f) row.set_err(Column::Sram, row.peak - std::max(lr.peak - lr.err[3], on_sram_grid(usage, task.sram_grid)));
  return row;
}

/// The cascade SRAM a left row brings into the layer through `task`.
inline double cascade_in_of(const PairTask& task, const JoinRow& lr) {
  return task.input_rolling ? lr.cascade + task.rolling_bytes : 0.0;
}

/// A step's pairs grouped by the new key they produce, in sorted key order (pairs of one key in
/// left-key order, then layer-group order).
using StepPairs = std::vector<std::pair<LiveKey, std::vector<PairTask>>>;

/// Phase 1 of step `st`: the pairs of the left keys `left_keys` (a PairTask's `left` indexes it) with
/// the layer's groups. `introduced` marks the network inputs read before step st. Adds the number of
/// matched (left key, layer group) pairs to `matched`.
StepPairs match_pairs(const PassContext& ctx, int st, const std::vector<const LiveKey*>& left_keys,
                      const std::vector<char>& introduced, std::uint64_t& matched);

/// Marks the network inputs that step `st` reads as introduced (live from their first consumer on).
void mark_introduced(const PassContext& ctx, int st, std::vector<char>& introduced);

}  // namespace npumap::search::join_internal
