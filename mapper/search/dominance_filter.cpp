// The join's dominance filter (see dominance_filter.hpp).

#include "mapper/search/dominance_filter.hpp"

#include <algorithm>
#include <limits>

namespace npumap::search {
namespace {

/// Levels per extra column: about 16 to 27 cells in all, so a build stays a small multiple of n.
std::size_t levels_per_column(std::size_t extra) {
  switch (extra) {
    case 1: return 16;
    case 2: return 5;
    case 3: return 3;
    default: return 2;
  }
}

}  // namespace

void DominanceFilter::build(const double* rows, std::size_t n, std::size_t k) {
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
  const std::size_t extra = k - 2;
  const std::size_t per_column = levels_per_column(extra);
  for (std::size_t j = 0; j < extra; ++j) {
    scratch_.resize(n);
    for (std::size_t r = 0; r < n; ++r) scratch_[r] = rows[r * k + 2 + j];
    std::sort(scratch_.begin(), scratch_.end());
    scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    // Quantiles of the distinct values; the last level is the maximum, so the top cell holds every row.
    const std::size_t count = std::min(per_column, scratch_.size());
    std::vector<double> lv;
    for (std::size_t i = 0; i < count; ++i) lv.push_back(scratch_[(i + 1) * scratch_.size() / count - 1]);
    levels_.push_back(std::move(lv));
  }
  order_.resize(n);
  for (std::uint32_t r = 0; r < n; ++r) order_[r] = r;
  std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const double* x = rows + a * k;
    const double* y = rows + b * k;
    return x[0] < y[0] || (x[0] == y[0] && (x[1] < y[1] || (x[1] == y[1] && a < b)));
  });
  std::size_t cells = 1;
  for (const auto& lv : levels_) cells *= lv.size();
  std::vector<std::size_t> at(extra, 0);  // the cell's level index per extra column (mixed radix)
  for (std::size_t c = 0; c < cells; ++c) {
    std::size_t rest = c;
    for (std::size_t j = extra; j-- > 0;) {
      at[j] = rest % levels_[j].size();
      rest /= levels_[j].size();
    }
    cell_begin_.push_back(static_cast<std::uint32_t>(stairs_.size()));
    double least1 = std::numeric_limits<double>::infinity();
    for (std::uint32_t r : order_) {
      const double* x = rows + r * k;
      bool inside = true;
      for (std::size_t j = 0; j < extra; ++j) inside &= x[2 + j] <= levels_[j][at[j]];
      if (!inside || !(x[1] < least1)) continue;
      least1 = x[1];
      // Sorted by (column 0, column 1): an entry with the same column 0 as the last has a larger
      // column 1 and was skipped, so column 0 stays strictly ascending.
      stairs_.emplace_back(x[0], x[1]);
    }
  }
  cell_begin_.push_back(static_cast<std::uint32_t>(stairs_.size()));
}

}  // namespace npumap::search
