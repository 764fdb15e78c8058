#pragma once
// Tolerance grid (JoinOptions::tolerance > 0). NOT exact: the one pruning rule of the join that may
// change the front, and only when asked for.
//
// Drops: while a key's rows are pruned, each column value v > 0 is replaced by the upper edge of its
// cell on a logarithmic grid of ratio 1 + tolerance, (1 + tolerance)^ceil(log(v) / log(1 + tolerance)),
// so rows whose values fall in the same cells compare as equal and only one of them is kept (FFM's
// optional tolerance). Rows keep their true values, and the final filter of the front compares the
// exact values, so every reported point is a real mapping with its real values; but a row dropped as
// "equal" within its cell may have had a completion on the exact front, and the loss compounds over
// the steps, so the front is approximate with no stated bound. Bounds the fronts of runs with three or
// four objectives. With it the speed-ups that compare values before the pruning (the dominance filter,
// the sibling bound, the incumbent bound) are off: they compare exact values and could drop a row the
// grid would have kept as the representative of its cell.
//
// A guaranteed ε-front (issue 36) would replace this rule: round every per-layer value once, before the
// join, to a multiple of δ_i (JoinProblem's groups rounded, the true values kept for the front), and run
// the exact join on the rounded values; the grid's call sites (prune.cpp) are then left exact.

#include <cmath>

namespace npumap::search::join_internal {

class ToleranceGrid {
 public:
  explicit ToleranceGrid(double tolerance) : log_step_(tolerance > 0.0 ? std::log1p(tolerance) : 0.0) {}
  /// No tolerance: values are compared as they are.
  bool exact() const { return log_step_ == 0.0; }
  /// The value compared while pruning.
  double operator()(double v) const {
    if (log_step_ == 0.0 || v <= 0.0) return v;
    return std::exp(std::ceil(std::log(v) / log_step_) * log_step_);
  }

 private:
  double log_step_;
};

}  // namespace npumap::search::join_internal
