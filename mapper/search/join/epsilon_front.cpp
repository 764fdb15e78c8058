// The ε-front (epsilon_front.hpp): what it guarantees and why is said there and in
// docs/design/search.md "ε-front".

#include "mapper/search/join/epsilon_front.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "mapper/search/pareto.hpp"
#include "mapper/search/point_memory.hpp"

namespace npumap::search {

std::string epsilon_guarantee(double epsilon) {
  if (!(epsilon > 0.0)) return "exact Pareto front: every Pareto-optimal mapping's values are on it";
  return fmt::format(
      "ε-Pareto front with ε = {:g}: every point of the exact Pareto front is within a factor {:g} in every objective of a "
      "point listed here, and each objective's least value is exact",
      epsilon, 1.0 + epsilon);
}

namespace join_internal {
namespace {

/// A problem derived from another: the same tensors and groups, each group's rows thinned; origin[s][g][r] is row r's index in the original group.
struct Derived {
  JoinProblem problem;
  std::vector<std::vector<std::vector<std::uint32_t>>> origin;
};

/// `p` with the rows of each group that are dominated or equal in the summed objectives and the row's
/// own SRAM dropped (the first of equal rows kept): each of their merges is dominated or equal to the
/// kept row's merge in the same key.
Derived thinned_problem(const JoinProblem& p, const std::vector<Objective>& objectives) {
  Derived d;
  d.problem.tensors = p.tensors;
  d.problem.arena_is_sram = p.arena_is_sram;
  d.problem.sram_capacity = p.sram_capacity;
  std::vector<Column> cols;
  for (Objective o : objectives) {
    if (o != Objective::Sram) cols.push_back(column_of(o));
  }
  cols.push_back(Column::Sram);  // the row's own SRAM
  const std::size_t k = cols.size();
  d.origin.resize(p.steps.size());
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const JoinStep& in = p.steps[s];
    JoinStep& out = d.problem.steps.emplace_back();
    out.inputs = in.inputs;
    out.output = in.output;
    d.origin[s].resize(in.groups.size());
    std::vector<PmappingGroup> groups;
    for (std::size_t g = 0; g < in.groups.size(); ++g) {
      const PmappingGroup& pg = in.groups[g];
      const std::vector<PmappingRow>& rows = pg.rows;
      std::vector<double> values;
      values.reserve(rows.size() * k);
      for (const PmappingRow& r : rows) {
        for (Column c : cols) values.push_back(r.value(c));
      }
      std::vector<std::uint32_t> keep = rows.empty() ? std::vector<std::uint32_t>{} : pareto_front(values.data(), rows.size(), k);
      PmappingGroup& og = groups.emplace_back();
      og.compat = pg.compat;
      for (std::uint32_t i : keep) og.rows.push_back(rows[i]);
      d.origin[s][g] = std::move(keep);
    }
    out.groups = std::move(groups);
  }
  return d;
}

/// The point of `original` that `p` (a point of `d.problem`'s front) stands for, with its true values:
/// the sums added in step order as the join adds them, the peak from point_memory.
FrontPoint true_point(const JoinProblem& original, const Derived* d, const FrontPoint& p) {
  FrontPoint q;
  q.group = p.group;
  q.row = p.row;
  for (std::size_t s = 0; s < original.steps.size(); ++s) {
    if (d != nullptr) q.row[s] = d->origin[s][p.group[s]][p.row[s]];
    const PmappingRow& r = original.steps[s].groups[q.group[s]].rows[q.row[s]];
    q.cycles = q.cycles + r.cycles;
    q.offchip_bytes = q.offchip_bytes + r.offchip_bytes;
    q.energy_pj = q.energy_pj + r.energy_pj;
  }
  const PointMemory mem = point_memory(original, q);
  for (double b : mem.sram_bytes) q.peak_sram_bytes = std::max(q.peak_sram_bytes, b);
  return q;
}

/// The objectives with `first` moved to the front (the others in their order).
std::vector<Objective> first_then_rest(const std::vector<Objective>& objectives, Objective first) {
  std::vector<Objective> out{first};
  for (Objective o : objectives) {
    if (o != first) out.push_back(o);
  }
  return out;
}

/// Each objective's least value with lexicographic ties, one exact mapping per objective (step 1 of
/// epsilon_front.hpp). A stopped or empty join is returned in `failed`.
struct Extremes {
  std::vector<FrontPoint> points;  ///< per objective, in the objectives' order
  std::optional<JoinResult> failed;
};

Extremes find_extremes(const JoinProblem& problem, const JoinOptions& exact, const JoinRunContext& quiet) {
  Extremes out;
  for (Objective o : exact.objectives) {
    JoinOptions lex = exact;
    lex.objectives = first_then_rest(exact.objectives, o);
    if (o != Objective::Sram) {
      JoinResult r = join_best(problem, lex, quiet);
      if (r.partial || r.front.empty()) {
        out.failed = std::move(r);
        return out;
      }
      out.points.push_back(r.front.front());
      continue;
    }
    // Peak SRAM: its least value alone, then the others' lexicographic least among the mappings that
    // fit in exactly that much SRAM (with the capacity set to it, every feasible mapping has that peak).
    JoinOptions alone = exact;
    alone.objectives = {Objective::Sram};
    JoinResult least = join(problem, alone, quiet);
    if (least.partial || least.front.empty()) {
      out.failed = std::move(least);
      return out;
    }
    FrontPoint best = least.front.front();
    if (lex.objectives.size() > 1 && best.peak_sram_bytes == std::floor(best.peak_sram_bytes)) {
      lex.objectives.erase(lex.objectives.begin());
      JoinProblem tight;
      tight.tensors = problem.tensors;
      tight.steps = problem.steps;
      tight.arena_is_sram = problem.arena_is_sram;
      tight.sram_capacity = static_cast<std::int64_t>(best.peak_sram_bytes);
      JoinResult r = join_best(tight, lex, quiet);
      if (r.partial) {
        out.failed = std::move(r);
        return out;
      }
      if (!r.front.empty() && r.front.front().peak_sram_bytes == best.peak_sram_bytes) best = r.front.front();
    }
    out.points.push_back(best);
  }
  return out;
}

/// The union of `extremes` (first) and `points`, Pareto-filtered on the objectives (of equal points the
/// first), sorted by the objectives in order; `num_extremes` is set to how many of them lead it.
std::vector<FrontPoint> union_front(const std::vector<FrontPoint>& extremes, const std::vector<FrontPoint>& points,
                                    const std::vector<Objective>& objectives) {
  std::vector<FrontPoint> all = extremes;
  all.insert(all.end(), points.begin(), points.end());
  const std::size_t k = objectives.size();
  std::vector<double> values;
  values.reserve(all.size() * k);
  for (const FrontPoint& p : all) {
    for (Objective o : objectives) values.push_back(p.objective(o));
  }
  const std::vector<std::uint32_t> keep = pareto_front(values.data(), all.size(), k);
  std::vector<FrontPoint> out;
  for (std::uint32_t i : keep) out.push_back(std::move(all[i]));
  return out;
}

bool objective_less(const FrontPoint& a, const FrontPoint& b, const std::vector<Objective>& objectives) {
  for (Objective o : objectives) {
    if (a.objective(o) != b.objective(o)) return a.objective(o) < b.objective(o);
  }
  return false;
}

}  // namespace

double epsilon_half_ratio(double epsilon) { return std::sqrt(1.0 + epsilon); }

std::vector<FrontPoint> thin_front(const std::vector<FrontPoint>& points, std::size_t keep_first, const std::vector<Objective>& objectives,
                                   double ratio) {
  std::vector<FrontPoint> kept(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(std::min(keep_first, points.size())));
  const auto covered = [&](const FrontPoint& x) {
    for (const FrontPoint& y : kept) {
      bool all = true;
      for (Objective o : objectives) all = all && y.objective(o) <= ratio * x.objective(o);
      if (all) return true;
    }
    return false;
  };
  for (std::size_t i = kept.size(); i < points.size(); ++i) {
    if (!covered(points[i])) kept.push_back(points[i]);
  }
  std::stable_sort(kept.begin(), kept.end(), [&](const FrontPoint& a, const FrontPoint& b) { return objective_less(a, b, objectives); });
  return kept;
}

JoinResult epsilon_join(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& run) {
  JoinOptions exact = options;
  exact.epsilon = 0.0;
  exact.sram_grid_ratio = 0.0;
  exact.step_slack = 0.0;
  if (options.objectives.empty() || problem.steps.empty()) return join(problem, exact, run);
  JoinRunContext quiet = run;
  quiet.progress = nullptr;
  Extremes ext = find_extremes(problem, exact, quiet);
  if (ext.failed) return std::move(*ext.failed);
  // Step 2: the SRAM grid from the least peak, and the slack of each step's pruning.
  const double half = epsilon_half_ratio(options.epsilon) - 1.0;
  JoinOptions slack_options = exact;
  slack_options.step_slack = half;
  const Derived d = thinned_problem(problem, options.objectives);
  JoinResult r = join(d.problem, slack_options, run);
  std::vector<FrontPoint> extremes;
  for (const FrontPoint& p : ext.points) extremes.push_back(p);
  if (r.partial) {
    r.found_before_stop = union_front(extremes, {}, options.objectives);
    std::stable_sort(r.found_before_stop.begin(), r.found_before_stop.end(),
                     [&](const FrontPoint& a, const FrontPoint& b) { return objective_less(a, b, options.objectives); });
    return r;
  }
  std::vector<FrontPoint> found;
  found.reserve(r.front.size());
  for (const FrontPoint& p : r.front) found.push_back(true_point(problem, &d, p));
  // Step 4: the extremes lead the union (they win ties), so they lead the thinning too.
  std::vector<FrontPoint> front = union_front(extremes, found, options.objectives);
  std::size_t leading = 0;
  while (leading < front.size() && leading < extremes.size()) {
    bool is_extreme = false;
    for (const FrontPoint& e : extremes) is_extreme = is_extreme || (e.group == front[leading].group && e.row == front[leading].row);
    if (!is_extreme) break;
    ++leading;
  }
  r.front = thin_front(front, leading, options.objectives, 1.0 + half);
  return r;
}

}  // namespace join_internal
}  // namespace npumap::search
