// Vela 2.1 lowering of a TFLite graph to NPU passes; see npu_lowering.hpp and VELA_LOWERING.md.
// The implementation works on a small mutable graph (Ctx: tensors + ops, adjacency rebuilt by link())
// and runs the spec's steps in order; each step is one function named after its section.

#include "workloads/tflite/npu_lowering.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include <flatbuffers/flatbuffers.h>

#include "common/user_error.hpp"

namespace npumap::tflite {

std::string_view vela_op_type_name(VelaOpType type) {
  switch (type) {
#define NPUMAP_VELA_CASE(name) \
  case VelaOpType::name:       \
    return #name;
    NPUMAP_VELA_OP_TYPES(NPUMAP_VELA_CASE)
#undef NPUMAP_VELA_CASE
  }
  return "Unknown";
}

std::string_view npu_block_type_name(NpuBlockType type) {
  switch (type) {
    case NpuBlockType::Default: return "Default";
    case NpuBlockType::ConvolutionMxN: return "ConvolutionMxN";
    case NpuBlockType::VectorProduct: return "VectorProduct";
    case NpuBlockType::Pooling: return "Pooling";
    case NpuBlockType::ConvolutionDepthWise: return "ConvolutionDepthWise";
    case NpuBlockType::ElementWise: return "ElementWise";
    case NpuBlockType::ReduceSum: return "ReduceSum";
  }
  return "Default";
}

std::string_view npu_activation_name(NpuActivation act) {
  switch (act) {
    case NpuActivation::None: return "None";
    case NpuActivation::Relu: return "Relu";
    case NpuActivation::Relu6: return "Relu6";
    case NpuActivation::ReluN1To1: return "ReluN1To1";
    case NpuActivation::Tanh: return "Tanh";
    case NpuActivation::Sigmoid: return "Sigmoid";
    case NpuActivation::Clip: return "Clip";
    case NpuActivation::LUT: return "LUT";
  }
  return "None";
}

std::map<std::string, int> NpuGraph::op_type_counts() const {
  std::map<std::string, int> counts;
  for (const NpuPass& p : passes) ++counts[std::string(vela_op_type_name(p.op_type))];
  return counts;
}

namespace {

using common::SourceLocation;
using common::UserError;
using Dims = std::vector<std::int32_t>;

/// Structural kind of an internal op; Compute ops carry their Vela type in Op::vt.
enum class S : std::uint8_t {
  Compute, Concat, Pack, Split, SplitV, Slice, StridedSlice, Unpack, Reshape, Squeeze, ExpandDims, Pad,
  Softmax, Mean, HardSwish, Identity, SplitSliceRead, Cpu
};

struct T {
  std::string name;
  Dims shape;
  TensorType type = TensorType::INT8;
  NpuQuant q;
  bool per_axis = false;  // scale, zero point, min or max is an array (G11)
  bool has_quant_table = false;
  int model = -1;
  bool is_const = false;
  bool gin = false, gout = false;
  std::vector<int> prod, cons;
};

struct Op {
  S s = S::Compute;
  VelaOpType vt = VelaOpType::AvgPool;
  BuiltinOperator builtin = BuiltinOperator::ADD;
  int op_index = -1;
  std::string name;
  std::vector<int> in, out;
  bool npu = false, dead = false;
  Shape4 ifm_s{1, 1, 1, 1}, ifm2_s{1, 1, 1, 1}, ofm_s{1, 1, 1, 1};
  Shape4 ifm_off{0, 0, 0, 0}, ifm2_off{0, 0, 0, 0}, ofm_off{0, 0, 0, 0};
  std::vector<Shape4> in_shapes, out_shapes;  // split / concat types
  std::vector<Shape4> out_offsets;            // SplitSliceRead offsets per output
  NpuKernel k;
  bool has_padding_attr = false;
  NpuPadding pad = NpuPadding::None;
  std::array<std::int32_t, 4> epad{0, 0, 0, 0};
  NpuActivation act = NpuActivation::None;
  LutKind lut = LutKind::None;
  bool noop_lut = false;
  bool rewritten = false;  // R14 / R17 already applied (their results keep the Vela type)
  std::vector<std::string> reason;  // C1 / C2 lines when placed on the CPU
  int weights = -1, bias = -1;  // internal tensor ids
  Dims wshape;                  // OHWI
  std::int32_t bias_len = 0;
  BuiltinOptions opts;
};

Shape4 full4(const Dims& s) {
  Shape4 r{1, 1, 1, 1};
  const std::size_t n = std::min<std::size_t>(s.size(), 4);
  for (std::size_t i = 0; i < n; ++i) r[4 - n + i] = s[s.size() - n + i];
  // Ranks above 4 fold the extra leading dimensions into N (only CPU tensors; saturates).
  std::int64_t lead = r[0];
  for (std::size_t i = 0; i + 4 < s.size(); ++i)
    lead = std::min<std::int64_t>(lead * s[i], std::numeric_limits<std::int32_t>::max());
  r[0] = static_cast<std::int32_t>(lead);
  return r;
}

std::string py_list(const Dims& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

/// numpy's str() of a 1-D int array: elements right-aligned to the widest one ("[ 0 12]").
std::string np_array(const std::vector<std::int64_t>& v) {
  std::size_t w = 1;
  for (auto x : v) w = std::max(w, std::to_string(x).size());
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string e = std::to_string(v[i]);
    if (i) s += ' ';
    s += std::string(w - e.size(), ' ') + e;
  }
  return s + "]";
}

std::string fmt_float(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

/// Vela's internal type name of a TFLite builtin (tflite_mapping.py names, as the records print them).
std::string vela_type_of(BuiltinOperator op) {
  using B = BuiltinOperator;
  switch (op) {
    case B::ADD: return "Add";
    case B::AVERAGE_POOL_2D: return "AvgPool";
    case B::CONCATENATION: return "ConcatTFLite";
    case B::CONV_2D: return "Conv2DBias";
    case B::DEPTHWISE_CONV_2D: return "DepthwiseConv2DBias";
    case B::DEPTH_TO_SPACE: return "DepthToSpace";
    case B::DEQUANTIZE: return "Dequantize";
    case B::EMBEDDING_LOOKUP: return "EmbeddingLookup";
    case B::FLOOR: return "Floor";
    case B::FULLY_CONNECTED: return "FullyConnected";
    case B::HASHTABLE_LOOKUP: return "HashtableLookup";
    case B::L2_NORMALIZATION: return "L2Norm";
    case B::L2_POOL_2D: return "L2Pool2D";
    case B::LOCAL_RESPONSE_NORMALIZATION: return "LRN";
    case B::LOGISTIC: return "Sigmoid";
    case B::LSH_PROJECTION: return "LSHProjection";
    case B::LSTM: return "Lstm";
    case B::MAX_POOL_2D: return "MaxPool";
    case B::MUL: return "Mul";
    case B::RELU: return "Relu";
    case B::RELU_N1_TO_1: return "ReluN1To1";
    case B::RELU6: return "Relu6";
    case B::RESHAPE: return "Reshape";
    case B::RESIZE_BILINEAR: return "ResizeBilinear";
    case B::RNN: return "Rnn";
    case B::SOFTMAX: return "Softmax";
    case B::SPACE_TO_DEPTH: return "SpaceToDepth";
    case B::SVDF: return "Svdf";
    case B::TANH: return "Tanh";
    case B::CONCAT_EMBEDDINGS: return "ConcatEmbeddings";
    case B::SKIP_GRAM: return "SkipGram";
    case B::CALL: return "Call";
    case B::CUSTOM: return "Custom";
    case B::EMBEDDING_LOOKUP_SPARSE: return "EmbeddingLookupSparse";
    case B::PAD: return "Pad";
    case B::UNIDIRECTIONAL_SEQUENCE_RNN: return "UnidirectionalSequenceRnn";
    case B::GATHER: return "GatherV2";
    case B::BATCH_TO_SPACE_ND: return "BatchToSpaceND";
    case B::SPACE_TO_BATCH_ND: return "SpaceToBatchND";
    case B::TRANSPOSE: return "Transpose";
    case B::MEAN: return "Mean";
    case B::SUB: return "Sub";
    case B::DIV: return "Div";
    case B::SQUEEZE: return "Squeeze";
    case B::UNIDIRECTIONAL_SEQUENCE_LSTM: return "UnidirectionalSequenceLstm";
    case B::STRIDED_SLICE: return "StridedSlice";
    case B::BIDIRECTIONAL_SEQUENCE_RNN: return "BidirectionalSequenceRnn";
    case B::EXP: return "Exp";
    case B::TOPK_V2: return "TopKV2";
    case B::SPLIT: return "Split";
    case B::LOG_SOFTMAX: return "LogSoftmax";
    case B::DELEGATE: return "Delegate";
    case B::BIDIRECTIONAL_SEQUENCE_LSTM: return "BidirectionalSequenceLstm";
    case B::CAST: return "Cast";
    case B::PRELU: return "Prelu";
    case B::MAXIMUM: return "Maximum";
    case B::ARG_MAX: return "ArgMax";
    case B::MINIMUM: return "Minimum";
    case B::LESS: return "Less";
    case B::NEG: return "Neg";
    case B::PADV2: return "PadV2";
    case B::GREATER: return "Greater";
    case B::GREATER_EQUAL: return "GreaterEqual";
    case B::LESS_EQUAL: return "LessEqual";
    case B::SELECT: return "Select";
    case B::SLICE: return "Slice";
    case B::SIN: return "Sin";
    case B::TRANSPOSE_CONV: return "Conv2DBackpropInput";
    case B::SPARSE_TO_DENSE: return "SparseToDense";
    case B::TILE: return "Tile";
    case B::EXPAND_DIMS: return "ExpandDims";
    case B::EQUAL: return "Equal";
    case B::NOT_EQUAL: return "NotEqual";
    case B::LOG: return "Log";
    case B::SUM: return "Sum";
    case B::SQRT: return "Sqrt";
    case B::RSQRT: return "Rsqrt";
    case B::SHAPE: return "Shape";
    case B::POW: return "Pow";
    case B::ARG_MIN: return "ArgMin";
    case B::FAKE_QUANT: return "FakeQuantWithMinMaxArgs";
    case B::REDUCE_PROD: return "Prod";
    case B::REDUCE_MAX: return "ReduceMax";
    case B::PACK: return "Pack";
    case B::LOGICAL_OR: return "LogicalOr";
    case B::ONE_HOT: return "OneHot";
    case B::LOGICAL_AND: return "LogicalAnd";
    case B::LOGICAL_NOT: return "LogicalNot";
    case B::UNPACK: return "Unpack";
    case B::REDUCE_MIN: return "ReduceMin";
    case B::FLOOR_DIV: return "FloorDiv";
    case B::REDUCE_ANY: return "ReduceAny";
    case B::SQUARE: return "Square";
    case B::ZEROS_LIKE: return "ZerosLike";
    case B::FILL: return "Fill";
    case B::FLOOR_MOD: return "FloorMod";
    case B::RANGE: return "Range";
    case B::RESIZE_NEAREST_NEIGHBOR: return "ResizeNearestNeighbor";
    case B::LEAKY_RELU: return "LeakyRelu";
    case B::SQUARED_DIFFERENCE: return "SquaredDifference";
    case B::MIRROR_PAD: return "MirrorPad";
    case B::ABS: return "Abs";
    case B::SPLIT_V: return "SplitV";
    case B::UNIQUE: return "Unique";
    case B::CEIL: return "Ceil";
    case B::REVERSE_V2: return "ReverseV2";
    case B::ADD_N: return "AddN";
    case B::GATHER_ND: return "GatherNd";
    case B::COS: return "Cos";
    case B::WHERE: return "Where";
    case B::RANK: return "Rank";
    case B::ELU: return "Elu";
    case B::REVERSE_SEQUENCE: return "ReverseSequence";
    case B::MATRIX_DIAG: return "MatrixDiag";
    case B::QUANTIZE: return "Quantize";
    case B::MATRIX_SET_DIAG: return "MatrixSetDiag";
    case B::ROUND: return "Round";
    case B::HARD_SWISH: return "HardSwish";
    case B::IF: return "If";
    case B::WHILE: return "While";
    case B::NON_MAX_SUPPRESSION_V4: return "NonMaxSuppressionV4";
    case B::NON_MAX_SUPPRESSION_V5: return "NonMaxSuppressionV5";
    case B::SCATTER_ND: return "ScatterNd";
    case B::SELECT_V2: return "SelectV2";
    case B::DENSIFY: return "Densify";
    case B::SEGMENT_SUM: return "SegmentSum";
    case B::BATCH_MATMUL: return "BatchMatMul";
    case B::CUMSUM: return "Cumsum";
    default: return std::string(operator_name(op));
  }
}

/// Builtins that may be placed on the NPU (3.3); everything else up to CUMSUM is CPU-only (3.4).
bool npu_candidate(BuiltinOperator op) {
  using B = BuiltinOperator;
  switch (op) {
    case B::CONV_2D: case B::DEPTHWISE_CONV_2D: case B::TRANSPOSE_CONV: case B::FULLY_CONNECTED:
    case B::AVERAGE_POOL_2D: case B::MAX_POOL_2D: case B::ADD: case B::SUB: case B::MUL:
    case B::MAXIMUM: case B::MINIMUM: case B::ABS: case B::LEAKY_RELU: case B::RELU: case B::RELU6:
    case B::RELU_N1_TO_1: case B::LOGISTIC: case B::TANH: case B::HARD_SWISH: case B::SOFTMAX:
    case B::QUANTIZE: case B::RESIZE_BILINEAR: case B::MEAN: case B::PAD: case B::CONCATENATION:
    case B::PACK: case B::SPLIT: case B::SLICE: case B::UNPACK: case B::SPLIT_V: case B::STRIDED_SLICE:
    case B::RESHAPE:
      return true;
    default:
      return false;
  }
}

bool is_binary_elementwise(BuiltinOperator op) {
  using B = BuiltinOperator;
  return op == B::ADD || op == B::SUB || op == B::MUL || op == B::MAXIMUM || op == B::MINIMUM;
}

bool is_mac_main(VelaOpType t) {
  using V = VelaOpType;
  return t == V::Conv2DBias || t == V::DepthwiseConv2DBias || t == V::FullyConnected ||
         t == V::Conv2DBackpropInputSwitchedBias || t == V::AvgPool || t == V::MaxPool || t == V::ReduceSum ||
         t == V::ResizeBilinear;
}
bool is_elementwise_main(VelaOpType t) {
  using V = VelaOpType;
  return t == V::Add || t == V::Sub || t == V::Mul || t == V::Maximum || t == V::Minimum || t == V::SHL ||
         t == V::SHR || t == V::RescaleAdd || t == V::Abs || t == V::CLZ || t == V::LeakyRelu;
}
bool is_post(VelaOpType t) {
  return t == VelaOpType::Relu || t == VelaOpType::Relu6 || t == VelaOpType::ReluN1To1 || t == VelaOpType::Clip;
}
bool is_fuse_limited(VelaOpType t) {
  return t == VelaOpType::Sigmoid || t == VelaOpType::Tanh || t == VelaOpType::Quantize;
}
bool is_binary_vt(VelaOpType t) {
  using V = VelaOpType;
  return t == V::Add || t == V::Sub || t == V::Mul || t == V::Maximum || t == V::Minimum || t == V::SHL ||
         t == V::SHR || t == V::RescaleAdd;
}

NpuBlockType block_of(VelaOpType t) {
  using V = VelaOpType;
  switch (t) {
    case V::Conv2DBias: case V::Conv2DBackpropInputSwitchedBias: return NpuBlockType::ConvolutionMxN;
    case V::DepthwiseConv2DBias: return NpuBlockType::ConvolutionDepthWise;
    case V::FullyConnected: return NpuBlockType::VectorProduct;
    case V::AvgPool: case V::MaxPool: case V::ResizeBilinear: return NpuBlockType::Pooling;
    case V::ReduceSum: return NpuBlockType::ReduceSum;
    default: break;
  }
  if (is_elementwise_main(t)) return NpuBlockType::ElementWise;
  return NpuBlockType::Default;
}

NpuActivation act_of(Activation a) {
  switch (a) {
    case Activation::RELU: return NpuActivation::Relu;
    case Activation::RELU6: return NpuActivation::Relu6;
    case Activation::RELU_N1_TO_1: return NpuActivation::ReluN1To1;
    case Activation::TANH: return NpuActivation::Tanh;
    default: return NpuActivation::None;
  }
}

bool is_8bit(TensorType t) { return t == TensorType::INT8 || t == TensorType::UINT8; }

struct Ctx {
  const Model& model;
  const Subgraph& sg;
  NpuLoweringOptions opt;
  std::vector<T> ts;
  std::vector<Op> ops;
  std::vector<FallbackReason> reasons;
  std::vector<std::string> warnings;
  bool lut_banks = true;

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw UserError(SourceLocation{model.name, 0, 0}, key, msg);
  }

  // ---------------- graph helpers ----------------
  void link() {
    for (T& t : ts) {
      t.prod.clear();
      t.cons.clear();
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].dead) continue;
      for (int t : ops[i].in)
        if (t >= 0) ts[static_cast<std::size_t>(t)].cons.push_back(static_cast<int>(i));
      for (int t : ops[i].out)
        if (t >= 0) ts[static_cast<std::size_t>(t)].prod.push_back(static_cast<int>(i));
    }
  }
  T& tn(int id) { return ts.at(static_cast<std::size_t>(id)); }
  Op& op(int id) { return ops.at(static_cast<std::size_t>(id)); }
  int new_tensor(std::string name, Dims shape, TensorType type, NpuQuant q = {}, bool is_const = false) {
    T t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.type = type;
    t.q = std::move(q);
    t.is_const = is_const;
    ts.push_back(std::move(t));
    return static_cast<int>(ts.size() - 1);
  }
  int clone_tensor(int src, const std::string& suffix) {
    T t = tn(src);
    t.name += suffix;
    t.model = -1;
    t.is_const = false;
    t.gin = t.gout = false;
    t.prod.clear();
    t.cons.clear();
    ts.push_back(std::move(t));
    return static_cast<int>(ts.size() - 1);
  }
  int new_op(Op o) {
    o.npu = true;
    ops.push_back(std::move(o));
    return static_cast<int>(ops.size() - 1);
  }
  static Op make(VelaOpType vt, std::string name, std::vector<int> in, std::vector<int> out) {
    Op o;
    o.s = S::Compute;
    o.vt = vt;
    o.name = std::move(name);
    o.in = std::move(in);
    o.out = std::move(out);
    return o;
  }
  bool cpu_produced(int t) {
    for (int p : tn(t).prod)
      if (!op(p).npu) return true;
    return false;
  }
  bool cpu_consumed(int t) {
    for (int c : tn(t).cons)
      if (!op(c).npu) return true;
    return false;
  }
  int consumer_entries(int t) { return static_cast<int>(tn(t).cons.size()) + (tn(t).gout ? 1 : 0); }
  void replace_input(int consumer, int from, int to) {
    for (int& x : op(consumer).in)
      if (x == from) x = to;
  }
  /// Constant integer values of tensor `id` (empty when not a constant read from the file).
  std::vector<std::int64_t> ints(int id) {
    std::vector<std::int64_t> v;
    if (id < 0) return v;
    const T& t = tn(id);
    if (t.model < 0) return v;
    const auto data = model.tensor_data(sg.tensors[static_cast<std::size_t>(t.model)]);
    const int bits = tensor_type_bits(t.type);
    if (bits <= 0 || bits % 8 != 0) return v;
    const std::size_t es = static_cast<std::size_t>(bits / 8);
    for (std::size_t i = 0; i + es <= data.size(); i += es) {
      switch (t.type) {
        case TensorType::INT8: v.push_back(static_cast<std::int8_t>(data[i])); break;
        case TensorType::UINT8: v.push_back(data[i]); break;
        case TensorType::INT16: { std::int16_t x; std::memcpy(&x, &data[i], 2); v.push_back(x); break; }
        case TensorType::INT32: { std::int32_t x; std::memcpy(&x, &data[i], 4); v.push_back(x); break; }
        case TensorType::INT64: { std::int64_t x; std::memcpy(&x, &data[i], 8); v.push_back(x); break; }
        case TensorType::FLOAT32: { float x; std::memcpy(&x, &data[i], 4); v.push_back(static_cast<std::int64_t>(x)); break; }
        default: return {};
      }
    }
    return v;
  }
  bool has_data(int id) { return id >= 0 && tn(id).is_const; }

  /// An int field of operator `op_index`'s builtin options table, read from the file's bytes: the
  /// reader does not parse PackOptions / UnpackOptions, whose axis (field 1) the lowering needs.
  /// Every table on the way is checked with a flatbuffers::Verifier; nullopt when absent or bad.
  std::optional<std::int32_t> raw_option_int(int op_index, int field) const {
    if (!model.bytes || model.bytes->size() < 8 || op_index < 0) return std::nullopt;
    const auto* base = reinterpret_cast<const std::uint8_t*>(model.bytes->data());
    flatbuffers::Verifier v(base, model.bytes->size());
    auto slot = [](int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); };
    using Tables = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
    const auto* root = flatbuffers::GetRoot<flatbuffers::Table>(base);
    if (!root->VerifyTableStart(v) || !root->VerifyField<flatbuffers::uoffset_t>(v, slot(2), 4)) return std::nullopt;
    const auto* subgraphs = root->GetPointer<const Tables*>(slot(2));
    if (subgraphs == nullptr || !v.VerifyVector(subgraphs) || subgraphs->size() == 0) return std::nullopt;
    const auto* sub = subgraphs->Get(0);
    if (!sub->VerifyTableStart(v) || !sub->VerifyField<flatbuffers::uoffset_t>(v, slot(3), 4)) return std::nullopt;
    const auto* operators = sub->GetPointer<const Tables*>(slot(3));
    if (operators == nullptr || !v.VerifyVector(operators) || static_cast<std::size_t>(op_index) >= operators->size())
      return std::nullopt;
    const auto* op = operators->Get(static_cast<flatbuffers::uoffset_t>(op_index));
    if (!op->VerifyTableStart(v) || !op->VerifyField<flatbuffers::uoffset_t>(v, slot(4), 4)) return std::nullopt;
    const auto* options = op->GetPointer<const flatbuffers::Table*>(slot(4));
    if (options == nullptr || !options->VerifyTableStart(v) || !options->VerifyField<std::int32_t>(v, slot(field), 4))
      return std::nullopt;
    if (options->GetOptionalFieldOffset(slot(field)) == 0) return std::nullopt;
    return options->GetField<std::int32_t>(slot(field), 0);
  }

  // ---------------- reading (1) ----------------
  void read() {
    lut_banks = !(opt.accelerator_config == "ethos-u55-32" || opt.accelerator_config == "ethos-u55-64");
    ts.resize(sg.tensors.size());
    for (std::size_t i = 0; i < sg.tensors.size(); ++i) {
      const Tensor& src = sg.tensors[i];
      T& t = ts[i];
      t.name = src.name;
      t.shape = src.shape;
      t.type = src.type;
      t.model = static_cast<int>(i);
      const Quantization& q = src.quantization;
      // Vela keeps quantisation when scale or zero point is present (1.2).
      t.has_quant_table = !q.scale.empty() || !q.zero_point.empty();
      t.q.scale = q.scale;
      t.q.zero_point = q.zero_point;
      t.per_axis = q.scale.size() > 1 || q.zero_point.size() > 1 || q.min.size() > 1 || q.max.size() > 1;
      t.is_const = !model.tensor_data(src).empty();
    }
    for (int i : sg.inputs) ts.at(static_cast<std::size_t>(i)).gin = true;
    for (int i : sg.outputs) ts.at(static_cast<std::size_t>(i)).gout = true;
    for (std::size_t i = 0; i < sg.operators.size(); ++i) {
      const Operator& src = sg.operators[i];
      const auto code = static_cast<std::int32_t>(src.code);
      if (code > static_cast<std::int32_t>(BuiltinOperator::CUMSUM))
        fail("subgraphs[0].operators[" + std::to_string(i) + "]",
             "The input file contains operator code '" + std::to_string(code) +
                 "' which is currently not supported (Vela 2.1 knows codes up to CUMSUM = 128)");
      // A CUSTOM op with options [1,4,1] is an NPU op Vela compiled already (1.1): its weights and
      // command stream are opaque, so such a model cannot be lowered again.
      const auto& co = src.custom_options;
      if (src.code == BuiltinOperator::CUSTOM && co.size() == 3 && co[0] == 1 && co[1] == 4 && co[2] == 1)
        fail("subgraphs[0].operators[" + std::to_string(i) + "]",
             "the model was already compiled for Ethos-U (custom operator '" + model.opcode(src).custom_code +
                 "'); lower the original .tflite instead");
      Op o;
      o.builtin = src.code;
      o.op_index = static_cast<int>(i);
      o.in = src.inputs;
      o.out = src.outputs;
      o.opts = src.options;
      o.name = src.outputs.empty() || src.outputs[0] < 0 ? "unknown_op_name"
                                                         : sg.tensors[static_cast<std::size_t>(src.outputs[0])].name;
      classify(o);
      ops.push_back(std::move(o));
    }
    link();
  }

  void classify(Op& o) {
    using B = BuiltinOperator;
    using V = VelaOpType;
    o.s = S::Compute;
    switch (o.builtin) {
      case B::CONV_2D: o.vt = V::Conv2DBias; break;
      case B::DEPTHWISE_CONV_2D: o.vt = V::DepthwiseConv2DBias; break;
      case B::TRANSPOSE_CONV: o.vt = V::Conv2DBackpropInputSwitchedBias; break;
      case B::FULLY_CONNECTED: o.vt = V::FullyConnected; break;
      case B::AVERAGE_POOL_2D: o.vt = V::AvgPool; break;
      case B::MAX_POOL_2D: o.vt = V::MaxPool; break;
      case B::ADD: o.vt = V::Add; break;
      case B::SUB: o.vt = V::Sub; break;
      case B::MUL: o.vt = V::Mul; break;
      case B::MAXIMUM: o.vt = V::Maximum; break;
      case B::MINIMUM: o.vt = V::Minimum; break;
      case B::ABS: o.vt = V::Abs; break;
      case B::LEAKY_RELU: o.vt = V::LeakyRelu; break;
      case B::RELU: o.vt = V::Relu; break;
      case B::RELU6: o.vt = V::Relu6; break;
      case B::RELU_N1_TO_1: o.vt = V::ReluN1To1; break;
      case B::LOGISTIC: o.vt = V::Sigmoid; break;
      case B::TANH: o.vt = V::Tanh; break;
      case B::QUANTIZE: o.vt = V::Quantize; break;
      case B::RESIZE_BILINEAR: o.vt = V::ResizeBilinear; break;
      case B::HARD_SWISH: o.s = S::HardSwish; break;
      case B::SOFTMAX: o.s = S::Softmax; break;
      case B::MEAN: o.s = S::Mean; break;
      case B::PAD: o.s = S::Pad; break;
      case B::CONCATENATION: o.s = S::Concat; break;
      case B::PACK: o.s = S::Pack; break;
      case B::SPLIT: o.s = S::Split; break;
      case B::SPLIT_V: o.s = S::SplitV; break;
      case B::SLICE: o.s = S::Slice; break;
      case B::STRIDED_SLICE: o.s = S::StridedSlice; break;
      case B::UNPACK: o.s = S::Unpack; break;
      case B::RESHAPE: o.s = S::Reshape; break;
      case B::SQUEEZE: o.s = S::Squeeze; break;
      case B::EXPAND_DIMS: o.s = S::ExpandDims; break;
      default: o.s = S::Cpu; break;
    }
    // Kernel attributes (1.3).
    if (const auto* c = std::get_if<Conv2DOptions>(&o.opts)) {
      o.k = {1, 1, c->stride_w, c->stride_h, c->dilation_w, c->dilation_h};
      o.has_padding_attr = true;
      o.pad = c->padding == Padding::SAME ? NpuPadding::Same : NpuPadding::Valid;
      o.act = act_of(c->activation);
    } else if (const auto* d = std::get_if<DepthwiseConv2DOptions>(&o.opts)) {
      o.k = {1, 1, d->stride_w, d->stride_h, d->dilation_w, d->dilation_h};
      o.has_padding_attr = true;
      o.pad = d->padding == Padding::SAME ? NpuPadding::Same : NpuPadding::Valid;
      o.act = act_of(d->activation);
    } else if (const auto* p = std::get_if<Pool2DOptions>(&o.opts)) {
      o.k = {p->filter_w, p->filter_h, p->stride_w, p->stride_h, 1, 1};
      o.has_padding_attr = true;
      o.pad = p->padding == Padding::SAME ? NpuPadding::Same : NpuPadding::Valid;
      o.act = act_of(p->activation);
    } else if (const auto* f = std::get_if<FullyConnectedOptions>(&o.opts)) {
      o.act = act_of(f->activation);
    } else if (const auto* e = std::get_if<ElementwiseOptions>(&o.opts)) {
      o.act = act_of(e->activation);
    } else if (const auto* cc = std::get_if<ConcatenationOptions>(&o.opts)) {
      o.act = act_of(cc->activation);
    } else if (const auto* tc = std::get_if<TransposeConvOptions>(&o.opts)) {
      o.k = {1, 1, tc->stride_w, tc->stride_h, 1, 1};
      o.has_padding_attr = true;
      o.pad = tc->padding == Padding::SAME ? NpuPadding::Same : NpuPadding::Valid;
      o.act = act_of(tc->activation);
    }
  }

  Activation raw_activation(const Op& o) const {
    if (const auto* c = std::get_if<Conv2DOptions>(&o.opts)) return c->activation;
    if (const auto* d = std::get_if<DepthwiseConv2DOptions>(&o.opts)) return d->activation;
    if (const auto* p = std::get_if<Pool2DOptions>(&o.opts)) return p->activation;
    if (const auto* f = std::get_if<FullyConnectedOptions>(&o.opts)) return f->activation;
    if (const auto* e = std::get_if<ElementwiseOptions>(&o.opts)) return e->activation;
    if (const auto* cc = std::get_if<ConcatenationOptions>(&o.opts)) return cc->activation;
    if (const auto* tc = std::get_if<TransposeConvOptions>(&o.opts)) return tc->activation;
    return Activation::NONE;
  }

  // ---------------- S1: supported-operator checks (3) ----------------
  int ifm_of(const Op& o) const {
    using B = BuiltinOperator;
    auto at = [&](std::size_t i) { return i < o.in.size() ? o.in[i] : -1; };
    if (o.builtin == B::SPLIT) return at(1);
    if (o.builtin == B::TRANSPOSE_CONV) return at(2);
    if (o.builtin == B::CONCATENATION) return at(1);
    return at(0);
  }
  int ifm2_of(const Op& o) const {
    auto at = [&](std::size_t i) { return i < o.in.size() ? o.in[i] : -1; };
    if (o.builtin == BuiltinOperator::CONCATENATION) return at(2);
    if (is_binary_elementwise(o.builtin)) return at(1);
    return -1;
  }
  int weights_of(const Op& o) const {
    using B = BuiltinOperator;
    if (o.builtin == B::CONV_2D || o.builtin == B::DEPTHWISE_CONV_2D || o.builtin == B::FULLY_CONNECTED ||
        o.builtin == B::TRANSPOSE_CONV)
      return o.in.size() > 1 ? o.in[1] : -1;
    return -1;
  }
  int bias_of(const Op& o) const {
    using B = BuiltinOperator;
    if (o.builtin == B::TRANSPOSE_CONV) return o.in.size() > 3 ? o.in[3] : -1;
    if (o.builtin == B::CONV_2D || o.builtin == B::DEPTHWISE_CONV_2D || o.builtin == B::FULLY_CONNECTED)
      return o.in.size() > 2 ? o.in[2] : -1;
    return -1;
  }
  int ofm_of(const Op& o) const { return o.out.empty() ? -1 : o.out[0]; }

  using Failure = std::optional<std::pair<std::string, std::string>>;
  static Failure bad(std::string c, std::string d) { return std::make_pair(std::move(c), std::move(d)); }

  Failure generic_checks(const Op& o) {
    using B = BuiltinOperator;
    std::vector<int> all;
    for (int t : o.in)
      if (t >= 0) all.push_back(t);
    for (int t : o.out)
      if (t >= 0) all.push_back(t);
    std::vector<int> role;
    for (int t : {ifm_of(o), ifm2_of(o), weights_of(o), ofm_of(o)})
      if (t >= 0) role.push_back(t);
    if (role.empty())
      for (int t : o.in)
        if (t >= 0) role.push_back(t);
    auto join = [&](const std::vector<std::string>& v) {
      std::string s;
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
      return s;
    };
    std::vector<std::string> extra;
    // G1
    for (int t : all)
      if (tn(t).shape.empty() && !tn(t).is_const) extra.push_back(tn(t).name);
    if (!extra.empty()) return bad("Input(s) and Output tensors must not be dynamic", "Op has dynamic tensor(s): " + join(extra));
    // G3
    for (int t : o.out)
      if (t >= 0 && tn(t).shape.empty()) extra.push_back(tn(t).name);
    if (!extra.empty()) return bad("Output tensors cannot be scalar", "Output Tensor(s) are scalar: " + join(extra));
    // G4
    const bool scalar_ok = o.builtin == B::ADD || o.builtin == B::MAXIMUM || o.builtin == B::MEAN ||
                           o.builtin == B::MINIMUM || o.builtin == B::MUL || o.builtin == B::SPLIT ||
                           o.builtin == B::SPLIT_V || o.builtin == B::SUB;
    for (int t : o.in)
      if (t >= 0 && tn(t).shape.empty() && !scalar_ok) extra.push_back(tn(t).name);
    if (!extra.empty())
      return bad("Scalar Input tensors are only valid for op type: ADD, MAXIMUM, MEAN, MINIMUM, MUL, SPLIT, SPLIT_V, SUB",
                 "Op has scalar input tensor(s): " + join(extra));
    // G5
    for (int t : all)
      if (tn(t).shape.size() > 4) extra.push_back("Tensor '" + tn(t).name + "' has shape: " + py_list(tn(t).shape));
    if (!extra.empty()) return bad("Input(s) and Output tensors must not be greater than 4D", join(extra));
    // G6
    for (int t : role) {
      const TensorType ty = tn(t).type;
      if (ty != TensorType::INT16 && ty != TensorType::INT32 && ty != TensorType::INT8 && ty != TensorType::UINT8)
        extra.push_back("Tensor '" + tn(t).name + "' has data type: " + std::string(tensor_type_name(ty)));
    }
    if (!extra.empty()) return bad("Tensors must be of type: int16, int32, int8, uint8", join(extra));
    // G7
    if (!(o.builtin == B::ADD || o.builtin == B::MUL || o.builtin == B::SUB))
      for (int t : role)
        if (tn(t).type == TensorType::INT32) extra.push_back("Tensor '" + tn(t).name + "' is int32");
    if (!extra.empty()) return bad("Tensors which are int32 are only valid when op type is: ADD, MUL, SUB", join(extra));
    // G8
    for (int t : role)
      for (auto d : tn(t).shape)
        if (d < 1 || d > 65535) {
          extra.push_back("Tensor '" + tn(t).name + "' has shape: " + py_list(tn(t).shape));
          break;
        }
    if (!extra.empty()) return bad("Tensor dimensions must be in the range [1, 65535]", join(extra));
    // G9
    for (int t : role)
      if (!tn(t).has_quant_table) extra.push_back("Tensor '" + tn(t).name + "' has no quantization parameters");
    if (!extra.empty()) return bad("Input(s), Output and Weight tensors must have quantization parameters", join(extra));
    // G10
    for (int t : role)
      for (float s : tn(t).q.scale)
        if (!std::isfinite(s)) {
          extra.push_back("Tensor '" + tn(t).name + "' has quantization scale: " + fmt_float(s));
          break;
        }
    if (!extra.empty())
      return bad("Input(s), Output and Weight tensors with quantization scales must be finite", join(extra));
    // G11
    if (!(o.builtin == B::CONV_2D || o.builtin == B::DEPTHWISE_CONV_2D || o.builtin == B::TRANSPOSE_CONV))
      for (int t : role)
        if (tn(t).per_axis) extra.push_back("Tensor '" + tn(t).name + "' has per-axis quantization");
    if (!extra.empty())
      return bad("Per-axis quantization is only supported for the following op types: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV",
                 join(extra));
    // G12
    const Activation ra = raw_activation(o);
    if (ra == Activation::SIGN_BIT)
      return bad("The fused activation function (if present) must be one of type: LOGISTIC, RELU, RELU6, RELU_N1_TO_1, TANH",
                 "Op has its fused activation function as: SIGN_BIT");
    const int ofm = ofm_of(o), ifm = ifm_of(o);
    // G13
    if (ra != Activation::NONE && ofm >= 0) {
      const TensorType ty = tn(ofm).type;
      if (!(ty == TensorType::INT8 || ty == TensorType::UINT8 || ty == TensorType::INT16))
        return bad("If a fused activation function is present, the Output tensor must be one of type: int16, int8, uint8",
                   "Op has its fused activation function as: " + std::string(npu_activation_name(act_of(ra))) +
                       " and its Output tensor data type is: " + std::string(tensor_type_name(ty)));
    }
    // G14
    if (ofm >= 0 && tn(ofm).q.quantized()) {
      const double os = tn(ofm).q.scale[0];
      if (os < static_cast<double>(std::numeric_limits<float>::min()))
        return bad("The output tensor's quantization scale must be greater than or equal to the smallest normal float32",
                   "Operation has output quantization scale " + fmt_float(os));
      if (ifm >= 0 && tn(ifm).q.quantized() && !std::isfinite(tn(ifm).q.scale[0] / os))
        return bad("Input and Output tensor scale ratio must be finite", "Operation has infinite scale ratio");
    }
    return std::nullopt;
  }

  std::string shp(int t) { return t >= 0 ? py_list(tn(t).shape) : "[]"; }

  Failure conv_like_checks(const Op& o, bool depthwise) {
    const NpuKernel& k = o.k;
    if (k.stride_w < 1 || k.stride_w > 3 || k.stride_h < 1 || k.stride_h > 3)
      return bad("Stride values for both width and height must be in the range [1, 3]",
                 "Op has stride WxH as: " + std::to_string(k.stride_w) + "x" + std::to_string(k.stride_h));
    if (k.dilation_w < 1 || k.dilation_w > 2 || k.dilation_h < 1 || k.dilation_h > 2)
      return bad("Dilation factor values for both width and height must be in the range [1, 2]",
                 "Op has dilation factor WxH as: " + std::to_string(k.dilation_w) + "x" + std::to_string(k.dilation_h));
    const int w = weights_of(o);
    if (w < 0 || tn(w).shape.size() != 4) return bad("Weight tensor must be 4D", "Op has weights shape: " + shp(w));
    const auto& ws = tn(w).shape;
    const std::int64_t kh = ws[1], kw = ws[2];
    const std::int64_t dkh = (kh - 1) * k.dilation_h + 1, dkw = (kw - 1) * k.dilation_w + 1;
    if (dkh < 1 || dkh > 64)
      return bad("Dilated kernel height must be in the range [1, 64]", "Op has dilated kernel height as: " + std::to_string(dkh));
    if (dkh * dkw < 1 || dkh * dkw > 4096)
      return bad("Product of dilated kernel width and height must be in the range [1, 4096]",
                 "Op has product of dilated kernel width and height as: " + std::to_string(dkh * dkw));
    if (tensor_type_bits(tn(w).type) != 8)
      return bad("Weight tensor must be 8-bit", "Tensor '" + tn(w).name + "' is " + std::string(tensor_type_name(tn(w).type)));
    if (!tn(w).is_const) return bad("Weight tensor must be constant", "Tensor '" + tn(w).name + "' has non-const buffer");
    // C-6: per output channel for CONV (OHWI: O first); over the whole tensor for DW (quirk).
    {
      const auto vals = ints(w);
      const auto& zps = tn(w).q.zero_point;
      const std::int64_t limit = 127 * 65536;
      const std::size_t o_n = static_cast<std::size_t>(depthwise ? 1 : ws[0]);
      const std::size_t per = o_n ? vals.size() / o_n : 0;
      for (std::size_t oc = 0; oc < o_n && per; ++oc) {
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < per; ++i) {
          const std::size_t idx = oc * per + i;
          const std::size_t ch = depthwise ? idx % static_cast<std::size_t>(ws[3]) : oc;
          // A zero point far outside the 8-bit range is clamped, and the sum stops growing once it
          // is certain to fail, so hostile values cannot overflow.
          const std::int64_t zp = std::clamp<std::int64_t>(zps.empty() ? 0 : zps[std::min(ch, zps.size() - 1)],
                                                           -(std::int64_t{1} << 40), std::int64_t{1} << 40);
          sum += std::llabs(vals[idx] - zp);
          if (sum > (std::int64_t{1} << 60)) break;
        }
        if (sum > limit)
          return bad("The sum of the weights cannot exceed 8323072",
                     "Tensor '" + tn(w).name + "' has the sum of weights: " + std::to_string(sum));
      }
    }
    if (auto f = bias_checks(o)) return f;
    const int ifm = ifm_of(o);
    if (ifm >= 0 && !tn(ifm).shape.empty() && tn(ifm).shape[0] != 1)
      return bad("IFM Tensor batch size must be 1",
                 "Tensor '" + tn(ifm).name + "' has batch size: " + std::to_string(tn(ifm).shape[0]));
    return std::nullopt;
  }

  Failure bias_checks(const Op& o) {
    const int b = bias_of(o);
    if (b < 0) return std::nullopt;
    if (tn(b).type != TensorType::INT32 && tn(b).type != TensorType::INT64)
      return bad("Optional Bias tensor must be of type: int32, int64",
                 "Tensor '" + tn(b).name + "' has data type: " + std::string(tensor_type_name(tn(b).type)));
    for (auto v : ints(b))
      if (v > (std::int64_t{1} << 39) - 1 || v < -(std::int64_t{1} << 39))
        return bad("Optional Bias tensor values must fit within 40-bits",
                   "Tensor '" + tn(b).name + "' has values larger than 40-bits");
    return std::nullopt;
  }

  Failure elementwise_checks(const Op& o) {
    const int a = ifm_of(o), b = ifm2_of(o), out = ofm_of(o);
    std::vector<int> ins{a};
    if (b >= 0) ins.push_back(b);
    for (int t : ins)
      if (tn(t).shape.size() > 2 && tn(t).shape[0] != 1)
        return bad("Batch size must be 1 for Input tensors with more than 2 dimensions",
                   "Tensor '" + tn(t).name + "' has shape: " + shp(t));
    if (b < 0) return std::nullopt;
    const Dims& oa = tn(out).shape;
    if (tn(a).shape != oa && tn(b).shape != oa)
      return bad("At least one Input's shape must match the OFM's shape",
                 "Op has ifm_shape=" + shp(a) + ", ifm2_shape=" + shp(b) + " and ofm_shape=" + shp(out));
    const Dims &sa = tn(a).shape, &sb = tn(b).shape;
    const std::size_t r = std::max({sa.size(), sb.size(), oa.size()});
    for (std::size_t i = 0; i < r; ++i) {
      auto dim = [&](const Dims& d) { return i < d.size() ? d[d.size() - 1 - i] : 1; };
      const int x = dim(sa), y = dim(sb), z = dim(oa);
      if ((x != y && x != 1 && y != 1) || z != std::max(x, y))
        return bad("Broadcasting is only allowed for rank indices with dimension 1, from either IFM1 or IFM2",
                   "Op has ifm_shape=" + shp(a) + ", ifm2_shape=" + shp(b) + " and ofm_shape=" + shp(out));
    }
    return std::nullopt;
  }

  std::string tname(int t) { return std::string(tensor_type_name(tn(t).type)); }

  Failure op_checks(const Op& o) {
    using B = BuiltinOperator;
    const int ifm = ifm_of(o), ifm2 = ifm2_of(o), ofm = ofm_of(o);
    auto types_equal = [&]() -> Failure {
      if (ifm >= 0 && ofm >= 0 && tn(ifm).type != tn(ofm).type)
        return bad("IFM and OFM data types must match", "Op has ifm_dtype=" + tname(ifm) + " and ofm_dtype=" + tname(ofm));
      return std::nullopt;
    };
    switch (o.builtin) {
      case B::CONV_2D:
        return conv_like_checks(o, false);
      case B::DEPTHWISE_CONV_2D: {
        if (auto f = conv_like_checks(o, true)) return f;
        const auto* d = std::get_if<DepthwiseConv2DOptions>(&o.opts);
        const int ic = tn(ifm).shape.empty() ? 1 : tn(ifm).shape.back();
        const int oc = tn(ofm).shape.empty() ? 1 : tn(ofm).shape.back();
        int m = d ? d->depth_multiplier : 1;
        if (m == 0) m = ic ? tn(weights_of(o)).shape.back() / ic : 1;
        if (m > 1 && !(ic == 1 && oc == m))
          return bad("For depth multipliers > 1, IFM channels must be 1 and OFM channels must be equal to the depth multiplier",
                     "Op has ifm_channels=" + std::to_string(ic) + ", ofm_channels=" + std::to_string(oc) +
                         " and depth_multiplier=" + std::to_string(m));
        return std::nullopt;
      }
      case B::TRANSPOSE_CONV: {
        if (auto f = conv_like_checks(o, false)) return f;
        if (o.k.stride_w != 2 || o.k.stride_h != 2)
          return bad("Stride values for both width and height must be 2",
                     "Op has stride WxH as: " + std::to_string(o.k.stride_w) + "x" + std::to_string(o.k.stride_h));
        const Shape4 i4 = full4(tn(ifm).shape), o4 = full4(tn(ofm).shape);
        const auto& ws = tn(weights_of(o)).shape;
        if (o.pad == NpuPadding::Same) {
          if (o4[1] != i4[1] * 2 || o4[2] != i4[2] * 2)
            return bad("SAME padding: OFM dimensions must equal IFM dimensions multiplied by stride",
                       "Op has ifm_shape=" + shp(ifm) + ", ofm_shape=" + shp(ofm) + " and stride_shape=[2, 2]");
        } else {
          const int eh = i4[1] * 2 + std::max(ws[1] - 2, 0), ew = i4[2] * 2 + std::max(ws[2] - 2, 0);
          if (o4[1] != eh || o4[2] != ew)
            return bad("VALID padding: OFM dimensions must equal IFM dimensions multiplied by stride, minus difference between kernel size and stride",
                       "Op has ifm_shape=" + shp(ifm) + ", ofm_shape=" + shp(ofm) + ", stride_shape=[2, 2] and kernel_shape=" +
                           py_list(ws));
        }
        return std::nullopt;
      }
      case B::FULLY_CONNECTED: {
        const int w = weights_of(o);
        if (w < 0) return bad("Weight tensor must be 8-bit", "Op has no weight tensor");
        if (tensor_type_bits(tn(w).type) != 8)
          return bad("Weight tensor must be 8-bit", "Tensor '" + tn(w).name + "' is " + tname(w));
        if (!tn(w).is_const) return bad("Weight tensor must be constant", "Tensor '" + tn(w).name + "' has non-const buffer");
        if (auto f = bias_checks(o)) return f;
        const auto* fo = std::get_if<FullyConnectedOptions>(&o.opts);
        const bool keep = fo && fo->keep_num_dims;
        if (!keep && tn(ofm).shape.size() != 2)
          return bad("The output tensor(s) must have 2D shape", "Op has non-2D output tensor '" + tn(ofm).name + "'");
        if (keep && tn(ifm).shape.size() != tn(ofm).shape.size())
          return bad("The IFM and OFM must have the same number of dimensions if keep_num_dims is set to true",
                     "Op has ifm shape: " + shp(ifm) + " and ofm shape: " + shp(ofm));
        return std::nullopt;
      }
      case B::AVERAGE_POOL_2D:
      case B::MAX_POOL_2D: {
        if (!tn(ifm).shape.empty() && tn(ifm).shape[0] != 1)
          return bad("IFM Tensor batch size must be 1",
                     "Tensor '" + tn(ifm).name + "' has batch size: " + std::to_string(tn(ifm).shape[0]));
        if (o.k.stride_w < 1 || o.k.stride_w > 3 || o.k.stride_h < 1 || o.k.stride_h > 3)
          return bad("Stride values for both width and height must be in the range [1, 3]",
                     "Op has stride WxH as: " + std::to_string(o.k.stride_w) + "x" + std::to_string(o.k.stride_h));
        if (auto f = types_equal()) return f;
        const std::int64_t kw = o.k.w, kh = o.k.h;
        if (o.builtin == B::AVERAGE_POOL_2D && o.pad == NpuPadding::Same) {
          if (kw < 1 || kw > 8 || kh < 1 || kh > 8)
            return bad("Kernel filter values for both width and height must be in the range [1, 8]",
                       "Op has kernel filter WxH as: " + std::to_string(kw) + "x" + std::to_string(kh));
          return std::nullopt;
        }
        if (kh < 1 || kh > 256)
          return bad("Kernel filter height must be in the range [1, 256]", "Op has kernel filter height as: " + std::to_string(kh));
        if (kw * kh < 1 || kw * kh > 65536)
          return bad("Product of kernel filter width and height must be in the range [1, 65536]",
                     "Op has product of kernel filter width and height as: " + std::to_string(kw * kh));
        return std::nullopt;
      }
      case B::ADD:
      case B::SUB:
      case B::MUL: {
        if (auto f = elementwise_checks(o)) return f;
        if (ifm2 >= 0 && tn(ifm).type != tn(ifm2).type)
          return bad("Both Input data types must match", "Op has ifm_dtype=" + tname(ifm) + " and ifm2_dtype=" + tname(ifm2));
        const TensorType it = tn(ifm).type, ot = tn(ofm).type;
        const bool isigned = it == TensorType::INT8 || it == TensorType::INT16 || it == TensorType::INT32;
        const bool osigned = ot == TensorType::INT8 || ot == TensorType::INT16 || ot == TensorType::INT32;
        if (isigned && !osigned)
          return bad("For IFM that are signed, OFM must also be signed", "Op has ifm_dtype=" + tname(ifm) + " and ofm_dtype=" + tname(ofm));
        if (!isigned && !(ot == it || ot == TensorType::INT32))
          return bad("For IFM that are unsigned, OFM must either be the same type or int32",
                     "Op has ifm_dtype=" + tname(ifm) + " and ofm_dtype=" + tname(ofm));
        return std::nullopt;
      }
      case B::MAXIMUM:
      case B::MINIMUM: {
        if (auto f = elementwise_checks(o)) return f;
        if (auto f = types_equal()) return f;
        for (int t : {ifm, ifm2})
          if (t >= 0 && (tn(t).q.scale != tn(ofm).q.scale || tn(t).q.zero_point != tn(ofm).q.zero_point))
            return bad("Both Input quantization parameters must match OFM quantization parameters",
                       "Op has tensors with different quantization parameters to the OFM '" + tn(ofm).name + "': " + tn(t).name);
        return std::nullopt;
      }
      case B::ABS:
        if (auto f = elementwise_checks(o)) return f;
        return types_equal();
      case B::LEAKY_RELU: {
        if (auto f = elementwise_checks(o)) return f;
        if (auto f = types_equal()) return f;
        const auto* l = std::get_if<LeakyReluOptions>(&o.opts);
        if (l && l->alpha < 0) return bad("Alpha must not be negative", "Op has alpha=" + fmt_float(l->alpha));
        return std::nullopt;
      }
      case B::HARD_SWISH:
        if (!is_8bit(tn(ifm).type)) return bad("IFM must be int8 or uint8", "Op has ifm_dtype=" + tname(ifm));
        return types_equal();
      case B::SOFTMAX: {
        if (tn(ifm).shape != tn(ofm).shape)
          return bad("IFM and OFM shapes must match", "Op has ifm_shape=" + shp(ifm) + " and ofm_shape=" + shp(ofm));
        if (auto f = types_equal()) return f;
        const auto* so = std::get_if<SoftmaxOptions>(&o.opts);
        if (so && so->beta < 0) return bad("Beta value needs to be positive", "Op has beta=" + fmt_float(so->beta));
        return std::nullopt;
      }
      case B::RESIZE_BILINEAR: {
        if (tn(ifm).shape.size() != 4)
          return bad("The width and height of the IFM and OFM must match one of the following criteria:",
                     "Op has ifm_shape=" + shp(ifm) + " and ofm_shape=" + shp(ofm));
        const auto* ro = std::get_if<ResizeOptions>(&o.opts);
        const bool ac = ro && ro->align_corners;
        const Shape4 i4 = full4(tn(ifm).shape), o4 = full4(tn(ofm).shape);
        bool ok = (i4[1] == 1 && i4[2] == 1) || (i4[1] == o4[1] && i4[2] == o4[2]);
        if (!ok) {
          std::int64_t h = i4[1], w = i4[2];
          // Repeated doubling; stops when a dimension no longer grows (align_corners with size 1).
          while (h < o4[1] && w < o4[2]) {
            const std::int64_t nh = ac ? h * 2 - 1 : h * 2, nw = ac ? w * 2 - 1 : w * 2;
            if (nh <= h || nw <= w) break;
            h = nh;
            w = nw;
            if (h == o4[1] && w == o4[2]) ok = true;
          }
        }
        if (!ok)
          return bad("The width and height of the IFM and OFM must match one of the following criteria:",
                     "Op has ifm_shape=" + shp(ifm) + ", ofm_shape=" + shp(ofm) + " and align_corners=" + (ac ? "True" : "False"));
        return std::nullopt;
      }
      case B::MEAN: return mean_checks(o);
      case B::PAD: {
        if (o.in.size() != 2)
          return bad("Number of input tensors must be exactly 2", "Op has " + std::to_string(o.in.size()) + " input tensors");
        const int p = o.in[1];
        const Dims& ps = tn(p).shape;
        if (!(ps == Dims{3, 2} || ps == Dims{4, 2}))
          return bad("The padding tensor must have the shape [3,2] or [4,2]", "The pad tensor has the shape: " + shp(p));
        const auto v = ints(p);
        if (v.size() == static_cast<std::size_t>(ps[0] * 2)) {
          const std::size_t n = v.size();
          const bool last_zero = v[n - 1] == 0 && v[n - 2] == 0;
          const bool first_zero = ps[0] == 3 || (v[0] == 0 && v[1] == 0);
          if (!last_zero || !first_zero) {
            if (ps[0] == 4)
              return bad("The pad tensor can only pad width and height",
                         "First dimension padding: " + np_array({v[0], v[1]}) +
                             ", last dimension padding: " + np_array({v[n - 2], v[n - 1]}));
            return bad("The pad tensor can only pad width and height",
                       "Last dimension padding: " + np_array({v[n - 2], v[n - 1]}));
          }
        }
        if (tn(p).type != TensorType::INT32 && tn(p).type != TensorType::INT64)
          return bad("Pad tensor must be of type: int32, int64", "Tensor '" + tn(p).name + "' has data type: " + tname(p));
        if (!tn(p).is_const) return bad("The padding tensor must be constant", "Tensor '" + tn(p).name + "' has non-constant buffer");
        return std::nullopt;
      }
      case B::CONCATENATION: {
        const auto* c = std::get_if<ConcatenationOptions>(&o.opts);
        if (!c) return bad("Axis attribute must exist", "Op has no axis attribute");
        const int r = static_cast<int>(tn(ofm).shape.size());
        int axis = c->axis;
        if (axis < 0) axis += r;
        if (axis < 0 || axis >= r)
          return bad("Axis attribute must be in the range [0, " + std::to_string(r) + ")", "Op has axis=" + std::to_string(c->axis));
        for (int t : o.in)
          if (t >= 0 && static_cast<int>(tn(t).shape.size()) != r)
            return bad("All Input dimensionalities must match OFM dimensionality",
                       "Op has ofm_dimensionality=" + std::to_string(r) + " and the list of mismatching inputs are: Tensor '" +
                           tn(t).name + "' has dimensionality: " + std::to_string(tn(t).shape.size()));
        for (int t : o.in)
          for (int d = 0; t >= 0 && d < r; ++d)
            if (d != axis && tn(t).shape[static_cast<std::size_t>(d)] != tn(ofm).shape[static_cast<std::size_t>(d)])
              return bad("All Input dimensions must match OFM dimension in all axes except the one defined by the axis attribute",
                         "Op has axis=" + std::to_string(axis) + ", ofm_shape=" + shp(ofm) + " and the list of mismatching inputs are: Tensor '" +
                             tn(t).name + "' has shape: " + shp(t));
        return std::nullopt;
      }
      case B::SPLIT_V: {
        const auto v = ints(o.in.size() > 1 ? o.in[1] : -1);
        if (std::count(v.begin(), v.end(), -1) > 1)
          return bad("Only one size is allowed to be inferred", "Op has multiple sizes inferred: " + np_array(v));
        return std::nullopt;
      }
      case B::STRIDED_SLICE: {
        if (o.in.size() != 4) return bad("Exactly 4 Input tensors are required", "Op has " + std::to_string(o.in.size()) + " inputs");
        std::vector<std::string> nc;
        for (std::size_t i = 1; i < 4; ++i)
          if (!has_data(o.in[i])) nc.push_back(tn(o.in[i]).name);
        if (!nc.empty()) {
          std::string s;
          for (std::size_t i = 0; i < nc.size(); ++i) s += (i ? ", " : "") + nc[i];
          return bad("Begin, End and Stride Input tensors must be constant", "Op has non-constant tensors: " + s);
        }
        const auto strides = ints(o.in[3]);
        for (auto s : strides)
          if (s != 1) return bad("All Strides values must be 1", "Op has strides values " + np_array(strides));
        const auto* so = std::get_if<StridedSliceOptions>(&o.opts);
        if (so && so->ellipsis_mask != 0)
          return bad("ellipsis_mask must be 0", "Op has ellipsis mask as: " + std::to_string(so->ellipsis_mask));
        if (so && so->new_axis_mask != 0 && so->shrink_axis_mask != 0)
          return bad("new_axis_mask and shrink_axis_mask cannot both be set",
                     "Op has new_axis_mask=" + std::to_string(so->new_axis_mask) +
                         " and shrink_axis_mask=" + std::to_string(so->shrink_axis_mask));
        const auto [b, e] = slice_bounds(o);
        for (std::size_t i = 0; i < b.size(); ++i)
          if (e[i] <= b[i])
            return bad("Slice 'end' values must be greater than 'begin' values",
                       "Op has begin_values=" + np_array(b) + " and end_values=" + np_array(e));
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

  /// STRIDED_SLICE begin/end after masks and negative-index conversion.
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> slice_bounds(const Op& o) {
    auto b = ints(o.in[1]), e = ints(o.in[2]);
    const Dims& s = tn(o.in[0]).shape;
    const auto* so = std::get_if<StridedSliceOptions>(&o.opts);
    const int bm = so ? so->begin_mask : 0, em = so ? so->end_mask : 0, sm = so ? so->shrink_axis_mask : 0;
    const std::size_t n = std::min({b.size(), e.size(), s.size()});
    b.resize(n);
    e.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t d = s[i];
      if (bm & (1 << i)) b[i] = 0;
      if (em & (1 << i)) e[i] = d;
      if (b[i] < 0) b[i] += d;
      if (e[i] < 0) e[i] += d;
      if (sm & (1 << i)) e[i] = b[i] + 1;
    }
    return {b, e};
  }

  Failure mean_checks(const Op& o) {
    const int ifm = ifm_of(o), ofm = ofm_of(o);
    if (!is_8bit(tn(ifm).type)) return bad("IFM must be int8 or uint8", "Op has ifm_dtype=" + tname(ifm));
    const std::size_t r = tn(ifm).shape.size();
    if (r < 2 || r > 4) return bad("Input tensor must be at least 2D and at most 4D", "Input tensor has " + std::to_string(r) + " dimensions");
    auto axes = ints(o.in.size() > 1 ? o.in[1] : -1);
    for (auto& a : axes)
      if (a < 0) a += static_cast<std::int64_t>(r);
    const std::set<std::int64_t> ok = r == 4 ? std::set<std::int64_t>{1, 2} : std::set<std::int64_t>{0, 1};
    if (axes.empty() || axes.size() > 2 || !std::all_of(axes.begin(), axes.end(), [&](auto a) { return ok.count(a) > 0; }))
      return bad("Axis indices must correspond to height and width axes", "Axis is " + np_array(axes));
    const Shape4 s4 = mean_ifm4(o);
    const std::int64_t hw = static_cast<std::int64_t>(s4[1]) * s4[2];
    const auto* ro = std::get_if<ReducerOptions>(&o.opts);
    const bool keep = ro && ro->keep_dims;
    if (hw > 65536) return bad("Product of height and width can be at most 65536", "Product of height and width is " + std::to_string(hw));
    const bool same_q = tn(ifm).q == tn(ofm).q;
    if ((keep || !same_q) && hw > 4096)
      return bad("Product of height and width can be at most 4096 when the following is true: keep_dims is True or IFM and OFM quantization differ",
                 "Product of height and width is " + std::to_string(hw));
    if (r == 4 && tn(ifm).type == TensorType::INT8 && keep && axes.size() == 2 && hw > 256)
      return bad("Product of IFM height and width must be at most 256 when the following is true: IFM is int8, keep_dims is True and axis is [1, 2]",
                 "Product of height and width is " + std::to_string(hw));
    return std::nullopt;
  }

  Shape4 mean_ifm4(const Op& o) {
    const Dims& s = tn(o.in[0]).shape;
    if (s.size() == 3) return {1, s[0], s[1], s[2]};
    if (s.size() == 2) return {1, s[0], s[1], 1};
    return full4(s);
  }

  /// Inputs an NPU-candidate operator must have (the leading ones may not be absent).
  static std::size_t required_inputs(BuiltinOperator b) {
    using B = BuiltinOperator;
    switch (b) {
      case B::TRANSPOSE_CONV: case B::SPLIT_V: case B::SLICE: return 3;
      case B::STRIDED_SLICE: return 4;
      case B::CONV_2D: case B::DEPTHWISE_CONV_2D: case B::FULLY_CONNECTED: case B::ADD: case B::SUB: case B::MUL:
      case B::MAXIMUM: case B::MINIMUM: case B::SPLIT: case B::PAD: case B::MEAN: return 2;
      default: return 1;
    }
  }

  void check_op(int id) {
    Op& o = op(id);
    const std::string bname(operator_name(o.builtin));
    if (!npu_candidate(o.builtin)) {
      o.npu = false;
      o.reason = {"CPU only op"};
      reasons.push_back({bname, o.name, o.reason});
      return;
    }
    // Vela itself fails on such operators; refuse them with one line instead.
    const std::size_t need = required_inputs(o.builtin);
    bool ok = o.in.size() >= need && !o.out.empty() && o.out[0] >= 0;
    for (std::size_t i = 0; ok && i < need; ++i)
      if (o.in[i] < 0) ok = false;
    if (!ok)
      fail("subgraphs[0].operators[" + std::to_string(o.op_index) + "]",
           bname + " '" + o.name + "' needs " + (need == 1 ? std::string("an input") : std::to_string(need) + " inputs") +
               " and an output");
    Failure f = generic_checks(o);
    if (!f) f = op_checks(o);
    if (f) {
      o.npu = false;
      o.reason = {"- " + f->first, f->second};
      reasons.push_back({bname, o.name, o.reason});
      return;
    }
    o.npu = true;
  }

  /// S1 in Vela's pre-order (consumer-first from the outputs): checks, and drops unreachable ops.
  void s1_check() {
    // Iterative depth-first walk (an explicit stack, so a long operator chain cannot overflow the
    // call stack); children are pushed in reverse so they pop in Vela's recursive order.
    std::vector<char> tvis(ts.size(), 0), ovis(ops.size(), 0);
    struct Item {
      bool is_op;
      int id;
    };
    std::vector<Item> stack;
    for (auto it = sg.outputs.rbegin(); it != sg.outputs.rend(); ++it) stack.push_back({false, *it});
    while (!stack.empty()) {
      const Item item = stack.back();
      stack.pop_back();
      const auto idx = static_cast<std::size_t>(item.id);
      if (!item.is_op) {
        if (tvis[idx]) continue;
        tvis[idx] = 1;
        const std::vector<int>& producers = tn(item.id).prod;
        for (auto it = producers.rbegin(); it != producers.rend(); ++it) stack.push_back({true, *it});
        continue;
      }
      if (ovis[idx]) continue;
      ovis[idx] = 1;
      check_op(item.id);
      std::vector<int> children;
      for (int i : op(item.id).in)
        if (i >= 0) children.push_back(i);
      for (int i : op(item.id).out)
        if (i >= 0) children.push_back(i);
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back({false, *it});
    }
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (!ovis[i]) ops[i].dead = true;
    link();
    for (Op& o : ops)
      if (!o.dead && o.npu) set_op_shapes(o);
  }

  void set_op_shapes(Op& o) {
    const int ifm = ifm_of(o), ifm2 = ifm2_of(o), ofm = ofm_of(o);
    auto fc4 = [&](const Dims& d) -> Shape4 { return d.size() == 2 ? Shape4{d[0], 1, 1, d[1]} : full4(d); };
    switch (o.s) {
      case S::Concat: case S::Pack: case S::Split: case S::SplitV: case S::Slice: case S::StridedSlice: case S::Unpack:
        for (int t : o.in) o.in_shapes.push_back(t >= 0 ? full4(tn(t).shape) : Shape4{1, 1, 1, 1});
        for (int t : o.out) o.out_shapes.push_back(t >= 0 ? full4(tn(t).shape) : Shape4{1, 1, 1, 1});
        break;
      case S::Softmax: {
        auto sm = [&](const Dims& d) -> Shape4 { return d.size() == 2 ? Shape4{d[0], 1, 1, d[1]} : full4(d); };
        o.ifm_s = sm(tn(ifm).shape);
        o.ofm_s = sm(tn(ofm).shape);
        break;
      }
      default:
        if (o.builtin == BuiltinOperator::FULLY_CONNECTED) {
          o.ifm_s = fc4(tn(ifm).shape);
          o.ofm_s = fc4(tn(ofm).shape);
        } else {
          if (ifm >= 0) o.ifm_s = full4(tn(ifm).shape);
          if (ifm2 >= 0) o.ifm2_s = full4(tn(ifm2).shape);
          if (ofm >= 0) o.ofm_s = full4(tn(ofm).shape);
        }
    }
    // Roles of the compute ops: in[0] = IFM, in[1] = weights / IFM2, in[2] = bias.
    if (o.builtin == BuiltinOperator::CONV_2D || o.builtin == BuiltinOperator::DEPTHWISE_CONV_2D ||
        o.builtin == BuiltinOperator::FULLY_CONNECTED) {
      o.weights = weights_of(o);
      o.bias = bias_of(o);
      const Dims& ws = tn(o.weights).shape;
      if (ws.empty() || (o.builtin != BuiltinOperator::FULLY_CONNECTED && ws.size() != 4))
        fail("subgraphs[0].operators[" + std::to_string(o.op_index) + "]",
             "weight tensor '" + tn(o.weights).name + "' has shape " + py_list(ws) + ", which the NPU cannot use");
      if (o.builtin == BuiltinOperator::CONV_2D) {
        o.wshape = ws;
        o.k.w = ws[2];
        o.k.h = ws[1];
      } else if (o.builtin == BuiltinOperator::DEPTHWISE_CONV_2D) {
        o.wshape = {ws[3], ws[1], ws[2], 1};
        o.k.w = ws[2];
        o.k.h = ws[1];
      } else {
        o.wshape = {ws[0], 1, 1, ws.size() > 1 ? ws[1] : 1};
      }
      o.bias_len = o.wshape[0];
    }
  }

  // ---------------- S2: CONCATENATION and PACK (4.2) ----------------
  void s2_concat() {
    const std::size_t n = ops.size();
    for (std::size_t id = 0; id < n; ++id) {
      Op& o = ops[id];
      if (o.dead || !o.npu || (o.s != S::Concat && o.s != S::Pack)) continue;
      if (o.s == S::Concat && o.act != NpuActivation::None)
        fail("subgraphs[0].operators[" + std::to_string(o.op_index) + "]",
             "CONCATENATION '" + o.name + "' with a fused activation on the NPU makes Vela 2.1 fail with an internal assertion");
      const int ofm = o.out[0];
      int axis4 = 0;
      std::vector<Shape4> ishapes = o.in_shapes;
      if (o.s == S::Concat) {
        const int r = static_cast<int>(tn(ofm).shape.size());
        int axis = std::get<ConcatenationOptions>(o.opts).axis;
        if (axis < 0) axis += r;
        axis4 = axis + 4 - r;
      } else {
        // PACK: the new axis (PackOptions.axis, field 1; default 0); negative counts from rank + 1.
        const int r = o.in.empty() ? 0 : static_cast<int>(tn(o.in[0]).shape.size());
        int axis = raw_option_int(o.op_index, 1).value_or(0);
        if (axis < 0) axis += r + 1;
        axis = std::clamp(axis, 0, r);
        axis4 = axis + 4 - (r + 1);
        for (std::size_t i = 0; i < o.in.size(); ++i) {
          if (o.in[i] < 0) continue;
          Dims d = tn(o.in[i]).shape;
          d.insert(d.begin() + std::min<std::ptrdiff_t>(axis, static_cast<std::ptrdiff_t>(d.size())), 1);
          ishapes[i] = full4(d);
        }
      }
      const Shape4 ofm4 = o.out_shapes.at(0);
      const std::string name = o.name;
      const std::vector<int> ins = o.in;
      o.dead = true;
      std::int32_t offset = 0;
      for (std::size_t i = 0; i < ins.size(); ++i) {
        if (ins[i] < 0) continue;
        Op w = make(VelaOpType::AvgPool, name + std::to_string(i) + "_avgpool", {ins[i]}, {ofm});
        w.ifm_s = ishapes[i];
        w.ofm_s = ofm4;
        w.ofm_off[static_cast<std::size_t>(axis4)] = offset;
        offset += ishapes[i][static_cast<std::size_t>(axis4)];
        w.has_padding_attr = true;
        w.pad = NpuPadding::Valid;
        w.op_index = ops[id].op_index;
        new_op(std::move(w));
      }
    }
    link();
  }

  // ---------------- S3/S4: split family (4.3) ----------------
  void s3_split() {
    const std::size_t n = ops.size();
    for (std::size_t id = 0; id < n; ++id) {
      Op& o = ops[id];
      if (o.dead || !o.npu) continue;
      if (o.s != S::Split && o.s != S::SplitV && o.s != S::Slice && o.s != S::StridedSlice && o.s != S::Unpack) continue;
      const int src = o.s == S::Split ? o.in.at(1) : o.in.at(0);
      if (o.s == S::Split && o.out.size() == 1) {
        o.s = S::Identity;
        o.in = {src};
        continue;
      }
      const Dims& is = tn(src).shape;
      const int r = static_cast<int>(is.size());
      std::vector<Shape4> offsets(o.out.size(), Shape4{0, 0, 0, 0});
      if (o.s == S::Split || o.s == S::SplitV || o.s == S::Unpack) {
        int axis = o.s == S::Unpack ? raw_option_int(o.op_index, 1).value_or(0) : 0;  // UnpackOptions.axis
        if (o.s == S::Split) {
          const auto a = ints(o.in[0]);
          axis = a.empty() ? 0 : static_cast<int>(a[0]);
        } else if (o.s == S::SplitV) {
          const auto a = ints(o.in.size() > 2 ? o.in[2] : -1);
          axis = a.empty() ? 0 : static_cast<int>(a[0]);
        }
        int axis4 = 0;
        if (o.s == S::Unpack) {
          if (axis < 0) axis += r;
          axis4 = axis + 4 - r;  // rank of the input = rank(output) + 1
          for (std::size_t i = 0; i < o.out.size(); ++i) {
            Dims d = tn(o.out[i]).shape;
            d.insert(d.begin() + std::min<int>(std::max(axis, 0), static_cast<int>(d.size())), 1);
            o.out_shapes[i] = full4(d);
          }
        } else {
          if (axis < 0) axis += r;
          axis4 = axis + 4 - r;
        }
        axis4 = std::clamp(axis4, 0, 3);
        std::int32_t off = 0;
        for (std::size_t i = 0; i < o.out.size(); ++i) {
          offsets[i][static_cast<std::size_t>(axis4)] = off;
          off += o.out_shapes[i][static_cast<std::size_t>(axis4)];
        }
      } else {
        std::vector<std::int64_t> begin;
        if (o.s == S::Slice) {
          begin = ints(o.in.size() > 1 ? o.in[1] : -1);
        } else {
          begin = slice_bounds(o).first;
          const auto* so = std::get_if<StridedSliceOptions>(&o.opts);
          if (so && (so->shrink_axis_mask || so->new_axis_mask)) {
            Dims d = tn(o.out[0]).shape;
            if (so->shrink_axis_mask) {
              Dims full;
              std::size_t j = 0;
              for (int i = 0; i < r; ++i) full.push_back((so->shrink_axis_mask & (1 << i)) ? 1 : (j < d.size() ? d[j++] : 1));
              d = full;
            } else {
              Dims kept;
              for (std::size_t i = 0; i < d.size(); ++i)
                if (!(so->new_axis_mask & (1 << i))) kept.push_back(d[i]);
              d = kept;
            }
            o.out_shapes[0] = full4(d);
          }
        }
        const std::size_t nb = std::min<std::size_t>(begin.size(), 4);
        for (std::size_t i = 0; i < nb; ++i)
          offsets[0][4 - nb + i] = static_cast<std::int32_t>(begin[begin.size() - nb + i]);
      }
      const Shape4 in4 = full4(is);
      const std::string name = o.name;
      const std::vector<int> outs = o.out;
      const std::vector<Shape4> oshapes = o.out_shapes;
      const int op_index = o.op_index;
      o.dead = true;
      for (std::size_t i = 0; i < outs.size(); ++i) {
        Op r2;
        r2.s = S::SplitSliceRead;
        r2.name = name;
        r2.in = {src};
        r2.out = {outs[i]};
        r2.ifm_s = in4;
        r2.ofm_s = oshapes[i];
        r2.ifm_off = offsets[i];
        r2.op_index = op_index;
        new_op(std::move(r2));
      }
    }
    link();
  }

  // ---------------- S5/S6: RESHAPE (4.4, 4.5) and memory-only aliases ----------------
  bool boundary_in(int t) { return tn(t).gin || tn(t).is_const || tn(t).gout || cpu_produced(t); }
  bool boundary_out(int t) { return tn(t).gout || cpu_consumed(t); }

  void s5_reshape_copy() {
    const std::size_t n = ops.size();
    for (std::size_t id = 0; id < n; ++id) {
      if (ops[id].dead || !ops[id].npu || ops[id].s != S::Reshape) continue;
      const int in = ops[id].in[0], out = ops[id].out[0];
      if (!(boundary_in(in) && boundary_out(out))) continue;
      const int copy = clone_tensor(in, "_avgpool");
      const std::vector<int> consumers = tn(in).cons;
      for (int c : consumers) replace_input(c, in, copy);
      Op a = make(VelaOpType::AvgPool, tn(in).name + "_avgpool", {in}, {copy});
      a.ifm_s = a.ofm_s = full4(tn(in).shape);
      a.has_padding_attr = true;
      a.pad = NpuPadding::Valid;
      new_op(std::move(a));
      link();
    }
  }

  /// Removes `o` (a one-in one-out alias op), rewiring as 4.5 describes.
  void bypass(int id) {
    Op& o = op(id);
    const int in = o.in.at(0), out = o.out.at(0);
    o.dead = true;
    link();
    const bool out_boundary = tn(out).gout || cpu_consumed(out);
    if (out_boundary && !tn(in).prod.empty() && !tn(in).gout && !tn(in).gin) {
      for (int p : tn(in).prod)
        for (int& x : op(p).out)
          if (x == in) x = out;
      const std::vector<int> consumers = tn(in).cons;
      for (int c : consumers) replace_input(c, in, out);
    } else {
      const std::vector<int> consumers = tn(out).cons;
      for (int c : consumers) replace_input(c, out, in);
      if (tn(out).gout) tn(in).gout = true;
    }
    link();
  }

  void s6_reshape_removal() {
    for (std::size_t id = 0; id < ops.size(); ++id) {
      Op& o = ops[id];
      if (o.dead) continue;
      const bool reshape_like = o.s == S::Reshape || o.s == S::Squeeze || o.s == S::ExpandDims;
      if (!reshape_like || o.in.empty() || o.out.empty() || o.in[0] < 0) continue;
      // NPU RESHAPEs with equal quantisation are removed (4.5); the rest are memory-only passes that
      // alias input and output (no requantisation), which vanish from the pass list just the same.
      bypass(static_cast<int>(id));
    }
  }

  // ---------------- S7: the per-op rewrites (4.6) ----------------
  void s7_rewrites() {
    for (std::size_t id = 0; id < ops.size(); ++id) {
      if (ops[id].dead || !ops[id].npu) continue;
      const int i = static_cast<int>(id);
      auto live = [&]() { return !ops[id].dead && ops[id].npu; };
      if (ops[id].s == S::Mean) r2_mean(i);
      if (live() && ops[id].s == S::Compute && ops[id].vt == VelaOpType::DepthwiseConv2DBias) r3_dw_multiplier(i);
      if (live() && opt.vela_rewrites && ops[id].s == S::Compute && ops[id].vt == VelaOpType::Conv2DBias) r4_conv_fc(i);
      if (live() && ops[id].s == S::Softmax) r5_softmax(i);
      if (live() && opt.vela_rewrites && ops[id].s == S::Compute && ops[id].vt == VelaOpType::Conv2DBias) r6_first_layer(i);
      if (live() && ops[id].s == S::HardSwish) make_lut(i, LutKind::HardSwish, "_lut_hardswish");
      if (live() && ops[id].s == S::Compute && ops[id].vt == VelaOpType::FullyConnected) r8_r9_fc(i);
      if (live() && ops[id].s == S::Compute && ops[id].vt == VelaOpType::Conv2DBackpropInputSwitchedBias) r10_tconv(i);
      if (live() && ops[id].s == S::Compute) r11_relu(i);
      if (live() && ops[id].s == S::Compute && ops[id].vt == VelaOpType::ResizeBilinear) r14_resize(i);
      if (live() && opt.vela_rewrites && ops[id].s == S::Compute && ops[id].vt == VelaOpType::Maximum) r16_mul_max(i);
      if (live() && ops[id].s == S::Compute && ops[id].vt == VelaOpType::LeakyRelu &&
          ops[id].builtin == BuiltinOperator::LEAKY_RELU && !ops[id].rewritten)
        r17_leaky(i);
      if (live() && ops[id].s == S::Compute && (ops[id].vt == VelaOpType::Sigmoid || ops[id].vt == VelaOpType::Tanh)) r18_lut(i);
      if (live() && opt.vela_rewrites && ops[id].s == S::Compute) r19_pad(i);
    }
    link();
  }

  void r2_mean(int id) {
    Op& o = op(id);
    const int ifm = o.in[0], ofm = o.out[0];
    const std::size_t r = tn(ifm).shape.size();
    auto axes = ints(o.in.size() > 1 ? o.in[1] : -1);
    for (auto& a : axes)
      if (a < 0) a += static_cast<std::int64_t>(r);
    std::sort(axes.begin(), axes.end());
    Shape4 s4 = mean_ifm4(o);
    std::int32_t h = 1, w = 1;
    if (axes.size() == 2) {
      h = s4[1];
      w = s4[2];
    } else if (axes.size() == 1) {
      const std::int64_t a4 = r == 4 ? axes[0] : axes[0] + 1;
      if (a4 == 1) h = s4[1];
      else w = s4[2];
    }
    if (h > 64) s4 = {s4[0], 1, h * w, s4[3]};
    const auto* ro = std::get_if<ReducerOptions>(&o.opts);
    const bool keep = ro && ro->keep_dims;
    const std::string name = o.name;
    o.s = S::Compute;
    o.in = {ifm};
    o.ifm_s = s4;
    o.ofm_s = full4(tn(ofm).shape);
    o.has_padding_attr = true;
    o.pad = NpuPadding::Valid;
    o.k = {};
    if (r == 4 && axes.size() == 2 && keep && tn(ifm).type == TensorType::INT8) {
      // Case 1: DW sum into an int16 intermediate, then a Mul by 1/n.
      o.vt = VelaOpType::DepthwiseConv2DBias;
      o.k.w = s4[2];
      o.k.h = s4[1];
      o.wshape = {s4[3], s4[1], s4[2], 1};
      o.bias_len = s4[3];
      const NpuActivation act = o.act;
      o.act = NpuActivation::None;
      Dims is{1, 1, 1, s4[3]};
      const int mid = new_tensor(name + "_intermediate", is, TensorType::INT16, tn(ofm).q);
      o.out = {mid};
      o.ofm_s = {1, 1, 1, s4[3]};
      const int one = new_tensor(name + "_mul_const", {1, 1, 1, 1}, TensorType::UINT8, {}, true);
      Op m = make(VelaOpType::Mul, name + "_mul", {mid, one}, {ofm});
      m.ifm_s = {1, 1, 1, s4[3]};
      m.ifm2_s = {1, 1, 1, 1};
      m.ofm_s = full4(tn(ofm).shape);
      m.act = act;
      m.op_index = o.op_index;
      new_op(std::move(m));
      return;
    }
    if (tn(ifm).q == tn(ofm).q) {
      o.vt = VelaOpType::AvgPool;
      o.k.h = h > 256 ? 1 : h;
      o.k.w = h > 256 ? h * w : w;
      return;
    }
    o.vt = VelaOpType::DepthwiseConv2DBias;
    o.k.w = s4[2];
    o.k.h = s4[1];
    o.wshape = {s4[3], s4[1], s4[2], 1};
    o.bias_len = s4[3];
  }

  void r3_dw_multiplier(int id) {
    Op& o = op(id);
    if (o.weights < 0 || o.wshape.empty()) return;
    const int ic = o.ifm_s[3];
    const int m = ic ? tn(o.weights).shape.back() / ic : 1;
    if (m <= 1) return;
    o.vt = VelaOpType::Conv2DBias;
    o.wshape = {m, o.k.h, o.k.w, 1};
  }

  void r4_conv_fc(int id) {
    Op& o = op(id);
    if (o.ifm_s[1] == 1 && o.ifm_s[2] == 1 && o.k.w == 1 && o.k.h == 1) {
      o.vt = VelaOpType::FullyConnected;
      o.name += "_fc";
      o.has_padding_attr = false;
      o.pad = NpuPadding::None;
      o.k = {};
    }
  }

  void r6_first_layer(int id) {
    Op& o = op(id);
    if (o.op_index != 0 || o.k.stride_w != 2 || o.ifm_s[3] > 4 || o.ifm_s[2] % 2 != 0 || o.k.w < 2) return;
    o.ifm_s = {o.ifm_s[0], o.ifm_s[1], o.ifm_s[2] / 2, o.ifm_s[3] * 2};
    const int kw = o.k.w + (o.k.w % 2);
    o.k.w = kw / 2;
    o.k.stride_w = 1;
    o.wshape = {o.wshape[0], o.k.h, kw / 2, o.wshape[3] * 2};
  }

  void r8_r9_fc(int id) {
    Op& o = op(id);
    const std::int32_t I = o.wshape.empty() ? o.ifm_s[3] : o.wshape[3];
    if (I <= 0) return;
    std::int64_t elems = 1;
    for (auto d : tn(o.in[0]).shape) elems *= d;
    const std::int32_t b = static_cast<std::int32_t>(elems / I);
    o.ifm_s = {b, 1, 1, I};
    if (b > 1) {
      std::int32_t h = 1, w = b;
      if (b == 4) h = 2, w = 2;
      else if (b == 8) h = 2, w = 4;
      else if (b == 16) h = 4, w = 4;
      o.ifm_s = {1, h, w, I};
      o.ofm_s = {1, h, w, o.ofm_s[3]};
    }
  }

  void r10_tconv(int id) {
    Op& o = op(id);
    if (o.wshape.empty()) {
      const int w = o.in.size() > 1 ? o.in[1] : -1;
      const int ifm = o.in.size() > 2 ? o.in[2] : -1;
      const int bias = o.in.size() > 3 ? o.in[3] : -1;
      o.in = {ifm, w, o.in[0], bias};
      o.weights = w;
      o.bias = bias;
      o.wshape = tn(w).shape;
      o.k.w = o.wshape[2];
      o.k.h = o.wshape[1];
      o.bias_len = o.wshape[0];
      o.ifm_s = full4(tn(ifm).shape);
      auto edge = [&](int in, int out, int k) {
        const int u = in ? out / in : 1;
        int after = 0;
        if (o.pad == NpuPadding::Same) {
          const int upsampled = in * u;
          const int total = std::max(0, (upsampled - 1) + k - upsampled);
          after = std::max((total + 1) / u - 1, 0);
        } else {
          after = std::max(k - 2, 0);
        }
        // The spec's synthetic checks (3x3 stride 2: SAME (2,2,0,0), VALID (2,2,1,1)) give a leading
        // pad of k - 1 in both modes.
        return std::make_pair(k - 1, after);
      };
      const auto [t, b] = edge(o.ifm_s[1], o.ofm_s[1], o.k.h);
      const auto [l, r] = edge(o.ifm_s[2], o.ofm_s[2], o.k.w);
      o.epad = {t, l, b, r};
      o.pad = NpuPadding::TransposeConv;
      o.k.stride_w = o.k.stride_h = 1;
    }
  }

  void r11_relu(int id) {
    Op& o = op(id);
    if (!(o.vt == VelaOpType::Relu || o.vt == VelaOpType::Relu6 || o.vt == VelaOpType::ReluN1To1)) return;
    if (o.builtin != BuiltinOperator::RELU && o.builtin != BuiltinOperator::RELU6 && o.builtin != BuiltinOperator::RELU_N1_TO_1)
      return;
    const int ifm = o.in[0], ofm = o.out[0];
    if (tn(ifm).q == tn(ofm).q) return;
    const NpuActivation a = o.vt == VelaOpType::Relu ? NpuActivation::Relu
                            : o.vt == VelaOpType::Relu6 ? NpuActivation::Relu6 : NpuActivation::ReluN1To1;
    o.vt = VelaOpType::AvgPool;
    o.name += "_avgpool";
    o.act = a;
    o.has_padding_attr = true;
    o.pad = NpuPadding::Valid;
    o.k = {};
  }

  void r14_resize(int id) {
    Op& o = op(id);
    if (o.builtin != BuiltinOperator::RESIZE_BILINEAR || o.rewritten) return;
    o.rewritten = true;
    const int ifm = o.in[0], ofm = o.out[0];
    const auto* ro = std::get_if<ResizeOptions>(&o.opts);
    const bool ac = ro && ro->align_corners;
    if (o.ifm_s == o.ofm_s) {
      o.s = S::Identity;
      o.in = {ifm};
      return;
    }
    if (o.ifm_s[1] == 1 && o.ifm_s[2] == 1) {
      o.vt = VelaOpType::Add;
      o.name += "_add";
      const int zeros = new_tensor(o.name + "_zeros", tn(ofm).shape, tn(ifm).type, tn(ifm).q, true);
      o.in = {zeros, ifm};
      o.ifm2_s = o.ifm_s;
      o.ifm_s = o.ofm_s;
      tn(ofm).q = tn(ifm).q;
      return;
    }
    // Chain of x2 upscales.
    std::vector<Shape4> steps;
    Shape4 cur = o.ifm_s;
    while (cur[1] < o.ofm_s[1] && steps.size() < 32) {
      const Shape4 next{cur[0], ac ? cur[1] * 2 - 1 : cur[1] * 2, ac ? cur[2] * 2 - 1 : cur[2] * 2, cur[3]};
      if (next[1] <= cur[1]) break;
      cur = next;
      steps.push_back(cur);
    }
    if (steps.empty()) fail("subgraphs[0].operators[" + std::to_string(o.op_index) + "]", "RESIZE_BILINEAR '" + o.name + "': no upscale chain");
    const std::string name = o.name;
    const Shape4 first_in = o.ifm_s;
    const int op_index = o.op_index;
    const NpuActivation act = o.act;
    o.dead = true;
    int prev = ifm;
    Shape4 prev_s = first_in;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const bool last = i + 1 == steps.size();
      const int out = last ? ofm : new_tensor(name + "_" + std::to_string(i + 1) + "_out",
                                              {steps[i][0], steps[i][1], steps[i][2], steps[i][3]}, TensorType::INT16, tn(ofm).q);
      Op r = make(VelaOpType::ResizeBilinear, i == 0 ? name : name + "_" + std::to_string(i), {prev}, {out});
      r.ifm_s = prev_s;
      r.ofm_s = steps[i];
      r.k = {2, 2, 1, 1, 1, 1};
      r.has_padding_attr = true;
      r.pad = ac ? NpuPadding::Valid : NpuPadding::Same;
      r.op_index = op_index;
      if (last) r.act = act;
      new_op(std::move(r));
      prev = out;
      prev_s = steps[i];
    }
  }

  void r16_mul_max(int id) {
    Op& mx = op(id);
    if (mx.builtin != BuiltinOperator::MAXIMUM || mx.in.size() < 2) return;
    for (int side = 0; side < 2; ++side) {
      const int x = mx.in[static_cast<std::size_t>(side)], m = mx.in[static_cast<std::size_t>(1 - side)];
      if (tn(m).prod.size() != 1) continue;
      Op& mul = op(tn(m).prod[0]);
      if (mul.dead || !mul.npu || mul.builtin != BuiltinOperator::MUL || mul.act != NpuActivation::None) continue;
      if (consumer_entries(m) != 1) continue;
      int c = -1;
      if (mul.in[0] == x) c = mul.in[1];
      else if (mul.in[1] == x) c = mul.in[0];
      if (c < 0 || !tn(c).shape.empty() || !tn(c).is_const) continue;
      const int out = mx.out[0];
      if (!is_8bit(tn(x).type) || tn(x).type != tn(out).type) continue;
      if (!(tn(x).q == tn(m).q && tn(x).q == tn(out).q)) continue;
      const auto cv = ints(c);
      if (cv.empty()) continue;
      const std::int64_t q = cv[0] - (tn(c).q.zero_point.empty() ? 0 : tn(c).q.zero_point[0]);
      const double value = static_cast<double>(q) * (tn(c).q.scale.empty() ? 1.0 : tn(c).q.scale[0]);
      if (value >= 0) {
        mx.vt = VelaOpType::LeakyRelu;
        mx.builtin = BuiltinOperator::LEAKY_RELU;
        mx.in = {x};
        link();
        return;
      }
      if (value == -1.0) {
        mx.vt = VelaOpType::Abs;
        mx.builtin = BuiltinOperator::ABS;
        mx.in = {x};
        link();
        return;
      }
    }
  }

  void r17_leaky(int id) {
    Op& o = op(id);
    const int ifm = o.in[0], ofm = o.out[0];
    if (is_8bit(tn(ifm).type) && tn(ifm).type == tn(ofm).type) {
      make_lut(id, LutKind::LeakyRelu, "_lut_lrelu");
      return;
    }
    if (tn(ifm).type == TensorType::INT16 && tn(ifm).q == tn(ofm).q) {
      o.rewritten = true;  // int16 with equal scaling: stays a LeakyRelu elementwise op
      return;
    }
    const std::string name = o.name;
    const Shape4 is = o.ifm_s, os = o.ofm_s;
    const NpuActivation act = o.act;
    o.dead = true;
    const int alpha = new_tensor(name + "_alpha", {}, tn(ifm).type, {}, true);
    const int fm_alpha = new_tensor(name + "_mul_alpha", tn(ofm).shape, tn(ofm).type, tn(ofm).q);
    Op m = make(VelaOpType::Mul, name + "_mul_alpha", {ifm, alpha}, {fm_alpha});
    m.ifm_s = is;
    m.ofm_s = os;
    new_op(std::move(m));
    int other = ifm;
    if (!(tn(ifm).q == tn(ofm).q)) {
      const int one = new_tensor(name + "_one", {}, tn(ifm).type, {}, true);
      other = new_tensor(name + "_mul_identity", tn(ofm).shape, tn(ofm).type, tn(ofm).q);
      Op mi = make(VelaOpType::Mul, name + "_mul_identity", {ifm, one}, {other});
      mi.ifm_s = is;
      mi.ofm_s = os;
      new_op(std::move(mi));
    }
    Op mx = make(VelaOpType::Maximum, name + "_maximum", {other, fm_alpha}, {ofm});
    mx.ifm_s = os;
    mx.ifm2_s = os;
    mx.ofm_s = os;
    mx.act = act;
    new_op(std::move(mx));
  }

  void r18_lut(int id) {
    Op& o = op(id);
    if (o.builtin != BuiltinOperator::LOGISTIC && o.builtin != BuiltinOperator::TANH) return;
    const int ifm = o.in[0], ofm = o.out[0];
    if (is_8bit(tn(ifm).type) && tn(ifm).type == tn(ofm).type)
      make_lut(id, o.vt == VelaOpType::Sigmoid ? LutKind::Sigmoid : LutKind::Tanh,
               o.vt == VelaOpType::Sigmoid ? "_lut_sigmoid" : "_lut_tanh");
  }

  /// The LUT op of 4.6: a no-op Add of scalar 0 whose activation is a table lookup.
  void make_lut(int id, LutKind kind, const std::string& suffix) {
    Op& o = op(id);
    const int ifm = o.in[0], ofm = o.out[0];
    NpuQuant zq = tn(ifm).q;
    zq.zero_point.assign(zq.scale.empty() ? 0 : 1, 0);
    const std::string name = o.name + suffix;
    const int zero = new_tensor(name + "_zero", {}, tn(ifm).type, zq, true);
    Op& l = op(id);
    l.s = S::Compute;
    l.vt = VelaOpType::Add;
    l.builtin = BuiltinOperator::ADD;
    l.name = name;
    l.in = {ifm, zero};
    l.ifm2_s = {1, 1, 1, 1};
    l.noop_lut = true;
    l.act = NpuActivation::LUT;
    l.lut = kind;
    tn(ofm).q = tn(ifm).q;
  }

  /// R19: a VALID conv / DW / AvgPool reading a NPU PAD takes the padding in hardware.
  void r19_pad(int id) {
    Op& o = op(id);
    const VelaOpType vt = o.vt;
    if (!(vt == VelaOpType::Conv2DBias || vt == VelaOpType::DepthwiseConv2DBias || vt == VelaOpType::AvgPool)) return;
    if (o.pad != NpuPadding::Valid || o.in.empty()) return;
    link();
    const int ifm = o.in[0];
    if (tn(ifm).prod.size() != 1) return;
    const int pid = tn(ifm).prod[0];
    Op& p = op(pid);
    if (p.dead || !p.npu || p.s != S::Pad) return;
    const int pin = p.in[0];
    if (tn(pin).type != tn(ifm).type || !(tn(pin).q == tn(ifm).q) || !tn(pin).q.quantized()) return;
    const auto v = ints(p.in[1]);
    const std::size_t rows = v.size() / 2;
    if (rows < 3) return;
    const std::int64_t t = v[(rows - 3) * 2], b = v[(rows - 3) * 2 + 1], l = v[(rows - 2) * 2], r = v[(rows - 2) * 2 + 1];
    const int kh = (o.k.h - 1) * o.k.dilation_h + 1, kw = (o.k.w - 1) * o.k.dilation_w + 1;
    if (t > kh / 2 || b > kh / 2 || l > kw / 2 || r > kw / 2) return;
    auto lead_ok = [](std::int64_t pad, int k, int s) { return pad == k / 2 || k / 2 <= s || pad % s == 0; };
    if (!lead_ok(t, kh, o.k.stride_h) || !lead_ok(l, kw, o.k.stride_w)) return;
    if (vt == VelaOpType::AvgPool) {
      for (auto x : {t, b, l, r})
        if (x != 0 && x != kh / 2 && x != kw / 2) return;
      o.vt = VelaOpType::DepthwiseConv2DBias;
      o.wshape = {o.ofm_s[3], o.k.h, o.k.w, 1};
      o.bias_len = o.ofm_s[3];
    }
    o.in[0] = pin;
    o.pad = NpuPadding::Explicit;
    o.epad = {static_cast<std::int32_t>(t), static_cast<std::int32_t>(l), static_cast<std::int32_t>(b), static_cast<std::int32_t>(r)};
    o.ifm_s = full4(tn(pin).shape);
    link();
    if (tn(ifm).cons.empty() && !tn(ifm).gout) p.dead = true;
  }

  // ---------------- S5 (softmax) decomposition (4.10) ----------------
  void r5_softmax(int id) {
    Op& o = op(id);
    const int ifm = o.in[0], ofm = o.out[0];
    const TensorType it = tn(ifm).type, ot = tn(ofm).type;
    Shape4 s = o.ifm_s;
    if (s[0] > 1) s = {1, s[0] * s[1], s[2], s[3]};
    if (!((is_8bit(it) && it == ot) || (it == TensorType::INT16 && ot == TensorType::INT16))) {
      o.npu = false;  // R5 moves it to the CPU (3.3 already rules this out)
      return;
    }
    const std::string name = o.name;
    const int op_index = o.op_index;
    o.dead = true;
    const Shape4 rr{1, s[1], s[2], 1}, one{1, 1, 1, 1};
    const Dims sd{s[0], s[1], s[2], s[3]}, rd{1, s[1], s[2], 1};
    const NpuQuant q1{{1.0f}, {0}}, q2{{2.0f}, {0}};
    auto cst = [&](const std::string& n) { return new_tensor(name + "_" + n, {1, 1, 1, 1}, TensorType::INT32, q1, true); };
    auto add = [&](VelaOpType vt, const std::string& n, std::vector<int> in, int out, Shape4 a, Shape4 b, Shape4 c,
                   NpuActivation act = NpuActivation::Clip) {
      Op x = make(vt, name + "_" + n, std::move(in), {out});
      x.ifm_s = a;
      x.ifm2_s = b;
      x.ofm_s = c;
      x.act = act;
      x.op_index = op_index;
      return new_op(std::move(x));
    };
    const Shape4 mp_in{1, s[1] * s[2], s[3], 1}, mp_out{1, s[1] * s[2], 1, 1};
    const int t0 = new_tensor(name + "_maxpool0_tens0", {1, s[1] * s[2], 1, 1}, it, tn(ifm).q);
    {
      Op mp = make(VelaOpType::MaxPool, name + "_maxpool0", {ifm}, {t0});
      mp.ifm_s = mp_in;
      mp.ofm_s = mp_out;
      mp.k = {s[3], 1, 1, 1, 1, 1};
      mp.has_padding_attr = true;
      mp.pad = NpuPadding::Valid;
      mp.op_index = op_index;
      new_op(std::move(mp));
    }
    auto fm = [&](const std::string& n, const Dims& d, TensorType ty = TensorType::INT32, NpuQuant q = {}) {
      return new_tensor(name + "_" + n + "_tens0", d, ty, std::move(q));
    };
    if (it == TensorType::INT16) {
      const int t1 = fm("sub1", sd);
      add(VelaOpType::Sub, "sub1", {ifm, t0}, t1, s, rr, s, NpuActivation::None);
      const int t2 = fm("mul2", sd);
      add(VelaOpType::Mul, "mul2", {t1, cst("mul2_const")}, t2, s, one, s, NpuActivation::None);
      const int t3 = fm("add3", sd, TensorType::INT16);
      const int a3 = add(VelaOpType::Add, "add3", {t2, cst("add3_const")}, t3, s, one, s, NpuActivation::LUT);
      op(a3).lut = LutKind::SoftmaxExp16;
      const int t4 = fm("reduce_sum4", rd);
      add(VelaOpType::ReduceSum, "reduce_sum4", {t3}, t4, s, one, rr, NpuActivation::None);
      const int t5 = fm("clz5", rd);
      add(VelaOpType::CLZ, "clz5", {t4}, t5, rr, one, rr, NpuActivation::None);
      const int t6 = fm("sub6", rd);
      add(VelaOpType::Sub, "sub6", {cst("sub6_const"), t5}, t6, one, rr, rr, NpuActivation::None);
      const int t7 = fm("shl7", rd);
      add(VelaOpType::SHL, "shl7", {cst("shl7_const"), t6}, t7, one, rr, rr, NpuActivation::None);
      const int t8 = fm("sub8", rd);
      add(VelaOpType::Sub, "sub8", {t4, t7}, t8, rr, rr, rr, NpuActivation::None);
      const int t9 = fm("shl9", rd);
      add(VelaOpType::SHL, "shl9", {t8, t5}, t9, rr, rr, rr, NpuActivation::None);
      const int t10 = fm("shr10", rd);
      add(VelaOpType::SHR, "shr10", {t9, cst("shr10_const")}, t10, rr, one, rr, NpuActivation::None);
      const int t11 = fm("sub11", rd, TensorType::INT16);
      const int a11 = add(VelaOpType::Sub, "sub11", {t10, cst("sub11_const")}, t11, rr, one, rr, NpuActivation::LUT);
      op(a11).lut = LutKind::SoftmaxReciprocal16;
      const int t12 = fm("mul12", sd);
      add(VelaOpType::Mul, "mul12", {t3, t11}, t12, s, rr, s, NpuActivation::None);
      add(VelaOpType::SHR, "shr13", {t12, t6}, ofm, s, rr, s, NpuActivation::None);
      return;
    }
    const int t1 = fm("sub1", sd, TensorType::INT32, NpuQuant{{1.0f}, {127}});
    const int a1 = add(VelaOpType::Sub, "sub1", {ifm, t0}, t1, s, rr, s, NpuActivation::LUT);
    op(a1).lut = LutKind::SoftmaxExp;
    const int t2 = fm("shr2", sd);
    add(VelaOpType::SHR, "shr2", {t1, cst("shr2_const")}, t2, s, one, s);
    const int t3 = fm("reduce_sum3", rd);
    add(VelaOpType::ReduceSum, "reduce_sum3", {t2}, t3, s, one, rr);
    const int t4 = fm("clz4", rd);
    add(VelaOpType::CLZ, "clz4", {t3}, t4, rr, one, rr);
    const int t5 = fm("sub5", rd);
    add(VelaOpType::Sub, "sub5", {cst("sub5_const"), t4}, t5, one, rr, rr);
    const int t6 = fm("sub6", rd);
    add(VelaOpType::Sub, "sub6", {t4, cst("sub6_const")}, t6, rr, one, rr);
    const int t7 = fm("shl7", rd);
    add(VelaOpType::SHL, "shl7", {t3, t6}, t7, rr, rr, rr);
    const int t8 = fm("sub8", rd);
    add(VelaOpType::Sub, "sub8", {t7, cst("sub8_const")}, t8, rr, one, rr);
    const int t9 = fm("shl9", rd);
    add(VelaOpType::SHL, "shl9", {t8, cst("shl9_const")}, t9, rr, one, rr);
    const int t10 = fm("add10", rd, TensorType::INT32, q1);
    add(VelaOpType::RescaleAdd, "add10", {cst("add10_const"), t9}, t10, one, rr, rr);
    const int t11 = fm("mul11", rd, TensorType::INT32, q2);
    add(VelaOpType::Mul, "mul11", {t10, cst("mul11_const")}, t11, rr, one, rr);
    const int t12 = fm("add12", rd, TensorType::INT32, q1);
    add(VelaOpType::Add, "add12", {t11, cst("add12_const")}, t12, rr, one, rr);
    int x = t12;
    const int d = t10;
    int idx = 13;
    for (int round = 0; round < 3; ++round) {
      auto nm = [&](const char* k) { return std::string(k) + std::to_string(idx++); };
      const std::string n1 = nm("mul");
      const int a = fm(n1, rd, TensorType::INT32, q2);
      add(VelaOpType::Mul, n1, {x, d}, a, rr, rr, rr);
      const std::string n2 = nm("sub");
      const int b = fm(n2, rd, TensorType::INT32, q1);
      add(VelaOpType::Sub, n2, {cst(n2 + "_const"), a}, b, one, rr, rr);
      const std::string n3 = nm("mul");
      const int c = fm(n3, rd, TensorType::INT32, q2);
      add(VelaOpType::Mul, n3, {x, b}, c, rr, rr, rr);
      const std::string n4 = nm("mul");
      const int c4 = fm(n4, rd);
      add(VelaOpType::Mul, n4, {c, cst(n4 + "_const")}, c4, rr, one, rr);
      const std::string n5 = nm("add");
      const int nx = fm(n5, rd, TensorType::INT32, q1);
      add(VelaOpType::Add, n5, {x, c4}, nx, rr, rr, rr);
      x = nx;
    }
    const int t28 = fm("mul28", rd, TensorType::INT32, q1);
    add(VelaOpType::Mul, "mul28", {x, cst("mul28_const")}, t28, rr, one, rr);
    const int t29 = fm("mul29", sd, TensorType::INT32, q2);
    add(VelaOpType::Mul, "mul29", {t1, t28}, t29, s, rr, s);
    const int last = add(VelaOpType::SHR, "shr30", {t29, t5}, ofm, s, rr, s, NpuActivation::None);
    op(last).ofm_s = s;
  }

  // ---------------- S8 (4.7) ----------------
  void s8() {
    link();
    // Identity bypass.
    for (std::size_t id = 0; id < ops.size(); ++id)
      if (!ops[id].dead && ops[id].s == S::Identity) bypass(static_cast<int>(id));
    // LUT fusion.
    if (opt.vela_rewrites && lut_banks) {
      for (std::size_t id = 0; id < ops.size(); ++id) {
        Op& l = ops[id];
        if (l.dead || !l.noop_lut) continue;
        const int ifm = l.in[0];
        if (tn(ifm).prod.size() != 1) continue;
        Op& p = op(tn(ifm).prod[0]);
        if (p.dead || !p.npu || p.s != S::Compute) continue;
        if (block_of(p.vt) == NpuBlockType::Default) continue;
        if (consumer_entries(ifm) != 1 || p.act != NpuActivation::None) continue;
        p.act = NpuActivation::LUT;
        p.lut = l.lut;
        for (int& o : p.out)
          if (o == ifm) o = l.out[0];
        l.dead = true;
        link();
      }
    }
    // PAD fallback.
    for (std::size_t id = 0; id < ops.size(); ++id) {
      if (ops[id].dead || !ops[id].npu || ops[id].s != S::Pad) continue;
      pad_fallback(static_cast<int>(id));
    }
    link();
    // Explicit padding.
    for (Op& o : ops)
      if (!o.dead && o.npu && o.s == S::Compute && o.has_padding_attr) resolve_padding(o);
  }

  void pad_fallback(int id) {
    Op& p = op(id);
    const int ifm = p.in[0], ofm = p.out[0];
    const auto v = ints(p.in[1]);
    const std::size_t rows = v.size() / 2;
    if (rows < 3) fail("subgraphs[0].operators[" + std::to_string(p.op_index) + "]", "PAD '" + p.name + "': unreadable paddings");
    const auto t = static_cast<std::int32_t>(v[(rows - 3) * 2]), b = static_cast<std::int32_t>(v[(rows - 3) * 2 + 1]);
    const auto l = static_cast<std::int32_t>(v[(rows - 2) * 2]), r = static_cast<std::int32_t>(v[(rows - 2) * 2 + 1]);
    const std::string name = p.name;
    const Shape4 is = full4(tn(ifm).shape), os = full4(tn(ofm).shape);
    const NpuActivation act = p.act;
    const int op_index = p.op_index;
    p.dead = true;
    auto write = [&](const std::string& suffix, int src, Shape4 src_s, Shape4 off, NpuActivation a) {
      Op w = make(VelaOpType::AvgPool, name + suffix, {src}, {ofm});
      w.ifm_s = src_s;
      w.ofm_s = os;
      w.ofm_off = off;
      w.act = a;
      w.has_padding_attr = true;
      w.pad = NpuPadding::Valid;
      w.op_index = op_index;
      new_op(std::move(w));
    };
    write("_main", ifm, is, {0, t, l, 0}, act);
    auto zeros = [&](const std::string& suffix, Shape4 s) {
      return new_tensor(name + suffix + "_zeros", {s[0], s[1], s[2], s[3]}, tn(ofm).type, tn(ofm).q, true);
    };
    if (t > 0) { const Shape4 s{1, t, os[2], os[3]}; write("_top", zeros("_top", s), s, {0, 0, 0, 0}, NpuActivation::None); }
    if (b > 0) { const Shape4 s{1, b, os[2], os[3]}; write("_bottom", zeros("_bottom", s), s, {0, os[1] - b, 0, 0}, NpuActivation::None); }
    if (l > 0) { const Shape4 s{1, is[1], l, os[3]}; write("_left", zeros("_left", s), s, {0, t, 0, 0}, NpuActivation::None); }
    if (r > 0) { const Shape4 s{1, is[1], r, os[3]}; write("_right", zeros("_right", s), s, {0, t, os[2] - r, 0}, NpuActivation::None); }
  }

  static void resolve_padding(Op& o) {
    if (o.pad == NpuPadding::TransposeConv) return;
    const int kh = (o.k.h - 1) * o.k.dilation_h + 1, kw = (o.k.w - 1) * o.k.dilation_w + 1;
    auto same_total = [](int in, int s, int k) {
      const int out = (in + s - 1) / s;
      return std::max(0, (out - 1) * s + k - in);
    };
    const int th = same_total(o.ifm_s[1], std::max(o.k.stride_h, 1), kh);
    const int tw = same_total(o.ifm_s[2], std::max(o.k.stride_w, 1), kw);
    if (o.pad == NpuPadding::Same) {
      o.epad = {th / 2, tw / 2, th - th / 2, tw - tw / 2};
    } else if (o.pad == NpuPadding::Valid) {
      o.epad = {0, 0, 0, 0};
    } else if (o.pad == NpuPadding::Explicit) {
      auto after = [](int before, int a, int s, int total) {
        while (a > 0 && a % s != ((total - before) % s + s) % s) --a;
        return a;
      };
      o.epad[2] = after(o.epad[0], o.epad[2], std::max(o.k.stride_h, 1), th);
      o.epad[3] = after(o.epad[1], o.epad[3], std::max(o.k.stride_w, 1), tw);
    }
  }

  // ---------------- S9: SplitSliceRead removal (4.8) ----------------
  void s9() {
    link();
    for (std::size_t id = 0; id < ops.size(); ++id) {
      Op& r = ops[id];
      if (r.dead || r.s != S::SplitSliceRead) continue;
      const int out = r.out[0];
      bool fold = consumer_entries(out) == 1 && !tn(out).gout;
      if (fold) {
        const Op& c = op(tn(out).cons[0]);
        fold = c.npu && c.s == S::Compute && r.ofm_s == full4(tn(out).shape);
      }
      if (fold) {
        Op& c = op(tn(out).cons[0]);
        const bool second = c.in.size() > 1 && c.in[1] == out && c.in[0] != out;
        if (second) {
          c.in[1] = r.in[0];
          c.ifm2_s = r.ifm_s;
          c.ifm2_off = r.ifm_off;
        } else {
          c.in[0] = r.in[0];
          c.ifm_s = r.ifm_s;
          c.ifm_off = r.ifm_off;
        }
        r.dead = true;
      } else {
        r.s = S::Compute;
        r.vt = VelaOpType::AvgPool;
        r.name += "_avgpool";
        r.has_padding_attr = true;
        r.pad = NpuPadding::Valid;
        r.k = {};
      }
      link();
    }
  }

  // ---------------- S13/S14: pass packing, order, NPU subgraphs (6) ----------------
  struct Group {
    std::vector<int> ops;  // execution order; primary first (or the created AvgPool slot)
    bool npu = true;
    bool created_avgpool = false;
    int primary = -1;
  };

  /// Drops ops no longer reachable from the graph outputs (a MUL absorbed by R16, a bypassed PAD).
  void prune() {
    link();
    std::vector<char> live_t(ts.size(), 0), live_o(ops.size(), 0);
    std::vector<int> stack(sg.outputs.begin(), sg.outputs.end());
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (ts[i].gout) stack.push_back(static_cast<int>(i));
    while (!stack.empty()) {
      const int t = stack.back();
      stack.pop_back();
      if (t < 0 || live_t[static_cast<std::size_t>(t)]) continue;
      live_t[static_cast<std::size_t>(t)] = 1;
      for (int p : tn(t).prod) {
        if (live_o[static_cast<std::size_t>(p)]) continue;
        live_o[static_cast<std::size_t>(p)] = 1;
        for (int i : op(p).in) stack.push_back(i);
      }
    }
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (!live_o[i]) ops[i].dead = true;
    link();
  }

  NpuGraph pack() {
    prune();
    for (std::size_t id = 0; id < ops.size(); ++id) {
      const Op& o = ops[id];
      if (o.dead) continue;
      if (o.npu && o.s != S::Compute)
        fail("subgraphs[0].operators[" + std::to_string(o.op_index) + "]",
             "internal: operator '" + o.name + "' was left unlowered on the NPU");
    }
    // Group membership: walk backwards from each op not yet claimed, consumers before producers.
    std::vector<int> group_of(ops.size(), -1);
    std::vector<Group> groups;
    std::vector<int> order = topo_order();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int start = *it;
      if (group_of[static_cast<std::size_t>(start)] >= 0) continue;
      Group g;
      g.npu = op(start).npu;
      std::vector<int> members{start};
      if (g.npu) {
        bool has_main = !(is_post(op(start).vt) || is_fuse_limited(op(start).vt));
        bool has_fl = is_fuse_limited(op(start).vt);
        bool has_mac = is_mac_main(op(start).vt), has_ew = is_elementwise_main(op(start).vt);
        int cur = start;
        while (!has_main) {
          const Op& c = op(cur);
          const int t = c.in.empty() ? -1 : c.in[0];
          if (t < 0 || tn(t).prod.size() != 1 || tn(t).gout) break;
          const int p = tn(t).prod[0];
          const Op& po = op(p);
          if (po.dead || !po.npu || group_of[static_cast<std::size_t>(p)] >= 0) break;
          if (consumer_entries(t) != 1 || po.out.size() != 1) break;
          if (po.ofm_s != c.ifm_s) break;
          if (is_post(po.vt) || is_fuse_limited(po.vt)) {
            has_fl = has_fl || is_fuse_limited(po.vt);
          } else if (is_mac_main(po.vt)) {
            if (has_fl || has_ew) break;
            has_main = has_mac = true;
          } else if (is_elementwise_main(po.vt)) {
            if (has_fl || has_mac) break;
            has_main = has_ew = true;
          } else {
            break;
          }
          members.push_back(p);
          cur = p;
        }
        g.created_avgpool = !has_main;
      }
      std::reverse(members.begin(), members.end());
      g.ops = members;
      g.primary = members.front();
      for (int m : members) group_of[static_cast<std::size_t>(m)] = static_cast<int>(groups.size());
      groups.push_back(std::move(g));
    }
    // Pass order (6.3): depth-first from the outputs, then reversed.
    std::vector<int> visits(ts.size(), 0);
    std::vector<char> emitted(groups.size(), 0);
    std::vector<int> seq;
    // Explicit stack: VisitTensor counts one use of a tensor; TryGroup packs a producer group once
    // all its outputs are complete, then visits the group's inputs in order (depth-first).
    struct Item {
      bool try_group;
      int id;
    };
    std::vector<Item> stack;
    for (auto it = sg.outputs.rbegin(); it != sg.outputs.rend(); ++it) stack.push_back({false, *it});
    while (!stack.empty()) {
      const Item item = stack.back();
      stack.pop_back();
      if (!item.try_group) {
        const int t = item.id;
        ++visits[static_cast<std::size_t>(t)];
        if (visits[static_cast<std::size_t>(t)] != consumer_entries(t)) continue;
        // Producers are tried in reverse order: the first tried goes on top of the stack.
        for (int p : tn(t).prod) stack.push_back({true, p});
        continue;
      }
      const int g = group_of[static_cast<std::size_t>(item.id)];
      if (g < 0 || emitted[static_cast<std::size_t>(g)]) continue;
      const Op& last = op(groups[static_cast<std::size_t>(g)].ops.back());
      bool complete = true;
      for (int o : last.out)
        if (o >= 0 && visits[static_cast<std::size_t>(o)] < consumer_entries(o)) complete = false;
      if (!complete) continue;
      emitted[static_cast<std::size_t>(g)] = 1;
      seq.push_back(g);
      if (!groups[static_cast<std::size_t>(g)].npu) {
        const std::string vt = vela_type_of(last.builtin);
        static const std::set<std::string> quiet{"Softmax", "LRN", "Shape", "Pad", "AddN", "Dequantize", "ReduceMax", "ReduceMin"};
        if (!quiet.count(vt)) warnings.push_back("Warning: " + vt + " operation is unknown or unsupported, placing on CPU");
      }
      const std::vector<int> ins = group_inputs(groups[static_cast<std::size_t>(g)]);
      for (auto it = ins.rbegin(); it != ins.rend(); ++it)
        if (*it >= 0) stack.push_back({false, *it});
    }
    // Groups never reached (e.g. ops whose outputs are consumed only by unreachable parts) go first.
    std::vector<int> final_order;
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (!emitted[g]) final_order.push_back(static_cast<int>(g));
    for (auto it = seq.rbegin(); it != seq.rend(); ++it) final_order.push_back(*it);
    return emit(groups, final_order);
  }



  /// Post-order walk over pass predecessors per NPU subgraph (see NpuGraph::report_order). A tensor
  /// written by several passes (a concatenation) lists its writers last-first.
  /// S10 (4.9) on the lowered graph: which feature maps may use NHCWB16.
  static void mark_layout_eligibility(NpuGraph& g) {
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
      LoweredTensor& x = g.tensors[t];
      const Shape4 whole = full4(x.shape);
      bool ok = !x.producers.empty() && !x.graph_input && !x.constant && !x.graph_output;
      // A tensor passed between two NPU subgraphs crosses the CPU graph: it stays NHWC (6.4), although
      // the graph optimiser, which runs before the NPU subgraphs are cut, has cleared its flag.
      bool one_subgraph = true;
      int sub = -1;
      for (const auto* list : {&x.producers, &x.consumers})
        for (const NodeRef& r : *list)
          if (r.kind == NodeRef::Kind::NpuPass) {
            const int s = g.passes[static_cast<std::size_t>(r.index)].npu_subgraph;
            if (sub >= 0 && s != sub) one_subgraph = false;
            sub = s;
          }
      for (const NodeRef& r : x.producers) {
        if (!ok) break;
        if (r.kind != NodeRef::Kind::NpuPass) { ok = false; break; }
        const NpuPass& p = g.passes[static_cast<std::size_t>(r.index)];
        ok = p.ofm_shape == whole && p.ofm_offset[3] % 16 == 0;
      }
      for (const NodeRef& r : x.consumers) {
        if (!ok) break;
        if (r.kind != NodeRef::Kind::NpuPass) { ok = false; break; }
        const NpuPass& p = g.passes[static_cast<std::size_t>(r.index)];
        const int id = static_cast<int>(t);
        if (p.ifm != id && p.ifm2 != id) continue;  // read as weights, bias or a created constant
        if (p.op_type == VelaOpType::ReduceSum && x.dtype == TensorType::INT32) { ok = false; break; }
        // Undo the command-generation swap to pair each operand with its own view.
        const Shape4& s1 = p.operands_reversed ? p.ifm2_shape : p.ifm_shape;
        const Shape4& s2 = p.operands_reversed ? p.ifm_shape : p.ifm2_shape;
        if (p.ifm == id) ok = ok && s1 == whole && p.ifm_offset[3] % 16 == 0;
        if (p.ifm2 == id) ok = ok && s2 == whole && p.ifm2_offset[3] % 16 == 0;
      }
      x.needs_linear_format = !ok;
      x.nhcwb16_eligible = ok && one_subgraph;
    }
  }

  static std::vector<int> make_report_order(const NpuGraph& g) {
    std::vector<int> order;
    const int n = static_cast<int>(g.passes.size());
    std::vector<std::vector<int>> preds(static_cast<std::size_t>(n));
    std::vector<char> has_succ(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      const NpuPass& p = g.passes[static_cast<std::size_t>(i)];
      for (int t : p.inputs) {
        const auto& prods = g.tensors[static_cast<std::size_t>(t)].producers;
        for (auto it = prods.rbegin(); it != prods.rend(); ++it) {
          if (it->kind != NodeRef::Kind::NpuPass) continue;
          if (g.passes[static_cast<std::size_t>(it->index)].npu_subgraph != p.npu_subgraph) continue;
          preds[static_cast<std::size_t>(i)].push_back(it->index);
          has_succ[static_cast<std::size_t>(it->index)] = 1;
        }
      }
    }
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    for (int sub = 1; sub <= g.npu_subgraph_count; ++sub) {
      for (int root = 0; root < n; ++root) {
        if (g.passes[static_cast<std::size_t>(root)].npu_subgraph != sub || has_succ[static_cast<std::size_t>(root)] ||
            seen[static_cast<std::size_t>(root)])
          continue;
        // Iterative post-order: (pass, next predecessor to try).
        std::vector<std::pair<int, std::size_t>> stack{{root, 0}};
        seen[static_cast<std::size_t>(root)] = 1;
        while (!stack.empty()) {
          auto& [node, next] = stack.back();
          const auto& ps = preds[static_cast<std::size_t>(node)];
          if (next < ps.size()) {
            const int pr = ps[next++];
            if (!seen[static_cast<std::size_t>(pr)]) {
              seen[static_cast<std::size_t>(pr)] = 1;
              stack.emplace_back(pr, 0);
            }
            continue;
          }
          order.push_back(node);
          stack.pop_back();
        }
      }
    }
    return order;
  }

  std::vector<int> group_inputs(const Group& g) {
    std::set<int> internal;
    for (int m : g.ops)
      for (int o : op(m).out) internal.insert(o);
    std::vector<int> ins;
    for (int m : g.ops)
      for (int i : op(m).in)
        if (i >= 0 && !internal.count(i)) ins.push_back(i);
    return ins;
  }

  std::vector<int> topo_order() {
    std::vector<int> indeg(ops.size(), 0), order;
    std::vector<std::vector<int>> succ(ops.size());
    for (std::size_t id = 0; id < ops.size(); ++id) {
      if (ops[id].dead) continue;
      std::set<int> preds;
      for (int i : ops[id].in)
        if (i >= 0)
          for (int p : tn(i).prod)
            if (p != static_cast<int>(id)) preds.insert(p);
      for (int p : preds) {
        succ[static_cast<std::size_t>(p)].push_back(static_cast<int>(id));
        ++indeg[id];
      }
    }
    std::vector<int> ready;
    for (std::size_t id = 0; id < ops.size(); ++id)
      if (!ops[id].dead && indeg[id] == 0) ready.push_back(static_cast<int>(id));
    for (std::size_t k = 0; k < ready.size(); ++k) {
      const int id = ready[k];
      order.push_back(id);
      for (int s : succ[static_cast<std::size_t>(id)])
        if (--indeg[static_cast<std::size_t>(s)] == 0) ready.push_back(s);
    }
    std::size_t live = 0;
    for (const Op& o : ops) live += o.dead ? 0 : 1;
    if (order.size() != live) fail("subgraphs[0]", "the lowered operator graph has a cycle");
    return order;
  }

  NpuGraph emit(const std::vector<Group>& groups, const std::vector<int>& order) {
    NpuGraph g;
    g.reasons = reasons;
    g.warnings = warnings;
    std::unordered_map<int, int> tmap;
    auto lt = [&](int t) -> int {
      if (t < 0) return -1;
      auto it = tmap.find(t);
      if (it != tmap.end()) return it->second;
      const T& s = tn(t);
      LoweredTensor x;
      x.name = s.name;
      x.shape = s.shape;
      x.dtype = s.type;
      x.quant = s.q;
      x.model_tensor = s.model;
      x.constant = s.is_const;
      x.graph_input = s.gin;
      x.graph_output = s.gout;
      g.tensors.push_back(std::move(x));
      const int id = static_cast<int>(g.tensors.size() - 1);
      tmap[t] = id;
      return id;
    };
    std::vector<int> pass_of_group(groups.size(), -1), cpu_of_group(groups.size(), -1);
    int subgraph = 0;
    bool in_npu_run = false;
    for (int gi : order) {
      const Group& gr = groups[static_cast<std::size_t>(gi)];
      const Op& last = op(gr.ops.back());
      if (!gr.npu) {
        in_npu_run = false;
        const Op& o = op(gr.ops.front());
        CpuOp c;
        c.name = o.name;
        c.builtin = o.builtin;
        c.vela_type = vela_type_of(o.builtin);
        c.tflite_op_index = o.op_index;
        c.reason = o.reason;
        static const std::set<std::string> quiet{"Softmax", "LRN", "Shape", "Pad", "AddN", "Dequantize", "ReduceMax", "ReduceMin"};
        if (!quiet.count(c.vela_type)) c.warning = "Warning: " + c.vela_type + " operation is unknown or unsupported, placing on CPU";
        for (int i : o.in)
          if (i >= 0) c.inputs.push_back(lt(i));
        for (int i : o.out)
          if (i >= 0) c.outputs.push_back(lt(i));
        cpu_of_group[static_cast<std::size_t>(gi)] = static_cast<int>(g.cpu_ops.size());
        g.cpu_ops.push_back(std::move(c));
        continue;
      }
      if (!in_npu_run) ++subgraph;
      in_npu_run = true;
      const Op& first = op(gr.ops.front());
      NpuPass p;
      p.npu_subgraph = subgraph;
      if (gr.created_avgpool) {
        p.name = first.name + "_avgpool";
        p.op_type = VelaOpType::AvgPool;
        p.ops.push_back(VelaOpType::AvgPool);
        p.kernel = {};
        p.padding = NpuPadding::Valid;
      } else {
        p.name = first.name;
        p.op_type = first.vt;
        p.kernel = first.k;
        p.padding = first.has_padding_attr ? first.pad : NpuPadding::None;
        p.explicit_padding = first.epad;
      }
      for (int m : gr.ops) p.ops.push_back(op(m).vt);
      p.block_type = block_of(p.op_type);
      p.ifm_shape = first.ifm_s;
      p.ifm_offset = first.ifm_off;
      p.ofm_shape = last.ofm_s;
      p.ofm_offset = last.ofm_off;
      p.ifm = lt(first.in.empty() ? -1 : first.in[0]);
      const bool binary = !gr.created_avgpool && is_binary_vt(first.vt) && first.in.size() > 1;
      if (binary) {
        p.has_ifm2 = true;
        p.ifm2 = lt(first.in[1]);
        p.ifm2_shape = first.ifm2_s;
        p.ifm2_offset = first.ifm2_off;
        // Command generation puts a scalar / broadcast operand second and swaps the pass's op shapes
        // in place (not its tensors) (4.11).
        const Shape4 a = p.ifm_shape, b = p.ifm2_shape;
        bool swap = a == Shape4{1, 1, 1, 1} && b != a;
        for (int i = 0; i < 4 && !swap; ++i)
          if (a[static_cast<std::size_t>(i)] == 1 && b[static_cast<std::size_t>(i)] != 1) swap = true;
        if (swap) {
          std::swap(p.ifm_shape, p.ifm2_shape);
          p.operands_reversed = true;
        }
      }
      p.ofm = lt(last.out.empty() ? -1 : last.out[0]);
      auto fill = [&](int t, TensorType& ty, NpuQuant& q) {
        if (t < 0) return;
        ty = g.tensors[static_cast<std::size_t>(t)].dtype;
        q = g.tensors[static_cast<std::size_t>(t)].quant;
      };
      fill(p.ifm, p.ifm_type, p.ifm_quant);
      fill(p.ifm2, p.ifm2_type, p.ifm2_quant);
      fill(p.ofm, p.ofm_type, p.ofm_quant);
      // Activation: the primary's own, or the post op's (written into the primary at command generation).
      p.activation = gr.created_avgpool ? NpuActivation::None : first.act;
      p.lut = first.lut;
      for (std::size_t m = gr.created_avgpool ? 0 : 1; m < gr.ops.size(); ++m) {
        const VelaOpType vt = op(gr.ops[m]).vt;
        if (vt == VelaOpType::Relu) p.activation = NpuActivation::Relu;
        if (vt == VelaOpType::Relu6) p.activation = NpuActivation::Relu6;
        if (vt == VelaOpType::ReluN1To1) p.activation = NpuActivation::ReluN1To1;
        if (vt == VelaOpType::Sigmoid) p.activation = NpuActivation::Sigmoid;
        if (vt == VelaOpType::Tanh) p.activation = NpuActivation::Tanh;
      }
      if (!gr.created_avgpool && first.weights >= 0 && !first.wshape.empty()) {
        const T& w = tn(first.weights);
        p.weights_tensor = w.model;
        p.weights_shape = first.wshape;
        p.weights_type = w.type;
        p.weights_quant = w.q;
      } else if (!gr.created_avgpool && !first.wshape.empty()) {
        p.weights_shape = first.wshape;  // created unit / averaging weights
      }
      if (!gr.created_avgpool && first.bias >= 0) p.bias_tensor = tn(first.bias).model;
      p.bias_length = gr.created_avgpool ? 0 : first.bias_len;
      for (int i : group_inputs(gr)) p.inputs.push_back(lt(i));
      p.output = p.ofm;
      p.tflite_op_index = first.op_index;
      pass_of_group[static_cast<std::size_t>(gi)] = static_cast<int>(g.passes.size());
      g.passes.push_back(std::move(p));
    }
    g.npu_subgraph_count = subgraph;
    // Producer / consumer wiring of the lowered tensor table.
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      NodeRef ref;
      if (pass_of_group[gi] >= 0) ref = {NodeRef::Kind::NpuPass, pass_of_group[gi]};
      else if (cpu_of_group[gi] >= 0) ref = {NodeRef::Kind::CpuOp, cpu_of_group[gi]};
      else continue;
      const Group& gr = groups[gi];
      for (int i : group_inputs(gr)) g.tensors[static_cast<std::size_t>(lt(i))].consumers.push_back(ref);
      for (int o : op(gr.ops.back()).out)
        if (o >= 0) g.tensors[static_cast<std::size_t>(lt(o))].producers.push_back(ref);
    }
    g.report_order = make_report_order(g);
    mark_layout_eligibility(g);
    for (int t : sg.inputs) g.inputs.push_back(lt(t));
    for (const T& t : ts)
      if (t.gout) g.outputs.push_back(lt(static_cast<int>(&t - ts.data())));
    return g;
  }
};

}  // namespace

NpuGraph lower_for_npu(const Model& model, const NpuLoweringOptions& options) {
  if (model.subgraphs.empty())
    throw UserError(SourceLocation{model.name, 0, 0}, "subgraphs", "the model has no subgraph to lower");
  static const std::set<std::string> configs{"",          "ethos-u55-32",  "ethos-u55-64", "ethos-u55-128",
                                             "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
  if (!configs.count(options.accelerator_config))
    throw UserError(SourceLocation{model.name, 0, 0}, "accelerator_config",
                    "unknown accelerator config '" + options.accelerator_config + "'",
                    "one of ethos-u55-32, -64, -128, -256, ethos-u65-256, -512");
  Ctx c{model, model.subgraphs[0], options, {}, {}, {}, {}, true};
  try {
    c.read();
    c.s1_check();
    c.s2_concat();
    c.s3_split();
    c.s5_reshape_copy();
    c.s6_reshape_removal();
    c.s7_rewrites();
    c.s8();
    c.s9();
    return c.pack();
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    // A malformed graph that slipped past the checks (an index out of range, a missing option):
    // report it as bad input on one line rather than letting a library exception escape.
    throw UserError(SourceLocation{model.name, 0, 0}, "subgraphs[0]",
                    std::string("cannot lower the graph for the NPU: ") + e.what());
  }
}

}  // namespace npumap::tflite
