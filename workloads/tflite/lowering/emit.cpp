// The lowered graph: the passes and CPU operators in pass order with their NPU subgraphs, the
// lowered tensor table with its producers and consumers, and the order Vela's reports list passes in.
// Rules: docs/design/lowering/pass-packing.md.

#include <utility>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

int LoweredTensorIds::operator()(int t) {
  if (t < 0) return -1;
  auto it = ids.find(t);
  if (it != ids.end()) return it->second;
  const WorkTensor& s = tensors.at(static_cast<std::size_t>(t));
  LoweredTensor x;
  x.name = s.name;
  x.shape = s.shape;
  x.dtype = s.type;
  x.quant = s.q;
  x.model_tensor = s.model;
  x.constant = s.is_const;
  x.graph_input = s.gin;
  x.graph_output = s.gout;
  graph.tensors.push_back(std::move(x));
  const int id = static_cast<int>(graph.tensors.size() - 1);
  ids[t] = id;
  return id;
}

NpuGraph Lowering::emit_graph(const std::vector<PassGroup>& groups, const std::vector<int>& order) {
  NpuGraph g;
  g.reasons = reasons;
  g.warnings = warnings;
  LoweredTensorIds lt{g, tensors, {}};
  std::vector<int> pass_of_group(groups.size(), -1), cpu_of_group(groups.size(), -1);
  int subgraph = 0;
  bool in_npu_run = false;
  for (int gi : order) {
    const PassGroup& gr = groups[static_cast<std::size_t>(gi)];
    if (!gr.npu) {
      in_npu_run = false;
      cpu_of_group[static_cast<std::size_t>(gi)] = static_cast<int>(g.cpu_ops.size());
      g.cpu_ops.push_back(emit_cpu_op(op(gr.ops.front()), lt));
      continue;
    }
    if (!in_npu_run) ++subgraph;
    in_npu_run = true;
    pass_of_group[static_cast<std::size_t>(gi)] = static_cast<int>(g.passes.size());
    g.passes.push_back(emit_npu_pass(gr, subgraph, lt));
  }
  g.npu_subgraph_count = subgraph;
  // Producer / consumer wiring of the lowered tensor table.
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    NodeRef ref;
    if (pass_of_group[gi] >= 0) ref = {NodeRef::Kind::NpuPass, pass_of_group[gi]};
    else if (cpu_of_group[gi] >= 0) ref = {NodeRef::Kind::CpuOp, cpu_of_group[gi]};
    else continue;
    const PassGroup& gr = groups[gi];
    for (int i : group_inputs(gr)) g.tensors[static_cast<std::size_t>(lt(i))].consumers.push_back(ref);
    for (int o : op(gr.ops.back()).out)
      if (o >= 0) g.tensors[static_cast<std::size_t>(lt(o))].producers.push_back(ref);
  }
  g.report_order = make_report_order(g);
  mark_layout_eligibility(g);
  for (int t : sg.inputs) g.inputs.push_back(lt(t));
  for (const WorkTensor& t : tensors)
    if (t.gout) g.outputs.push_back(lt(static_cast<int>(&t - tensors.data())));
  return g;
}

CpuOp Lowering::emit_cpu_op(const WorkOp& o, LoweredTensorIds& lt) {
  CpuOp c;
  c.name = o.name;
  c.builtin = o.builtin;
  c.vela_type = vela_type_of(o.builtin);
  c.tflite_op_index = o.op_index;
  c.reason = o.reason;
  c.warning = cpu_pass_warning(c.vela_type);
  for (int i : o.in)
    if (i >= 0) c.inputs.push_back(lt(i));
  for (int i : o.out)
    if (i >= 0) c.outputs.push_back(lt(i));
  return c;
}

NpuPass Lowering::emit_npu_pass(const PassGroup& gr, int subgraph, LoweredTensorIds& lt) {
  const WorkOp& first = op(gr.ops.front());
  const WorkOp& last = op(gr.ops.back());
  NpuPass p;
  p.npu_subgraph = subgraph;
  if (gr.created_avgpool) {
    p.name = first.name + "_avgpool";
    p.op_type = VelaOpType::AvgPool;
    p.ops.push_back(VelaOpType::AvgPool);
    p.kernel = {};
    p.padding = NpuPadding::Valid;
  } else {
    p.name = first.name;
    p.op_type = first.vt;
    p.kernel = first.k;
    p.padding = first.has_padding_attr ? first.pad : NpuPadding::None;
    p.explicit_padding = first.epad;
  }
  for (int m : gr.ops) p.ops.push_back(op(m).vt);
  p.block_type = block_of(p.op_type);
  p.ifm_shape = first.ifm_s;
  p.ifm_offset = first.ifm_off;
  p.ofm_shape = last.ofm_s;
  p.ofm_offset = last.ofm_off;
  p.ifm = lt(first.in.empty() ? -1 : first.in[0]);
  const bool binary = !gr.created_avgpool && is_binary_vt(first.vt) && first.in.size() > 1;
  if (binary) {
    p.has_ifm2 = true;
    p.ifm2 = lt(first.in[1]);
    p.ifm2_shape = first.ifm2_s;
    p.ifm2_offset = first.ifm2_off;
    // Command generation puts a scalar / broadcast operand second and swaps the pass's op shapes
    // in place (not its tensors) (elementwise.md, "Operand order").
    const Shape4 a = p.ifm_shape, b = p.ifm2_shape;
    bool swap = a == Shape4{1, 1, 1, 1} && b != a;
    for (int i = 0; i < 4 && !swap; ++i)
      if (a[static_cast<std::size_t>(i)] == 1 && b[static_cast<std::size_t>(i)] != 1) swap = true;
    if (swap) {
      std::swap(p.ifm_shape, p.ifm2_shape);
      p.operands_reversed = true;
    }
  }
  p.ofm = lt(last.out.empty() ? -1 : last.out[0]);
  auto fill = [&](int t, TensorType& ty, NpuQuant& q) {
    if (t < 0) return;
    ty = lt.graph.tensors[static_cast<std::size_t>(t)].dtype;
    q = lt.graph.tensors[static_cast<std::size_t>(t)].quant;
  };
  fill(p.ifm, p.ifm_type, p.ifm_quant);
  fill(p.ifm2, p.ifm2_type, p.ifm2_quant);
  fill(p.ofm, p.ofm_type, p.ofm_quant);
  // Activation: the primary's own, or the post op's (written into the primary at command generation).
  p.activation = gr.created_avgpool ? NpuActivation::None : first.act;
  p.lut = first.lut;
  for (std::size_t m = gr.created_avgpool ? 0 : 1; m < gr.ops.size(); ++m) {
    const VelaOpType vt = op(gr.ops[m]).vt;
    if (vt == VelaOpType::Relu) p.activation = NpuActivation::Relu;
    if (vt == VelaOpType::Relu6) p.activation = NpuActivation::Relu6;
    if (vt == VelaOpType::ReluN1To1) p.activation = NpuActivation::ReluN1To1;
    if (vt == VelaOpType::Sigmoid) p.activation = NpuActivation::Sigmoid;
    if (vt == VelaOpType::Tanh) p.activation = NpuActivation::Tanh;
  }
  if (!gr.created_avgpool && first.weights >= 0 && !first.wshape.empty()) {
    const WorkTensor& w = tensor(first.weights);
    p.weights_tensor = w.model;
    p.weights_shape = first.wshape;
    p.weights_type = w.type;
    p.weights_quant = w.q;
  } else if (!gr.created_avgpool && !first.wshape.empty()) {
    p.weights_shape = first.wshape;  // created unit / averaging weights
  }
  if (!gr.created_avgpool && first.bias >= 0) p.bias_tensor = tensor(first.bias).model;
  p.bias_length = gr.created_avgpool ? 0 : first.bias_len;
  for (int i : group_inputs(gr)) p.inputs.push_back(lt(i));
  p.output = p.ofm;
  p.tflite_op_index = first.op_index;
  p.created_avgpool = gr.created_avgpool;
  return p;
}

/// Post-order walk over pass predecessors per NPU subgraph (see NpuGraph::report_order). A tensor
/// written by several passes (a concatenation) lists its writers last-first.
std::vector<int> make_report_order(const NpuGraph& g) {
  std::vector<int> order;
  const int n = static_cast<int>(g.passes.size());
  std::vector<std::vector<int>> preds(static_cast<std::size_t>(n));
  std::vector<char> has_succ(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const NpuPass& p = g.passes[static_cast<std::size_t>(i)];
    for (int t : p.inputs) {
      const auto& prods = g.tensors[static_cast<std::size_t>(t)].producers;
      for (auto it = prods.rbegin(); it != prods.rend(); ++it) {
        if (it->kind != NodeRef::Kind::NpuPass) continue;
        if (g.passes[static_cast<std::size_t>(it->index)].npu_subgraph != p.npu_subgraph) continue;
        preds[static_cast<std::size_t>(i)].push_back(it->index);
        has_succ[static_cast<std::size_t>(it->index)] = 1;
      }
    }
  }
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (int sub = 1; sub <= g.npu_subgraph_count; ++sub) {
    for (int root = 0; root < n; ++root) {
      if (g.passes[static_cast<std::size_t>(root)].npu_subgraph != sub || has_succ[static_cast<std::size_t>(root)] ||
          seen[static_cast<std::size_t>(root)])
        continue;
      // Iterative post-order: (pass, next predecessor to try).
      std::vector<std::pair<int, std::size_t>> stack{{root, 0}};
      seen[static_cast<std::size_t>(root)] = 1;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const auto& ps = preds[static_cast<std::size_t>(node)];
        if (next < ps.size()) {
          const int pr = ps[next++];
          if (!seen[static_cast<std::size_t>(pr)]) {
            seen[static_cast<std::size_t>(pr)] = 1;
            stack.emplace_back(pr, 0);
          }
          continue;
        }
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace npumap::tflite::lowering
