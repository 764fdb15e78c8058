#pragma once
// A fixed set of rows (1 to 3 columns, every column minimised) that answers "does a row of the set
// strictly dominate p?" in O(log n). The answer is conservative: `true` only when a row of the set
// is <= p in every column and < p in column 0 or 1; it may miss a dominating row (one equal to p in
// columns 0 and 1, or, with 3 columns, one whose column 2 falls between two levels below p's).
//
// The join uses it to skip merged rows that its next Pareto pruning would drop anyway (the set is a
// snapshot of rows already merged into the same key), so the result never changes; only the work
// does (docs/design/search.md "Join", "Dominance filter").
//
// Layout: column 2 is cut at up to 16 levels (quantiles of the values of up to 1,024 rows spread over
// the set, the largest level being the set's maximum). For every level the rows whose column 2 is at
// most that level form one staircase over (column 0, column 1): column 0 strictly ascending, column 1
// strictly descending. A query takes the largest level <= p's column 2 and finds in that staircase
// the largest column 0 <= p's (a GridIndex over the staircase's column 0).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "mapper/search/sorted_search.hpp"

namespace npumap::search {

class DominanceFilter {
 public:
  /// Replaces the set by the n rows of a row-major n x k table (no NaN), k from 0 (nothing is ever
  /// dominated) to 3.
  void build(const double* rows, std::size_t n, std::size_t k);

  /// The set is empty: nothing is dominated.
  bool empty() const { return empty_; }

  /// Some row of the set is <= p in every column and < p in column 0 or 1 (k >= 2), or < p (k == 1).
  bool dominated(const double* p) const {
    if (empty_) return false;
    if (k_ == 1) return min0_ < p[0];
    std::size_t cell = 0;
    if (k_ == 3) {
      // The largest level <= p[2]; none: no row of the set is <= p in column 2.
      const std::size_t at_most = count_before<true>(levels_.data(), levels_.size(), p[2]);
      if (at_most == 0) return false;
      cell = at_most - 1;
    }
    // The last staircase entry with column 0 <= p[0] has the least column 1 among all such entries.
    const std::uint32_t begin = cell_begin_[cell];
    const std::pair<double, double>* stairs = stairs_.data() + begin;
    const std::size_t below = grids_[cell].count<true>([stairs](std::size_t i) { return stairs[i].first; }, p[0]);
    if (below == 0) return false;
    const std::pair<double, double>& x = stairs[below - 1];
    return x.second < p[1] || (x.second == p[1] && x.first < p[0]);
  }

 private:
  struct Item {
    double a;    ///< column 0
    double b;    ///< column 1
    double c;    ///< column 2 (0 with fewer columns)
  };
  std::size_t k_ = 0;
  bool empty_ = true;
  double min0_ = 0.0;
  std::vector<double> levels_;                     ///< column 2's levels, ascending (3 columns)
  std::vector<std::uint32_t> cell_begin_;          ///< staircase of level l: [cell_begin_[l], cell_begin_[l + 1])
  std::vector<std::pair<double, double>> stairs_;  ///< (column 0, column 1) entries of every level
  std::vector<GridIndex> grids_;                   ///< per level: its staircase's column 0
  std::vector<Item> items_;                        ///< scratch: the rows sorted by (column 0, column 1)
  std::vector<Item> item_buffer_;                  ///< scratch of the sort
  std::vector<double> scratch_;                    ///< scratch: column 2's values
};

}  // namespace npumap::search
