// RESHAPE and the other alias ops: the AvgPool copy of a reshape between boundaries, the removal of
// reshapes (SQUEEZE, EXPAND_DIMS and unremovable reshapes alias too), and the identity bypass.
// Rules: docs/design/lowering/reshape.md.

#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

bool Lowering::is_boundary_input(int t) { return tensor(t).gin || tensor(t).is_const || tensor(t).gout || cpu_produced(t); }

bool Lowering::is_boundary_output(int t) { return tensor(t).gout || cpu_consumed(t); }

/// A RESHAPE between two boundaries gets an AvgPool copy of its input (reshape.md, "A reshape between
/// boundaries").
void Lowering::copy_reshapes_between_boundaries() {
  const std::size_t n = ops.size();
  for (std::size_t id = 0; id < n; ++id) {
    if (ops[id].dead || !ops[id].npu || ops[id].kind != OpKind::Reshape) continue;
    const int in = ops[id].in[0], out = ops[id].out[0];
    if (!(is_boundary_input(in) && is_boundary_output(out))) continue;
    const int copy = clone_tensor(in, "_avgpool");
    const std::vector<int> consumers = tensor(in).cons;
    for (int c : consumers) replace_input(c, in, copy);
    WorkOp a = make_compute_op(VelaOpType::AvgPool, tensor(in).name + "_avgpool", {in}, {copy});
    a.ifm_s = a.ofm_s = full4(tensor(in).shape);
    a.has_padding_attr = true;
    a.pad = NpuPadding::Valid;
    add_op(std::move(a));
    relink();
  }
}

/// Every RESHAPE, SQUEEZE and EXPAND_DIMS vanishes (reshape.md, "Removal").
void Lowering::remove_reshapes() {
  for (std::size_t id = 0; id < ops.size(); ++id) {
    WorkOp& o = ops[id];
    if (o.dead) continue;
    const bool reshape_like = o.kind == OpKind::Reshape || o.kind == OpKind::Squeeze || o.kind == OpKind::ExpandDims;
    if (!reshape_like || o.in.empty() || o.out.empty() || o.in[0] < 0) continue;
    // NPU RESHAPEs with equal quantisation are removed (reshape.md); the rest are memory-only passes that
    // alias input and output (no requantisation), which vanish from the pass list just the same.
    bypass_alias_op(static_cast<int>(id));
  }
}

/// Identity ops (a RESIZE_BILINEAR to the same shape, a SPLIT with one output) vanish (reshape.md).
void Lowering::bypass_identities() {
  for (std::size_t id = 0; id < ops.size(); ++id)
    if (!ops[id].dead && ops[id].kind == OpKind::Identity) bypass_alias_op(static_cast<int>(id));
}

}  // namespace npumap::tflite::lowering
