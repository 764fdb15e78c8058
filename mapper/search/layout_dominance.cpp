#include "mapper/search/layout_dominance.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace npumap::search {
namespace {

/// A set of places in a step's compatibilities (its inputs, then its output last), one bit each.
using Places = std::uint32_t;

bool has(Places at, std::size_t p) { return ((at >> p) & 1U) != 0; }

/// The places in `step`'s compatibilities of the tensors of class `c` (`class_of`: per tensor).
Places places_of(const JoinStep& step, const std::vector<std::size_t>& class_of, std::size_t c) {
  Places at = 0;
  for (std::size_t i = 0; i < step.inputs.size(); ++i)
    if (class_of[static_cast<std::size_t>(step.inputs[i])] == c) at |= 1U << i;
  if (step.output >= 0 && class_of[static_cast<std::size_t>(step.output)] == c) at |= 1U << step.inputs.size();
  return at;
}

/// Per tensor, its class: an elementwise output written over an input shares the input's storage and
/// compatibility, so their layouts change together (the smallest tensor index names the class).
std::vector<std::size_t> in_place_classes(const JoinProblem& problem) {
  std::vector<std::size_t> parent(problem.tensors.size());
  for (std::size_t t = 0; t < parent.size(); ++t) parent[t] = t;
  const auto root = [&](std::size_t t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  };
  for (const JoinStep& step : problem.steps) {
    for (const PmappingGroup& g : step.groups.vector()) {
      const int over = g.compat.vector().back().over_input;
      if (over < 0 || step.output < 0) continue;
      const auto input = static_cast<std::size_t>(step.inputs[static_cast<std::size_t>(over)]);
      if (problem.tensors[input].constant) continue;  // never joins: a constant is no layer's output
      const std::size_t a = root(static_cast<std::size_t>(step.output)), b = root(input);
      parent[std::max(a, b)] = std::min(a, b);
    }
  }
  for (std::size_t t = 0; t < parent.size(); ++t) parent[t] = root(t);
  return parent;
}

/// Whether the group stores a tensor of the class (at `at`) NHCWB16 in `residence`.
bool stores_nhcwb16(const std::vector<TensorCompat>& compat, Places at, Residence residence) {
  for (std::size_t p = 0; p < compat.size(); ++p)
    if (has(at, p) && compat[p].residence == residence && compat[p].layout == Layout::Nhcwb16) return true;
  return false;
}

/// Whether `candidate` is `bricks` with the class's places (`at`) in `residence` made linear.
bool is_linear_twin(const std::vector<TensorCompat>& candidate, const std::vector<TensorCompat>& bricks, Places at,
                    Residence residence) {
  if (candidate.size() != bricks.size()) return false;
  for (std::size_t p = 0; p < bricks.size(); ++p) {
    TensorCompat want = bricks[p];
    if (has(at, p) && want.residence == residence) want.layout = Layout::Linear;
    if (!(candidate[p] == want)) return false;
  }
  return true;
}

bool weakly_dominates(const PmappingRow& a, const PmappingRow& b) {
  return a.cycles <= b.cycles && a.offchip_bytes <= b.offchip_bytes && a.energy_pj <= b.energy_pj &&
         a.sram_bytes <= b.sram_bytes;
}

/// Whether every group of `step` storing the class NHCWB16 in `residence` has each of its rows weakly
/// dominated by a row of its linear twin (the group that stores the class linear and is otherwise the
/// same). A step has a few dozen groups: a scan finds the twin without building an index.
bool linear_never_worse(const JoinStep& step, Places at, Residence residence) {
  const std::vector<PmappingGroup>& groups = step.groups.vector();
  for (const PmappingGroup& g : groups) {
    if (!stores_nhcwb16(g.compat, at, residence)) continue;
    const auto twin = std::find_if(groups.begin(), groups.end(), [&](const PmappingGroup& h) {
      return is_linear_twin(h.compat, g.compat, at, residence);
    });
    if (twin == groups.end()) return false;
    for (const PmappingRow& row : g.rows) {
      const bool beaten = std::any_of(twin->rows.begin(), twin->rows.end(), [&](const PmappingRow& b) { return weakly_dominates(b, row); });
      if (!beaten) return false;
    }
  }
  return true;
}

constexpr std::array<Residence, 2> kResidences = {Residence::Arena, Residence::Sram};

}  // namespace

void drop_dominated_layouts(JoinProblem& problem) {
  const std::vector<std::size_t> class_of = in_place_classes(problem);
  // Per class, its steps, and per residence whether some group stores it NHCWB16 there.
  std::vector<std::vector<std::size_t>> steps_of(problem.tensors.size());
  std::vector<std::array<bool, 2>> offered(problem.tensors.size(), {false, false});
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const JoinStep& step = problem.steps[s];
    for (std::size_t p = 0; p <= step.inputs.size(); ++p) {
      const int t = p < step.inputs.size() ? step.inputs[p] : step.output;
      if (t < 0) continue;
      const std::size_t c = class_of[static_cast<std::size_t>(t)];
      if (steps_of[c].empty() || steps_of[c].back() != s) steps_of[c].push_back(s);
      for (const PmappingGroup& g : step.groups.vector())
        for (std::size_t r = 0; r < kResidences.size(); ++r)
          offered[c][r] = offered[c][r] || (g.compat[p].residence == kResidences[r] && g.compat[p].layout == Layout::Nhcwb16);
    }
  }
  // Identical layers share their list of groups: each list is checked, and cut, once per set of
  // places of a class in it and residence.
  using Site = std::tuple<const void*, Places, Residence>;
  std::map<Site, bool> checked;
  std::map<Site, SharedVector<PmappingGroup>> cut;
  for (std::size_t c = 0; c < problem.tensors.size(); ++c) {
    if (problem.tensors[c].constant) continue;
    for (std::size_t r = 0; r < kResidences.size(); ++r) {
      if (!offered[c][r]) continue;
      const Residence residence = kResidences[r];
      bool never_worse = true;
      for (std::size_t i = 0; never_worse && i < steps_of[c].size(); ++i) {
        const JoinStep& step = problem.steps[steps_of[c][i]];
        const Site site{step.groups.buffer(), places_of(step, class_of, c), residence};
        auto it = checked.find(site);
        if (it == checked.end()) it = checked.emplace(site, linear_never_worse(step, std::get<1>(site), residence)).first;
        never_worse = it->second;
      }
      if (!never_worse) continue;
      for (const std::size_t s : steps_of[c]) {
        JoinStep& step = problem.steps[s];
        const Site site{step.groups.buffer(), places_of(step, class_of, c), residence};
        auto it = cut.find(site);
        if (it == cut.end()) {
          std::vector<PmappingGroup> kept;
          for (const PmappingGroup& g : step.groups.vector())
            if (!stores_nhcwb16(g.compat, std::get<1>(site), residence)) kept.push_back(g);
          // Nothing to drop (an earlier class's cut took it): the list stays shared as it is.
          const bool same = kept.size() == step.groups.size();
          it = cut.emplace(site, same ? step.groups : SharedVector<PmappingGroup>(std::move(kept))).first;
        }
        step.groups = it->second;
      }
    }
  }
}

}  // namespace npumap::search
