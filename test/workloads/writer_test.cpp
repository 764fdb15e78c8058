// to_yaml writes a workload that loads back equal: every zoo network, the tiny test networks and
// a network with a CPU operator and unusual names make the round trip load -> write -> load, and
// every field the mapper reads must survive it.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "workloads/loader.hpp"
#include "workloads/writer.hpp"

namespace npumap::workloads {
namespace {

void expect_same(const Workload& a, const Workload& b, const std::string& what) {
  EXPECT_EQ(a.name, b.name) << what;
  ASSERT_EQ(a.tensors.size(), b.tensors.size()) << what;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorInfo& x = a.tensors[i];
    const TensorInfo& y = b.tensors[i];
    const std::string at = what + " tensor " + x.name;
    EXPECT_EQ(x.name, y.name) << at;
    EXPECT_EQ(x.dims, y.dims) << at;
    EXPECT_EQ(x.shape, y.shape) << at;
    EXPECT_EQ(x.dtype, y.dtype) << at;
    EXPECT_EQ(x.is_network_input, y.is_network_input) << at;
    EXPECT_EQ(x.is_constant, y.is_constant) << at;
    EXPECT_EQ(x.quant_scale, y.quant_scale) << at;
    EXPECT_EQ(x.producer, y.producer) << at;
    EXPECT_EQ(x.consumers, y.consumers) << at;
  }
  ASSERT_EQ(a.layers.size(), b.layers.size()) << what;
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const Layer& x = a.layers[i];
    const Layer& y = b.layers[i];
    const std::string at = what + " layer " + x.name;
    EXPECT_EQ(x.name, y.name) << at;
    EXPECT_EQ(x.kind, y.kind) << at;
    EXPECT_EQ(x.inputs, y.inputs) << at;
    EXPECT_EQ(x.output, y.output) << at;
    EXPECT_EQ(x.weight_tensor, y.weight_tensor) << at;
    EXPECT_EQ(x.ifm_shape, y.ifm_shape) << at;
    EXPECT_EQ(x.ifm2_shape, y.ifm2_shape) << at;
    EXPECT_EQ(x.ofm_shape, y.ofm_shape) << at;
    EXPECT_EQ(x.kernel_h, y.kernel_h) << at;
    EXPECT_EQ(x.kernel_w, y.kernel_w) << at;
    EXPECT_EQ(x.stride_y, y.stride_y) << at;
    EXPECT_EQ(x.stride_x, y.stride_x) << at;
    EXPECT_EQ(x.dilation_y, y.dilation_y) << at;
    EXPECT_EQ(x.dilation_x, y.dilation_x) << at;
    EXPECT_EQ(x.padding_mode, y.padding_mode) << at;
    EXPECT_EQ(x.padding, y.padding) << at;
    EXPECT_EQ(x.activation, y.activation) << at;
    EXPECT_EQ(x.weight_shape, y.weight_shape) << at;
    EXPECT_EQ(x.weight_dtype, y.weight_dtype) << at;
    EXPECT_EQ(x.has_bias, y.has_bias) << at;
    if (has_weights(x.kind)) {  // unread otherwise
      EXPECT_EQ(x.weight_compression, y.weight_compression) << at;
    }
    EXPECT_EQ(x.transpose_b, y.transpose_b) << at;
    EXPECT_EQ(x.matmul.has_value(), y.matmul.has_value()) << at;
    if (x.matmul && y.matmul) {
      EXPECT_EQ(x.matmul->batch, y.matmul->batch) << at;
      EXPECT_EQ(x.matmul->m, y.matmul->m) << at;
      EXPECT_EQ(x.matmul->n, y.matmul->n) << at;
      EXPECT_EQ(x.matmul->k, y.matmul->k) << at;
    }
    EXPECT_EQ(x.einsum, y.einsum) << at;
    EXPECT_EQ(x.ranks, y.ranks) << at;
    EXPECT_EQ(x.macs, y.macs) << at;
    EXPECT_EQ(x.cpu_operator, y.cpu_operator) << at;
    EXPECT_EQ(x.cpu_reason, y.cpu_reason) << at;
  }
  EXPECT_EQ(a.topological_order, b.topological_order) << what;
}

TEST(Writer, EveryZooWorkloadMakesTheRoundTrip) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator("workloads")) {
    if (entry.path().extension() != ".yaml") continue;
    const Workload a = load_workload(entry.path().string());
    const std::string text = to_yaml(a, "round trip of " + entry.path().filename().string());
    const Workload b = load_workload_from_string(text, "written.yaml");
    expect_same(a, b, entry.path().string());
    // Writing is a fixed point: the written file writes itself again.
    EXPECT_EQ(to_yaml(b, "round trip of " + entry.path().filename().string()), text) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

TEST(Writer, CpuOperatorsOddNamesAndScalesSurvive) {
  const Workload a = load_workload_from_string(R"(
name: "odd: names/and \"quotes\""
weight_compression: 0.5
inputs:
  - {name: "serving_default_input:0", shape: [1, 8, 8, 3], dtype: int8, quant_scale: 0.0078125}
layers:
  - {name: "model/conv2d/Conv2D;bias", op: conv2d, inputs: ["serving_default_input:0"], output: "t #1", output_shape: [1, 4, 4, 16], kernel: [3, 2], stride: [2, 2], padding: [0, 1, 1, 0], activation: relu6, weight_compression: 2.75, quant_scale: 0.023529411764705882}
  - {name: host, op: cpu, operator: "LSTM", reason: "Op has tensors with int64 data type", inputs: ["t #1", "serving_default_input:0"], output: h, output_shape: [1, 7], dtype: int16}
  - {name: fc, op: fully_connected, inputs: [h], output: y, output_shape: [1, 3], bias: false}
)",
                                               "odd.yaml");
  const Workload b = load_workload_from_string(to_yaml(a), "written.yaml");
  expect_same(a, b, "odd");
  EXPECT_EQ(b.layers[1].cpu_reason, "Op has tensors with int64 data type");
  EXPECT_EQ(b.layers[2].weight_compression, 0.5);  // the network default, written on the layer
}

}  // namespace
}  // namespace npumap::workloads
