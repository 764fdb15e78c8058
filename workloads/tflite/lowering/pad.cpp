// PAD and explicit padding: the PAD constraints, PAD fused into a VALID consumer as hardware padding,
// the fallback of a remaining PAD to AvgPool copies, and the explicit padding of every padded op.
// Rules: docs/design/lowering/pad-and-padding.md.

#include <algorithm>
#include <string>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_pad(const WorkOp& o) {
  if (o.in.size() != 2)
    return reject("Number of input tensors must be exactly 2", "Op has " + std::to_string(o.in.size()) + " input tensors");
  const int p = o.in[1];
  const Dims& ps = tensor(p).shape;
  if (!(ps == Dims{3, 2} || ps == Dims{4, 2}))
    return reject("The padding tensor must have the shape [3,2] or [4,2]", "The pad tensor has the shape: " + shape_text(p));
  const auto v = constant_ints(p);
  if (v.size() == static_cast<std::size_t>(ps[0] * 2)) {
    const std::size_t n = v.size();
    const bool last_zero = v[n - 1] == 0 && v[n - 2] == 0;
    const bool first_zero = ps[0] == 3 || (v[0] == 0 && v[1] == 0);
    if (!last_zero || !first_zero) {
      if (ps[0] == 4)
        return reject("The pad tensor can only pad width and height",
                      "First dimension padding: " + np_array({v[0], v[1]}) +
                          ", last dimension padding: " + np_array({v[n - 2], v[n - 1]}));
      return reject("The pad tensor can only pad width and height",
                    "Last dimension padding: " + np_array({v[n - 2], v[n - 1]}));
    }
  }
  if (tensor(p).type != TensorType::INT32 && tensor(p).type != TensorType::INT64)
    return reject("Pad tensor must be of type: int32, int64", "Tensor '" + tensor(p).name + "' has data type: " + type_text(p));
  if (!tensor(p).is_const) return reject("The padding tensor must be constant", "Tensor '" + tensor(p).name + "' has non-constant buffer");
  return std::nullopt;
}

/// A VALID conv / DW / AvgPool reading an NPU PAD takes the padding in hardware (pad-and-padding.md,
/// "PAD fused into its consumer").
void Lowering::fuse_pad_into_consumer(int id) {
  WorkOp& o = op(id);
  const VelaOpType vt = o.vt;
  if (!(vt == VelaOpType::Conv2DBias || vt == VelaOpType::DepthwiseConv2DBias || vt == VelaOpType::AvgPool)) return;
  if (o.pad != NpuPadding::Valid || o.in.empty()) return;
  relink();
  const int ifm = o.in[0];
  if (tensor(ifm).prod.size() != 1) return;
  const int pid = tensor(ifm).prod[0];
  WorkOp& p = op(pid);
  if (p.dead || !p.npu || p.kind != OpKind::Pad) return;
  const int pin = p.in[0];
  if (tensor(pin).type != tensor(ifm).type || !(tensor(pin).q == tensor(ifm).q) || !tensor(pin).q.quantized()) return;
  const auto v = constant_ints(p.in[1]);
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
  o.ifm_s = full4(tensor(pin).shape);
  relink();
  if (tensor(ifm).cons.empty() && !tensor(ifm).gout) p.dead = true;
}

/// One PAD as an AvgPool copy of its input plus one copy of zero-point constants per padded side.
void Lowering::lower_pad_as_copies(int id) {
  WorkOp& p = op(id);
  const int ifm = p.in[0], ofm = p.out[0];
  const auto v = constant_ints(p.in[1]);
  const std::size_t rows = v.size() / 2;
  if (rows < 3)  // the checks passed, so only a paddings tensor whose data does not match its shape
    bad_input(operator_key(p.op_index, "inputs[1]"),
              "PAD '" + p.name + "': the paddings tensor holds " + std::to_string(v.size()) + " values, not 6 or 8");
  const auto t = static_cast<std::int32_t>(v[(rows - 3) * 2]), b = static_cast<std::int32_t>(v[(rows - 3) * 2 + 1]);
  const auto l = static_cast<std::int32_t>(v[(rows - 2) * 2]), r = static_cast<std::int32_t>(v[(rows - 2) * 2 + 1]);
  const std::string name = p.name;
  const Shape4 is = full4(tensor(ifm).shape), os = full4(tensor(ofm).shape);
  const NpuActivation act = p.act;
  const int op_index = p.op_index;
  p.dead = true;
  auto write = [&](const std::string& suffix, int src, Shape4 src_s, Shape4 off, NpuActivation a) {
    WorkOp w = make_compute_op(VelaOpType::AvgPool, name + suffix, {src}, {ofm});
    w.ifm_s = src_s;
    w.ofm_s = os;
    w.ofm_off = off;
    w.act = a;
    w.has_padding_attr = true;
    w.pad = NpuPadding::Valid;
    w.op_index = op_index;
    add_op(std::move(w));
  };
  write("_main", ifm, is, {0, t, l, 0}, act);
  auto zeros = [&](const std::string& suffix, Shape4 s) {
    return add_tensor(name + suffix + "_zeros", {s[0], s[1], s[2], s[3]}, tensor(ofm).type, tensor(ofm).q, true);
  };
  if (t > 0) { const Shape4 s{1, t, os[2], os[3]}; write("_top", zeros("_top", s), s, {0, 0, 0, 0}, NpuActivation::None); }
  if (b > 0) { const Shape4 s{1, b, os[2], os[3]}; write("_bottom", zeros("_bottom", s), s, {0, os[1] - b, 0, 0}, NpuActivation::None); }
  if (l > 0) { const Shape4 s{1, is[1], l, os[3]}; write("_left", zeros("_left", s), s, {0, t, 0, 0}, NpuActivation::None); }
  if (r > 0) { const Shape4 s{1, is[1], r, os[3]}; write("_right", zeros("_right", s), s, {0, t, os[2] - r, 0}, NpuActivation::None); }
}

/// The explicit (top, left, bottom, right) of an op with a padding attribute (pad-and-padding.md,
/// "Explicit padding").
void resolve_explicit_padding(WorkOp& o) {
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

/// Every PAD still on the NPU becomes copies into the padded OFM (pad-and-padding.md, "PAD lowered to
/// copies").
void Lowering::lower_remaining_pads() {
  for (std::size_t id = 0; id < ops.size(); ++id) {
    if (ops[id].dead || !ops[id].npu || ops[id].kind != OpKind::Pad) continue;
    lower_pad_as_copies(static_cast<int>(id));
  }
}

}  // namespace npumap::tflite::lowering
