// One pass of the join (pass.hpp).

#include "mapper/search/join/pass.hpp"

#include <algorithm>

#include "mapper/search/join/prune.hpp"
#include "mapper/search/join/step.hpp"

namespace npumap::search::join_internal {
namespace {

/// The final front of the rows of every left group, traced back and sorted by the objectives.
std::vector<FrontPoint> final_front(const PassContext& ctx, const std::vector<LeftGroup>& left, const TraceChain& trace) {
  std::vector<JoinRow> all;
  for (const auto& g : left) all.insert(all.end(), g.rows.begin(), g.rows.end());
  ParetoWorkspace workspace;
  std::vector<double> table;
  std::vector<std::uint32_t> survivors;
  exact_front(all, ctx.obj.columns, ctx.obj.sram_tiebreak(), workspace, table, survivors);
  std::vector<FrontPoint> front;
  for (std::uint32_t idx : survivors) {
    FrontPoint p;
    p.cycles = all[idx].cycles;
    p.offchip_bytes = all[idx].offchip;
    p.energy_pj = all[idx].energy;
    p.peak_sram_bytes = all[idx].peak;
    trace.trace_back(all[idx].trace, p);
    front.push_back(std::move(p));
  }
  std::stable_sort(front.begin(), front.end(), [&](const FrontPoint& a, const FrontPoint& b) {
    for (Objective o : ctx.obj.objectives) {
      if (a.objective(o) != b.objective(o)) return a.objective(o) < b.objective(o);
    }
    return false;
  });
  return front;
}

/// The rows the exact pass has still to pair, for a progress display: the last quick pass's rows of the
/// steps to come, scaled by how many more rows the exact pass paired than it on the steps done (without
/// a quick pass: the rows per step so far times the steps to come).
void estimate_rows_to_come(const JoinResult& result, const PassHistory& history, JoinProgress& progress) {
  const std::size_t done = result.steps.size();
  double exact = 0.0;
  for (const JoinStepStats& st : result.steps) exact += static_cast<double>(st.rows_paired);
  double estimate = 0.0;
  if (history.step_rows.size() > done) {
    double quick_done = 0.0;
    double quick_rest = 0.0;
    for (std::size_t s = 0; s < history.step_rows.size(); ++s) (s < done ? quick_done : quick_rest) += static_cast<double>(history.step_rows[s]);
    estimate = quick_rest * (quick_done > 0.0 ? std::max(1.0, exact / quick_done) : 1.0);
  } else {
    const std::size_t total = std::max(done, history.step_rows.size());
    estimate = done > 0 ? exact / static_cast<double>(done) * static_cast<double>(total - done) : 0.0;
  }
  progress.rows_to_come.store(static_cast<std::uint64_t>(estimate), std::memory_order_relaxed);
  progress.rows_estimated.store(true, std::memory_order_relaxed);
}

}  // namespace

JoinResult join_pass(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& run, std::size_t beam,
                     const Incumbents* incumbents, bool& thinned, const PassHistory& history, ClampCache& clamp_cache) {
  JoinResult result;
  const PassContext ctx(problem, options, run, beam);
  if (ctx.num_steps == 0) return result;
  PassRules rules(ctx, clamp_cache, incumbents, history);
  // Only the exact pass counts towards a progress display.
  if (beam == 0 && run.progress != nullptr) run.progress->steps_total.fetch_add(static_cast<std::uint64_t>(ctx.num_steps));
  TraceChain trace(ctx.num_steps);
  std::vector<LeftGroup> left(1);  // one empty group with one empty row
  left[0].rows.push_back(JoinRow{});
  std::vector<char> introduced(problem.tensors.size(), 0);  // network inputs already live before a step
  for (int s = 0; s < ctx.num_steps; ++s) {
    if (!run_step(ctx, rules, s, left, introduced, trace, result, thinned)) {
      result.partial = true;
      return result;
    }
    if (beam == 0 && run.progress != nullptr) estimate_rows_to_come(result, history, *run.progress);
  }
  result.front = final_front(ctx, left, trace);
  return result;
}

}  // namespace npumap::search::join_internal
