#pragma once
// The "SRAM used" Vela 2.1 prints for a schedule (docs/design/vela-schedule.md "Vela's SRAM used"):
// not a sum of live tensors but the end of the highest tensor its allocator placed. Vela gives every
// tensor in SRAM one live range over its cascaded passes (each pass two time units apart, an NPU
// subgraph one more slot at each end), merges an elementwise pass's OFM with an IFM it may overwrite,
// rounds each size up to 16 bytes and places the ranges with its hill-climb allocator (a first-fit
// in priority order, then up to 500 random swaps of the ranges that decided the highest one, seeded
// so that every compile gives the same result). This rebuilds those ranges from one point of our
// mapspace and replays the allocator, random numbers included (Python's Mersenne Twister).

#include <array>
#include <cstdint>
#include <vector>

#include "mapper/search/join/join.hpp"

namespace npumap::search {

/// One live range for the allocator: the time slots [start, end] (inclusive) and the bytes.
struct VelaLiveRange {
  int start = 0;
  int end = 0;
  std::int64_t size = 0;
};

/// Vela's hill-climb allocator on `ranges` (in Vela's creation order, which breaks its ties): the
/// address of each range, every one a multiple of 16.
std::vector<std::int64_t> vela_hillclimb_addresses(const std::vector<VelaLiveRange>& ranges);

/// The highest end address of vela_hillclimb_addresses (0 without ranges): Vela's memory used.
std::int64_t vela_hillclimb_size(const std::vector<VelaLiveRange>& ranges);

/// What Vela's live ranges need of a join step beyond the problem.
struct VelaSramStep {
  bool npu = false;                  ///< the layer runs on the NPU (else on the CPU, in Vela's root graph)
  std::array<bool, 2> merge_input{};  ///< an elementwise pass (not SHL/SHR) whose output Vela may
                                      ///< place over input i (the same shape and element type)
  bool operands_swapped = false;      ///< Vela's graph has the inputs the other way round (its first
                                      ///< operand is our input 1: workloads::Layer::operands_swapped)
  std::int64_t bias_copy_bytes = 0;   ///< the bias copy Vela adds to an IFM-streamed pass (its
                                      ///< move_scales_to_fast_storage) where the point's row lacks it
  int cascade_writer = -1;            ///< the step of a concatenation's writer this reader is cascaded
                                      ///< with, the tensor whole (VelaBaseline::whole_cascades); -1: none
};

/// The input whose live range each step's output shares while Vela schedules (its scheduler's
/// calc_non_local_mem_usage builds the live ranges of the passes, every feature map NHWC in the
/// arena, with the same elementwise merge as its allocator): per step the input index, -1 for none.
/// An NPU elementwise pass (not SHL/SHR) merges with the first of its operands in Vela's graph order
/// that has its shape and element type and no other reader, provided Vela's first operand is a
/// feature map (it tests the first operand's memory for both).
std::vector<int> vela_scheduling_merges(const JoinProblem& problem, const std::vector<VelaSramStep>& steps);

/// Vela's order of the passes, as step indices: its pass packing (a depth-first walk back from the
/// network's outputs: a tensor's writers once every reader of it is placed, then their inputs in the
/// graph's operand order, the first first) cut into CPU passes and runs of NPU passes (its NPU
/// subgraphs), each run then re-ordered as Vela's scheduler orders a subgraph's cascaded passes (depth
/// first from each pass without a successor in it, a cascaded pass after those of its predecessors).
/// `cascade`: per step, an id shared by the steps of one cascade.
std::vector<std::size_t> vela_pass_order(const JoinProblem& problem, const std::vector<VelaSramStep>& steps,
                                         const std::vector<int>& cascade);

/// The live ranges Vela's allocator sees in SRAM for `point` of `problem` (feature maps resident in
/// SRAM, each pass's weight and bias buffers, a cascade's rolling buffers), in its creation order.
std::vector<VelaLiveRange> vela_sram_ranges(const JoinProblem& problem, const FrontPoint& point,
                                            const std::vector<VelaSramStep>& steps);

/// Vela's "SRAM used" for `point`: vela_hillclimb_size of vela_sram_ranges.
std::int64_t vela_sram_used(const JoinProblem& problem, const FrontPoint& point, const std::vector<VelaSramStep>& steps);

}  // namespace npumap::search
