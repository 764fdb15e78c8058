#pragma once
// Vela 2.1's weight compression, reproduced in size (docs/design/lowering/weight-encoding.md;
// docs/design/tflite-import.md says what it is checked against).
//
// Why: the encoded weight bytes drive the flash/DRAM weight traffic, which often dominates the
// cycles of a U55 with off-chip flash, and the worst brick sizes the weight double buffers. The
// fixed 5/8 ratio Vela assumes while scheduling is off by up to 20x, so the mapper needs the real size.
//
// What it does, in Vela's order:
//   1. split the OHWI weights (after zero-point subtraction) into bricks of `depth_step` output
//      channels, and each brick into one sub-stream per core (channels core, core+ncores, ...);
//   2. reorder each sub-stream into the NPU's brick order ("Brick order"): OFM blocks, IFM blocks, sub-kernels,
//      (part-kernel-first IFM micro-blocks), OFM micro-blocks, kernel elements, (depth-first IFM
//      micro-blocks), 8 OFM x 8 IFM channels, with zero padding;
//   3. run the mlw weight codec ("The codec") on each sub-stream: palette sections, zero runs, palette and
//      direct-offset index mapping, a Viterbi-like Golomb-Rice parameter search, slices, padded
//      unary chunk fields, the 3-bit end marker and 0xFF padding to 16 bytes. Only the bit count is
//      produced, not the bitstream: the size is all the mapper needs, and it does not depend on how
//      chunks interleave bits. The page names the codec's parts but not all of its rules; the
//      rest follow Vela 2.1's codec, and every reference pass comes out exact;
//   4. report bytes per brick and core, the total, and the compression scales ("Compression scale"): per brick,
//      bytes / (kh*kw*I*min(O, depth_step)); the mean is the bandwidth/storage scale, the maximum
//      the worst-stream scale.
//
// Entry points:
//   choose_traversal()            - the block traversal rule ("Traversal");
//   reorder_weight_stream()       - the unencoded stream of one (brick, core) ("Brick order");
//   mlw_encoded_stream_bytes()    - the codec's output length for one stream ("The codec");
//   encode_weights()              - the whole tensor: bricks, cores, total, scales;
//   packed_bias_scale_size()      - the bias/scale tensor's size ("Bias and scale");
//   operator_weight_input() / encode_operator_weights() - the same for a TFLite operator, applying
//                                   Vela's weight-changing rewrites (depth multiplier, 1x1 conv -> FC, first-layer stride 2).
// Bad input throws npumap::common::UserError.

#include <compare>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "workloads/bias_scale.hpp"
#include "workloads/tflite/model.hpp"

namespace npumap::tflite {

/// The NPU block type the weights feed (Vela's npu_block_type), which picks the reorder.
enum class WeightBlockType { Conv, Depthwise, FullyConnected, TransposeConv };

/// Weight traversal order (Vela's TensorBlockTraversal).
enum class WeightTraversal { DepthFirst, PartKernelFirst, DepthWise };

/// Name as in the reference records ("DepthFirst", "PartKernelFirst", "DepthWise").
std::string_view weight_traversal_name(WeightTraversal t);

/// The accelerator's parameters that change the weight stream.
struct WeightAccelerator {
  int ifm_ublock_depth = 8;  ///< IFM micro-block depth (8 on every Ethos-U55/U65)
  int ofm_ublock_depth = 8;  ///< OFM micro-block depth (4 on U55-32, else 8)
  int cores = 1;             ///< 2 on U65-512, else 1
};

/// Accelerator parameters for a Vela accelerator-config name ("ethos-u55-128", "ethos-u65-512", ...).
WeightAccelerator weight_accelerator(std::string_view accelerator_config);

/// Everything that determines a weight tensor's encoded size; plain values only.
struct WeightEncodingInput {
  /// Weight values in OHWI order, O*H*W*I of them: raw quantised integers when `zero_points` is
  /// non-empty, else already zero-point-subtracted. After subtraction each must lie in [-255, 255].
  std::vector<std::int32_t> values;
  /// Empty (values are already w - zp), one per-tensor zero point, or one per output channel O.
  std::vector<std::int64_t> zero_points;
  int ofm_depth = 0;  ///< O
  int kernel_h = 1;   ///< H
  int kernel_w = 1;   ///< W
  int ifm_depth = 0;  ///< I (1 for depthwise: Vela's DW weights are [kh, kw, 1, C])
  WeightBlockType block_type = WeightBlockType::Conv;
  /// Conv/transpose conv: DepthFirst or PartKernelFirst (see choose_traversal); depthwise must be
  /// DepthWise and fully-connected DepthFirst.
  WeightTraversal traversal = WeightTraversal::DepthFirst;
  int ifm_bits = 8;         ///< 8 or 16: the consumer's IFM element size
  int ofm_block_depth = 8;  ///< OFM depth of the pass's block config
  int depth_step = 0;       ///< channels per brick; 0 = the whole O in one brick
  WeightAccelerator accelerator;
  int dilation_h = 1, dilation_w = 1;
};

/// One brick: `channels` output channels starting at `first_channel`, one stream per core.
struct EncodedBrick {
  int first_channel = 0;
  int channels = 0;
  std::vector<std::int64_t> core_bytes;      ///< encoded bytes per core (multiples of 16; 0 for an idle core)
  std::vector<std::int64_t> core_reordered;  ///< unencoded stream length per core (values)
  std::int64_t bytes = 0;                    ///< sum of core_bytes
  double scale = 0.0;                        ///< bytes / elements_in_brick
};

/// The encoded size of a whole weight tensor.
struct WeightEncoding {
  WeightTraversal traversal = WeightTraversal::DepthFirst;
  std::vector<EncodedBrick> bricks;
  std::int64_t elements_in_brick = 0;  ///< kh*kw*I*min(O, depth_step): the scale's denominator
  std::int64_t total_bytes = 0;        ///< sum over bricks: Vela's "NPU encoded weights" contribution
  std::int64_t reordered_values = 0;   ///< unencoded stream length: Vela's "NPU weights" contribution
  double mean_scale = 0.0;             ///< bandwidth and storage compression scale
  double worst_scale = 0.0;            ///< compression scale of the worst weight stream
};

/// The traversal rule (weight-encoding.md, "Traversal") for the given block type, kernel size, weight input depth and IFM bits.
WeightTraversal choose_traversal(WeightBlockType type, int kernel_h, int kernel_w, int ifm_depth, int ifm_bits);

/// The reordered, zero-padded stream of one core's weights (weight-encoding.md, "Brick order"). `ohwi` holds that core's
/// zero-point-subtracted weights [ofm_depth, kh, kw, ifm_depth]; `ofm_block_depth` is per core.
std::vector<std::int16_t> reorder_weight_stream(std::span<const std::int16_t> ohwi, int ofm_depth, int kernel_h,
                                                int kernel_w, int ifm_depth, WeightTraversal traversal, int ifm_bits,
                                                int ofm_block_depth, const WeightAccelerator& accel, int dilation_h,
                                                int dilation_w);

/// Bytes the mlw codec emits for one stream of values in [-255, 255], 16-byte padding included
/// (0 for an empty stream).
std::int64_t mlw_encoded_stream_bytes(std::span<const std::int16_t> stream);

/// Encodes a whole weight tensor as Vela 2.1 does after scheduling and returns the sizes.
WeightEncoding encode_weights(const WeightEncodingInput& input);

/// One way a mapping may encode a layer's weights (7.1 step 4): the traversal, the OFM depth of the
/// block config, and whether the weights stream through a double buffer one block depth at a time
/// (one brick per block depth, each with its own header and padding) or sit in one brick.
struct WeightVariant {
  WeightTraversal traversal = WeightTraversal::DepthFirst;
  int block_depth = 16;
  bool streamed = false;
  friend bool operator==(const WeightVariant&, const WeightVariant&) = default;
  friend auto operator<=>(const WeightVariant&, const WeightVariant&) = default;
};

/// One weight tensor prepared once (checked, zero point subtracted, transpose conv flipped) and
/// encoded in any number of variants; encode() is const and may run concurrently.
class WeightEncoder {
 public:
  /// Checks and prepares `input`; its traversal, ofm_block_depth and depth_step are not read.
  explicit WeightEncoder(const WeightEncodingInput& input);
  /// The variant that encodes exactly as `variant`: the block depth capped at O (a deeper block is
  /// the whole depth), streaming only with a block shallower than O, and, for one brick whose
  /// reordered stream cannot depend on the block depth (one IFM block and one sub-kernel, block
  /// depths of whole micro-blocks), the whole depth. Equal canonical variants encode alike.
  WeightVariant canonical(const WeightVariant& variant) const;
  /// The sizes of `variant` (streamed: depth step = block depth; else one brick).
  WeightEncoding encode(const WeightVariant& variant) const;
  /// The sizes with an explicit block depth and depth step (0 = whole O), as encode_weights().
  WeightEncoding encode_bricks(WeightTraversal traversal, int ofm_block_depth, int depth_step) const;
  int ofm_depth() const { return o_; }

 private:
  std::vector<std::int16_t> w_;  ///< OHWI, zero point subtracted
  int o_ = 0, kh_ = 1, kw_ = 1, ci_ = 0;
  WeightBlockType type_ = WeightBlockType::Conv;
  int ifm_bits_ = 8;
  WeightAccelerator accel_;
  int dilation_h_ = 1, dilation_w_ = 1;
};

/// Size of the packed bias/scale tensor (weight-encoding.md, "Bias and scale").
using BiasScaleSize = workloads::BiasScaleSize;

/// The bias/scale tensor of a pass with `ofm_depth` channels (depth_step 0 = whole O); throws
/// UserError for arguments out of range (workloads::packed_bias_scale_size computes it).
BiasScaleSize packed_bias_scale_size(int ofm_depth, int cores, int depth_step);

/// Choices for encoding a TFLite operator's weights.
struct OperatorWeightOptions {
  int ofm_block_depth = 8;  ///< OFM depth of the pass's block config
  int depth_step = 0;       ///< 0 = whole O (one brick); the block depth for streamed, DMA'd weights
  WeightAccelerator accelerator;
  /// Apply Vela's first-layer stride-2 rewrite (lowering/graph-rewrites.md) when its conditions hold.
  bool first_layer_rewrite = true;
};

/// The most elements a weight tensor may have (2^26, 64 MiB of int8 weights): the encoder's working
/// copy of them (32-bit values) is then at most 256 MiB, the .tflite reader's copy budget
/// (ReadLimits::max_copied_bytes). A larger one is refused before anything is allocated (real
/// layers have under 2^23).
inline constexpr std::int64_t kMaxWeightElements = std::int64_t{1} << 26;

/// The encoder input for the constant weights of operator `op_index` of subgraph `subgraph`
/// (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV or FULLY_CONNECTED), after Vela's rewrites: DW with
/// multiplier > 1 -> conv, 1x1 conv on a 1x1 IFM -> FC, first-layer stride 2 (docs/design/lowering/).
/// Weights over kMaxWeightElements are a UserError naming the file, the operator and its weights.
WeightEncodingInput operator_weight_input(const Model& model, int subgraph, int op_index,
                                          const OperatorWeightOptions& options);

/// encode_weights(operator_weight_input(...)).
WeightEncoding encode_operator_weights(const Model& model, int subgraph, int op_index,
                                       const OperatorWeightOptions& options);

}  // namespace npumap::tflite
