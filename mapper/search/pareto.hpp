#pragma once
// Pareto filtering of candidate tables (docs/design/search.md "Pareto"). Every objective is minimised.
//
// Semantics, which callers rely on for determinism (docs/design/architecture.md §5):
//   * Row a dominates row b when a <= b in every objective and a < b in at least one.
//   * Exact duplicates (equal in every objective; -0.0 equals +0.0) keep exactly one row: the
//     lowest index. Callers pass rows already sorted by their canonical key, so "lowest index"
//     is "first in canonical order" and the result never depends on arrival order.
//   * The result is the indices of the surviving rows in ascending order. It depends on nothing
//     but the values and their order, so merging chunk fronts is "concatenate in canonical order,
//     filter again": front(A ++ B) == front(front(A) ++ front(B)) after index mapping.
//   * NaN is rejected with NPUMAP_ASSERT (an internal error: objectives come from the model, never
//     from the user). Infinities are allowed, except +inf and -inf in the same row.
//   * Zero objectives: every row equals every other, so a non-empty table keeps row 0.
//
// Algorithms: 1 objective keeps the minimum; 2 objectives sort by (obj0, obj1, index) and sweep a
// running minimum of obj1 (sorts of 512 rows or more: a radix sort on obj0, then each run of equal
// obj0 by the full order); 3 and 4 objectives sort lexicographically and sweep a staircase of the
// survivors' (obj1, obj2) (for 4, one staircase of (obj2, obj3) per Fenwick-tree node over obj1),
// O(n log n) and O(n log^2 n); 5 objectives sort lexicographically and solve the remaining 4-D
// dominance offline by divide and conquer, O(n log^3 n); 6 or more run a sort-filter skyline (SFS)
// whose window is split by a pivot (the objectives' medians) so a row is compared only with
// survivors that could dominate it. Before sorting, every path
// with 2+ objectives runs a one-pass elimination filter against a few running pivots (the rows with
// the smallest sums seen so far), which on typical data removes most rows in O(n), so the sort only
// sees the rest. Worst case (a large front) the SFS skyline (6+ objectives) is O(n * front).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <set>
#include <utility>
#include <vector>

namespace npumap::search {

/// Reusable scratch memory for pareto_front; keeps repeated calls on chunks allocation-free once
/// the buffers have grown to the largest chunk. Not shared between threads.
struct ParetoWorkspace {
  /// A candidate row after the elimination filter: its sort key and index.
  struct Entry {
    double key0;
    double key1;
    std::uint32_t index;
  };
  std::vector<Entry> entries;             ///< Rows that survived the elimination filter.
  std::vector<Entry> sort_buffer;         ///< Scratch of the radix sort of `entries`.
  /// SFS survivors' objectives, one window per pivot mask (which of the first objectives are at
  /// least the pivot's), each in blocks of 8 rows.
  std::vector<std::vector<double>> windows;
  std::vector<std::uint32_t> window_rows; ///< Index of each SFS survivor, in the order kept.
  std::vector<std::uint32_t> window_sizes;///< Survivors per window.
  std::vector<double> medians;            ///< Scratch: one objective's values, for the pivot.
  /// 3 and 4 objectives: 2-D staircases of survivors ((a, b) with a ascending, b strictly
  /// descending); one for 3 objectives, one per Fenwick-tree node over objective 1 for 4. A short
  /// staircase is a sorted vector; past kFlatMax entries it moves into an ordered tree, so an
  /// insertion costs O(log n) however long the staircase; tree nodes come from `pool`, which keeps
  /// freed nodes for reuse.
  struct Stair {
    static constexpr std::size_t kFlatMax = 256;
    explicit Stair(std::pmr::memory_resource* resource) : tree(resource) {}
    std::vector<std::pair<double, double>> flat;
    std::pmr::set<std::pair<double, double>> tree;
    bool in_tree = false;
  };
  std::unique_ptr<std::pmr::unsynchronized_pool_resource> pool =
      std::make_unique<std::pmr::unsynchronized_pool_resource>();
  std::vector<Stair> stairs;
  std::vector<double> ranks;              ///< 3 and 4 objectives: the distinct values of objective 1, sorted.
  std::vector<std::uint64_t> marks;       ///< Scratch: the surviving rows as a bitmap, to list them ascending.
  /// 5 objectives (divide and conquer): objectives 1..4 per sorted position, which positions are
  /// found dominated, and the recursion's sets of positions. 3 objectives: `values` holds the
  /// Fenwick tree of least objective 2 over the ranks of objective 1.
  std::vector<double> values;
  std::vector<char> dead;
  std::vector<std::uint32_t> cross_items;
  std::vector<std::uint32_t> cross_doms;
  std::vector<std::uint32_t> cross_cands;
  std::vector<std::uint32_t> cross_all;
};

/// Indices (ascending) of the Pareto-optimal rows of a row-major num_rows x num_objectives table,
/// written into `front` (cleared first); scratch comes from `workspace`. num_rows < 2^32.
void pareto_front(const double* rows, std::size_t num_rows, std::size_t num_objectives,
                  ParetoWorkspace& workspace, std::vector<std::uint32_t>& front);

/// pareto_front with a tie-break column: among rows equal in every objective the survivor is the one
/// with the smallest `tiebreak` value (then the lowest index) instead of the lowest index. Used by
/// the join to keep, for each point of a front that does not minimise peak SRAM, the least SRAM that
/// reaches exactly that point. `tiebreak` has num_rows values; NaN is an internal error.
void pareto_front_tiebreak(const double* rows, std::size_t num_rows, std::size_t num_objectives, const double* tiebreak,
                           ParetoWorkspace& workspace, std::vector<std::uint32_t>& front);

/// Convenience form of pareto_front that allocates its own workspace and result.
std::vector<std::uint32_t> pareto_front(const double* rows, std::size_t num_rows,
                                        std::size_t num_objectives);

}  // namespace npumap::search
