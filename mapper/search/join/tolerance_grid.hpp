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
// The guaranteed ε-front (issue 36, epsilon_front.hpp) uses StepSlack below instead: each row carries
// how far it may lie above the rows it stands in for, bounded relative to a lower bound of the final
// value.

#include <algorithm>
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

/// The ε-front's budget at one step (JoinOptions::step_slack = ε1; docs/design/search.md "ε-front"):
/// while a key's rows are pruned (prune.hpp), a kept row y may stand in for a dropped row x when, in
/// every summed column c, with m the least value any row either stands in for may have
/// (min(low_y, low_x), JoinRow::low), y_c - m <= ε1 m; and in the SRAM columns y is at most x (the
/// peak: within 1 + ε1 of max(m_peak, the key's SRAM floor)). y's err becomes y_c - m. Whatever a row
/// stands in for, z, then has y_c <= (1 + ε1) z_c, and a common completion adding a_c >= 0 keeps
/// y_c + a_c <= (1 + ε1)(z_c + a_c): the error of a row is relative to its own prefix, so it does not
/// compound over the steps, and each step's additions bring budget of their own (ε1 a_c) to the steps
/// after it. Budget is spent only where rows are really merged.
class StepSlack {
 public:
  StepSlack() = default;
  StepSlack(double eps1, const std::array<double, 5>& least_rest) : eps_(eps1 > 0.0 ? eps1 : 0.0), rest_(least_rest) {}
  bool exact() const { return eps_ == 0.0; }
  /// The least any completion adds to summed column c (it orders the pruning's greedy pass).
  double rest(Column c) const { return rest_[static_cast<std::size_t>(c)]; }
  /// A row with value `v` in a summed column may stand in for rows whose values are at least `low`.
  bool within(double v, double low) const { return v - low <= eps_ * low; }
  /// A row with prefix peak `peak` may stand in for rows whose peaks are at least `low` when every
  /// completion's peak is at least `floor` (and its cascade SRAM is at most theirs).
  bool within_peak(double peak, double low, double floor) const { return peak <= (1.0 + eps_) * std::max(low, floor); }

 private:
  double eps_ = 0.0;
  std::array<double, 5> rest_{};
};

}  // namespace npumap::search::join_internal
