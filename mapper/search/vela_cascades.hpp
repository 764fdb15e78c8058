#pragma once
// Vela 2.1's cascades, chosen as its scheduler chooses them (docs/design/vela-schedule.md "What we
// reproduce"; on U55, where the tensor arena is SRAM, and on U65, where it spills): a point of Vela's
// problem gains the cascades (runs of consecutive passes joined by SRAM rolling buffers) that Vela's
// dynamic program keeps: per step Pareto sets in (summed pass metric, the finished cascaded passes'
// largest SRAM in Vela's own accounting, the open one's), each cut to the 16 of least candidate
// metric (1,000 per byte of the largest SRAM, 0 where the arch spills, plus the summed pass metric).

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "mapper/search/join/join.hpp"

namespace npumap::search {

/// What Vela's scheduler sees of a row of a step.
struct VelaRowCost {
  double metric = 0.0;       ///< its pass metric: 40 per cycle plus each memory's bytes times its bandwidth weight
  bool ifm_stream = false;   ///< Vela's IfmStream strategy may run it (a convolution, depthwise or pooling pass
                             ///< whose weights are not double-buffered)
  int block_h = 0;           ///< its block config's OFM block height
  double bias_bytes = 0.0;   ///< of its own SRAM, the bias copy's (Vela's scheduler counts no bias copy: it
                             ///< moves biases to SRAM after scheduling, move_scales_to_fast_storage)
  double weight_bytes = -1.0;  ///< its weights' SRAM as Vela's scheduler counts it (the encoding it made
                               ///< before scheduling); negative: the row's own SRAM less the bias copy
  double order = 0.0;  ///< its place among the step's rows in Vela's order of candidates; of candidates
                       ///< equal in metric and both SRAM figures Vela keeps the first (the least sum)
  int ifm_block_h = 0;  ///< its IFM block height (rolling_consumer_rows), for a rolling buffer into it
                        ///< that its rows do not model (a concatenation's, below); 0: unknown
};
using VelaRowCostFn = std::function<VelaRowCost(std::size_t step, const PmappingRow& row)>;

/// The geometry of a step's pass in rows, for Vela's OFM-over-IFM overlap of IFM-streamed passes
/// (its calc_allowed_ofm_ifm_overlap_for_pass_list); `rows` false: no overlap (not a 4-D pass, or
/// an upscaling one).
struct VelaPassRows {
  bool rows = false;
  int ifm_h = 0, ofm_h = 0, stride = 1, pad_top = 0, kernel_h = 1;
  double ifm_row_bytes = 0.0, ofm_row_bytes = 0.0;  ///< NHWC (Vela schedules before choosing NHCWB16)
};

/// Vela's allowance for an IFM-streamed cascaded pass of `shapes` (first to last) with these OFM block
/// heights to write its last OFM over its first IFM (its calc_allowed_ofm_ifm_overlap_for_pass_list):
/// its command stream (each pass in stripes of its block height, a stripe issued once the pass before
/// has produced the IFM rows it reads) tracks the lowest IFM byte the first pass still reads and the
/// highest OFM byte the last has written; the OFM bytes that never pass the former may share its
/// storage. 0 where a pass has no rows.
double vela_ifm_overlap(const std::vector<const VelaPassRows*>& shapes, const std::vector<int>& block_h);

/// The feature-map bytes live at each step as Vela's scheduler counts them (its
/// calc_non_local_mem_usage, before the search): every feature map whole and NHWC (linear_bytes;
/// constants none), live from its first use to its last (a network output to the end); and where a
/// step's output shares an input's live range (`merged[s]`, the input index, vela_scheduling_merges;
/// -1 or empty: none), within the step's NPU subgraph (`npu`: the runs of NPU steps) every tensor of
/// the shared range counts over the whole range, as Vela adds each tensor's size over the range it
/// maps to: the input of an elementwise step stays live, in these figures, to its output's last use.
std::vector<double> vela_scheduling_live(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<int>& merged);

/// Chooses, in `point` (a point of `problem`; its groups fix each step's feature-map placements), each
/// NPU step's row and the runs of consecutive steps cascaded through rolling buffers as Vela's
/// scheduler would where the arena is SRAM: per NPU subgraph, Vela's dynamic program over its steps
/// in order, its candidates filtered per step as Vela filters them, and of the last step's the least
/// candidate metric, `sram_weight` per byte of the largest cascaded pass's SRAM in Vela's own
/// accounting plus the summed pass metric (docs/design/vela-schedule.md). With `spills` (the arena
/// off-chip) that accounting holds no feature map and no OFM-over-IFM overlap: the members' weights and
/// the rolling buffers alone. A step's rows are those of its group; a cascade member's those of
/// the groups with the same placements but its IFM and/or output rolled. `npu[s]` tells whether step s
/// runs on the NPU; `merged[s]` which input's live range step s's output shares in Vela's scheduler
/// (vela_scheduling_merges; -1: none, empty: none anywhere). The caller recosts the point.
///
/// A concatenation (a tensor several steps write, each a slice, read by one step only, as its IFM,
/// its writers the steps right before the reader) is cascaded as Vela's scheduler may where the arena
/// is SRAM (its avoid_for_cascading refuses a concatenation's writer only where the arch spills): one
/// IFM-streamed writer with the reader, the other writers each a cascaded pass of its own before them.
/// Vela's dynamic program counts a rolling buffer for it (RollingBufferY rows of the tensor, the
/// reader's IFM block height plus the writer's OFM block height), but the tensor ends up whole: Vela
/// re-sizes it whole when it lays out the other writer's output (apply_result's NHCWB16 pass calls
/// set_format, which recomputes the storage shape from the whole shape), so the cascade costs what
/// the steps cost apart, in cycles and in SRAM, and the point keeps the tensor whole in the arena.
/// Such cascades are appended to `whole` (if given) as (writer step, reader step).
void add_vela_cascades(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<int>& merged,
                       const std::vector<VelaPassRows>& shapes, const VelaRowCostFn& cost, double sram_weight, bool spills,
                       FrontPoint& point, std::vector<std::pair<std::size_t, std::size_t>>* whole = nullptr);

/// How many candidates Vela's scheduler keeps per step (its pareto_max_candidates).
inline constexpr std::size_t kVelaCandidates = 16;

}  // namespace npumap::search
