#pragma once
// Front points as mappings: what the search chose for each layer of a point (the pass with its block
// config, traversal and placements, where each tensor lives, whether it fuses), what it costs (the
// pmapping's totals and, through layer_metrics, the cycle model's breakdown of its pass) and the
// memory in use at each layer. The reports render these; they neither decode the join's (group, row)
// indices nor run the cycle model themselves.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "arch/arch.hpp"
#include "mapper/search/compat.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/mapspace.hpp"
#include "mapper/search/point_memory.hpp"
#include "mapper/search/stage.hpp"
#include "model/evaluate.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// One layer as a front point maps it.
struct LayerMapping {
  int layer = -1;      ///< index into the workload's layers
  bool cpu = false;    ///< runs on the CPU: no NPU pass (pass, metrics and placements unused)
  model::Pass pass;    ///< the NPU pass: the layer's base pass with the template and block config
  model::BlockConfig block_config;
  model::BlockTraversal traversal = model::BlockTraversal::Default;
  WeightPlacement weights = WeightPlacement::InPlace;
  BiasPlacement bias = BiasPlacement::InPlace;
  std::vector<TensorCompat> tensors;  ///< per input in the layer's order, then the output
  bool fused_with_previous = false;   ///< its first input is a rolling buffer (or, in Vela's point, a
                                      ///< cascade's concatenation kept whole: vela_point_mappings)
  bool fused_with_next = false;       ///< its output is a rolling buffer (or, as above, such a tensor)
  // The pmapping's costs, repeats included (what the join summed).
  double cycles = 0.0;
  double offchip_bytes = 0.0;
  double energy_pj = 0.0;
  double sram_bytes = 0.0;
  int repeat = 1;                 ///< a batched matmul runs the pass this many times
  int num_block_configs = 0;      ///< valid block configs of the layer (Vela's pass label)
};

/// The cycle model on one run of an NPU layer's pass. Computed when asked, not held: the metrics are
/// three times the size of the rest of a mapping, and a 50,000-layer chain holds 50,000 mappings.
model::PassMetrics layer_metrics(const arch::Arch& arch, const LayerMapping& mapping);

/// One front point: its layers (indices into FrontMappings::layers, per join step in topological
/// order) and, when asked for, the memory in use at each step.
struct PointMapping {
  std::vector<std::uint32_t> layers;
  std::optional<PointMemory> memory;
};

/// Some points of a front as mappings; a layer mapping several points share is stored once, in the
/// order points first use them.
struct FrontMappings {
  std::vector<LayerMapping> layers;
  std::vector<PointMapping> points;  ///< in the order the points were asked for
};

/// The mappings of `points` (points of the front of `problem`, the join problem built from `stage`),
/// with the memory per step of the point `points[memory_of]` (none if out of range: a large front's
/// memory per point would cost more than its mappings).
FrontMappings front_mappings(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                             const JoinProblem& problem, const std::vector<const FrontPoint*>& points,
                             std::size_t memory_of);

}  // namespace npumap::search
