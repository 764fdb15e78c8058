#pragma once
// The ε-front (JoinOptions::epsilon > 0; docs/design/search.md "ε-front"). NOT exact, by design, with a
// stated guarantee: for every point x of the exact Pareto front the result holds a point y with
// f_i(y) <= (1 + ε) f_i(x) in every objective i; each objective's least value, ties broken
// lexicographically on the other objectives in their order, is exact and on the front; every reported
// value is a real mapping's true value.
//
// How (ε split as (1 + ε1)(1 + ε2) = 1 + ε, ε1 = ε2):
//  1. The extremes, exactly: per summed objective o, join_best with o first (its first point is the
//     lexicographic least); for peak SRAM, the join on SRAM alone gives the least peak P*, then
//     join_best of the other objectives with the capacity set to P* (every feasible mapping then has
//     peak P*).
//  2. The join with an error budget ε1 (JoinOptions::step_slack; StepSlack in tolerance_grid.hpp,
//     prune.cpp): each row carries, per summed objective and for peak SRAM, how far it may lie above
//     the rows it stands in for (JoinRow::err, so low = value - err bounds them from below). A key's
//     pruning keeps the exact front of the values; of the rows it drops, those with error stay unless
//     a front row is at most them in every value and low; then, better rows first, it drops each row
//     for a kept row y that may stand in for it: y_c - m <= ε1 m for each sum c (m the lesser low),
//     y's prefix peak <= (1 + ε1) max(m, the key's SRAM floor) and y's open cascade no larger; y's lows
//     fall to m. The budget is relative to a lower bound of the prefix's own value, so it does not
//     compound over the steps and each step's additions bring budget of their own. The dominance filter
//     drops only rows without error (a snapshot row dominating one stands in for it through whatever
//     row covers the snapshot row); the other rules stay on, and the quick passes' mappings (which the
//     incumbent bound drops rows for) are returned with the front. So for x on the true front some
//     returned y is within 1 + ε1 of x in every objective (the proof: docs/design/search.md "ε-front").
//  3. True values: each point's sums are added again from the true rows in step order (the exact
//     join's own order, so the values are bit-identical to the exact join's) and its peak is
//     point_memory's maximum.
//  4. The union of 1 and 3, Pareto-filtered on the true values, is thinned greedily: the extremes
//     first, then in objective order every point no kept point covers within 1 + ε2.

#include "mapper/search/join/join.hpp"

namespace npumap::search::join_internal {

/// join() with options.epsilon > 0.
JoinResult epsilon_join(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& run);

/// The ratio 1 + ε1 of each half of ε: sqrt(1 + ε).
double epsilon_half_ratio(double epsilon);

/// `points` thinned: `keep_first` of them kept, then, in order, each point no kept point covers within
/// `ratio` in every objective (kept y covers x when y_i <= ratio * x_i for every i).
std::vector<FrontPoint> thin_front(const std::vector<FrontPoint>& points, std::size_t keep_first, const std::vector<Objective>& objectives,
                                   double ratio);

}  // namespace npumap::search::join_internal
