#pragma once
// The incumbent bound's geometry with two summed objectives (incumbent_bound.hpp says what the bound
// drops and why that is safe; docs/design/search.md "Incumbent bound").
//
// Rest sets: what the layers after a step add to a completion, as a set of at most kRestPoints points
// of the plane of the two summed objectives such that every completion adds at least one of them (a
// lower-bound set). The set of step s is the Pareto front of (the set of step s + 1) + (the front of
// step s's rows), thinned by replacing runs of consecutive points by their lower-left corner, which
// keeps it a lower bound.
//
// Regions: an UpSet (a staircase) of the plane of the summed objectives. The dominance region of an
// SRAM interval holds the sums of every lower bound b that an incumbent of the interval dominates; the
// drop region of the interval, the sums of a row that pass that test with every point of the rest set
// (the intersection over the points p of the dominance region shifted by -p), intersected over the
// intervals from this one on. Then the test of a row is one binary search.

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "mapper/search/sorted_search.hpp"

namespace npumap::search::join_internal {

/// Points of a rest set at most (the incumbent bound with two summed objectives).
constexpr std::size_t kRestPoints = 32;

using Point = std::pair<double, double>;

/// A closed up-set of the plane: the points v with v0 >= x and v1 >= y for some generator (x, y). The
/// generators are kept with x strictly ascending and y strictly descending (the others add nothing),
/// so membership is one binary search.
struct UpSet {
  std::vector<std::pair<double, double>> gens;
  bool everything = false;  ///< the whole plane
  GridIndex grid;           ///< over the generators' x, once index() was called
  bool indexed = false;

  bool contains(double v0, double v1) const {
    if (everything) return true;
    if (gens.empty()) return false;
    // The generators with x <= v0; the last of them has the least y.
    const auto x_of = [this](std::size_t i) { return gens[i].first; };
    const std::size_t n = indexed ? grid.count<true>(x_of, v0) : count_before<true>(x_of, 0, gens.size(), v0);
    return n > 0 && gens[n - 1].second <= v1;
  }
  /// Builds the index of the generators' x for contains() (call once the set is final).
  void index();
  /// The set moved by (dx, dy).
  UpSet shifted(double dx, double dy) const;
  /// Appends a generator in x order (x >= every x before it): kept when it lowers y.
  void push(double x, double y);
  /// The points in both sets.
  static UpSet intersect(const UpSet& a, const UpSet& b);
};

/// A lower-bound set of (here + after): the 2-D Pareto front of the sums of a point of `here` (any
/// order; modified) and one of `after`, thinned to at most kRestPoints points by replacing runs of
/// consecutive points by their lower-left corner (every sum is at least one of them).
std::vector<Point> sum_bound(std::vector<Point>& here, const std::vector<Point>& after);

/// Per SRAM interval, the drop regions of the rows whose bounded peak equals the interval's start
/// (`tie`) and of the others (`above`).
struct DropRegions {
  std::vector<UpSet> tie;
  std::vector<UpSet> above;
  bool empty() const { return tie.empty(); }
};

/// The drop regions for the rest sets `sets(l)` of each interval l, given each interval's dominance
/// regions (`tie_regions`, `above_regions`).
template <typename Sets>
DropRegions drop_regions(const Sets& sets, const std::vector<UpSet>& tie_regions, const std::vector<UpSet>& above_regions);

/// The sums of a row that pass the test with rest points `points` and dominance region `base`: the
/// intersection over the points of `base` shifted by -p (everything when there is no point).
UpSet region_of(const std::vector<Point>& points, const UpSet& base);

template <typename Sets>
DropRegions drop_regions(const Sets& sets, const std::vector<UpSet>& tie_regions, const std::vector<UpSet>& above_regions) {
  const std::size_t num_levels = tie_regions.size();
  DropRegions out;
  out.tie.resize(num_levels);
  out.above.resize(num_levels);
  UpSet above;
  above.everything = true;
  for (std::size_t l = num_levels; l-- > 0;) {
    const std::vector<Point>& points = sets(l);
    out.above[l] = UpSet::intersect(above, region_of(points, above_regions[l]));
    above = UpSet::intersect(above, region_of(points, tie_regions[l]));
    out.tie[l] = above;
  }
  for (std::vector<UpSet>* regions : {&out.tie, &out.above}) {
    for (UpSet& r : *regions) r.index();
  }
  return out;
}

}  // namespace npumap::search::join_internal
