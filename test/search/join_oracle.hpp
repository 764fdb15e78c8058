#pragma once
// The join's oracle: every combination of one row per layer (over all groups), checked for
// compatibility and simulated step by step for liveness, cascades and SRAM, written independently of
// mapper/search/join/, then Pareto-filtered naively. The join's front must be this front, whatever
// speed-ups are on (join_test.cpp, join_bounds_test.cpp).

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "mapper/search/join/join.hpp"

namespace npumap::search::testing {

using Objectives = std::array<double, 4>;  // cycles, offchip, sram (peak), energy

/// What the enumeration found: every feasible combination's values, and the front of `objectives`.
struct OracleResult {
  std::vector<Objectives> feasible;
  std::vector<Objectives> front;  ///< sorted; without `sram` among the objectives, each point carries
                                  ///< the least SRAM of the combinations with exactly its values
  std::uint64_t combinations = 0;
};

/// The number of combinations the oracle enumerates.
inline std::uint64_t combinations(const JoinProblem& p) {
  std::uint64_t combos = 1;
  for (const auto& s : p.steps) {
    std::uint64_t rows = 0;
    for (const auto& g : s.groups) rows += g.rows.size();
    combos *= rows;
  }
  return combos;
}

namespace oracle_detail {

using Choice = std::pair<const PmappingGroup*, const PmappingRow*>;

/// Every reader of a tensor sees it as its first writer (or first reader, for a network input) put it;
/// a later writer of a tensor (a concatenation) must place it as the first did and never writes it in
/// place; an in-place output overwrites an input produced by an earlier layer that dies there.
inline bool compatible(const JoinProblem& p, const std::vector<Choice>& pick, std::vector<const TensorCompat*>& seen) {
  const int n = static_cast<int>(p.steps.size());
  seen.assign(p.tensors.size(), nullptr);
  for (int s = 0; s < n; ++s) {
    const PmappingGroup& g = *pick[static_cast<std::size_t>(s)].first;
    const JoinStep& step = p.steps[static_cast<std::size_t>(s)];
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const int t = step.inputs[i];
      if (seen[t] == nullptr) {
        if (p.tensors[t].producer_step >= 0 || g.compat[i].residence == Residence::Rolling) return false;
        seen[t] = &g.compat[i];
      } else if (!seen[t]->matches(g.compat[i])) {
        return false;
      }
    }
    const int over = g.compat.back().over_input;
    if (seen[step.output] != nullptr) {  // a later writer
      if (!seen[step.output]->matches(g.compat.back()) || over >= 0) return false;
    } else {
      seen[step.output] = &g.compat.back();
    }
    if (over >= 0) {
      const JoinTensor& in = p.tensors[step.inputs[static_cast<std::size_t>(over)]];
      if (in.producer_step < 0 || in.network_output || in.last_consumer_step != s) return false;
    }
  }
  return true;
}

/// The peak SRAM of a compatible combination, or a negative value when some step exceeds the capacity.
inline double peak_sram(const JoinProblem& p, const std::vector<Choice>& pick, const std::vector<const TensorCompat*>& seen) {
  const int n = static_cast<int>(p.steps.size());
  const auto at = [&](int s) -> const Choice& { return pick[static_cast<std::size_t>(s)]; };
  // Cascades: maximal runs of steps linked by rolling outputs.
  std::vector<int> cascade_end(static_cast<std::size_t>(n)), cascade_start(static_cast<std::size_t>(n));
  for (int s = n - 1; s >= 0; --s) {
    const bool rolls = at(s).first->compat.back().residence == Residence::Rolling;
    cascade_end[s] = rolls && s + 1 < n ? cascade_end[s + 1] : s;
  }
  for (int s = 0; s < n; ++s) {
    const bool fed = s > 0 && at(s - 1).first->compat.back().residence == Residence::Rolling;
    cascade_start[s] = fed ? cascade_start[s - 1] : s;
  }
  double peak = 0.0;
  for (int s = 0; s < n; ++s) {
    double usage = 0.0;
    for (std::size_t t = 0; t < p.tensors.size(); ++t) {
      const JoinTensor& jt = p.tensors[t];
      if (seen[t] == nullptr || seen[t]->residence == Residence::Rolling) continue;
      int first = jt.producer_step;
      if (first < 0) {
        first = n;
        for (int c = 0; c < n; ++c)
          for (int in : p.steps[c].inputs)
            if (in == static_cast<int>(t)) first = std::min(first, c);
      }
      // Live from the first writer (or reader) to the last reader; a reader inside a cascade keeps it
      // until the cascade closes.
      const int last = jt.network_output ? n - 1 : cascade_end[std::max(jt.last_consumer_step, first)];
      if (first <= s && s <= last) usage += static_cast<double>(reserved_bytes(jt, *seen[t], p.arena_is_sram));
    }
    // An output written over an input shares its storage while this layer runs.
    if (at(s).first->compat.back().over_input >= 0) {
      usage -= static_cast<double>(reserved_bytes(p.tensors[p.steps[s].output], *seen[p.steps[s].output], p.arena_is_sram));
    }
    for (int m = cascade_start[s]; m <= s; ++m) {
      usage += at(m).second->sram_bytes;
      if (m > cascade_start[s]) {  // the rolling buffer between m-1 and m, from m on
        const JoinStep& step = p.steps[static_cast<std::size_t>(m)];
        std::size_t slot = 0;
        while (slot < step.inputs.size() && step.inputs[slot] != p.steps[static_cast<std::size_t>(m - 1)].output) ++slot;
        const int t = step.inputs[slot];
        usage += static_cast<double>(rolling_buffer_bytes(p.tensors[t], at(m - 1).first->compat.back().rows, at(m).first->compat[slot].rows));
      }
    }
    if (usage > static_cast<double>(p.sram_capacity)) return -1.0;
    peak = std::max(peak, usage);
  }
  return peak;
}

/// The naive Pareto front of `feasible` on `objectives` (duplicates count once).
inline std::vector<Objectives> naive_front(const std::vector<Objectives>& feasible, const std::vector<Objective>& objectives) {
  std::vector<int> cols;
  for (Objective o : objectives) cols.push_back(static_cast<int>(o));
  const bool sram_chosen = std::find(cols.begin(), cols.end(), 2) != cols.end();
  std::vector<Objectives> front;
  for (std::size_t i = 0; i < feasible.size(); ++i) {
    bool keep = true;
    for (std::size_t j = 0; j < feasible.size() && keep; ++j) {
      bool all_le = true, any_lt = false, all_eq = true;
      for (int c : cols) {
        all_le = all_le && feasible[j][c] <= feasible[i][c];
        any_lt = any_lt || feasible[j][c] < feasible[i][c];
        all_eq = all_eq && feasible[j][c] == feasible[i][c];
      }
      if (all_eq) keep = keep && !(j < i);
      else if (all_le && any_lt) keep = false;
    }
    if (!keep) continue;
    Objectives projected{0, 0, 0, 0};
    for (int c : cols) projected[c] = feasible[i][c];
    // Without the sram objective, a point carries the least SRAM of the combinations with exactly its
    // values (the join's SRAM tie-break).
    if (!sram_chosen) {
      projected[2] = feasible[i][2];
      for (const Objectives& other : feasible) {
        bool equal = true;
        for (int c : cols) equal = equal && other[c] == feasible[i][c];
        if (equal) projected[2] = std::min(projected[2], other[2]);
      }
    }
    front.push_back(projected);
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace oracle_detail

/// Every combination of one row per layer, checked and scored by a direct simulation; the front of
/// `objectives` over the feasible ones.
inline OracleResult exhaustive(const JoinProblem& p, const std::vector<Objective>& objectives) {
  using oracle_detail::Choice;
  OracleResult out;
  const int n = static_cast<int>(p.steps.size());
  std::vector<std::vector<Choice>> choices(static_cast<std::size_t>(n));
  for (int s = 0; s < n; ++s)
    for (const auto& g : p.steps[s].groups)
      for (const auto& r : g.rows) choices[s].push_back({&g, &r});
  for (int s = 0; s < n; ++s)
    if (choices[s].empty()) return out;
  std::vector<std::size_t> index(static_cast<std::size_t>(n), 0);
  std::vector<Choice> pick(static_cast<std::size_t>(n));
  std::vector<const TensorCompat*> seen;
  while (true) {
    ++out.combinations;
    for (int s = 0; s < n; ++s) pick[s] = choices[s][index[s]];
    if (oracle_detail::compatible(p, pick, seen)) {
      const double peak = oracle_detail::peak_sram(p, pick, seen);
      if (peak >= 0.0) {
        Objectives obj{0, 0, peak, 0};
        for (int s = 0; s < n; ++s) {
          obj[0] += pick[s].second->cycles;
          obj[1] += pick[s].second->offchip_bytes;
          obj[3] += pick[s].second->energy_pj;
        }
        out.feasible.push_back(obj);
      }
    }
    int s = n - 1;
    while (s >= 0 && ++index[s] == choices[s].size()) index[s--] = 0;
    if (s < 0) break;
  }
  out.front = oracle_detail::naive_front(out.feasible, objectives);
  return out;
}

/// The join's front as the oracle writes it: the chosen objectives and always the peak SRAM, sorted.
inline std::vector<Objectives> front_values(const JoinResult& r, const std::vector<Objective>& objectives) {
  std::vector<Objectives> out;
  for (const FrontPoint& f : r.front) {
    Objectives o{0, 0, 0, 0};
    for (Objective obj : objectives) o[static_cast<int>(obj)] = f.objective(obj);
    o[2] = f.peak_sram_bytes;  // an objective, or the tie-break
    out.push_back(o);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace npumap::search::testing
