#include "workloads/workload.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace npumap::workloads {

int Workload::tensor_index(std::string_view name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int Workload::layer_index(std::string_view name) const {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::int64_t Workload::total_macs() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += l.macs;  // the loader has checked that the sum fits
  return total;
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::Conv2D: return "conv2d";
    case OpKind::DepthwiseConv2D: return "depthwise_conv2d";
    case OpKind::MaxPool: return "max_pool";
    case OpKind::AvgPool: return "avg_pool";
    case OpKind::FullyConnected: return "fully_connected";
    case OpKind::MatMul: return "matmul";
    case OpKind::Add: return "add";
    case OpKind::Sub: return "sub";
    case OpKind::Mul: return "mul";
    case OpKind::Maximum: return "maximum";
    case OpKind::Minimum: return "minimum";
    case OpKind::Abs: return "abs";
    case OpKind::LeakyRelu: return "leaky_relu";
    case OpKind::Softmax: return "softmax";
    case OpKind::ReduceSum: return "reduce_sum";
    case OpKind::TransposeConv2D: return "transpose_conv2d";
    case OpKind::ResizeBilinear: return "resize_bilinear";
    case OpKind::Shl: return "shl";
    case OpKind::Shr: return "shr";
    case OpKind::RescaleAdd: return "rescale_add";
    case OpKind::Clz: return "clz";
    case OpKind::Activation: return "activation";
    case OpKind::Cpu: return "cpu";
  }
  return "?";
}

std::string_view data_type_name(DataType t) {
  switch (t) {
    case DataType::Int8: return "int8";
    case DataType::UInt8: return "uint8";
    case DataType::Int16: return "int16";
    case DataType::Int32: return "int32";
  }
  return "?";
}

std::string_view activation_name(Activation a) {
  switch (a) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::Relu6: return "relu6";
    case Activation::ReluN1To1: return "relu_n1_to_1";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Tanh: return "tanh";
    case Activation::Lut: return "lut";
  }
  return "?";
}

std::string op_name(const Layer& layer) {
  if (layer.kind == OpKind::Activation) return std::string(activation_name(layer.activation));
  return std::string(op_kind_name(layer.kind));
}

int data_type_bits(DataType t) {
  switch (t) {
    case DataType::Int8:
    case DataType::UInt8: return 8;
    case DataType::Int16: return 16;
    case DataType::Int32: return 32;
  }
  return 8;
}

arch::NpuBlockType npu_block_type(OpKind kind) {
  using arch::NpuBlockType;
  switch (kind) {
    case OpKind::Conv2D:
    case OpKind::TransposeConv2D: return NpuBlockType::ConvolutionMxN;
    case OpKind::DepthwiseConv2D: return NpuBlockType::ConvolutionDepthWise;
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::ResizeBilinear:
    case OpKind::Activation: return NpuBlockType::Pooling;
    case OpKind::FullyConnected:
    case OpKind::MatMul: return NpuBlockType::VectorProduct;
    case OpKind::ReduceSum: return NpuBlockType::ReduceSum;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Abs:
    case OpKind::LeakyRelu:
    case OpKind::Shl:
    case OpKind::Shr:
    case OpKind::RescaleAdd:
    case OpKind::Clz:
    case OpKind::Softmax: return NpuBlockType::ElementWise;
    case OpKind::Cpu: return NpuBlockType::Default;
  }
  return NpuBlockType::Default;
}

bool is_binary_elementwise(OpKind kind) {
  return kind == OpKind::Add || kind == OpKind::Sub || kind == OpKind::Mul || kind == OpKind::Maximum ||
         kind == OpKind::Minimum || kind == OpKind::Shl || kind == OpKind::Shr || kind == OpKind::RescaleAdd;
}

bool has_weights(OpKind kind) {
  return kind == OpKind::Conv2D || kind == OpKind::DepthwiseConv2D || kind == OpKind::TransposeConv2D ||
         kind == OpKind::FullyConnected;
}

bool uses_lut(const Layer& layer) {
  return layer.kind == OpKind::Softmax || layer.activation == Activation::Sigmoid ||
         layer.activation == Activation::Tanh || layer.activation == Activation::Lut;
}

LutTable lut_table_default(const Layer& layer, DataType input_dtype) {
  if (data_type_bits(input_dtype) > 8) return LutTable{512, DataType::Int32};
  return LutTable{256, layer.kind == OpKind::Softmax ? DataType::Int32 : DataType::Int8};
}

std::string_view weight_traversal_name(WeightTraversal t) {
  switch (t) {
    case WeightTraversal::DepthFirst: return "depth_first";
    case WeightTraversal::PartKernelFirst: return "part_kernel_first";
    case WeightTraversal::DepthWise: return "depthwise";
  }
  return "depth_first";
}

std::int64_t macs(const Layer& layer) { return layer.macs; }

std::int64_t tensor_bytes(const TensorInfo& tensor) { return tensor.shape.elements() * data_type_bytes(tensor.dtype); }

std::int64_t weight_bytes(const Workload& w, const Layer& layer) {
  if (layer.weight_tensor >= 0) return tensor_bytes(w.tensors.at(static_cast<std::size_t>(layer.weight_tensor)));
  if (layer.weight_shape.empty()) return 0;
  std::int64_t elems = 1;
  for (auto d : layer.weight_shape) elems *= d;
  return elems * data_type_bytes(layer.weight_dtype);
}

std::int64_t compressed_weight_bytes(const Workload& w, const Layer& layer) {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(weight_bytes(w, layer)) * layer.weight_compression));
}

std::string dims_string(const std::vector<std::int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ",")); }

std::string shape_string(const Shape& s) { return fmt::format("[{},{},{},{}]", s.n, s.h, s.w, s.c); }

Shape nhwc_view(const std::vector<std::int64_t>& dims) {
  switch (dims.size()) {
    case 1: return {1, 1, 1, dims[0]};
    case 2: return {dims[0], 1, 1, dims[1]};
    case 3: return {1, dims[0], dims[1], dims[2]};
    case 4: return {dims[0], dims[1], dims[2], dims[3]};
    default: break;
  }
  NPUMAP_ASSERT(dims.size() >= 1 && dims.size() <= 4);
  return {};
}

}  // namespace npumap::workloads
