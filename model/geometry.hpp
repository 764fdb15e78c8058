#pragma once
// Geometry helpers of the cycle model (docs/design/npu-model.md §3): integer rounding, kernels, IFM block size
// and depth, padding and output sizes. Shared by the cycle model and the block-config enumeration.

#include <algorithm>
#include <cstdint>

#include "arch/arch.hpp"

namespace npumap::model {

/// ceil_div(a, b) = (a + b - 1) // b for non-negative a and positive b.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
/// round_up(a, b) = ceil_div(a, b) * b.
constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

/// A kernel as Vela's Kernel(w, h, stride_x, stride_y, dilation_x, dilation_y) (§3.1).
struct Kernel {
  int w = 1;
  int h = 1;
  int stride_x = 1;
  int stride_y = 1;
  int dilation_x = 1;
  int dilation_y = 1;
  int dilated_w() const { return (w - 1) * dilation_x + 1; }
  int dilated_h() const { return (h - 1) * dilation_y + 1; }
  friend bool operator==(const Kernel&, const Kernel&) = default;
};

/// Resampling mode of the IFM: upscaling ops (transpose conv, resize) read the IFM at half rate.
enum class Resampling : std::uint8_t { None, Nearest, Transpose };

/// get_ifm_block_size (§3.2), newer-Vela form (real ceil, rounding with ifm_ublock). Inline: the
/// cycle model calls it for every candidate block config.
inline arch::Block get_ifm_block_size(const arch::Arch& arch, int ifm_block_depth, const arch::Block& ofm_block,
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

/// calc_ifm_block_depth (§3.3): the SHRAM allocator's IFM block depth.
int calc_ifm_block_depth(const arch::Arch& arch, int ifm_depth, int ifm_bits);

/// Block traversal of a convolution's weights (§7.2, §6.4).
enum class BlockTraversal : std::uint8_t { Default, DepthFirst, PartKernelFirst, DepthWise };

/// get_ifm_block_depth (§3.4): the performance model's IFM block depth (ignores block_config[2]).
int get_ifm_block_depth(arch::NpuBlockType block_type, int ifm_depth, int ifm_bits, BlockTraversal traversal,
                        int ofm_block_depth);

/// Padding mode of a convolution or pooling layer (§3.5).
enum class PaddingMode : std::uint8_t { Same, Valid, Explicit };

/// Explicit padding (top, left, bottom, right).
struct Padding {
  int top = 0;
  int left = 0;
  int bottom = 0;
  int right = 0;
  friend bool operator==(const Padding&, const Padding&) = default;
};

}  // namespace npumap::model
