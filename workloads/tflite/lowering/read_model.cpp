// Reading subgraph 0 of the model into the work graph: tensors with their quantisation, operators with
// their Vela type and kernel attributes, and the operand roles (IFM, IFM2, weights, bias, OFM).
// Rules: docs/design/lowering/reading.md.

#include <string>
#include <variant>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

void Lowering::read_model() {
  lut_banks = !(opt.accelerator_config == "ethos-u55-32" || opt.accelerator_config == "ethos-u55-64");
  tensors.resize(sg.tensors.size());
  for (std::size_t i = 0; i < sg.tensors.size(); ++i) {
    const Tensor& src = sg.tensors[i];
    WorkTensor& t = tensors[i];
    t.name = src.name;
    t.shape = src.shape;
    t.type = src.type;
    t.model = static_cast<int>(i);
    const Quantization& q = src.quantization;
    // Vela keeps quantisation when scale or zero point is present (reading.md, "Tensors").
    t.has_quant_table = !q.scale.empty() || !q.zero_point.empty();
    t.q.scale = q.scale;
    t.q.zero_point = q.zero_point;
    t.per_axis = q.scale.size() > 1 || q.zero_point.size() > 1 || q.min.size() > 1 || q.max.size() > 1;
    t.is_const = !model.tensor_data(src).empty();
  }
  for (int i : sg.inputs) tensors.at(static_cast<std::size_t>(i)).gin = true;
  for (int i : sg.outputs) tensors.at(static_cast<std::size_t>(i)).gout = true;
  for (std::size_t i = 0; i < sg.operators.size(); ++i) {
    const Operator& src = sg.operators[i];
    const auto code = static_cast<std::int32_t>(src.code);
    if (code > static_cast<std::int32_t>(BuiltinOperator::CUMSUM))
      bad_input(operator_key(static_cast<int>(i), "opcode_index"),
                "The input file contains operator code '" + std::to_string(code) +
                    "' which is currently not supported (Vela 2.1 knows codes up to CUMSUM = 128)");
    // A CUSTOM op with options [1,4,1] is an NPU op Vela compiled already (reading.md): its weights and
    // command stream are opaque, so such a model cannot be lowered again.
    const auto& co = src.custom_options;
    if (src.code == BuiltinOperator::CUSTOM && co.size() == 3 && co[0] == 1 && co[1] == 4 && co[2] == 1)
      bad_input(operator_key(static_cast<int>(i), "custom_options"),
                "the model was already compiled for Ethos-U (custom operator '" + model.opcode(src).custom_code + "')",
                "lower the original .tflite instead");
    WorkOp o;
    o.builtin = src.code;
    o.op_index = static_cast<int>(i);
    o.in = src.inputs;
    o.out = src.outputs;
    o.opts = src.options;
    o.name = src.outputs.empty() || src.outputs[0] < 0 ? "unknown_op_name"
                                                       : sg.tensors[static_cast<std::size_t>(src.outputs[0])].name;
    classify_operator(o);
    ops.push_back(std::move(o));
  }
  relink();
}

void Lowering::classify_operator(WorkOp& o) {
  using B = BuiltinOperator;
  using V = VelaOpType;
  o.kind = OpKind::Compute;
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
    case B::HARD_SWISH: o.kind = OpKind::HardSwish; break;
    case B::SOFTMAX: o.kind = OpKind::Softmax; break;
    case B::MEAN: o.kind = OpKind::Mean; break;
    case B::PAD: o.kind = OpKind::Pad; break;
    case B::CONCATENATION: o.kind = OpKind::Concat; break;
    case B::PACK: o.kind = OpKind::Pack; break;
    case B::SPLIT: o.kind = OpKind::Split; break;
    case B::SPLIT_V: o.kind = OpKind::SplitV; break;
    case B::SLICE: o.kind = OpKind::Slice; break;
    case B::STRIDED_SLICE: o.kind = OpKind::StridedSlice; break;
    case B::UNPACK: o.kind = OpKind::Unpack; break;
    case B::RESHAPE: o.kind = OpKind::Reshape; break;
    case B::SQUEEZE: o.kind = OpKind::Squeeze; break;
    case B::EXPAND_DIMS: o.kind = OpKind::ExpandDims; break;
    default: o.kind = OpKind::Cpu; break;
  }
  // Kernel attributes (reading.md, "Operators").
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

Activation Lowering::fused_activation(const WorkOp& o) const {
  if (const auto* c = std::get_if<Conv2DOptions>(&o.opts)) return c->activation;
  if (const auto* d = std::get_if<DepthwiseConv2DOptions>(&o.opts)) return d->activation;
  if (const auto* p = std::get_if<Pool2DOptions>(&o.opts)) return p->activation;
  if (const auto* f = std::get_if<FullyConnectedOptions>(&o.opts)) return f->activation;
  if (const auto* e = std::get_if<ElementwiseOptions>(&o.opts)) return e->activation;
  if (const auto* cc = std::get_if<ConcatenationOptions>(&o.opts)) return cc->activation;
  if (const auto* tc = std::get_if<TransposeConvOptions>(&o.opts)) return tc->activation;
  return Activation::NONE;
}

int Lowering::ifm_of(const WorkOp& o) const {
  using B = BuiltinOperator;
  auto at = [&](std::size_t i) { return i < o.in.size() ? o.in[i] : -1; };
  if (o.builtin == B::SPLIT) return at(1);
  if (o.builtin == B::TRANSPOSE_CONV) return at(2);
  if (o.builtin == B::CONCATENATION) return at(1);
  return at(0);
}

int Lowering::ifm2_of(const WorkOp& o) const {
  auto at = [&](std::size_t i) { return i < o.in.size() ? o.in[i] : -1; };
  if (o.builtin == BuiltinOperator::CONCATENATION) return at(2);
  if (is_binary_elementwise(o.builtin)) return at(1);
  return -1;
}

int Lowering::weights_of(const WorkOp& o) const {
  using B = BuiltinOperator;
  if (o.builtin == B::CONV_2D || o.builtin == B::DEPTHWISE_CONV_2D || o.builtin == B::FULLY_CONNECTED ||
      o.builtin == B::TRANSPOSE_CONV)
    return o.in.size() > 1 ? o.in[1] : -1;
  return -1;
}

int Lowering::bias_of(const WorkOp& o) const {
  using B = BuiltinOperator;
  if (o.builtin == B::TRANSPOSE_CONV) return o.in.size() > 3 ? o.in[3] : -1;
  if (o.builtin == B::CONV_2D || o.builtin == B::DEPTHWISE_CONV_2D || o.builtin == B::FULLY_CONNECTED)
    return o.in.size() > 2 ? o.in[2] : -1;
  return -1;
}

}  // namespace npumap::tflite::lowering
