// Quick passes (quick_passes.hpp).

#include "mapper/search/join/quick_passes.hpp"

#include <algorithm>
#include <limits>

#include "mapper/search/join/step.hpp"
#include "mapper/search/pareto.hpp"

namespace npumap::search::join_internal {
namespace {

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

}  // namespace

const std::vector<std::size_t>& default_quick_beams(std::size_t num_objectives) {
  // Measured, 2 threads: yolo-fastest_1.1_320 on ethos-u55-256 1.70 s with {64}, 2.07 s with {32, 256};
  // MobileNet-V2 with cycles, off-chip bytes and SRAM 4.25 s with {64}, 3.16 s with {32, 256}.
  static const std::vector<std::size_t> two{64};
  static const std::vector<std::size_t> more{32, 256};
  return num_objectives <= 2 ? two : more;
}

std::size_t step_beam(std::size_t beam, std::size_t num_keys) {
  return std::min(beam, std::max(kQuickMinRows, kQuickStepRows / num_keys));
}

void thin_to_beam(std::vector<PendingRow>& rows, const KeyColumns& key, std::size_t beam) {
  std::vector<std::uint32_t> order(rows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto less = [&](std::uint32_t a, std::uint32_t b) {
    for (Column c : key.cols) {
      const double va = key.value(rows[a].row, c);
      const double vb = key.value(rows[b].row, c);
      if (va != vb) return va < vb;
    }
    return a < b;
  };
  std::sort(order.begin(), order.end(), less);
  std::vector<char> keep(rows.size(), 0);
  for (std::size_t i = 0; i < beam; ++i) keep[order[i * (order.size() - 1) / (beam - 1)]] = 1;
  for (Column c : key.cols) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < rows.size(); ++i) {
      if (key.value(rows[i].row, c) < key.value(rows[best].row, c)) best = i;
    }
    keep[best] = 1;
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (keep[i]) rows[out++] = rows[i];
  }
  rows.resize(out);
}

void keep_best_keys(std::vector<KeyWork>& work, std::size_t max_keys, const std::vector<Column>& summed_columns) {
  std::vector<std::uint32_t> live;
  for (std::uint32_t k = 0; k < work.size(); ++k) {
    if (work[k].acceptable && !work[k].rows.empty()) live.push_back(k);
  }
  if (max_keys == 0) max_keys = kQuickMaxKeys;
  if (live.size() <= max_keys || summed_columns.empty()) return;
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

void add_incumbents(Incumbents& inc, const JoinResult& quick, const std::vector<Objective>& objectives) {
  const std::size_t k = objectives.size();
  std::vector<double> all = inc.values;
  for (const FrontPoint& p : quick.front) {
    for (Objective o : objectives) all.push_back(p.objective(o));
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

}  // namespace npumap::search::join_internal
