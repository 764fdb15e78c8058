// The join's dominance filter (see dominance_filter.hpp).

#include "mapper/search/dominance_filter.hpp"

#include "mapper/search/radix_sort.hpp"

#include <algorithm>
#include <limits>

#include "common/user_error.hpp"

namespace npumap::search {

/// Levels of column 2: about a staircase per 1/16 of the values, so a build stays a small multiple of n.
constexpr std::size_t kLevels = 16;
/// Rows of the set whose column 2 chooses the levels.
constexpr std::size_t kLevelSample = 1024;

void DominanceFilter::build(const double* rows, std::size_t n, std::size_t k) {
  NPUMAP_ASSERT(k <= 3);
  k_ = k;
  empty_ = n == 0 || k == 0;
  levels_.clear();
  cell_begin_.clear();
  stairs_.clear();
  if (empty_) return;
  if (k == 1) {
    min0_ = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < n; ++r) min0_ = std::min(min0_, rows[r]);
    return;
  }
  items_.resize(n);
  for (std::size_t r = 0; r < n; ++r) items_[r] = Item{rows[r * k], rows[r * k + 1], k == 3 ? rows[r * k + 2] : 0.0};
  // Any order with (column 0, column 1) ascending builds the same staircases.
  sort_by_key_then(items_, item_buffer_, [](const Item& x) { return x.a; },
                   [](const Item& x, const Item& y) { return x.a < y.a || (x.a == y.a && x.b < y.b); });
  if (k == 3) {
    // The levels are quantiles of column 2's distinct values among at most kLevelSample rows spread
    // over the set (any levels give correct answers; these only decide which dominators are seen).
    const std::size_t step = (n + kLevelSample - 1) / kLevelSample;
    scratch_.clear();
    for (std::size_t r = 0; r < n; r += step) scratch_.push_back(rows[r * k + 2]);
    std::sort(scratch_.begin(), scratch_.end());
    scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    // Quantiles of the sampled distinct values; the last level is the set's maximum, so the top
    // level holds every row.
    double most = -std::numeric_limits<double>::infinity();
    for (const Item& x : items_) most = std::max(most, x.c);
    const std::size_t count = std::min(kLevels, scratch_.size());
    for (std::size_t i = 0; i + 1 < count; ++i) levels_.push_back(scratch_[(i + 1) * scratch_.size() / count - 1]);
    if (levels_.empty() || levels_.back() < most) levels_.push_back(most);
  } else {
    levels_.push_back(0.0);
  }
  for (double level : levels_) {
    cell_begin_.push_back(static_cast<std::uint32_t>(stairs_.size()));
    double least1 = std::numeric_limits<double>::infinity();
    for (const Item& x : items_) {
      if (!(x.c <= level) || !(x.b < least1)) continue;
      least1 = x.b;
      // Sorted by (column 0, column 1): an entry with the same column 0 as the last has a larger
      // column 1 and was skipped, so column 0 stays strictly ascending.
      stairs_.emplace_back(x.a, x.b);
    }
  }
  cell_begin_.push_back(static_cast<std::uint32_t>(stairs_.size()));
  grids_.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const std::pair<double, double>* stairs = stairs_.data() + cell_begin_[l];
    grids_[l].build([stairs](std::size_t i) { return stairs[i].first; }, cell_begin_[l + 1] - cell_begin_[l]);
  }
}

}  // namespace npumap::search
