// Concatenation, pack, split, split_v, unpack, slice and strided slice: their constraints, the slice
// writes of a concatenation, the SplitSliceRead ops of the split family, and their absorption into
// the consumer (or an AvgPool copy). Rules: docs/design/lowering/concat-split.md.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_concatenation(const WorkOp& o) {
  const int ofm = ofm_of(o);
  const auto* c = std::get_if<ConcatenationOptions>(&o.opts);
  if (!c) return reject("Axis attribute must exist", "Op has no axis attribute");
  const int r = static_cast<int>(tensor(ofm).shape.size());
  int axis = c->axis;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r)
    return reject("Axis attribute must be in the range [0, " + std::to_string(r) + ")", "Op has axis=" + std::to_string(c->axis));
  for (int t : o.in)
    if (t >= 0 && static_cast<int>(tensor(t).shape.size()) != r)
      return reject("All Input dimensionalities must match OFM dimensionality",
                    "Op has ofm_dimensionality=" + std::to_string(r) + " and the list of mismatching inputs are: Tensor '" +
                        tensor(t).name + "' has dimensionality: " + std::to_string(tensor(t).shape.size()));
  for (int t : o.in)
    for (int d = 0; t >= 0 && d < r; ++d)
      if (d != axis && tensor(t).shape[static_cast<std::size_t>(d)] != tensor(ofm).shape[static_cast<std::size_t>(d)])
        return reject("All Input dimensions must match OFM dimension in all axes except the one defined by the axis attribute",
                      "Op has axis=" + std::to_string(axis) + ", ofm_shape=" + shape_text(ofm) + " and the list of mismatching inputs are: Tensor '" +
                          tensor(t).name + "' has shape: " + shape_text(t));
  return std::nullopt;
}

Rejection Lowering::check_split_v(const WorkOp& o) {
  const auto v = constant_ints(o.in.size() > 1 ? o.in[1] : -1);
  if (std::count(v.begin(), v.end(), -1) > 1)
    return reject("Only one size is allowed to be inferred", "Op has multiple sizes inferred: " + np_array(v));
  return std::nullopt;
}

Rejection Lowering::check_strided_slice(const WorkOp& o) {
  if (o.in.size() != 4) return reject("Exactly 4 Input tensors are required", "Op has " + std::to_string(o.in.size()) + " inputs");
  std::vector<std::string> nc;
  for (std::size_t i = 1; i < 4; ++i)
    if (!has_constant_data(o.in[i])) nc.push_back(tensor(o.in[i]).name);
  if (!nc.empty()) {
    std::string s;
    for (std::size_t i = 0; i < nc.size(); ++i) s += (i ? ", " : "") + nc[i];
    return reject("Begin, End and Stride Input tensors must be constant", "Op has non-constant tensors: " + s);
  }
  const auto strides = constant_ints(o.in[3]);
  for (auto s : strides)
    if (s != 1) return reject("All Strides values must be 1", "Op has strides values " + np_array(strides));
  const auto* so = std::get_if<StridedSliceOptions>(&o.opts);
  if (so && so->ellipsis_mask != 0)
    return reject("ellipsis_mask must be 0", "Op has ellipsis mask as: " + std::to_string(so->ellipsis_mask));
  if (so && so->new_axis_mask != 0 && so->shrink_axis_mask != 0)
    return reject("new_axis_mask and shrink_axis_mask cannot both be set",
                  "Op has new_axis_mask=" + std::to_string(so->new_axis_mask) +
                      " and shrink_axis_mask=" + std::to_string(so->shrink_axis_mask));
  const auto [b, e] = strided_slice_bounds(o);
  for (std::size_t i = 0; i < b.size(); ++i)
    if (e[i] <= b[i])
      return reject("Slice 'end' values must be greater than 'begin' values",
                    "Op has begin_values=" + np_array(b) + " and end_values=" + np_array(e));
  return std::nullopt;
}

/// STRIDED_SLICE begin/end after masks and negative-index conversion.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> Lowering::strided_slice_bounds(const WorkOp& o) {
  auto b = constant_ints(o.in[1]), e = constant_ints(o.in[2]);
  const Dims& s = tensor(o.in[0]).shape;
  const auto* so = std::get_if<StridedSliceOptions>(&o.opts);
  const int bm = so ? so->begin_mask : 0, em = so ? so->end_mask : 0, sm = so ? so->shrink_axis_mask : 0;
  const std::size_t n = std::min({b.size(), e.size(), s.size()});
  b.resize(n);
  e.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t d = s[i];
    if (bm & (1 << i)) b[i] = 0;
    if (em & (1 << i)) e[i] = d;
    if (b[i] < 0) b[i] += d;
    if (e[i] < 0) e[i] += d;
    if (sm & (1 << i)) e[i] = b[i] + 1;
  }
  return {b, e};
}

/// CONCATENATION and PACK on the NPU become one AvgPool slice write per input into the whole output
/// (concat-split.md, "Concatenation and PACK").
void Lowering::lower_concatenations() {
  const std::size_t n = ops.size();
  for (std::size_t id = 0; id < n; ++id) {
    WorkOp& o = ops[id];
    if (o.dead || !o.npu || (o.kind != OpKind::Concat && o.kind != OpKind::Pack)) continue;
    if (o.kind == OpKind::Concat && o.act != NpuActivation::None)
      bad_input(operator_key(o.op_index, "builtin_options.fused_activation_function"),
                "CONCATENATION '" + o.name + "' with a fused activation on the NPU makes Vela 2.1 fail with an internal assertion",
                "apply the activation in a separate operator");
    const int ofm = o.out[0];
    int axis4 = 0;
    std::vector<Shape4> ishapes = o.in_shapes;
    if (o.kind == OpKind::Concat) {
      const int r = static_cast<int>(tensor(ofm).shape.size());
      int axis = std::get<ConcatenationOptions>(o.opts).axis;
      if (axis < 0) axis += r;
      axis4 = axis + 4 - r;
    } else {
      // PACK: the new axis (PackOptions.axis, field 1; default 0); negative counts from rank + 1.
      const int r = o.in.empty() ? 0 : static_cast<int>(tensor(o.in[0]).shape.size());
      int axis = raw_option_int(o.op_index, 1).value_or(0);
      if (axis < 0) axis += r + 1;
      axis = std::clamp(axis, 0, r);
      axis4 = axis + 4 - (r + 1);
      for (std::size_t i = 0; i < o.in.size(); ++i) {
        if (o.in[i] < 0) continue;
        Dims d = tensor(o.in[i]).shape;
        d.insert(d.begin() + std::min<std::ptrdiff_t>(axis, static_cast<std::ptrdiff_t>(d.size())), 1);
        ishapes[i] = full4(d);
      }
    }
    const Shape4 ofm4 = o.out_shapes.at(0);
    const std::string name = o.name;
    const std::vector<int> ins = o.in;
    o.dead = true;
    std::int32_t offset = 0;
    for (std::size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] < 0) continue;
      WorkOp w = make_compute_op(VelaOpType::AvgPool, name + std::to_string(i) + "_avgpool", {ins[i]}, {ofm});
      w.ifm_s = ishapes[i];
      w.ofm_s = ofm4;
      w.ofm_off[static_cast<std::size_t>(axis4)] = offset;
      offset += ishapes[i][static_cast<std::size_t>(axis4)];
      w.has_padding_attr = true;
      w.pad = NpuPadding::Valid;
      w.op_index = ops[id].op_index;
      add_op(std::move(w));
    }
  }
  relink();
}

/// Every output of a split-family operator on the NPU gets its own SplitSliceRead with a read offset
/// (concat-split.md, "The split family"); a SPLIT with one output becomes an identity.
void Lowering::lower_splits_and_slices() {
  const std::size_t n = ops.size();
  for (std::size_t id = 0; id < n; ++id) {
    WorkOp& o = ops[id];
    if (o.dead || !o.npu) continue;
    if (o.kind != OpKind::Split && o.kind != OpKind::SplitV && o.kind != OpKind::Slice && o.kind != OpKind::StridedSlice && o.kind != OpKind::Unpack) continue;
    const int src = o.kind == OpKind::Split ? o.in.at(1) : o.in.at(0);
    if (o.kind == OpKind::Split && o.out.size() == 1) {
      o.kind = OpKind::Identity;
      o.in = {src};
      continue;
    }
    const Dims& is = tensor(src).shape;
    const int r = static_cast<int>(is.size());
    std::vector<Shape4> offsets(o.out.size(), Shape4{0, 0, 0, 0});
    if (o.kind == OpKind::Split || o.kind == OpKind::SplitV || o.kind == OpKind::Unpack) {
      int axis = o.kind == OpKind::Unpack ? raw_option_int(o.op_index, 1).value_or(0) : 0;  // UnpackOptions.axis
      if (o.kind == OpKind::Split) {
        const auto a = constant_ints(o.in[0]);
        axis = a.empty() ? 0 : static_cast<int>(a[0]);
      } else if (o.kind == OpKind::SplitV) {
        const auto a = constant_ints(o.in.size() > 2 ? o.in[2] : -1);
        axis = a.empty() ? 0 : static_cast<int>(a[0]);
      }
      int axis4 = 0;
      if (o.kind == OpKind::Unpack) {
        if (axis < 0) axis += r;
        axis4 = axis + 4 - r;  // rank of the input = rank(output) + 1
        for (std::size_t i = 0; i < o.out.size(); ++i) {
          Dims d = tensor(o.out[i]).shape;
          d.insert(d.begin() + std::min<int>(std::max(axis, 0), static_cast<int>(d.size())), 1);
          o.out_shapes[i] = full4(d);
        }
      } else {
        if (axis < 0) axis += r;
        axis4 = axis + 4 - r;
      }
      axis4 = std::clamp(axis4, 0, 3);
      std::int32_t off = 0;
      for (std::size_t i = 0; i < o.out.size(); ++i) {
        offsets[i][static_cast<std::size_t>(axis4)] = off;
        off += o.out_shapes[i][static_cast<std::size_t>(axis4)];
      }
    } else {
      std::vector<std::int64_t> begin;
      if (o.kind == OpKind::Slice) {
        begin = constant_ints(o.in.size() > 1 ? o.in[1] : -1);
      } else {
        begin = strided_slice_bounds(o).first;
        const auto* so = std::get_if<StridedSliceOptions>(&o.opts);
        if (so && (so->shrink_axis_mask || so->new_axis_mask)) {
          Dims d = tensor(o.out[0]).shape;
          if (so->shrink_axis_mask) {
            Dims full;
            std::size_t j = 0;
            for (int i = 0; i < r; ++i) full.push_back((so->shrink_axis_mask & (1 << i)) ? 1 : (j < d.size() ? d[j++] : 1));
            d = full;
          } else {
            Dims kept;
            for (std::size_t i = 0; i < d.size(); ++i)
              if (!(so->new_axis_mask & (1 << i))) kept.push_back(d[i]);
            d = kept;
          }
          o.out_shapes[0] = full4(d);
        }
      }
      const std::size_t nb = std::min<std::size_t>(begin.size(), 4);
      for (std::size_t i = 0; i < nb; ++i)
        offsets[0][4 - nb + i] = static_cast<std::int32_t>(begin[begin.size() - nb + i]);
    }
    const Shape4 in4 = full4(is);
    const std::string name = o.name;
    const std::vector<int> outs = o.out;
    const std::vector<Shape4> oshapes = o.out_shapes;
    const int op_index = o.op_index;
    o.dead = true;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      WorkOp r2;
      r2.kind = OpKind::SplitSliceRead;
      r2.name = name;
      r2.in = {src};
      r2.out = {outs[i]};
      r2.ifm_s = in4;
      r2.ofm_s = oshapes[i];
      r2.ifm_off = offsets[i];
      r2.op_index = op_index;
      add_op(std::move(r2));
    }
  }
  relink();
}

/// Each SplitSliceRead folds into its single NPU consumer or becomes an AvgPool copy (concat-split.md,
/// "Absorbing the slice reads").
void Lowering::absorb_split_slice_reads() {
  relink();
  for (std::size_t id = 0; id < ops.size(); ++id) {
    WorkOp& r = ops[id];
    if (r.dead || r.kind != OpKind::SplitSliceRead) continue;
    const int out = r.out[0];
    bool fold = consumer_entries(out) == 1 && !tensor(out).gout;
    if (fold) {
      const WorkOp& c = op(tensor(out).cons[0]);
      fold = c.npu && c.kind == OpKind::Compute && r.ofm_s == full4(tensor(out).shape);
    }
    if (fold) {
      WorkOp& c = op(tensor(out).cons[0]);
      const bool second = c.in.size() > 1 && c.in[1] == out && c.in[0] != out;
      if (second) {
        c.in[1] = r.in[0];
        c.ifm2_s = r.ifm_s;
        c.ifm2_off = r.ifm_off;
      } else {
        c.in[0] = r.in[0];
        c.ifm_s = r.ifm_s;
        c.ifm_off = r.ifm_off;
      }
      r.dead = true;
    } else {
      r.kind = OpKind::Compute;
      r.vt = VelaOpType::AvgPool;
      r.name += "_avgpool";
      r.has_padding_attr = true;
      r.pad = NpuPadding::Valid;
      r.k = {};
    }
    relink();
  }
}

}  // namespace npumap::tflite::lowering
