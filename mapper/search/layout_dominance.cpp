#include "mapper/search/layout_dominance.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <tuple>
#include <vector>

namespace npumap::search {
namespace {

using Key = std::vector<TensorCompat>;

/// The positions in a step's compatibilities (its inputs, then its output last) of the tensors of
/// class `c` (`class_of`: per tensor).
std::vector<std::size_t> positions_of(const JoinStep& step, const std::vector<std::size_t>& class_of, std::size_t c) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < step.inputs.size(); ++i)
    if (class_of[static_cast<std::size_t>(step.inputs[i])] == c) at.push_back(i);
  if (step.output >= 0 && class_of[static_cast<std::size_t>(step.output)] == c) at.push_back(step.inputs.size());
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
      if (over < 0 || step.output < 0 || problem.tensors[static_cast<std::size_t>(step.inputs[static_cast<std::size_t>(over)])].constant) continue;
      const std::size_t a = root(static_cast<std::size_t>(step.output));
      const std::size_t b = root(static_cast<std::size_t>(step.inputs[static_cast<std::size_t>(over)]));
      parent[std::max(a, b)] = std::min(a, b);
    }
  }
  for (std::size_t t = 0; t < parent.size(); ++t) parent[t] = root(t);
  return parent;
}

/// Whether the group stores a tensor of the class (at `at`) NHCWB16 in `residence`.
bool stores_nhcwb16(const Key& compat, const std::vector<std::size_t>& at, Residence residence) {
  return std::any_of(at.begin(), at.end(), [&](std::size_t p) {
    return compat[p].residence == residence && compat[p].layout == Layout::Nhcwb16;
  });
}

bool weakly_dominates(const PmappingRow& a, const PmappingRow& b) {
  return a.cycles <= b.cycles && a.offchip_bytes <= b.offchip_bytes && a.energy_pj <= b.energy_pj &&
         a.sram_bytes <= b.sram_bytes;
}

/// Whether every group of `step` storing the tensor NHCWB16 in `residence` has each of its rows weakly
/// dominated by a row of the group that stores it linear and is otherwise the same.
bool linear_never_worse(const JoinStep& step, const std::vector<std::size_t>& at, Residence residence) {
  std::map<Key, const PmappingGroup*> by_compat;
  for (const PmappingGroup& g : step.groups.vector()) by_compat.emplace(g.compat.vector(), &g);
  for (const PmappingGroup& g : step.groups.vector()) {
    if (!stores_nhcwb16(g.compat, at, residence)) continue;
    Key linear = g.compat;
    for (std::size_t p : at)
      if (linear[p].residence == residence) linear[p].layout = Layout::Linear;
    const auto it = by_compat.find(linear);
    if (it == by_compat.end()) return false;
    const std::vector<PmappingRow>& better = it->second->rows;
    for (const PmappingRow& row : g.rows) {
      const bool beaten = std::any_of(better.begin(), better.end(), [&](const PmappingRow& b) { return weakly_dominates(b, row); });
      if (!beaten) return false;
    }
  }
  return true;
}

}  // namespace

void drop_dominated_layouts(JoinProblem& problem) {
  const std::vector<std::size_t> class_of = in_place_classes(problem);
  std::vector<std::vector<std::size_t>> steps_of(problem.tensors.size());  // per class
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const JoinStep& step = problem.steps[s];
    for (int t : step.inputs) steps_of[class_of[static_cast<std::size_t>(t)]].push_back(s);
    if (step.output >= 0) steps_of[class_of[static_cast<std::size_t>(step.output)]].push_back(s);
  }
  // Identical layers share their list of groups: each list is checked, and cut, once per place of
  // the class in it and residence.
  using Site = std::tuple<const void*, std::vector<std::size_t>, Residence>;
  std::map<Site, bool> checked;
  std::map<Site, SharedVector<PmappingGroup>> cut;
  const auto site_of = [&](std::size_t s, std::size_t c, Residence r) {
    return Site{problem.steps[s].groups.buffer(), positions_of(problem.steps[s], class_of, c), r};
  };
  for (std::size_t c = 0; c < problem.tensors.size(); ++c) {
    std::vector<std::size_t>& steps = steps_of[c];
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    if (problem.tensors[c].constant || steps.empty()) continue;
    for (const Residence residence : {Residence::Arena, Residence::Sram}) {
      bool offered = false, never_worse = true;
      for (std::size_t s = 0; never_worse && s < steps.size(); ++s) {
        const Site site = site_of(steps[s], c, residence);
        const auto& [_, at, r] = site;
        for (const PmappingGroup& g : problem.steps[steps[s]].groups.vector()) offered = offered || stores_nhcwb16(g.compat, at, r);
        auto it = checked.find(site);
        if (it == checked.end()) it = checked.emplace(site, linear_never_worse(problem.steps[steps[s]], at, r)).first;
        never_worse = it->second;
      }
      if (!offered || !never_worse) continue;
      for (std::size_t s : steps) {
        const Site site = site_of(s, c, residence);
        auto it = cut.find(site);
        if (it == cut.end()) {
          std::vector<PmappingGroup> kept;
          for (const PmappingGroup& g : problem.steps[s].groups.vector())
            if (!stores_nhcwb16(g.compat, std::get<1>(site), residence)) kept.push_back(g);
          it = cut.emplace(site, SharedVector<PmappingGroup>(std::move(kept))).first;
        }
        problem.steps[s].groups = it->second;
      }
    }
  }
}

}  // namespace npumap::search
