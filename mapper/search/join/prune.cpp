// Pareto pruning of the join's tables (prune.hpp).

#include "mapper/search/join/prune.hpp"

namespace npumap::search::join_internal {

PruneScratch& prune_scratch() {
  static thread_local PruneScratch scratch;
  return scratch;
}

std::size_t prune_rows(std::vector<PendingRow>& rows, const KeyColumns& key, const ToleranceGrid& grid, const StepSlack& slack,
                       bool sram_tiebreak) {
  const std::size_t n = rows.size();
  const std::vector<Column>& cols = key.cols;
  PruneScratch& x = prune_scratch();
  x.tab.resize(n * cols.size());
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < cols.size(); ++c) x.tab[r * cols.size() + c] = slack(cols[c], grid(key.value(rows[r].row, cols[c])));
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

}  // namespace npumap::search::join_internal
