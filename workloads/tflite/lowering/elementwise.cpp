// Elementwise binary and unary operators: the shape and broadcast constraints, the constraints of
// ADD/SUB/MUL and MAXIMUM/MINIMUM, and the MUL + MAXIMUM pattern (-> LeakyRelu or Abs). Rules:
// docs/design/lowering/elementwise.md.

#include <algorithm>
#include <string>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_add_sub_mul(const WorkOp& o) {
  const int ifm = ifm_of(o), ifm2 = ifm2_of(o), ofm = ofm_of(o);
  if (auto f = check_elementwise_shapes(o)) return f;
  if (ifm2 >= 0 && tensor(ifm).type != tensor(ifm2).type)
    return reject("Both Input data types must match", "Op has ifm_dtype=" + type_text(ifm) + " and ifm2_dtype=" + type_text(ifm2));
  const TensorType it = tensor(ifm).type, ot = tensor(ofm).type;
  const bool isigned = it == TensorType::INT8 || it == TensorType::INT16 || it == TensorType::INT32;
  const bool osigned = ot == TensorType::INT8 || ot == TensorType::INT16 || ot == TensorType::INT32;
  if (isigned && !osigned)
    return reject("For IFM that are signed, OFM must also be signed", "Op has ifm_dtype=" + type_text(ifm) + " and ofm_dtype=" + type_text(ofm));
  if (!isigned && !(ot == it || ot == TensorType::INT32))
    return reject("For IFM that are unsigned, OFM must either be the same type or int32",
                  "Op has ifm_dtype=" + type_text(ifm) + " and ofm_dtype=" + type_text(ofm));
  return std::nullopt;
}

Rejection Lowering::check_maximum_minimum(const WorkOp& o) {
  const int ifm = ifm_of(o), ifm2 = ifm2_of(o), ofm = ofm_of(o);
  if (auto f = check_elementwise_shapes(o)) return f;
  if (auto f = check_types_equal(o)) return f;
  for (int t : {ifm, ifm2})
    if (t >= 0 && (tensor(t).q.scale != tensor(ofm).q.scale || tensor(t).q.zero_point != tensor(ofm).q.zero_point))
      return reject("Both Input quantization parameters must match OFM quantization parameters",
                    "Op has tensors with different quantization parameters to the OFM '" + tensor(ofm).name + "': " + tensor(t).name);
  return std::nullopt;
}

/// Batch 1, one input of the OFM's shape, broadcasting only from size 1 (elementwise.md, "Shape
/// constraints").
Rejection Lowering::check_elementwise_shapes(const WorkOp& o) {
  const int a = ifm_of(o), b = ifm2_of(o), out = ofm_of(o);
  std::vector<int> ins{a};
  if (b >= 0) ins.push_back(b);
  for (int t : ins)
    if (tensor(t).shape.size() > 2 && tensor(t).shape[0] != 1)
      return reject("Batch size must be 1 for Input tensors with more than 2 dimensions",
                    "Tensor '" + tensor(t).name + "' has shape: " + shape_text(t));
  if (b < 0) return std::nullopt;
  const Dims& oa = tensor(out).shape;
  if (tensor(a).shape != oa && tensor(b).shape != oa)
    return reject("At least one Input's shape must match the OFM's shape",
                  "Op has ifm_shape=" + shape_text(a) + ", ifm2_shape=" + shape_text(b) + " and ofm_shape=" + shape_text(out));
  const Dims &sa = tensor(a).shape, &sb = tensor(b).shape;
  const std::size_t r = std::max({sa.size(), sb.size(), oa.size()});
  for (std::size_t i = 0; i < r; ++i) {
    auto dim = [&](const Dims& d) { return i < d.size() ? d[d.size() - 1 - i] : 1; };
    const int x = dim(sa), y = dim(sb), z = dim(oa);
    if ((x != y && x != 1 && y != 1) || z != std::max(x, y))
      return reject("Broadcasting is only allowed for rank indices with dimension 1, from either IFM1 or IFM2",
                    "Op has ifm_shape=" + shape_text(a) + ", ifm2_shape=" + shape_text(b) + " and ofm_shape=" + shape_text(out));
  }
  return std::nullopt;
}

/// MAXIMUM(x, MUL(x, c)) with a constant scalar c: LeakyRelu for c >= 0, Abs for c = -1
/// (elementwise.md, "The MUL + MAXIMUM pattern").
void Lowering::fuse_mul_maximum(int id) {
  WorkOp& mx = op(id);
  if (mx.builtin != BuiltinOperator::MAXIMUM || mx.in.size() < 2) return;
  for (int side = 0; side < 2; ++side) {
    const int x = mx.in[static_cast<std::size_t>(side)], m = mx.in[static_cast<std::size_t>(1 - side)];
    if (tensor(m).prod.size() != 1) continue;
    WorkOp& mul = op(tensor(m).prod[0]);
    if (mul.dead || !mul.npu || mul.builtin != BuiltinOperator::MUL || mul.act != NpuActivation::None) continue;
    if (consumer_entries(m) != 1) continue;
    int c = -1;
    if (mul.in[0] == x) c = mul.in[1];
    else if (mul.in[1] == x) c = mul.in[0];
    if (c < 0 || !tensor(c).shape.empty() || !tensor(c).is_const) continue;
    const int out = mx.out[0];
    if (!is_8bit(tensor(x).type) || tensor(x).type != tensor(out).type) continue;
    if (!(tensor(x).q == tensor(m).q && tensor(x).q == tensor(out).q)) continue;
    const auto cv = constant_ints(c);
    if (cv.empty()) continue;
    const std::int64_t q = cv[0] - (tensor(c).q.zero_point.empty() ? 0 : tensor(c).q.zero_point[0]);
    const double value = static_cast<double>(q) * (tensor(c).q.scale.empty() ? 1.0 : tensor(c).q.scale[0]);
    if (value >= 0) {
      mx.vt = VelaOpType::LeakyRelu;
      mx.builtin = BuiltinOperator::LEAKY_RELU;
      mx.in = {x};
      relink();
      return;
    }
    if (value == -1.0) {
      mx.vt = VelaOpType::Abs;
      mx.builtin = BuiltinOperator::ABS;
      mx.in = {x};
      relink();
      return;
    }
  }
}

}  // namespace npumap::tflite::lowering
