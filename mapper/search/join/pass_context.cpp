// The context of one pass of the join (pass_context.hpp).

#include "mapper/search/join/pass_context.hpp"

#include "mapper/search/join/dominance_snapshot.hpp"

#include <array>
#include <cmath>
#include <limits>

namespace npumap::search::join_internal {
namespace {

/// Per step, its StepSlack: the budget ε1 = step_slack and per summed column the least that the steps
/// after it add (each step's least row over all its groups, summed).
std::vector<StepSlack> step_slacks(const JoinProblem& p, double step_slack) {
  const std::size_t n = p.steps.size();
  if (!(step_slack > 0.0) || n == 0) return std::vector<StepSlack>(n);
  const Column summed[] = {Column::Cycles, Column::OffchipBytes, Column::Energy};
  std::vector<StepSlack> out(n);
  std::array<double, 5> rest{};
  for (std::size_t s = n; s-- > 0;) {
    out[s] = StepSlack(step_slack, rest);
    for (Column c : summed) {
      double least = std::numeric_limits<double>::infinity();
      for (const PmappingGroup& g : p.steps[s].groups) {
        for (const PmappingRow& r : g.rows) least = std::min(least, r.value(c));
      }
      if (std::isfinite(least)) rest[static_cast<std::size_t>(c)] += least;
    }
  }
  return out;
}

}  // namespace

ObjectiveLayout::ObjectiveLayout(const std::vector<Objective>& objs)
    : objectives(objs),
      sram_objective(std::find(objs.begin(), objs.end(), Objective::Sram) != objs.end()),
      columns(join_columns(objs, false)) {
  for (std::size_t j = 0; j < objs.size(); ++j) {
    if (objs[j] != Objective::Sram) {
      summed.push_back(j);
      summed_columns.push_back(column_of(objs[j]));
    }
  }
}

PassContext::PassContext(const JoinProblem& p, const JoinOptions& o, const JoinRunContext& r, std::size_t beam_rows)
    : problem(p),
      options(o),
      speedups(o.speedups),
      run(r),
      beam(beam_rows),
      num_steps(static_cast<int>(p.steps.size())),
      capacity(static_cast<double>(p.sram_capacity)),
      obj(o.objectives),
      grid(o.tolerance),
      sram_grid(obj.sram_objective ? SramGrid(o.sram_grid_base, o.sram_grid_ratio, static_cast<double>(p.sram_capacity)) : SramGrid()),
      first_prune_rows(o.speedups.first_prune_rows > 0 ? o.speedups.first_prune_rows : kFirstPrune),
      pilot_min_rows(o.speedups.pilot_min_rows > 0 ? o.speedups.pilot_min_rows : kPilotMinRows),
      slacks(step_slacks(p, o.step_slack)),
      first_consumer(p.tensors.size(), static_cast<int>(p.steps.size())),
      arena(r.threads) {
  for (int s = 0; s < num_steps; ++s) {
    for (int t : step(s).inputs) first_consumer[static_cast<std::size_t>(t)] = std::min(first_consumer[static_cast<std::size_t>(t)], s);
  }
}

}  // namespace npumap::search::join_internal
