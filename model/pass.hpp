#pragma once
// A Pass: one NPU operation (a layer's primary op with its fused activation and the DMAs feeding it)
// together with every decision the cycle model needs: shapes, data types, where each tensor lives, its
// layout, the block config, the weight traversal and what is copied to SRAM (docs/pass-format.md).
//
// Pass is a small value type with no heap members, so the mapper can build millions of them and
// evaluate() can read them without allocating. Build one with aggregate / designated initialisers or
// the small helpers below; equality is member-wise (the canonical equality of two passes).

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "arch/arch.hpp"
#include "model/geometry.hpp"

namespace npumap::model {

/// The primary operation of a pass (docs/design/npu-model.md §1.4 names them; the block type follows from it).
enum class OpType : std::uint8_t {
  Conv2DBias,
  DepthwiseConv2DBias,
  TransposeConv2D,  ///< Vela's Conv2DBackpropInputSwitchedBias: ConvolutionMxN with a 2x-upscaled IFM
  FullyConnected,
  MaxPool,
  AvgPool,
  ResizeBilinear,  ///< Pooling with a 2x-upscaled IFM
  ReduceSum,
  Add,
  Sub,
  Mul,
  Maximum,
  Minimum,
  Abs,
  LeakyRelu,
  Shl,         ///< Vela's SHL: binary elementwise (softmax decomposition)
  Shr,         ///< Vela's SHR: binary elementwise
  RescaleAdd,  ///< Vela's RescaleAdd: binary elementwise
  Clz,         ///< Vela's CLZ: unary elementwise
};
inline constexpr int kNumOpTypes = 19;

/// The NPU block type that executes an op (§1.4).
arch::NpuBlockType npu_block_type(OpType op);
/// True for the binary elementwise ops (Add, Sub, Mul, Maximum, Minimum, SHL, SHR, RescaleAdd), which take an ifm2.
bool is_binary_elementwise(OpType op);
/// True for ops whose block type is ElementWise (binary and unary).
bool is_elementwise(OpType op);
/// True for ops that take a weight tensor (Conv, DW, transpose conv, FC).
bool has_weights(OpType op);
/// How the op reads its IFM: the transpose convolution upscales it by zero insertion (Transpose),
/// ResizeBilinear by repeating pixels (Nearest), every other op not at all (§3.2).
Resampling ifm_resampling(OpType op);

/// Fused activation; selects activation_cycles_per_elem (§1.2, §6.2).
enum class Activation : std::uint8_t { None, Relu, Relu6, ReluN1To1, Sigmoid, Tanh, Lut };

/// Element type of a tensor.
enum class DataType : std::uint8_t { Int8, UInt8, Int16, Int32 };
/// Bits per element (8, 16 or 32).
int bits(DataType t);
/// dtype.size_in_bytes() of §4.1: ceil(bits/8), an integer.
int size_in_bytes(DataType t);

/// Feature-map layout (§4.2).
enum class TensorFormat : std::uint8_t { NHWC, NHCWB16 };

/// A tensor shape of rank 0..4, stored inline.
struct Shape {
  std::array<int, 4> dims{};
  int rank = 0;

  /// A shape from a list of at most four dimensions.
  static Shape of(std::initializer_list<int> d);
  /// The shape padded to 4 dimensions with leading ones.
  std::array<int, 4> as_4d() const;
  /// Product of all dimensions (1 for rank 0).
  std::int64_t elements() const;
  /// The last dimension (1 for rank 0).
  int last() const { return rank == 0 ? 1 : dims[rank - 1]; }
  friend bool operator==(const Shape& a, const Shape& b);
};

/// A feature map (IFM, IFM2 or OFM) as docs/pass-format.md describes it: purpose FeatureMap, sub-purpose
/// Standard, element size bits/8, compression scales 1.0.
struct FeatureMap {
  Shape shape;  ///< tensor shape (FC: 2-D [N, C]); the op shape is derived (op_shape())
  DataType dtype = DataType::Int8;
  arch::MemArea mem_area = arch::MemArea::Sram;
  TensorFormat format = TensorFormat::NHWC;
  bool needs_linear_format = true;
  std::optional<float> quant_scale;  ///< quantization.scale_f32; empty means "None"
  /// The op's 4-D view of the tensor when it differs from the tensor shape padded to 4-D (a slice
  /// written at an offset, a reshape absorbed into the op, Vela's swap of a broadcast first operand);
  /// empty: derived from `shape` (Pass::ifm_op_shape()).
  std::optional<std::array<int, 4>> op_shape;
  friend bool operator==(const FeatureMap&, const FeatureMap&) = default;
};

/// A LUT activation's table (purpose LUT, NHWC, linear): a constant in `mem_area` that a DMA copies
/// into SHRAM before the op runs (docs/pass-format.md "lut").
struct Lut {
  Shape shape;  ///< [1, 1, 1, entries]
  DataType dtype = DataType::Int8;
  arch::MemArea mem_area = arch::MemArea::OffChipFlash;
  friend bool operator==(const Lut&, const Lut&) = default;
};

/// Compressed weights (§4.3, docs/pass-format.md "Weights").
struct Weights {
  Shape shape;  ///< HWIO [kh, kw, I, O] (DW [kh, kw, 1, C]); FC: IO [I, O]
  DataType dtype = DataType::Int8;
  arch::MemArea mem_area = arch::MemArea::OffChipFlash;  ///< where the tensor (or the DMA source) lives
  double compression_scale = 1.0;  ///< bandwidth and storage compression scale
  Shape storage_shape;             ///< [1, 1, 1, encoded bytes]
  BlockTraversal traversal = BlockTraversal::Default;
  /// Unknown: read in place. Otherwise the area of the copy the DMA makes (the op's weight tensor).
  arch::MemArea dma_to = arch::MemArea::Unknown;
  bool dma() const { return dma_to != arch::MemArea::Unknown; }
  friend bool operator==(const Weights&, const Weights&) = default;
};

/// The scale/bias tensor of a Conv/DW/FC pass (int32, purpose FeatureMap, NHWC, linear).
struct Bias {
  Shape shape;          ///< [C]
  arch::MemArea mem_area = arch::MemArea::OffChipFlash;
  int element_size_bytes = 0;  ///< 0: 4 bytes from the dtype (while scheduling); 10: packed bias+scale
  Shape storage_shape;         ///< defaults to `shape`
  /// Unknown: read in place. Otherwise the area of the FSBias copy the DMA makes.
  arch::MemArea dma_to = arch::MemArea::Unknown;
  bool dma() const { return dma_to != arch::MemArea::Unknown; }
  friend bool operator==(const Bias&, const Bias&) = default;
};

/// The operator part of a pass.
struct OpDesc {
  OpType type = OpType::Conv2DBias;
  Kernel kernel;  ///< size, stride and dilation; 1x1 for FC and elementwise
  std::optional<PaddingMode> padding;           ///< SAME/VALID; absent for FC and elementwise
  std::optional<Padding> explicit_padding;      ///< (top, left, bottom, right); no effect on results
  Activation activation = Activation::None;
  Resampling resampling = Resampling::None;     ///< IFM upscaling (transpose conv, resize)
  friend bool operator==(const OpDesc&, const OpDesc&) = default;
};


/// One NPU pass and its decisions.
struct Pass {
  OpDesc op;
  FeatureMap ifm;
  std::optional<FeatureMap> ifm2;  ///< binary elementwise only
  FeatureMap ofm;
  /// The primary op's own output when it is not `ofm` (docs/pass-format.md "primary_ofm"): Vela's
  /// 1x1 AvgPool created for a pass of post ops only (a standalone requantisation, a sigmoid) writes a
  /// copy of its input that the post ops then read; its area and element size time the pass (the
  /// minimal command cycles, §6.1), `ofm` still takes the written bytes. Empty: `ofm`.
  std::optional<FeatureMap> primary_ofm;
  std::optional<Weights> weights;  ///< Conv/DW/FC
  std::optional<Bias> bias;        ///< Conv/DW/FC scale tensor
  std::optional<Lut> lut;          ///< the table of a LUT activation, DMA'd to SHRAM
  std::array<int, 4> block_config{};  ///< Vela's index order [ofm_h, ofm_w, ifm_d, ofm_d] (§11.1)
  bool has_npu_predecessor = true;  ///< false: DMA source reads add to Npu cycles (§11.11)
  bool force_outputs_to_fast_storage = false;
  /// The WeightStream rewrite (ChangeTensorSubPurpose weights -> DoubleBuffer, param = ofm depth), if any.
  std::optional<int> weights_double_buffer_depth;

  /// The op's 4-D IFM / IFM2 / OFM shapes: the feature map's op_shape when given, else FC: [N, 1, 1, C]
  /// and others: the tensor shape padded to 4-D.
  std::array<int, 4> ifm_op_shape() const;
  std::array<int, 4> ifm2_op_shape() const;
  std::array<int, 4> ofm_op_shape() const;
  /// The output the timing is taken from: primary_ofm when given, else ofm.
  const FeatureMap& timing_ofm() const { return primary_ofm ? *primary_ofm : ofm; }
  friend bool operator==(const Pass&, const Pass&) = default;
};

/// Names as they appear in the pass JSON; the parse functions return false for an unknown name.
std::string_view op_type_name(OpType t);
bool parse_op_type(std::string_view s, OpType& out);
std::string_view activation_name(Activation a);
bool parse_activation(std::string_view s, Activation& out);
std::string_view dtype_name(DataType t);
bool parse_dtype(std::string_view s, DataType& out);
std::string_view format_name(TensorFormat f);
bool parse_format(std::string_view s, TensorFormat& out);
std::string_view traversal_name(BlockTraversal t);
bool parse_traversal(std::string_view s, BlockTraversal& out);

}  // namespace npumap::model
