// The NPU op types: their names as Vela prints them, and the classes the lowering and the pass
// packing sort them into (docs/design/lowering/pass-packing.md).

#include <string>

#include "workloads/tflite/lowering/lowering.hpp"

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

namespace lowering {

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

}  // namespace lowering
}  // namespace npumap::tflite
