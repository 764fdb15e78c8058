// The workload DAG: producers, consumers, Boost.Graph edges and the deterministic topological order.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/dag.hpp"
#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

TEST(Dag, TinyResidualProducersAndConsumers) {
  const Workload w = load_workload("workloads/tiny_residual.yaml");
  ASSERT_EQ(w.layers.size(), 3u);
  const int conv1 = w.layer_index("conv1");
  const int conv2 = w.layer_index("conv2");
  const int add = w.layer_index("add");
  EXPECT_EQ(w.topological_order, (std::vector<int>{conv1, conv2, add}));
  const int input = w.tensor_index("input");
  const int t1 = w.tensor_index("t1");
  const int t2 = w.tensor_index("t2");
  const int out = w.tensor_index("out");
  EXPECT_EQ(w.producer(input), -1);
  EXPECT_TRUE(w.tensors[static_cast<std::size_t>(input)].is_network_input);
  // The block input feeds conv1 and, through the shortcut, the add.
  EXPECT_EQ(w.consumers(input), (std::vector<int>{conv1, add}));
  EXPECT_EQ(w.producer(t1), conv1);
  EXPECT_EQ(w.consumers(t1), (std::vector<int>{conv2}));
  EXPECT_EQ(w.producer(t2), conv2);
  EXPECT_EQ(w.consumers(t2), (std::vector<int>{add}));
  EXPECT_EQ(w.producer(out), add);
  EXPECT_TRUE(w.consumers(out).empty());
  EXPECT_TRUE(w.tensors[static_cast<std::size_t>(out)].is_network_output());
  EXPECT_FALSE(w.tensors[static_cast<std::size_t>(t1)].is_network_output());
  EXPECT_EQ(w.layers[static_cast<std::size_t>(add)].inputs, (std::vector<int>{t2, input}));
  // Shared tensors t1 and t2 are the two edges; the network input is no edge.
  const Dag dag = build_dag(w);
  EXPECT_EQ(boost::num_vertices(dag), 3u);
  ASSERT_EQ(boost::num_edges(dag), 2u);
  auto [e1, found1] = boost::edge(static_cast<std::size_t>(conv1), static_cast<std::size_t>(conv2), dag);
  ASSERT_TRUE(found1);
  EXPECT_EQ(dag[e1].tensor, t1);
  auto [e2, found2] = boost::edge(static_cast<std::size_t>(conv2), static_cast<std::size_t>(add), dag);
  ASSERT_TRUE(found2);
  EXPECT_EQ(dag[e2].tensor, t2);
  EXPECT_FALSE(boost::edge(static_cast<std::size_t>(conv1), static_cast<std::size_t>(add), dag).second);
}

TEST(Dag, OrderFollowsDataThenFileOrder) {
  // File order: d (reads c), a, b (reads a), c (reads a). Ready first: a (index 1); then b and c
  // are ready and b (2) comes before c (3); then d (0) once c is done.
  const Workload w = load_workload_from_string(R"(
name: order
inputs: [{name: x, shape: [1, 2, 2, 4], dtype: int8}]
layers:
  - {name: d, op: relu, inputs: [tc], output: td, output_shape: [1, 2, 2, 4]}
  - {name: a, op: relu, inputs: [x], output: ta, output_shape: [1, 2, 2, 4]}
  - {name: b, op: relu, inputs: [ta], output: tb, output_shape: [1, 2, 2, 4]}
  - {name: c, op: relu, inputs: [ta], output: tc, output_shape: [1, 2, 2, 4]}
)",
                                                   "order.yaml");
  EXPECT_EQ(w.topological_order, (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(w.consumers(w.tensor_index("ta")), (std::vector<int>{2, 3}));
}

TEST(Dag, IndependentBranchesKeepFileOrder) {
  const Workload w = load_workload_from_string(R"(
name: branches
inputs: [{name: x, shape: [1, 2, 2, 4], dtype: int8}, {name: y, shape: [1, 2, 2, 4], dtype: int8}]
layers:
  - {name: p, op: relu, inputs: [y], output: tp, output_shape: [1, 2, 2, 4]}
  - {name: q, op: relu, inputs: [x], output: tq, output_shape: [1, 2, 2, 4]}
  - {name: r, op: add, inputs: [tq, tp], output: tr, output_shape: [1, 2, 2, 4]}
)",
                                                   "branches.yaml");
  EXPECT_EQ(w.topological_order, (std::vector<int>{0, 1, 2}));
}

TEST(Dag, ResNet50TopologicalOrderRespectsEveryEdge) {
  const Workload w = load_workload("workloads/resnet50.yaml");
  std::vector<int> position(w.layers.size(), -1);
  for (std::size_t i = 0; i < w.topological_order.size(); ++i) position[static_cast<std::size_t>(w.topological_order[i])] = static_cast<int>(i);
  const Dag dag = build_dag(w);
  for (auto [it, end] = boost::edges(dag); it != end; ++it) {
    EXPECT_LT(position[boost::source(*it, dag)], position[boost::target(*it, dag)]);
  }
  // 53 convolutions, 16 adds (two inputs each) and 2 pools and 1 fc read one shared tensor each,
  // except conv1 which reads the network input: 53 - 1 + 2*16 + 2 + 1 = 87 edges.
  EXPECT_EQ(boost::num_edges(dag), 87u);
}

}  // namespace
}  // namespace npumap::workloads
