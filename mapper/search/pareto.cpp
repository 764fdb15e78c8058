// Pareto filtering (see pareto.hpp for the contract).
//
// Flow of pareto_front: 0 or 1 rows and 0 or 1 objectives are answered directly. With 2 or more
// objectives, eliminate() makes one pass in index order that (a) rejects NaN, (b) drops every row
// weakly dominated by one of a few running pivots, and (c) moves the rest, with their sort keys,
// into the workspace. Then sweep_2d(), sweep_3d(), sweep_4d() (staircases, see below) or skyline()
// (5+ objectives) orders the remaining rows by a linear extension of dominance and keeps the
// undominated ones, and the indices are sorted ascending.
//
// Why the pieces are correct:
//   * "w weakly dominates r" (w <= r everywhere) with w earlier in index order means r is either
//     dominated or a later duplicate of w; either way r is not in the front. The pivot is always a
//     row already scanned, so the elimination pass may drop on weak dominance alone.
//   * For the skyline the sort key is (sum, objectives lexicographically, index). Floating-point
//     addition with a fixed order is monotone, so w <= r everywhere gives sum(w) <= sum(r), but
//     not strictly (1e20 + 1 == 1e20 + 2): the lexicographic tie-break restores strictness, and the
//     index orders exact duplicates. Hence no row is dominated by a later row in this order, and a
//     row is in the front iff no row kept before it weakly dominates it (a dropped row's dominator
//     chain ends at a kept row, by transitivity).
//   * The pivots are the surviving rows with the smallest sums seen so far: on most data they
//     dominate a large fraction of the table, so the O(n log n) sort runs on few rows. Which rows
//     are pivots never changes the result, only the speed.

#include "mapper/search/pareto.hpp"

#include "mapper/search/radix_sort.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "common/user_error.hpp"

namespace npumap::search {
namespace {

using Entry = ParetoWorkspace::Entry;

// K is the number of objectives when known at compile time (so the loops unroll), 0 otherwise.
template <std::size_t K>
inline std::size_t dims(std::size_t k) {
  if constexpr (K != 0) {
    return K;
  } else {
    return k;
  }
}

// a <= b in every objective.
template <std::size_t K>
inline bool weakly_dominates(const double* a, const double* b, std::size_t k) {
  if constexpr (K != 0) {
    // Branch-free for the small fixed sizes: the comparisons are cheaper than mispredictions.
    bool all = true;
    for (std::size_t j = 0; j < K; ++j) all &= a[j] <= b[j];
    return all;
  } else {
    for (std::size_t j = 0; j < k; ++j) {
      if (!(a[j] <= b[j])) return false;
    }
    return true;
  }
}

template <std::size_t K>
inline double row_sum(const double* r, std::size_t k) {
  double s = 0.0;
  for (std::size_t j = 0; j < dims<K>(k); ++j) s += r[j];
  return s;
}

// The skyline window holds survivors in blocks of kBlock rows stored objective-major (objective j
// of slot s at block[j * kBlock + s]); unused slots hold NaN, which compares false and so never
// dominates.
constexpr std::size_t kBlock = 8;

// Some row of the block is <= r in every objective.
template <std::size_t K>
inline bool block_weakly_dominates(const double* block, const double* r, std::size_t k) {
  bool any = false;
  for (std::size_t s = 0; s < kBlock; ++s) {
    bool all = true;
    for (std::size_t j = 0; j < dims<K>(k); ++j) all &= block[j * kBlock + s] <= r[j];
    any |= all;
  }
  return any;
}

// Last key of every sort: among rows equal in every objective, the smaller tie-break value (when
// there is a tie-break column), then the lower index.
inline bool tie_then_index(const double* tie, std::uint32_t a, std::uint32_t b) {
  if (tie != nullptr) {
    if (tie[a] < tie[b]) return true;
    if (tie[b] < tie[a]) return false;
  }
  return a < b;
}

// Number of pivots in the elimination filter: enough to cover the corner of the table where the
// front lives, few enough that a row surviving them all costs little.
constexpr std::size_t kPivots = 8;

// One pass in index order: NaN check, elimination against the pivots, and the sort keys of the
// survivors ((obj0, obj1) for the 2-D sweep, (sum, obj0) for the skyline). The pivots are the
// kPivots surviving rows with the smallest sums seen so far, tested smallest sum first, since a
// small sum dominates the most on typical data.
template <std::size_t K>
void eliminate(const double* rows, std::size_t n, std::size_t k, const double* tie, std::vector<Entry>& entries) {
  // clear + reserve, not resize: resizing would write all n entries on every call, which costs as
  // much as the whole pass when the pivots drop most rows.
  entries.clear();
  entries.reserve(n);
  const std::size_t d = dims<K>(k);
  const double* pivot[kPivots];
  std::uint32_t pivot_index[kPivots];
  double pivot_sum[kPivots];
  std::size_t pivots = 0;
  // Tables whose rows are mostly undominated (the join prunes rows its dominance filter let through)
  // lose little to the pivots: when they drop less than a quarter of the first kProbeRows rows, the
  // rest are not tested (the sweeps find the front on their own; only the speed changes).
  constexpr std::size_t kProbeRows = 1024;
  const auto step = [&](std::size_t i, auto use_pivots) {
    const double* r = rows + i * d;
    const double s = row_sum<K>(r, k);
    // NaN anywhere in the row, or +inf and -inf together, makes the sum NaN.
    NPUMAP_ASSERT(!std::isnan(s));
    NPUMAP_ASSERT(tie == nullptr || !std::isnan(tie[i]));
    if constexpr (use_pivots) {
      for (std::size_t p = 0; p < pivots; ++p) {
        if (weakly_dominates<K>(pivot[p], r, k)) {
          // An exact duplicate of the pivot with a smaller tie-break value is the one to keep.
          if (tie != nullptr && tie[i] < tie[pivot_index[p]] && weakly_dominates<K>(r, pivot[p], k)) continue;
          return;
        }
      }
    }
    if (d <= 5) {
      entries.push_back(Entry{r[0], r[1], static_cast<std::uint32_t>(i)});
    } else {
      entries.push_back(Entry{s, r[0], static_cast<std::uint32_t>(i)});
    }
    if constexpr (use_pivots) {
      if (pivots < kPivots || s < pivot_sum[kPivots - 1]) {
        // Insert in ascending sum order, dropping the largest when full.
        std::size_t p = pivots < kPivots ? pivots++ : kPivots - 1;
        for (; p > 0 && s < pivot_sum[p - 1]; --p) {
          pivot[p] = pivot[p - 1];
          pivot_index[p] = pivot_index[p - 1];
          pivot_sum[p] = pivot_sum[p - 1];
        }
        pivot[p] = r;
        pivot_index[p] = static_cast<std::uint32_t>(i);
        pivot_sum[p] = s;
      }
    }
  };
  const std::size_t probe = std::min(n, kProbeRows);
  for (std::size_t i = 0; i < probe; ++i) step(i, std::true_type{});
  if (probe == kProbeRows && 4 * (probe - entries.size()) < probe) {
    for (std::size_t i = probe; i < n; ++i) step(i, std::false_type{});
  } else {
    for (std::size_t i = probe; i < n; ++i) step(i, std::true_type{});
  }
}

// The rows that survive elimination are sorted by their full order, which starts with key0
// (mapper/search/radix_sort.hpp).
template <typename Less>
void sort_entries(std::vector<Entry>& entries, std::vector<Entry>& buffer, const Less& less) {
  sort_by_key_then(entries, buffer, [](const Entry& e) { return e.key0; }, less);
}

void sweep_2d(std::vector<Entry>& entries, std::vector<Entry>& buffer, const double* tie, std::vector<std::uint32_t>& front) {
  sort_entries(entries, buffer, [tie](const Entry& a, const Entry& b) {
    if (a.key0 < b.key0) return true;
    if (b.key0 < a.key0) return false;
    if (a.key1 < b.key1) return true;
    if (b.key1 < a.key1) return false;
    return tie_then_index(tie, a.index, b.index);
  });
  // Every earlier row has obj0 <= this row's, so this row survives iff its obj1 is strictly below
  // all earlier obj1 values; an equal obj1 means an earlier row weakly dominates it.
  double best = 0.0;
  bool first = true;
  for (const Entry& e : entries) {
    if (first || e.key1 < best) {
      front.push_back(e.index);
      best = e.key1;
      first = false;
    }
  }
}

// The skyline window is split by a pivot vector p (each objective's median among the rows to
// filter): a row's mask has bit j set when its objective j is >= p[j] (for the first kMaskBits
// objectives). If q <= x everywhere and x[j] < p[j], then q[j] < p[j]: the mask of a weak dominator
// of x is a subset of x's mask. So x is compared only with the survivors in the windows of the
// submasks of its own mask, which on fronts that trade objectives off is a small part of them. Any
// pivot is correct; the medians split the rows evenly.
constexpr std::size_t kMaskBits = 6;

template <std::size_t K>
void skyline(const double* rows, std::size_t k, const double* tie, ParetoWorkspace& ws,
             std::vector<std::uint32_t>& front) {
  const std::size_t d = dims<K>(k);
  std::sort(ws.entries.begin(), ws.entries.end(), [rows, d, tie](const Entry& a, const Entry& b) {
    if (a.key0 < b.key0) return true;
    if (b.key0 < a.key0) return false;
    if (a.key1 < b.key1) return true;
    if (b.key1 < a.key1) return false;
    // key1 is objective 0; continue the lexicographic comparison from objective 1.
    const double* ra = rows + static_cast<std::size_t>(a.index) * d;
    const double* rb = rows + static_cast<std::size_t>(b.index) * d;
    for (std::size_t j = 1; j < d; ++j) {
      if (ra[j] < rb[j]) return true;
      if (rb[j] < ra[j]) return false;
    }
    return tie_then_index(tie, a.index, b.index);
  });

  const std::size_t bits = std::min(d, kMaskBits);
  double pivot[kMaskBits];
  for (std::size_t j = 0; j < bits; ++j) {
    ws.medians.clear();
    for (const Entry& e : ws.entries) ws.medians.push_back(rows[static_cast<std::size_t>(e.index) * d + j]);
    auto mid = ws.medians.begin() + static_cast<std::ptrdiff_t>(ws.medians.size() / 2);
    std::nth_element(ws.medians.begin(), mid, ws.medians.end());
    pivot[j] = ws.medians.empty() ? 0.0 : *mid;
  }
  const std::size_t num_windows = std::size_t{1} << bits;
  if (ws.windows.size() < num_windows) ws.windows.resize(num_windows);
  for (std::size_t w = 0; w < num_windows; ++w) ws.windows[w].clear();
  ws.window_sizes.assign(num_windows, 0);
  ws.window_rows.clear();
  for (const Entry& e : ws.entries) {
    const double* r = rows + static_cast<std::size_t>(e.index) * d;
    std::size_t mask = 0;
    for (std::size_t j = 0; j < bits; ++j) mask |= static_cast<std::size_t>(r[j] >= pivot[j]) << j;
    bool dropped = false;
    // Every submask of the mask, the mask itself first, 0 last.
    for (std::size_t sub = mask;; sub = (sub - 1) & mask) {
      const std::vector<double>& window = ws.windows[sub];
      const double* block = window.data();
      const double* end = block + window.size();
      // Oldest survivors first: they have the smallest sums and dominate the most. A whole block is
      // tested without early exit so the compiler can vectorise the comparisons.
      for (; block != end && !dropped; block += d * kBlock) {
        dropped = block_weakly_dominates<K>(block, r, k);
      }
      if (dropped || sub == 0) break;
    }
    if (!dropped) {
      std::vector<double>& window = ws.windows[mask];
      const std::size_t slot = ws.window_sizes[mask] % kBlock;
      if (slot == 0) window.resize(window.size() + d * kBlock, std::numeric_limits<double>::quiet_NaN());
      double* last = window.data() + window.size() - d * kBlock;
      for (std::size_t j = 0; j < d; ++j) last[j * kBlock + slot] = r[j];
      ++ws.window_sizes[mask];
      ws.window_rows.push_back(e.index);
    }
  }
  front.assign(ws.window_rows.begin(), ws.window_rows.end());
}

// ---- 3 and 4 objectives: lexicographic sweep with staircases ----------------------------------
//
// Rows are taken in lexicographic order (obj0, obj1, ..., index). A row's weak dominators all come
// before it in that order (an exact duplicate with a lower index too), so a row is in the front iff
// no survivor taken before it is <= it in the remaining objectives (a dropped row's dominator chain
// ends at a survivor, by transitivity). "Some survivor q has q1 <= x and q2 <= y" is a query on a
// staircase: the survivors' (q1, q2) with q1 ascending and q2 strictly descending, so the entry with
// the largest q1 <= x has the smallest q2 among all q1 <= x. A point weakly dominated within a
// staircase is never needed there, so insertion drops what the new point dominates.

using Stair = ParetoWorkspace::Stair;

/// Some (a, b) of the staircase has a <= x and b <= y.
inline bool stair_covers(const Stair& st, double x, double y) {
  // The entry with the largest a <= x.
  if (!st.in_tree) {
    const auto it = std::upper_bound(st.flat.begin(), st.flat.end(), x,
                                     [](double v, const std::pair<double, double>& e) { return v < e.first; });
    return it != st.flat.begin() && std::prev(it)->second <= y;
  }
  auto it = st.tree.upper_bound({x, std::numeric_limits<double>::infinity()});
  return it != st.tree.begin() && std::prev(it)->second <= y;
}

/// Adds (x, y), which the staircase does not cover; drops the entries (x, y) covers (they follow it:
/// a >= x, and b >= y from there on until the first b < y).
inline void stair_add(Stair& st, double x, double y) {
  if (!st.in_tree) {
    auto from = std::lower_bound(st.flat.begin(), st.flat.end(), x,
                                 [](const std::pair<double, double>& e, double v) { return e.first < v; });
    auto to = from;
    while (to != st.flat.end() && to->second >= y) ++to;
    if (from == to) {
      st.flat.insert(from, {x, y});
    } else {
      *from = {x, y};
      st.flat.erase(from + 1, to);
    }
    if (st.flat.size() <= Stair::kFlatMax) return;
    for (const auto& e : st.flat) st.tree.emplace_hint(st.tree.end(), e);
    st.flat.clear();
    st.in_tree = true;
    return;
  }
  auto it = st.tree.lower_bound({x, -std::numeric_limits<double>::infinity()});
  while (it != st.tree.end() && it->second >= y) it = st.tree.erase(it);
  st.tree.emplace_hint(it, x, y);
}

/// Adds (x, y) unless the staircase already covers it.
inline void stair_insert(Stair& st, double x, double y) {
  if (!stair_covers(st, x, y)) stair_add(st, x, y);
}

/// `count` empty staircases whose nodes come from the workspace's pool.
void reset_stairs(ParetoWorkspace& ws, std::size_t count) {
  for (Stair& st : ws.stairs) {
    st.flat.clear();
    st.tree.clear();
    st.in_tree = false;
  }
  while (ws.stairs.size() < count) ws.stairs.emplace_back(ws.pool.get());
}

template <std::size_t K>
void sort_lexicographic(const double* rows, const double* tie, std::vector<Entry>& entries, std::vector<Entry>& buffer) {
  // key0, key1 are objectives 0 and 1.
  sort_entries(entries, buffer, [rows, tie](const Entry& a, const Entry& b) {
    if (a.key0 < b.key0) return true;
    if (b.key0 < a.key0) return false;
    if (a.key1 < b.key1) return true;
    if (b.key1 < a.key1) return false;
    const double* ra = rows + static_cast<std::size_t>(a.index) * K;
    const double* rb = rows + static_cast<std::size_t>(b.index) * K;
    for (std::size_t j = 2; j < K; ++j) {
      if (ra[j] < rb[j]) return true;
      if (rb[j] < ra[j]) return false;
    }
    return tie_then_index(tie, a.index, b.index);
  });
}

void sweep_3d(const double* rows, const double* tie, ParetoWorkspace& ws, std::vector<std::uint32_t>& front) {
  sort_lexicographic<3>(rows, tie, ws.entries, ws.sort_buffer);
  reset_stairs(ws, 1);
  Stair& st = ws.stairs[0];
  for (const Entry& e : ws.entries) {
    const double* r = rows + static_cast<std::size_t>(e.index) * 3;
    if (stair_covers(st, r[1], r[2])) continue;
    stair_add(st, r[1], r[2]);
    front.push_back(e.index);
  }
}

void sweep_4d(const double* rows, const double* tie, ParetoWorkspace& ws, std::vector<std::uint32_t>& front) {
  sort_lexicographic<4>(rows, tie, ws.entries, ws.sort_buffer);
  // A Fenwick tree over the ranks of objective 1: node i holds the staircase of (obj2, obj3) of the
  // survivors whose obj1 rank lies in (i - lowbit(i), i], so a prefix of ranks is O(log n) nodes.
  ws.ranks.clear();
  for (const Entry& e : ws.entries) ws.ranks.push_back(e.key1);
  std::sort(ws.ranks.begin(), ws.ranks.end());
  ws.ranks.erase(std::unique(ws.ranks.begin(), ws.ranks.end(), [](double a, double b) { return !(a < b) && !(b < a); }),
                 ws.ranks.end());
  const std::size_t m = ws.ranks.size();
  reset_stairs(ws, m + 1);
  for (const Entry& e : ws.entries) {
    const double* r = rows + static_cast<std::size_t>(e.index) * 4;
    // 1-based rank of obj1; equal values (also -0.0 and +0.0) share a rank.
    const std::size_t rank =
        static_cast<std::size_t>(std::lower_bound(ws.ranks.begin(), ws.ranks.end(), r[1]) - ws.ranks.begin()) + 1;
    bool covered = false;
    for (std::size_t i = rank; i > 0 && !covered; i -= i & (~i + 1)) covered = stair_covers(ws.stairs[i], r[2], r[3]);
    if (covered) continue;
    for (std::size_t i = rank; i <= m; i += i & (~i + 1)) stair_insert(ws.stairs[i], r[2], r[3]);
    front.push_back(e.index);
  }
}

// ---- 5 objectives: divide and conquer ---------------------------------------------------------
//
// After the lexicographic sort, every weak dominator of a row lies before it, and every row before
// it has objective 0 <= its objective 0. So the row at position p is in the front iff no row at a
// position q < p has objectives 1..4 <= p's (q need not be a survivor: a dropped row's dominator
// lies before it too). That is offline dominance in four objectives plus the position, solved by
// divide and conquer (Bentley's multidimensional divide and conquer):
//   * positions [lo, hi): the first half, then the pairs (first half, second half), then the second
//     half; rows found dominated take no further part, as dominators or as candidates;
//   * the pairs are 4-D dominance between a set A of dominators and a set B of candidates: the union
//     sorted by objective 1 (a dominator before a candidate on equal values) is split in halves, each
//     half recurses, and the pairs across the split (A of the first half, B of the second) are 3-D:
//     sorted by objective 2 and swept with a staircase of (objective 3, objective 4).
// O(n log^3 n) where the sort-filter skyline is O(n x front); small sets are compared directly.

/// The recursion of sweep_5d over sorted positions. An item of a cross step is a position, with
/// kQuery set for a candidate (a position of the second half) and clear for a dominator.
struct Offline5 {
  static constexpr std::uint32_t kQuery = 1u << 31;
  /// Positions per brute-force leaf of the outer recursion.
  static constexpr std::size_t kLeaf = 32;
  /// Pairs (dominators x candidates) at or below which a cross step compares directly.
  static constexpr std::size_t kDirectPairs = 256;

  const double* v;            // objectives 1..4 of each position, 4 per position
  std::vector<char>& dead;    // per position: found dominated
  ParetoWorkspace& ws;

  bool le(std::uint32_t a, std::uint32_t b) const {
    const double* x = v + static_cast<std::size_t>(a) * 4;
    const double* y = v + static_cast<std::size_t>(b) * 4;
    return x[0] <= y[0] && x[1] <= y[1] && x[2] <= y[2] && x[3] <= y[3];
  }

  void direct(const std::uint32_t* doms, std::size_t num_doms, const std::uint32_t* cands, std::size_t num_cands) const {
    for (std::size_t c = 0; c < num_cands; ++c) {
      const std::uint32_t b = cands[c] & ~kQuery;
      if (dead[b]) continue;
      for (std::size_t d = 0; d < num_doms; ++d) {
        if (le(doms[d], b)) {
          dead[b] = 1;
          break;
        }
      }
    }
  }

  /// Dominators of items[lo, mid) against candidates of items[mid, hi), which all have objective 1
  /// at least theirs: 3-D dominance in objectives 2..4.
  void cross3(const std::vector<std::uint32_t>& items, std::size_t lo, std::size_t mid, std::size_t hi) {
    std::vector<std::uint32_t>& doms = ws.cross_doms;
    std::vector<std::uint32_t>& cands = ws.cross_cands;
    doms.clear();
    cands.clear();
    for (std::size_t i = lo; i < mid; ++i) {
      if (!(items[i] & kQuery)) doms.push_back(items[i]);
    }
    if (doms.empty()) return;
    for (std::size_t i = mid; i < hi; ++i) {
      if ((items[i] & kQuery) && !dead[items[i] & ~kQuery]) cands.push_back(items[i]);
    }
    if (cands.empty()) return;
    if (doms.size() * cands.size() <= kDirectPairs) {
      direct(doms.data(), doms.size(), cands.data(), cands.size());
      return;
    }
    std::vector<std::uint32_t>& all = ws.cross_all;
    all.assign(doms.begin(), doms.end());
    all.insert(all.end(), cands.begin(), cands.end());
    const double* val = v;
    std::sort(all.begin(), all.end(), [val](std::uint32_t a, std::uint32_t b) {
      const double x = val[static_cast<std::size_t>(a & ~kQuery) * 4 + 1];
      const double y = val[static_cast<std::size_t>(b & ~kQuery) * 4 + 1];
      if (x < y) return true;
      if (y < x) return false;
      return (a & kQuery) < (b & kQuery);  // a dominator first
    });
    reset_stairs(ws, 1);
    Stair& st = ws.stairs[0];
    for (std::uint32_t item : all) {
      const std::uint32_t p = item & ~kQuery;
      const double* r = v + static_cast<std::size_t>(p) * 4;
      if (item & kQuery) {
        if (stair_covers(st, r[2], r[3])) dead[p] = 1;
      } else {
        stair_insert(st, r[2], r[3]);
      }
    }
  }

  /// items[lo, hi) sorted by (objective 1, dominator first): every dominator against every candidate.
  void cross4(std::vector<std::uint32_t>& items, std::size_t lo, std::size_t hi) {
    std::size_t num_doms = 0;
    std::size_t num_cands = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      if (items[i] & kQuery) {
        num_cands += dead[items[i] & ~kQuery] ? 0 : 1;
      } else {
        ++num_doms;
      }
    }
    if (num_doms == 0 || num_cands == 0) return;
    if (num_doms * num_cands <= kDirectPairs) {
      std::vector<std::uint32_t>& doms = ws.cross_doms;
      std::vector<std::uint32_t>& cands = ws.cross_cands;
      doms.clear();
      cands.clear();
      for (std::size_t i = lo; i < hi; ++i) (items[i] & kQuery ? cands : doms).push_back(items[i]);
      direct(doms.data(), doms.size(), cands.data(), cands.size());
      return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    cross4(items, lo, mid);
    cross3(items, lo, mid, hi);
    cross4(items, mid, hi);
  }

  void solve(std::size_t lo, std::size_t hi) {
    if (hi - lo <= kLeaf) {
      for (std::size_t i = lo; i < hi; ++i) {
        if (dead[i]) continue;
        for (std::size_t j = lo; j < i; ++j) {
          if (!dead[j] && le(static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(i))) {
            dead[i] = 1;
            break;
          }
        }
      }
      return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    solve(lo, mid);
    std::vector<std::uint32_t>& items = ws.cross_items;
    items.clear();
    for (std::size_t p = lo; p < mid; ++p) {
      if (!dead[p]) items.push_back(static_cast<std::uint32_t>(p));
    }
    const std::size_t num_doms = items.size();
    for (std::size_t p = mid; p < hi; ++p) {
      if (!dead[p]) items.push_back(static_cast<std::uint32_t>(p) | kQuery);
    }
    if (num_doms > 0 && items.size() > num_doms) {
      const double* val = v;
      std::sort(items.begin(), items.end(), [val](std::uint32_t a, std::uint32_t b) {
        const double x = val[static_cast<std::size_t>(a & ~kQuery) * 4];
        const double y = val[static_cast<std::size_t>(b & ~kQuery) * 4];
        if (x < y) return true;
        if (y < x) return false;
        return (a & kQuery) < (b & kQuery);  // a dominator first
      });
      cross4(items, 0, items.size());
    }
    solve(mid, hi);
  }
};

void sweep_5d(const double* rows, const double* tie, ParetoWorkspace& ws, std::vector<std::uint32_t>& front) {
  sort_lexicographic<5>(rows, tie, ws.entries, ws.sort_buffer);
  const std::size_t m = ws.entries.size();
  NPUMAP_ASSERT(m < Offline5::kQuery);
  ws.values.resize(m * 4);
  for (std::size_t p = 0; p < m; ++p) {
    const double* r = rows + static_cast<std::size_t>(ws.entries[p].index) * 5;
    for (std::size_t j = 0; j < 4; ++j) ws.values[p * 4 + j] = r[j + 1];
  }
  ws.dead.assign(m, 0);
  Offline5{ws.values.data(), ws.dead, ws}.solve(0, m);
  for (std::size_t p = 0; p < m; ++p) {
    if (!ws.dead[p]) front.push_back(ws.entries[p].index);
  }
}

template <std::size_t K>
void front_nd(const double* rows, std::size_t n, std::size_t k, const double* tie, ParetoWorkspace& ws,
              std::vector<std::uint32_t>& front) {
  eliminate<K>(rows, n, k, tie, ws.entries);
  if (dims<K>(k) == 2) {
    sweep_2d(ws.entries, ws.sort_buffer, tie, front);
  } else if (dims<K>(k) == 3) {
    sweep_3d(rows, tie, ws, front);
  } else if (dims<K>(k) == 4) {
    sweep_4d(rows, tie, ws, front);
  } else if (dims<K>(k) == 5) {
    sweep_5d(rows, tie, ws, front);
  } else {
    skyline<K>(rows, k, tie, ws, front);
  }
  if (front.size() <= 64) {
    std::sort(front.begin(), front.end());
    return;
  }
  // Ascending by a bitmap of the n rows: O(n / 64 + front) instead of a sort.
  ws.marks.assign((n + 63) / 64, 0);
  for (std::uint32_t i : front) ws.marks[i / 64] |= std::uint64_t{1} << (i % 64);
  front.clear();
  for (std::size_t w = 0; w < ws.marks.size(); ++w) {
    for (std::uint64_t bits = ws.marks[w]; bits != 0; bits &= bits - 1) {
      front.push_back(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    }
  }
}

/// Both public forms: `tie` (num_rows values, or nullptr) orders rows equal in every objective
/// before their index does.
void front_with_tiebreak(const double* rows, std::size_t num_rows, std::size_t num_objectives, const double* tie,
                         ParetoWorkspace& workspace, std::vector<std::uint32_t>& front) {
  front.clear();
  NPUMAP_ASSERT(num_rows <= std::numeric_limits<std::uint32_t>::max());
  if (num_rows == 0) return;
  if (tie != nullptr) {
    for (std::size_t i = 0; i < num_rows; ++i) NPUMAP_ASSERT(!std::isnan(tie[i]));
  }
  if (num_objectives == 0) {
    // Every row equals every other: the first in (tie-break, index) order.
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < num_rows; ++i) {
      if (tie_then_index(tie, i, best)) best = i;
    }
    front.push_back(best);
    return;
  }
  NPUMAP_ASSERT(rows != nullptr);
  if (num_objectives == 1) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < num_rows; ++i) {
      NPUMAP_ASSERT(!std::isnan(rows[i]));
      // strict: among equal minima the smallest tie-break value, then the lowest index
      if (rows[i] < rows[best] || (rows[i] == rows[best] && tie_then_index(tie, static_cast<std::uint32_t>(i),
                                                                             static_cast<std::uint32_t>(best)))) {
        best = i;
      }
    }
    front.push_back(static_cast<std::uint32_t>(best));
    return;
  }
  switch (num_objectives) {
    case 2:
      front_nd<2>(rows, num_rows, 2, tie, workspace, front);
      break;
    case 3:
      front_nd<3>(rows, num_rows, 3, tie, workspace, front);
      break;
    case 4:
      front_nd<4>(rows, num_rows, 4, tie, workspace, front);
      break;
    case 5:  // four objectives and an open cascade's SRAM in the join
      front_nd<5>(rows, num_rows, 5, tie, workspace, front);
      break;
    default:
      front_nd<0>(rows, num_rows, num_objectives, tie, workspace, front);
      break;
  }
}

}  // namespace

void pareto_front(const double* rows, std::size_t num_rows, std::size_t num_objectives,
                  ParetoWorkspace& workspace, std::vector<std::uint32_t>& front) {
  front_with_tiebreak(rows, num_rows, num_objectives, nullptr, workspace, front);
}

void pareto_front_tiebreak(const double* rows, std::size_t num_rows, std::size_t num_objectives, const double* tiebreak,
                           ParetoWorkspace& workspace, std::vector<std::uint32_t>& front) {
  front_with_tiebreak(rows, num_rows, num_objectives, tiebreak, workspace, front);
}

std::vector<std::uint32_t> pareto_front(const double* rows, std::size_t num_rows,
                                        std::size_t num_objectives) {
  ParetoWorkspace workspace;
  std::vector<std::uint32_t> front;
  pareto_front(rows, num_rows, num_objectives, workspace, front);
  return front;
}

}  // namespace npumap::search
