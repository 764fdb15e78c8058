#pragma once
// Sorting the search's tables by a double key first: a stable radix sort on that key (its bits as an
// unsigned key, 8 bits per pass, passes in which every key has the same digit skipped), then each run
// of equal keys sorted by the caller's full order. When that order is total (and consistent with the
// key), the result is exactly what std::sort gives with it, in about a third of the time on the
// join's tables. Short tables go to std::sort directly. No NaN keys.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace npumap::search {

/// The bits of x as an unsigned key in the order of the doubles. -0.0 and +0.0 get adjacent keys,
/// so they end in one run of equal keys and the full order sorts them there.
inline std::uint64_t sortable_bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return (u >> 63) != 0 ? ~u : u | (std::uint64_t{1} << 63);
}

/// Sorts `items` by `less`, a total order that sorts by `key(item)` (a double) first; `buffer` is
/// scratch.
template <typename T, typename Key, typename Less>
void sort_by_key_then(std::vector<T>& items, std::vector<T>& buffer, const Key& key, const Less& less) {
  constexpr std::size_t kRadixMinRows = 512;
  const std::size_t n = items.size();
  if (n < kRadixMinRows) {
    std::sort(items.begin(), items.end(), less);
    return;
  }
  std::uint32_t counts[8][256] = {};
  for (const T& e : items) {
    const std::uint64_t u = sortable_bits(key(e));
    for (std::size_t d = 0; d < 8; ++d) ++counts[d][(u >> (8 * d)) & 0xff];
  }
  buffer.resize(n);
  const std::uint64_t first = sortable_bits(key(items.front()));
  for (std::size_t d = 0; d < 8; ++d) {
    std::uint32_t* c = counts[d];
    if (c[(first >> (8 * d)) & 0xff] == n) continue;  // one digit: nothing moves
    std::uint32_t sum = 0;
    for (std::size_t b = 0; b < 256; ++b) {
      const std::uint32_t here = c[b];
      c[b] = sum;
      sum += here;
    }
    for (const T& e : items) buffer[c[(sortable_bits(key(e)) >> (8 * d)) & 0xff]++] = e;
    items.swap(buffer);
  }
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && !(key(items[i]) < key(items[j]))) ++j;
    if (j - i > 1) std::sort(items.begin() + static_cast<std::ptrdiff_t>(i), items.begin() + static_cast<std::ptrdiff_t>(j), less);
    i = j;
  }
}

}  // namespace npumap::search
