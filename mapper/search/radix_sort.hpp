#pragma once
// Sorting the search's tables by a double key first: a radix sort on the high 32 bits of that key (its
// bits as an unsigned key, which order like the doubles; 8 bits per pass, passes in which every key
// has the same digit skipped), then each run of keys equal in those bits sorted by the caller's full
// order. The high bits hold the sign, the exponent and 20 bits of the mantissa, so runs are short
// (keys within about a millionth of each other). When the order is total (and consistent with the
// key), the result is exactly what std::sort gives with it, in a fraction of the time on the join's
// tables. Short tables go to std::sort directly. No NaN keys.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace npumap::search {

/// The bits of x as an unsigned key in the order of the doubles (-0.0 just below +0.0).
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
  // The high 32 bits of the key, which order like the keys (not strictly: equal for close keys).
  // Adding +0.0 turns -0.0 into +0.0 (and changes nothing else), so the zeros, which the full order
  // finds equal, share a run.
  const auto high = [&key](const T& e) { return static_cast<std::uint32_t>(sortable_bits(key(e) + 0.0) >> 32); };
  std::uint32_t counts[4][256] = {};
  for (const T& e : items) {
    const std::uint32_t u = high(e);
    for (std::size_t d = 0; d < 4; ++d) ++counts[d][(u >> (8 * d)) & 0xff];
  }
  buffer.resize(n);
  const std::uint32_t first = high(items.front());
  for (std::size_t d = 0; d < 4; ++d) {
    std::uint32_t* c = counts[d];
    if (c[(first >> (8 * d)) & 0xff] == n) continue;  // one digit: nothing moves
    std::uint32_t sum = 0;
    for (std::size_t b = 0; b < 256; ++b) {
      const std::uint32_t here = c[b];
      c[b] = sum;
      sum += here;
    }
    for (const T& e : items) buffer[c[(high(e) >> (8 * d)) & 0xff]++] = e;
    items.swap(buffer);
  }
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    const std::uint32_t run = high(items[i]);
    while (j < n && high(items[j]) == run) ++j;
    if (j - i > 1) std::sort(items.begin() + static_cast<std::ptrdiff_t>(i), items.begin() + static_cast<std::ptrdiff_t>(j), less);
    i = j;
  }
}

}  // namespace npumap::search
