// Layout eligibility: which feature maps of the lowered graph may use the NHCWB16 brick layout.
// Rules: docs/design/lowering/layout.md.

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

/// Marks each lowered tensor's nhcwb16_eligible and needs_linear_format (layout.md).
void mark_layout_eligibility(NpuGraph& g) {
  for (std::size_t t = 0; t < g.tensors.size(); ++t) {
    LoweredTensor& x = g.tensors[t];
    const Shape4 whole = full4(x.shape);
    bool ok = !x.producers.empty() && !x.graph_input && !x.constant && !x.graph_output;
    // A tensor passed between two NPU subgraphs crosses the CPU graph: it stays NHWC, although
    // the graph optimiser, which runs before the NPU subgraphs are cut, has cleared its flag.
    bool one_subgraph = true;
    int sub = -1;
    for (const auto* list : {&x.producers, &x.consumers})
      for (const NodeRef& r : *list)
        if (r.kind == NodeRef::Kind::NpuPass) {
          const int s = g.passes[static_cast<std::size_t>(r.index)].npu_subgraph;
          if (sub >= 0 && s != sub) one_subgraph = false;
          sub = s;
        }
    for (const NodeRef& r : x.producers) {
      if (!ok) break;
      if (r.kind != NodeRef::Kind::NpuPass) { ok = false; break; }
      const NpuPass& p = g.passes[static_cast<std::size_t>(r.index)];
      ok = p.ofm_shape == whole && p.ofm_offset[3] % 16 == 0;
    }
    for (const NodeRef& r : x.consumers) {
      if (!ok) break;
      if (r.kind != NodeRef::Kind::NpuPass) { ok = false; break; }
      const NpuPass& p = g.passes[static_cast<std::size_t>(r.index)];
      const int id = static_cast<int>(t);
      if (p.ifm != id && p.ifm2 != id) continue;  // read as weights, bias or a created constant
      if (p.op_type == VelaOpType::ReduceSum && x.dtype == TensorType::INT32) { ok = false; break; }
      // Undo the command-generation swap to pair each operand with its own view.
      const Shape4& s1 = p.operands_reversed ? p.ifm2_shape : p.ifm_shape;
      const Shape4& s2 = p.operands_reversed ? p.ifm_shape : p.ifm2_shape;
      if (p.ifm == id) ok = ok && s1 == whole && p.ifm_offset[3] % 16 == 0;
      if (p.ifm2 == id) ok = ok && s2 == whole && p.ifm2_offset[3] % 16 == 0;
    }
    x.needs_linear_format = !ok;
    x.nhcwb16_eligible = ok && one_subgraph;
  }
}

}  // namespace npumap::tflite::lowering
