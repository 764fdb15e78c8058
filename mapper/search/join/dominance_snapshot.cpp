// Dominance filter: snapshot and pilot (dominance_snapshot.hpp): what it drops and why that is safe is
// said there.

#include "mapper/search/join/dominance_snapshot.hpp"

#include <algorithm>

#include "mapper/search/join/prune.hpp"

namespace npumap::search::join_internal {

std::vector<std::uint32_t> pilot_samples(const std::vector<JoinRow>& rows, std::size_t min_rows) {
  std::vector<std::uint32_t> pick;
  if (rows.size() < min_rows || rows.empty()) return pick;
  // (cycles, index): a total order, compared without reaching back into the rows.
  std::vector<std::pair<double, std::uint32_t>> order(rows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = {rows[i].cycles, i};
  // The rows at evenly spaced positions of (cycles, index) order, each found by a selection within the
  // range its neighbours leave (no full sort).
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
  return pick;
}

std::vector<double> build_pilot(const std::vector<PilotSource>& sources, const KeyColumns& key, double capacity,
                                std::size_t min_rows) {
  std::vector<double> pilot;
  const std::size_t ncols = key.cols.size();
  for (const PilotSource& src : sources) {
    if (src.rows->size() < min_rows) continue;
    const PairTask& task = *src.task;
    for (std::uint32_t r : *src.samples) {
      const JoinRow& lr = (*src.rows)[r];
      const double cascade_in = cascade_in_of(task, lr);
      for (const PmappingRow& pr : src.group->rows) {
        const double usage = task.full_bytes + cascade_in + pr.sram_bytes;
        if (usage > capacity) continue;
        const JoinRow row = merged_row(task, lr, cascade_in, usage, pr.cycles, pr.offchip_bytes, pr.energy_pj, pr.sram_bytes);
        for (std::size_t c = 0; c < ncols; ++c) pilot.push_back(key.value(row, key.cols[c]));
      }
    }
  }
  if (!pilot.empty()) {
    PruneScratch& x = prune_scratch();
    const std::vector<std::uint32_t>& keep = x.keep;
    pareto_front(pilot.data(), pilot.size() / ncols, ncols, x.ws, x.keep);
    for (std::size_t i = 0; i < keep.size(); ++i) std::copy_n(pilot.begin() + keep[i] * ncols, ncols, pilot.begin() + i * ncols);
    pilot.resize(keep.size() * ncols);
  }
  return pilot;
}

void refresh_snapshot(DominanceFilter& filter, const std::vector<double>& pilot, const std::vector<PendingRow>& rows,
                      const KeyColumns& key) {
  const std::size_t ncols = key.cols.size();
  std::vector<double>& tab = prune_scratch().tab;
  tab.assign(pilot.begin(), pilot.end());
  tab.resize(pilot.size() + rows.size() * ncols);
  double* out = tab.data() + pilot.size();
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < ncols; ++c) out[r * ncols + c] = key.value(rows[r].row, key.cols[c]);
  filter.build(tab.data(), tab.size() / ncols, ncols);
}

}  // namespace npumap::search::join_internal
