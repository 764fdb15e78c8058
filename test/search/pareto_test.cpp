// Tests of the Pareto kernel against a brute-force O(n^2) filter written from the definition, on
// seeded random tables with many ties and exact duplicates, plus hand-written cases and
// metamorphic properties (shuffling, chunk-and-refilter, workspace reuse).
// The random tests print their seed; set NPUMAP_TEST_SEED to replay one.

#include "mapper/search/pareto.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include "test/support/test_seed.hpp"

namespace npumap::search {
namespace {

using Index = std::uint32_t;
using Table = std::vector<double>;

std::uint64_t pareto_seed() {
  static const std::uint64_t seed = npumap::testing::test_seed("pareto_test", 0x5eed'1234'abcdULL);
  return seed;
}

// The definition with a tie-break: row i is dropped iff some row j dominates it, or row j equals it
// and (tie[j], j) < (tie[i], i).
std::vector<std::uint32_t> brute_force_tiebreak(const std::vector<double>& t, const std::vector<double>& tie,
                                                std::size_t n, std::size_t k) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    bool keep = true;
    for (std::size_t j = 0; j < n && keep; ++j) {
      if (j == i) continue;
      bool all_le = true;
      bool any_lt = false;
      for (std::size_t c = 0; c < k; ++c) {
        all_le = all_le && t[j * k + c] <= t[i * k + c];
        any_lt = any_lt || t[j * k + c] < t[i * k + c];
      }
      const bool before = tie[j] < tie[i] || (tie[j] == tie[i] && j < i);
      if (all_le && (any_lt || before)) keep = false;
    }
    if (keep) out.push_back(static_cast<std::uint32_t>(i));
  }
  return out;
}

// The definition, literally: row i is dropped iff some row j dominates it, or row j equals it and
// j < i (exact duplicates keep the lowest index): the tie-break definition with every tie equal.
std::vector<Index> brute_force(const Table& t, std::size_t n, std::size_t k) {
  return brute_force_tiebreak(t, std::vector<double>(n, 0.0), n, k);
}

// Values from a tiny integer range force ties in single objectives and exact duplicate rows.
Table random_table(std::mt19937_64& rng, std::size_t n, std::size_t k, std::uint64_t range) {
  Table t(n * k);
  for (double& v : t) v = static_cast<double>(rng() % range);
  return t;
}

Table continuous_table(std::mt19937_64& rng, std::size_t n, std::size_t k) {
  Table t(n * k);
  for (double& v : t) v = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return t;
}

std::string describe(std::size_t n, std::size_t k, std::uint64_t range, std::uint64_t seed) {
  return "n=" + std::to_string(n) + " k=" + std::to_string(k) + " range=" + std::to_string(range) +
         " seed=" + std::to_string(seed);
}

TEST(Pareto, MatchesBruteForceOnRandomTablesWithTies) {
  const std::uint64_t seed = pareto_seed();
  ParetoWorkspace ws;  // reused across all calls on purpose: stale scratch must not leak
  std::vector<Index> front;
  int compared = 0;
  for (std::size_t k : {1, 2, 3, 4, 5, 6}) {
    for (std::size_t n : {0, 1, 2, 3, 10, 1000}) {
      for (std::uint64_t range : {1, 2, 3, 5, 1000}) {
        for (std::uint64_t rep = 0; rep < 3; ++rep) {
          std::mt19937_64 rng(seed ^ (k * 0x9e3779b97f4a7c15ULL) ^ (n << 20) ^ (range << 40) ^ rep);
          const Table t = random_table(rng, n, k, range);
          SCOPED_TRACE(describe(n, k, range, seed) + " rep=" + std::to_string(rep));
          const std::vector<Index> expected = brute_force(t, n, k);
          pareto_front(t.data(), n, k, ws, front);
          ASSERT_EQ(front, expected);
          ASSERT_EQ(pareto_front(t.data(), n, k), expected);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 6 * 6 * 5 * 3);
}

TEST(Pareto, MatchesBruteForceOnContinuousTables) {
  const std::uint64_t seed = pareto_seed();
  for (std::size_t k : {2, 3, 4, 6, 8}) {
    std::mt19937_64 rng(seed + k);
    const std::size_t n = 1500;
    const Table t = continuous_table(rng, n, k);
    SCOPED_TRACE(describe(n, k, 0, seed));
    EXPECT_EQ(pareto_front(t.data(), n, k), brute_force(t, n, k));
  }
}

// Rows on the plane x + y + z = 1 are mutually non-dominated (a large front); with a few
// dominated points mixed in, this exercises the skyline window rather than the elimination pass.
TEST(Pareto, MatchesBruteForceOnAnticorrelatedTables) {
  const std::uint64_t seed = pareto_seed();
  std::mt19937_64 rng(seed ^ 0xa17);
  const std::size_t n = 1200;
  for (std::size_t k : {2, 3, 4, 5, 7}) {
    Table t(n * k);
    for (std::size_t i = 0; i < n; ++i) {
      double total = 0.0;
      for (std::size_t c = 0; c < k; ++c) {
        t[i * k + c] = static_cast<double>(1 + rng() % 64);
        total += t[i * k + c];
      }
      // Scale onto a common sum, except every 7th row which is pushed up (dominated).
      const double target = (i % 7 == 0) ? 1.5 : 1.0;
      for (std::size_t c = 0; c < k; ++c) t[i * k + c] = t[i * k + c] / total * target;
    }
    SCOPED_TRACE(describe(n, k, 0, seed));
    const std::vector<Index> expected = brute_force(t, n, k);
    EXPECT_GT(expected.size(), n / 4);  // the case is only meaningful with a large front
    EXPECT_EQ(pareto_front(t.data(), n, k), expected);
  }
}

// Large fronts whose first objective takes few values (many rows equal in it, some exact
// duplicates), with signed zeros, negative values and infinities: the rows that survive the
// elimination pass are many (the radix sort and the bitmap listing of the survivors run), and its
// runs of equal first values must come out in the full order. Checked with and without a tie-break.
TEST(Pareto, MatchesBruteForceOnLargeFrontsWithTiesInTheFirstObjective) {
  std::mt19937_64 rng(pareto_seed() ^ 0x7ad1);
  ParetoWorkspace ws;
  std::vector<Index> front;
  const std::size_t n = 2400;
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t k : {2, 3, 4, 5, 6}) {
    for (int variant = 0; variant < 3; ++variant) {
      Table t(n * k);
      std::vector<double> tie(n);
      for (std::size_t i = 0; i < n; ++i) {
        // First objective from 200 values (zero as -0.0 or +0.0, some negative); the second falls
        // as the first rises, so most rows trade them off; the rest are small integers.
        const std::int64_t x = static_cast<std::int64_t>(rng() % 200) - 8;
        t[i * k] = x == 0 ? (rng() % 2 == 0 ? -0.0 : 0.0) : static_cast<double>(x) * (variant == 2 ? 1e-300 : 1.0);
        t[i * k + 1] = static_cast<double>(500 - 2 * x) + static_cast<double>(rng() % 3);
        for (std::size_t c = 2; c < k; ++c) t[i * k + c] = static_cast<double>(rng() % 4);
        if (variant == 1 && i % 97 == 0) t[i * k + (i / 97) % k] = inf;
        tie[i] = static_cast<double>(rng() % 3);
      }
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k) + " variant=" + std::to_string(variant));
      const std::vector<Index> expected = brute_force(t, n, k);
      EXPECT_GT(expected.size(), std::size_t{64});
      pareto_front(t.data(), n, k, ws, front);
      EXPECT_EQ(front, expected);
      pareto_front_tiebreak(t.data(), n, k, tie.data(), ws, front);
      EXPECT_EQ(front, brute_force_tiebreak(t, tie, n, k));
    }
  }
}

// Every row undominated, and the sweep's staircases long: in column 0 order each row has a smaller
// sum of columns 1 and 2 than the rows before it (so none of them covers it), and column 1 spreads
// over a wide range (so it rarely covers one of them). The 3-column staircase outgrows its sorted
// vector and moves into the tree; the 4- and 5-column sweeps get long node staircases too.
TEST(Pareto, LongStaircasesKeepEveryUndominatedRow) {
  std::mt19937_64 rng(pareto_seed() ^ 0x57a1);
  ParetoWorkspace ws;
  std::vector<Index> front;
  const std::size_t n = 3000;
  for (std::size_t k : {3, 4, 5}) {
    Table t(n * k);
    for (std::size_t i = 0; i < n; ++i) {
      const double spread = static_cast<double>(rng() % 1000000);
      t[i * k] = static_cast<double>(i);
      t[i * k + 1] = spread;
      t[i * k + 2] = 4000000.0 - static_cast<double>(i) - spread;
      for (std::size_t c = 3; c < k; ++c) t[i * k + c] = t[i * k + 2];
    }
    // Every 10th row is pushed up in every column: dominated by the row before it.
    for (std::size_t i = 10; i < n; i += 10) {
      for (std::size_t c = 0; c < k; ++c) t[i * k + c] = t[(i - 1) * k + c] + 1.0;
    }
    SCOPED_TRACE("k=" + std::to_string(k));
    const std::vector<Index> expected = brute_force(t, n, k);
    EXPECT_EQ(expected.size(), n - (n - 1) / 10);
    pareto_front(t.data(), n, k, ws, front);
    EXPECT_EQ(front, expected);
  }
}

TEST(Pareto, AllIdenticalRowsKeepTheFirst) {
  for (std::size_t k : {1, 2, 3, 4, 7}) {
    const Table t(50 * k, 3.25);
    EXPECT_EQ(pareto_front(t.data(), 50, k), std::vector<Index>{0}) << "k=" << k;
  }
}

TEST(Pareto, ZeroObjectivesKeepsRowZero) {
  // With no objectives every row is an exact duplicate of every other; the first is kept.
  const Table t;
  EXPECT_EQ(pareto_front(t.data(), 5, 0), std::vector<Index>{0});
  EXPECT_TRUE(pareto_front(t.data(), 0, 0).empty());
}

TEST(Pareto, OneObjectiveKeepsLowestIndexAmongEqualMinima) {
  const Table t = {4.0, 2.0, 9.0, 2.0, -0.0, 0.0, 7.0};
  // Minimum is 0 (-0.0 == +0.0): rows 4 and 5 tie, row 4 comes first.
  EXPECT_EQ(pareto_front(t.data(), t.size(), 1), std::vector<Index>{4});
}

TEST(Pareto, ChainOfDominanceKeepsOnlyTheHead) {
  // Row i = (10 - i, 10 - i, 10 - i): each row dominates every earlier one; row 9 = (1,1,1) is the
  // only survivor. Given in reverse order too, so the head is once first and once last.
  for (std::size_t k : {2, 3, 5}) {
    Table t;
    for (int i = 0; i < 10; ++i) t.insert(t.end(), k, 10.0 - i);
    EXPECT_EQ(pareto_front(t.data(), 10, k), std::vector<Index>{9}) << "k=" << k;
    Table r;
    for (int i = 9; i >= 0; --i) r.insert(r.end(), k, 10.0 - i);
    EXPECT_EQ(pareto_front(r.data(), 10, k), std::vector<Index>{0}) << "k=" << k;
  }
}

TEST(Pareto, TwoDimensionalStaircase) {
  // Steps (1,9) (2,7) (4,4) (6,2) (9,1) form the front. The others:
  //   (3,7): dominated by (2,7) (x larger, y equal);   (4,5): dominated by (4,4) (y larger);
  //   (2,7) again at index 7: duplicate of index 1;    (9,9): dominated by all steps;
  //   (5,3): not dominated ((4,4) has y 4 > 3, (6,2) has x 6 > 5), so it is a step as well.
  const Table t = {4, 5,  2, 7,  9, 1,  3, 7,  1, 9,  6, 2,  9, 9,  2, 7,  4, 4,  5, 3};
  EXPECT_EQ(pareto_front(t.data(), 10, 2), (std::vector<Index>{1, 2, 4, 5, 8, 9}));
}

TEST(Pareto, TiesInOneObjectiveAreNotDominance) {
  // (1,2,3) and (1,3,2) share objective 0 but neither dominates; (1,2,3) at index 2 duplicates
  // index 0; (1,3,3) is dominated by both.
  const Table t = {1, 2, 3,  1, 3, 2,  1, 2, 3,  1, 3, 3};
  EXPECT_EQ(pareto_front(t.data(), 4, 3), (std::vector<Index>{0, 1}));
}

TEST(Pareto, AbsorbedSumsStillOrderByDominance) {
  // 1e20 + 2 and 1e20 + 1 round to the same double, so the sum alone cannot tell these rows
  // apart; row 1 = (1e20, 1, 0) dominates row 0 = (1e20, 2, 0) (equal, smaller, equal).
  const Table t = {1e20, 2, 0,  1e20, 1, 0};
  EXPECT_EQ(pareto_front(t.data(), 2, 3), std::vector<Index>{1});
  const Table t4 = {1e20, 2, 0, 5,  1e20, 1, 0, 5};
  EXPECT_EQ(pareto_front(t4.data(), 2, 4), std::vector<Index>{1});
  // The same with the difference in objective 0: (2, 1e20, 0) is dominated by (1, 1e20, 0).
  const Table t0 = {2, 1e20, 0,  1, 1e20, 0};
  EXPECT_EQ(pareto_front(t0.data(), 2, 3), std::vector<Index>{1});
}

TEST(Pareto, MatchesBruteForceWhenSumsAbsorbSmallValues) {
  // Values from {0, 1, 2, 3, 1e17, 1e20}: 1e20 absorbs the small values (and 1e17 + small), so
  // many rows with different objectives have equal sums, and dominance must come from the
  // lexicographic tie-break.
  const std::uint64_t seed = pareto_seed();
  const double values[] = {0, 1, 2, 3, 1e17, 1e20};
  for (std::size_t k : {3, 4, 6}) {
    std::mt19937_64 rng(seed ^ (0xab5 + k));
    const std::size_t n = 600;
    Table t(n * k);
    for (double& v : t) v = values[rng() % 6];
    SCOPED_TRACE(describe(n, k, 6, seed));
    EXPECT_EQ(pareto_front(t.data(), n, k), brute_force(t, n, k));
  }
}

TEST(Pareto, InfinitiesAreOrdinaryValues) {
  const double inf = std::numeric_limits<double>::infinity();
  // Row 0 (inf, 1, 1) is dominated by row 1 (inf, 0, 1) even though both sums are +inf; row 2
  // (5, inf, 0) trades off against row 1; row 3 (-inf, 9, 9) has the smallest objective 0.
  const Table t = {inf, 1, 1,  inf, 0, 1,  5, inf, 0,  -inf, 9, 9};
  EXPECT_EQ(pareto_front(t.data(), 4, 3), (std::vector<Index>{1, 2, 3}));
  const Table t2 = {inf, 1,  inf, 0,  5, inf,  inf, 0};
  EXPECT_EQ(pareto_front(t2.data(), 4, 2), (std::vector<Index>{1, 2}));
}

TEST(Pareto, NanIsRejected) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t k : {1, 2, 3, 6}) {
    Table t(4 * k, 1.0);
    t[2 * k + (k - 1)] = nan;  // last objective of row 2
    EXPECT_THROW(pareto_front(t.data(), 4, k), std::logic_error) << "k=" << k;
  }
  const double inf = std::numeric_limits<double>::infinity();
  const Table mixed = {inf, -inf, 0};
  EXPECT_THROW(pareto_front(mixed.data(), 1, 3), std::logic_error);
}

// Shuffling the rows changes only which of several exact duplicates is kept: the first one in the
// shuffled order. Re-sorting the shuffled table by a canonical key (here the original index)
// reproduces the original result exactly, which is what the callers' determinism rests on.
TEST(Pareto, ShuffledInputGivesTheSameFrontUpToDuplicateChoice) {
  const std::uint64_t seed = pareto_seed();
  for (std::size_t k : {1, 2, 3, 4, 6}) {
    std::mt19937_64 rng(seed * 31 + k);
    const std::size_t n = 800;
    const Table t = random_table(rng, n, k, 4);
    const std::vector<Index> original = pareto_front(t.data(), n, k);

    std::vector<Index> perm(n);  // shuffled position p holds original row perm[p]
    std::iota(perm.begin(), perm.end(), Index{0});
    for (std::size_t p = n; p > 1; --p) std::swap(perm[p - 1], perm[rng() % p]);
    Table shuffled(n * k);
    for (std::size_t p = 0; p < n; ++p) {
      std::copy_n(t.begin() + static_cast<std::ptrdiff_t>(perm[p] * k), k,
                  shuffled.begin() + static_cast<std::ptrdiff_t>(p * k));
    }
    const std::vector<Index> front_shuffled = pareto_front(shuffled.data(), n, k);

    // Same set of distinct value vectors, and each is represented by its first shuffled copy.
    auto row_of = [k](const Table& tab, Index i) {
      return std::vector<double>(tab.begin() + static_cast<std::ptrdiff_t>(i * k),
                                 tab.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
    };
    std::map<std::vector<double>, Index> first_position;
    for (std::size_t p = 0; p < n; ++p) {
      first_position.try_emplace(row_of(shuffled, static_cast<Index>(p)), static_cast<Index>(p));
    }
    std::vector<std::vector<double>> values_original, values_shuffled;
    for (Index i : original) values_original.push_back(row_of(t, i));
    for (Index p : front_shuffled) {
      values_shuffled.push_back(row_of(shuffled, p));
      EXPECT_EQ(first_position.at(values_shuffled.back()), p) << "k=" << k;
    }
    std::sort(values_original.begin(), values_original.end());
    std::sort(values_shuffled.begin(), values_shuffled.end());
    EXPECT_EQ(values_original, values_shuffled) << "k=" << k;

    // Canonical order re-applied: sort shuffled rows by original index and filter again.
    std::vector<Index> by_canonical(n);  // by_canonical[c] = shuffled position of original row c
    for (std::size_t p = 0; p < n; ++p) by_canonical[perm[p]] = static_cast<Index>(p);
    Table canonical(n * k);
    for (std::size_t c = 0; c < n; ++c) {
      std::copy_n(shuffled.begin() + static_cast<std::ptrdiff_t>(by_canonical[c] * k), k,
                  canonical.begin() + static_cast<std::ptrdiff_t>(c * k));
    }
    EXPECT_EQ(pareto_front(canonical.data(), n, k), original) << "k=" << k;
  }
}

// The callers' merge: filter chunks, concatenate the chunk fronts in order, filter again.
TEST(Pareto, ChunkFrontsConcatenatedAndRefilteredEqualTheWholeFront) {
  const std::uint64_t seed = pareto_seed();
  ParetoWorkspace ws;
  std::vector<Index> chunk_front;
  for (std::size_t k : {2, 3, 4, 6}) {
    std::mt19937_64 rng(seed * 17 + k);
    const std::size_t n = 3000;
    const std::size_t chunk = 256;  // does not divide n: the last chunk is short
    const Table t = random_table(rng, n, k, 6);
    Table merged;
    std::vector<Index> merged_origin;
    for (std::size_t begin = 0; begin < n; begin += chunk) {
      const std::size_t rows = std::min(chunk, n - begin);
      pareto_front(t.data() + begin * k, rows, k, ws, chunk_front);
      for (Index i : chunk_front) {
        merged.insert(merged.end(), t.begin() + static_cast<std::ptrdiff_t>((begin + i) * k),
                      t.begin() + static_cast<std::ptrdiff_t>((begin + i + 1) * k));
        merged_origin.push_back(static_cast<Index>(begin + i));
      }
    }
    std::vector<Index> refiltered;
    for (Index i : pareto_front(merged.data(), merged_origin.size(), k)) {
      refiltered.push_back(merged_origin[i]);
    }
    EXPECT_EQ(refiltered, brute_force(t, n, k)) << "k=" << k;
  }
}

}  // namespace
}  // namespace npumap::search

namespace npumap::search {
namespace {

TEST(ParetoTiebreak, EqualRowsKeepTheSmallestTiebreakThenTheLowestIndex) {
  // Rows 0 and 1 are (1,2): row 1 has the smaller tie-break. Rows 2 and 4 are (2,1) with equal
  // tie-breaks: the lower index, 2. Row 3, (3,3), is dominated by (1,2).
  const std::vector<double> rows = {1, 2, 1, 2, 2, 1, 3, 3, 2, 1};
  const std::vector<double> tie = {5, 4, 1, 0, 1};
  ParetoWorkspace ws;
  std::vector<std::uint32_t> front;
  pareto_front_tiebreak(rows.data(), 5, 2, tie.data(), ws, front);
  EXPECT_EQ(front, (std::vector<std::uint32_t>{1, 2}));
  // -0.0 equals +0.0: the later row wins on its smaller tie-break.
  const std::vector<double> signed_zero = {0.0, 1.0, -0.0, 1.0};
  const std::vector<double> tie2 = {2, 1};
  pareto_front_tiebreak(signed_zero.data(), 2, 2, tie2.data(), ws, front);
  EXPECT_EQ(front, (std::vector<std::uint32_t>{1}));
}

TEST(ParetoTiebreak, MatchesTheDefinitionOnRandomTablesWithTies) {
  // Many exact duplicates (tiny value ranges) with random tie-break values, every column count the
  // kernel has a separate path for (0, 1, 2, 3, 4 and the 5+ skyline).
  ParetoWorkspace ws;  // reused on purpose
  std::vector<std::uint32_t> front;
  std::mt19937_64 rng(pareto_seed() ^ 0x7ee5);
  for (std::size_t k : {0, 1, 2, 3, 4, 5, 6}) {
    for (std::size_t n : {1, 2, 10, 400}) {
      for (std::uint64_t range : {1, 2, 4, 1000}) {
        for (std::uint64_t tie_range : {1, 3, 1000}) {
          std::vector<double> t(n * k);
          for (double& v : t) v = static_cast<double>(rng() % range);
          std::vector<double> tie(n);
          for (double& v : tie) v = static_cast<double>(rng() % tie_range);
          SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k) + " range=" + std::to_string(range) +
                       " tie_range=" + std::to_string(tie_range));
          pareto_front_tiebreak(t.data(), n, k, tie.data(), ws, front);
          ASSERT_EQ(front, brute_force_tiebreak(t, tie, n, k));
        }
      }
    }
  }
}

}  // namespace
}  // namespace npumap::search
