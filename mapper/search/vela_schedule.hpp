#pragma once
// The schedule Vela 2.1 would choose, as a point of our mapspace (docs/design/vela-schedule.md).
//
// Vela 2.1's scheduler ranks candidate schedules by one weighted sum of cycles, peak SRAM and bytes
// moved (its candidate metric; VelaWeights) over per-pass choices of block config (a shortlist), weight
// streaming or IFM streaming (weights double-buffered or whole in SRAM) and cascades (rolling buffers),
// and where the arena is off-chip then moves feature maps to SRAM. This version builds the problem of
// those choices with Vela's rows costed afresh (vela_problem), replaces each row's cycles by Vela's
// pass metric (which adds up over passes) and joins for its least: exactly where the arch spills (one
// additive column, no feature map whole in SRAM, no SRAM weight), else over the (peak SRAM, metric)
// front without rolling buffers, after which add_vela_cascades chooses the rows and cascades with
// Vela's own SRAM accounting (vela_cascades.hpp); where the arch spills it then moves feature maps to
// SRAM as Vela's post-schedule pass does. Vela's recursion and its 16-candidate cuts are not
// modelled (the design note lists the differences this leaves).

#include <optional>
#include <utility>
#include <vector>

#include "arch/arch.hpp"
#include "common/stop_token.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/mapping.hpp"
#include "mapper/search/stage.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// Vela's schedule of one workload: the problem its point indexes (it owns the groups) and the point.
/// The point's peak SRAM is our accounting of the schedule (point_memory, as for the front's points,
/// so the two compare); `sram_used_bytes` is Vela's own figure for it, the "SRAM used" Vela prints
/// (its pass order and tensor allocator, vela_sram.hpp), which can be above or below.
struct VelaBaseline {
  JoinProblem problem;
  FrontPoint point;
  double sram_used_bytes = 0.0;
  /// Vela's cascades through a concatenation (add_vela_cascades): (writer step, reader step), the
  /// tensor whole in the arena, so the point costs them as the steps apart.
  std::vector<std::pair<std::size_t, std::size_t>> whole_cascades;
};

/// Whether step s is in one of b's whole_cascades.
bool in_whole_cascade(const VelaBaseline& b, std::size_t s);

/// Shows the cascades through a concatenation of Vela's point `b` fused in `m`'s point `point` (a
/// mapping of b's point): they keep the tensor whole, so no rolling buffer marks them, but they are
/// Vela's cascades.
void mark_whole_cascades(FrontMappings& m, std::size_t point, const VelaBaseline& b);

/// The mappings of Vela's point (front_mappings), its cascades through a concatenation shown fused.
FrontMappings vela_point_mappings(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                                  const VelaBaseline& b);

/// The weights of Vela 2.1's candidate metric (its scheduler's candidate_metric): per cycle, per byte
/// of peak SRAM (0 when the arch spills: Vela then ignores SRAM use) and per off-chip byte (the
/// bandwidth weight of the permanent storage's memory: DRAM 10, on-chip flash 2, off-chip flash 20).
struct VelaWeights {
  double cycle = 40.0;
  double sram_byte = 1000.0;
  double offchip_byte = 20.0;
};
VelaWeights vela_weights(const arch::Arch& arch);

/// Whether Vela 2.1 places the layer's weights as the template does: its graph pass DMAs the weights
/// of every weighted op but a fully connected one (VectorProduct reads them in place) to SRAM (unless
/// they are stored there), where its WeightStream strategy double-buffers them and its IfmStream
/// strategy (ConvolutionMxN, DepthWise and Pooling only) holds them whole. The bias placement is left
/// free (Vela copies the bias of IFM-streamed passes only).
bool vela_template(const arch::Arch& arch, const LayerSpace& space, const Template& tpl);

/// The pass of a template at a block config as Vela's scheduler costs it while it ranks block configs
/// and strategies (its pass metric: 40 per cycle plus each memory's bytes times its bandwidth weight):
/// the bias is the int32 tensor read in place (Vela packs and copies it only after scheduling), the
/// weights it DMAs are encoded once for a block depth of 16 in streams of 16 channels and those read
/// in place uncompressed, and every feature map is NHWC (mark_tensors.py's default format; NHCWB16 is
/// set after the search), so its bytes are those of its own channels, while the transfer efficiency
/// of one that need not be linear is still costed as NHCWB16. Where the arch spills, an OFM that may
/// roll is written to SRAM with its commands timed in the arena (docs/design/vela-schedule.md).
model::Pass vela_scheduling_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl,
                                 const model::BlockConfig& block_config);

/// Vela's default --block-config-limit: the scheduler tries the first and last 16 configs of its sort.
inline constexpr int kVelaBlockConfigLimit = 16;

/// The join problem of Vela's mapspace: make_join_problem (fusion only where the arch spills), each
/// step with, under `vela_templates`, Vela's groups costed afresh: per template of Vela's weight
/// placement, traversal and bias placement (vela_template) with its feature maps in the arena or
/// rolled, each config of Vela's shortlist of
/// `block_config_limit` (0: every config), a rolling variant never double-buffering its weights;
/// with `vela_layouts`, only the groups whose feature maps are NHCWB16 wherever the layer may use it
/// (Vela's layouts). A layer without such groups keeps the stage's groups, filtered likewise where a
/// filter leaves it any group. `fresh_steps`, if given, tells per step whether its groups are fresh.
JoinProblem vela_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                         int block_config_limit = kVelaBlockConfigLimit, bool vela_templates = true,
                         bool vela_layouts = true, std::vector<bool>* fresh_steps = nullptr);

/// Vela's schedule from a finished per-layer stage; none if no mapping fits or the stop fired.
std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload,
                                          const StageResult& stage, const common::StopToken& stop = {},
                                          int block_config_limit = kVelaBlockConfigLimit);

/// Vela's schedule of `workload`, running the per-layer stage itself (one thread).
std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload);

}  // namespace npumap::search
