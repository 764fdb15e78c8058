#pragma once
// Searches of ascending arrays of doubles, for the join's per-row queries (the dominance filter's
// staircases, the incumbent bound's up-sets, the cascade clamp's limits). Those queries run tens of
// millions of times per join with unpredictable outcomes, so both searches avoid branches on the
// comparisons, and GridIndex answers most queries with one table look-up and a comparison or two.
//
// Keys are read through a callable key(i) -> double, so that a member of an array of pairs or
// structs can be searched in place.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npumap::search {

/// How many of the n ascending keys key(first), ..., key(first + n - 1) are below `v` (strict) or at
/// most `v` (`at_most`), plus `first`: std::lower_bound / std::upper_bound without branches on the
/// comparisons.
template <bool at_most, typename Key>
std::size_t count_before(const Key& key, std::size_t first, std::size_t n, double v) {
  if (n == 0) return first;
  std::size_t base = first;
  for (; n > 1;) {
    const std::size_t half = n / 2;
    const double k = key(base + half);
    base = (at_most ? k <= v : k < v) ? base + half : base;
    n -= half;
  }
  const double k = key(base);
  return base + static_cast<std::size_t>(at_most ? k <= v : k < v);
}

/// count_before over a plain array of n ascending doubles.
template <bool at_most>
std::size_t count_before(const double* values, std::size_t n, double v) {
  return count_before<at_most>([values](std::size_t i) { return values[i]; }, 0, n, v);
}

/// An accelerator of count_before over one fixed array of ascending keys: the keys' range is cut
/// into about as many equal cells as there are keys, and for each cell the table holds the index of
/// the first key in it or after it. A query computes its value's cell and searches only that cell's
/// keys. Exact for any spread of the keys: the cell of a value is a non-decreasing function of it
/// (a subtraction, a product by a positive factor and a truncation, all monotone), so every key in
/// an earlier cell is below the value and every key in a later cell above it. Clustered keys only
/// make some cells hold many keys, which are then binary-searched.
class GridIndex {
 public:
  /// Indexes the n ascending keys key(0), ..., key(n - 1) (finite or not, no NaN).
  template <typename Key>
  void build(const Key& key, std::size_t n) {
    n_ = n;
    start_.clear();
    if (n == 0) return;
    std::size_t cells = 1;
    while (cells < n && cells < kMaxCells) cells *= 2;
    cells_ = cells;
    lo_ = key(0);
    const double span = key(n - 1) - lo_;
    scale_ = span > 0.0 ? static_cast<double>(cells) / span : 0.0;
    if (!(scale_ < kHuge)) scale_ = 0.0;  // an infinite span or a subnormal one: one cell
    start_.resize(cells + 1);
    std::size_t k = 0;
    for (std::size_t c = 0; c < cells; ++c) {
      while (k < n && cell_of(key(k)) < c) ++k;
      start_[c] = static_cast<std::uint32_t>(k);
    }
    start_[cells] = static_cast<std::uint32_t>(n);
  }

  /// count_before<at_most>(key, 0, n, v) for the keys given to build().
  template <bool at_most, typename Key>
  std::size_t count(const Key& key, double v) const {
    if (n_ == 0) return 0;
    const std::size_t c = cell_of(v);
    std::size_t i = start_[c];
    const std::size_t end = start_[c + 1];
    if (end - i > kScan) return count_before<at_most>(key, i, end - i, v);
    while (i < end && (at_most ? key(i) <= v : key(i) < v)) ++i;
    return i;
  }

 private:
  static constexpr std::size_t kMaxCells = std::size_t{1} << 16;
  static constexpr std::size_t kScan = 8;  ///< cells with more keys are binary-searched
  static constexpr double kHuge = 1e300;

  std::size_t cell_of(double v) const {
    const double x = (v - lo_) * scale_;  // -inf below the keys, +inf for v = +inf (scale_ > 0)
    if (!(x > 0.0)) return 0;
    return x < static_cast<double>(cells_) ? static_cast<std::size_t>(x) : cells_ - 1;
  }

  std::size_t n_ = 0;
  std::size_t cells_ = 1;
  double lo_ = 0.0;
  double scale_ = 0.0;
  std::vector<std::uint32_t> start_;  ///< cells_ + 1 entries: first key index of each cell, then n
};

}  // namespace npumap::search
