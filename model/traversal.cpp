#include "model/traversal.hpp"

namespace npumap::model {

BlockTraversal choose_block_traversal(arch::NpuBlockType block_type, int weight_input_depth, int kernel_elements,
                                      int ifm_bits) {
  if (block_type == arch::NpuBlockType::ConvolutionDepthWise) return BlockTraversal::DepthWise;
  if (block_type != arch::NpuBlockType::ConvolutionMxN) return BlockTraversal::Default;

  const std::int64_t depth = weight_input_depth;
  const std::int64_t k = kernel_elements;
  const bool is_8bit = ifm_bits == 8;
  // Real divisions in Vela's order, so that near-ties round the way Vela's doubles do.
  const double depth_utilisation = static_cast<double>(depth) / static_cast<double>(round_up(depth, is_8bit ? 32 : 16));
  const double part_kernel_utilisation = (static_cast<double>(depth) / static_cast<double>(round_up(depth, 8))) *
                                         (static_cast<double>(k) / static_cast<double>(round_up(k, is_8bit ? 4 : 2)));
  // Part-kernel-first always wins for IFM depths up to 8: depth-first would leave most lanes idle.
  if (part_kernel_utilisation >= depth_utilisation || weight_input_depth <= 8) {
    return BlockTraversal::PartKernelFirst;
  }
  return BlockTraversal::DepthFirst;
}

}  // namespace npumap::model
