// Front points as mappings (mapping.hpp): the (group, row) a point chose at each join step, decoded
// into the layer's pass, placements and costs, each distinct one once.

#include "mapper/search/mapping.hpp"

#include <map>
#include <tuple>

namespace npumap::search {
namespace {

/// The layer of join step `s` as the pmapping (group, row) of `problem` maps it.
LayerMapping layer_mapping(const arch::Arch& arch, const workloads::Workload& w, const StageResult& stage,
                           const JoinProblem& problem, std::size_t s, std::uint32_t group, std::uint32_t row_index) {
  const int layer = w.topological_order[s];
  const PmappingGroup& g = problem.steps[s].groups[group];
  const PmappingRow& row = g.rows[row_index];
  const LayerSpace& space = stage.layers[static_cast<std::size_t>(layer)].space;
  LayerMapping m;
  m.layer = layer;
  m.cpu = space.cpu;
  m.tensors = g.compat;
  m.cycles = row.cycles;
  m.offchip_bytes = row.offchip_bytes;
  m.energy_pj = row.energy_pj;
  m.sram_bytes = row.sram_bytes;
  m.repeat = space.batch_repeat;
  m.num_block_configs = static_cast<int>(space.block_configs.size());
  if (space.cpu) return m;  // its tensors stay in the arena; nothing runs on the NPU
  const Template& tpl = space.templates[row.template_index];
  m.block_config = space.block_configs[row.candidate];
  m.pass = make_pass(arch, space, tpl, m.block_config);
  m.traversal = tpl.traversal;
  m.weights = tpl.weights;
  m.bias = tpl.bias;
  m.fused_with_previous = g.compat.front().residence == Residence::Rolling;
  m.fused_with_next = g.compat.back().residence == Residence::Rolling;
  return m;
}

}  // namespace

model::PassMetrics layer_metrics(const arch::Arch& arch, const LayerMapping& mapping) {
  return model::evaluate(arch, mapping.pass);
}

FrontMappings front_mappings(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                             const JoinProblem& problem, const std::vector<const FrontPoint*>& points, std::size_t memory_of) {
  FrontMappings out;
  std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, std::uint32_t> known;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const FrontPoint* point = points[i];
    PointMapping pm;
    pm.layers.reserve(workload.topological_order.size());
    if (i == 0) out.layers.reserve(workload.topological_order.size());  // the first point's are all new
    for (std::size_t s = 0; s < workload.topological_order.size(); ++s) {
      const auto key = std::make_tuple(s, point->group[s], point->row[s]);
      auto it = known.find(key);
      if (it == known.end()) {
        it = known.emplace(key, static_cast<std::uint32_t>(out.layers.size())).first;
        out.layers.push_back(layer_mapping(arch, workload, stage, problem, s, point->group[s], point->row[s]));
      }
      pm.layers.push_back(it->second);
    }
    if (i == memory_of) pm.memory = point_memory(problem, *point);
    out.points.push_back(std::move(pm));
  }
  return out;
}

}  // namespace npumap::search
