#pragma once
// What every part of one pass of the join reads: the problem, the options, the objectives as the join
// uses them, the SRAM capacity, the tolerance grid and the oneTBB arena the pass runs in.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include <tbb/task_arena.h>

#include "mapper/search/join/join.hpp"
#include "mapper/search/join/tolerance_grid.hpp"
#include "mapper/search/objectives.hpp"

namespace npumap::search::join_internal {

/// The objectives as the join uses them.
struct ObjectiveLayout {
  std::vector<Objective> objectives;
  /// Peak SRAM is an objective. When it is not, it still breaks ties: among rows equal in every
  /// pruning column the one with the least (bounded) peak survives, so each front point reports the
  /// least SRAM that reaches exactly its values (docs/design/search.md "Join", "SRAM tie-break").
  bool sram_objective = false;
  std::vector<std::size_t> summed;    ///< indices of the objectives other than SRAM (summed over layers), in order
  std::vector<Column> summed_columns; ///< their columns
  std::vector<Column> columns;        ///< the pruning columns without an open cascade

  explicit ObjectiveLayout(const std::vector<Objective>& objs);
  bool sram_tiebreak() const { return !sram_objective; }
};

/// The ε-front's grid of peak SRAM (JoinOptions::sram_grid_ratio): levels base, base (1 + r),
/// base (1 + r)^2, ... below the capacity, then the capacity. A value is kept as the least level at
/// least it (values above the capacity as they are; 0 stays 0). Monotone, so it commutes with the maximum that
/// makes a peak: the grid's peak of a mapping is its true peak on the grid.
class SramGrid {
 public:
  SramGrid() = default;
  SramGrid(double base, double ratio, double capacity) {
    if (!(base > 0.0) || !(ratio > 0.0)) return;
    for (double v = base; v < capacity && levels_.size() < 100000; v *= 1.0 + ratio) levels_.push_back(v);
    levels_.push_back(capacity);
  }
  bool empty() const { return levels_.empty(); }
  double operator()(double v) const {
    if (v <= 0.0) return v;  // no SRAM stays none
    const auto it = std::lower_bound(levels_.begin(), levels_.end(), v);
    return it == levels_.end() ? v : *it;
  }

 private:
  std::vector<double> levels_;
};

/// The oneTBB arena of a pass: threads > 0, its own arena of that many workers; 0, the caller's.
class JoinArena {
 public:
  explicit JoinArena(int threads) {
    if (threads > 0) own_.emplace(threads);
  }
  template <typename Body>
  void run(const Body& body) {
    if (own_) {
      own_->execute(body);
    } else {
      body();
    }
  }

 private:
  std::optional<tbb::task_arena> own_;
};

/// One pass of the join: the exact pass (beam 0) or a quick pass of the incumbent bound (beam > 0:
/// at most about that many rows per key).
struct PassContext {
  PassContext(const JoinProblem& p, const JoinOptions& o, const JoinRunContext& r, std::size_t beam_rows);

  const JoinProblem& problem;
  const JoinOptions& options;
  const JoinSpeedups& speedups;
  const JoinRunContext& run;
  const std::size_t beam;
  const int num_steps;
  const double capacity;  ///< SRAM capacity in bytes
  const ObjectiveLayout obj;
  const ToleranceGrid grid;
  /// JoinOptions::sram_grid_ratio's grid when SRAM is an objective, else empty (PairTask::sram_grid).
  const SramGrid sram_grid;
  /// Rows merged into a key's table before its first pruning (JoinSpeedups::first_prune_rows).
  const std::size_t first_prune_rows;
  /// Rows a source needs for the dominance filter's pilot (JoinSpeedups::pilot_min_rows).
  const std::size_t pilot_min_rows;
  /// Per step, the slack of its pruning (JoinOptions::step_slack; exact without it).
  std::vector<StepSlack> slacks;
  /// Per tensor, the first step that reads it (num_steps: none).
  std::vector<int> first_consumer;
  mutable JoinArena arena;

  bool stop_requested() const { return run.stop.stop_requested(); }
  const JoinTensor& tensor(int t) const { return problem.tensors[static_cast<std::size_t>(t)]; }
  const JoinStep& step(int s) const { return problem.steps[static_cast<std::size_t>(s)]; }
  const StepSlack& slack(int s) const { return slacks[static_cast<std::size_t>(s)]; }
  double reserved(int t, const TensorCompat& c) const {
    return static_cast<double>(reserved_bytes(tensor(t), c, problem.arena_is_sram));
  }
};

}  // namespace npumap::search::join_internal
