#pragma once
// A fixed set of rows (k columns, every column minimised) that answers "does a row of the set
// strictly dominate p?" in O(log n). The answer is conservative: `true` only when a row of the set
// is <= p in every column and < p in column 0 or 1; it may miss a dominating row (one equal to p in
// columns 0 and 1, or one whose later columns fall between the levels described below).
//
// The join uses it to skip merged rows that its next Pareto pruning would drop anyway (the set is a
// snapshot of rows already merged into the same key), so the result never changes; only the work
// does (docs/design/search.md "Join", "Dominance filter").
//
// Layout: columns 2..k-1 (the "extra" columns) are cut at a few levels each (quantiles of the set's
// values, the largest level being the maximum). For every combination of levels (a cell) the rows
// whose extra columns are all at most the cell's levels form one staircase over (column 0, column 1):
// column 0 strictly ascending, column 1 strictly descending. A query takes the cell of the largest
// levels <= p in the extra columns and binary-searches that staircase for the largest column 0 <= p's.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace npumap::search {

class DominanceFilter {
 public:
  /// Replaces the set by the n rows of a row-major n x k table (no NaN). k may be 0 (nothing is
  /// ever dominated) up to any number of columns.
  void build(const double* rows, std::size_t n, std::size_t k);

  /// The set is empty: nothing is dominated.
  bool empty() const { return empty_; }

  /// Some row of the set is <= p in every column and < p in column 0 or 1 (k >= 2), or < p (k == 1).
  bool dominated(const double* p) const {
    if (empty_) return false;
    if (k_ == 1) return min0_ < p[0];
    std::size_t cell = 0;
    for (std::size_t j = 0; j < levels_.size(); ++j) {
      const std::vector<double>& lv = levels_[j];
      // The largest level <= p[j + 2]; none: no row of the set is <= p in that column.
      std::size_t lo = 0;
      std::size_t hi = lv.size();
      while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (lv[mid] <= p[j + 2]) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (lo == 0) return false;
      cell = cell * lv.size() + (lo - 1);
    }
    const std::uint32_t begin = cell_begin_[cell];
    const std::uint32_t end = cell_begin_[cell + 1];
    // The last staircase entry with column 0 <= p[0] has the least column 1 among all such entries.
    std::uint32_t lo = begin;
    std::uint32_t hi = end;
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (stairs_[mid].first <= p[0]) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == begin) return false;
    const std::pair<double, double>& x = stairs_[lo - 1];
    return x.second < p[1] || (x.second == p[1] && x.first < p[0]);
  }

 private:
  std::size_t k_ = 0;
  bool empty_ = true;
  double min0_ = 0.0;
  std::vector<std::vector<double>> levels_;        ///< per extra column, ascending
  std::vector<std::uint32_t> cell_begin_;          ///< staircase of cell c: [cell_begin_[c], cell_begin_[c + 1])
  std::vector<std::pair<double, double>> stairs_;  ///< (column 0, column 1) entries of every cell
  std::vector<std::uint32_t> order_;               ///< scratch: rows sorted by (column 0, column 1)
  std::vector<double> scratch_;                    ///< scratch: one extra column's values
};

}  // namespace npumap::search
