// vela_npu_subgraphs: Vela 2.1's NPU subgraphs, cut from its pass order (pass_packing.py's walk back
// from the outputs, then extract_npu_subgraphs.py's runs of NPU passes). Expected values by hand.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

/// vww2_50_50's residual blocks as far as the order goes: c1 writes a, read by a CPU pad and by c2;
/// the add reads the pad's output p first and c2's b second (the graph's order), writing y.
Workload residual_with_cpu_pad(bool swapped) {
  const std::string add = swapped ? "{name: add, op: add, inputs: [b, p], output: y, output_shape: [1, 4, 4, 8], operands_swapped: true}"
                                  : "{name: add, op: add, inputs: [p, b], output: y, output_shape: [1, 4, 4, 8]}";
  return load_workload_from_string(R"(
name: residual_with_cpu_pad
inputs:
  - {name: x, shape: [1, 4, 4, 8], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: a, output_shape: [1, 4, 4, 8], kernel: 1, padding: SAME}
  - {name: pad, op: cpu, operator: PAD, reason: "CPU only op", inputs: [a], output: p, output_shape: [1, 4, 4, 8]}
  - {name: c2, op: conv2d, inputs: [a], output: b, output_shape: [1, 4, 4, 8], kernel: 1, padding: SAME}
  - )" + add + "\n",
                                   "residual_with_cpu_pad.yaml");
}

TEST(VelaNpuSubgraphs, ThePassOrderCutsTheSubgraphs) {
  // Vela's walk from y: the add becomes a pass and visits its inputs in the graph's order, p first:
  // p has one reader, so the pad becomes a pass and visits a (1 of its 2 readers: not yet). Then b:
  // c2 becomes a pass and visits a (2 of 2): c1. Reversed: c1, c2, pad, add. So c1 and c2 are the
  // first NPU subgraph, the pad the CPU between, the add the second; in step order (c1, pad, c2,
  // add) c2 would have been the second's. Per layer in file order (c1, pad, c2, add):
  const Workload w = residual_with_cpu_pad(false);
  EXPECT_EQ(w.topological_order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(w.npu_subgraph, (std::vector<int>{0, -1, 0, 1}));
  EXPECT_EQ(vela_npu_subgraphs(w), w.npu_subgraph);
  // The add's operands written in the NPU's order (swapped): the graph's order is still p, b.
  EXPECT_EQ(residual_with_cpu_pad(true).npu_subgraph, (std::vector<int>{0, -1, 0, 1}));
}

TEST(VelaNpuSubgraphs, AllOnTheNpuIsOneSubgraph) {
  const Workload w = load_workload("workloads/tiny_residual.yaml");
  EXPECT_EQ(w.npu_subgraph, (std::vector<int>(w.layers.size(), 0)));
}

}  // namespace
}  // namespace npumap::workloads
