// RESIZE_BILINEAR: its constraints and its lowering (identity, a broadcast Add for a 1x1 IFM, or a
// chain of x2 upscales). Rules: docs/design/lowering/resize.md.

#include <string>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_resize_bilinear(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  if (tensor(ifm).shape.size() != 4)
    return reject("The width and height of the IFM and OFM must match one of the following criteria:",
                  "Op has ifm_shape=" + shape_text(ifm) + " and ofm_shape=" + shape_text(ofm));
  const auto* ro = std::get_if<ResizeOptions>(&o.opts);
  const bool ac = ro && ro->align_corners;
  const Shape4 i4 = full4(tensor(ifm).shape), o4 = full4(tensor(ofm).shape);
  bool ok = (i4[1] == 1 && i4[2] == 1) || (i4[1] == o4[1] && i4[2] == o4[2]);
  if (!ok) {
    std::int64_t h = i4[1], w = i4[2];
    // Repeated doubling; stops when a dimension no longer grows (align_corners with size 1).
    while (h < o4[1] && w < o4[2]) {
      const std::int64_t nh = ac ? h * 2 - 1 : h * 2, nw = ac ? w * 2 - 1 : w * 2;
      if (nh <= h || nw <= w) break;
      h = nh;
      w = nw;
      if (h == o4[1] && w == o4[2]) ok = true;
    }
  }
  if (!ok)
    return reject("The width and height of the IFM and OFM must match one of the following criteria:",
                  "Op has ifm_shape=" + shape_text(ifm) + ", ofm_shape=" + shape_text(ofm) + " and align_corners=" + (ac ? "True" : "False"));
  return std::nullopt;
}

void Lowering::lower_resize_bilinear(int id) {
  WorkOp& o = op(id);
  if (o.builtin != BuiltinOperator::RESIZE_BILINEAR || o.rewritten) return;
  o.rewritten = true;
  const int ifm = o.in[0], ofm = o.out[0];
  const auto* ro = std::get_if<ResizeOptions>(&o.opts);
  const bool ac = ro && ro->align_corners;
  if (o.ifm_s == o.ofm_s) {
    o.kind = OpKind::Identity;
    o.in = {ifm};
    return;
  }
  if (o.ifm_s[1] == 1 && o.ifm_s[2] == 1) {
    o.vt = VelaOpType::Add;
    o.name += "_add";
    const int zeros = add_tensor(o.name + "_zeros", tensor(ofm).shape, tensor(ifm).type, tensor(ifm).q, true);
    o.in = {zeros, ifm};
    o.ifm2_s = o.ifm_s;
    o.ifm_s = o.ofm_s;
    tensor(ofm).q = tensor(ifm).q;
    return;
  }
  // Chain of x2 upscales.
  std::vector<Shape4> steps;
  Shape4 cur = o.ifm_s;
  while (cur[1] < o.ofm_s[1] && steps.size() < 32) {
    const Shape4 next{cur[0], ac ? cur[1] * 2 - 1 : cur[1] * 2, ac ? cur[2] * 2 - 1 : cur[2] * 2, cur[3]};
    if (next[1] <= cur[1]) break;
    cur = next;
    steps.push_back(cur);
  }
  // The checks compare heights and widths only; other dimensions that differ leave no chain.
  if (steps.empty())
    bad_input(operator_key(o.op_index, "outputs[0]"),
              "RESIZE_BILINEAR '" + o.name + "' resizes " + shape_text(ifm) + " to " + shape_text(ofm) +
                  ": only the height and width may change");
  const std::string name = o.name;
  const Shape4 first_in = o.ifm_s;
  const int op_index = o.op_index;
  const NpuActivation act = o.act;
  o.dead = true;
  int prev = ifm;
  Shape4 prev_s = first_in;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const bool last = i + 1 == steps.size();
    const int out = last ? ofm : add_tensor(name + "_" + std::to_string(i + 1) + "_out",
                                            {steps[i][0], steps[i][1], steps[i][2], steps[i][3]}, TensorType::INT16, tensor(ofm).q);
    WorkOp r = make_compute_op(VelaOpType::ResizeBilinear, i == 0 ? name : name + "_" + std::to_string(i), {prev}, {out});
    r.ifm_s = prev_s;
    r.ofm_s = steps[i];
    r.k = {2, 2, 1, 1, 1, 1};
    r.has_padding_attr = true;
    r.pad = ac ? NpuPadding::Valid : NpuPadding::Same;
    r.op_index = op_index;
    if (last) r.act = act;
    add_op(std::move(r));
    prev = out;
    prev_s = steps[i];
  }
}

}  // namespace npumap::tflite::lowering
