// The per-operator rewrite list in Vela's order, the graph-level first-layer stride-2 rewrite, and the
// step that finishes the NPU ops (identity bypass, LUT fusion, remaining PADs, explicit padding).
// Rules: docs/design/lowering/graph-rewrites.md.

#include <cstddef>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

/// Every NPU op gets the rewrites of its kind, in Vela's order (graph-rewrites.md, "The operator
/// rewrites, in order"). A rewrite may turn the op into
/// another type (a later rewrite of the list then sees it) or replace it by new ops (appended, so this
/// sweep does not visit them: they are already lowered). `ops[id]` is read afresh after each rewrite
/// because a rewrite that appends ops may move the vector.
void Lowering::apply_operator_rewrites() {
  for (std::size_t id = 0; id < ops.size(); ++id) {
    if (ops[id].dead || !ops[id].npu) continue;
    const int i = static_cast<int>(id);
    auto live = [&]() { return !ops[id].dead && ops[id].npu; };
    auto compute = [&]() { return live() && ops[id].kind == OpKind::Compute; };
    auto is = [&](VelaOpType t) { return compute() && ops[id].vt == t; };
    const bool rewrites = opt.vela_rewrites;
    if (ops[id].kind == OpKind::Mean) lower_mean(i);
    if (is(VelaOpType::DepthwiseConv2DBias)) lower_depth_multiplier(i);
    if (rewrites && is(VelaOpType::Conv2DBias)) convert_1x1_conv_to_fully_connected(i);
    if (live() && ops[id].kind == OpKind::Softmax) decompose_softmax(i);
    if (rewrites && is(VelaOpType::Conv2DBias)) rewrite_first_layer_stride2(i);
    if (live() && ops[id].kind == OpKind::HardSwish) make_lut_op(i, LutKind::HardSwish, "_lut_hardswish");
    if (is(VelaOpType::FullyConnected)) flatten_fully_connected_input(i);
    if (is(VelaOpType::Conv2DBackpropInputSwitchedBias)) lower_transpose_conv(i);
    if (compute()) lower_requantising_relu(i);
    if (is(VelaOpType::ResizeBilinear)) lower_resize_bilinear(i);
    if (rewrites && is(VelaOpType::Maximum)) fuse_mul_maximum(i);
    if (is(VelaOpType::LeakyRelu) && ops[id].builtin == BuiltinOperator::LEAKY_RELU && !ops[id].rewritten)
      lower_leaky_relu(i);
    if (is(VelaOpType::Sigmoid) || is(VelaOpType::Tanh)) lower_sigmoid_tanh(i);
    if (rewrites && compute()) fuse_pad_into_consumer(i);
  }
  relink();
}

/// The first-layer stride-2 rewrite (graph-rewrites.md): the file's first operator, a stride-2
/// convolution on a shallow IFM of even width, reads pairs of adjacent pixels as channels instead:
/// IFM op shape [N, H, W/2, 2C], kernel width halved (an odd width padded by one column first),
/// stride 1 across the width.
void Lowering::rewrite_first_layer_stride2(int id) {
  WorkOp& o = op(id);
  if (o.op_index != 0 || o.k.stride_w != 2 || o.ifm_s[3] > 4 || o.ifm_s[2] % 2 != 0 || o.k.w < 2) return;
  o.ifm_s = {o.ifm_s[0], o.ifm_s[1], o.ifm_s[2] / 2, o.ifm_s[3] * 2};
  const int kw = o.k.w + (o.k.w % 2);
  o.k.w = kw / 2;
  o.k.stride_w = 1;
  o.wshape = {o.wshape[0], o.k.h, kw / 2, o.wshape[3] * 2};
}

/// Finishing the NPU ops (graph-rewrites.md): identities vanish, LUT ops move onto their producers,
/// PADs still on the NPU become copies, and every op with a padding attribute gets its explicit
/// (top, left, bottom, right).
void Lowering::finish_npu_ops() {
  relink();
  bypass_identities();
  fuse_lut_activations();
  lower_remaining_pads();
  relink();
  for (WorkOp& o : ops)
    if (!o.dead && o.npu && o.kind == OpKind::Compute && o.has_padding_attr) resolve_explicit_padding(o);
}

}  // namespace npumap::tflite::lowering
