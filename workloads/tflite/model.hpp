#pragma once
// Plain value types of a TensorFlow Lite model as read from a `.tflite` flatbuffer by reader.hpp:
// Model -> Subgraph -> Tensor / Operator, plus Buffer, OperatorCode, the enums of the format and
// the parsed builtin options of the operators a Vela-like lowering needs.
// Field meanings follow the TFLite flatbuffer schema ("TFL3", Model.version 3).
// Entry points: the types below, operator_name(), operator_from_name(), tensor_type_name(),
// tensor_type_bits().

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace npumap::tflite {

/// X-macro list of every BuiltinOperator of the schema: X(NAME, value), values 0..209.
#define NPUMAP_TFLITE_BUILTIN_OPERATORS(X)                                                            \
  X(ADD, 0) X(AVERAGE_POOL_2D, 1) X(CONCATENATION, 2) X(CONV_2D, 3) X(DEPTHWISE_CONV_2D, 4)            \
  X(DEPTH_TO_SPACE, 5) X(DEQUANTIZE, 6) X(EMBEDDING_LOOKUP, 7) X(FLOOR, 8) X(FULLY_CONNECTED, 9)       \
  X(HASHTABLE_LOOKUP, 10) X(L2_NORMALIZATION, 11) X(L2_POOL_2D, 12)                                   \
  X(LOCAL_RESPONSE_NORMALIZATION, 13) X(LOGISTIC, 14) X(LSH_PROJECTION, 15) X(LSTM, 16)                \
  X(MAX_POOL_2D, 17) X(MUL, 18) X(RELU, 19) X(RELU_N1_TO_1, 20) X(RELU6, 21) X(RESHAPE, 22)            \
  X(RESIZE_BILINEAR, 23) X(RNN, 24) X(SOFTMAX, 25) X(SPACE_TO_DEPTH, 26) X(SVDF, 27) X(TANH, 28)       \
  X(CONCAT_EMBEDDINGS, 29) X(SKIP_GRAM, 30) X(CALL, 31) X(CUSTOM, 32) X(EMBEDDING_LOOKUP_SPARSE, 33)   \
  X(PAD, 34) X(UNIDIRECTIONAL_SEQUENCE_RNN, 35) X(GATHER, 36) X(BATCH_TO_SPACE_ND, 37)                 \
  X(SPACE_TO_BATCH_ND, 38) X(TRANSPOSE, 39) X(MEAN, 40) X(SUB, 41) X(DIV, 42) X(SQUEEZE, 43)           \
  X(UNIDIRECTIONAL_SEQUENCE_LSTM, 44) X(STRIDED_SLICE, 45) X(BIDIRECTIONAL_SEQUENCE_RNN, 46)           \
  X(EXP, 47) X(TOPK_V2, 48) X(SPLIT, 49) X(LOG_SOFTMAX, 50) X(DELEGATE, 51)                            \
  X(BIDIRECTIONAL_SEQUENCE_LSTM, 52) X(CAST, 53) X(PRELU, 54) X(MAXIMUM, 55) X(ARG_MAX, 56)            \
  X(MINIMUM, 57) X(LESS, 58) X(NEG, 59) X(PADV2, 60) X(GREATER, 61) X(GREATER_EQUAL, 62)               \
  X(LESS_EQUAL, 63) X(SELECT, 64) X(SLICE, 65) X(SIN, 66) X(TRANSPOSE_CONV, 67)                        \
  X(SPARSE_TO_DENSE, 68) X(TILE, 69) X(EXPAND_DIMS, 70) X(EQUAL, 71) X(NOT_EQUAL, 72) X(LOG, 73)       \
  X(SUM, 74) X(SQRT, 75) X(RSQRT, 76) X(SHAPE, 77) X(POW, 78) X(ARG_MIN, 79) X(FAKE_QUANT, 80)         \
  X(REDUCE_PROD, 81) X(REDUCE_MAX, 82) X(PACK, 83) X(LOGICAL_OR, 84) X(ONE_HOT, 85)                    \
  X(LOGICAL_AND, 86) X(LOGICAL_NOT, 87) X(UNPACK, 88) X(REDUCE_MIN, 89) X(FLOOR_DIV, 90)               \
  X(REDUCE_ANY, 91) X(SQUARE, 92) X(ZEROS_LIKE, 93) X(FILL, 94) X(FLOOR_MOD, 95) X(RANGE, 96)          \
  X(RESIZE_NEAREST_NEIGHBOR, 97) X(LEAKY_RELU, 98) X(SQUARED_DIFFERENCE, 99) X(MIRROR_PAD, 100)        \
  X(ABS, 101) X(SPLIT_V, 102) X(UNIQUE, 103) X(CEIL, 104) X(REVERSE_V2, 105) X(ADD_N, 106)             \
  X(GATHER_ND, 107) X(COS, 108) X(WHERE, 109) X(RANK, 110) X(ELU, 111) X(REVERSE_SEQUENCE, 112)        \
  X(MATRIX_DIAG, 113) X(QUANTIZE, 114) X(MATRIX_SET_DIAG, 115) X(ROUND, 116) X(HARD_SWISH, 117)        \
  X(IF, 118) X(WHILE, 119) X(NON_MAX_SUPPRESSION_V4, 120) X(NON_MAX_SUPPRESSION_V5, 121)               \
  X(SCATTER_ND, 122) X(SELECT_V2, 123) X(DENSIFY, 124) X(SEGMENT_SUM, 125) X(BATCH_MATMUL, 126)        \
  X(PLACEHOLDER_FOR_GREATER_OP_CODES, 127) X(CUMSUM, 128) X(CALL_ONCE, 129) X(BROADCAST_TO, 130)       \
  X(RFFT2D, 131) X(CONV_3D, 132) X(IMAG, 133) X(REAL, 134) X(COMPLEX_ABS, 135) X(HASHTABLE, 136)       \
  X(HASHTABLE_FIND, 137) X(HASHTABLE_IMPORT, 138) X(HASHTABLE_SIZE, 139) X(REDUCE_ALL, 140)            \
  X(CONV_3D_TRANSPOSE, 141) X(VAR_HANDLE, 142) X(READ_VARIABLE, 143) X(ASSIGN_VARIABLE, 144)           \
  X(BROADCAST_ARGS, 145) X(RANDOM_STANDARD_NORMAL, 146) X(BUCKETIZE, 147) X(RANDOM_UNIFORM, 148)       \
  X(MULTINOMIAL, 149) X(GELU, 150) X(DYNAMIC_UPDATE_SLICE, 151) X(RELU_0_TO_1, 152)                    \
  X(UNSORTED_SEGMENT_PROD, 153) X(UNSORTED_SEGMENT_MAX, 154) X(UNSORTED_SEGMENT_SUM, 155)              \
  X(ATAN2, 156) X(UNSORTED_SEGMENT_MIN, 157) X(SIGN, 158) X(BITCAST, 159) X(BITWISE_XOR, 160)          \
  X(RIGHT_SHIFT, 161) X(STABLEHLO_LOGISTIC, 162) X(STABLEHLO_ADD, 163) X(STABLEHLO_DIVIDE, 164)        \
  X(STABLEHLO_MULTIPLY, 165) X(STABLEHLO_MAXIMUM, 166) X(STABLEHLO_RESHAPE, 167)                       \
  X(STABLEHLO_CLAMP, 168) X(STABLEHLO_CONCATENATE, 169) X(STABLEHLO_BROADCAST_IN_DIM, 170)             \
  X(STABLEHLO_CONVOLUTION, 171) X(STABLEHLO_SLICE, 172) X(STABLEHLO_CUSTOM_CALL, 173)                  \
  X(STABLEHLO_REDUCE, 174) X(STABLEHLO_ABS, 175) X(STABLEHLO_AND, 176) X(STABLEHLO_COSINE, 177)        \
  X(STABLEHLO_EXPONENTIAL, 178) X(STABLEHLO_FLOOR, 179) X(STABLEHLO_LOG, 180)                          \
  X(STABLEHLO_MINIMUM, 181) X(STABLEHLO_NEGATE, 182) X(STABLEHLO_OR, 183) X(STABLEHLO_POWER, 184)      \
  X(STABLEHLO_REMAINDER, 185) X(STABLEHLO_RSQRT, 186) X(STABLEHLO_SELECT, 187)                         \
  X(STABLEHLO_SUBTRACT, 188) X(STABLEHLO_TANH, 189) X(STABLEHLO_SCATTER, 190)                          \
  X(STABLEHLO_COMPARE, 191) X(STABLEHLO_CONVERT, 192) X(STABLEHLO_DYNAMIC_SLICE, 193)                  \
  X(STABLEHLO_DYNAMIC_UPDATE_SLICE, 194) X(STABLEHLO_PAD, 195) X(STABLEHLO_IOTA, 196)                  \
  X(STABLEHLO_DOT_GENERAL, 197) X(STABLEHLO_REDUCE_WINDOW, 198) X(STABLEHLO_SORT, 199)                 \
  X(STABLEHLO_WHILE, 200) X(STABLEHLO_GATHER, 201) X(STABLEHLO_TRANSPOSE, 202) X(DILATE, 203)          \
  X(STABLEHLO_RNG_BIT_GENERATOR, 204) X(REDUCE_WINDOW, 205) X(STABLEHLO_COMPOSITE, 206)                \
  X(STABLEHLO_SHIFT_LEFT, 207) X(STABLEHLO_CBRT, 208) X(STABLEHLO_CASE, 209)

/// TFLite BuiltinOperator (int32 in the file). Enumerators keep the schema's spelling.
enum class BuiltinOperator : std::int32_t {
#define NPUMAP_TFLITE_ENUMERATOR(name, value) name = value,
  NPUMAP_TFLITE_BUILTIN_OPERATORS(NPUMAP_TFLITE_ENUMERATOR)
#undef NPUMAP_TFLITE_ENUMERATOR
};

/// The largest BuiltinOperator value this reader knows; larger codes are rejected.
inline constexpr std::int32_t kMaxBuiltinOperator = 209;

/// Schema name of a builtin operator code ("CONV_2D"); "UNKNOWN" for codes outside 0..209.
std::string_view operator_name(std::int32_t code);
/// Schema name of a builtin operator ("CONV_2D").
std::string_view operator_name(BuiltinOperator op);
/// The operator with schema name `name` ("CONV_2D"), if any.
std::optional<BuiltinOperator> operator_from_name(std::string_view name);

/// TFLite TensorType (byte in the file).
enum class TensorType : std::int8_t {
  FLOAT32 = 0, FLOAT16 = 1, INT32 = 2, UINT8 = 3, INT64 = 4, STRING = 5, BOOL = 6, INT16 = 7,
  COMPLEX64 = 8, INT8 = 9, FLOAT64 = 10, COMPLEX128 = 11, UINT64 = 12, RESOURCE = 13, VARIANT = 14,
  UINT32 = 15, UINT16 = 16, INT4 = 17, BFLOAT16 = 18, INT2 = 19, UINT4 = 20, FLOAT8_E4M3FN = 21,
  FLOAT8_E5M2 = 22,
};

/// The largest TensorType value this reader knows; larger values are rejected.
inline constexpr std::int8_t kMaxTensorType = 22;

/// Lower-case name of a tensor type ("int8", "float32", "float8_e4m3fn"); "unknown" otherwise.
std::string_view tensor_type_name(TensorType type);
/// Bits per element (8 for int8, 4 for int4); 0 for types without a fixed size (string, resource, variant).
int tensor_type_bits(TensorType type);

/// Padding (byte): SAME 0, VALID 1.
enum class Padding : std::uint8_t { SAME = 0, VALID = 1 };
/// ActivationFunctionType (byte) fused into an operator.
enum class Activation : std::uint8_t { NONE = 0, RELU = 1, RELU_N1_TO_1 = 2, RELU6 = 3, TANH = 4, SIGN_BIT = 5 };
/// FullyConnectedOptionsWeightsFormat (byte).
enum class WeightsFormat : std::uint8_t { DEFAULT = 0, SHUFFLED4x16INT8 = 1 };

// ---- Parsed builtin options (union BuiltinOptions). Defaults are the schema's defaults. ----

/// CONV_2D (Conv2DOptions, union member 1).
struct Conv2DOptions {
  Padding padding = Padding::SAME;
  std::int32_t stride_w = 0, stride_h = 0;
  Activation activation = Activation::NONE;
  std::int32_t dilation_w = 1, dilation_h = 1;
};
/// DEPTHWISE_CONV_2D (DepthwiseConv2DOptions, member 2).
struct DepthwiseConv2DOptions {
  Padding padding = Padding::SAME;
  std::int32_t stride_w = 0, stride_h = 0;
  std::int32_t depth_multiplier = 0;
  Activation activation = Activation::NONE;
  std::int32_t dilation_w = 1, dilation_h = 1;
};
/// AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D (Pool2DOptions, member 5).
struct Pool2DOptions {
  Padding padding = Padding::SAME;
  std::int32_t stride_w = 0, stride_h = 0;
  std::int32_t filter_w = 0, filter_h = 0;
  Activation activation = Activation::NONE;
};
/// FULLY_CONNECTED (FullyConnectedOptions, member 8).
struct FullyConnectedOptions {
  Activation activation = Activation::NONE;
  WeightsFormat weights_format = WeightsFormat::DEFAULT;
  bool keep_num_dims = false;
  bool asymmetric_quantize_inputs = false;
};
/// ADD (AddOptions, 11), SUB (SubOptions, 28), MUL (MulOptions, 21); pot_scale_int16 is not in MulOptions.
struct ElementwiseOptions {
  Activation activation = Activation::NONE;
  bool pot_scale_int16 = true;
};
/// CONCATENATION (ConcatenationOptions, member 10).
struct ConcatenationOptions {
  std::int32_t axis = 0;
  Activation activation = Activation::NONE;
};
/// RESHAPE (ReshapeOptions, member 17). Without new_shape the shape comes from input 1.
struct ReshapeOptions {
  std::optional<std::vector<std::int32_t>> new_shape;
};
/// SOFTMAX (SoftmaxOptions, member 9).
struct SoftmaxOptions {
  float beta = 0.0f;
};
/// PAD (PadOptions, 22) and PADV2 (PadV2Options, 43): empty; the paddings are input 1.
struct PadOptions {};
/// STRIDED_SLICE (StridedSliceOptions, member 32).
struct StridedSliceOptions {
  std::int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};
/// MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY, REDUCE_ALL (ReducerOptions, member 27).
struct ReducerOptions {
  bool keep_dims = false;
};
/// RESIZE_BILINEAR (ResizeBilinearOptions, 15) and RESIZE_NEAREST_NEIGHBOR (ResizeNearestNeighborOptions, 74).
struct ResizeOptions {
  bool align_corners = false;
  bool half_pixel_centers = false;
};
/// SPLIT (SplitOptions, 35) and SPLIT_V (SplitVOptions, 79).
struct SplitOptions {
  std::int32_t num_splits = 0;
};
/// LEAKY_RELU (LeakyReluOptions, member 75).
struct LeakyReluOptions {
  float alpha = 0.0f;
};
/// TRANSPOSE_CONV (TransposeConvOptions, member 49).
struct TransposeConvOptions {
  Padding padding = Padding::SAME;
  std::int32_t stride_w = 0, stride_h = 0;
  Activation activation = Activation::NONE;
};
/// SQUEEZE (SqueezeOptions, member 30). Empty squeeze_dims = every size-1 dimension.
struct SqueezeOptions {
  std::vector<std::int32_t> squeeze_dims;
};
/// An operator this reader does not parse options for; `options_type` is the union member in the
/// file (0 = none). Its options table is not read.
struct UnparsedOptions {
  std::uint8_t options_type = 0;
};

/// The parsed builtin options of one operator.
using BuiltinOptions =
    std::variant<UnparsedOptions, Conv2DOptions, DepthwiseConv2DOptions, Pool2DOptions, FullyConnectedOptions,
                 ElementwiseOptions, ConcatenationOptions, ReshapeOptions, SoftmaxOptions, PadOptions,
                 StridedSliceOptions, ReducerOptions, ResizeOptions, SplitOptions, LeakyReluOptions,
                 TransposeConvOptions, SqueezeOptions>;

// ---- Model structure ----

/// Quantization of a tensor: per-tensor when scale has one entry, per-channel along
/// quantized_dimension when it has more; empty scale = not quantized.
struct Quantization {
  std::vector<float> scale;
  std::vector<std::int64_t> zero_point;
  std::int32_t quantized_dimension = 0;
  std::vector<float> min, max;
  std::uint8_t details_type = 0;  ///< QuantizationDetails union member (0 = none; custom details are not read)

  bool quantized() const { return !scale.empty(); }
  bool per_channel() const { return scale.size() > 1; }
};

/// One tensor of a subgraph.
struct Tensor {
  std::string name;
  std::vector<std::int32_t> shape;            ///< every dimension > 0; [] = scalar (or unknown rank)
  std::vector<std::int32_t> shape_signature;  ///< empty when absent; -1 = dynamic dimension
  bool has_rank = false;
  TensorType type = TensorType::FLOAT32;
  std::uint32_t buffer = 0;  ///< index into Model::buffers; 0 = no data
  Quantization quantization;
  bool is_variable = false;
  bool is_sparse = false;  ///< has SparsityParameters (its buffer holds compressed data; not decoded)

  /// Product of the dimensions (1 for a scalar).
  std::int64_t element_count() const;
};

/// One operator; tensor indices are into the owning Subgraph::tensors, -1 = optional tensor absent.
struct Operator {
  std::uint32_t opcode_index = 0;  ///< index into Model::operator_codes
  BuiltinOperator code = BuiltinOperator::ADD;  ///< copied from the operator code, for convenience
  std::vector<std::int32_t> inputs;
  std::vector<std::int32_t> outputs;
  std::vector<std::int32_t> intermediates;
  std::uint8_t builtin_options_type = 0;    ///< BuiltinOptions union member in the file
  std::uint8_t builtin_options_2_type = 0;  ///< BuiltinOptions2 union member (not parsed)
  BuiltinOptions options;
  std::span<const std::uint8_t> custom_options;  ///< into Model::bytes (inline or large_custom_options)
};

/// One subgraph; operators are in execution order.
struct Subgraph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<std::int32_t> inputs;
  std::vector<std::int32_t> outputs;
  std::vector<Operator> operators;
};

/// One entry of Model::buffers. `data` points into Model::bytes (inline data vector, or the range
/// [offset, offset + size) of the file for buffers stored outside the flatbuffer).
struct Buffer {
  std::span<const std::uint8_t> data;
  std::uint64_t offset = 0;  ///< > 1 means the data is outside the flatbuffer
  std::uint64_t size = 0;
  bool external() const { return offset > 1; }
};

/// One entry of Model::operator_codes.
struct OperatorCode {
  BuiltinOperator builtin_code = BuiltinOperator::ADD;  ///< max(deprecated_builtin_code, builtin_code)
  std::string custom_code;                              ///< for CUSTOM, e.g. "ethos-u"
  std::int32_t version = 1;
};

/// One entry of Model::metadata.
struct Metadata {
  std::string name;
  std::uint32_t buffer = 0;
};

/// A whole model. Copies share `bytes`, so every span stays valid as long as any copy lives.
struct Model {
  std::string name;  ///< file name used in error messages
  std::uint32_t version = 0;
  std::string description;
  std::vector<OperatorCode> operator_codes;
  std::vector<Subgraph> subgraphs;
  std::vector<Buffer> buffers;
  std::vector<Metadata> metadata;
  std::shared_ptr<const std::string> bytes;  ///< the file's bytes; every span points into them

  /// The operator code of `op`.
  const OperatorCode& opcode(const Operator& op) const { return operator_codes.at(op.opcode_index); }
  /// The constant data of `t` (empty for activations).
  std::span<const std::uint8_t> tensor_data(const Tensor& t) const {
    return t.buffer < buffers.size() ? buffers[t.buffer].data : std::span<const std::uint8_t>{};
  }
};

}  // namespace npumap::tflite
