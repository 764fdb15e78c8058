#pragma once
// Lowering: a workload layer turned into the NPU pass it runs as, once, before any mapspace is
// enumerated. This is the only place that knows the workload's op kinds: it picks the pass operator,
// kernel, activation and shapes (a batched matmul becomes repeated fully-connected passes, softmax a
// LUT pass), the weights and bias tensors, the block traversals the op allows, which feature maps may
// be stored in NHCWB16 or fused through a rolling buffer, and whether the NPU can run the layer at
// all. The mapspace (mapspace.hpp) then only places tensors and enumerates block configs. Adding an
// op kind touches this file. The rules are those of docs/design/npu-model.md §1.4, §4.5, §7 and §9.

#include <array>
#include <string>
#include <vector>

#include "arch/arch.hpp"
#include "model/pass.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// One encoded size of a layer's weights (workloads::WeightEncodingEntry) for one block depth.
struct WeightVariantCost {
  model::BlockTraversal traversal = model::BlockTraversal::DepthFirst;
  bool streamed = false;   ///< one brick per block depth through a double buffer
  int block_depth = 0;     ///< the block config's OFM depth, capped at the weights' OFM depth
  double scale = 1.0;      ///< bandwidth compression scale (mean over bricks)
  double worst_scale = 1.0;  ///< the largest brick's scale: what a double buffer holds per raw byte
  std::int64_t bytes = 0;  ///< encoded bytes, all bricks
  friend bool operator==(const WeightVariantCost&, const WeightVariantCost&) = default;
};

/// One layer as the NPU runs it, before any placement or block config is chosen.
struct LoweredLayer {
  int layer = -1;                 ///< index in the workload (file order)
  int num_inputs = 1;             ///< feature-map inputs (1 or 2; a CPU operator may have more)
  /// The pass with the layer's operator, shapes, data types, weights and bias; feature-map memory
  /// areas, layouts, DMA copies and the block config are left to the mapspace.
  model::Pass base;
  int batch_repeat = 1;           ///< a batched matmul runs as this many identical passes
  bool own_weights = false;       ///< the weights are a constant tensor (may be copied to SRAM by DMA)
  bool uses_lut = false;          ///< the pass needs a lookup table in SHRAM (`base.lut` is it)
  /// The weights' encoded sizes per (traversal, streamed, block depth), from the layer's
  /// `weight_encodings`; empty: every mapping uses `weight_compression`.
  std::vector<WeightVariantCost> weight_variants;
  /// Traversals the op allows (conv: depth-first and part-kernel-first; depthwise: depthwise).
  std::vector<model::BlockTraversal> traversals{model::BlockTraversal::Default};
  std::vector<bool> input_nhcwb16;      ///< per input: may be stored in NHCWB16 (§4.5)
  bool output_nhcwb16 = false;
  std::vector<bool> input_linear_only;  ///< per input: read as a linear block (fc, matmul operands, CPU)
  /// Per input: a constant operand, read in place from permanent storage (its `base` memory area).
  std::vector<bool> input_constant;
  /// Per input / the output: a network input or output kept in the arena (unless the arch sets
  /// `network_io_in_sram`): it is not offered a place in fast storage where that differs from the arena.
  std::vector<bool> input_arena_only;
  bool output_arena_only = false;
  bool output_linear_only = false;
  bool input_may_roll = false;    ///< the first input may come through a rolling buffer (§9)
  bool output_may_roll = false;   ///< the output may go through a rolling buffer (§9)
  std::string unsupported;        ///< non-empty: why the NPU cannot run this layer at all
  /// A CPU operator: no NPU pass (`base` holds only its IFM and OFM); one zero-cost placement.
  bool cpu = false;
};

/// A feature map live across more than this many layers of the topological order is *long-lived*.
/// Its layers offer it both the arena and fast storage, but the join never lets it choose per
/// mapping: each live tensor with a choice of memory doubles the join's compatibility groups, and a
/// network whose outputs collect one tensor per time step (an unrolled LSTM) would keep hundreds of
/// such choices open at once. join_long_lived (long_lived.hpp) joins two variants instead, every
/// long-lived map in the arena or every one pinned in fast storage, and merges their fronts.
inline constexpr int kLongLivedSteps = 16;

/// Whether tensor `tensor` of `workload` is a long-lived feature map that its layers may place in fast
/// storage: live across more than kLongLivedSteps layers of the topological order, from its first
/// writer (or the start, for a network input) to its last reader (or the end, for a network output),
/// and neither a constant nor a network input or output kept in the arena.
bool long_lived_feature_map(const arch::Arch& arch, const workloads::Workload& workload, int tensor);

/// Lowers one layer of `workload` for `arch`.
LoweredLayer lower_layer(const arch::Arch& arch, const workloads::Workload& workload, int layer);

}  // namespace npumap::search
