// AVERAGE_POOL_2D, MAX_POOL_2D and MEAN: their constraints, and MEAN lowered to a depthwise
// convolution (with a Mul) or an average pool. Rules: docs/design/lowering/pooling-and-mean.md.

#include <algorithm>
#include <set>
#include <string>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_pooling(const WorkOp& o) {
  using B = BuiltinOperator;
  const int ifm = ifm_of(o);
  if (!tensor(ifm).shape.empty() && tensor(ifm).shape[0] != 1)
    return reject("IFM Tensor batch size must be 1",
                  "Tensor '" + tensor(ifm).name + "' has batch size: " + std::to_string(tensor(ifm).shape[0]));
  if (o.k.stride_w < 1 || o.k.stride_w > 3 || o.k.stride_h < 1 || o.k.stride_h > 3)
    return reject("Stride values for both width and height must be in the range [1, 3]",
                  "Op has stride WxH as: " + std::to_string(o.k.stride_w) + "x" + std::to_string(o.k.stride_h));
  if (auto f = check_types_equal(o)) return f;
  const std::int64_t kw = o.k.w, kh = o.k.h;
  if (o.builtin == B::AVERAGE_POOL_2D && o.pad == NpuPadding::Same) {
    if (kw < 1 || kw > 8 || kh < 1 || kh > 8)
      return reject("Kernel filter values for both width and height must be in the range [1, 8]",
                    "Op has kernel filter WxH as: " + std::to_string(kw) + "x" + std::to_string(kh));
    return std::nullopt;
  }
  if (kh < 1 || kh > 256)
    return reject("Kernel filter height must be in the range [1, 256]", "Op has kernel filter height as: " + std::to_string(kh));
  if (kw * kh < 1 || kw * kh > 65536)
    return reject("Product of kernel filter width and height must be in the range [1, 65536]",
                  "Op has product of kernel filter width and height as: " + std::to_string(kw * kh));
  return std::nullopt;
}

Rejection Lowering::check_mean(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  if (!is_8bit(tensor(ifm).type)) return reject("IFM must be int8 or uint8", "Op has ifm_dtype=" + type_text(ifm));
  const std::size_t r = tensor(ifm).shape.size();
  if (r < 2 || r > 4) return reject("Input tensor must be at least 2D and at most 4D", "Input tensor has " + std::to_string(r) + " dimensions");
  auto axes = constant_ints(o.in.size() > 1 ? o.in[1] : -1);
  for (auto& a : axes)
    if (a < 0) a += static_cast<std::int64_t>(r);
  const std::set<std::int64_t> ok = r == 4 ? std::set<std::int64_t>{1, 2} : std::set<std::int64_t>{0, 1};
  if (axes.empty() || axes.size() > 2 || !std::all_of(axes.begin(), axes.end(), [&](auto a) { return ok.count(a) > 0; }))
    return reject("Axis indices must correspond to height and width axes", "Axis is " + np_array(axes));
  const Shape4 s4 = mean_ifm_shape(o);
  const std::int64_t hw = static_cast<std::int64_t>(s4[1]) * s4[2];
  const auto* ro = std::get_if<ReducerOptions>(&o.opts);
  const bool keep = ro && ro->keep_dims;
  if (hw > 65536) return reject("Product of height and width can be at most 65536", "Product of height and width is " + std::to_string(hw));
  const bool same_q = tensor(ifm).q == tensor(ofm).q;
  if ((keep || !same_q) && hw > 4096)
    return reject("Product of height and width can be at most 4096 when the following is true: keep_dims is True or IFM and OFM quantization differ",
                  "Product of height and width is " + std::to_string(hw));
  if (r == 4 && tensor(ifm).type == TensorType::INT8 && keep && axes.size() == 2 && hw > 256)
    return reject("Product of IFM height and width must be at most 256 when the following is true: IFM is int8, keep_dims is True and axis is [1, 2]",
                  "Product of height and width is " + std::to_string(hw));
  return std::nullopt;
}

/// The 4-D view of a MEAN's IFM: [1, s0, s1, s2] for 3-D, [1, s0, s1, 1] for 2-D.
Shape4 Lowering::mean_ifm_shape(const WorkOp& o) {
  const Dims& s = tensor(o.in[0]).shape;
  if (s.size() == 3) return {1, s[0], s[1], s[2]};
  if (s.size() == 2) return {1, s[0], s[1], 1};
  return full4(s);
}

/// MEAN as a depthwise sum + Mul, an AvgPool, or a scaled depthwise convolution (pooling-and-mean.md,
/// "Three lowerings").
void Lowering::lower_mean(int id) {
  WorkOp& o = op(id);
  const int ifm = o.in[0], ofm = o.out[0];
  const std::size_t r = tensor(ifm).shape.size();
  auto axes = constant_ints(o.in.size() > 1 ? o.in[1] : -1);
  for (auto& a : axes)
    if (a < 0) a += static_cast<std::int64_t>(r);
  std::sort(axes.begin(), axes.end());
  Shape4 s4 = mean_ifm_shape(o);
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
  o.kind = OpKind::Compute;
  o.in = {ifm};
  o.ifm_s = s4;
  o.ofm_s = full4(tensor(ofm).shape);
  o.has_padding_attr = true;
  o.pad = NpuPadding::Valid;
  o.k = {};
  if (r == 4 && axes.size() == 2 && keep && tensor(ifm).type == TensorType::INT8) {
    // Case 1: DW sum into an int16 intermediate, then a Mul by 1/n.
    o.vt = VelaOpType::DepthwiseConv2DBias;
    o.k.w = s4[2];
    o.k.h = s4[1];
    o.wshape = {s4[3], s4[1], s4[2], 1};
    o.bias_len = s4[3];
    const NpuActivation act = o.act;
    o.act = NpuActivation::None;
    Dims is{1, 1, 1, s4[3]};
    const int mid = add_tensor(name + "_intermediate", is, TensorType::INT16, tensor(ofm).q);
    o.out = {mid};
    o.ofm_s = {1, 1, 1, s4[3]};
    const int one = add_tensor(name + "_mul_const", {1, 1, 1, 1}, TensorType::UINT8, {}, true);
    WorkOp m = make_compute_op(VelaOpType::Mul, name + "_mul", {mid, one}, {ofm});
    m.ifm_s = {1, 1, 1, s4[3]};
    m.ifm2_s = {1, 1, 1, 1};
    m.ofm_s = full4(tensor(ofm).shape);
    m.act = act;
    m.op_index = o.op_index;
    add_op(std::move(m));
    return;
  }
  if (tensor(ifm).q == tensor(ofm).q) {
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

}  // namespace npumap::tflite::lowering
