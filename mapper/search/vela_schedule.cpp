// Vela's schedule as a point of our mapspace; see vela_schedule.hpp and docs/design/vela-schedule.md.

#include "mapper/search/vela_schedule.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/block_config.hpp"

namespace npumap::search {
namespace {

/// Whether every feature map of the group is in the arena (Vela keeps whole tensors there).
bool all_in_arena(const PmappingGroup& g) {
  return std::all_of(g.compat.begin(), g.compat.end(),
                     [](const TensorCompat& c) { return c.residence == Residence::Arena; });
}

/// Per block config of the layer (space.block_configs, Vela's enumeration order): whether Vela's
/// scheduler shortlist of `limit` (0: all) holds it.
std::vector<bool> in_shortlist(const LayerSpace& space, int limit) {
  std::vector<bool> in(space.block_configs.size(), limit <= 0);
  if (limit <= 0) return in;
  const std::vector<model::BlockConfig> shortlist = model::scheduler_block_configs(space.block_configs, limit);
  for (std::size_t i = 0; i < space.block_configs.size(); ++i)
    in[i] = std::find(shortlist.begin(), shortlist.end(), space.block_configs[i]) != shortlist.end();
  return in;
}

/// The groups of one step Vela could choose: all feature maps in the arena, rows whose block config
/// is on the shortlist. Falls back to the arena groups, then to all groups, when a filter leaves none.
std::vector<PmappingGroup> vela_groups(const std::vector<PmappingGroup>& groups, const LayerResult& lr, int limit) {
  const std::vector<bool> listed = lr.space.cpu ? std::vector<bool>{} : in_shortlist(lr.space, limit);
  std::vector<PmappingGroup> arena, shortlisted;
  for (const PmappingGroup& g : groups) {
    if (!all_in_arena(g)) continue;
    arena.push_back(g);
    PmappingGroup s{g.compat, {}};
    for (const PmappingRow& row : g.rows)
      if (listed.empty() || (row.candidate < listed.size() && listed[row.candidate])) s.rows.push_back(row);
    if (!s.rows.empty()) shortlisted.push_back(std::move(s));
  }
  if (!shortlisted.empty()) return shortlisted;
  if (!arena.empty()) return arena;
  return groups;
}

}  // namespace

JoinProblem vela_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                         int block_config_limit) {
  JoinProblem problem = make_join_problem(arch, workload, stage, false);
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
    problem.steps[s].groups = vela_groups(problem.steps[s].groups, lr, block_config_limit);
  }
  return problem;
}

std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload,
                                          const StageResult& stage, const common::StopToken& stop,
                                          int block_config_limit) {
  for (const LayerResult& lr : stage.layers) {
    std::size_t rows = 0;
    for (const PmappingGroup& g : lr.groups) rows += g.rows.size();
    if (rows == 0) return std::nullopt;
  }
  VelaBaseline b{vela_problem(arch, workload, stage, block_config_limit), {}};
  JoinOptions options;
  options.objectives = {Objective::Cycles, Objective::Sram};  // fastest, then least SRAM
  JoinRunContext context;
  context.threads = 0;  // the caller's arena
  context.stop = stop;
  JoinResult r = join_best(b.problem, options, context);
  if (r.partial || r.front.empty()) return std::nullopt;
  b.point = std::move(r.front.front());
  return b;
}

std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload) {
  StageOptions options;
  const StageResult stage = run_per_layer(arch, workload, options);
  return vela_schedule(arch, workload, stage);
}

}  // namespace npumap::search
