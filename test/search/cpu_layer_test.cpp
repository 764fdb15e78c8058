// A CPU operator in the network (op: cpu): the NPU does not run it, so it costs no NPU cycles and no
// NPU traffic, its feature maps stay in the arena in linear layout, and the mappings of its NPU
// neighbours must hand their tensors over that way. The oracle: because the CPU layer fixes the
// compatibility of both tensors it touches, the best whole-network cycles are the best cycles of each
// NPU layer among its pmappings that keep those tensors in the arena, linear (the join is exact).

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "mapper/search/lowering.hpp"
#include "mapper/search/mapspace.hpp"
#include "mapper/search/map_network.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

const char* kYaml = R"(
name: with_cpu_op
inputs:
  - {name: x, shape: [1, 16, 16, 8], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: t1, output_shape: [1, 16, 16, 8], kernel: 3, padding: SAME}
  - {name: host, op: cpu, operator: LSTM, reason: "not supported on the NPU", inputs: [t1, x], output: t2, output_shape: [1, 16, 16, 8]}
  - {name: c2, op: conv2d, inputs: [t2], output: y, output_shape: [1, 16, 16, 8], kernel: 3, padding: SAME}
)";

TEST(CpuLayer, CostsNothingAndKeepsItsTensorsInTheArena) {
  const workloads::Workload w = workloads::load_workload_from_string(kYaml, "with_cpu_op.yaml");
  ASSERT_EQ(w.layers[1].kind, workloads::OpKind::Cpu);
  EXPECT_EQ(w.layers[1].cpu_operator, "LSTM");
  for (const char* arch_name : {"ethos-u55-256", "ethos-u65-256"}) {
    const arch::Arch a = testing::preset(arch_name);
    SearchOptions o;
    o.objectives = all_objectives();
    o.threads = 2;
    const SearchResult r = map_network(a, w, o, {});
    ASSERT_EQ(r.status, SearchStatus::Ok) << arch_name;
    ASSERT_TRUE(r.joined && !r.joined->front.empty());

    // The CPU layer: exactly one pmapping, all zeros, every tensor arena/linear.
    const LayerResult& host = r.stage.layers[1];
    ASSERT_EQ(host.groups.size(), 1u);
    ASSERT_EQ(host.groups[0].rows.size(), 1u);
    const PmappingRow& row = host.groups[0].rows[0];
    EXPECT_EQ(row.cycles, 0.0);
    EXPECT_EQ(row.offchip_bytes, 0.0);
    EXPECT_EQ(row.energy_pj, 0.0);
    ASSERT_EQ(host.groups[0].compat.size(), 3u);  // two inputs and the output
    for (const TensorCompat& c : host.groups[0].compat) {
      EXPECT_EQ(c.residence, Residence::Arena);
      EXPECT_EQ(c.layout, Layout::Linear);
    }

    // Oracle: best c1 with x and t1 arena/linear + best c2 with t2 arena/linear (any output y).
    const auto best = [](const LayerResult& lr, std::vector<std::size_t> slots) {
      double m = std::numeric_limits<double>::infinity();
      for (const auto& g : lr.groups) {
        bool ok = true;
        for (std::size_t slot : slots) {
          ok = ok && g.compat[slot].residence == Residence::Arena && g.compat[slot].layout == Layout::Linear;
        }
        if (!ok) continue;
        for (const auto& pr : g.rows) m = std::min(m, pr.cycles);
      }
      return m;
    };
    const double expected = best(r.stage.layers[0], {0, 1}) + best(r.stage.layers[2], {0});
    double got = std::numeric_limits<double>::infinity();
    for (const FrontPoint& p : r.joined->front) got = std::min(got, p.cycles);
    EXPECT_EQ(got, expected) << arch_name;
  }
}

TEST(CpuLayer, ItsFeatureMapsMustFitTheSramWhenTheArenaIsSram) {
  // On U55 the arena is the SRAM: x (2 KiB) + t1 (2 KiB) + t2 (2 KiB) = 6 KiB must fit for the CPU
  // layer's single pmapping; with 4 KiB of SRAM it is removed by sram_capacity.
  const workloads::Workload w = workloads::load_workload_from_string(kYaml, "with_cpu_op.yaml");
  arch::Arch a = testing::preset("ethos-u55-256");
  a.sram_capacity_bytes = 4096;
  const SearchResult r = map_network(a, w, SearchOptions{}, {});
  EXPECT_EQ(r.status, SearchStatus::NoValidMapping);
  const LayerResult& host = r.stage.layers[1];
  EXPECT_TRUE(host.groups.empty() || host.groups[0].rows.empty());
  EXPECT_EQ(host.rates.rate[static_cast<int>(Cause::SramCapacity)], 0.0);
}

// Vela cuts the graph into NPU subgraphs at its CPU operators, in its pass order, and gives each
// subgraph's inputs a start-up producer of their own (extract_npu_subgraphs.py), so a pass whose
// inputs all come from outside its own NPU subgraph has no NPU predecessor, and its DMAs add to its
// cycles (npu_performance.py's first-pass term). Vela's order here (its walk back from the outputs t4,
// then y): c3, c2, the CPU layer, which visits t1 once of twice; then c4, which visits it again, so
// c1: reversed, c1, c4, host, c2, c3. So c1 reads the network input (none); c4 reads t1, written by
// c1 in its own subgraph (one, though the CPU layer comes between them in step order); c2 reads the
// CPU layer's output (none); c3 reads c2's output in the same subgraph (one). t4 is a second network
// output.
TEST(CpuLayer, NoNpuPredecessorBehindACpuLayer) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: behind_cpu
inputs:
  - {name: x, shape: [1, 8, 8, 8], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: t1, output_shape: [1, 8, 8, 8], kernel: 1, padding: SAME}
  - {name: host, op: cpu, operator: LSTM, reason: "not supported on the NPU", inputs: [t1], output: t2, output_shape: [1, 8, 8, 8]}
  - {name: c2, op: conv2d, inputs: [t2], output: t3, output_shape: [1, 8, 8, 8], kernel: 1, padding: SAME}
  - {name: c3, op: conv2d, inputs: [t3], output: t4, output_shape: [1, 8, 8, 8], kernel: 1, padding: SAME}
  - {name: c4, op: conv2d, inputs: [t1], output: y, output_shape: [1, 8, 8, 8], kernel: 1, padding: SAME}
)",
                                                                     "behind_cpu.yaml");
  const arch::Arch a = testing::preset("ethos-u55-128");
  ASSERT_EQ(w.topological_order, (std::vector<int>{0, 1, 2, 3, 4}));
  ASSERT_EQ(w.npu_subgraph, (std::vector<int>{0, -1, 1, 1, 0}));
  EXPECT_FALSE(lower_layer(a, w, 0).base.has_npu_predecessor);  // c1: the network input
  EXPECT_FALSE(lower_layer(a, w, 2).base.has_npu_predecessor);  // c2: behind the CPU layer
  EXPECT_TRUE(lower_layer(a, w, 3).base.has_npu_predecessor);   // c3: c2 in its subgraph
  EXPECT_TRUE(lower_layer(a, w, 4).base.has_npu_predecessor);   // c4: t1 from c1, in its subgraph
}

// A feature map passed from one NPU subgraph to another (Vela's pass order: c1, c2, the CPU layer,
// the add; see VelaNpuSubgraphs): a is written by c1 (subgraph 0) and read by c2 (0) and by the add
// (1, behind the CPU layer). Vela's graph optimiser clears its needs_linear_format (every reader is
// on the NPU), but it becomes an output of subgraph 0, which Vela keeps NHWC: so no NHCWB16 for it,
// and linear costed as NHCWB16 (needs_linear_format false), as yolo-fastest's add_12, read by
// conv2d_37 and, behind the CPU's resize, by a concatenation. b, read by the CPU layer, stays
// linear as ever. The add's inputs come from the CPU layer and from the subgraph before: it has no
// NPU predecessor.
TEST(CpuLayer, AFeatureMapBetweenNpuSubgraphsIsLinearCostedAsNhcwb16) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: between_subgraphs
inputs:
  - {name: x, shape: [1, 8, 8, 8], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 8], kernel: 1, padding: SAME}
  - {name: c2, op: conv2d, inputs: [a], output: b, output_shape: [1, 8, 8, 8], kernel: 1, padding: SAME}
  - {name: host, op: cpu, operator: RESIZE_NEAREST_NEIGHBOR, reason: "CPU only op", inputs: [b], output: q, output_shape: [1, 8, 8, 8]}
  - {name: add, op: add, inputs: [q, a], output: y, output_shape: [1, 8, 8, 8]}
)",
                                                                     "between_subgraphs.yaml");
  ASSERT_EQ(w.npu_subgraph, (std::vector<int>{0, 0, -1, 1}));
  const arch::Arch a = testing::preset("ethos-u55-256");
  const LoweredLayer c1 = lower_layer(a, w, 0);
  EXPECT_FALSE(c1.output_nhcwb16);
  EXPECT_FALSE(c1.base.ofm.needs_linear_format);
  const LoweredLayer c2 = lower_layer(a, w, 1);
  EXPECT_FALSE(c2.input_nhcwb16[0]);
  EXPECT_FALSE(c2.base.ifm.needs_linear_format);
  EXPECT_TRUE(c2.base.ofm.needs_linear_format);  // b: read by the CPU
  const LoweredLayer add = lower_layer(a, w, 3);
  EXPECT_FALSE(add.base.ifm2->needs_linear_format);
  EXPECT_FALSE(add.base.has_npu_predecessor);
  // A linear template keeps it: the pass is NHWC with needs_linear_format false.
  const LayerSpace space = make_layer_space(a, w, 0, SpaceOptions{});
  ASSERT_FALSE(space.templates.empty());
  const model::Pass pass = make_template_pass(a, space, space.templates[0]);
  EXPECT_EQ(pass.ofm.format, model::TensorFormat::NHWC);
  EXPECT_FALSE(pass.ofm.needs_linear_format);
}

TEST(CpuLayer, FormatErrors) {
  const auto error_of = [](const std::string& layer) {
    try {
      workloads::load_workload_from_string(
          "name: e\ninputs:\n  - {name: x, shape: [1, 4, 4, 8], dtype: int8}\nlayers:\n  - " + layer + "\n", "e.yaml");
    } catch (const common::UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("{name: h, op: cpu, inputs: [x], output: y, output_shape: [1, 4, 4, 8]}").find("operator"),
            std::string::npos);
  EXPECT_NE(error_of("{name: h, op: cpu, operator: X, inputs: [], output: y, output_shape: [1, 4, 4, 8]}")
                .find("at least 1 input"),
            std::string::npos);
  EXPECT_NE(error_of("{name: h, op: cpu, operator: X, kernel: 3, inputs: [x], output: y, output_shape: [1, 4, 4, 8]}")
                .find("does not apply"),
            std::string::npos);
}

}  // namespace
}  // namespace npumap::search
