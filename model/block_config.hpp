#pragma once
// SHRAM allocation and valid block configs (docs/design/npu-model.md §8).
//
// The SHRAM holds, double-buffered, one IFM block per IFM operand and one accumulator block for the
// OFM block being computed. A block config [ofm_h, ofm_w, ifm_d, ofm_d] is valid when both fit in the
// banks left after the reserved output banks. The flow mirrors Vela's shared_buffer_allocation.py:
//   BlockConfigQuery  --make_shram_allocation-->  ShramAllocation (element types, IFM count, banks)
//   ShramAllocation + an OFM block  --try_block-->  a BlockConfig or nothing
//   find_valid_block_configs: try_block over Vela's (w, h, c) grid, in Vela's enumeration order (§8.4)
//   scheduler_block_configs: the scheduler's sort and its first/last `limit` shortlist
// BlockConfigMap is the per-arch map of §8.2. Because a block's size in bytes is h*w times a per-depth,
// per-element byte count, the map stores that byte count per listed depth and derives the banks on
// lookup: the same values as Vela's table, built in microseconds and small enough to stay in cache.
// Every constant is read from the Arch; nothing here knows a particular accelerator.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "arch/arch.hpp"
#include "model/geometry.hpp"

namespace npumap::model {

/// How the second IFM operand of an elementwise op is given (§8.3 ifm_count).
enum class Ifm2Kind : std::uint8_t { Absent, Scalar, Tensor };

/// What the SHRAM allocation of one pass depends on (§8.3); shapes are 4-D NHWC op shapes.
struct BlockConfigQuery {
  arch::NpuBlockType block_type = arch::NpuBlockType::ConvolutionMxN;
  std::array<int, 4> ifm_shape{1, 1, 1, 1};
  bool ifm_is_scalar = false;                 ///< the first IFM is a scalar (elementwise only)
  Ifm2Kind ifm2 = Ifm2Kind::Absent;           ///< second elementwise operand
  std::array<int, 4> ifm2_shape{1, 1, 1, 1};  ///< read only when the first IFM is a scalar
  std::array<int, 4> ofm_shape{1, 1, 1, 1};
  int ifm_bits = 8;  ///< 8, 16 or 32 (32 only for elementwise and ReduceSum)
  Kernel kernel;
  bool uses_lut = false;          ///< the primary op has an activation LUT
  bool all_fms_quantized = true;  ///< every FM has a quant scale (one condition of Acc40, §4.6)
  Resampling resampling = Resampling::None;
  friend bool operator==(const BlockConfigQuery&, const BlockConfigQuery&) = default;
};

/// The per-pass SHRAM allocation parameters of §8.3 (plus the kernel and resampling try_block needs).
struct ShramAllocation {
  int ifm_block_depth = 0;  ///< calc_ifm_block_depth (§3.3)
  bool is_equal_depth_op = false;
  bool is_elementwise = false;
  arch::ShramElement ifm_element = arch::ShramElement::Ifm8;
  arch::ShramElement acc_element = arch::ShramElement::Acc32;
  int ifm_count = 1;
  int available_banks = 0;
  Kernel kernel;
  Resampling resampling = Resampling::None;
  friend bool operator==(const ShramAllocation&, const ShramAllocation&) = default;
};

/// A block config in Vela's index order (§11.1): OFM height, OFM width, IFM depth, OFM depth.
struct BlockConfig {
  int ofm_h = 0;
  int ofm_w = 0;
  int ifm_d = 0;
  int ofm_d = 0;
  friend bool operator==(const BlockConfig&, const BlockConfig&) = default;
};

/// The block-config map of §8.2 for one arch: SHRAM banks per element type of a (w, h, c) block.
class BlockConfigMap {
 public:
  /// Marks a (w, h, c) outside the map (Vela's get_block_config returning None).
  static constexpr int kNotInMap = -1;

  /// Builds the map for `arch` (ifm_block_max extent and the arch's block depth list).
  explicit BlockConfigMap(const arch::Arch& arch);

  /// Largest block width and height in the map (ifm_block_max of §8.2).
  int max_width() const { return max_w_; }
  int max_height() const { return max_h_; }
  /// True when (w, h, c) has an entry.
  bool contains(int w, int h, int c) const {
    return depth_slot(c) >= 0 && w >= 1 && h >= 1 && w <= max_w_ && h <= max_h_;
  }
  /// Double-buffered banks of element type `e` for a (w, h, c) block, or kNotInMap.
  int banks(int w, int h, int c, arch::ShramElement e) const {
    const int slot = depth_slot(c);
    if (slot < 0 || w < 1 || h < 1 || w > max_w_ || h > max_h_) return kNotInMap;
    return banks_at(w * h, slot, e);
  }

 private:
  int depth_slot(int c) const {
    return c >= 0 && c < static_cast<int>(depth_slot_.size()) ? depth_slot_[static_cast<std::size_t>(c)] : -1;
  }
  int banks_at(int pixels, int slot, arch::ShramElement e) const {
    const auto ei = static_cast<std::size_t>(e);
    const std::int64_t bytes = static_cast<std::int64_t>(pixels) * bytes_per_pixel_[static_cast<std::size_t>(slot)][ei];
    return static_cast<int>(round_up(2 * ceil_div(bytes, bank_size_), granules_[ei]));
  }

  int max_w_ = 0;
  int max_h_ = 0;
  int bank_size_ = 1;
  std::array<int, arch::kNumShramElements> granules_{};
  std::vector<std::int8_t> depth_slot_;  ///< block depth -> index in the depth list, -1 if not listed
  std::vector<std::array<int, arch::kNumShramElements>> bytes_per_pixel_;  ///< aligned bytes per (h, w) position
};

/// True when the IFM bit width is one the allocator supports for this block type (§8.3).
bool ifm_bits_supported(arch::NpuBlockType block_type, int ifm_bits);

/// The SHRAM allocation of a pass (§8.3); the query's ifm_bits must satisfy ifm_bits_supported.
ShramAllocation make_shram_allocation(const arch::Arch& arch, const BlockConfigQuery& query);

/// try_block of §8.3: the block config for `ofm_block` if it fits the SHRAM, otherwise nothing.
std::optional<BlockConfig> try_block(const arch::Arch& arch, const BlockConfigMap& map, const ShramAllocation& alloc,
                                     const arch::Block& ofm_block);

/// Valid block configs in Vela's enumeration order (§8.4), written into `out` (cleared first; its
/// capacity is reused, so a caller that keeps `out` allocates nothing in steady state).
void find_valid_block_configs(const arch::Arch& arch, const BlockConfigMap& map, const BlockConfigQuery& query,
                              std::vector<BlockConfig>& out);
/// Convenience form that builds the map for this one call.
std::vector<BlockConfig> find_valid_block_configs(const arch::Arch& arch, const BlockConfigQuery& query);

/// The scheduler's sort key (h*w) << 8 | ofm_d (§8.4); larger keys come first.
constexpr std::int64_t scheduler_sort_key(const BlockConfig& c) {
  return ((static_cast<std::int64_t>(c.ofm_h) * c.ofm_w) << 8) | c.ofm_d;
}

/// The configs the scheduler evaluates (§8.4): a stable descending sort by scheduler_sort_key, then
/// the first `limit` and the last `limit` (all of them when there are at most 2*limit). limit > 0.
void scheduler_block_configs(std::span<const BlockConfig> valid, int limit, std::vector<BlockConfig>& out);
/// Convenience form returning a new vector; Vela's default limit is 16.
std::vector<BlockConfig> scheduler_block_configs(std::span<const BlockConfig> valid, int limit = 16);

}  // namespace npumap::model
