// Oracle tests of the join's search helpers: count_before and GridIndex against std::lower_bound /
// std::upper_bound, and sort_by_key_then against std::sort with the same total order, on seeded
// random arrays that are spread, clustered (many keys in one grid cell), full of duplicates, or hold
// signed zeros and infinities. Set NPUMAP_TEST_SEED to replay a run.

#include "mapper/search/radix_sort.hpp"
#include "mapper/search/sorted_search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test/support/test_seed.hpp"

namespace npumap::search {
namespace {

std::uint64_t search_seed() {
  static const std::uint64_t seed = npumap::testing::test_seed("sorted_search_test", 0x5e4c'0001ULL);
  return seed;
}

/// Ascending keys of one of several shapes.
std::vector<double> keys_of_shape(int shape, std::size_t n, std::mt19937_64& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(rng() % 1000003) / 1000003.0;
    switch (shape) {
      case 0: keys[i] = 1e6 + 5e5 * u; break;                                        // spread
      case 1: keys[i] = i % 10 == 0 ? 1e9 * u : 2.0 + 1e-9 * u; break;               // one dense cluster
      case 2: keys[i] = static_cast<double>(rng() % 4); break;                       // duplicates
      case 3: keys[i] = i % 7 == 0 ? (rng() % 2 == 0 ? -0.0 : 0.0) : 100.0 * u - 50.0; break;  // zeros
      default: keys[i] = i % 5 == 0 ? (rng() % 2 == 0 ? inf : -inf) : u; break;    // infinities
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

/// Query values: every key, its neighbours, values between keys, beyond them and the infinities.
std::vector<double> queries_for(const std::vector<double>& keys, std::mt19937_64& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> q{inf, -inf, 0.0, -0.0, 1e300, -1e300};
  for (double k : keys) {
    q.push_back(k);
    q.push_back(std::nextafter(k, inf));
    q.push_back(std::nextafter(k, -inf));
  }
  for (int i = 0; i < 200; ++i) {
    const double a = keys.empty() ? 0.0 : keys[rng() % keys.size()];
    const double b = keys.empty() ? 1.0 : keys[rng() % keys.size()];
    q.push_back(std::isfinite(a) && std::isfinite(b) ? (a + b) / 2.0 : a);
  }
  return q;
}

TEST(SortedSearch, CountBeforeAndGridIndexMatchTheStandardBounds) {
  std::mt19937_64 rng(search_seed());
  for (int shape = 0; shape < 5; ++shape) {
    for (std::size_t n : {0, 1, 2, 3, 9, 64, 257, 5000}) {
      SCOPED_TRACE("shape=" + std::to_string(shape) + " n=" + std::to_string(n));
      const std::vector<double> keys = keys_of_shape(shape, n, rng);
      // As pairs too, searched by their first member, as the dominance filter and the up-sets do.
      std::vector<std::pair<double, double>> pairs;
      for (double k : keys) pairs.emplace_back(k, -k);
      const auto first_of = [&pairs](std::size_t i) { return pairs[i].first; };
      GridIndex grid;
      grid.build(first_of, pairs.size());
      for (const double v : queries_for(keys, rng)) {
        const auto below = static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), v) - keys.begin());
        const auto at_most = static_cast<std::size_t>(std::upper_bound(keys.begin(), keys.end(), v) - keys.begin());
        EXPECT_EQ(count_before<false>(keys.data(), keys.size(), v), below) << v;
        EXPECT_EQ(count_before<true>(keys.data(), keys.size(), v), at_most) << v;
        EXPECT_EQ(grid.count<false>(first_of, v), below) << v;
        EXPECT_EQ(grid.count<true>(first_of, v), at_most) << v;
      }
    }
  }
}

// A rebuilt index answers for its new keys only (the join rebuilds its filters' indexes in place).
TEST(SortedSearch, GridIndexRebuiltForOtherKeys) {
  std::mt19937_64 rng(search_seed() ^ 0x77);
  GridIndex grid;
  for (int round = 0; round < 20; ++round) {
    const std::vector<double> keys = keys_of_shape(round % 5, 1 + rng() % 300, rng);
    const auto key = [&keys](std::size_t i) { return keys[i]; };
    grid.build(key, keys.size());
    for (const double v : queries_for(keys, rng)) {
      EXPECT_EQ(grid.count<true>(key, v),
                static_cast<std::size_t>(std::upper_bound(keys.begin(), keys.end(), v) - keys.begin()));
    }
  }
}

struct Item {
  double key = 0.0;
  double second = 0.0;
  std::uint32_t index = 0;
};

// The radix sort orders by the keys' high bits and finishes runs with the full order: keys that
// differ only in their low mantissa bits, exact duplicates and signed zeros must come out exactly as
// std::sort orders them.
TEST(SortedSearch, RadixSortMatchesStdSortOnCloseKeys) {
  std::mt19937_64 rng(search_seed() ^ 0x3a);
  const auto less = [](const Item& a, const Item& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.second != b.second) return a.second < b.second;
    return a.index < b.index;
  };
  for (int shape = 0; shape < 4; ++shape) {
    for (std::size_t n : {100, 600, 20000}) {
      SCOPED_TRACE("shape=" + std::to_string(shape) + " n=" + std::to_string(n));
      std::vector<Item> items(n);
      for (std::size_t i = 0; i < n; ++i) {
        double k = 0.0;
        switch (shape) {
          case 0: k = 1234567.0 + static_cast<double>(rng() % 64) * 1e-9; break;  // same high 32 bits
          case 1: k = static_cast<double>(rng() % 50) * 1e3 + static_cast<double>(rng() % 3) * 1e-7; break;
          case 2: k = rng() % 3 == 0 ? (rng() % 2 == 0 ? -0.0 : 0.0) : static_cast<double>(rng() % 7) - 3.0; break;
          default: k = static_cast<double>(rng() % 1000000) * 0.37; break;
        }
        items[i] = Item{k, static_cast<double>(rng() % 5), static_cast<std::uint32_t>(i)};
      }
      std::vector<Item> expected = items;
      std::sort(expected.begin(), expected.end(), less);
      std::vector<Item> buffer;
      sort_by_key_then(items, buffer, [](const Item& x) { return x.key; }, less);
      ASSERT_EQ(items.size(), expected.size());
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(items[i].index, expected[i].index) << i;
      }
    }
  }
}

}  // namespace
}  // namespace npumap::search
