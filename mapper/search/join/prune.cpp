// Pareto pruning of the join's tables (prune.hpp).

#include "mapper/search/join/prune.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace npumap::search::join_internal {
namespace {

/// Kept rows, the most recent, that the ε-front's greedy pass tries as stand-ins for a row.
constexpr std::size_t kScan = 128;

/// Rows of a front tried, nearest first, as the cover of a row it dropped (front_with_lows,
/// EpsilonPruning): a row none of them covers is kept, or goes on to the next filter.
constexpr std::size_t kFrontScan = 256;

bool summed_column(Column c) { return c == Column::Cycles || c == Column::OffchipBytes || c == Column::Energy; }

/// A front F sorted on each of its k columns, to find a row of F that covers a row e (no larger than e
/// in every column): such a row is among the rows of F no larger than e in the column where they are
/// fewest, a prefix of F sorted on that column. `find` tries the last row that covered one first (rows
/// with error come in runs from one merge), then that prefix from its end, the rows nearest e in that
/// column, at most kFrontScan of them.
class FrontCoverIndex {
 public:
  /// `tab` holds k values per row; `front` names the rows of F.
  FrontCoverIndex(const double* tab, std::size_t k, const std::vector<std::uint32_t>& front)
      : k_(k), m_(front.size()), by_(k * m_), key_(k * m_) {
    std::vector<std::pair<double, std::uint32_t>> sorted(m_);
    for (std::size_t c = 0; c < k_; ++c) {
      for (std::size_t i = 0; i < m_; ++i) sorted[i] = {tab[front[i] * k_ + c], front[i]};
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < m_; ++i) {
        key_[c * m_ + i] = sorted[i].first;
        by_[c * m_ + i] = sorted[i].second;
      }
    }
  }

  /// Whether a tried row f of F has covers(f) (e's k values are `te`).
  template <class Covers>
  bool find(const double* te, const Covers& covers) {
    std::size_t best_c = 0;
    std::size_t end = m_ + 1;
    for (std::size_t c = 0; c < k_ && end > 0; ++c) {
      const double* kc = &key_[c * m_];
      const std::size_t cnt = static_cast<std::size_t>(std::upper_bound(kc, kc + m_, te[c]) - kc);
      if (cnt < end) {
        end = cnt;
        best_c = c;
      }
    }
    if (last_ != kNone && covers(last_)) return true;
    const std::uint32_t* order = &by_[best_c * m_];
    const std::size_t stop = end > kFrontScan ? end - kFrontScan : 0;
    for (std::size_t i = end; i-- > stop;) {
      if (covers(order[i])) {
        last_ = order[i];
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::size_t k_;
  std::size_t m_;
  std::vector<std::uint32_t> by_;
  std::vector<double> key_;
  std::uint32_t last_ = kNone;
};
/// The columns whose low the ε-front's pruning tracks: the sums and the peak.
bool low_column(Column c) { return summed_column(c) || c == Column::Sram; }

/// The front of a table of values (its first nc columns) and lows (the other k - nc): a set of rows such
/// that every row left out is dominated or equal in all k columns by a kept row (with `tie`, equal rows
/// also in tie), so a kept row stands in for it with no more budget. How: the exact front F on the
/// values (the fast kernels of few columns). A dropped row without error (`has_err` 0: lows = values) is
/// dominated in the values by a row of F, whose lows are at most its values, so it is covered as it is.
/// Each dropped row with error is compared only with the rows of F no larger than it in the column
/// where they are fewest (F sorted on each column), the nearest kFrontScan of them; those none of these covers are filtered among
/// themselves on all k columns (a row dropped there is covered by one kept). Rows of F are never dropped (no two are equal in the
/// values).
/// Returns the kept rows in index order.
void front_with_lows(const double* tab, std::size_t n, std::size_t nc, std::size_t k, const double* tie,
                     const std::vector<char>& has_err, ParetoWorkspace& ws, std::vector<double>& vals,
                     std::vector<std::uint32_t>& keep) {
  vals.resize(n * nc);
  for (std::size_t r = 0; r < n; ++r) std::copy(tab + r * k, tab + r * k + nc, &vals[r * nc]);
  if (tie != nullptr) {
    pareto_front_tiebreak(vals.data(), n, nc, tie, ws, keep);
  } else {
    pareto_front(vals.data(), n, nc, ws, keep);
  }
  std::vector<char> on_front(n, 0);
  for (std::uint32_t r : keep) on_front[r] = 1;
  std::vector<std::uint32_t> err_rows;
  for (std::uint32_t r = 0; r < n; ++r) {
    if (!on_front[r] && has_err[r]) err_rows.push_back(r);
  }
  if (err_rows.empty()) return;
  FrontCoverIndex index(tab, k, keep);
  std::vector<std::uint32_t> left;
  for (std::uint32_t e : err_rows) {
    const double* te = tab + static_cast<std::size_t>(e) * k;
    const auto covers = [&](std::uint32_t f) {
      const double* tf = tab + static_cast<std::size_t>(f) * k;
      bool all = true;
      bool strict = false;
      for (std::size_t c = 0; c < k && all; ++c) {
        all = tf[c] <= te[c];
        strict = strict || tf[c] < te[c];
      }
      return all && (tie == nullptr || strict || tie[f] <= tie[e]);
    };
    if (!index.find(te, covers)) left.push_back(e);
  }
  const std::size_t front_size = keep.size();
  if (left.size() > 1) {
    std::vector<double> sub(left.size() * k);
    for (std::size_t i = 0; i < left.size(); ++i) std::copy(tab + left[i] * k, tab + left[i] * k + k, &sub[i * k]);
    std::vector<std::uint32_t> kept_left;
    if (tie != nullptr) {
      std::vector<double> sub_tie(left.size());
      for (std::size_t i = 0; i < left.size(); ++i) sub_tie[i] = tie[left[i]];
      pareto_front_tiebreak(sub.data(), left.size(), k, sub_tie.data(), ws, kept_left);
    } else {
      pareto_front(sub.data(), left.size(), k, ws, kept_left);
    }
    for (std::uint32_t i : kept_left) keep.push_back(left[i]);
  } else {
    keep.insert(keep.end(), left.begin(), left.end());
  }
  std::inplace_merge(keep.begin(), keep.begin() + static_cast<std::ptrdiff_t>(front_size), keep.end());
}

/// The ε-front's pruning of one key's rows (StepSlack; docs/design/search.md "ε-front", step 3). Every
/// row keeps its lows (value - err per low column) in `low_`, which fall as it stands in for others.
///  1. The exact front F on the pruning columns' values (the fast kernels of few columns). A dropped row
///     without error is dominated or equal in the values by a row of F, whose lows are at most its
///     values: that row covers it as it is. A dropped row x with error is dropped when a row of F is at
///     most x in every value and every low (it stands in for all x stood in for, with no more error),
///     tried among the rows of F no larger than x in the column where they are fewest, nearest first,
///     at most kFrontScan of them. Rows none of these covers go on to 2 with F.
///  2. The greedy pass: F and those rows, best first (the sum of the logs of the lower bounds of their
///     final values), each dropped for the first of the last kScan kept rows that may stand in for it
///     (its lows fall to the lesser), or else kept.
/// A row no tried row stands in for is kept: the front is larger, never wrong.
class EpsilonPruning {
 public:
  EpsilonPruning(std::vector<PendingRow>& rows, const KeyColumns& key, const StepSlack& slack, PruneScratch& x)
      : rows_(rows), key_(key), slack_(slack), x_(x), n_(rows.size()), floor_(key.sram_floor()) {
    for (Column c : key.cols) {
      if (low_column(c)) summed_.push_back(c);
    }
    nc_ = key.cols.size();
    ns_ = summed_.size();
    x.tab.resize(n_ * nc_);
    low_.resize(n_ * ns_);
    for (std::size_t r = 0; r < n_; ++r) {
      for (std::size_t c = 0; c < nc_; ++c) x.tab[r * nc_ + c] = key.value(rows[r].row, key.cols[c]);
      for (std::size_t c = 0; c < ns_; ++c) low_[r * ns_ + c] = rows[r].row.low(summed_[c]);
    }
  }
  /// Step 1 with the SRAM tie-break `tie` (or null); the rows for step 2 in `candidates_`.
  void front_and_dominated(const double* tie);
  /// Step 2; the kept rows in `kept_`.
  void greedy();
  /// The kept rows in index order, each one's err raised to its lows; returns how many were dropped.
  std::size_t finish();

 private:
  /// Row y may stand in for row x (StepSlack): per summed column, y's value within the budget of the
  /// lesser low; y's prefix peak within the budget of the lesser peak low (or the key's SRAM floor);
  /// in the other columns (the open cascade's SRAM) y at most x.
  bool stands_in(std::uint32_t y, std::uint32_t x) const {
    const double* ty = &x_.tab[y * nc_];
    const double* tx = &x_.tab[x * nc_];
    const double* ly = &low_[y * ns_];
    const double* lx = &low_[x * ns_];
    for (std::size_t c = 0, sc = 0; c < nc_; ++c) {
      const Column col = key_.cols[c];
      if (col == Column::Sram) {
        if (!slack_.within_peak(rows_[y].row.peak, std::min(ly[sc], lx[sc]), floor_)) return false;
        ++sc;
      } else if (summed_column(col)) {
        if (!slack_.within(ty[c], std::min(ly[sc], lx[sc]))) return false;
        ++sc;
      } else if (ty[c] > tx[c]) {
        return false;
      }
    }
    return true;
  }
  /// Row y covers row x as it is: at most x in every value and every low.
  bool covers(std::uint32_t y, std::uint32_t x) const {
    for (std::size_t c = 0; c < nc_; ++c) {
      if (x_.tab[y * nc_ + c] > x_.tab[x * nc_ + c]) return false;
    }
    for (std::size_t sc = 0; sc < ns_; ++sc) {
      if (low_[y * ns_ + sc] > low_[x * ns_ + sc]) return false;
    }
    return true;
  }
  /// y stands in for x: y's lows fall to x's where lower.
  void absorb(std::uint32_t y, std::uint32_t x) {
    for (std::size_t sc = 0; sc < ns_; ++sc) low_[y * ns_ + sc] = std::min(low_[y * ns_ + sc], low_[x * ns_ + sc]);
  }
  /// The sum of the logs of the lower bounds of row r's final values (the greedy pass's order).
  double score(std::uint32_t r) const {
    double sc = 0.0;
    for (std::size_t c = 0; c < nc_; ++c) {
      const double v = x_.tab[r * nc_ + c];
      if (key_.cols[c] == Column::Sram) sc += std::log(std::max({v, floor_, 1.0}));
      else if (summed_column(key_.cols[c])) sc += std::log(std::max(v + slack_.rest(key_.cols[c]), 1.0));
    }
    return sc;
  }

  std::vector<PendingRow>& rows_;
  const KeyColumns& key_;
  const StepSlack& slack_;
  PruneScratch& x_;
  std::size_t n_;
  double floor_;
  std::vector<Column> summed_;  ///< the columns with a low, in the key's order
  std::size_t nc_ = 0;
  std::size_t ns_ = 0;
  std::vector<double> low_;                 ///< per row, its lows of the summed columns
  std::vector<std::uint32_t> candidates_;  ///< the rows of step 2
  std::vector<std::uint32_t> kept_;
};

void EpsilonPruning::front_and_dominated(const double* tie) {
  std::vector<std::uint32_t>& front = x_.keep;
  if (tie != nullptr) {
    pareto_front_tiebreak(x_.tab.data(), n_, nc_, tie, x_.ws, front);
  } else {
    pareto_front(x_.tab.data(), n_, nc_, x_.ws, front);
  }
  candidates_ = front;
  std::vector<char> on_front(n_, 0);
  for (std::uint32_t r : front) on_front[r] = 1;
  std::vector<std::uint32_t> err_rows;
  for (std::uint32_t r = 0; r < n_; ++r) {
    if (on_front[r]) continue;
    bool err = false;
    for (Column c : summed_) err = err || rows_[r].row.err_of(c) != 0.0;
    if (err) err_rows.push_back(r);
  }
  if (err_rows.empty()) return;
  FrontCoverIndex index(x_.tab.data(), nc_, front);
  for (std::uint32_t e : err_rows) {
    const double* te = &x_.tab[static_cast<std::size_t>(e) * nc_];
    if (!index.find(te, [&](std::uint32_t f) { return covers(f, e); })) candidates_.push_back(e);
  }
}

void EpsilonPruning::greedy() {
  std::vector<std::uint32_t>& order = candidates_;
  // Better rows first: by the sum of the logs of the lower bounds of their final values.
  std::vector<double> score(n_, 0.0);
  for (std::uint32_t r : order) score[r] = this->score(r);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (score[a] != score[b]) return score[a] < score[b];
    return a < b;
  });
  for (std::uint32_t i : order) {
    // The last kScan kept rows, the most recent first (a row none of them stands in for is kept).
    bool absorbed = false;
    const std::size_t stop = kept_.size() > kScan ? kept_.size() - kScan : 0;
    for (std::size_t j = kept_.size(); j-- > stop && !absorbed;) {
      if (stands_in(kept_[j], i)) {
        absorb(kept_[j], i);
        absorbed = true;
      }
    }
    if (!absorbed) kept_.push_back(i);
  }
}

std::size_t EpsilonPruning::finish() {
  std::sort(kept_.begin(), kept_.end());
  std::vector<PendingRow> out;
  out.reserve(kept_.size());
  for (std::uint32_t r : kept_) {
    PendingRow p = rows_[r];
    for (std::size_t sc = 0; sc < ns_; ++sc) {
      const double l = low_[r * ns_ + sc];
      if (l < p.row.low(summed_[sc])) p.row.set_err(summed_[sc], p.row.value(summed_[sc]) - l);
    }
    out.push_back(p);
  }
  rows_.swap(out);
  return n_ - rows_.size();
}

std::size_t prune_rows_epsilon(std::vector<PendingRow>& rows, const KeyColumns& key, const StepSlack& slack, bool sram_tiebreak) {
  PruneScratch& x = prune_scratch();
  EpsilonPruning pruning(rows, key, slack, x);
  if (sram_tiebreak) {
    x.tie.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) x.tie[r] = key.value(rows[r].row, Column::Sram);
    if (key.clamp != nullptr) clamp_tiebreak(x.tie, rows, x.scratch_a, x.scratch_b);
  }
  pruning.front_and_dominated(sram_tiebreak ? x.tie.data() : nullptr);
  pruning.greedy();
  return pruning.finish();
}

}  // namespace

PruneScratch& prune_scratch() {
  static thread_local PruneScratch scratch;
  return scratch;
}

std::size_t prune_rows(std::vector<PendingRow>& rows, const KeyColumns& key, const ToleranceGrid& grid, const StepSlack& slack,
                       bool sram_tiebreak) {
  if (!slack.exact()) return prune_rows_epsilon(rows, key, slack, sram_tiebreak);
  const std::size_t n = rows.size();
  const std::vector<Column>& cols = key.cols;
  PruneScratch& x = prune_scratch();
  x.tab.resize(n * cols.size());
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < cols.size(); ++c) x.tab[r * cols.size() + c] = grid(key.value(rows[r].row, cols[c]));
  if (sram_tiebreak) {
    x.tie.resize(n);
    for (std::size_t r = 0; r < n; ++r) x.tie[r] = key.value(rows[r].row, Column::Sram);
    if (key.clamp != nullptr) clamp_tiebreak(x.tie, rows, x.scratch_a, x.scratch_b);
    pareto_front_tiebreak(x.tab.data(), n, cols.size(), x.tie.data(), x.ws, x.keep);
  } else {
    pareto_front(x.tab.data(), n, cols.size(), x.ws, x.keep);
  }
  for (std::size_t i = 0; i < x.keep.size(); ++i) rows[i] = rows[x.keep[i]];
  rows.resize(x.keep.size());
  return n - x.keep.size();
}

void exact_front(const std::vector<JoinRow>& rows, const std::vector<Column>& cols, bool tiebreak, ParetoWorkspace& ws,
                 std::vector<double>& table, std::vector<std::uint32_t>& keep, bool low_columns) {
  std::vector<Column> low;
  if (low_columns) {
    for (Column c : cols) {
      if (low_column(c)) low.push_back(c);
    }
  }
  const std::size_t k = cols.size() + low.size();
  table.resize(rows.size() * k);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c = 0; c < cols.size(); ++c) table[r * k + c] = rows[r].value(cols[c]);
    for (std::size_t c = 0; c < low.size(); ++c) table[r * k + cols.size() + c] = rows[r].low(low[c]);
  }
  static thread_local std::vector<double> tie;
  if (tiebreak) {
    tie.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) tie[r] = rows[r].peak;
  }
  if (!low.empty()) {
    static thread_local std::vector<char> has_err;
    static thread_local std::vector<double> vals;
    has_err.assign(rows.size(), 0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (Column c : low) has_err[r] = has_err[r] || rows[r].err_of(c) != 0.0;
    }
    front_with_lows(table.data(), rows.size(), cols.size(), k, tiebreak ? tie.data() : nullptr, has_err, ws, vals, keep);
  } else if (tiebreak) {
    pareto_front_tiebreak(table.data(), rows.size(), k, tie.data(), ws, keep);
  } else {
    pareto_front(table.data(), rows.size(), k, ws, keep);
  }
}

}  // namespace npumap::search::join_internal
