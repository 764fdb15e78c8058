#include "model/block_config.hpp"

#include <algorithm>

#include "common/user_error.hpp"

namespace npumap::model {

BlockConfigMap::BlockConfigMap(const arch::Arch& arch) {
  // ifm_block_max (§8.2): Vela sizes the map for the IFM block of the largest OFM block under the
  // largest sub-kernel; the depth argument (Vela passes 32) plays no part in the extent.
  const Kernel largest_sub_kernel{arch.default_sub_kernel_max.w, arch.default_sub_kernel_max.h, 1, 1, 1, 1};
  const arch::Block ifm_max = get_ifm_block_size(arch, 0, arch.ofm_block_max, largest_sub_kernel,
                                                 arch.default_sub_kernel_max, Resampling::None);
  max_w_ = ifm_max.w;
  max_h_ = ifm_max.h;
  bank_size_ = arch.shram.bank_size_bytes;
  granules_ = arch.accel.shram_granules;
  NPUMAP_ASSERT(bank_size_ > 0);

  const std::vector<int>& depths = arch.shram.block_config_depths;
  NPUMAP_ASSERT(depths.size() < 128);
  int deepest = 0;
  for (int c : depths) {
    NPUMAP_ASSERT(c > 0);
    deepest = std::max(deepest, c);
  }
  depth_slot_.assign(static_cast<std::size_t>(deepest) + 1, -1);
  bytes_per_pixel_.resize(depths.size());
  for (std::size_t slot = 0; slot < depths.size(); ++slot) {
    const int c = depths[slot];
    depth_slot_[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(slot);
    for (std::size_t e = 0; e < arch::kNumShramElements; ++e) {
      // Accumulators align the channel count before widening; IFM elements align the bytes after.
      const std::int64_t aligned_depth = round_up(c, arch.shram.pre_align[e]);
      bytes_per_pixel_[slot][e] =
          static_cast<int>(round_up(aligned_depth * arch.shram.byte_sizes[e], arch.shram.post_align[e]));
    }
  }
}

bool ifm_bits_supported(arch::NpuBlockType block_type, int ifm_bits) {
  if (ifm_bits == 8 || ifm_bits == 16) return true;
  return ifm_bits == 32 &&
         (block_type == arch::NpuBlockType::ElementWise || block_type == arch::NpuBlockType::ReduceSum);
}

ShramAllocation make_shram_allocation(const arch::Arch& arch, const BlockConfigQuery& query) {
  using arch::NpuBlockType;
  using arch::ShramElement;
  NPUMAP_ASSERT(ifm_bits_supported(query.block_type, query.ifm_bits));

  ShramAllocation alloc;
  alloc.kernel = query.kernel;
  alloc.resampling = query.resampling;
  alloc.is_elementwise = query.block_type == NpuBlockType::ElementWise;
  alloc.is_equal_depth_op = alloc.is_elementwise || query.block_type == NpuBlockType::ConvolutionDepthWise ||
                            query.block_type == NpuBlockType::Pooling;

  int ifm_depth = query.ifm_shape[3];
  alloc.ifm_count = 1;
  if (alloc.is_elementwise) {
    if (query.ifm_is_scalar) {
      // A scalar first operand: the tensor operand sets the depth and only it occupies SHRAM.
      NPUMAP_ASSERT(query.ifm2 != Ifm2Kind::Absent);
      ifm_depth = query.ifm2_shape[3];
    } else if (query.ifm2 == Ifm2Kind::Tensor) {
      alloc.ifm_count = 2;
    }
  }

  // The element enum is ordered so that the 16-bit variant follows its 8-bit one.
  const int base = static_cast<int>(alloc.is_elementwise ? ShramElement::Ifm8Elementwise : ShramElement::Ifm8);
  if (query.ifm_bits == 32) {
    alloc.ifm_element = ShramElement::Ifm32;
  } else {
    alloc.ifm_element = static_cast<ShramElement>(base + (query.ifm_bits == 16 ? 1 : 0));
  }
  const bool acc40 = query.ifm_bits == 16 && query.block_type != NpuBlockType::Pooling && query.all_fms_quantized;
  alloc.acc_element = acc40 ? ShramElement::Acc40 : ShramElement::Acc32;
  alloc.ifm_block_depth = calc_ifm_block_depth(arch, ifm_depth, query.ifm_bits);
  alloc.available_banks = arch.available_shram_banks(query.uses_lut);
  return alloc;
}

namespace {

enum class Fit : std::uint8_t { Fits, NotInMap, TooBig };

// The bank test of try_block once the IFM block is known. IFM blocks fill the banks from the
// bottom after the reserved output and weight banks; accumulators fill them from the top.
Fit fit_blocks(const arch::Arch& arch, const BlockConfigMap& map, const ShramAllocation& alloc,
               const arch::Block& ifm_block, const arch::Block& ofm_block) {
  const int ifm_banks_one = map.banks(ifm_block.w, ifm_block.h, ifm_block.d, alloc.ifm_element);
  const int acc_banks_all = map.banks(ofm_block.w, ofm_block.h, ofm_block.d, alloc.acc_element);
  if (ifm_banks_one == BlockConfigMap::kNotInMap || acc_banks_all == BlockConfigMap::kNotInMap) return Fit::NotInMap;
  const int ifm_banks = ifm_banks_one * alloc.ifm_count;
  const int acc_banks = alloc.is_elementwise ? 0 : acc_banks_all;
  const int ifm_end = arch.shram.reserved_output_banks + arch.shram.reserved_weight_banks + ifm_banks;
  return ifm_end <= alloc.available_banks - acc_banks ? Fit::Fits : Fit::TooBig;
}

}  // namespace

std::optional<BlockConfig> try_block(const arch::Arch& arch, const BlockConfigMap& map, const ShramAllocation& alloc,
                                     const arch::Block& ofm_block) {
  const int ifm_d = alloc.is_equal_depth_op ? ofm_block.d : alloc.ifm_block_depth;
  const arch::Block ifm_block =
      get_ifm_block_size(arch, ifm_d, ofm_block, alloc.kernel, arch.default_sub_kernel_max, alloc.resampling);
  if (fit_blocks(arch, map, alloc, ifm_block, ofm_block) != Fit::Fits) return std::nullopt;
  return BlockConfig{ofm_block.h, ofm_block.w, ifm_block.d, ofm_block.d};
}

void find_valid_block_configs(const arch::Arch& arch, const BlockConfigMap& map, const BlockConfigQuery& query,
                              std::vector<BlockConfig>& out) {
  out.clear();
  const ShramAllocation alloc = make_shram_allocation(arch, query);
  const arch::Block& ublock = arch.accel.ofm_ublock;
  NPUMAP_ASSERT(ublock.w > 0 && ublock.h > 0 && ublock.d > 0 && arch.ofm_split_depth > 0);

  const int max_w = std::min(arch.ofm_block_max.w, query.ofm_shape[2]);
  const int max_h = std::min(arch.ofm_block_max.h, query.ofm_shape[1]);
  const int max_d = std::min(arch.ofm_block_max.d, query.ofm_shape[3]);
  const int resample_min = alloc.resampling == Resampling::None ? 1 : 2;
  const int step_w = std::max(ublock.w, resample_min);
  const int step_h = std::max(ublock.h, resample_min);

  // Vela's ranges run to max + step (exclusive), so the last width or height may overshoot the OFM.
  // Pruning keeps Vela's order and result: the IFM block grows with the OFM block's width and height
  // and the banks of both blocks never shrink as w, h or c grow, so once a block is too big (or its
  // IFM block leaves the map) every larger one in that direction is too.
  for (int w = step_w; w < max_w + step_w; w += step_w) {
    for (int h = step_h; h < max_h + step_h; h += step_h) {
      const arch::Block ifm_wh = get_ifm_block_size(arch, 0, arch::Block{w, h, 0}, alloc.kernel,
                                                    arch.default_sub_kernel_max, alloc.resampling);
      if (ifm_wh.w > map.max_width()) return;  // no wider OFM block fits the map either
      if (ifm_wh.h > map.max_height()) break;  // nor a taller one at this width
      bool first_depth = true;
      bool shallowest_too_big = false;
      for (int c = ublock.d; c < max_d + ublock.d; c += ublock.d) {
        // A depth that splits the OFM must be a multiple of the OFM split depth.
        if (c < max_d && c % arch.ofm_split_depth != 0) continue;
        const arch::Block ofm_block{w, h, c};
        const arch::Block ifm_block{ifm_wh.w, ifm_wh.h, alloc.is_equal_depth_op ? c : alloc.ifm_block_depth};
        const Fit fit = fit_blocks(arch, map, alloc, ifm_block, ofm_block);
        if (fit == Fit::Fits) {
          out.push_back(BlockConfig{h, w, ifm_block.d, c});
        } else if (fit == Fit::TooBig) {
          shallowest_too_big = first_depth;
          break;  // no deeper block of this (w, h) fits
        }
        first_depth = false;
      }
      if (shallowest_too_big) break;  // no taller block of this width fits at any depth
    }
  }
}

std::vector<BlockConfig> find_valid_block_configs(const arch::Arch& arch, const BlockConfigQuery& query) {
  const BlockConfigMap map(arch);
  std::vector<BlockConfig> out;
  find_valid_block_configs(arch, map, query, out);
  return out;
}

void scheduler_block_configs(std::span<const BlockConfig> valid, int limit, std::vector<BlockConfig>& out) {
  NPUMAP_ASSERT(limit > 0);
  out.assign(valid.begin(), valid.end());
  std::stable_sort(out.begin(), out.end(), [](const BlockConfig& a, const BlockConfig& b) {
    return scheduler_sort_key(a) > scheduler_sort_key(b);
  });
  const auto n = static_cast<std::ptrdiff_t>(out.size());
  const auto keep = static_cast<std::ptrdiff_t>(limit);
  if (n > 2 * keep) out.erase(out.begin() + keep, out.end() - keep);
}

std::vector<BlockConfig> scheduler_block_configs(std::span<const BlockConfig> valid, int limit) {
  std::vector<BlockConfig> out;
  scheduler_block_configs(valid, limit, out);
  return out;
}

}  // namespace npumap::model
