#include "model/geometry.hpp"

#include <algorithm>

namespace npumap::model {

int calc_ifm_block_depth(const arch::Arch& arch, int ifm_depth, int ifm_bits) {
  const int max_depth = 8 * 32 / ifm_bits;
  return static_cast<int>(std::min<std::int64_t>(max_depth, round_up(ifm_depth, arch.accel.ifm_ublock.d)));
}

int get_ifm_block_depth(arch::NpuBlockType block_type, int ifm_depth, int ifm_bits, BlockTraversal traversal,
                        int ofm_block_depth) {
  int depth = ofm_block_depth;
  if (block_type == arch::NpuBlockType::ConvolutionMxN || block_type == arch::NpuBlockType::VectorProduct ||
      block_type == arch::NpuBlockType::ReduceSum) {
    if (ifm_bits == 16 || traversal == BlockTraversal::PartKernelFirst) {
      depth = 16;
    } else if (ifm_bits == 8) {
      depth = 32;
    } else {
      depth = 8;
    }
  }
  return std::min(ifm_depth, depth);
}

}  // namespace npumap::model
