#include "workloads/vela_order.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "workloads/workload.hpp"

namespace npumap::workloads {

std::vector<std::size_t> vela_pack_order(const PackingGraph& g) {
  const std::size_t n = g.output.size();
  const std::size_t num_tensors = g.network_output.size();
  std::vector<int> readers(num_tensors, 0), visits(num_tensors, 0);
  std::vector<std::vector<std::size_t>> writers(num_tensors);
  for (std::size_t k = 0; k < n; ++k) {
    for (const int t : g.inputs[k]) ++readers[static_cast<std::size_t>(t)];
    writers[static_cast<std::size_t>(g.output[k])].push_back(k);
  }
  for (std::size_t t = 0; t < num_tensors; ++t) readers[t] += g.network_output[t] != 0 ? 1 : 0;
  std::vector<std::size_t> reverse;
  std::vector<char> placed(n, 0);
  std::vector<std::size_t> to_visit;  // tensors still to visit, as a stack (Vela recurses)
  const auto visit = [&](std::size_t t) {
    if (++visits[t] != readers[t]) return;
    for (auto w = writers[t].rbegin(); w != writers[t].rend(); ++w) {
      if (placed[*w] != 0) continue;
      placed[*w] = 1;
      reverse.push_back(*w);
      const std::vector<int>& in = g.inputs[*w];
      for (auto i = in.rbegin(); i != in.rend(); ++i) to_visit.push_back(static_cast<std::size_t>(*i));
    }
  };
  for (std::size_t t = 0; t < num_tensors; ++t) {
    if (g.network_output[t] == 0) continue;
    to_visit.push_back(t);
    while (!to_visit.empty()) {
      const std::size_t next = to_visit.back();
      to_visit.pop_back();
      visit(next);
    }
  }
  std::vector<std::size_t> order(reverse.rbegin(), reverse.rend());
  for (std::size_t k = 0; k < n; ++k)
    if (placed[k] == 0) order.push_back(k);
  return order;
}

std::vector<int> vela_npu_subgraphs(const Workload& w) {
  // The layers in topological order, each reading its inputs in the graph's operand order (the
  // importer writes a broadcast or constant operand second and marks it).
  PackingGraph g;
  for (const int l : w.topological_order) {
    const Layer& layer = w.layers[static_cast<std::size_t>(l)];
    std::vector<int> in = layer.inputs;
    if (layer.operands_swapped) std::reverse(in.begin(), in.end());
    g.inputs.push_back(std::move(in));
    g.output.push_back(layer.output);
  }
  for (const TensorInfo& t : w.tensors) g.network_output.push_back(t.is_network_output() ? 1 : 0);
  std::vector<int> out(w.layers.size(), -1);
  int next = 0;
  bool in_run = false;
  for (const std::size_t k : vela_pack_order(g)) {
    const int l = w.topological_order[k];
    const bool cpu = w.layers[static_cast<std::size_t>(l)].kind == OpKind::Cpu;
    if (!cpu && !in_run) ++next;
    in_run = !cpu;
    out[static_cast<std::size_t>(l)] = cpu ? -1 : next - 1;
  }
  return out;
}

}  // namespace npumap::workloads
