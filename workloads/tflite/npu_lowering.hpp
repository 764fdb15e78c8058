#pragma once
// Vela-faithful front half of the TFLite importer: decides, as Arm's Vela 2.1 (commit 64556f32) does,
// which operators of a read .tflite Model run on the Ethos-U NPU and which fall back to the CPU (with
// Vela's printed reason), then applies Vela's graph rewrites and pass packing and returns the NPU
// passes as plain values. The rules, one page per family, and the order of the steps:
// docs/design/lowering/README.md; the implementation: workloads/tflite/lowering/ (one file per
// operator family; lower_for_npu.cpp runs the steps).
//
// Entry point: lower_for_npu(model, options) -> NpuGraph; vela_op_type_name() and friends name the
// enums as Vela prints them. NpuGraph keeps a tensor table of the lowered graph (producers and
// consumers by pass or CPU op) so a later step can build the mapper's workload DAG. Not done here:
// weight encoding (weight_encoding.hpp), DMA insertion, scheduling (block configs, cascades), and
// Vela's tensor renaming at NPU subgraph boundaries ("<name>_npu" / "<name>_cpu" clones). Bad or
// unsupported input throws npumap::common::UserError with a one-line message naming the file, the
// operator and the field; an inconsistency of the lowering itself is an internal error
// (std::logic_error "internal error: ..."). Every real model of the shared set lowers.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/tflite/model.hpp"

namespace npumap::tflite {

/// X-macro of every op type Vela 2.1 can emit as an NPU op (the `ops` names of the reference records).
#define NPUMAP_VELA_OP_TYPES(X)                                                                         \
  X(Conv2DBias) X(DepthwiseConv2DBias) X(FullyConnected) X(Conv2DBackpropInputSwitchedBias) X(AvgPool) \
  X(MaxPool) X(ReduceSum) X(ResizeBilinear) X(Add) X(Sub) X(Mul) X(Maximum) X(Minimum) X(SHL) X(SHR)    \
  X(RescaleAdd) X(Abs) X(CLZ) X(LeakyRelu) X(Sigmoid) X(Tanh) X(Quantize) X(Relu) X(Relu6)              \
  X(ReluN1To1) X(Clip)

/// A Vela-internal NPU op type (primary op of a pass, or a post op packed with it).
enum class VelaOpType : std::uint8_t {
#define NPUMAP_VELA_ENUMERATOR(name) name,
  NPUMAP_VELA_OP_TYPES(NPUMAP_VELA_ENUMERATOR)
#undef NPUMAP_VELA_ENUMERATOR
};
/// Vela's spelling of an op type ("Conv2DBias").
std::string_view vela_op_type_name(VelaOpType type);

/// NPU block type of a pass (Vela's NpuBlockType).
enum class NpuBlockType : std::uint8_t {
  Default, ConvolutionMxN, VectorProduct, Pooling, ConvolutionDepthWise, ElementWise, ReduceSum
};
/// Vela's spelling ("ConvolutionMxN").
std::string_view npu_block_type_name(NpuBlockType type);

/// Activation applied by the NPU at the end of a pass.
enum class NpuActivation : std::uint8_t { None, Relu, Relu6, ReluN1To1, Tanh, Sigmoid, Clip, LUT };
/// Vela's spelling ("Relu6", "LUT"; "None").
std::string_view npu_activation_name(NpuActivation act);

/// Which table a LUT activation holds.
enum class LutKind : std::uint8_t {
  None, Sigmoid, Tanh, HardSwish, LeakyRelu, SoftmaxExp, SoftmaxExp16, SoftmaxReciprocal16
};

/// Padding mode as Vela records it; explicit_padding always holds the resolved (t, l, b, r).
enum class NpuPadding : std::uint8_t { None, Same, Valid, Explicit, TransposeConv };

/// 4-D NHWC shape.
using Shape4 = std::array<std::int32_t, 4>;

/// Quantisation of a lowered tensor (scale/zero_point per channel when more than one entry).
struct NpuQuant {
  std::vector<float> scale;
  std::vector<std::int64_t> zero_point;
  bool quantized() const { return !scale.empty(); }
  bool operator==(const NpuQuant&) const = default;
};

/// A producer or consumer of a lowered tensor.
struct NodeRef {
  enum class Kind : std::uint8_t { NpuPass, CpuOp };
  Kind kind = Kind::NpuPass;
  int index = 0;  ///< into NpuGraph::passes or NpuGraph::cpu_ops
  bool operator==(const NodeRef&) const = default;
};

/// One tensor of the lowered graph.
struct LoweredTensor {
  std::string name;
  std::vector<std::int32_t> shape;  ///< the tensor's own shape (op shapes live on the passes)
  TensorType dtype = TensorType::INT8;
  NpuQuant quant;
  int model_tensor = -1;  ///< index into the model's subgraph 0 tensors; -1 = created by the lowering
  bool constant = false;
  bool graph_input = false;
  bool graph_output = false;
  std::vector<NodeRef> producers;  ///< several for a concatenation output
  std::vector<NodeRef> consumers;  ///< one entry per use
  /// May use the NHCWB16 brick layout (docs/design/lowering/layout.md): produced and consumed only by
  /// NPU passes of one NPU subgraph, not a graph input or output, every read/write view equal to the
  /// whole tensor at channel offsets that are multiples of 16, and not an int32 ReduceSum input. The
  /// scheduler decides whether it does.
  bool nhcwb16_eligible = false;
  /// Vela's needs_linear_format after its graph optimiser (layout.md rules 1-5, decided before the NPU
  /// subgraphs are cut): false for every eligible tensor and also for one passed between two NPU
  /// subgraphs, which stays NHWC but is costed as NHCWB16 by the burst rule (npu-model.md §11.8).
  bool needs_linear_format = true;
};

/// Convolution / pooling geometry of a pass.
struct NpuKernel {
  std::int32_t w = 1, h = 1, stride_w = 1, stride_h = 1, dilation_w = 1, dilation_h = 1;
  bool operator==(const NpuKernel&) const = default;
};

/// One NPU pass: a primary op plus the post ops packed with it (DMA ops are not listed).
struct NpuPass {
  std::string name;                 ///< Vela's pass name (the primary op's name)
  VelaOpType op_type = VelaOpType::AvgPool;  ///< the primary op
  std::vector<VelaOpType> ops;      ///< every op of the pass in execution order (primary first)
  NpuBlockType block_type = NpuBlockType::Default;
  Shape4 ifm_shape{1, 1, 1, 1};
  bool has_ifm2 = false;
  Shape4 ifm2_shape{1, 1, 1, 1};
  Shape4 ofm_shape{1, 1, 1, 1};
  /// Vela swaps a broadcast / scalar first operand to second at command generation and swaps the
  /// pass's op shapes in place but not its tensors (docs/design/lowering/elementwise.md, "Operand
  /// order"): when true, ifm_shape describes `ifm2` and ifm2_shape describes `ifm` (as in the
  /// reference records).
  bool operands_reversed = false;
  Shape4 ifm_offset{0, 0, 0, 0};   ///< read offset into the IFM tensor (absorbed slice)
  Shape4 ifm2_offset{0, 0, 0, 0};
  Shape4 ofm_offset{0, 0, 0, 0};   ///< write offset into the OFM tensor (concatenation, PAD fallback)
  int ifm = -1, ifm2 = -1, ofm = -1;  ///< lowered tensor ids
  TensorType ifm_type = TensorType::INT8, ifm2_type = TensorType::INT8, ofm_type = TensorType::INT8;
  NpuQuant ifm_quant, ifm2_quant, ofm_quant;
  NpuKernel kernel;
  NpuPadding padding = NpuPadding::None;
  std::array<std::int32_t, 4> explicit_padding{0, 0, 0, 0};  ///< (top, left, bottom, right)
  NpuActivation activation = NpuActivation::None;
  LutKind lut = LutKind::None;
  int weights_tensor = -1;  ///< index into the model's tensors; -1 = none or created by the lowering
  std::vector<std::int32_t> weights_shape;  ///< OHWI as the NPU uses it (after the rewrites)
  TensorType weights_type = TensorType::INT8;
  NpuQuant weights_quant;
  int bias_tensor = -1;     ///< index into the model's tensors; -1 = none (a zero bias is implied)
  std::int32_t bias_length = 0;
  std::vector<int> inputs;  ///< lowered tensor ids read by the pass (constants included, LUTs excluded)
  int output = -1;          ///< lowered tensor id written
  int tflite_op_index = -1; ///< the TFLite operator this pass comes from (-1 when unknown)
  int npu_subgraph = 0;     ///< 1-based index of Vela's NPU subgraph ("main_split_<n>")
  /// The primary op is the 1x1 AvgPool pass packing creates for a pass of post ops only; its output
  /// is a copy of `ifm` in the feature-map storage area, which times the pass (pass-format.md
  /// "primary_ofm").
  bool created_avgpool = false;
};

/// One operator that stays on the CPU.
struct CpuOp {
  std::string name;
  BuiltinOperator builtin = BuiltinOperator::ADD;
  std::string vela_type;  ///< Vela's internal type name ("ResizeNearestNeighbor")
  int tflite_op_index = -1;
  std::vector<int> inputs, outputs;  ///< lowered tensor ids (boundary tensors included)
  std::vector<std::string> reason;   ///< Vela's reason lines for this op (as in NpuGraph::reasons)
  std::string warning;               ///< Vela's CPU pass notice, empty for the types Vela keeps quiet about
};

/// One reason message as Vela prints it: `tflite_op`/`name` and the reason lines
/// (["CPU only op"] for a CPU-only type; ["- <constraint>", "<detail>"] for a failed constraint;
/// docs/design/lowering/supported-operators.md, "Messages").
struct FallbackReason {
  std::string tflite_op;
  std::string name;
  std::vector<std::string> reason;
  bool operator==(const FallbackReason&) const = default;
};

/// The lowered graph.
struct NpuGraph {
  /// NPU passes in Vela's pass order (docs/design/lowering/pass-packing.md), which decides the NPU
  /// subgraphs.
  std::vector<NpuPass> passes;
  /// Indices into `passes` in the order Vela's reports list them: per NPU subgraph, a post-order walk
  /// over pass predecessors from the passes without successors (the scheduler's order without
  /// cascades; an IfmStream cascade can move a pass earlier in the reports).
  std::vector<int> report_order;
  std::vector<CpuOp> cpu_ops;      ///< CPU passes in Vela's pass order
  std::vector<LoweredTensor> tensors;
  std::vector<int> inputs, outputs;  ///< lowered tensor ids of the graph inputs and outputs
  std::vector<FallbackReason> reasons;   ///< reason messages in Vela's print order
  std::vector<std::string> warnings;     ///< CPU pass notices ("Warning: X operation is unknown ...")
  int npu_subgraph_count = 0;

  /// Number of NPU passes per primary op type name (the records' npu_op_types).
  std::map<std::string, int> op_type_counts() const;
};

/// What the lowering depends on.
struct NpuLoweringOptions {
  /// "ethos-u55-32", "-64", "-128", "-256", "ethos-u65-256", "-512" (LUT fusion needs SHRAM LUT banks,
  /// absent on U55-32/64). Empty = ethos-u55-128.
  std::string accelerator_config;
  /// false keeps the graph as written: no first-layer stride-2 rewrite, no 1x1 CONV -> FC, no
  /// MUL+MAXIMUM pattern, no PAD fusion (PADs become AvgPool copies), no LUT fusion. The operators are
  /// still lowered to the op types the NPU needs (softmax chain, LUT ops, ...); see
  /// docs/design/lowering/graph-rewrites.md.
  bool vela_rewrites = true;
};

/// Lowers subgraph 0 of `model` as Vela 2.1 does. Throws common::UserError on bad input and
/// std::logic_error ("internal error: ...") on an inconsistency of the lowering.
NpuGraph lower_for_npu(const Model& model, const NpuLoweringOptions& options = {});

}  // namespace npumap::tflite
