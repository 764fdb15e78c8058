#pragma once
// The NPU cycle model: evaluate(arch, pass) reproduces Vela's performance_metrics_for_pass
// (docs/design/npu-model.md §5-§6) for one pass, returning cycles, MACs, read multiples, unscaled and
// burst-scaled bandwidths, energy and a trace of the conv/pooling estimate. Pure: no I/O, no heap.

#include <array>
#include <cstdint>

#include "arch/arch.hpp"
#include "model/pass.hpp"

namespace npumap::model {

/// Tensor purposes; the numeric values are Vela's and index the bandwidth arrays (§2.1).
enum class TensorPurpose : std::uint8_t { Unknown, Weights, FeatureMap, Scratch, ScratchFast, Lut, FSBias };
inline constexpr int kNumPurposes = 7;

/// Bandwidth direction (§2.1).
enum class Direction : std::uint8_t { Read, Write };
inline constexpr int kNumDirections = 2;

/// Index of PassMetrics::cycles (§2.1).
enum class PassCycles : std::uint8_t { Npu, SramAccess, DramAccess, OnChipFlashAccess, OffChipFlashAccess, Total };
inline constexpr int kNumPassCycles = 6;

/// Bytes by [MemArea][TensorPurpose][Direction].
using BandwidthArray =
    std::array<std::array<std::array<double, kNumDirections>, kNumPurposes>, arch::kNumMemAreas>;

/// What estimate_conv_pooling_cycles saw and returned (docs/pass-format.md `expected.trace`).
struct PassTrace {
  bool has_conv_pooling = false;  ///< false for elementwise passes (only output_cycles is set)
  arch::Block ofm_block;          ///< after the in-place 1-D ublock tweak (§6.3)
  arch::Block ifm_block;
  std::array<int, 2> kernel_dims{};  ///< Conv/DW: (kh, kw); pooling: (kw, kh)
  BlockTraversal block_traversal = BlockTraversal::Default;
  double conv_pooling_cycles = 0.0;
  double output_cycles = 0.0;  ///< the single estimate_output_cycles return value
};

/// Everything evaluate() returns.
struct PassMetrics {
  std::array<double, kNumPassCycles> cycles{};
  std::int64_t macs = 0;
  std::int64_t ifm_read_multiple = 1;
  std::int64_t weight_read_multiple = 0;
  BandwidthArray bandwidth{};         ///< unscaled bytes (what Vela returns)
  BandwidthArray scaled_bandwidth{};  ///< burst-efficiency-scaled bytes (what access cycles use)
  double energy_pj = 0.0;             ///< unscaled bytes x pJ/byte per area and direction + MACs x pJ/MAC
  PassTrace trace;

  double cycle(PassCycles c) const { return cycles[static_cast<int>(c)]; }
  double total_cycles() const { return cycle(PassCycles::Total); }
};

/// The cycle model for one pass.
PassMetrics evaluate(const arch::Arch& arch, const Pass& pass);

/// What the search keeps of a pass's metrics, bit-identical to evaluate()'s.
struct PassCost {
  double total_cycles = 0.0;    ///< PassMetrics::total_cycles()
  double off_chip_bytes = 0.0;  ///< off_chip_bytes(PassMetrics)
  double energy_pj = 0.0;       ///< PassMetrics::energy_pj
};
/// What the cycle model derives from a pass apart from its block config and its weight double-buffer
/// depth: a search job evaluates thousands of passes that differ only in those, so it prepares this
/// once. The fields are evaluate.cpp's intermediates, named as there.
struct PreparedPass {
  /// An NHWC/NHCWB16 tensor as estimate_memory_transfer_efficiency sees its (possibly converted) copy.
  struct BurstView {
    bool brick16 = false;      ///< costed as NHCWB16: own format, or needs_linear_format == false
    int elem = 1;              ///< dtype.size_in_bytes() (a packed 10-byte bias still gives 4)
    double es = 1.0;           ///< element_size() * storage_compression_scale
    std::array<int, 4> ref{};  ///< reference shape S of §4.4, already rounded
  };
  arch::NpuBlockType type = arch::NpuBlockType::Default;
  BlockTraversal traversal = BlockTraversal::Default;  ///< the one the performance model uses (§6.4)
  std::array<int, 4> ifm_shape{};  ///< op shapes
  std::array<int, 4> ofm_shape{};
  bool conv_like = false;  ///< Conv/DW/FC/Pool/ReduceSum: the estimate_conv_pooling_cycles path
  bool acc40 = false;
  bool has_bias = false;
  arch::MemArea scale_area = arch::MemArea::Unknown;
  double output_cpe = 0.0;  ///< estimate_output_cycles' cycles per element, before any block term
  std::int64_t ofm_elements = 0;  ///< elementwise: the OFM's elements
  std::int64_t macs = 0;
  std::array<std::int64_t, 2> kernel_dims{};
  std::int64_t n_sub_kernels = 1;
  std::int64_t weight_bandwidth_depth = 0;  ///< the weight bandwidth shape's last dimension
  double weight_read_once = 0.0;            ///< weight bytes read per OFM block column
  double weight_elem = 0.0;
  double ifm_bw = 0.0;
  double ifm2_bw = 0.0;
  double ofm_bw = 0.0;
  double ofm_copy_bw = 0.0;
  double weights_bw = 0.0;
  double bias_bw = 0.0;
  double lut_bw = 0.0;
  BurstView ifm_view, ifm2_view, ofm_view, bias_view, lut_view;
};
/// Prepares `pass` for evaluate_cost(); block_config and weights_double_buffer_depth are not read.
PreparedPass prepare_pass(const arch::Arch& arch, const Pass& pass);
/// evaluate() reduced to a PassCost, for `pass` equal to the prepared one except, possibly, in
/// block_config and weights_double_buffer_depth; cheaper, as it builds no bandwidth arrays.
PassCost evaluate_cost(const arch::Arch& arch, const PreparedPass& prepared, const Pass& pass);
/// evaluate()'s cycles and unscaled bytes per memory (area_bytes), bit-identical, from a prepared pass
/// as evaluate_cost takes it: for a caller that weighs each memory's bytes (Vela's pass metric) over
/// many block configs of one pass.
struct PassAreaCost {
  std::array<double, kNumPassCycles> cycles{};
  std::array<double, arch::kNumMemAreas> area_bytes{};  ///< per arch::MemArea
  double total_cycles() const { return cycles[static_cast<int>(PassCycles::Total)]; }
};
PassAreaCost evaluate_area_cost(const arch::Arch& arch, const PreparedPass& prepared, const Pass& pass);

/// Unscaled bytes read and written in one memory area (all purposes).
double area_bytes(const PassMetrics& m, arch::MemArea area);
/// Unscaled off-chip traffic: Dram + OffChipFlash, reads and writes.
double off_chip_bytes(const PassMetrics& m);
/// The total energy of a set of metrics (its energy_pj field), for symmetry with off_chip_bytes.
inline double total_energy_pj(const PassMetrics& m) { return m.energy_pj; }

/// Names used in the pass JSON.
std::string_view purpose_name(TensorPurpose p);
std::string_view direction_name(Direction d);
std::string_view pass_cycles_name(PassCycles c);

}  // namespace npumap::model
