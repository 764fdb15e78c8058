// The join: from per-layer Pareto groups to the Pareto front of whole-network mappings.
//
// State after step s is a set of *left groups*. A left group is keyed by the compatibility of every
// tensor still live (produced or introduced, with a consumer still to come, or a network output),
// and holds rows of partial mappings of layers 0..s with columns
//   cycles, off-chip bytes, energy   sums over the layers so far
//   peak SRAM                        max over the steps so far of the SRAM in use
//   cascade SRAM                     while a cascade (a chain of layers fused through rolling
//                                    buffers) is open: what stays reserved until it closes: the
//                                    transient SRAM of its members, its resolved rolling buffers
//                                    and the tensors its members finished reading
// Everything else that can affect later layers is a function of the key, so two rows with the same
// key compare on these columns alone and Pareto pruning is exact: later steps add to the sums and
// take maxima, both monotone.
//
// SRAM in use while layer L runs = every live tensor resident in SRAM (whole tensors: in SRAM, or in
// the arena when the arena is SRAM) + L's own transient reservation (weight and bias copies) + the
// open cascade's SRAM. Inside a cascade the layers run interleaved, so tensors whose last consumer is
// a cascade member stay reserved until the cascade closes (their bytes move from the key into the
// cascade column, so keys stay few), and a rolling buffer, whose
// height needs both the producer's and the consumer's block heights, is counted from the consumer's
// step on; the consumer's step then sees at least the producer's usage plus the buffer, so the peak
// is exact. A network input is reserved from its first consumer on.
//
// Per step: left groups are bucketed by their compatibility restricted to the tensors the layer
// reads that are already live (which tensors those are depends only on the step, so every left
// group is bucketed on the same positions); each matching (left group, layer group) pair merges row
// by row, rows over the SRAM capacity are dropped, new groups are Pareto-filtered, and look-ahead
// drops groups holding a tensor whose later consumer has no group that could accept it.

#include "mapper/search/join.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <spdlog/spdlog.h>

#include "common/user_error.hpp"
#include "mapper/search/dominance_filter.hpp"
#include "mapper/search/pareto.hpp"
#include "mapper/search/sorted_search.hpp"
#include "model/geometry.hpp"

namespace npumap::search {
namespace {

constexpr std::uint32_t kNoTrace = std::numeric_limits<std::uint32_t>::max();

/// One live tensor in a left group's key.
struct LiveEntry {
  int tensor = 0;
  TensorCompat compat;
  bool dead = false;  ///< finished; kept only when collapsing is off; reserves nothing, matches nothing
  friend auto operator<=>(const LiveEntry&, const LiveEntry&) = default;
  friend bool operator==(const LiveEntry&, const LiveEntry&) = default;
};
using LiveKey = std::vector<LiveEntry>;

struct JoinRow {
  double cycles = 0.0;
  double offchip = 0.0;
  double energy = 0.0;
  double peak = 0.0;
  double cascade = 0.0;
  std::uint32_t trace = kNoTrace;

  /// The row's value in a join column.
  double value(Column c) const {
    switch (c) {
      case Column::Cycles: return cycles;
      case Column::OffchipBytes: return offchip;
      case Column::Sram: return peak;
      case Column::Energy: return energy;
      case Column::CascadeSram: return cascade;
    }
    return 0.0;
  }
};

/// A merged row before pruning: its columns and where it came from.
struct PendingRow {
  JoinRow row;
  std::uint32_t parent = kNoTrace;
  std::uint32_t group = 0;
  std::uint32_t member = 0;
  bool bound_checked = false;  ///< passed the incumbent bound of its step
};

/// Rows a merge has produced so far, with its counters and pruning scratch.
/// Rows merged into an empty table before its first pruning (which also builds the dominance filter).
constexpr std::size_t kFirstPrune = 1024;
/// Pruning columns up to which the dominance filter is used. With 4 or more (three objectives and an
/// open cascade, four objectives) its level grid misses most dominating rows and its upkeep costs more
/// than it saves (measured: MobileNet-V2, cycles/offchip/sram, 3.5 s without it there, 4.5 s with).
constexpr std::size_t kFilterColumns = 3;
/// Left rows per group sampled (evenly in cycles order) for the dominance filter's pilot.
constexpr std::size_t kPilotRows = 16;
/// Rows a quick pass keeps per step at most (more keys: fewer rows per key, down to kQuickMinRows). The
/// unrolled LSTMs reach 1,024 keys of 64 rows, and their quick pass took two thirds of the run; with
/// this budget (measured, 2 threads, ethos-u65-256): basic_lstm small 4.3-4.5 -> 3.65 s, medium
/// 4.6 -> 3.9 s, ssd_slim 2.16 -> 1.25 s; yolo-fastest, the zoo and the three- and four-objective runs
/// within noise (16,384 made yolo-fastest_1.1_320 slower: its exact pass lost incumbents).
constexpr std::size_t kQuickStepRows = std::size_t{1} << 15;
constexpr std::size_t kQuickMinRows = 4;
/// Keys a quick pass keeps per step at most (those holding the best rows). Measured (2 threads,
/// ethos-u65-256): basic_lstm small and medium 2.8-3.1 s -> 1.7-1.8 s (quick pass 1.2 s -> 0.4 s),
/// ssd_slim 0.9 -> 0.7 s; yolo-fastest and the zoo's three- and four-objective runs within noise
/// (16 and 32: ssd_slim's exact pass slower; 128 and 256: the LSTMs' quick pass 0.75-0.95 s).
constexpr std::size_t kQuickMaxKeys = 64;
/// Points of the remaining layers' lower-bound set (incumbent bound, two summed objectives).
constexpr std::size_t kRestPoints = 32;
/// (Key, SRAM interval) pairs over all steps up to which the key bound is used: each holds a set of up
/// to kRestPoints points, so this caps its memory (more: the rest sets alone bound the pass).
constexpr std::size_t kMaxBoundSets = std::size_t{1} << 19;
/// Rows the quick pass before paired per (key, interval) set from which the key bound is automatic.
constexpr std::uint64_t kKeyBoundRowsPerSet = 400;
/// Candidate rows (left rows times layer rows over a key's pairs) from which a key's own bound is used.
constexpr std::size_t kKeyBoundMinRows = std::size_t{1} << 14;
/// Steps the cascade clamp looks ahead through an open cascade (docs/design/search.md "Cascade clamp").
constexpr int kMaxAhead = 4;
/// Consecutive left rows whose least values are checked together before their merges.
constexpr std::uint32_t kLeastBlock = 16;
/// Left groups with fewer rows than this are not sampled for the pilot.
constexpr std::size_t kPilotMinRows = 4 * kPilotRows;

struct MergeAcc {
  std::vector<PendingRow> rows;
  std::uint64_t paired = 0;
  std::uint64_t over_capacity = 0;
  std::uint64_t dropped = 0;  ///< dominated: by pruning or by the incumbent bound
  std::uint64_t stored = 0;   ///< rows pushed into `rows` (the others were dropped as they were merged)
  std::size_t threshold = kFirstPrune;
  DominanceFilter filter;  ///< snapshot of the rows after the last pruning, to skip rows it dominates
};

/// Scratch memory of a pruning (and of a dominance filter's snapshot), one per thread: keys are many
/// and often small (the unrolled LSTMs: about 100k keys per pass), and allocating it per key cost
/// more than using it. Nothing in it outlives one pruning, so which thread's scratch serves a key
/// cannot change a result.
struct PruneScratch {
  ParetoWorkspace ws;
  std::vector<std::uint32_t> keep;
  std::vector<double> tab;
  std::vector<double> tie;
  std::vector<double> scratch_a;  ///< the cascade clamp's tie-break ranks
  std::vector<double> scratch_b;
};

PruneScratch& prune_scratch() {
  static thread_local PruneScratch scratch;
  return scratch;
}

/// The least values of a layer group's rows, and their own SRAM sorted, for the dominance filter.
struct RowSummary {
  double cycles = 0.0;
  double offchip = 0.0;
  double energy = 0.0;
  double sram_bytes = 0.0;
  std::vector<double> sorted_sram;
  /// Per row, the row of the same group that dominates it in every summed objective (below in one,
  /// at most in the others) with the least own SRAM, or kNoSibling (the sibling bound).
  std::vector<std::uint32_t> sibling;
};
constexpr std::uint32_t kNoSibling = std::numeric_limits<std::uint32_t>::max();

/// Left rows [begin, end) of one (left group, layer group) pair of a key.
struct MergeUnit {
  std::uint32_t pair;
  std::uint32_t begin;
  std::uint32_t end;
};

/// A matching (left group, layer group) pair of a step and what the pair reserves.
struct PairTask {
  std::uint32_t left = 0;
  std::uint32_t right = 0;
  double full_bytes = 0.0;     // whole tensors resident in SRAM while the layer runs
  double rolling_bytes = 0.0;  // the rolling buffer this layer closes, if any
  double held_bytes = 0.0;     // finished tensors that stay reserved until the cascade closes
  bool input_rolling = false;
  bool output_rolling = false;
};

/// Merged rows per unit of parallel work.
constexpr std::size_t kUnitRows = std::size_t{1} << 16;

struct TraceNode {
  std::uint32_t parent;
  std::uint32_t group;
  std::uint32_t row;
};

struct LeftGroup {
  LiveKey key;
  std::vector<JoinRow> rows;
};

const LiveEntry* find_live(const LiveKey& key, int tensor) {
  auto it = std::lower_bound(key.begin(), key.end(), tensor, [](const LiveEntry& e, int t) { return e.tensor < t; });
  if (it == key.end() || it->tensor != tensor || it->dead) return nullptr;
  return &*it;
}

void insert_live(LiveKey& key, const LiveEntry& entry) {
  auto it = std::lower_bound(key.begin(), key.end(), entry.tensor,
                             [](const LiveEntry& e, int t) { return e.tensor < t; });
  key.insert(it, entry);
}

/// A hash of a key, for grouping a step's pairs by the key they produce.
struct LiveKeyHash {
  std::size_t operator()(const LiveKey& key) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (const LiveEntry& e : key) {
      const std::uint64_t v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.tensor)) |
                              static_cast<std::uint64_t>(e.compat.residence) << 32 |
                              static_cast<std::uint64_t>(e.compat.layout) << 36 |
                              static_cast<std::uint64_t>(e.compat.rows) << 40 |
                              static_cast<std::uint64_t>(static_cast<std::uint8_t>(e.compat.over_input)) << 56 |
                              static_cast<std::uint64_t>(e.dead) << 63;
      h = (h ^ v) * 0x100000001b3ull;
      h ^= h >> 29;
    }
    return static_cast<std::size_t>(h);
  }
};

/// Bit (residence, layout) for look-ahead masks.
unsigned compat_bit(const TensorCompat& c) {
  return 1u << (static_cast<unsigned>(c.residence) * 2 + static_cast<unsigned>(c.layout));
}

}  // namespace

std::int64_t rolling_buffer_bytes(const JoinTensor& t, int producer_rows, int consumer_rows) {
  NPUMAP_ASSERT(producer_rows > 0 && consumer_rows > 0);
  const std::int64_t height = (consumer_rows + producer_rows + producer_rows - 1) / producer_rows * producer_rows;
  const std::int64_t rows = std::min<std::int64_t>(t.height, height);
  const std::int64_t channels = (t.channels + 15) / 16 * 16;
  return model::round_up(rows * t.width * channels * t.element_bytes, 16);
}

std::int64_t reserved_bytes(const JoinTensor& t, const TensorCompat& c, bool arena_is_sram) {
  if (t.constant) return 0;
  switch (c.residence) {
    case Residence::Arena:
      if (!arena_is_sram) return 0;
      [[fallthrough]];
    case Residence::Sram:
      return c.layout == Layout::Nhcwb16 ? t.nhcwb16_bytes : t.linear_bytes;
    case Residence::Rolling:
      return 0;  // counted through the cascade column once both block heights are known
  }
  return 0;
}

JoinCounts JoinResult::totals() const {
  JoinCounts t;
  for (const JoinStepStats& st : steps) {
    t.rows_paired += st.rows_paired;
    t.over_capacity += st.dropped_sram_capacity;
    t.dominated += st.dropped_dominated;
    t.incompatible += st.rows_dropped_incompatible;
  }
  return t;
}

double FrontPoint::objective(Objective o) const {
  switch (o) {
    case Objective::Cycles: return cycles;
    case Objective::OffchipBytes: return offchip_bytes;
    case Objective::Sram: return peak_sram_bytes;
    case Objective::Energy: return energy_pj;
  }
  return 0.0;
}

namespace {

/// Rows per key of the quick passes whose fronts bound the exact pass. With two objectives one pass
/// of 64 comes close enough to the front; with three or four, 32 then 256 (measured, 2 threads:
/// yolo-fastest_1.1_320 on ethos-u55-256 1.70 s with {64}, 2.07 s with {32, 256}; MobileNet-V2 with
/// cycles, off-chip bytes and SRAM 4.25 s with {64}, 3.16 s with {32, 256}).
const std::vector<std::size_t>& quick_beams(std::size_t num_objectives) {
  static const std::vector<std::size_t> two{64};
  static const std::vector<std::size_t> more{32, 256};
  return num_objectives <= 2 ? two : more;
}

/// Objective values of complete mappings (row-major, one row per mapping, the problem's objectives in
/// order) that bound the exact join.
struct Incumbents {
  std::size_t k = 0;
  std::vector<double> values;
  /// Only complete mappings whose first objective is at most this are wanted (join_best): a row
  /// every completion of which exceeds it is dropped as if an incumbent dominated it.
  double cap = std::numeric_limits<double>::infinity();
  std::size_t size() const { return k == 0 ? 0 : values.size() / k; }
  bool bounds_anything() const { return size() > 0 || cap < std::numeric_limits<double>::infinity(); }
};

/// The least value that a sum must reach to exceed `cap` by more than the rounding of the sums (the
/// incumbent bound's relative margin, 1e-12).
double above_cap(double cap) { return std::nextafter(cap * (1.0 + 1e-12), std::numeric_limits<double>::infinity()); }

/// One pass of the join. `beam` > 0 keeps at most that many rows per key after each pruning (an
/// approximate join whose front is a set of real complete mappings); `incumbents`, when given, drops
/// every row whose lower bound is strictly dominated by one of them (exact).
/// The incumbents of each SRAM interval of the incumbent bound, for fast dominance queries: for
/// interval l, those whose peak SRAM is at most its start (all of them when SRAM is no objective),
/// projected on the other objectives and sorted by the first of them. With two other objectives
/// (the usual case) the second is replaced by its running minimum, a staircase.
struct IncumbentIndex {
  std::size_t m = 0;                     ///< objectives other than SRAM
  std::vector<std::vector<double>> sets; ///< per interval, row-major, m values per incumbent
  /// With three other objectives: per interval, a Fenwick tree over the incumbents in first-objective
  /// order whose node i (positions i - lowbit(i) .. i - 1) holds the staircase of their (second,
  /// third) values: second ascending, third strictly descending. Empty vectors otherwise.
  using Staircase = std::vector<std::pair<double, double>>;
  std::vector<std::vector<Staircase>> trees;

  IncumbentIndex(const Incumbents& inc, const std::vector<Objective>& objectives, const std::vector<double>& levels) {
    std::vector<std::size_t> other;
    std::size_t sram = objectives.size();
    for (std::size_t j = 0; j < objectives.size(); ++j) {
      if (objectives[j] == Objective::Sram) {
        sram = j;
      } else {
        other.push_back(j);
      }
    }
    m = other.size();
    std::vector<std::uint32_t> order(inc.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto at = [&](std::uint32_t i, std::size_t j) { return inc.values[i * inc.k + j]; };
    if (m > 0) {
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return at(a, other[0]) < at(b, other[0]) || (!(at(b, other[0]) < at(a, other[0])) && a < b);
      });
    }
    for (double level : levels) {
      std::vector<double> set;
      for (std::uint32_t i : order) {
        if (sram < objectives.size() && at(i, sram) > level) continue;
        for (std::size_t j : other) set.push_back(at(i, j));
      }
      if (m == 2) {
        for (std::size_t x = 3; x < set.size(); x += 2) set[x] = std::min(set[x], set[x - 2]);
      }
      std::vector<Staircase> tree;
      if (m == 3) {
        const std::size_t n = set.size() / 3;
        tree.resize(n + 1);
        for (std::size_t i = 1; i <= n; ++i) {
          Staircase points;
          for (std::size_t p = i - (i & (~i + 1)); p < i; ++p) points.emplace_back(set[p * 3 + 1], set[p * 3 + 2]);
          std::sort(points.begin(), points.end());
          for (const auto& pt : points) {
            if (tree[i].empty() || pt.second < tree[i].back().second) tree[i].push_back(pt);
          }
        }
      }
      sets.push_back(std::move(set));
      trees.push_back(std::move(tree));
    }
  }

  /// Some incumbent of interval l is < b in the first other objective and <= b in the rest: it
  /// strictly dominates b (conservative: one equal in the first objective but better elsewhere is
  /// not looked for).
  bool dominates(std::size_t l, const double* b) const {
    const std::vector<double>& set = sets[l];
    if (m == 0) return false;
    const std::size_t n = set.size() / m;
    // The incumbents with a first value below b[0] are a prefix.
    std::size_t lo = 0;
    std::size_t hi = n;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (set[mid * m] < b[0]) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == 0) return false;
    if (m == 1) return true;
    if (m == 2) return set[(lo - 1) * 2 + 1] <= b[1];
    if (m == 3) {
      // The prefix [0, lo) is the union of O(log n) tree nodes; in each, the last staircase entry
      // with second value <= b[1] has the least third value among them.
      const std::vector<Staircase>& tree = trees[l];
      for (std::size_t i = lo; i > 0; i -= i & (~i + 1)) {
        const Staircase& st = tree[i];
        const auto it = std::upper_bound(st.begin(), st.end(), b[1],
                                         [](double v, const std::pair<double, double>& e) { return v < e.first; });
        if (it != st.begin() && std::prev(it)->second <= b[2]) return true;
      }
      return false;
    }
    for (std::size_t i = 0; i < lo; ++i) {
      bool all = true;
      for (std::size_t j = 1; j < m; ++j) all &= set[i * m + j] <= b[j];
      if (all) return true;
    }
    return false;
  }
};

/// A closed up-set of the plane: the points v with v0 >= x and v1 >= y for some generator (x, y).
/// The generators are kept with x strictly ascending and y strictly descending (the others add
/// nothing), so membership is one binary search. The incumbent bound with two summed objectives uses
/// it for the rows all of whose completions are dominated (docs/design/search.md "Join", "Incumbent
/// bound").
struct UpSet {
  std::vector<std::pair<double, double>> gens;
  bool everything = false;  ///< the whole plane
  GridIndex grid;           ///< over the generators' x, once index() was called
  bool indexed = false;

  bool contains(double v0, double v1) const {
    if (everything) return true;
    if (gens.empty()) return false;
    // The generators with x <= v0; the last of them has the least y.
    const auto x_of = [this](std::size_t i) { return gens[i].first; };
    const std::size_t n = indexed ? grid.count<true>(x_of, v0) : count_before<true>(x_of, 0, gens.size(), v0);
    return n > 0 && gens[n - 1].second <= v1;
  }

  /// Builds the index of the generators' x for contains() (call once the set is final).
  void index() {
    grid.build([this](std::size_t i) { return gens[i].first; }, gens.size());
    indexed = true;
  }

  /// The set moved by (dx, dy).
  UpSet shifted(double dx, double dy) const {
    UpSet out;
    out.everything = everything;
    out.gens.reserve(gens.size());
    for (const auto& [x, y] : gens) out.push(x + dx, y + dy);
    return out;
  }

  /// Appends a generator in x order (x >= every x before it): kept when it lowers y.
  void push(double x, double y) {
    if (!gens.empty() && gens.back().first == x) {
      if (y < gens.back().second) gens.back().second = y;
      while (gens.size() >= 2 && gens[gens.size() - 2].second <= gens.back().second) gens.pop_back();
      return;
    }
    if (gens.empty() || y < gens.back().second) gens.emplace_back(x, y);
  }

  /// The points in both sets.
  static UpSet intersect(const UpSet& a, const UpSet& b) {
    if (a.everything) return b;
    if (b.everything) return a;
    UpSet out;
    const double inf = std::numeric_limits<double>::infinity();
    double ta = inf;
    double tb = inf;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.gens.size() || j < b.gens.size()) {
      const double x = j == b.gens.size() || (i < a.gens.size() && a.gens[i].first <= b.gens[j].first) ? a.gens[i].first
                                                                                                      : b.gens[j].first;
      while (i < a.gens.size() && a.gens[i].first == x) ta = a.gens[i++].second;
      while (j < b.gens.size() && b.gens[j].first == x) tb = b.gens[j++].second;
      const double y = std::max(ta, tb);
      if (y < inf) out.push(x, y);
    }
    return out;
  }
};

/// The indices of the Pareto front of `rows` on `cols`, with their exact values; with `tiebreak`,
/// rows equal in every column keep the least peak SRAM (docs/design/search.md "Join", "SRAM
/// tie-break"). `table` is scratch.
void exact_front(const std::vector<JoinRow>& rows, const std::vector<Column>& cols, bool tiebreak, ParetoWorkspace& ws,
                 std::vector<double>& table, std::vector<std::uint32_t>& keep) {
  table.resize(rows.size() * cols.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < cols.size(); ++c) table[r * cols.size() + c] = rows[r].value(cols[c]);
  if (tiebreak) {
    static thread_local std::vector<double> tie;
    tie.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) tie[r] = rows[r].peak;
    pareto_front_tiebreak(table.data(), rows.size(), cols.size(), tie.data(), ws, keep);
  } else {
    pareto_front(table.data(), rows.size(), cols.size(), ws, keep);
  }
}

/// Keeps at most about `beam` rows (the quick pass): evenly spaced in lexicographic column order,
/// plus each column's best row, in their original order.
template <typename Value>
void thin_to_beam(std::vector<PendingRow>& rows, const std::vector<Column>& cols, const Value& value, std::size_t beam) {
  std::vector<std::uint32_t> order(rows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto less = [&](std::uint32_t a, std::uint32_t b) {
    for (Column c : cols) {
      const double va = value(rows[a].row, c);
      const double vb = value(rows[b].row, c);
      if (va != vb) return va < vb;
    }
    return a < b;
  };
  std::sort(order.begin(), order.end(), less);
  std::vector<char> keep(rows.size(), 0);
  for (std::size_t i = 0; i < beam; ++i) keep[order[i * (order.size() - 1) / (beam - 1)]] = 1;
  for (Column c : cols) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < rows.size(); ++i) {
      if (value(rows[i].row, c) < value(rows[best].row, c)) best = i;
    }
    keep[best] = 1;
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (keep[i]) rows[out++] = rows[i];
  }
  rows.resize(out);
}

/// What the quick pass before an exact or quick pass paired: whether the key bound repays its cost.
struct PassHistory {
  std::uint64_t rows_paired = 0;
  std::uint64_t keys = 0;  ///< groups out, summed over the steps
};

/// The cascade clamp's limits of the keys found so far, per step that produces the key (only keys
/// whose limits are known). A key's limits depend only on the key and the steps after its own, so
/// the look-ahead of one step serves the next steps (its deeper keys are their keys) and the quick
/// passes serve the exact one.
struct ClampCache {
  std::vector<std::unordered_map<LiveKey, std::vector<double>, LiveKeyHash>> by_step;
};

JoinResult join_pass(const JoinProblem& problem, std::size_t beam, const Incumbents* incumbents, bool* thinned,
                     const PassHistory& history, ClampCache& clamp_cache) {
  JoinResult result;
  // Only the exact pass counts towards a progress display.
  JoinProgress* const progress = beam == 0 ? problem.progress : nullptr;
  const auto& tensors = problem.tensors;
  const int num_steps = static_cast<int>(problem.steps.size());
  if (num_steps == 0) return result;
  clamp_cache.by_step.resize(static_cast<std::size_t>(num_steps));

  // For look-ahead: consumer steps of each tensor, and per (step, input slot) which
  // (residence, layout) pairs that layer's groups accept.
  std::vector<std::vector<std::pair<int, int>>> consumers(tensors.size());  // (step, slot)
  std::vector<std::vector<unsigned>> accepted(num_steps);
  for (int s = 0; s < num_steps; ++s) {
    const JoinStep& step = problem.steps[s];
    accepted[s].assign(step.inputs.size(), 0u);
    for (std::size_t i = 0; i < step.inputs.size(); ++i) consumers[step.inputs[i]].push_back({s, static_cast<int>(i)});
    for (const auto& g : step.groups) {
      NPUMAP_ASSERT(g.compat.size() == step.inputs.size() + 1);
      for (std::size_t i = 0; i < step.inputs.size(); ++i) accepted[s][i] |= compat_bit(g.compat[i]);
    }
  }
  std::vector<char> introduced(tensors.size(), 0);  // network inputs already live before a step
  // Per step, the future SRAM bound's fresh part by the set of its inputs live (see below).
  std::vector<std::vector<std::pair<std::uint64_t, double>>> fresh_cache(static_cast<std::size_t>(num_steps));
  // The smallest own SRAM of each group's rows, for the future-SRAM bound.
  std::vector<std::vector<double>> least_own_sram(static_cast<std::size_t>(num_steps));
  // For the cascade clamp: cascade_run[s], how many consecutive steps from s on have a group that
  // reads a rolling buffer and writes one (could keep a cascade open). A cascade that may outlast the
  // look-ahead cannot be clamped, and looking ahead for it would be wasted work (a chain of fusable
  // layers keeps every cascade open as long as it likes).
  std::vector<int> cascade_run(static_cast<std::size_t>(num_steps) + 1, 0);
  for (int s = num_steps - 1; s >= 0; --s) {
    bool continues = false;
    for (const PmappingGroup& g : problem.steps[static_cast<std::size_t>(s)].groups) {
      bool rolling_in = false;
      for (std::size_t i = 0; i + 1 < g.compat.size(); ++i) rolling_in = rolling_in || g.compat[i].residence == Residence::Rolling;
      continues = continues || (rolling_in && g.compat.back().residence == Residence::Rolling);
    }
    cascade_run[static_cast<std::size_t>(s)] = continues ? cascade_run[static_cast<std::size_t>(s) + 1] + 1 : 0;
  }
  // The distinct own SRAM values of each group's rows, ascending, for the cascade clamp.
  std::vector<std::vector<std::vector<double>>> distinct_own_sram(static_cast<std::size_t>(num_steps));
  for (int s = 0; s < num_steps; ++s) {
    for (const PmappingGroup& g : problem.steps[s].groups) {
      std::vector<double> own;
      for (const PmappingRow& r : g.rows) own.push_back(r.sram_bytes);
      std::sort(own.begin(), own.end());
      own.erase(std::unique(own.begin(), own.end()), own.end());
      least_own_sram[static_cast<std::size_t>(s)].push_back(own.empty() ? std::numeric_limits<double>::infinity() : own.front());
      distinct_own_sram[static_cast<std::size_t>(s)].push_back(std::move(own));
    }
  }
  // For the incumbent bound (docs/design/search.md "Join", "Incumbent bound"): per step s, SRAM
  // interval and objective, the least the layers after s add to a completion whose final peak SRAM
  // lies in that interval. While layer t runs, its inputs and output are all live, so a row of group
  // g uses at least usage(g) + its own SRAM; a completion whose peak is below level[i+1] uses only
  // such rows, and the least it adds at t is the smallest value among them (+inf when there is
  // none). Levels are a sample of the incumbents' SRAM values (one interval when SRAM is no
  // objective: then only the last, unconstrained interval matters).
  const std::size_t num_objectives = problem.objectives.size();
  const bool sram_objective =
      std::find(problem.objectives.begin(), problem.objectives.end(), Objective::Sram) != problem.objectives.end();
  std::vector<double> levels{0.0};
  if (incumbents != nullptr && sram_objective) {
    std::vector<double> values;
    const std::size_t j_sram = static_cast<std::size_t>(
        std::find(problem.objectives.begin(), problem.objectives.end(), Objective::Sram) - problem.objectives.begin());
    for (std::size_t i = 0; i < incumbents->size(); ++i) values.push_back(incumbents->values[i * num_objectives + j_sram]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    constexpr std::size_t kLevels = 64;
    for (std::size_t i = 0; i < std::min(kLevels, values.size()); ++i) {
      const double v = values[i * values.size() / std::min(kLevels, values.size())];
      if (v > levels.back()) levels.push_back(v);
    }
  }
  const std::size_t num_levels = levels.size();
  std::optional<IncumbentIndex> index;
  if (incumbents != nullptr) index.emplace(*incumbents, problem.objectives, levels);
  // The bytes a group of step st reserves for its inputs and output while the layer runs (a tensor
  // read twice, or an output written in place over its input, counted once).
  const auto group_usage = [&](const JoinStep& st, const PmappingGroup& g) {
    double usage = 0.0;
    for (std::size_t i = 0; i <= st.inputs.size(); ++i) {
      const int tensor = i < st.inputs.size() ? st.inputs[i] : st.output;
      bool repeated = false;
      for (std::size_t j = 0; j < i && j < st.inputs.size(); ++j) repeated = repeated || st.inputs[j] == tensor;
      if (i == st.inputs.size() && g.compat[i].over_input >= 0) repeated = true;  // in place: shared storage
      if (!repeated) usage += static_cast<double>(reserved_bytes(tensors[tensor], g.compat[i], problem.arena_is_sram));
    }
    return usage;
  };
  // Calls visit(l, row) for every row of step st's groups and every SRAM interval l in which the row
  // can run: its usage (group_usage + its own SRAM) is below the next interval's start.
  const auto for_each_row_interval = [&](const JoinStep& st, const auto& visit) {
    for (const PmappingGroup& g : st.groups) {
      const double usage = group_usage(st, g);
      for (const PmappingRow& r : g.rows) {
        const double u = usage + r.sram_bytes;
        for (std::size_t l = 0; l < num_levels; ++l) {
          if (l + 1 < num_levels && !(u < levels[l + 1])) continue;
          visit(l, r);
        }
      }
    }
  };
  // rest_min[((s * num_levels) + i) * num_objectives + j]: the sum over the layers after step s - 1.
  std::vector<double> rest_min(static_cast<std::size_t>(num_steps + 1) * num_levels * num_objectives, 0.0);
  if (incumbents != nullptr) {
    std::vector<double> least(num_levels * num_objectives);
    for (int s = num_steps - 1; s >= 0; --s) {
      const JoinStep& st = problem.steps[s];
      std::fill(least.begin(), least.end(), std::numeric_limits<double>::infinity());
      for_each_row_interval(st, [&](std::size_t l, const PmappingRow& r) {
        for (std::size_t j = 0; j < num_objectives; ++j) {
          const Objective o = problem.objectives[j];
          double& m = least[l * num_objectives + j];
          m = std::min(m, o == Objective::Sram ? 0.0 : r.value(column_of(o)));
        }
      });
      for (std::size_t x = 0; x < least.size(); ++x) {
        rest_min[static_cast<std::size_t>(s) * least.size() + x] =
            rest_min[static_cast<std::size_t>(s + 1) * least.size() + x] + least[x];
      }
    }
  }
  // With two summed objectives the remaining layers' additions are bounded more tightly by a set of
  // points than by their separate minima: rest_sets[s * num_levels + l] holds at most kRestPoints
  // points such that every completion after step s - 1 in interval l adds at least one of them in
  // both objectives. It is the Pareto front of (the set after s) + (the front of step s's rows in
  // that interval), thinned by replacing runs of consecutive points by their lower-left corner
  // (which keeps it a lower bound). Empty: no completion in that interval.
  std::vector<std::size_t> summed;  // the objectives other than SRAM, in order
  for (std::size_t j = 0; j < num_objectives; ++j) {
    if (problem.objectives[j] != Objective::Sram) summed.push_back(j);
  }
  std::vector<Column> summed_columns;
  for (std::size_t j : summed) summed_columns.push_back(column_of(problem.objectives[j]));
  using Point = std::pair<double, double>;
  // A lower-bound set of (here + after): the 2-D Pareto front of the sums of a point of `here` (any
  // order, modified) and one of `after`, thinned to at most kRestPoints points by replacing runs of
  // consecutive points by their lower-left corner (every sum is at least one of them).
  const auto sum_bound = [](std::vector<Point>& here, const std::vector<Point>& after) {
    const auto front_2d = [](std::vector<Point>& pts) {
      std::sort(pts.begin(), pts.end());
      std::size_t out = 0;
      for (const Point& p : pts) {
        if (out == 0 || p.second < pts[out - 1].second) pts[out++] = p;
      }
      pts.resize(out);
    };
    front_2d(here);
    std::vector<Point> sum;
    sum.reserve(here.size() * after.size());
    for (const Point& a : after)
      for (const Point& h : here) sum.emplace_back(a.first + h.first, a.second + h.second);
    front_2d(sum);
    if (sum.size() > kRestPoints) {
      const std::size_t run = (sum.size() + kRestPoints - 1) / kRestPoints;
      std::vector<Point> thin;
      for (std::size_t i = 0; i < sum.size(); i += run) {
        const std::size_t last = std::min(sum.size(), i + run) - 1;
        thin.emplace_back(sum[i].first, sum[last].second);  // x ascending, y descending: the run's corner
      }
      sum = std::move(thin);
    }
    return sum;
  };
  std::vector<std::vector<Point>> rest_sets;
  if (incumbents != nullptr && summed.size() == 2) {
    rest_sets.resize(static_cast<std::size_t>(num_steps + 1) * num_levels);
    for (std::size_t l = 0; l < num_levels; ++l) rest_sets[static_cast<std::size_t>(num_steps) * num_levels + l] = {{0.0, 0.0}};
    const Objective o0 = problem.objectives[summed[0]];
    const Objective o1 = problem.objectives[summed[1]];
    for (int s = num_steps - 1; s >= 0; --s) {
      const JoinStep& st = problem.steps[s];
      std::vector<std::vector<Point>> step_points(num_levels);
      for_each_row_interval(st, [&](std::size_t l, const PmappingRow& r) {
        step_points[l].emplace_back(r.value(column_of(o0)), r.value(column_of(o1)));
      });
      for (std::size_t l = 0; l < num_levels; ++l) {
        rest_sets[static_cast<std::size_t>(s) * num_levels + l] =
            sum_bound(step_points[l], rest_sets[static_cast<std::size_t>(s + 1) * num_levels + l]);
      }
    }
  }
  // The dominance regions of the incumbent bound with two summed objectives, per SRAM interval l, in
  // the plane of the summed objectives (b0, b1) of a lower bound b of a completion whose peak SRAM is
  // at least levels[l]. An incumbent I of the interval (peak SRAM <= levels[l]) dominates every such
  // completion when I <= b in both and I < b in one of the three objectives: so the region is the
  // union of the up-sets of I's with I0 < b0 (`strict` in 0), with I1 < b1, and, for the incumbents
  // whose peak is below levels[l] (those of interval l - 1), with I <= b. When the completion's peak
  // is known to be above levels[l] every incumbent of the interval is below it in SRAM
  // (`above_regions`). "<" and "<=" carry a relative margin of 1e-12, far more than the rounding of
  // the sums and far less than any real difference between two mappings: a completion equal to an
  // incumbent is never dropped, one the incumbent beats by a rounding error is not kept for it.
  std::vector<UpSet> tie_regions;
  std::vector<UpSet> above_regions;
  // The cap bounds the first objective, a summed one (join_best never caps peak SRAM).
  const bool capped = incumbents != nullptr && incumbents->cap < std::numeric_limits<double>::infinity();
  NPUMAP_ASSERT(!capped || (!summed.empty() && summed[0] == 0));
  if (index && summed.size() == 2) {
    constexpr double kStrict = 1.0 - 1e-12;
    constexpr double kWeak = 1.0 + 1e-12;
    const auto region = [&](std::initializer_list<std::tuple<std::size_t, double, double>> parts) {
      std::vector<std::pair<double, double>> gens;
      for (const auto& [l, f0, f1] : parts) {
        const std::vector<double>& inc = index->sets[l];  // (first, running minimum of second) pairs
        // A strict margin on 0 is the least positive double: 0 < b, not 0 <= b.
        const auto lift = [](double v, double f) { return v > 0.0 || f > 1.0 ? v / f : std::nextafter(v, 1.0); };
        for (std::size_t i = 0; i + 1 < inc.size(); i += 2) gens.emplace_back(lift(inc[i], f0), lift(inc[i + 1], f1));
      }
      // The cap of the first objective (join_best): every b above it, whatever its second.
      if (capped) gens.emplace_back(above_cap(incumbents->cap), -std::numeric_limits<double>::infinity());
      std::sort(gens.begin(), gens.end());
      UpSet out;
      for (const auto& [x, y] : gens) out.push(x, y);
      return out;
    };
    for (std::size_t l = 0; l < num_levels; ++l) {
      if (sram_objective && l > 0) {
        tie_regions.push_back(region({{l, kStrict, kWeak}, {l, kWeak, kStrict}, {l - 1, kWeak, kWeak}}));
      } else {
        tie_regions.push_back(region({{l, kStrict, kWeak}, {l, kWeak, kStrict}}));
      }
      above_regions.push_back(sram_objective ? region({{l, kWeak, kWeak}}) : tie_regions.back());
    }
  }
  std::vector<int> first_consumer(tensors.size(), num_steps);
  for (int s = 0; s < num_steps; ++s) {
    for (int t : problem.steps[s].inputs) first_consumer[t] = std::min(first_consumer[t], s);
  }

  // Pareto columns: the chosen objectives, plus the open cascade's SRAM while a cascade is open.
  const std::vector<Column> columns = join_columns(problem.objectives, false);
  // When peak SRAM is not an objective it still breaks ties: among rows equal in every pruning
  // column the one with the least (bounded) peak survives, so each front point reports the least
  // SRAM that reaches exactly its values (docs/design/search.md "Join", "SRAM tie-break").
  const bool sram_tiebreak =
      std::find(problem.objectives.begin(), problem.objectives.end(), Objective::Sram) == problem.objectives.end();

  // threads > 0: a oneTBB arena of that many workers; 0: the caller's arena (map_network and sweeps
  // run joins inside their own arenas).
  std::optional<tbb::task_arena> own_arena;
  if (problem.threads > 0) own_arena.emplace(problem.threads);
  const auto in_arena = [&](const auto& body) {
    if (own_arena) {
      own_arena->execute(body);
    } else {
      body();
    }
  };
  // The tolerance grid: a value v > 0 maps to the upper edge of its cell (1+tol)^ceil(log(v)/log(1+tol)).
  const double log_step = problem.tolerance > 0.0 ? std::log1p(problem.tolerance) : 0.0;
  const auto grid = [log_step](double v) {
    if (log_step == 0.0 || v <= 0.0) return v;
    return std::exp(std::ceil(std::log(v) / log_step) * log_step);
  };
  // Phase 1 of step st: the matching (left key, layer group) pairs, bucketed by the key they produce.
  // key_of(i) is the i-th left key; a PairTask's `left` is that index. `intro` marks the network
  // inputs already read before step st.
  const auto match_pairs = [&](int st, std::size_t num_keys, const auto& key_of, const std::vector<char>& intro,
                               std::uint64_t& matched) {
    const JoinStep& step = problem.steps[st];
    const auto& right = step.groups;
    // The pairs by the key they produce, in sorted key order (grouped through a hash table first:
    // keys can hold many entries, and an ordered map compared them once per level of its tree).
    std::vector<std::pair<LiveKey, std::vector<PairTask>>> tasks;
    // Which inputs are already live (the same for every left group).
    std::vector<char> live_input(step.inputs.size(), 0);
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const JoinTensor& t = tensors[step.inputs[i]];
      live_input[i] = (t.producer_step >= 0 && t.producer_step < st) || intro[step.inputs[i]];
    }
    // A tensor several layers write (a concatenation) is live from its first writer on: a later
    // writer must store its part where and how the first one placed the tensor.
    const std::size_t out_slot = step.inputs.size();
    const bool live_output = tensors[step.output].producer_step >= 0 && tensors[step.output].producer_step < st;
    // Bucket the layer's groups by their compatibility on the live inputs (and a live output).
    const auto bucket_key = [&](auto compat_of) {
      std::vector<std::pair<Residence, Layout>> key;
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        if (live_input[i]) key.push_back({compat_of(i).residence, compat_of(i).layout});
      }
      if (live_output) key.push_back({compat_of(out_slot).residence, compat_of(out_slot).layout});
      return key;
    };
    std::map<std::vector<std::pair<Residence, Layout>>, std::vector<std::uint32_t>> buckets;
    for (std::uint32_t h = 0; h < right.size(); ++h) {
      // Inputs read twice by one layer (x + x) must agree with themselves.
      bool self_consistent = true;
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        for (std::size_t j = i + 1; j < step.inputs.size(); ++j) {
          if (step.inputs[i] == step.inputs[j] && !(right[h].compat[i] == right[h].compat[j])) self_consistent = false;
        }
        if (!live_input[i] && right[h].compat[i].residence == Residence::Rolling) self_consistent = false;
      }
      if (self_consistent) buckets[bucket_key([&](std::size_t i) { return right[h].compat[i]; })].push_back(h);
    }

    // Each left key's pairs (the new key and the pair), in parallel; then grouped in left-key order.
    std::vector<std::vector<std::pair<LiveKey, PairTask>>> pairs_of(num_keys);
    std::vector<std::uint64_t> matched_of(num_keys, 0);
    const auto pair_left_key = [&](std::uint32_t gi) {
      const LiveKey& left_key = key_of(gi);
      std::vector<const LiveEntry*> live_entries(step.inputs.size() + 1, nullptr);
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        if (live_input[i]) {
          live_entries[i] = find_live(left_key, step.inputs[i]);
          NPUMAP_ASSERT(live_entries[i] != nullptr);
        }
      }
      if (live_output) {
        live_entries[out_slot] = find_live(left_key, step.output);
        NPUMAP_ASSERT(live_entries[out_slot] != nullptr);
      }
      const auto bucket = buckets.find(bucket_key([&](std::size_t i) { return live_entries[i]->compat; }));
      if (bucket == buckets.end()) return;
      for (std::uint32_t h : bucket->second) {
        const PmappingGroup& pg = right[h];
        ++matched_of[gi];
        PairTask task;
        task.left = gi;
        task.right = h;
        LiveKey key = left_key;
        for (std::size_t i = 0; i < step.inputs.size(); ++i) {
          const int t = step.inputs[i];
          if (live_entries[i] != nullptr) {
            if (pg.compat[i].residence == Residence::Rolling && !task.input_rolling) {
              task.input_rolling = true;
              task.rolling_bytes = static_cast<double>(
                  rolling_buffer_bytes(tensors[t], live_entries[i]->compat.rows, pg.compat[i].rows));
            }
          } else if (find_live(key, t) == nullptr) {
            insert_live(key, LiveEntry{t, pg.compat[i], false});
          }
        }
        TensorCompat out_compat = pg.compat.back();
        task.output_rolling = out_compat.residence == Residence::Rolling;
        const int over = out_compat.over_input;
        out_compat.over_input = -1;  // later layers see an ordinary tensor
        if (over >= 0) {
          // In place: the output overwrites input `over`, which must be produced by an earlier
          // layer, die at this layer and not be a network output; the shared storage counts once.
          // A tensor several layers write is never written in place.
          const JoinTensor& in = tensors[step.inputs[static_cast<std::size_t>(over)]];
          if (live_output || in.producer_step < 0 || in.network_output || in.last_consumer_step != st) continue;
          task.full_bytes -= static_cast<double>(reserved_bytes(tensors[step.output], out_compat, problem.arena_is_sram));
        }
        if (!live_output) insert_live(key, LiveEntry{step.output, out_compat, false});
        for (const LiveEntry& e : key) {
          if (!e.dead) task.full_bytes += static_cast<double>(reserved_bytes(tensors[e.tensor], e.compat, problem.arena_is_sram));
        }
        // Release what no later layer needs. While a cascade stays open, a finished tensor's SRAM
        // stays reserved: its bytes move into the cascade column, so the key forgets it.
        for (LiveEntry& e : key) {
          if (e.dead) continue;
          const JoinTensor& t = tensors[e.tensor];
          if (!t.network_output && t.last_consumer_step <= st) {
            e.dead = true;
            if (task.output_rolling) {
              task.held_bytes += static_cast<double>(reserved_bytes(t, e.compat, problem.arena_is_sram));
            }
          }
        }
        if (problem.collapse) {
          key.erase(std::remove_if(key.begin(), key.end(), [](const LiveEntry& e) { return e.dead; }), key.end());
        }
        pairs_of[gi].emplace_back(std::move(key), task);
      }
    };
    in_arena([&] {
      tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, static_cast<std::uint32_t>(num_keys)),
                        [&](const tbb::blocked_range<std::uint32_t>& range) {
                          for (std::uint32_t gi = range.begin(); gi != range.end(); ++gi) pair_left_key(gi);
                        });
    });
    std::unordered_map<LiveKey, std::size_t, LiveKeyHash> slot_of;
    for (std::uint32_t gi = 0; gi < num_keys; ++gi) {
      matched += matched_of[gi];
      for (auto& [key, task] : pairs_of[gi]) {
        const auto [it, fresh] = slot_of.try_emplace(key, tasks.size());
        if (fresh) tasks.emplace_back(std::move(key), std::vector<PairTask>{});
        tasks[it->second].second.push_back(task);
      }
    }
    std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return tasks;
  };
  // The key bound (docs/design/search.md "Join", "Key bound"): the rest sets above bound what the
  // later layers add whatever the key, but a key fixes much of its completions: which groups of the
  // next layer can follow it, where its live tensors stay, the SRAM they hold. So the keys every
  // step can produce are enumerated first (the same pairing without rows: a superset of the keys the
  // pass meets), and backwards over that key graph each key after step s gets, per SRAM interval, a
  // lower-bound set of what its completions add: the union over its pairs at step s + 1 of (the
  // layer group's rows that fit the interval, with the whole tensors the pair keeps in SRAM) +
  // (the set of the key the pair goes to), Pareto-filtered and thinned as the rest sets are.
  struct KeyBounds {
    std::unordered_map<LiveKey, std::uint32_t, LiveKeyHash> index;  ///< key after the step -> its sets
    std::vector<std::vector<std::vector<Point>>> sets;               ///< [key][interval]
  };
  std::vector<KeyBounds> key_bounds;  // per step; empty: not used
  const double capacity = static_cast<double>(problem.sram_capacity);
  // Building it costs about as much as pairing a few hundred rows per (key, interval) set (10-20
  // us per set, measured); it repays that on yolo-fastest and ResNet-50 on ethos-u65 (460-1300 rows
  // per set before, 20-40% fewer rows paired), not on the unrolled LSTMs (360 rows per set).
  const bool use_key_bound =
      problem.key_bound == KeyBound::On ||
      (problem.key_bound == KeyBound::Automatic && history.keys > 0 && history.rows_paired >= kKeyBoundRowsPerSet * history.keys * num_levels);
  if (use_key_bound && !rest_sets.empty()) {
    struct Edge {
      std::uint32_t from;
      std::uint32_t right;
      std::uint32_t to;
      double full_bytes;
    };
    std::vector<std::vector<LiveKey>> keys(static_cast<std::size_t>(num_steps));
    std::vector<std::vector<Edge>> edges(static_cast<std::size_t>(num_steps));  // at step s: keys of s - 1 -> keys of s
    std::vector<char> intro(tensors.size(), 0);
    std::vector<LiveKey> before{LiveKey{}};
    const auto bound_start = std::chrono::steady_clock::now();
    std::size_t num_sets = 0;
    bool enumerated = true;
    for (int s = 0; s < num_steps && enumerated; ++s) {
      std::uint64_t unused = 0;
      auto step_tasks = match_pairs(s, before.size(), [&](std::size_t i) -> const LiveKey& { return before[i]; }, intro, unused);
      for (int t : problem.steps[s].inputs) {
        if (tensors[t].producer_step < 0) intro[t] = 1;
      }
      std::vector<LiveKey>& here = keys[static_cast<std::size_t>(s)];
      for (auto& [key, pairs] : step_tasks) {
        for (const PairTask& task : pairs) {
          edges[static_cast<std::size_t>(s)].push_back(
              Edge{task.left, task.right, static_cast<std::uint32_t>(here.size()), task.full_bytes});
        }
        here.push_back(std::move(key));
      }
      num_sets += here.size() * num_levels;
      enumerated = num_sets <= kMaxBoundSets;
      before = here;
    }
    if (enumerated) {
      key_bounds.resize(static_cast<std::size_t>(num_steps));
      for (int s = 0; s < num_steps; ++s) {
        KeyBounds& kb = key_bounds[static_cast<std::size_t>(s)];
        const std::vector<LiveKey>& here = keys[static_cast<std::size_t>(s)];
        for (std::uint32_t k = 0; k < here.size(); ++k) kb.index.emplace(here[k], k);
        kb.sets.resize(here.size());
      }
      for (auto& sets : key_bounds.back().sets) sets.assign(num_levels, std::vector<Point>{{0.0, 0.0}});
      const Objective o0 = problem.objectives[summed[0]];
      const Objective o1 = problem.objectives[summed[1]];
      for (int s = num_steps - 1; s >= 1; --s) {
        const JoinStep& st = problem.steps[static_cast<std::size_t>(s)];
        const std::vector<Edge>& step_edges = edges[static_cast<std::size_t>(s)];
        // What a completion through each distinct (layer group, next key) adds, per interval.
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> slot;
        std::vector<const Edge*> distinct;
        std::vector<std::uint32_t> slot_of_edge(step_edges.size());
        for (std::size_t e = 0; e < step_edges.size(); ++e) {
          const auto [it, fresh] = slot.try_emplace({step_edges[e].right, step_edges[e].to}, static_cast<std::uint32_t>(distinct.size()));
          if (fresh) distinct.push_back(&step_edges[e]);
          slot_of_edge[e] = it->second;
        }
        std::vector<std::vector<std::vector<Point>>> through(distinct.size());
        const KeyBounds& next = key_bounds[static_cast<std::size_t>(s)];
        in_arena([&] {
          tbb::parallel_for(std::size_t{0}, distinct.size(), [&](std::size_t d) {
            const Edge& e = *distinct[d];
            const PmappingGroup& g = st.groups[e.right];
            through[d].resize(num_levels);
            for (std::size_t l = 0; l < num_levels; ++l) {
              const std::vector<Point>& after = next.sets[e.to][l];
              if (after.empty()) continue;
              std::vector<Point> pts;
              for (const PmappingRow& r : g.rows) {
                const double u = e.full_bytes + r.sram_bytes;
                if (u > capacity || (l + 1 < num_levels && !(u < levels[l + 1]))) continue;
                pts.emplace_back(r.value(column_of(o0)), r.value(column_of(o1)));
              }
              if (pts.empty()) continue;
              through[d][l] = sum_bound(pts, after);
            }
          });
        });
        // Each key of step s - 1: the union over its edges.
        std::vector<std::vector<std::uint32_t>> out_of(key_bounds[static_cast<std::size_t>(s) - 1].sets.size());
        for (std::size_t e = 0; e < step_edges.size(); ++e) out_of[step_edges[e].from].push_back(slot_of_edge[e]);
        KeyBounds& prev = key_bounds[static_cast<std::size_t>(s) - 1];
        in_arena([&] {
          tbb::parallel_for(std::size_t{0}, prev.sets.size(), [&](std::size_t k) {
            std::vector<std::uint32_t>& outs = out_of[k];
            std::sort(outs.begin(), outs.end());
            outs.erase(std::unique(outs.begin(), outs.end()), outs.end());
            prev.sets[k].resize(num_levels);
            const std::vector<Point> zero{{0.0, 0.0}};
            for (std::size_t l = 0; l < num_levels; ++l) {
              std::vector<Point> all;
              for (std::uint32_t d : outs) all.insert(all.end(), through[d][l].begin(), through[d][l].end());
              if (all.empty()) continue;
              prev.sets[k][l] = sum_bound(all, zero);  // the union's thinned front
            }
          });
        });
      }
    }
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - bound_start;
    spdlog::debug("join key bound: {} (key, interval) sets{}, {:.1f} ms", num_sets, enumerated ? "" : " (too many: not used)",
                  took.count());
  }
  if (progress != nullptr) progress->steps_total.fetch_add(static_cast<std::uint64_t>(num_steps));
  // trace[s]: one node per row out of step s; a node's parent indexes trace[s - 1]. After each step
  // the previous level keeps only the nodes a row of this step descends from.
  std::vector<std::vector<TraceNode>> trace(static_cast<std::size_t>(num_steps));
  std::vector<LeftGroup> left(1);  // one empty group with one empty row
  left[0].rows.push_back(JoinRow{});
  ParetoWorkspace workspace;
  std::vector<std::uint32_t> survivors;
  std::vector<double> table;

  for (int s = 0; s < num_steps; ++s) {
    const auto step_start = std::chrono::steady_clock::now();
    if (problem.stop.stop_requested()) {
      result.partial = true;
      return result;
    }
    const JoinStep& step = problem.steps[s];
    const auto& right = step.groups;
    std::vector<RowSummary> summaries(right.size());
    const auto summarise_right = [&](std::size_t h) {
      RowSummary& sm = summaries[h];
      if (right[h].rows.empty()) return;
      sm.cycles = sm.offchip = sm.energy = sm.sram_bytes = std::numeric_limits<double>::infinity();
      for (const PmappingRow& r : right[h].rows) {
        sm.cycles = std::min(sm.cycles, r.cycles);
        sm.offchip = std::min(sm.offchip, r.offchip_bytes);
        sm.energy = std::min(sm.energy, r.energy_pj);
        sm.sram_bytes = std::min(sm.sram_bytes, r.sram_bytes);
        sm.sorted_sram.push_back(r.sram_bytes);
      }
      std::sort(sm.sorted_sram.begin(), sm.sorted_sram.end());
      const std::vector<PmappingRow>& rows = right[h].rows;
      sm.sibling.assign(rows.size(), kNoSibling);
      for (std::size_t j = 0; j < rows.size(); ++j) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
          bool at_most = true;
          bool below = false;
          for (const Column c : summed_columns) {
            at_most = at_most && rows[i].value(c) <= rows[j].value(c);
            below = below || rows[i].value(c) < rows[j].value(c);
          }
          std::uint32_t& best = sm.sibling[j];
          if (at_most && below && (best == kNoSibling || rows[i].sram_bytes < rows[best].sram_bytes)) best = static_cast<std::uint32_t>(i);
        }
      }
    };
    in_arena([&] { tbb::parallel_for(std::size_t{0}, right.size(), summarise_right); });
    JoinStepStats stats;
    stats.left_groups = left.size();
    stats.right_groups = right.size();

    std::vector<std::pair<LiveKey, std::vector<PairTask>>> tasks =
        match_pairs(s, left.size(), [&](std::size_t i) -> const LiveKey& { return left[i].key; }, introduced,
                    stats.group_pairs_matched);
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      if (tensors[step.inputs[i]].producer_step < 0) introduced[step.inputs[i]] = 1;
    }
    // Combined left tables (docs/design/search.md "Join", "Combined left tables"). The left groups that
    // meet one layer group in the same new key differ only in entries that die at this step; their
    // merges with that layer group depend on a left row only through its sums, its peak and the
    // cascade SRAM it brings into this layer (its cascade plus the rolling buffer of its pair). So
    // those groups' rows, with that cascade, are put in one table and Pareto-filtered first, and the
    // layer group is paired once with the table instead of once with every group. Sources of a pair
    // are left groups (index < left.size()) or these tables (left.size() + j).
    std::vector<LeftGroup> combined;
    if (problem.combine_left) {
      using Signature = std::pair<bool, std::vector<std::pair<std::uint32_t, double>>>;  // (input rolling, (group, buffer))
      std::map<Signature, std::uint32_t> signature_index;
      std::vector<const Signature*> signatures;
      for (auto& [key, pairs] : tasks) {
        std::unordered_map<std::uint32_t, std::size_t> slot_of_right;
        std::vector<std::vector<const PairTask*>> by_right;  // in order of first appearance
        for (const PairTask& t : pairs) {
          const auto [it, fresh] = slot_of_right.try_emplace(t.right, by_right.size());
          if (fresh) by_right.emplace_back();
          by_right[it->second].push_back(&t);
        }
        if (by_right.size() == pairs.size()) continue;  // every layer group meets one left group
        std::vector<PairTask> rewritten;
        rewritten.reserve(by_right.size());
        for (const std::vector<const PairTask*>& list : by_right) {
          PairTask task = *list.front();
          if (list.size() > 1) {
            Signature sig{task.input_rolling, {}};
            for (const PairTask* p : list) {
              // The same new key and layer group: the same whole tensors, held bytes and cascade flags.
              NPUMAP_ASSERT(p->full_bytes == task.full_bytes && p->held_bytes == task.held_bytes &&
                            p->input_rolling == task.input_rolling && p->output_rolling == task.output_rolling);
              sig.second.emplace_back(p->left, task.input_rolling ? p->rolling_bytes : 0.0);
            }
            const auto [it, fresh] = signature_index.try_emplace(std::move(sig), static_cast<std::uint32_t>(signatures.size()));
            if (fresh) signatures.push_back(&it->first);
            task.left = static_cast<std::uint32_t>(left.size()) + it->second;
            task.rolling_bytes = 0.0;
          }
          rewritten.push_back(task);
        }
        pairs = std::move(rewritten);
      }
      combined.resize(signatures.size());
      const std::vector<Column> pre_columns = join_columns(problem.objectives, false);
      in_arena([&] {
        tbb::parallel_for(std::size_t{0}, signatures.size(), [&](std::size_t j) {
          const auto& [rolling, sources] = *signatures[j];
          std::vector<JoinRow> rows;
          std::size_t total = 0;
          for (const auto& source : sources) total += left[source.first].rows.size();
          rows.reserve(total);
          for (const auto& [g, buffer] : sources) {
            for (const JoinRow& r : left[g].rows) {
              JoinRow x = r;
              x.cascade = rolling ? r.cascade + buffer : 0.0;  // the cascade SRAM this layer sees
              rows.push_back(x);
            }
          }
          std::vector<Column> cols = pre_columns;
          if (rolling) cols.push_back(Column::CascadeSram);
          PruneScratch& x = prune_scratch();
          exact_front(rows, cols, sram_tiebreak, x.ws, x.tab, x.keep);
          const std::vector<std::uint32_t>& keep = x.keep;
          std::vector<JoinRow>& out = combined[j].rows;
          out.reserve(keep.size());
          for (std::uint32_t i : keep) out.push_back(rows[i]);
        });
      });
    }
    const auto rows_of = [&](std::uint32_t source) -> const std::vector<JoinRow>& {
      return source < left.size() ? left[source].rows : combined[source - left.size()].rows;
    };
    const std::size_t num_sources = left.size() + combined.size();
    // Each left group's least values, column by column (a row below all of its rows), and, for the
    // dominance filter's pilot, a few rows of each left group, evenly spaced in cycles order plus the
    // least in each column. Per group, in parallel.
    // Only the sources some pair reads are summarised (a left group whose every pair was moved to a
    // combined table is not).
    std::vector<char> source_used(num_sources, 0);
    for (const auto& [key, pairs] : tasks) {
      for (const PairTask& t : pairs) source_used[t.left] = 1;
    }
    std::vector<JoinRow> least_left(num_sources);
    std::vector<std::vector<JoinRow>> least_block(num_sources);  // per kLeastBlock consecutive rows
    std::vector<std::vector<std::uint32_t>> samples(num_sources);
    const auto summarise_left = [&](std::uint32_t gi) {
      const auto lower = [](JoinRow& m, const JoinRow& r) {
        m.cycles = std::min(m.cycles, r.cycles);
        m.offchip = std::min(m.offchip, r.offchip);
        m.energy = std::min(m.energy, r.energy);
        m.peak = std::min(m.peak, r.peak);
        m.cascade = std::min(m.cascade, r.cascade);
      };
      JoinRow& m = least_left[gi];
      m.cycles = m.offchip = m.energy = m.peak = m.cascade = std::numeric_limits<double>::infinity();
      const std::vector<JoinRow>& rows = rows_of(gi);
      std::vector<JoinRow>& blocks = least_block[gi];
      blocks.assign((rows.size() + kLeastBlock - 1) / kLeastBlock, m);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        lower(m, rows[i]);
        lower(blocks[i / kLeastBlock], rows[i]);
      }
      if (rows.size() < kPilotMinRows) return;
      // (cycles, index): a total order, compared without reaching back into the rows.
      std::vector<std::pair<double, std::uint32_t>> order(rows.size());
      for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = {rows[i].cycles, i};
      // The rows at evenly spaced positions of (cycles, index) order, each found by a selection
      // within the range its neighbours leave (no full sort).
      const std::size_t n = std::min(kPilotRows, order.size());
      std::vector<std::size_t> at(n);
      for (std::size_t i = 0; i < n; ++i) at[i] = n == 1 ? 0 : i * (order.size() - 1) / (n - 1);
      const auto select = [&](const auto& self, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to) -> void {
        if (from >= to) return;  // the positions at[from, to) lie in order[lo, hi)
        const std::size_t mid = from + (to - from) / 2;
        std::nth_element(order.begin() + static_cast<std::ptrdiff_t>(lo), order.begin() + static_cast<std::ptrdiff_t>(at[mid]),
                         order.begin() + static_cast<std::ptrdiff_t>(hi));
        self(self, lo, at[mid], from, mid);
        self(self, at[mid] + 1, hi, mid + 1, to);
      };
      select(select, 0, order.size(), 0, n);
      std::vector<std::uint32_t>& pick = samples[gi];
      for (std::size_t i = 0; i < n; ++i) pick.push_back(order[at[i]].second);
      for (Column c : {Column::OffchipBytes, Column::Energy, Column::Sram, Column::CascadeSram}) {
        std::uint32_t best = 0;
        for (std::uint32_t i = 1; i < rows.size(); ++i) {
          if (rows[i].value(c) < rows[best].value(c)) best = i;
        }
        pick.push_back(best);
      }
      std::sort(pick.begin(), pick.end());
      pick.erase(std::unique(pick.begin(), pick.end()), pick.end());
    };
    in_arena([&] {
      tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, static_cast<std::uint32_t>(num_sources)),
                        [&](const tbb::blocked_range<std::uint32_t>& range) {
                          for (std::uint32_t gi = range.begin(); gi != range.end(); ++gi) {
                            if (source_used[gi]) summarise_left(gi);
                          }
                        });
    });

    // Phase 2, in parallel over the new keys: merge row by row in pair order, pruning to the Pareto
    // front whenever the table has grown, so memory stays near the size of the front.
    struct KeyWork {
      const LiveKey* key = nullptr;
      const std::vector<PairTask>* pairs = nullptr;
      std::vector<PendingRow> rows;
      std::uint64_t paired = 0;
      std::uint64_t stored = 0;
      std::uint64_t over_capacity = 0;
      std::uint64_t dominated = 0;  ///< by pruning or by the incumbent bound
      bool acceptable = true;
      bool thinned = false;  ///< a quick pass kept only some of the key's rows
      bool open_cascade = false;  ///< the key holds a live rolling entry
      /// With an open cascade that the next step closes: the cascade values at which some completion
      /// stops fitting (ascending). Empty with clamp_cascade false: the cascade column is not clamped.
      std::vector<double> cascade_limits;
      GridIndex cascade_grid;  ///< over cascade_limits
      bool clamp_cascade = false;
    };
    std::vector<KeyWork> work;
    work.reserve(tasks.size());
    for (const auto& [key, pairs] : tasks) {
      KeyWork kw;
      kw.key = &key;
      kw.pairs = &pairs;
      for (const LiveEntry& e : key) kw.open_cascade = kw.open_cascade || (!e.dead && e.compat.residence == Residence::Rolling);
      work.push_back(std::move(kw));
    }
    // Cascade clamp (docs/design/search.md "Join", "Cascade clamp"). When SRAM is not an objective,
    // an open cascade's SRAM x matters to a key's completions only through which of them fit, and
    // each completion fits exactly when x <= some limit of its own. A step that reads the rolling
    // buffer with layer row r of pair p needs x <= capacity - full(p) - buffer(p) - own(r); if it
    // keeps the cascade open, its row's cascade is x + buffer(p) + own(r) + held(p), which must meet
    // the limits of the key it goes to. So the limits of a key are found by looking ahead through
    // the cascade to the step that closes it. Two values with the same least limit at or above them
    // admit the same completions, so the pruning compares that limit (+inf above every limit) instead
    // of the value. Exact for the objectives; the rows keep their values, the SRAM tie-break its own.
    if (sram_tiebreak && problem.cascade_clamp && s + 1 < num_steps && cascade_run[static_cast<std::size_t>(s + 1)] < kMaxAhead &&
        std::any_of(work.begin(), work.end(), [](const KeyWork& kw) { return kw.open_cascade; })) {
      struct AheadKey {
        const LiveKey* key = nullptr;
        std::vector<double> limits;
        bool known = true;  ///< limits found (false: the cascade outlasts the look-ahead, or too many limits)
      };
      constexpr std::size_t kMaxLimits = std::size_t{1} << 11;
      // levels[d]: the open-cascade keys after step s + d; tasks[d]: their pairs at step s + d + 1.
      std::vector<std::vector<AheadKey>> levels(1);
      std::vector<std::vector<std::pair<LiveKey, std::vector<PairTask>>>> level_tasks;
      std::vector<std::uint32_t> work_of;  // level-0 index -> work index
      auto& cached = clamp_cache.by_step[static_cast<std::size_t>(s)];
      for (std::uint32_t i = 0; i < work.size(); ++i) {
        KeyWork& kw = work[i];
        if (!kw.open_cascade) continue;
        const auto found = cached.find(*kw.key);
        if (found != cached.end()) {
          kw.clamp_cascade = true;
          kw.cascade_limits = found->second;
          kw.cascade_grid.build([&](std::size_t j) { return kw.cascade_limits[j]; }, kw.cascade_limits.size());
          continue;
        }
        levels[0].push_back(AheadKey{kw.key, {}, true});
        work_of.push_back(i);
      }
      std::vector<char> intro = introduced;
      for (int d = 0; !levels[static_cast<std::size_t>(d)].empty(); ++d) {
        const int st = s + 1 + d;
        std::vector<AheadKey>& here = levels[static_cast<std::size_t>(d)];
        if (st >= num_steps || d >= kMaxAhead) {
          for (AheadKey& k : here) k.known = false;
          break;
        }
        std::uint64_t unused = 0;
        level_tasks.push_back(match_pairs(st, here.size(), [&](std::size_t i) -> const LiveKey& { return *here[i].key; }, intro, unused));
        for (int t : problem.steps[st].inputs) {
          if (tensors[t].producer_step < 0) intro[t] = 1;
        }
        std::vector<AheadKey> deeper;
        for (const auto& [next_key, pairs] : level_tasks.back()) {
          const bool continues = !pairs.empty() && pairs.front().output_rolling && pairs.front().input_rolling;
          if (continues) deeper.push_back(AheadKey{&next_key, {}, true});
        }
        levels.push_back(std::move(deeper));
      }
      // Backwards: each key's limits from its pairs at the next step and the limits of where they go.
      for (std::size_t d = level_tasks.size(); d-- > 0;) {
        std::vector<AheadKey>& here = levels[d];
        const std::vector<AheadKey>& deeper = levels[d + 1];
        std::uint32_t deeper_index = 0;  // the deeper keys were made in map order
        // Each key's pairs at the next step, with the deeper key each goes to (kNoTrace: none).
        std::vector<std::vector<std::pair<const PairTask*, std::uint32_t>>> pairs_of_key(here.size());
        for (const auto& [next_key, pairs] : level_tasks[d]) {
          const bool continues = !pairs.empty() && pairs.front().output_rolling && pairs.front().input_rolling;
          const std::uint32_t to = continues ? deeper_index++ : kNoTrace;
          for (const PairTask& task : pairs) pairs_of_key[task.left].emplace_back(&task, to);
        }
        const auto sort_unique = [](std::vector<double>& v) {
          std::sort(v.begin(), v.end());
          v.erase(std::unique(v.begin(), v.end()), v.end());
        };
        // A key's candidate limits come as ascending runs (its own fit checks, then one run per shift
        // of a deeper key's limits); merged pairwise, they are sorted in O(n log runs).
        const auto merge_runs = [](std::vector<double>& v, std::vector<std::size_t>& runs) {
          std::vector<double> buffer(v.size());
          std::vector<std::size_t> merged_runs;
          while (runs.size() > 1) {
            merged_runs.clear();
            for (std::size_t j = 0; j < runs.size(); j += 2) {
              const std::size_t mid = j + 1 < runs.size() ? runs[j + 1] : v.size();
              const std::size_t end = j + 2 < runs.size() ? runs[j + 2] : v.size();
              const auto at = [&](std::size_t x) { return v.begin() + static_cast<std::ptrdiff_t>(x); };
              std::merge(at(runs[j]), at(mid), at(mid), at(end), buffer.begin() + static_cast<std::ptrdiff_t>(runs[j]));
              merged_runs.push_back(runs[j]);
            }
            v.swap(buffer);
            runs.swap(merged_runs);
          }
        };
        // Per key, in parallel (the keys are independent).
        const auto limits_of = [&](std::size_t i) {
          AheadKey& k = here[i];
          // The SRAM the key's next step adds to the cascade value in each fit check, and per deeper
          // key the amounts by which its value grows on the way there.
          std::vector<double> direct;
          std::map<std::uint32_t, std::vector<double>> shifts;
          for (const auto& [task, to] : pairs_of_key[i]) {
            if (!k.known || !task->input_rolling) continue;  // not read: the cascade's value sets no limit
            if (to != kNoTrace && !deeper[to].known) {
              k.known = false;
              continue;
            }
            for (double own : distinct_own_sram[static_cast<std::size_t>(s + 1) + d][task->right]) {
              direct.push_back(task->full_bytes + task->rolling_bytes + own);
              if (to != kNoTrace) shifts[to].push_back(task->rolling_bytes + own + task->held_bytes);
            }
          }
          if (k.known) {
            sort_unique(direct);
            std::vector<std::size_t> runs{0};
            // capacity - add falls as add rises: the run is the fit checks in reverse.
            for (auto add = direct.rbegin(); add != direct.rend(); ++add) k.limits.push_back(capacity - *add);
            for (auto& [to, add] : shifts) {
              sort_unique(add);
              if (k.limits.size() + add.size() * deeper[to].limits.size() > kMaxLimits * 4) {
                k.known = false;
                break;
              }
              for (double a : add) {
                runs.push_back(k.limits.size());
                for (double lim : deeper[to].limits) {
                  if (lim >= a) k.limits.push_back(lim - a);
                }
              }
            }
            if (k.known) {
              merge_runs(k.limits, runs);
              std::vector<double>& v = k.limits;
              v.erase(std::unique(v.begin(), v.end()), v.end());
              // A cascade value lies in [0, capacity] (it is part of a usage that fits), so only limits
              // in that range and the first one above it can be the least limit at or above a value.
              v.erase(v.begin(), std::lower_bound(v.begin(), v.end(), 0.0));
              const auto above = std::lower_bound(v.begin(), v.end(), capacity);
              if (above != v.end()) v.erase(above + 1, v.end());
              k.known = v.size() <= kMaxLimits;
            }
          }
          if (!k.known) k.limits.clear();
        };
        in_arena([&] { tbb::parallel_for(std::size_t{0}, here.size(), limits_of); });
      }
      // Every key whose limits are known, for the steps after this one and the passes after this one.
      for (std::size_t d = 0; d < levels.size() && s + static_cast<int>(d) < num_steps; ++d) {
        auto& at = clamp_cache.by_step[static_cast<std::size_t>(s) + d];
        for (const AheadKey& k : levels[d]) {
          if (k.known) at.try_emplace(*k.key, k.limits);
        }
      }
      for (std::size_t i = 0; i < levels[0].size(); ++i) {
        KeyWork& kw = work[work_of[i]];
        kw.clamp_cascade = levels[0][i].known;
        if (kw.clamp_cascade) {
          kw.cascade_limits = std::move(levels[0][i].limits);
          kw.cascade_grid.build([&](std::size_t j) { return kw.cascade_limits[j]; }, kw.cascade_limits.size());
        }
      }
    }
    // Lower bounds of the SRAM every later step must use (docs/design/search.md "Join", "Future SRAM
    // bound"). For a later step t the usage is at least: the reserved bytes of this step's live
    // entries that are still live at t (a function of the new key) + the cheapest group of t in the
    // tensors t touches that are not yet live now (its output, and inputs produced after this step
    // or network inputs it introduces) + that group's smallest own SRAM. `fresh_min[t]` is the
    // second part, the same for every key of this step.
    // It depends on the step only through which of t's inputs are live, so it is cached per t by
    // that set (`fresh_cache`); `fresh_max` answers the maximum of fresh_min over a range of steps.
    std::vector<double> fresh_min(static_cast<std::size_t>(num_steps), 0.0);
    for (int t = s + 1; t < num_steps; ++t) {
      const JoinStep& later = problem.steps[t];
      const std::size_t num_inputs = later.inputs.size();
      std::vector<char> live_now(num_inputs, 0);
      std::uint64_t mask = 0;
      for (std::size_t i = 0; i < num_inputs; ++i) {
        const int tensor = later.inputs[i];
        const JoinTensor& jt = tensors[tensor];
        live_now[i] = (jt.producer_step >= 0 && jt.producer_step <= s) ||
                      (jt.producer_step < 0 && (introduced[tensor] || first_consumer[tensor] <= s));
        if (live_now[i] && i < 64) mask |= std::uint64_t{1} << i;
      }
      auto& cache = fresh_cache[static_cast<std::size_t>(t)];
      const bool cacheable = num_inputs <= 64;
      const auto hit = std::find_if(cache.begin(), cache.end(), [&](const auto& c) { return c.first == mask; });
      if (cacheable && hit != cache.end()) {
        fresh_min[static_cast<std::size_t>(t)] = hit->second;
        continue;
      }
      double best = std::numeric_limits<double>::infinity();
      for (const PmappingGroup& g : later.groups) {
        double bytes = 0.0;
        for (std::size_t i = 0; i < num_inputs; ++i) {
          const int tensor = later.inputs[i];
          bool repeated = false;
          for (std::size_t j = 0; j < i; ++j) repeated = repeated || later.inputs[j] == tensor;
          if (!live_now[i] && !repeated) bytes += static_cast<double>(reserved_bytes(tensors[tensor], g.compat[i], problem.arena_is_sram));
        }
        // An output written in place over an input shares that input's storage.
        if (g.compat.back().over_input < 0) {
          bytes += static_cast<double>(reserved_bytes(tensors[later.output], g.compat.back(), problem.arena_is_sram));
        }
        if (g.rows.empty()) continue;
        best = std::min(best, bytes + least_own_sram[static_cast<std::size_t>(t)][&g - later.groups.data()]);
      }
      fresh_min[static_cast<std::size_t>(t)] = std::isfinite(best) ? best : 0.0;
      if (cacheable) cache.emplace_back(mask, fresh_min[static_cast<std::size_t>(t)]);
    }
    // Sparse table over fresh_min: level j holds the maximum of 2^j consecutive steps.
    std::vector<std::vector<double>> fresh_levels{fresh_min};
    for (std::size_t w = 1; 2 * w <= static_cast<std::size_t>(num_steps); w *= 2) {
      const std::vector<double>& prev = fresh_levels.back();
      std::vector<double> next_level(prev.size() - w);
      for (std::size_t i = 0; i < next_level.size(); ++i) next_level[i] = std::max(prev[i], prev[i + w]);
      fresh_levels.push_back(std::move(next_level));
    }
    const auto fresh_max = [&](int a, int b) {  // max of fresh_min[a..b], a <= b
      std::size_t j = 0;
      while ((std::size_t{2} << j) <= static_cast<std::size_t>(b - a + 1)) ++j;
      const std::vector<double>& lv = fresh_levels[j];
      return std::max(lv[static_cast<std::size_t>(a)], lv[static_cast<std::size_t>(b + 1) - (std::size_t{1} << j)]);
    };
    // The incumbent bound with two summed objectives, as regions (docs/design/search.md "Join",
    // "Incumbent bound"): a row in SRAM interval l whose completions each add at least one point p of
    // the interval's rest set is dominated there when, for every p, some incumbent of the interval
    // dominates (row + p): the row's sums lie in the intersection over p of the interval's dominance
    // region (`tie_regions` or `above_regions`, see there) shifted by -p. The row is dropped when that
    // holds in every interval from its own on, so the drop regions of interval j are the intersection
    // over the intervals j and above: one binary search per row instead of one query per interval and
    // point. drop_tie[j] serves rows whose bounded peak equals the interval's start, drop_above[j] the
    // others.
    // The sums of a row that pass the test with rest points `points` and dominance region `base`.
    const auto region_of = [&](const std::vector<Point>& points, const UpSet& base) {
      UpSet region;
      region.everything = true;  // no completion: nothing to dominate
      for (const Point& p : points) {
        region = UpSet::intersect(region, base.shifted(-p.first, -p.second));
        if (!region.everything && region.gens.empty()) break;
      }
      return region;
    };
    // Per interval: (the rows with their peak at its start, the others) for the rest sets `sets(l)`.
    const auto drop_regions_of = [&](const auto& sets) {
      std::pair<std::vector<UpSet>, std::vector<UpSet>> out;
      out.first.resize(num_levels);
      out.second.resize(num_levels);
      UpSet above;
      above.everything = true;
      for (std::size_t l = num_levels; l-- > 0;) {
        const std::vector<Point>& points = sets(l);
        out.second[l] = UpSet::intersect(above, region_of(points, above_regions[l]));
        above = UpSet::intersect(above, region_of(points, tie_regions[l]));
        out.first[l] = above;
      }
      for (std::vector<UpSet>* regions : {&out.first, &out.second}) {
        for (UpSet& r : *regions) r.index();
      }
      return out;
    };
    std::vector<UpSet> drop_tie;
    std::vector<UpSet> drop_above;
    if (index && !rest_sets.empty()) {
      std::tie(drop_tie, drop_above) =
          drop_regions_of([&](std::size_t l) -> const std::vector<Point>& { return rest_sets[static_cast<std::size_t>(s + 1) * num_levels + l]; });
    }
    const auto should_stop = [&] { return problem.stop.stop_requested(); };
    const auto merge_key = [&](KeyWork& kw) {
      // The key bound's regions for this key, when its sets are known (else the step's regions).
      std::pair<std::vector<UpSet>, std::vector<UpSet>> key_regions;
      // Worth its cost (an intersection of shifted incumbent sets per point and interval) only for a key
      // with many candidate rows; the others use the step's regions (unless the key bound is forced on).
      std::size_t candidates = 0;
      for (const PairTask& task : *kw.pairs) candidates += rows_of(task.left).size() * right[task.right].rows.size();
      if (!key_bounds.empty() && !drop_tie.empty() && (candidates >= kKeyBoundMinRows || problem.key_bound == KeyBound::On)) {
        const KeyBounds& kb = key_bounds[static_cast<std::size_t>(s)];
        const auto found = kb.index.find(*kw.key);
        if (found != kb.index.end()) {
          key_regions = drop_regions_of([&](std::size_t l) -> const std::vector<Point>& { return kb.sets[found->second][l]; });
        }
      }
      const std::vector<UpSet>& regions_tie = key_regions.first.empty() ? drop_tie : key_regions.first;
      const std::vector<UpSet>& regions_above = key_regions.first.empty() ? drop_above : key_regions.second;
      bool open_cascade = false;
      for (const LiveEntry& e : *kw.key) open_cascade = open_cascade || (!e.dead && e.compat.residence == Residence::Rolling);
      const std::vector<Column> cols = join_columns(problem.objectives, open_cascade);
      // The future SRAM bound of this key: every completion's peak is at least `future` and, while
      // the cascade is open, at least the row's cascade + `next` (the next step reads the rolling
      // buffer). Pruning compares peak SRAM as max(peak, future, cascade + next): two rows of one
      // key whose clamped values compare a <= b reach final peaks a <= b under every completion,
      // because the final peak is max(peak, later usages) and the later usages are at least these
      // bounds (and differ between the rows only by their cascade). Exact; the rows keep their values.
      double future = 0.0;
      double next = 0.0;
      if (problem.future_sram_bound && s + 1 < num_steps) {
        // The key's entries stay live up to their last consumer (network outputs to the end), so
        // their bytes are a step function of t: constant between consecutive last consumers. Each
        // such range adds its live bytes to the range's largest fresh_min. Bytes are whole numbers,
        // so the sums are exact in any order.
        std::vector<std::pair<int, double>> ends;  // (last step live, bytes)
        double live = 0.0;
        for (const LiveEntry& e : *kw.key) {
          const JoinTensor& jt = tensors[e.tensor];
          if (e.dead) continue;
          const int last = jt.network_output ? num_steps - 1 : std::min(jt.last_consumer_step, num_steps - 1);
          if (last <= s) continue;
          const double bytes = static_cast<double>(reserved_bytes(jt, e.compat, problem.arena_is_sram));
          ends.emplace_back(last, bytes);
          live += bytes;
        }
        std::sort(ends.begin(), ends.end());
        next = fresh_min[static_cast<std::size_t>(s + 1)] + live;
        int from = s + 1;
        for (std::size_t i = 0; i <= ends.size() && from < num_steps; ++i) {
          const int to = i < ends.size() ? ends[i].first : num_steps - 1;
          if (to >= from) {
            future = std::max(future, fresh_max(from, to) + live);
            from = to + 1;
          }
          if (i < ends.size()) live -= ends[i].second;
        }
      }
      const auto column_value = [&](const JoinRow& row, Column c) {
        if (c == Column::CascadeSram && kw.clamp_cascade) {
          const std::size_t at = kw.cascade_grid.count<false>([&](std::size_t i) { return kw.cascade_limits[i]; }, row.cascade);
          return at == kw.cascade_limits.size() ? std::numeric_limits<double>::infinity() : kw.cascade_limits[at];
        }
        if (c != Column::Sram) return row.value(c);
        return std::max({row.peak, future, open_cascade ? row.cascade + next : 0.0});
      };
      const auto prune = [&](MergeAcc& acc) {
        const std::size_t n = acc.rows.size();
        PruneScratch& x = prune_scratch();
        x.tab.resize(n * cols.size());
        for (std::size_t r = 0; r < n; ++r)
          for (std::size_t c = 0; c < cols.size(); ++c) x.tab[r * cols.size() + c] = grid(column_value(acc.rows[r].row, cols[c]));
        if (sram_tiebreak) {
          x.tie.resize(n);
          for (std::size_t r = 0; r < n; ++r) x.tie[r] = column_value(acc.rows[r].row, Column::Sram);
          // Rows equal under the clamp keep the least cascade SRAM first, then the least bounded
          // peak, as comparing the cascade itself would: a lexicographic tie-break, encoded exactly as
          // cascade * 2^26 + peak when both are whole numbers of bytes below 2^26 (64 MiB), else as
          // ranks.
          constexpr double kSpan = 67108864.0;  // 2^26
          const auto small_whole = [&](double v) { return v >= 0.0 && v < kSpan && v == std::floor(v); };
          bool direct = kw.clamp_cascade;
          for (std::size_t r = 0; r < n && direct; ++r) direct = small_whole(x.tie[r]) && small_whole(acc.rows[r].row.cascade);
          if (direct) {
            for (std::size_t r = 0; r < n; ++r) x.tie[r] += acc.rows[r].row.cascade * kSpan;
          } else if (kw.clamp_cascade) {
            std::vector<double>& by_peak = x.scratch_a;
            std::vector<double>& by_cascade = x.scratch_b;
            by_peak.assign(x.tie.begin(), x.tie.end());
            by_cascade.resize(n);
            for (std::size_t r = 0; r < n; ++r) by_cascade[r] = acc.rows[r].row.cascade;
            for (std::vector<double>* v : {&by_peak, &by_cascade}) {
              std::sort(v->begin(), v->end());
              v->erase(std::unique(v->begin(), v->end()), v->end());
            }
            const auto rank = [](const std::vector<double>& sorted, double x) {
              return static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
            };
            const double peaks = static_cast<double>(by_peak.size());
            for (std::size_t r = 0; r < n; ++r) {
              x.tie[r] = rank(by_cascade, acc.rows[r].row.cascade) * peaks + rank(by_peak, x.tie[r]);
            }
          }
          pareto_front_tiebreak(x.tab.data(), n, cols.size(), x.tie.data(), x.ws, x.keep);
        } else {
          pareto_front(x.tab.data(), n, cols.size(), x.ws, x.keep);
        }
        acc.dropped += n - x.keep.size();
        for (std::size_t i = 0; i < x.keep.size(); ++i) acc.rows[i] = acc.rows[x.keep[i]];
        acc.rows.resize(x.keep.size());
      };
      // The incumbent bound (docs/design/search.md "Join", "Incumbent bound"): a completion of a row
      // whose final peak SRAM lies in interval i reaches at least the row's sums plus rest_min of
      // that interval, and a peak of at least max(the row's bounded peak, the interval's start). A
      // row for which an incumbent (a real complete mapping) strictly dominates that bound in every
      // interval has only dominated completions, and so has every row it dominates: dropping it
      // leaves the front and every choice of the pruning unchanged. The sums are lowered by a
      // relative 1e-12, far more than their rounding, so a completion equal to an incumbent is never
      // dropped. A row is checked once: its bound does not change within the step.
      const double* rest = rest_min.data() + static_cast<std::size_t>(s + 1) * num_levels * num_objectives;
      const auto completions_dominated = [&](const JoinRow& row) {
        const double peak = column_value(row, Column::Sram);
        std::size_t first = count_before<true>(levels.data(), levels.size(), peak);
        first = first == 0 ? 0 : first - 1;
        if (!regions_tie.empty()) {
          return (peak > levels[first] ? regions_above : regions_tie)[first].contains(row.value(column_of(problem.objectives[summed[0]])),
                                              row.value(column_of(problem.objectives[summed[1]])));
        }
        // Otherwise per interval, as the regions do: an incumbent at most the bound everywhere and
        // below it in one objective: in one summed objective (`dominates` takes "below" in the first
        // coordinate and "at most" in the others, so each choice is one query with the margins moved),
        // or in SRAM (the incumbents of the interval before, or all when the row's peak is above the
        // interval's start).
        double sum[8];
        double b[8];
        const std::size_t m = summed.size();
        const auto query = [&](std::size_t l, std::size_t strict) {  // strict == m: none (ties in SRAM)
          for (std::size_t x = 0; x < m; ++x) b[x] = sum[x] * (x == strict ? 1.0 - 1e-12 : 1.0 + 1e-12);
          return index->dominates(l, b);
        };
        for (std::size_t l = first; l < num_levels; ++l) {
          const double* add = rest + l * num_objectives;
          bool reachable = true;
          for (std::size_t x = 0; x < m; ++x) {
            reachable = reachable && std::isfinite(add[summed[x]]);
            sum[x] = row.value(column_of(problem.objectives[summed[x]])) + add[summed[x]];
          }
          if (!reachable) continue;
          bool dominated = capped && sum[0] >= above_cap(incumbents->cap);  // above join_best's cap
          if (!dominated && sram_objective && l == first && peak > levels[first]) {
            dominated = query(l, m);
          } else if (!dominated) {
            for (std::size_t strict = 0; strict < m && !dominated; ++strict) dominated = query(l, strict);
            if (!dominated && sram_objective && l > 0) dominated = query(l - 1, m);
          }
          if (!dominated) return false;
        }
        return true;
      };
      const auto bound_filter = [&](MergeAcc& acc) {
        if (incumbents == nullptr || !incumbents->bounds_anything()) return;
        std::size_t out = 0;
        for (std::size_t r = 0; r < acc.rows.size(); ++r) {
          PendingRow& p = acc.rows[r];
          if (!p.bound_checked) {
            if (completions_dominated(p.row)) {
              ++acc.dropped;
              continue;
            }
            p.bound_checked = true;
          }
          acc.rows[out++] = p;
        }
        acc.rows.resize(out);
      };
      // The dominance filter (docs/design/search.md "Join", "Dominance filter"): after each pruning the
      // surviving rows become a snapshot against which new merged rows are checked before they are
      // stored. A row strictly dominated by a row already merged into this key is dropped by the next
      // pruning anyway (or by the incumbent bound, which drops every row its dropped rows dominate),
      // so skipping it changes neither the front nor the counters (it counts as dominated). Off with a
      // tolerance, whose grid is applied only when pruning.
      const bool use_filter = problem.dominance_filter && log_step == 0.0 && cols.size() <= kFilterColumns;
      const bool use_bound = incumbents != nullptr && incumbents->bounds_anything();
      const std::size_t ncols = cols.size();
      // The sibling bound (docs/design/search.md "Join", "Sibling bound"): the merge of a left row with
      // a layer row is strictly dominated by its merge with another row of the same layer group that
      // is at most it in every summed objective and below it in one (the sums keep that order, and
      // the strictness is checked on the sums themselves), when the other merge fits and is at most
      // it in the key's SRAM columns too: its own SRAM no more (an open cascade), or its usage below
      // the merge's bounded peak (peak SRAM an objective), or just within the capacity (peak SRAM only
      // breaks ties). The pruning would drop it; it is never stored. Off with a tolerance, whose grid
      // can merge the two.
      const bool use_sibling = problem.sibling_bound && log_step == 0.0;
      const double sram_floor = std::max(future, open_cascade ? next : 0.0);  // column_value's floor with no cascade
      const auto sibling_dominates = [&](const PairTask& task, const JoinRow& lr, double cascade_in, double usage, const PmappingRow& pr,
                                         const PmappingRow& q) {
        if (q.sram_bytes > pr.sram_bytes) {
          if (task.output_rolling) return false;
          const double q_usage = task.full_bytes + cascade_in + q.sram_bytes;
          if (q_usage > capacity || (sram_objective && q_usage > std::max({usage, lr.peak, sram_floor}))) return false;
        }
        for (const Column c : summed_columns) {
          if (lr.value(c) + q.value(c) < lr.value(c) + pr.value(c)) return true;
        }
        return false;
      };
      // The merged row of a left row and a layer row's values, as merge_units forms it.
      const auto merged = [&](const PairTask& task, const JoinRow& lr, double cascade_in, double usage, double cycles,
                              double offchip, double energy, double own_sram) {
        JoinRow row;
        row.cycles = lr.cycles + cycles;
        row.offchip = lr.offchip + offchip;
        row.energy = lr.energy + energy;
        row.peak = std::max(lr.peak, usage);
        row.cascade = task.output_rolling ? cascade_in + own_sram + task.held_bytes : 0.0;
        return row;
      };
      // A pilot: the front of the merges of a few sampled left rows of every pair (real rows of this
      // key), so the filter works from the first row of every unit on.
      std::vector<double> pilot;
      if (use_filter) {
        for (const PairTask& task : *kw.pairs) {
          const std::vector<JoinRow>& g_rows = rows_of(task.left);
          const PmappingGroup& pg = right[task.right];
          if (g_rows.size() < kPilotMinRows) continue;  // small: merging it all costs what sampling would
          for (std::uint32_t r : samples[task.left]) {
            const JoinRow& lr = g_rows[r];
            const double cascade_in = task.input_rolling ? lr.cascade + task.rolling_bytes : 0.0;
            for (const PmappingRow& pr : pg.rows) {
              const double usage = task.full_bytes + cascade_in + pr.sram_bytes;
              if (usage > capacity) continue;
              const JoinRow row = merged(task, lr, cascade_in, usage, pr.cycles, pr.offchip_bytes, pr.energy_pj, pr.sram_bytes);
              for (std::size_t c = 0; c < ncols; ++c) pilot.push_back(column_value(row, cols[c]));
            }
          }
        }
        if (!pilot.empty()) {
          PruneScratch& x = prune_scratch();
          const std::vector<std::uint32_t>& keep = x.keep;
          pareto_front(pilot.data(), pilot.size() / ncols, ncols, x.ws, x.keep);
          for (std::size_t i = 0; i < keep.size(); ++i)
            std::copy_n(pilot.begin() + keep[i] * ncols, ncols, pilot.begin() + i * ncols);
          pilot.resize(keep.size() * ncols);
        }
      }
      DominanceFilter pilot_filter;  // used by a table that has not been pruned yet
      if (use_filter) pilot_filter.build(pilot.data(), pilot.size() / ncols, ncols);
      const auto refresh_filter = [&](MergeAcc& acc) {
        if (!use_filter) return;
        std::vector<double>& tab = prune_scratch().tab;
        tab.assign(pilot.begin(), pilot.end());
        tab.resize(pilot.size() + acc.rows.size() * ncols);
        double* out = tab.data() + pilot.size();
        for (std::size_t r = 0; r < acc.rows.size(); ++r)
          for (std::size_t c = 0; c < ncols; ++c) out[r * ncols + c] = column_value(acc.rows[r].row, cols[c]);
        acc.filter.build(tab.data(), tab.size() / ncols, ncols);
      };
      // Prune whenever the table has doubled since the last pruning, so memory stays near the size
      // of the front.
      const auto maybe_prune = [&](MergeAcc& acc) {
        if (acc.rows.size() < acc.threshold) return;
        prune(acc);
        bound_filter(acc);
        refresh_filter(acc);
        acc.threshold = std::max<std::size_t>(8192, 2 * acc.rows.size());
      };
      // The pairs' rows are cut into units of about kUnitRows merged rows (a pair with many left rows
      // into several units), merged in parallel and combined in unit order by a deterministic
      // reduction: pruning is "concatenate in canonical order, filter again" (pareto.hpp), so the
      // result does not depend on how the units were grouped.
      std::vector<MergeUnit> units;
      std::size_t key_rows = 0;  // merged rows of the whole key
      for (std::uint32_t i = 0; i < kw.pairs->size(); ++i) {
        const PairTask& task = (*kw.pairs)[i];
        const std::size_t left_rows = rows_of(task.left).size();
        const std::size_t per_left = std::max<std::size_t>(1, right[task.right].rows.size());
        key_rows += left_rows * per_left;
        const std::size_t step_rows = std::max<std::size_t>(1, kUnitRows / per_left);
        for (std::size_t r = 0; r < left_rows; r += step_rows) {
          units.push_back(MergeUnit{i, static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(std::min(left_rows, r + step_rows))});
        }
      }
      const auto merge_units = [&](MergeAcc& acc, std::size_t first, std::size_t last) {
        for (std::size_t u = first; u < last; ++u) {
          if (should_stop()) return;
          const MergeUnit& unit = units[u];
          const PairTask& task = (*kw.pairs)[unit.pair];
          const std::vector<JoinRow>& g_rows = rows_of(task.left);
          const PmappingGroup& pg = right[task.right];
          const RowSummary& summary = summaries[task.right];
          double v[8];
          const auto filtered = [&](const MergeAcc& a, const JoinRow& row) {
            const DominanceFilter& f = a.filter.empty() ? pilot_filter : a.filter;
            if (!use_filter || f.empty()) return false;
            for (std::size_t c = 0; c < ncols; ++c) v[c] = column_value(row, cols[c]);
            return f.dominated(v);
          };
          // Every merged row of a left row is at least its merge with the layer group's least values (all
          // columns grow with each of them): when the filter drops that bound, it drops them all; when
          // every completion of it is dominated (the incumbent bound), so is every completion of each
          // merged row, which the bound would drop after the pruning.
          const auto least_dropped = [&](const JoinRow& lr, double cascade_in) {
            const JoinRow least = merged(task, lr, cascade_in, task.full_bytes + cascade_in + summary.sram_bytes,
                                         summary.cycles, summary.offchip, summary.energy, summary.sram_bytes);
            return filtered(acc, least) || (use_bound && completions_dominated(least));
          };
          // A left row's merges all dropped count as merging them one by one would: those over the SRAM
          // capacity, then the rest dominated.
          const auto drop_all = [&](double cascade_in, std::size_t left_rows = 1) {
            const std::size_t fit = static_cast<std::size_t>(
                std::partition_point(summary.sorted_sram.begin(), summary.sorted_sram.end(),
                                     [&](double own) { return !(task.full_bytes + cascade_in + own > capacity); }) -
                summary.sorted_sram.begin());
            acc.paired += left_rows * pg.rows.size();
            acc.over_capacity += left_rows * (pg.rows.size() - fit);
            acc.dropped += left_rows * fit;
          };
          const auto cascade_in_of = [&](const JoinRow& lr) {
            return task.input_rolling ? lr.cascade + task.rolling_bytes : 0.0;
          };
          // drop_all for left rows [first, last) (without a rolling input, every row fits the same).
          const auto drop_range = [&](std::uint32_t first, std::uint32_t last) {
            if (!task.input_rolling) {
              drop_all(0.0, last - first);
              return;
            }
            for (std::uint32_t r = first; r < last; ++r) drop_all(cascade_in_of(g_rows[r]));
          };
          // The same for the whole unit, from the left group's least values (a row below every left row).
          const JoinRow& least = least_left[task.left];
          if (pg.rows.size() > 1 && unit.end - unit.begin > 1 && least_dropped(least, cascade_in_of(least))) {
            drop_range(unit.begin, unit.end);
            continue;
          }
          const std::vector<JoinRow>& blocks = least_block[task.left];
          for (std::uint32_t r = unit.begin; r < unit.end; ++r) {
            // The same for the next kLeastBlock left rows (consecutive rows are often merges of one
            // earlier row, so their least values are close), at the start of each block.
            if (r % kLeastBlock == 0 && pg.rows.size() > 1 && r + 1 < unit.end) {
              const JoinRow& block = blocks[r / kLeastBlock];
              if (least_dropped(block, cascade_in_of(block))) {
                const std::uint32_t end = std::min<std::uint32_t>(unit.end, r + kLeastBlock);
                drop_range(r, end);
                r = end - 1;
                continue;
              }
            }
            const JoinRow& lr = g_rows[r];
            const double cascade_in = cascade_in_of(lr);
            if (pg.rows.size() > 1 && least_dropped(lr, cascade_in)) {
              drop_all(cascade_in);
              continue;
            }
            for (std::uint32_t m = 0; m < pg.rows.size(); ++m) {
              const PmappingRow& pr = pg.rows[m];
              ++acc.paired;
              const double usage = task.full_bytes + cascade_in + pr.sram_bytes;
              if (usage > capacity) {
                ++acc.over_capacity;
                continue;
              }
              if (use_sibling && summary.sibling[m] != kNoSibling && sibling_dominates(task, lr, cascade_in, usage, pr, pg.rows[summary.sibling[m]])) {
                ++acc.dropped;
                continue;
              }
              PendingRow p;
              p.row = merged(task, lr, cascade_in, usage, pr.cycles, pr.offchip_bytes, pr.energy_pj, pr.sram_bytes);
              if (filtered(acc, p.row)) {
                ++acc.dropped;
                continue;
              }
              p.parent = lr.trace;
              p.group = task.right;
              p.member = m;
              acc.rows.push_back(p);
              ++acc.stored;
            }
            maybe_prune(acc);
          }
        }
      };
      MergeAcc total;
      if (units.size() <= 1 || key_rows <= kUnitRows) {  // one unit's worth: no parallel reduction
        merge_units(total, 0, units.size());
      } else {
        struct Body {
          const decltype(merge_units)* merge;
          const decltype(maybe_prune)* maybe;
          MergeAcc acc;
          Body(const decltype(merge_units)* m, const decltype(maybe_prune)* p) : merge(m), maybe(p) {}
          Body(Body& other, tbb::split) : merge(other.merge), maybe(other.maybe) {}
          void operator()(const tbb::blocked_range<std::size_t>& r) { (*merge)(acc, r.begin(), r.end()); }
          void join(Body& rhs) {
            acc.rows.insert(acc.rows.end(), rhs.acc.rows.begin(), rhs.acc.rows.end());
            acc.paired += rhs.acc.paired;
            acc.stored += rhs.acc.stored;
            acc.over_capacity += rhs.acc.over_capacity;
            acc.dropped += rhs.acc.dropped;
            (*maybe)(acc);
          }
        };
        Body body(&merge_units, &maybe_prune);
        tbb::parallel_deterministic_reduce(tbb::blocked_range<std::size_t>(0, units.size(), 1), body, tbb::simple_partitioner());
        total = std::move(body.acc);
      }
      if (should_stop()) return;
      prune(total);
      bound_filter(total);
      // Kept until the step's keys are all merged: only the front's rows (the table was sized for
      // rows merged between prunings), so the next keys reuse the memory instead of touching more.
      total.rows.shrink_to_fit();
      kw.rows = std::move(total.rows);
      kw.paired = total.paired;
      kw.stored = total.stored;
      kw.over_capacity = total.over_capacity;
      kw.dominated = total.dropped;
      // A quick pass keeps at most kQuickStepRows rows per step: with many keys, fewer per key.
      const std::size_t step_beam = std::min(beam, std::max(kQuickMinRows, kQuickStepRows / work.size()));
      if (beam > 0 && s + 1 < num_steps && kw.rows.size() > step_beam) {
        thin_to_beam(kw.rows, cols, column_value, step_beam);
        kw.thinned = true;
      }
      if (problem.lookahead) {
        for (const LiveEntry& e : *kw.key) {
          if (e.dead) continue;
          for (const auto& [c_step, slot] : consumers[e.tensor]) {
            if (c_step > s && (accepted[c_step][slot] & compat_bit(e.compat)) == 0) kw.acceptable = false;
          }
        }
      }
    };
    in_arena([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, work.size(), 1),
                        [&](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t k = range.begin(); k != range.end(); ++k) merge_key(work[k]);
                        },
                        tbb::simple_partitioner());
    });

    if (should_stop()) {
      result.partial = true;
      return result;
    }

    // A quick pass keeps at most kQuickMaxKeys keys per step (problem.quick_keys in tests): those
    // holding the best rows, taken in turn by each summed objective's least value (ties: key order).
    // Tensors whose compatibilities are chosen independently multiply the keys (the unrolled LSTMs
    // reach 1,024), and a quick pass needs only a few good complete mappings.
    if (beam > 0 && s + 1 < num_steps) {
      std::vector<std::uint32_t> live;
      for (std::uint32_t k = 0; k < work.size(); ++k) {
        if (work[k].acceptable && !work[k].rows.empty()) live.push_back(k);
      }
      const std::size_t max_keys = problem.quick_keys > 0 ? problem.quick_keys : kQuickMaxKeys;
      if (live.size() > max_keys && !summed_columns.empty()) {
        std::vector<std::vector<std::uint32_t>> by_column(summed_columns.size(), live);
        std::vector<double> least(work.size());
        for (std::size_t j = 0; j < summed_columns.size(); ++j) {
          for (std::uint32_t k : live) {
            least[k] = std::numeric_limits<double>::infinity();
            for (const PendingRow& p : work[k].rows) least[k] = std::min(least[k], p.row.value(summed_columns[j]));
          }
          std::stable_sort(by_column[j].begin(), by_column[j].end(), [&](std::uint32_t a, std::uint32_t b) { return least[a] < least[b]; });
        }
        std::vector<char> keep(work.size(), 0);
        std::size_t kept = 0;
        for (std::size_t i = 0; i < live.size() && kept < max_keys; ++i) {
          for (std::size_t j = 0; j < by_column.size() && kept < max_keys; ++j) {
            const std::uint32_t k = by_column[j][i];
            if (!keep[k]) {
              keep[k] = 1;
              ++kept;
            }
          }
        }
        for (std::uint32_t k : live) {
          if (!keep[k]) {
            work[k].rows.clear();
            work[k].thinned = true;
          }
        }
      }
    }
    // Phase 3, in key order: trace nodes for the survivors and the new left groups (the counters and
    // each surviving key's first trace node in order, then the groups and nodes in parallel).
    std::vector<LeftGroup> merged;
    std::vector<TraceNode>& level = trace[static_cast<std::size_t>(s)];
    std::vector<std::pair<std::uint32_t, std::size_t>> out_keys;  // (work index, first trace node)
    std::size_t rows_kept = 0;
    for (std::uint32_t k = 0; k < work.size(); ++k) {
      const KeyWork& kw = work[k];
      if (kw.thinned && thinned != nullptr) *thinned = true;
      stats.rows_paired += kw.paired;
      stats.rows_stored += kw.stored;
      stats.dropped_sram_capacity += kw.over_capacity;
      stats.dropped_dominated += kw.dominated;
      if (kw.rows.empty()) continue;
      if (!kw.acceptable) {
        ++stats.groups_dropped_incompatible;
        stats.rows_dropped_incompatible += kw.rows.size();
        continue;
      }
      out_keys.emplace_back(k, rows_kept);
      rows_kept += kw.rows.size();
    }
    stats.rows_out += rows_kept;
    level.resize(rows_kept);
    merged.resize(out_keys.size());
    in_arena([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out_keys.size()), [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          KeyWork& kw = work[out_keys[i].first];
          std::size_t node = out_keys[i].second;
          LeftGroup& out = merged[i];
          out.key = *kw.key;
          out.rows.reserve(kw.rows.size());
          for (const PendingRow& p : kw.rows) {
            JoinRow row = p.row;
            row.trace = static_cast<std::uint32_t>(node);
            level[node++] = TraceNode{p.parent, p.group, p.member};
            out.rows.push_back(row);
          }
          std::vector<PendingRow>().swap(kw.rows);  // copied: its memory serves the next keys
        }
      });
    });
    stats.groups_out = merged.size();
    if (s > 0) {
      // Keep only the previous level's nodes that this step's rows descend from (in order).
      std::vector<TraceNode>& before = trace[static_cast<std::size_t>(s - 1)];
      std::vector<std::uint32_t> remap(before.size(), kNoTrace);
      for (const TraceNode& n : level) remap[n.parent] = 0;
      std::uint32_t kept = 0;
      for (std::uint32_t i = 0; i < before.size(); ++i) {
        if (remap[i] == kNoTrace) continue;
        before[kept] = before[i];
        remap[i] = kept++;
      }
      before.resize(kept);
      before.shrink_to_fit();
      for (TraceNode& n : level) n.parent = remap[n.parent];
    }
    const std::chrono::duration<double, std::milli> step_took = std::chrono::steady_clock::now() - step_start;
    spdlog::debug("join step {}: {} left groups x {} layer groups, {} pairs, {} rows paired, {} stored, {} groups / {} rows out, {:.1f} ms",
                  s, stats.left_groups, stats.right_groups, stats.group_pairs_matched, stats.rows_paired, stats.rows_stored, stats.groups_out,
                  stats.rows_out, step_took.count());
    result.steps.push_back(stats);
    if (progress != nullptr) {
      progress->rows_paired.fetch_add(stats.rows_paired, std::memory_order_relaxed);
      progress->steps_done.fetch_add(1, std::memory_order_relaxed);
    }
    left = std::move(merged);
  }

  // Collapse everything: the final front over the chosen objectives.
  std::vector<JoinRow> all;
  for (const auto& g : left) all.insert(all.end(), g.rows.begin(), g.rows.end());
  exact_front(all, columns, sram_tiebreak, workspace, table, survivors);
  for (std::uint32_t idx : survivors) {
    FrontPoint p;
    p.cycles = all[idx].cycles;
    p.offchip_bytes = all[idx].offchip;
    p.energy_pj = all[idx].energy;
    p.peak_sram_bytes = all[idx].peak;
    p.group.assign(num_steps, 0);
    p.row.assign(num_steps, 0);
    std::uint32_t node = all[idx].trace;
    for (int s = num_steps - 1; s >= 0; --s) {
      NPUMAP_ASSERT(node != kNoTrace);
      const TraceNode& n = trace[static_cast<std::size_t>(s)][node];
      p.group[s] = n.group;
      p.row[s] = n.row;
      node = n.parent;
    }
    result.front.push_back(std::move(p));
  }
  std::stable_sort(result.front.begin(), result.front.end(), [&](const FrontPoint& a, const FrontPoint& b) {
    for (Objective o : problem.objectives) {
      if (a.objective(o) != b.objective(o)) return a.objective(o) < b.objective(o);
    }
    return false;
  });
  return result;
}

/// join_pass with its wall time in the debug log (-vv).
JoinResult timed_pass(const JoinProblem& problem, std::size_t beam, const Incumbents* incumbents, ClampCache& clamp_cache,
                      bool* thinned = nullptr, const PassHistory& history = {}) {
  const auto start = std::chrono::steady_clock::now();
  JoinResult r = join_pass(problem, beam, incumbents, thinned, history, clamp_cache);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (beam > 0) {
    spdlog::debug("join quick pass ({} rows per key): {:.1f} ms, {} points", beam, took.count(), r.front.size());
  } else {
    spdlog::debug("join exact pass: {:.1f} ms, {} points", took.count(), r.front.size());
  }
  return r;
}

/// `r` (stopped) with the best of the complete mappings the finished quick passes found: the Pareto
/// front of `found` on the problem's objectives, sorted by them in order (ties: the order found).
JoinResult with_found_before_stop(JoinResult r, const std::vector<FrontPoint>& found, const std::vector<Objective>& objectives) {
  const std::size_t k = objectives.size();
  if (found.empty() || k == 0) return r;
  std::vector<double> values;
  for (const FrontPoint& p : found) {
    for (Objective o : objectives) values.push_back(p.objective(o));
  }
  std::vector<std::uint32_t> keep = pareto_front(values.data(), found.size(), k);
  std::sort(keep.begin(), keep.end(), [&](std::uint32_t a, std::uint32_t b) {
    for (std::size_t j = 0; j < k; ++j) {
      if (values[a * k + j] != values[b * k + j]) return values[a * k + j] < values[b * k + j];
    }
    return a < b;
  });
  // Equal objective vectors (two passes found the same mapping's values): the first only.
  keep.erase(std::unique(keep.begin(), keep.end(), [&](std::uint32_t a, std::uint32_t b) {
               return std::equal(values.begin() + a * k, values.begin() + (a + 1) * k, values.begin() + b * k);
             }),
             keep.end());
  for (std::uint32_t i : keep) r.found_before_stop.push_back(found[i]);
  return r;
}

}  // namespace

JoinResult join(const JoinProblem& problem) {
  ClampCache clamp_cache;  // the passes of this join share their cascade clamp's limits
  if (!problem.incumbent_bound || problem.tolerance > 0.0) return timed_pass(problem, 0, nullptr, clamp_cache);
  // Quick passes of growing width, each bounded by the incumbents of the ones before; the union of
  // their fronts (its Pareto front, sorted by the first objective) bounds the exact pass.
  const std::size_t k = problem.objectives.size();
  Incumbents inc;
  inc.k = k;
  PassHistory history;
  std::vector<FrontPoint> found;  // complete mappings of the finished quick passes, for a stop
  for (std::size_t beam : problem.quick_beams.empty() ? quick_beams(k) : problem.quick_beams) {
    bool thinned = false;
    JoinResult quick = timed_pass(problem, beam, inc.size() > 0 ? &inc : nullptr, clamp_cache, &thinned, history);
    if (quick.partial) return with_found_before_stop(std::move(quick), found, problem.objectives);
    history = PassHistory{};
    for (const JoinStepStats& st : quick.steps) {
      history.rows_paired += st.rows_paired;
      history.keys += st.groups_out;
    }
    if (!thinned) {
      // No key ever held more rows than the pass keeps: it was the exact join (bounded by the fronts
      // before it, which is exact), so it is the answer. It did not count towards a progress display.
      if (problem.progress != nullptr) {
        const auto n = static_cast<std::uint64_t>(quick.steps.size());
        problem.progress->steps_total.fetch_add(n);
        problem.progress->steps_done.fetch_add(n);
        problem.progress->rows_paired.fetch_add(quick.totals().rows_paired);
      }
      return quick;
    }
    found.insert(found.end(), quick.front.begin(), quick.front.end());
    std::vector<double> all = inc.values;
    for (const FrontPoint& p : quick.front) {
      for (Objective o : problem.objectives) all.push_back(p.objective(o));
    }
    const std::vector<std::uint32_t> keep = pareto_front(all.data(), all.size() / k, k);
    std::vector<std::uint32_t> order(keep);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      for (std::size_t j = 0; j < k; ++j) {
        if (all[a * k + j] != all[b * k + j]) return all[a * k + j] < all[b * k + j];
      }
      return a < b;
    });
    inc.values.clear();
    for (std::uint32_t i : order) inc.values.insert(inc.values.end(), all.begin() + i * k, all.begin() + (i + 1) * k);
  }
  JoinResult exact = timed_pass(problem, 0, &inc, clamp_cache, nullptr, history);
  if (exact.partial) return with_found_before_stop(std::move(exact), found, problem.objectives);
  return exact;
}

JoinResult join_best(const JoinProblem& problem) {
  const auto first_best = [&](JoinResult r) {
    if (r.front.empty()) return r;
    const Objective o = problem.objectives.front();
    const double best = r.front.front().objective(o);
    r.front.erase(std::remove_if(r.front.begin(), r.front.end(), [&](const FrontPoint& p) { return p.objective(o) > best; }),
                  r.front.end());
    return r;
  };
  if (problem.objectives.empty() || problem.objectives.front() == Objective::Sram || !problem.incumbent_bound ||
      problem.tolerance > 0.0) {
    return first_best(join(problem));
  }
  // The least first objective, from the join on it alone (few rows per key: cheap). A mapping's sums
  // are added in the same order whatever the objectives, so it is the full front's least value.
  JoinProblem alone = problem;
  alone.objectives = {problem.objectives.front()};
  alone.progress = nullptr;
  const JoinResult least = join(alone);
  if (least.partial || least.front.empty()) return least;
  // Then the join on every objective, bounded by that mapping (a real one: an exact incumbent) and
  // capped at its first objective: only the front's points with that value remain, and its first
  // point is the full front's.
  Incumbents inc;
  inc.k = problem.objectives.size();
  for (Objective o : problem.objectives) inc.values.push_back(least.front.front().objective(o));
  inc.cap = least.front.front().objective(problem.objectives.front());
  JoinProblem capped = problem;
  if (capped.key_bound == KeyBound::Automatic) capped.key_bound = KeyBound::On;
  ClampCache clamp_cache;
  return first_best(timed_pass(capped, 0, &inc, clamp_cache));
}

}  // namespace npumap::search
