// The join's dominance filter (see dominance_filter.hpp).

#include "mapper/search/dominance_filter.hpp"

#include <algorithm>
#include <limits>

#include "common/user_error.hpp"

namespace npumap::search {

/// Levels of column 2: about a staircase per 1/16 of the values, so a build stays a small multiple of n.
constexpr std::size_t kLevels = 16;

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
  std::sort(items_.begin(), items_.end(), [](const Item& x, const Item& y) { return x.a < y.a || (x.a == y.a && x.b < y.b); });
  if (k == 3) {
    scratch_.resize(n);
    for (std::size_t r = 0; r < n; ++r) scratch_[r] = items_[r].c;
    std::sort(scratch_.begin(), scratch_.end());
    scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    // Quantiles of the distinct values; the last level is the maximum, so the top level holds every row.
    const std::size_t count = std::min(kLevels, scratch_.size());
    for (std::size_t i = 0; i < count; ++i) levels_.push_back(scratch_[(i + 1) * scratch_.size() / count - 1]);
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
}

}  // namespace npumap::search
