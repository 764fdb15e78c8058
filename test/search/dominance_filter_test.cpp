// Tests of the join's dominance filter against the definition, on seeded random sets with many ties:
// it must never claim a dominator that does not exist (that would drop a front row), and where its
// level grid is exact (2 columns; 3 columns with few distinct values in column 2) it must find every
// one. Set NPUMAP_TEST_SEED to replay a run.

#include "mapper/search/dominance_filter.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>
#include "test/support/test_seed.hpp"

namespace npumap::search {
namespace {

std::uint64_t filter_seed() {
  static const std::uint64_t seed = npumap::testing::test_seed("dominance_filter_test", 0xd0e1'f17e'0001ULL);
  return seed;
}

/// Some row of the set is <= p everywhere and < p in column 0 or 1 (what the filter promises to find
/// when its grid is exact).
bool found_by_definition(const std::vector<double>& set, std::size_t k, const double* p) {
  for (std::size_t r = 0; r * k < set.size(); ++r) {
    const double* x = set.data() + r * k;
    bool le = true;
    for (std::size_t j = 0; j < k; ++j) le = le && x[j] <= p[j];
    if (le && (x[0] < p[0] || (k > 1 && x[1] < p[1]))) return true;
  }
  return false;
}

/// Some row of the set strictly dominates p.
bool strictly_dominated(const std::vector<double>& set, std::size_t k, const double* p) {
  for (std::size_t r = 0; r * k < set.size(); ++r) {
    const double* x = set.data() + r * k;
    bool le = true;
    bool lt = false;
    for (std::size_t j = 0; j < k; ++j) {
      le = le && x[j] <= p[j];
      lt = lt || x[j] < p[j];
    }
    if (le && lt) return true;
  }
  return false;
}

TEST(DominanceFilter, NeverClaimsADominatorThatDoesNotExist) {
  std::mt19937_64 rng(filter_seed());
  for (std::size_t k = 1; k <= 3; ++k) {
    for (int trial = 0; trial < 40; ++trial) {
      // Small value ranges give many ties and exact duplicates.
      const int range = 3 + trial % 12;
      std::uniform_int_distribution<int> value(0, range);
      std::uniform_int_distribution<int> size(0, 300);
      std::vector<double> set(static_cast<std::size_t>(size(rng)) * k);
      for (double& v : set) v = value(rng);
      DominanceFilter f;
      f.build(set.data(), set.size() / k, k);
      EXPECT_EQ(f.empty(), set.empty());
      for (int q = 0; q < 400; ++q) {
        double p[3];
        for (std::size_t j = 0; j < k; ++j) p[j] = value(rng);
        const bool claimed = f.dominated(p);
        if (claimed) {
          EXPECT_TRUE(strictly_dominated(set, k, p)) << "k " << k << " trial " << trial << " query " << q;
        }
        // Exact where the grid is: one or two columns, or three with at most 16 distinct values in
        // column 2 (range + 1 <= 16 here).
        if (k <= 3) {
          EXPECT_EQ(claimed, found_by_definition(set, k, p)) << "k " << k << " trial " << trial << " query " << q;
        }
      }
    }
  }
}

TEST(DominanceFilter, HandWrittenStaircase) {
  // Rows (1,5), (2,3), (4,1) and a dominated (3,4): the staircase is (1,5), (2,3), (4,1).
  const std::vector<double> set{1, 5, 2, 3, 3, 4, 4, 1};
  DominanceFilter f;
  f.build(set.data(), 4, 2);
  // (Queries of a 2-column set read 2 values; the third is padding.)
  const double equal[] = {2, 3, 0};      // equal to a row: not strictly dominated
  const double right[] = {2.5, 3, 0};    // (2,3) is < in column 0, equal in column 1
  const double below[] = {3.5, 2.9, 0};  // (2,3) has 3 > 2.9 and (4,1) has 4 > 3.5: none
  const double far[] = {10, 10, 0};
  const double left_of_all[] = {0.5, 100, 0};
  EXPECT_FALSE(f.dominated(equal));
  EXPECT_TRUE(f.dominated(right));
  EXPECT_FALSE(f.dominated(below));
  EXPECT_TRUE(f.dominated(far));
  EXPECT_FALSE(f.dominated(left_of_all));
  f.build(set.data(), 0, 2);
  EXPECT_TRUE(f.empty());
  EXPECT_FALSE(f.dominated(far));
}

TEST(DominanceFilter, ThirdColumnLevels) {
  // (1,1,9) is best in columns 0 and 1 but high in column 2; (5,5,1) is low in column 2.
  const std::vector<double> set{1, 1, 9, 5, 5, 1};
  DominanceFilter f;
  f.build(set.data(), 2, 3);
  const double low_c2[] = {6, 6, 2};    // only (5,5,1) has column 2 <= 2: dominated by it
  const double lower_c2[] = {6, 6, 0};  // nothing has column 2 <= 0
  const double cheap[] = {2, 2, 9};     // (1,1,9) dominates
  const double cheap_low[] = {2, 2, 8}; // (1,1,9) has 9 > 8; (5,5,1) has 5 > 2
  EXPECT_TRUE(f.dominated(low_c2));
  EXPECT_FALSE(f.dominated(lower_c2));
  EXPECT_TRUE(f.dominated(cheap));
  EXPECT_FALSE(f.dominated(cheap_low));
}

}  // namespace
}  // namespace npumap::search
