#include <algorithm>
#include <cstddef>
#include <vector>

#include "workloads/workload.hpp"

namespace npumap::workloads {
namespace {

/// Vela's pass order of the workload's layers (pass_packing.py's walk; see vela_npu_subgraphs).
std::vector<int> vela_pass_order(const Workload& w) {
  const std::size_t n = w.layers.size();
  std::vector<int> pos(n, 0);
  for (std::size_t k = 0; k < w.topological_order.size(); ++k) pos[static_cast<std::size_t>(w.topological_order[k])] = static_cast<int>(k);
  std::vector<int> readers(w.tensors.size(), 0), visits(w.tensors.size(), 0);
  for (const Layer& l : w.layers)
    for (const int t : l.inputs) ++readers[static_cast<std::size_t>(t)];
  for (std::size_t t = 0; t < w.tensors.size(); ++t) readers[t] += w.tensors[t].is_network_output() ? 1 : 0;
  std::vector<int> reverse;
  std::vector<char> placed(n, 0);
  std::vector<std::size_t> to_visit;  // a stack: Vela recurses
  const auto visit = [&](std::size_t t) {
    if (++visits[t] != readers[t]) return;
    std::vector<int> writers = w.tensors[t].writers;
    std::sort(writers.begin(), writers.end(), [&](int a, int b) { return pos[static_cast<std::size_t>(a)] < pos[static_cast<std::size_t>(b)]; });
    for (auto it = writers.rbegin(); it != writers.rend(); ++it) {
      if (placed[static_cast<std::size_t>(*it)] != 0) continue;
      placed[static_cast<std::size_t>(*it)] = 1;
      reverse.push_back(*it);
      // Its inputs in the graph's operand order (the importer writes a broadcast or constant operand
      // second and marks it), the first visited first: pushed onto the stack last first.
      const Layer& l = w.layers[static_cast<std::size_t>(*it)];
      std::vector<int> in = l.inputs;
      if (l.operands_swapped) std::reverse(in.begin(), in.end());
      for (auto i = in.rbegin(); i != in.rend(); ++i) to_visit.push_back(static_cast<std::size_t>(*i));
    }
  };
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    if (!w.tensors[t].is_network_output()) continue;
    to_visit.push_back(t);
    while (!to_visit.empty()) {
      const std::size_t next = to_visit.back();
      to_visit.pop_back();
      visit(next);
    }
  }
  std::vector<int> order(reverse.rbegin(), reverse.rend());
  for (const int l : w.topological_order)
    if (placed[static_cast<std::size_t>(l)] == 0) order.push_back(l);
  return order;
}

}  // namespace

std::vector<int> vela_npu_subgraphs(const Workload& w) {
  std::vector<int> out(w.layers.size(), -1);
  int next = 0;
  bool in_run = false;
  for (const int l : vela_pass_order(w)) {
    const bool cpu = w.layers[static_cast<std::size_t>(l)].kind == OpKind::Cpu;
    if (!cpu && !in_run) ++next;
    in_run = !cpu;
    out[static_cast<std::size_t>(l)] = cpu ? -1 : next - 1;
  }
  return out;
}

}  // namespace npumap::workloads
