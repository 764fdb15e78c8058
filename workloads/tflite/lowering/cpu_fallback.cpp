// The CPU fallback: which TFLite operators Vela may place on the NPU at all, Vela's internal type
// names, the placement of each operator on the NPU or the CPU with Vela's reason lines, and the notice
// for operators in CPU passes. Rules: docs/design/lowering/supported-operators.md.

#include <set>
#include <string>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

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

/// Builtins that may be placed on the NPU; everything else up to CUMSUM is CPU-only
/// (supported-operators.md, "Placement").
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

/// Inputs an NPU-candidate operator must have (the leading ones may not be absent).
std::size_t required_inputs(BuiltinOperator b) {
  using B = BuiltinOperator;
  switch (b) {
    case B::TRANSPOSE_CONV: case B::SPLIT_V: case B::SLICE: return 3;
    case B::STRIDED_SLICE: return 4;
    case B::CONV_2D: case B::DEPTHWISE_CONV_2D: case B::FULLY_CONNECTED: case B::ADD: case B::SUB: case B::MUL:
    case B::MAXIMUM: case B::MINIMUM: case B::SPLIT: case B::PAD: case B::MEAN: return 2;
    default: return 1;
  }
}

std::string cpu_pass_warning(const std::string& vela_type) {
  static const std::set<std::string> quiet{"Softmax", "LRN", "Shape", "Pad", "AddN", "Dequantize", "ReduceMax", "ReduceMin"};
  if (quiet.count(vela_type)) return {};
  return "Warning: " + vela_type + " operation is unknown or unsupported, placing on CPU";
}

/// Places operator `id` on the NPU or the CPU: a CPU-only type, or the first failing constraint
/// (generic first, then the operator's own), sends it to the CPU with Vela's reason lines.
void Lowering::check_operator(int id) {
  WorkOp& o = op(id);
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
    bad_input(operator_key(o.op_index, o.out.empty() || o.out[0] < 0 ? "outputs" : "inputs"),
              bname + " '" + o.name + "' needs " + (need == 1 ? std::string("an input") : std::to_string(need) + " inputs") +
                  " and an output");
  Rejection f = check_generic_constraints(o);
  if (!f) f = check_operator_constraints(o);
  if (f) {
    o.npu = false;
    o.reason = {"- " + f->first, f->second};
    reasons.push_back({bname, o.name, o.reason});
    return;
  }
  o.npu = true;
}

}  // namespace npumap::tflite::lowering
