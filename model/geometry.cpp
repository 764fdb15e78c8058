#include "model/geometry.hpp"

#include <algorithm>

namespace npumap::model {

arch::Block get_ifm_block_size(const arch::Arch& arch, int ifm_block_depth, const arch::Block& ofm_block,
                               const Kernel& kernel, const arch::Block& sub_kernel, Resampling resampling) {
  const std::int64_t upscale = resampling == Resampling::None ? 1 : 2;
  // A real ceil of a non-negative integer quotient equals the integer ceil_div.
  std::int64_t h = ceil_div(static_cast<std::int64_t>(ofm_block.h - 1) * kernel.stride_y +
                                std::min(sub_kernel.h, kernel.dilated_h()),
                            upscale);
  h = round_up(h, arch.accel.ifm_ublock.h);
  std::int64_t w = ceil_div(static_cast<std::int64_t>(ofm_block.w - 1) * kernel.stride_x +
                                std::min(sub_kernel.w, kernel.dilated_w()),
                            upscale);
  w = round_up(w, arch.accel.ifm_ublock.w);
  return arch::Block{static_cast<int>(w), static_cast<int>(h), ifm_block_depth};
}

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
