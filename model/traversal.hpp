#pragma once
// The weight compressor's block traversal heuristic (docs/design/npu-model.md §7.2): for a ConvMxN layer it picks
// whichever of depth-first and part-kernel-first wastes fewer MAC lanes on padding.

#include "arch/arch.hpp"
#include "model/geometry.hpp"

namespace npumap::model {

/// Vela's traversal choice (§7.2): DepthWise for depthwise convs; for ConvMxN, PartKernelFirst when
/// its utilisation is at least depth-first's or the weight input depth is at most 8, else DepthFirst;
/// Default for every other block type. `kernel_elements` is kh*kw.
BlockTraversal choose_block_traversal(arch::NpuBlockType block_type, int weight_input_depth, int kernel_elements,
                                      int ifm_bits);

}  // namespace npumap::model
