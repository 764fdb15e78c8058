// The context of one pass of the join (pass_context.hpp).

#include "mapper/search/join/pass_context.hpp"

#include "mapper/search/join/dominance_snapshot.hpp"

namespace npumap::search::join_internal {

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
      first_consumer(p.tensors.size(), static_cast<int>(p.steps.size())),
      arena(r.threads) {
  for (int s = 0; s < num_steps; ++s) {
    for (int t : step(s).inputs) first_consumer[static_cast<std::size_t>(t)] = std::min(first_consumer[static_cast<std::size_t>(t)], s);
  }
}

}  // namespace npumap::search::join_internal
