// The two variants of a problem with long-lived feature maps and the merge of their fronts
// (long_lived.hpp).

#include "mapper/search/long_lived.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "mapper/search/pareto.hpp"

namespace npumap::search {
namespace {

/// Per slot of a step (its inputs, then its output): where the variant wants the tensor (0 arena, 1
/// SRAM) or -1 (not long-lived: any placement).
std::vector<std::int8_t> wanted(const JoinProblem& problem, const JoinStep& step, const std::vector<bool>& pin) {
  std::vector<std::int8_t> want(step.inputs.size() + 1, -1);
  const auto of = [&](int t) -> std::int8_t {
    const auto i = static_cast<std::size_t>(t);
    return problem.tensors[i].long_lived ? static_cast<std::int8_t>(pin[i] ? 1 : 0) : std::int8_t{-1};
  };
  for (std::size_t i = 0; i < step.inputs.size(); ++i) want[i] = of(step.inputs[i]);
  if (step.output >= 0) want.back() = of(step.output);
  return want;
}

bool group_fits(const PmappingGroup& g, const std::vector<std::int8_t>& want) {
  for (std::size_t i = 0; i < want.size() && i < g.compat.size(); ++i) {
    if (want[i] < 0) continue;
    const Residence r = want[i] == 1 ? Residence::Sram : Residence::Arena;
    // The output slot is the group's last compat (a step's compat: its inputs, then its output).
    const TensorCompat& c = i + 1 == want.size() ? g.compat.back() : g.compat[i];
    if (c.residence != r) return false;
  }
  return true;
}

std::uint32_t original_group(const LongLivedVariant& v, std::size_t s, std::uint32_t g) {
  return v.group_of[s].empty() ? g : v.group_of[s][g];
}

/// The points of `v`'s problem as points of the original problem.
void remap_into(const std::vector<FrontPoint>& points, const LongLivedVariant& v, std::vector<FrontPoint>& out) {
  for (FrontPoint p : points) {
    for (std::size_t s = 0; s < p.group.size(); ++s) p.group[s] = original_group(v, s, p.group[s]);
    out.push_back(std::move(p));
  }
}

/// The Pareto front of `points` on the objectives, sorted by them in order; of points equal in every
/// objective the first (where SRAM is no objective: the one of least peak SRAM, then the first), as
/// the join keeps them.
std::vector<FrontPoint> front_of(const std::vector<FrontPoint>& points, const std::vector<Objective>& objectives) {
  const std::size_t k = objectives.size();
  if (points.empty() || k == 0) return points;
  std::vector<double> values, sram;
  for (const FrontPoint& p : points) {
    for (Objective o : objectives) values.push_back(p.objective(o));
    sram.push_back(p.peak_sram_bytes);
  }
  const bool sram_objective = std::find(objectives.begin(), objectives.end(), Objective::Sram) != objectives.end();
  ParetoWorkspace ws;
  std::vector<std::uint32_t> keep;
  if (sram_objective) {
    pareto_front(values.data(), points.size(), k, ws, keep);
  } else {
    pareto_front_tiebreak(values.data(), points.size(), k, sram.data(), ws, keep);
  }
  std::stable_sort(keep.begin(), keep.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::lexicographical_compare(values.begin() + a * k, values.begin() + (a + 1) * k, values.begin() + b * k,
                                        values.begin() + (b + 1) * k);
  });
  std::vector<FrontPoint> out;
  for (std::uint32_t i : keep) out.push_back(points[i]);
  return out;
}

void add_stats(std::vector<JoinStepStats>& into, const std::vector<JoinStepStats>& from) {
  if (into.size() < from.size()) into.resize(from.size());
  for (std::size_t s = 0; s < from.size(); ++s) {
    JoinStepStats& a = into[s];
    const JoinStepStats& b = from[s];
    a.left_groups += b.left_groups, a.right_groups += b.right_groups, a.group_pairs_matched += b.group_pairs_matched;
    a.rows_paired += b.rows_paired, a.dropped_sram_capacity += b.dropped_sram_capacity;
    a.dropped_dominated += b.dropped_dominated, a.groups_dropped_incompatible += b.groups_dropped_incompatible;
    a.rows_dropped_incompatible += b.rows_dropped_incompatible, a.rows_out += b.rows_out, a.groups_out += b.groups_out;
    a.rows_stored += b.rows_stored;
  }
}

/// The merged result of the pinned variant's join `p` and the arena variant's `a`: the Pareto front
/// of their fronts' union (pinned points first), their counters summed.
JoinResult merge(const JoinResult& p, const LongLivedVariant& pv, const JoinResult& a, const LongLivedVariant& av,
                 const std::vector<Objective>& objectives) {
  JoinResult out;
  out.partial = p.partial || a.partial;
  add_stats(out.steps, p.steps);
  add_stats(out.steps, a.steps);
  std::vector<FrontPoint> all;
  remap_into(p.front, pv, all);
  remap_into(a.front, av, all);
  if (!out.partial) {
    out.front = front_of(all, objectives);
    return out;
  }
  remap_into(p.found_before_stop, pv, all);
  remap_into(a.found_before_stop, av, all);
  out.found_before_stop = front_of(all, objectives);
  return out;
}

bool any_long_lived(const JoinProblem& problem) {
  return std::any_of(problem.tensors.begin(), problem.tensors.end(), [](const JoinTensor& t) { return t.long_lived; });
}

/// The most pinnable tensors live at one step (from the first writer's step to the last reader's, or
/// to the end for a network output).
int most_live_at_once(const JoinProblem& problem, const std::vector<bool>& pin) {
  const auto n = static_cast<int>(problem.steps.size());
  std::vector<int> delta(problem.steps.size() + 1, 0);
  for (std::size_t t = 0; t < pin.size(); ++t) {
    if (!pin[t]) continue;
    const JoinTensor& jt = problem.tensors[t];
    const int first = std::max(jt.producer_step, 0);
    const int last = jt.network_output || jt.last_consumer_step < 0 ? n - 1 : jt.last_consumer_step;
    ++delta[static_cast<std::size_t>(first)];
    --delta[static_cast<std::size_t>(last) + 1];
  }
  int live = 0, most = 0;
  for (int d : delta) live += d, most = std::max(most, live);
  return most;
}

}  // namespace

std::vector<bool> pinnable_tensors(const JoinProblem& problem) {
  std::vector<bool> touched(problem.tensors.size(), false), offered(problem.tensors.size(), true);
  for (const JoinStep& step : problem.steps) {
    std::vector<int> slots = step.inputs;
    slots.push_back(step.output);
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] < 0 || !problem.tensors[static_cast<std::size_t>(slots[i])].long_lived) continue;
      const bool output = i + 1 == slots.size();
      bool sram = false;
      for (const PmappingGroup& g : step.groups) {
        if (g.compat.empty()) continue;
        if (!output && i >= g.compat.size()) continue;
        sram = sram || (output ? g.compat.back() : g.compat[i]).residence == Residence::Sram;
      }
      touched[static_cast<std::size_t>(slots[i])] = true;
      offered[static_cast<std::size_t>(slots[i])] = offered[static_cast<std::size_t>(slots[i])] && sram;
    }
  }
  std::vector<bool> out(problem.tensors.size(), false);
  for (std::size_t t = 0; t < out.size(); ++t) out[t] = problem.tensors[t].long_lived && touched[t] && offered[t];
  return out;
}

LongLivedVariant long_lived_variant(const JoinProblem& problem, bool pinned) {
  const std::vector<bool> pin = pinned ? pinnable_tensors(problem) : std::vector<bool>(problem.tensors.size(), false);
  LongLivedVariant v;
  v.problem.tensors = problem.tensors;
  v.problem.arena_is_sram = problem.arena_is_sram;
  v.problem.sram_capacity = problem.sram_capacity;
  v.group_of.resize(problem.steps.size());
  // Identical layers share their groups, and then their filtered copy when they want the same.
  using Filtered = std::pair<SharedVector<PmappingGroup>, std::vector<std::uint32_t>>;
  std::map<std::pair<const void*, std::vector<std::int8_t>>, Filtered> made;
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const JoinStep& step = problem.steps[s];
    v.problem.steps.push_back(step);
    std::vector<std::int8_t> want = wanted(problem, step, pin);
    if (std::all_of(want.begin(), want.end(), [](std::int8_t x) { return x < 0; })) continue;  // as it is
    auto [it, added] = made.try_emplace({step.groups.buffer(), std::move(want)});
    if (added) {
      std::vector<PmappingGroup> kept;
      for (std::size_t g = 0; g < step.groups.size(); ++g) {
        if (!group_fits(step.groups[g], it->first.second)) continue;
        kept.push_back(step.groups[g]);
        it->second.second.push_back(static_cast<std::uint32_t>(g));
      }
      it->second.first = std::move(kept);
    }
    v.problem.steps.back().groups = it->second.first;
    v.group_of[s] = it->second.second;
  }
  return v;
}

LongLivedJoin long_lived_join_kind(const JoinProblem& problem) {
  if (!any_long_lived(problem)) return LongLivedJoin::Free;
  const std::vector<bool> pin = pinnable_tensors(problem);
  if (std::none_of(pin.begin(), pin.end(), [](bool b) { return b; })) return LongLivedJoin::ArenaOnly;
  return most_live_at_once(problem, pin) <= kFreeLongLived ? LongLivedJoin::Free : LongLivedJoin::Variants;
}

std::size_t long_lived_joins(const JoinProblem& problem) {
  return long_lived_join_kind(problem) == LongLivedJoin::Variants ? 2 : 1;
}

JoinResult join_long_lived(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& context) {
  const LongLivedJoin kind = long_lived_join_kind(problem);
  if (kind == LongLivedJoin::Free) return join(problem, options, context);
  const LongLivedVariant arena = long_lived_variant(problem, false);
  if (kind == LongLivedJoin::ArenaOnly) {
    return merge(JoinResult{}, arena, join(arena.problem, options, context), arena, options.objectives);
  }
  const LongLivedVariant pinned = long_lived_variant(problem, true);
  const JoinResult p = join(pinned.problem, options, context);
  JoinOptions bounded = options;
  for (const FrontPoint& pt : p.front) {
    for (Objective o : options.objectives) bounded.known_mappings.push_back(pt.objective(o));
  }
  return merge(p, pinned, join(arena.problem, bounded, context), arena, options.objectives);
}

JoinResult join_best_long_lived(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& context) {
  const LongLivedJoin kind = long_lived_join_kind(problem);
  if (kind == LongLivedJoin::Free || options.objectives.empty()) return join_best(problem, options, context);
  const LongLivedVariant arena = long_lived_variant(problem, false);
  if (kind == LongLivedJoin::ArenaOnly) {
    return merge(JoinResult{}, arena, join_best(arena.problem, options, context), arena, options.objectives);
  }
  const LongLivedVariant pinned = long_lived_variant(problem, true);
  JoinResult r = merge(join_best(pinned.problem, options, context), pinned, join_best(arena.problem, options, context),
                       arena, options.objectives);
  if (r.front.empty()) return r;
  const Objective o = options.objectives.front();
  const double best = r.front.front().objective(o);
  r.front.erase(std::remove_if(r.front.begin(), r.front.end(), [&](const FrontPoint& x) { return x.objective(o) > best; }),
                r.front.end());
  return r;
}

}  // namespace npumap::search
