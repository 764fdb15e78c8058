// Pass packing: which ops share a pass (a main op with the post ops after it, or post ops with a
// created AvgPool), and the order in which Vela lists the passes, which decides the NPU subgraphs.
// Rules: docs/design/lowering/pass-packing.md.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

NpuGraph Lowering::pack_passes() {
  prune_unreachable();
  for (std::size_t id = 0; id < ops.size(); ++id) {
    const WorkOp& o = ops[id];
    if (o.dead) continue;
    if (o.npu && o.kind != OpKind::Compute)
      internal_error("operator '" + o.name + "' (operators[" + std::to_string(o.op_index) +
                     "]) was left unlowered on the NPU");
  }
  std::vector<int> group_of(ops.size(), -1);
  const std::vector<PassGroup> groups = form_pass_groups(group_of);
  return emit_graph(groups, order_pass_groups(groups, group_of));
}

/// Pass membership (pass-packing.md, "What goes into one pass"): walk backwards from each op not yet
/// claimed, consumers before producers. `group_of` receives each op's group.
std::vector<PassGroup> Lowering::form_pass_groups(std::vector<int>& group_of) {
  std::vector<PassGroup> groups;
  std::vector<int> order = topological_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int start = *it;
    if (group_of[static_cast<std::size_t>(start)] >= 0) continue;
    PassGroup g;
    g.npu = op(start).npu;
    std::vector<int> members{start};
    if (g.npu) {
      bool has_main = !(is_post(op(start).vt) || is_fuse_limited(op(start).vt));
      bool has_fl = is_fuse_limited(op(start).vt);
      bool has_mac = is_mac_main(op(start).vt), has_ew = is_elementwise_main(op(start).vt);
      int cur = start;
      while (!has_main) {
        const WorkOp& c = op(cur);
        const int t = c.in.empty() ? -1 : c.in[0];
        if (t < 0 || tensor(t).prod.size() != 1 || tensor(t).gout) break;
        const int p = tensor(t).prod[0];
        const WorkOp& po = op(p);
        if (po.dead || !po.npu || group_of[static_cast<std::size_t>(p)] >= 0) break;
        if (consumer_entries(t) != 1 || po.out.size() != 1) break;
        if (po.ofm_s != c.ifm_s) break;
        if (is_post(po.vt) || is_fuse_limited(po.vt)) {
          has_fl = has_fl || is_fuse_limited(po.vt);
        } else if (is_mac_main(po.vt)) {
          if (has_fl || has_ew) break;
          has_main = has_mac = true;
        } else if (is_elementwise_main(po.vt)) {
          if (has_fl || has_mac) break;
          has_main = has_ew = true;
        } else {
          break;
        }
        members.push_back(p);
        cur = p;
      }
      g.created_avgpool = !has_main;
    }
    std::reverse(members.begin(), members.end());
    g.ops = members;
    g.primary = members.front();
    for (int m : members) group_of[static_cast<std::size_t>(m)] = static_cast<int>(groups.size());
    groups.push_back(std::move(g));
  }
  return groups;
}

/// Pass order (pass-packing.md, "Pass order"): depth-first from the outputs, then reversed; groups
/// never reached go first.
std::vector<int> Lowering::order_pass_groups(const std::vector<PassGroup>& groups, const std::vector<int>& group_of) {
  std::vector<int> visits(tensors.size(), 0);
  std::vector<char> emitted(groups.size(), 0);
  std::vector<int> seq;
  // Explicit stack: VisitTensor counts one use of a tensor; TryGroup packs a producer group once
  // all its outputs are complete, then visits the group's inputs in order (depth-first).
  struct Item {
    bool try_group;
    int id;
  };
  std::vector<Item> stack;
  for (auto it = sg.outputs.rbegin(); it != sg.outputs.rend(); ++it) stack.push_back({false, *it});
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    if (!item.try_group) {
      const int t = item.id;
      ++visits[static_cast<std::size_t>(t)];
      if (visits[static_cast<std::size_t>(t)] != consumer_entries(t)) continue;
      // Producers are tried in reverse order: the first tried goes on top of the stack.
      for (int p : tensor(t).prod) stack.push_back({true, p});
      continue;
    }
    const int g = group_of[static_cast<std::size_t>(item.id)];
    if (g < 0 || emitted[static_cast<std::size_t>(g)]) continue;
    const WorkOp& last = op(groups[static_cast<std::size_t>(g)].ops.back());
    bool complete = true;
    for (int o : last.out)
      if (o >= 0 && visits[static_cast<std::size_t>(o)] < consumer_entries(o)) complete = false;
    if (!complete) continue;
    emitted[static_cast<std::size_t>(g)] = 1;
    seq.push_back(g);
    if (!groups[static_cast<std::size_t>(g)].npu) {
      const std::string vt = vela_type_of(last.builtin);
      const std::string warning = cpu_pass_warning(vt);
      if (!warning.empty()) warnings.push_back(warning);
    }
    const std::vector<int> ins = group_inputs(groups[static_cast<std::size_t>(g)]);
    for (auto it = ins.rbegin(); it != ins.rend(); ++it)
      if (*it >= 0) stack.push_back({false, *it});
  }
  // Groups never reached (e.g. ops whose outputs are consumed only by unreachable parts) go first.
  std::vector<int> final_order;
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (!emitted[g]) final_order.push_back(static_cast<int>(g));
  for (auto it = seq.rbegin(); it != seq.rend(); ++it) final_order.push_back(*it);
  return final_order;
}

std::vector<int> Lowering::group_inputs(const PassGroup& g) {
  std::set<int> internal;
  for (int m : g.ops)
    for (int o : op(m).out) internal.insert(o);
  std::vector<int> ins;
  for (int m : g.ops)
    for (int i : op(m).in)
      if (i >= 0 && !internal.count(i)) ins.push_back(i);
  return ins;
}

}  // namespace npumap::tflite::lowering
