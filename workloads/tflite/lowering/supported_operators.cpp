// The supported-operator checks: Vela's walk over the graph, the generic constraints every NPU
// candidate must meet, the dispatch to each operator family's own constraints, and the 4-D op shapes
// of the operators placed on the NPU. Rules: docs/design/lowering/supported-operators.md.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

/// Places every operator in Vela's order (consumer-first from the outputs), drops unreachable ops, and
/// gives the NPU operators their op shapes (supported-operators.md, "The walk").
void Lowering::check_supported_operators() {
  // Iterative depth-first walk (an explicit stack, so a long operator chain cannot overflow the
  // call stack); children are pushed in reverse so they pop in Vela's recursive order.
  std::vector<char> tvis(tensors.size(), 0), ovis(ops.size(), 0);
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
      const std::vector<int>& producers = tensor(item.id).prod;
      for (auto it = producers.rbegin(); it != producers.rend(); ++it) stack.push_back({true, *it});
      continue;
    }
    if (ovis[idx]) continue;
    ovis[idx] = 1;
    check_operator(item.id);
    std::vector<int> children;
    for (int i : op(item.id).in)
      if (i >= 0) children.push_back(i);
    for (int i : op(item.id).out)
      if (i >= 0) children.push_back(i);
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back({false, *it});
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (!ovis[i]) ops[i].dead = true;
  relink();
  for (WorkOp& o : ops)
    if (!o.dead && o.npu) set_op_shapes(o);
}

/// G1 to G14, in order (supported-operators.md, "Generic constraints").
Rejection Lowering::check_generic_constraints(const WorkOp& o) {
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
    if (tensor(t).shape.empty() && !tensor(t).is_const) extra.push_back(tensor(t).name);
  if (!extra.empty()) return reject("Input(s) and Output tensors must not be dynamic", "Op has dynamic tensor(s): " + join(extra));
  // G3
  for (int t : o.out)
    if (t >= 0 && tensor(t).shape.empty()) extra.push_back(tensor(t).name);
  if (!extra.empty()) return reject("Output tensors cannot be scalar", "Output Tensor(s) are scalar: " + join(extra));
  // G4
  const bool scalar_ok = o.builtin == B::ADD || o.builtin == B::MAXIMUM || o.builtin == B::MEAN ||
                         o.builtin == B::MINIMUM || o.builtin == B::MUL || o.builtin == B::SPLIT ||
                         o.builtin == B::SPLIT_V || o.builtin == B::SUB;
  for (int t : o.in)
    if (t >= 0 && tensor(t).shape.empty() && !scalar_ok) extra.push_back(tensor(t).name);
  if (!extra.empty())
    return reject("Scalar Input tensors are only valid for op type: ADD, MAXIMUM, MEAN, MINIMUM, MUL, SPLIT, SPLIT_V, SUB",
                  "Op has scalar input tensor(s): " + join(extra));
  // G5
  for (int t : all)
    if (tensor(t).shape.size() > 4) extra.push_back("Tensor '" + tensor(t).name + "' has shape: " + py_list(tensor(t).shape));
  if (!extra.empty()) return reject("Input(s) and Output tensors must not be greater than 4D", join(extra));
  // G6
  for (int t : role) {
    const TensorType ty = tensor(t).type;
    if (ty != TensorType::INT16 && ty != TensorType::INT32 && ty != TensorType::INT8 && ty != TensorType::UINT8)
      extra.push_back("Tensor '" + tensor(t).name + "' has data type: " + std::string(tensor_type_name(ty)));
  }
  if (!extra.empty()) return reject("Tensors must be of type: int16, int32, int8, uint8", join(extra));
  // G7
  if (!(o.builtin == B::ADD || o.builtin == B::MUL || o.builtin == B::SUB))
    for (int t : role)
      if (tensor(t).type == TensorType::INT32) extra.push_back("Tensor '" + tensor(t).name + "' is int32");
  if (!extra.empty()) return reject("Tensors which are int32 are only valid when op type is: ADD, MUL, SUB", join(extra));
  // G8
  for (int t : role)
    for (auto d : tensor(t).shape)
      if (d < 1 || d > 65535) {
        extra.push_back("Tensor '" + tensor(t).name + "' has shape: " + py_list(tensor(t).shape));
        break;
      }
  if (!extra.empty()) return reject("Tensor dimensions must be in the range [1, 65535]", join(extra));
  // G9
  for (int t : role)
    if (!tensor(t).has_quant_table) extra.push_back("Tensor '" + tensor(t).name + "' has no quantization parameters");
  if (!extra.empty()) return reject("Input(s), Output and Weight tensors must have quantization parameters", join(extra));
  // G10
  for (int t : role)
    for (float s : tensor(t).q.scale)
      if (!std::isfinite(s)) {
        extra.push_back("Tensor '" + tensor(t).name + "' has quantization scale: " + fmt_float(s));
        break;
      }
  if (!extra.empty())
    return reject("Input(s), Output and Weight tensors with quantization scales must be finite", join(extra));
  // G11
  if (!(o.builtin == B::CONV_2D || o.builtin == B::DEPTHWISE_CONV_2D || o.builtin == B::TRANSPOSE_CONV))
    for (int t : role)
      if (tensor(t).per_axis) extra.push_back("Tensor '" + tensor(t).name + "' has per-axis quantization");
  if (!extra.empty())
    return reject("Per-axis quantization is only supported for the following op types: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV",
                  join(extra));
  // G12
  const Activation ra = fused_activation(o);
  if (ra == Activation::SIGN_BIT)
    return reject("The fused activation function (if present) must be one of type: LOGISTIC, RELU, RELU6, RELU_N1_TO_1, TANH",
                  "Op has its fused activation function as: SIGN_BIT");
  const int ofm = ofm_of(o), ifm = ifm_of(o);
  // G13
  if (ra != Activation::NONE && ofm >= 0) {
    const TensorType ty = tensor(ofm).type;
    if (!(ty == TensorType::INT8 || ty == TensorType::UINT8 || ty == TensorType::INT16))
      return reject("If a fused activation function is present, the Output tensor must be one of type: int16, int8, uint8",
                    "Op has its fused activation function as: " + std::string(npu_activation_name(act_of(ra))) +
                        " and its Output tensor data type is: " + std::string(tensor_type_name(ty)));
  }
  // G14
  if (ofm >= 0 && tensor(ofm).q.quantized()) {
    const double os = tensor(ofm).q.scale[0];
    if (os < static_cast<double>(std::numeric_limits<float>::min()))
      return reject("The output tensor's quantization scale must be greater than or equal to the smallest normal float32",
                    "Operation has output quantization scale " + fmt_float(os));
    if (ifm >= 0 && tensor(ifm).q.quantized() && !std::isfinite(tensor(ifm).q.scale[0] / os))
      return reject("Input and Output tensor scale ratio must be finite", "Operation has infinite scale ratio");
  }
  return std::nullopt;
}

/// IFM and OFM of the same data type (several operators' first specific constraint).
Rejection Lowering::check_types_equal(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  if (ifm >= 0 && ofm >= 0 && tensor(ifm).type != tensor(ofm).type)
    return reject("IFM and OFM data types must match", "Op has ifm_dtype=" + type_text(ifm) + " and ofm_dtype=" + type_text(ofm));
  return std::nullopt;
}

/// The operator-specific constraints, in Vela's order; each operator family's file holds its own.
Rejection Lowering::check_operator_constraints(const WorkOp& o) {
  using B = BuiltinOperator;
  switch (o.builtin) {
    case B::CONV_2D: return check_convolution(o, false);
    case B::DEPTHWISE_CONV_2D: return check_depthwise_convolution(o);
    case B::TRANSPOSE_CONV: return check_transpose_convolution(o);
    case B::FULLY_CONNECTED: return check_fully_connected(o);
    case B::AVERAGE_POOL_2D: case B::MAX_POOL_2D: return check_pooling(o);
    case B::ADD: case B::SUB: case B::MUL: return check_add_sub_mul(o);
    case B::MAXIMUM: case B::MINIMUM: return check_maximum_minimum(o);
    case B::ABS:
      if (auto f = check_elementwise_shapes(o)) return f;
      return check_types_equal(o);
    case B::LEAKY_RELU: return check_leaky_relu(o);
    case B::HARD_SWISH: return check_hard_swish(o);
    case B::SOFTMAX: return check_softmax(o);
    case B::RESIZE_BILINEAR: return check_resize_bilinear(o);
    case B::MEAN: return check_mean(o);
    case B::PAD: return check_pad(o);
    case B::CONCATENATION: return check_concatenation(o);
    case B::SPLIT_V: return check_split_v(o);
    case B::STRIDED_SLICE: return check_strided_slice(o);
    default: return std::nullopt;
  }
}

/// The 4-D op shapes, weights and bias of an operator placed on the NPU (supported-operators.md, "Op
/// shapes").
void Lowering::set_op_shapes(WorkOp& o) {
  const int ifm = ifm_of(o), ifm2 = ifm2_of(o), ofm = ofm_of(o);
  auto fc4 = [&](const Dims& d) -> Shape4 { return d.size() == 2 ? Shape4{d[0], 1, 1, d[1]} : full4(d); };
  switch (o.kind) {
    case OpKind::Concat: case OpKind::Pack: case OpKind::Split: case OpKind::SplitV: case OpKind::Slice: case OpKind::StridedSlice: case OpKind::Unpack:
      for (int t : o.in) o.in_shapes.push_back(t >= 0 ? full4(tensor(t).shape) : Shape4{1, 1, 1, 1});
      for (int t : o.out) o.out_shapes.push_back(t >= 0 ? full4(tensor(t).shape) : Shape4{1, 1, 1, 1});
      break;
    case OpKind::Softmax: {
      auto sm = [&](const Dims& d) -> Shape4 { return d.size() == 2 ? Shape4{d[0], 1, 1, d[1]} : full4(d); };
      o.ifm_s = sm(tensor(ifm).shape);
      o.ofm_s = sm(tensor(ofm).shape);
      break;
    }
    default:
      if (o.builtin == BuiltinOperator::FULLY_CONNECTED) {
        o.ifm_s = fc4(tensor(ifm).shape);
        o.ofm_s = fc4(tensor(ofm).shape);
      } else {
        if (ifm >= 0) o.ifm_s = full4(tensor(ifm).shape);
        if (ifm2 >= 0) o.ifm2_s = full4(tensor(ifm2).shape);
        if (ofm >= 0) o.ofm_s = full4(tensor(ofm).shape);
      }
  }
  // Roles of the compute ops: in[0] = IFM, in[1] = weights / IFM2, in[2] = bias.
  if (o.builtin == BuiltinOperator::CONV_2D || o.builtin == BuiltinOperator::DEPTHWISE_CONV_2D ||
      o.builtin == BuiltinOperator::FULLY_CONNECTED) {
    o.weights = weights_of(o);
    o.bias = bias_of(o);
    const Dims& ws = tensor(o.weights).shape;
    if (ws.empty() || (o.builtin != BuiltinOperator::FULLY_CONNECTED && ws.size() != 4))
      bad_input(operator_key(o.op_index, "inputs[1]"),
                "weight tensor '" + tensor(o.weights).name + "' has shape " + py_list(ws) + ", which the NPU cannot use");
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

}  // namespace npumap::tflite::lowering
