// Pareto pruning of the join's tables (prune.hpp).

#include "mapper/search/join/prune.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace npumap::search::join_internal {
namespace {

/// Kept rows the ε-front's pruning tries as stand-ins for a row.
constexpr std::size_t kScan = 128;

bool summed_column(Column c) { return c == Column::Cycles || c == Column::OffchipBytes || c == Column::Energy; }
/// The columns whose low the ε-front's pruning tracks: the sums and the peak.
bool low_column(Column c) { return summed_column(c) || c == Column::Sram; }

/// The ε-front's pruning (StepSlack): the exact front on the pruning columns (a dropped row without
/// error is covered by its dominator as it is), then on the pruning columns and, per column with a low,
/// the least value a row stands in for (low) for the rows left and those with error; then, best rows
/// first, each row is dropped for the first of the last kScan kept rows that may stand in for it within
/// the budget, which lowers that row's lows, or else kept.
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
  // First the exact front on the values alone (the fast kernels of few columns): a dropped row without
  // error (low = value) is dominated by a row whose lows are at most its values, which stands in for it
  // as it is. Then the front on values and lows of the rest (the front and the dropped rows with error).
  std::vector<std::uint32_t> cand;
  {
    std::vector<double>& vals = x.scratch_b;
    if (sram_tiebreak) {
      x.tie.resize(n);
      for (std::size_t r = 0; r < n; ++r) x.tie[r] = key.value(rows[r].row, Column::Sram);
      if (key.clamp != nullptr) clamp_tiebreak(x.tie, rows, x.scratch_a, x.scratch_b);
    }
    vals.resize(n * nc);
    for (std::size_t r = 0; r < n; ++r) std::copy(&x.tab[r * k], &x.tab[r * k] + nc, &vals[r * nc]);
    if (sram_tiebreak) {
      pareto_front_tiebreak(vals.data(), n, nc, x.tie.data(), x.ws, x.keep);
    } else {
      pareto_front(vals.data(), n, nc, x.ws, x.keep);
    }
    std::vector<char> on_front(n, 0);
    for (std::uint32_t r : x.keep) on_front[r] = 1;
    for (std::uint32_t r = 0; r < n; ++r) {
      bool has_err = false;
      for (Column c : summed) has_err = has_err || rows[r].row.err_of(c) != 0.0;
      if (on_front[r] || has_err) cand.push_back(r);
    }
  }
  {
    std::vector<double> sub(cand.size() * k);
    for (std::size_t i = 0; i < cand.size(); ++i) std::copy(&x.tab[cand[i] * k], &x.tab[cand[i] * k] + k, &sub[i * k]);
    if (sram_tiebreak) {
      std::vector<double> tie(cand.size());
      for (std::size_t i = 0; i < cand.size(); ++i) tie[i] = x.tie[cand[i]];
      pareto_front_tiebreak(sub.data(), cand.size(), k, tie.data(), x.ws, x.keep);
    } else {
      pareto_front(sub.data(), cand.size(), k, x.ws, x.keep);
    }
    for (std::uint32_t& i : x.keep) i = cand[i];
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
  if (tiebreak) {
    static thread_local std::vector<double> tie;
    tie.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) tie[r] = rows[r].peak;
    pareto_front_tiebreak(table.data(), rows.size(), k, tie.data(), ws, keep);
  } else {
    pareto_front(table.data(), rows.size(), k, ws, keep);
  }
}

}  // namespace npumap::search::join_internal
