#include "model/pass.hpp"

#include <algorithm>

#include "common/user_error.hpp"

namespace npumap::model {
namespace {

template <typename E, std::size_t N>
bool parse_name(std::string_view s, const std::array<std::string_view, N>& names, E& out) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) {
      out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

// Indexed by enum value.
constexpr std::array<std::string_view, kNumOpTypes> kOpNames = {
    "Conv2DBias", "DepthwiseConv2DBias", "Conv2DBackpropInputSwitchedBias", "FullyConnected", "MaxPool",
    "AvgPool",    "ResizeBilinear",      "ReduceSum",                       "Add",            "Sub",
    "Mul",        "Maximum",             "Minimum",                         "Abs",            "LeakyRelu",
    "SHL",        "SHR",                 "RescaleAdd",                      "CLZ"};
constexpr std::array<std::string_view, 7> kActivationNames = {"None",    "Relu", "Relu6", "ReluN1To1",
                                                              "Sigmoid", "Tanh", "LUT"};
constexpr std::array<std::string_view, 4> kDtypeNames = {"int8", "uint8", "int16", "int32"};
constexpr std::array<std::string_view, 2> kFormatNames = {"NHWC", "NHCWB16"};
constexpr std::array<std::string_view, 4> kTraversalNames = {"Default", "DepthFirst", "PartKernelFirst",
                                                             "DepthWise"};

}  // namespace

arch::NpuBlockType npu_block_type(OpType op) {
  using arch::NpuBlockType;
  switch (op) {
    case OpType::Conv2DBias:
    case OpType::TransposeConv2D:
      return NpuBlockType::ConvolutionMxN;
    case OpType::DepthwiseConv2DBias:
      return NpuBlockType::ConvolutionDepthWise;
    case OpType::FullyConnected:
      return NpuBlockType::VectorProduct;
    case OpType::MaxPool:
    case OpType::AvgPool:
    case OpType::ResizeBilinear:
      return NpuBlockType::Pooling;
    case OpType::ReduceSum:
      return NpuBlockType::ReduceSum;
    case OpType::Add:
    case OpType::Sub:
    case OpType::Mul:
    case OpType::Maximum:
    case OpType::Minimum:
    case OpType::Abs:
    case OpType::LeakyRelu:
    case OpType::Shl:
    case OpType::Shr:
    case OpType::RescaleAdd:
    case OpType::Clz:
      return NpuBlockType::ElementWise;
  }
  return NpuBlockType::Default;
}

bool is_binary_elementwise(OpType op) {
  return op == OpType::Add || op == OpType::Sub || op == OpType::Mul || op == OpType::Maximum ||
         op == OpType::Minimum || op == OpType::Shl || op == OpType::Shr || op == OpType::RescaleAdd;
}

bool is_elementwise(OpType op) { return npu_block_type(op) == arch::NpuBlockType::ElementWise; }

bool has_weights(OpType op) {
  return op == OpType::Conv2DBias || op == OpType::DepthwiseConv2DBias || op == OpType::TransposeConv2D ||
         op == OpType::FullyConnected;
}

Resampling ifm_resampling(OpType op) {
  if (op == OpType::TransposeConv2D) return Resampling::Transpose;
  if (op == OpType::ResizeBilinear) return Resampling::Nearest;
  return Resampling::None;
}

int bits(DataType t) {
  switch (t) {
    case DataType::Int8:
    case DataType::UInt8:
      return 8;
    case DataType::Int16:
      return 16;
    case DataType::Int32:
      return 32;
  }
  return 8;
}

int size_in_bytes(DataType t) { return (bits(t) + 7) / 8; }

Shape Shape::of(std::initializer_list<int> d) {
  NPUMAP_ASSERT(d.size() <= 4);
  Shape s;
  s.rank = static_cast<int>(d.size());
  std::copy(d.begin(), d.end(), s.dims.begin());
  return s;
}

std::array<int, 4> Shape::as_4d() const {
  // Filled from the back with fixed trip counts: the obvious forward copy of `rank` elements
  // compiles to a memcpy call, and this runs several times per evaluated pass.
  std::array<int, 4> out{1, 1, 1, 1};
  for (int k = 0; k < 4; ++k) {
    if (k < rank) out[3 - k] = dims[rank - 1 - k];
  }
  return out;
}

std::int64_t Shape::elements() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

bool operator==(const Shape& a, const Shape& b) {
  return a.rank == b.rank && std::equal(a.dims.begin(), a.dims.begin() + a.rank, b.dims.begin());
}

namespace {
// An explicit op shape wins; else FC views its 2-D [N, C] feature maps as [N, 1, 1, C] (§7.3) and every
// other op pads to 4-D.
std::array<int, 4> op_shape(OpType op, const FeatureMap& f) {
  if (f.op_shape) return *f.op_shape;
  if (op == OpType::FullyConnected && f.shape.rank == 2) return {f.shape.dims[0], 1, 1, f.shape.dims[1]};
  return f.shape.as_4d();
}
}  // namespace

std::array<int, 4> Pass::ifm_op_shape() const { return op_shape(op.type, ifm); }
std::array<int, 4> Pass::ifm2_op_shape() const {
  return ifm2 ? op_shape(op.type, *ifm2) : std::array<int, 4>{1, 1, 1, 1};
}
std::array<int, 4> Pass::ofm_op_shape() const { return op_shape(op.type, ofm); }

std::string_view op_type_name(OpType t) { return kOpNames[static_cast<int>(t)]; }
bool parse_op_type(std::string_view s, OpType& out) { return parse_name(s, kOpNames, out); }
std::string_view activation_name(Activation a) { return kActivationNames[static_cast<int>(a)]; }
bool parse_activation(std::string_view s, Activation& out) { return parse_name(s, kActivationNames, out); }
std::string_view dtype_name(DataType t) { return kDtypeNames[static_cast<int>(t)]; }
bool parse_dtype(std::string_view s, DataType& out) { return parse_name(s, kDtypeNames, out); }
std::string_view format_name(TensorFormat f) { return kFormatNames[static_cast<int>(f)]; }
bool parse_format(std::string_view s, TensorFormat& out) { return parse_name(s, kFormatNames, out); }
std::string_view traversal_name(BlockTraversal t) { return kTraversalNames[static_cast<int>(t)]; }
bool parse_traversal(std::string_view s, BlockTraversal& out) { return parse_name(s, kTraversalNames, out); }

}  // namespace npumap::model
