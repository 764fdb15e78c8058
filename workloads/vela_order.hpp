#pragma once
// Vela 2.1's pass order (pass_packing.py), the one walk both its NPU subgraphs (vela_npu_subgraphs,
// the workload's npu_subgraph) and the Vela schedule's SRAM replay (search::vela_pass_order) start
// from: a depth-first walk back from the network's outputs. A tensor is visited once per reader and
// once as a network output; at its last visit its writers, the last first, become passes, each then
// visiting its inputs in the graph's operand order, the first first. Reversed, that is the order.

#include <cstddef>
#include <vector>

namespace npumap::workloads {

/// A graph as Vela's pass packing walks it: its nodes (passes) in a topological order.
struct PackingGraph {
  std::vector<std::vector<int>> inputs;  ///< per node: the tensors it reads, in Vela's operand order
  std::vector<int> output;               ///< per node: the tensor it writes
  std::vector<char> network_output;      ///< per tensor: read by the application after the network
};

/// Vela's pass packing order of `g`'s nodes (above), as node indices; nodes not reached from an output
/// come after the rest, in node order.
std::vector<std::size_t> vela_pack_order(const PackingGraph& g);

}  // namespace npumap::workloads
