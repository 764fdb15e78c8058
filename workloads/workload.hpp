#pragma once
// The workload: a DAG of layers (Einsums) joined by named tensors, as loaded from a workload YAML
// file (docs/workload-format.md). Everything downstream (the mapper's jobs, the cycle model's
// passes) reads this structure; it is immutable once load_workload() returns.
//
// Shapes are NHWC. A tensor keeps the dimensions as written (`dims`, rank 1 to 4) and its 4-D NHWC
// view (`shape`): [C] -> (1,1,1,C), [N,C] -> (N,1,1,C) (the fully-connected convention of
// docs/design/npu-model.md §7.3), [H,W,C] -> (1,H,W,C). A layer separately records the shapes its NPU operation
// sees (`ifm_shape`, `ifm2_shape`, `ofm_shape`), which differ from the tensor views only for
// fully_connected and matmul (see LayerDims).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>


#include "arch/arch.hpp"
#include "common/user_error.hpp"

namespace npumap::workloads {

/// Operation kinds of the format; each runs as one NPU operation (npu_block_type()).
enum class OpKind : std::uint8_t {
  Conv2D,
  DepthwiseConv2D,
  MaxPool,
  AvgPool,
  FullyConnected,
  MatMul,
  Add,
  Sub,
  Mul,
  Maximum,
  Minimum,
  Abs,
  LeakyRelu,
  Softmax,
  ReduceSum,
  TransposeConv2D,  ///< stride-2 transpose convolution: the IFM upscaled 2x by zero insertion, then a stride-1 conv
  ResizeBilinear,   ///< 2x upscale (a pooling pass with a 2x2 kernel over the upscaled IFM)
  Shl,         ///< binary elementwise shift left
  Shr,         ///< binary elementwise shift right
  RescaleAdd,  ///< binary elementwise add of a rescaled operand
  Clz,         ///< unary elementwise count leading zeros
  Activation,  ///< a standalone activation (relu, sigmoid, ...), run as a 1x1 average-pooling pass
  Cpu,         ///< an operator the NPU does not run: it runs on the host CPU, is not costed, and its
               ///< tensors stay in the arena (e.g. a TFLite operator Vela leaves to the CPU)
};

/// Element data types of tensors.
enum class DataType : std::uint8_t { Int8, UInt8, Int16, Int32 };

/// Activation functions, fused into a layer or standalone (OpKind::Activation).
enum class Activation : std::uint8_t { None, Relu, Relu6, ReluN1To1, Sigmoid, Tanh, Lut };

/// Padding of convolutions and pooling: SAME, VALID or explicit (top, left, bottom, right).
enum class PaddingMode : std::uint8_t { Same, Valid, Explicit };

/// The order in which a layer's encoded weights are fed to the NPU (the block traversal,
/// docs/design/npu-model.md §7.2): convolutions depth-first or part-kernel-first, depthwise
/// convolutions their own order; fully-connected weights are depth-first.
enum class WeightTraversal : std::uint8_t { DepthFirst, PartKernelFirst, DepthWise };

/// One encoded size of a layer's weights: how many bytes Vela's weight encoder makes of them for a
/// traversal and the OFM depths of the block configs listed, either in one brick (weights read in
/// place or copied whole) or streamed one block depth at a time (each brick with its own header and
/// padding). The importer computes them from the real weights (docs/design/tflite-import.md).
struct WeightEncodingEntry {
  WeightTraversal traversal = WeightTraversal::DepthFirst;
  bool streamed = false;
  /// OFM block depths this size holds for, increasing; a depth at least the layer's OFM depth is
  /// listed as that depth (a deeper block encodes as the whole depth).
  std::vector<std::int64_t> block_depths;
  std::int64_t bytes = 0;    ///< encoded bytes, all bricks: the flash (or DRAM) footprint
  double scale = 1.0;        ///< mean over bricks of bytes / raw bytes of a full brick: the read bytes per raw byte
  double worst_scale = 1.0;  ///< the largest brick's ratio: what a double buffer holds per raw byte
  friend bool operator==(const WeightEncodingEntry&, const WeightEncodingEntry&) = default;
};

/// The lookup table a LUT activation loads into SHRAM (a constant in permanent storage).
struct LutTable {
  std::int64_t entries = 256;
  DataType dtype = DataType::Int8;
  friend bool operator==(const LutTable&, const LutTable&) = default;
};

/// A 4-D NHWC shape.
struct Shape {
  std::int64_t n = 1;
  std::int64_t h = 1;
  std::int64_t w = 1;
  std::int64_t c = 1;
  friend bool operator==(const Shape&, const Shape&) = default;
  /// n*h*w*c (the loader has checked that it fits in 64 bits).
  std::int64_t elements() const { return n * h * w * c; }
};

/// Explicit padding in Vela's order (top, left, bottom, right).
struct Padding {
  std::int64_t top = 0;
  std::int64_t left = 0;
  std::int64_t bottom = 0;
  std::int64_t right = 0;
  friend bool operator==(const Padding&, const Padding&) = default;
};

/// One named tensor: a network input, a constant, the output of one layer, or a tensor declared under
/// `tensors:` that one or more layers write parts of (a concatenation, a padded copy).
struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> dims;  ///< as written (rank 1..4)
  Shape shape;                     ///< NHWC view of dims
  DataType dtype = DataType::Int8;
  bool is_network_input = false;
  bool is_constant = false;        ///< declared under `constants:`: einsum weights, or a constant operand that
                                   ///< stays in permanent storage (flash) and takes no arena space
  bool is_declared = false;        ///< declared under `tensors:`, written by the layers in `writers`
  double quant_scale = 1.0;        ///< every tensor counts as quantized; 1.0 unless the file says otherwise
  int producer = -1;               ///< layer index (the first writer), -1 for inputs and constants
  std::vector<int> writers;        ///< every layer writing the tensor, in file order (producer first)
  std::vector<int> consumers;      ///< layer indices in file order, each once
  common::SourceLocation location;         ///< where the tensor is declared or produced
  /// A produced tensor no layer reads.
  bool is_network_output() const { return producer >= 0 && consumers.empty(); }
};

/// Sizes of a fully_connected or matmul layer: OFM[batch][m][n] = sum_k A[batch][m][k] * B[batch][k][n].
struct MatmulDims {
  std::int64_t batch = 1;
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
};

/// One layer: an Einsum that runs as one NPU operation.
struct Layer {
  std::string name;
  OpKind kind = OpKind::Conv2D;
  std::vector<int> inputs;   ///< feature-map tensor indices: ifm, then ifm2 (binary elementwise, matmul)
  int output = -1;           ///< tensor index of the OFM
  /// The shapes the operation reads, as written under `input_shapes` (empty: the tensors' own): a
  /// reshaped view of the whole tensor or a part of it (a slice).
  std::vector<std::vector<std::int64_t>> input_views;
  std::vector<std::int64_t> output_dims;     ///< `output_shape` as written: the tensor, or the part of a
                                             ///< declared tensor this layer writes
  /// `operands_swapped`: a binary elementwise layer whose inputs are written in the NPU's order, the
  /// reverse of the source graph's (whose first operand is the broadcast or constant one).
  bool operands_swapped = false;
  int weight_tensor = -1;    ///< declared constant used as fully_connected weights (einsum form), else -1

  Shape ifm_shape;           ///< NHWC shapes as the NPU operation sees them
  std::optional<Shape> ifm2_shape;
  Shape ofm_shape;

  std::int64_t kernel_h = 1;
  std::int64_t kernel_w = 1;
  std::int64_t stride_y = 1;
  std::int64_t stride_x = 1;
  std::int64_t dilation_y = 1;
  std::int64_t dilation_x = 1;
  PaddingMode padding_mode = PaddingMode::Valid;
  Padding padding;           ///< the explicit values; for SAME the values Vela computes (docs/design/npu-model.md §3.5)

  Activation activation = Activation::None;  ///< fused, or the function of a standalone activation
  std::vector<std::int64_t> weight_shape;     ///< conv [kh,kw,I,O], depthwise [kh,kw,1,C], fc [I,O]; else empty
  DataType weight_dtype = DataType::Int8;
  bool has_bias = false;
  double weight_compression = 0.625;         ///< compressed / raw weight bytes
  /// The weights' encoded sizes per traversal, block depth and placement (empty: every mapping
  /// uses `weight_compression`; a mapping whose variant is not listed does too).
  std::vector<WeightEncodingEntry> weight_encodings;
  /// The table a LUT-using layer loads (uses_lut()); set by the loader, from `lut:` or the default
  /// (lut_table_default()).
  std::optional<LutTable> lut;
  /// avg_pool only (`primary_ofm: input_copy`): Vela's 1x1 AvgPool created for a pass of post ops
  /// only (a standalone requantisation); its own output, a copy of its input in the feature-map
  /// storage area, times the pass (docs/pass-format.md "primary_ofm").
  bool primary_ofm_input_copy = false;
  bool transpose_b = false;                  ///< matmul: B is stored as [.., n, k]
  std::optional<MatmulDims> matmul;          ///< fully_connected and matmul only

  std::string cpu_operator;                  ///< cpu layers: the operator that runs on the CPU (e.g. "LSTM")
  std::string cpu_reason;                    ///< cpu layers: why the NPU does not run it (may be empty)

  std::string einsum;                        ///< the Einsum text if the layer was written that way
  std::vector<std::pair<std::string, std::int64_t>> ranks;  ///< its rank sizes, in file order

  std::int64_t macs = 0;                     ///< multiply-accumulates (see macs())
  common::SourceLocation location;                   ///< the layer's entry in the file

  int ifm() const { return inputs.empty() ? -1 : inputs[0]; }
  int ifm2() const { return inputs.size() > 1 ? inputs[1] : -1; }
};

struct Workload;

/// Vela 2.1's NPU subgraphs of a workload: extract_npu_subgraphs.py cuts its pass order (vela_order.hpp)
/// into runs of NPU passes between CPU ones. Returns per layer (file order) the index of its run, -1
/// for a CPU layer. Needs `topological_order`.
std::vector<int> vela_npu_subgraphs(const Workload& w);

/// A loaded, checked network.
struct Workload {
  std::string name;
  std::string source_file;
  std::vector<Layer> layers;          ///< in file order
  std::vector<TensorInfo> tensors;    ///< inputs and constants in file order, then layer outputs
  std::vector<int> topological_order;  ///< layer indices; ties broken by file order
  /// Per layer (file order): the NPU subgraph it belongs to in Vela's pass order (vela_npu_subgraphs),
  /// -1 for a CPU layer; empty where the workload was not built by the loader.
  std::vector<int> npu_subgraph;

  /// Index of a tensor or layer by name, -1 if none.
  int tensor_index(std::string_view name) const;
  int layer_index(std::string_view name) const;
  /// The layer producing tensor `t` (-1 for inputs and constants) and the layers reading it.
  int producer(int t) const { return tensors.at(static_cast<std::size_t>(t)).producer; }
  const std::vector<int>& consumers(int t) const { return tensors.at(static_cast<std::size_t>(t)).consumers; }
  /// Sum of macs over all layers.
  std::int64_t total_macs() const;
};

/// YAML spellings.
std::string_view op_kind_name(OpKind kind);
std::string_view data_type_name(DataType t);
std::string_view activation_name(Activation a);
/// Spelling of a layer's op: the activation's name for standalone activations, else op_kind_name.
std::string op_name(const Layer& layer);

/// Bits per element: 8, 8, 16, 32.
int data_type_bits(DataType t);
/// Bytes per element.
inline int data_type_bytes(DataType t) { return data_type_bits(t) / 8; }

/// The NPU block type that runs a layer (docs/design/npu-model.md §1.4).
arch::NpuBlockType npu_block_type(OpKind kind);
/// True for add, sub, mul, maximum, minimum, shl, shr, rescale_add.
bool is_binary_elementwise(OpKind kind);
/// True for layers with weights of their own (conv2d, depthwise_conv2d, transpose_conv2d, fully_connected).
bool has_weights(OpKind kind);
/// True when the layer needs a lookup table in SHRAM (sigmoid, tanh, LUT activations, softmax).
bool uses_lut(const Layer& layer);
/// The table a LUT-using layer loads unless `lut:` says otherwise, after Vela's tables: with an
/// 8-bit input 256 entries, int8 (int32 for softmax, Vela's exp table); with a 16-bit input 512
/// int32 entries.
LutTable lut_table_default(const Layer& layer, DataType input_dtype);
/// YAML spellings of a weight traversal ("depth_first", "part_kernel_first", "depthwise").
std::string_view weight_traversal_name(WeightTraversal t);

/// MACs by the convention of docs/design/npu-model.md: conv N*OH*OW*OC*KH*KW*IC, depthwise N*OH*OW*C*KH*KW,
/// fully_connected and matmul batch*M*N*K, everything else 0. Same value as Layer::macs.
std::int64_t macs(const Layer& layer);
/// Elements and bytes of a tensor.
std::int64_t tensor_bytes(const TensorInfo& tensor);
/// Raw weight bytes of a layer (its own weights, or its constant weight tensor); 0 without weights.
std::int64_t weight_bytes(const Workload& w, const Layer& layer);
/// Estimated compressed weight bytes: ceil(raw * weight_compression).
std::int64_t compressed_weight_bytes(const Workload& w, const Layer& layer);

/// "[1,56,56,64]".
std::string shape_string(const Shape& s);
std::string dims_string(const std::vector<std::int64_t>& dims);
/// NHWC view of written dims (rank 1..4).
Shape nhwc_view(const std::vector<std::int64_t>& dims);


}  // namespace npumap::workloads
