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
// The guaranteed ε-front (issue 36, epsilon_front.hpp) uses StepSlack below instead: cells relative
// to a lower bound of the final value, fixed per step, with a budget split over the steps.

#include <array>
#include <cmath>

#include "mapper/search/objectives.hpp"

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

/// The ε-front's slack of one step (JoinOptions::step_slack; docs/design/search.md "ε-front"): while
/// a key's rows are pruned, a summed column's value v is compared as its cell on a log grid of ratio
/// 1 + η, ceil(log(v + F) / log(1 + η)), where F is the least any completion of the step adds to that
/// column. Rows in one cell compare as equal; since the cells are fixed for the step, whatever the
/// pruning keeps in place of a row r is at most r's cell in every column, so for every completion c,
/// kept + c <= (1 + η)(r + c). The peak and cascade columns compare exactly.
class StepSlack {
 public:
  StepSlack() = default;
  StepSlack(double eta, const std::array<double, 5>& least_rest) : log_step_(eta > 0.0 ? std::log1p(eta) : 0.0), rest_(least_rest) {}
  bool exact() const { return log_step_ == 0.0; }
  double operator()(Column c, double v) const {
    if (log_step_ == 0.0 || c == Column::Sram || c == Column::CascadeSram) return v;
    const double x = v + rest_[static_cast<std::size_t>(c)];
    return x > 0.0 ? std::ceil(std::log(x) / log_step_) : -1e300;  // 0: below every cell
  }

 private:
  double log_step_ = 0.0;
  std::array<double, 5> rest_{};
};

}  // namespace npumap::search::join_internal
