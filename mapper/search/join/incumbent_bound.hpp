#pragma once
// Incumbent bound (JoinSpeedups::incumbent_bound; docs/design/search.md "Join", "Incumbent bound").
// Its parts: this file (the bound and its test), incumbent_regions.hpp (the two-objective geometry),
// key_bound.hpp (per-key rest sets), quick_passes.hpp (where the incumbents come from) and
// strategy.cpp (the passes).
//
// Drops: a row (counted as `dominated_after_join`) when a real complete mapping, an *incumbent* (a
// point of the quick passes' fronts), strictly dominates a lower bound of every completion of the row.
// join_best adds a *cap*: a row every completion of which has a first objective above the cap.
//
// The lower bound: completions are split by the SRAM interval their final peak falls in (intervals
// start at 0 and at up to 64 quantiles of the incumbents' peaks; one interval when SRAM is no
// objective). While a later layer t runs its inputs and output are all live, so a row of its group g
// uses at least usage(g) + own SRAM; a completion whose peak is below the next interval's start uses
// only such rows, so it adds at least, per summed objective, the least value among them at every later
// step (`rest` minima, +inf: no completion in that interval), or with two summed objectives one point of
// the interval's rest set. Its peak is at least max(the row's bounded peak, the interval's start).
//
// Safe: the row is dropped only when, in every interval from its own bounded peak on, an incumbent of
// the interval (peak at most the interval's start) is at most that bound in every objective and below
// it in one, so every completion of the row is strictly dominated by a real mapping and none is on the
// front. Every row a dropped row dominates in the pruning columns has a bound at least as large (the
// bound is monotone in every column), so it is dropped too: the front and every choice of the pruning
// are unchanged. "Below" and "at most" carry a relative margin of 1e-12, far more than the sums'
// rounding and far less than any real difference between two mappings, so a completion equal to an
// incumbent is never dropped. The bound reads the row's peak as the future SRAM bound gives it
// (future_sram_bound.hpp), so it is only as sound as that bound: a floor above a real later usage lifts
// every row's bound above the real mappings that beat it.

#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "mapper/search/join/incumbent_regions.hpp"
#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// Objective values of complete mappings (row-major, one row per mapping, the options' objectives in
/// order) that bound the exact join.
struct Incumbents {
  std::size_t k = 0;
  std::vector<double> values;
  /// Only complete mappings whose first objective is at most this are wanted (join_best): a row every
  /// completion of which exceeds it is dropped as if an incumbent dominated it.
  double cap = std::numeric_limits<double>::infinity();
  std::size_t size() const { return k == 0 ? 0 : values.size() / k; }
  bool bounds_anything() const { return size() > 0 || cap < std::numeric_limits<double>::infinity(); }
};

/// The least value that a sum must reach to exceed `cap` by more than the rounding of the sums (the
/// incumbent bound's relative margin, 1e-12).
double above_cap(double cap);

/// The incumbents of each SRAM interval, for fast dominance queries: for interval l, those whose peak
/// SRAM is at most its start (all of them when SRAM is no objective), projected on the other
/// objectives and sorted by the first of them. With two other objectives the second is replaced by its
/// running minimum, a staircase; with three, a Fenwick tree over first-objective order holds a
/// staircase of the (second, third) values per node.
struct IncumbentIndex {
  std::size_t m = 0;                     ///< objectives other than SRAM
  std::vector<std::vector<double>> sets; ///< per interval, row-major, m values per incumbent
  using Staircase = std::vector<std::pair<double, double>>;
  std::vector<std::vector<Staircase>> trees;  ///< per interval (three other objectives), else empty

  IncumbentIndex(const Incumbents& inc, const std::vector<Objective>& objectives, const std::vector<double>& levels);
  /// Some incumbent of interval l is < b in the first other objective and <= b in the rest: it
  /// strictly dominates b (conservative: one equal in the first objective but better elsewhere is not
  /// looked for).
  bool dominates(std::size_t l, const double* b) const;
};

class IncumbentBound {
 public:
  /// `incumbents` null: the bound does not run in this pass.
  IncumbentBound(const PassContext& ctx, const Incumbents* incumbents);

  /// The bound drops rows in this pass.
  bool active() const { return inc_ != nullptr && inc_->bounds_anything(); }
  bool has_incumbents() const { return inc_ != nullptr; }
  const std::vector<double>& levels() const { return levels_; }
  std::size_t num_levels() const { return levels_.size(); }
  /// Two summed objectives: rows are tested against drop regions.
  bool uses_regions() const { return !rest_sets_.empty(); }
  /// The drop regions of the keys after step s, from the rest sets of the steps after it (empty when
  /// the bound tests per interval).
  DropRegions step_regions(int s) const;
  /// The drop regions for other rest sets `sets(l)` (the key bound's).
  template <typename Sets>
  DropRegions regions_for(const Sets& sets) const {
    return drop_regions(sets, tie_regions_, above_regions_);
  }
  /// The rest minima of the steps after s - 1: rest(s)[l * k + j], interval l, objective j.
  const double* rest(int s) const {
    return rest_min_.data() + static_cast<std::size_t>(s) * levels_.size() * ctx_.obj.objectives.size();
  }

  /// Every completion of `row` (whose bounded peak SRAM is `peak`), after step s - 1 with rest minima
  /// `rest`, is strictly dominated by an incumbent (or above the cap). `regions`: the key's or the
  /// step's drop regions (two summed objectives).
  bool completions_dominated(const JoinRow& row, double peak, const DropRegions& regions, const double* rest) const {
    std::size_t first = count_before<true>(levels_.data(), levels_.size(), peak);
    first = first == 0 ? 0 : first - 1;
    if (!regions.empty()) {
      return (peak > levels_[first] ? regions.above : regions.tie)[first].contains(row.value(summed0_), row.value(summed1_));
    }
    return dominated_per_interval(row, peak, first, rest);
  }

 private:
  bool dominated_per_interval(const JoinRow& row, double peak, std::size_t first, const double* rest) const;
  void build_rest_minima();
  void build_rest_sets();
  void build_dominance_regions();
  /// Calls visit(l, row) for every row of step st's groups and every SRAM interval l in which it can run.
  template <typename Visit>
  void for_each_row_interval(const JoinStep& st, const Visit& visit) const;

  const PassContext& ctx_;
  const Incumbents* inc_;
  bool capped_ = false;
  std::vector<double> levels_{0.0};
  std::optional<IncumbentIndex> index_;
  Column summed0_ = Column::Cycles;  ///< the two summed objectives' columns (regions)
  Column summed1_ = Column::Cycles;
  std::vector<double> rest_min_;               ///< [(s * levels + l) * k + j]
  std::vector<std::vector<Point>> rest_sets_;  ///< [s * levels + l] (two summed objectives)
  std::vector<UpSet> tie_regions_;             ///< per interval: dominance regions of a peak at its start
  std::vector<UpSet> above_regions_;           ///< ... and above it
};

}  // namespace npumap::search::join_internal
