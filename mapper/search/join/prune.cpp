// Pareto pruning of the join's tables (prune.hpp).

#include "mapper/search/join/prune.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace npumap::search::join_internal {
namespace {

/// Kept rows the ε-front's pruning tries as stand-ins for a row.
constexpr std::size_t kScan = 128;

bool summed_column(Column c) { return c == Column::Cycles || c == Column::OffchipBytes || c == Column::Energy; }
/// The columns whose low the ε-front's pruning tracks: the sums and the peak.
bool low_column(Column c) { return summed_column(c) || c == Column::Sram; }

/// The front of a table of values (its first nc columns) and lows (the other k - nc): a set of rows such
/// that every row left out is dominated or equal in all k columns by a kept row (with `tie`, equal rows
/// also in tie), so a kept row stands in for it with no more budget. How: the exact front F on the
/// values (the fast kernels of few columns). A dropped row without error (`has_err` 0: lows = values) is
/// dominated in the values by a row of F, whose lows are at most its values, so it is covered as it is.
/// Each dropped row with error is compared only with the rows of F no larger than it in the column
/// where they are fewest (F sorted on each column); those no row of F covers are filtered among themselves on all k columns (a row
/// dropped there is covered by one kept). Rows of F are never dropped (no two are equal in the values).
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
  // F sorted on each column: a row of F covering e is no larger than e in every column, so it is among
  // the rows of F no larger than e in the column where they are fewest; only those are compared.
  const std::size_t m = keep.size();
  std::vector<std::uint32_t> by(k * m);
  std::vector<double> key(k * m);
  std::vector<std::pair<double, std::uint32_t>> sorted(m);
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t i = 0; i < m; ++i) sorted[i] = {tab[keep[i] * k + c], keep[i]};
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < m; ++i) {
      key[c * m + i] = sorted[i].first;
      by[c * m + i] = sorted[i].second;
    }
  }
  std::vector<std::uint32_t> left;
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t last = kNone;
  for (std::uint32_t e : err_rows) {
    const double* te = tab + static_cast<std::size_t>(e) * k;
    std::size_t best_c = 0;
    std::size_t end = m + 1;
    for (std::size_t c = 0; c < k && end > 0; ++c) {
      const double* kc = &key[c * m];
      const std::size_t cnt = static_cast<std::size_t>(std::upper_bound(kc, kc + m, te[c]) - kc);
      if (cnt < end) {
        end = cnt;
        best_c = c;
      }
    }
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
    // The last coverer first (rows with error come in runs from one merge), then the prefix from its
    // end: the rows nearest e in that column are the likely coverers.
    bool covered = last != kNone && covers(last);
    const std::uint32_t* order = &by[best_c * m];
    for (std::size_t i = end; i-- > 0 && !covered;) {
      if (covers(order[i])) {
        covered = true;
        last = order[i];
      }
    }
    if (!covered) left.push_back(e);
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

/// The ε-front's pruning (StepSlack): the front of values and lows (front_with_lows: the exact front on
/// the pruning columns, whose dropped rows without error are covered by their dominator as they are,
/// and the dropped rows with error each against it); then, best rows first, each row is dropped for the
/// first of the last kScan kept rows that may stand in for it within the budget, which lowers that
/// row's lows, or else kept.
std::size_t prune_rows_epsilon(std::vector<PendingRow>& rows, const KeyColumns& key, const StepSlack& slack, bool sram_tiebreak) {
  const std::size_t n = rows.size();
  const std::vector<Column>& cols = key.cols;
  std::vector<Column> summed;  // the columns with a low
  for (Column c : cols) {
    if (low_column(c)) summed.push_back(c);
  }
  const double floor = key.sram_floor();
  const std::size_t nc = cols.size();
  const std::size_t k = nc + summed.size();
  PruneScratch& x = prune_scratch();
  x.tab.resize(n * k);
  for (std::size_t r = 0; r < n; ++r) {
    double* t = &x.tab[r * k];
    for (std::size_t c = 0; c < nc; ++c) t[c] = key.value(rows[r].row, cols[c]);
    for (std::size_t c = 0; c < summed.size(); ++c) t[nc + c] = rows[r].row.low(summed[c]);
  }
  // The front of values and lows (front_with_lows): the exact front on the values alone, then only the
  // rows with error it dropped, each against that front.
  {
    std::vector<char> has_err(n, 0);
    for (std::size_t r = 0; r < n; ++r) {
      for (Column c : summed) has_err[r] = has_err[r] || rows[r].row.err_of(c) != 0.0;
    }
    if (sram_tiebreak) {
      x.tie.resize(n);
      for (std::size_t r = 0; r < n; ++r) x.tie[r] = key.value(rows[r].row, Column::Sram);
      if (key.clamp != nullptr) clamp_tiebreak(x.tie, rows, x.scratch_a, x.scratch_b);
    }
    front_with_lows(x.tab.data(), n, nc, k, sram_tiebreak ? x.tie.data() : nullptr, has_err, x.ws, x.scratch_b, x.keep);
  }
  // The greedy pass over the survivors, in lexicographic order of the pruning columns (then index).
  std::vector<std::uint32_t> order = x.keep;
  // Better rows first: by the sum of the logs of the lower bounds of their final values.
  std::vector<double> score(n, 0.0);
  for (std::uint32_t r : order) {
    double sc = 0.0;
    for (std::size_t c = 0; c < nc; ++c) {
      const double v = x.tab[r * k + c];
      if (cols[c] == Column::Sram) sc += std::log(std::max({v, floor, 1.0}));
      else if (summed_column(cols[c])) sc += std::log(std::max(v + slack.rest(cols[c]), 1.0));
    }
    score[r] = sc;
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (score[a] != score[b]) return score[a] < score[b];
    return a < b;
  });
  std::vector<std::uint32_t> kept;
  std::vector<double> low;  // per kept row, its low of each summed column (updated as it absorbs)
  for (std::uint32_t i : order) {
    const double* ti = &x.tab[i * k];
    bool absorbed = false;
    // The kept rows nearest in the order are the likely stand-ins: at most kScan of them are tried, so
    // the pass is O(n kScan) (a row no tried row covers is kept: larger, never wrong).
    const std::size_t stop = kept.size() > kScan ? kept.size() - kScan : 0;
    for (std::size_t j = kept.size(); j-- > stop && !absorbed;) {
      const double* tj = &x.tab[kept[j] * k];
      double* lj = &low[j * summed.size()];
      bool ok = true;
      for (std::size_t c = 0, sc = 0; c < nc && ok; ++c) {
        if (cols[c] == Column::Sram) {
          ok = slack.within_peak(rows[kept[j]].row.peak, std::min(lj[sc], ti[nc + sc]), floor);
          ++sc;
        } else if (summed_column(cols[c])) {
          ok = slack.within(cols[c], tj[c], std::min(lj[sc], ti[nc + sc]));
          ++sc;
        } else {
          ok = tj[c] <= ti[c];
        }
      }
      if (!ok) continue;
      for (std::size_t sc = 0; sc < summed.size(); ++sc) lj[sc] = std::min(lj[sc], ti[nc + sc]);
      absorbed = true;
    }
    if (absorbed) continue;
    kept.push_back(i);
    low.insert(low.end(), ti + nc, ti + k);
  }
  // Rows in their order, each kept row's err from its low.
  std::vector<std::size_t> by_index(kept.size());
  std::iota(by_index.begin(), by_index.end(), std::size_t{0});
  std::sort(by_index.begin(), by_index.end(), [&](std::size_t a, std::size_t b) { return kept[a] < kept[b]; });
  std::vector<PendingRow> out;
  out.reserve(kept.size());
  for (std::size_t j : by_index) {
    PendingRow p = rows[kept[j]];
    for (std::size_t sc = 0; sc < summed.size(); ++sc) {
      const double v = p.row.value(summed[sc]);
      if (low[j * summed.size() + sc] < p.row.low(summed[sc])) p.row.set_err(summed[sc], v - low[j * summed.size() + sc]);
    }
    out.push_back(p);
  }
  rows.swap(out);
  return n - rows.size();
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
