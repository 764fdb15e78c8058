// Tests of the Vela 2.1 lowering (workloads/tflite/npu_lowering.hpp):
//  (a) hand-built models (tflite_builder.hpp), one per operator kind and per fallback rule, each with
//      the expectation worked out by hand from the rules of docs/design/lowering/ (pass count, types,
//      op shapes, kernel, padding, CPU reason text);
//  (b) every (model, config) record of test/data/vela_tflite_reference.json: NPU op counts per
//      type, CPU fallback ops, Vela's reason and warning lines, and every NPU pass (type, ops, op
//      shapes, kernel, stride, padding, activation, weight shape, NPU subgraph) must equal the record;
//  (c) every model in workloads/models (and other_precision/) lowers or fails with a one-line
//      UserError, plus a fixed-seed byte-mutation run and the timing of the largest models.
// Tests run with the working directory at the project root (test/support/reference_data.hpp).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/user_error.hpp"
#include "tflite_builder.hpp"
#include "tflite_net.hpp"
#include "workloads/tflite/npu_lowering.hpp"
#include "workloads/tflite/reader.hpp"
#include "test/support/reference_data.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
namespace tb = testing;
using V = VelaOpType;

NpuGraph lower(const Model& m, const std::string& config = "ethos-u55-128", bool rewrites = true) {
  NpuLoweringOptions o;
  o.accelerator_config = config;
  o.vela_rewrites = rewrites;
  return lower_for_npu(m, o);
}

std::vector<std::string> types(const NpuGraph& g) {
  std::vector<std::string> v;
  for (const NpuPass& p : g.passes) v.emplace_back(vela_op_type_name(p.op_type));
  return v;
}
std::vector<std::string> names(const NpuGraph& g) {
  std::vector<std::string> v;
  for (const NpuPass& p : g.passes) v.push_back(p.name);
  return v;
}
using Pad4 = std::array<std::int32_t, 4>;

/// Every tensor id of a pass or CPU op is wired both ways in the tensor table.
void expect_wired(const NpuGraph& g) {
  for (std::size_t i = 0; i < g.passes.size(); ++i) {
    const NodeRef ref{NodeRef::Kind::NpuPass, static_cast<int>(i)};
    for (int t : g.passes[i].inputs) {
      const auto& c = g.tensors.at(static_cast<std::size_t>(t)).consumers;
      EXPECT_NE(std::find(c.begin(), c.end(), ref), c.end()) << g.passes[i].name;
    }
    const auto& p = g.tensors.at(static_cast<std::size_t>(g.passes[i].output)).producers;
    EXPECT_NE(std::find(p.begin(), p.end(), ref), p.end()) << g.passes[i].name;
  }
}

// ---------------------------------------------------------------- (a) hand-built models

TEST(NpuLowering, ConvSameBecomesOneConvPass) {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 3});
  const int w = n.weights("w", {4, 3, 3, 3});
  const int b = n.bias("b", 4);
  const int y = n.fm("y", {1, 8, 8, 4});
  n.op(CONV_2D, {x, w, b}, {y}, conv_opts(1, 1, true, 3));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  const NpuPass& p = g.passes[0];
  EXPECT_EQ(p.name, "y");
  EXPECT_EQ(p.op_type, V::Conv2DBias);
  EXPECT_EQ(p.block_type, NpuBlockType::ConvolutionMxN);
  EXPECT_EQ(p.ifm_shape, (Shape4{1, 8, 8, 3}));
  EXPECT_EQ(p.ofm_shape, (Shape4{1, 8, 8, 4}));
  EXPECT_EQ(p.kernel, (NpuKernel{3, 3, 1, 1, 1, 1}));
  EXPECT_EQ(p.explicit_padding, (Pad4{1, 1, 1, 1}));  // SAME 3x3 stride 1: total 2 -> 1 before, 1 after
  EXPECT_EQ(p.activation, NpuActivation::Relu6);
  EXPECT_EQ(p.weights_tensor, w);
  EXPECT_EQ(p.weights_shape, (std::vector<std::int32_t>{4, 3, 3, 3}));
  EXPECT_EQ(p.bias_tensor, b);
  EXPECT_EQ(p.bias_length, 4);
  EXPECT_EQ(p.ifm_type, TensorType::INT8);
  ASSERT_EQ(p.ofm_quant.scale.size(), 1u);
  EXPECT_FLOAT_EQ(p.ofm_quant.scale[0], 0.5f);
  EXPECT_TRUE(g.cpu_ops.empty());
  EXPECT_TRUE(g.reasons.empty());
  EXPECT_EQ(g.npu_subgraph_count, 1);
  expect_wired(g);
}

/// The first-layer stride-2 rewrite (graph-rewrites.md): op 0, stride_x 2, depth <= 4, even width,
/// kernel width >= 2.
Model first_layer_model() {
  Net n;
  const int x = n.fm("x", {1, 16, 16, 3});
  const int w = n.weights("w", {8, 3, 3, 3});
  const int b = n.bias("b", 8);
  const int y = n.fm("y", {1, 8, 8, 8});
  n.op(CONV_2D, {x, w, b}, {y}, conv_opts(2, 2));
  return n.build({x}, {y});
}

TEST(NpuLowering, FirstLayerStride2Rewrite) {
  const NpuGraph g = lower(first_layer_model());
  ASSERT_EQ(g.passes.size(), 1u);
  const NpuPass& p = g.passes[0];
  // IFM [1,16,16,3] viewed as [1,16,8,6]; kernel width 3 padded to 4 then halved; stride_x 1.
  EXPECT_EQ(p.ifm_shape, (Shape4{1, 16, 8, 6}));
  EXPECT_EQ(p.kernel, (NpuKernel{2, 3, 1, 2, 1, 1}));
  EXPECT_EQ(p.weights_shape, (std::vector<std::int32_t>{8, 3, 2, 6}));
  // Padding from the rewritten geometry: H in 16 s2 k3 -> total 1 (0,1); W in 8 s1 k2 -> total 1 (0,1).
  EXPECT_EQ(p.explicit_padding, (Pad4{0, 0, 1, 1}));
}

TEST(NpuLowering, FirstLayerRewriteCanBeTurnedOff) {
  const NpuGraph g = lower(first_layer_model(), "ethos-u55-128", false);
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].ifm_shape, (Shape4{1, 16, 16, 3}));
  EXPECT_EQ(g.passes[0].kernel, (NpuKernel{3, 3, 2, 2, 1, 1}));
  EXPECT_EQ(g.passes[0].weights_shape, (std::vector<std::int32_t>{8, 3, 3, 3}));
  EXPECT_EQ(g.passes[0].explicit_padding, (Pad4{0, 0, 1, 1}));
}

TEST(NpuLowering, DepthwiseAndMultiplierBecomesConv) {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 1});
  const int w = n.weights("w", {1, 3, 3, 8});
  const int b = n.bias("b", 8);
  const int y = n.fm("y", {1, 8, 8, 8});
  const int w2 = n.weights("w2", {1, 3, 3, 8});
  const int b2 = n.bias("b2", 8);
  const int z = n.fm("z", {1, 4, 4, 8});
  n.op(DEPTHWISE_CONV_2D, {x, w, b}, {y}, dw_opts(1, 8));  // depth multiplier 8 on 1 channel -> Conv2DBias
  n.op(DEPTHWISE_CONV_2D, {y, w2, b2}, {z}, dw_opts(2, 1));
  const NpuGraph g = lower(n.build({x}, {z}));
  ASSERT_EQ(types(g), (std::vector<std::string>{"Conv2DBias", "DepthwiseConv2DBias"}));
  EXPECT_EQ(g.passes[0].weights_shape, (std::vector<std::int32_t>{8, 3, 3, 1}));
  EXPECT_EQ(g.passes[1].weights_shape, (std::vector<std::int32_t>{8, 3, 3, 1}));
  EXPECT_EQ(g.passes[1].block_type, NpuBlockType::ConvolutionDepthWise);
  // SAME 3x3 stride 2 on 8: total = 3*2 + 3 - 8 = 1 -> (0, 1).
  EXPECT_EQ(g.passes[1].explicit_padding, (Pad4{0, 0, 1, 1}));
}

TEST(NpuLowering, OneByOneConvOnOneByOneIfmBecomesFullyConnected) {
  Net n;
  const int x = n.fm("x", {1, 1, 1, 16});
  const int w = n.weights("w", {8, 1, 1, 16});
  const int y = n.fm("y", {1, 1, 1, 8});
  n.op(CONV_2D, {x, w, -1}, {y}, conv_opts(1, 1));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].name, "y_fc");
  EXPECT_EQ(g.passes[0].op_type, V::FullyConnected);
  EXPECT_EQ(g.passes[0].block_type, NpuBlockType::VectorProduct);
  EXPECT_EQ(g.passes[0].bias_tensor, -1);   // a zero bias of length O (reading.md, "Weights")
  EXPECT_EQ(g.passes[0].bias_length, 8);
}

TEST(NpuLowering, FullyConnectedAndBatchedFullyConnected) {
  for (int batch : {1, 4, 3}) {
    Net n;
    const int x = n.fm("x", {batch, 16});
    const int w = n.weights("w", {8, 16});
    const int b = n.bias("b", 8);
    const int y = n.fm("y", {batch, 8});
    n.op(FULLY_CONNECTED, {x, w, b}, {y}, fc_opts());
    const NpuGraph g = lower(n.build({x}, {y}));
    ASSERT_EQ(g.passes.size(), 1u);
    const NpuPass& p = g.passes[0];
    EXPECT_EQ(p.op_type, V::FullyConnected);
    EXPECT_EQ(p.weights_shape, (std::vector<std::int32_t>{8, 1, 1, 16}));
    if (batch == 1) {
      EXPECT_EQ(p.ifm_shape, (Shape4{1, 1, 1, 16}));
      EXPECT_EQ(p.ofm_shape, (Shape4{1, 1, 1, 8}));
    } else if (batch == 4) {  // fully-connected.md: b = 4 -> [1,2,2,I]
      EXPECT_EQ(p.ifm_shape, (Shape4{1, 2, 2, 16}));
      EXPECT_EQ(p.ofm_shape, (Shape4{1, 2, 2, 8}));
    } else {                  // b = 3 -> [1,1,3,I]
      EXPECT_EQ(p.ifm_shape, (Shape4{1, 1, 3, 16}));
    }
  }
}

TEST(NpuLowering, PoolsAndStrideFallback) {
  Net n;
  const int x = n.fm("x", {1, 16, 16, 8});
  const int y = n.fm("y", {1, 8, 8, 8});
  const int z = n.fm("z", {1, 2, 2, 8});
  n.op(MAX_POOL_2D, {x}, {y}, pool_opts(2, 2));
  n.op(AVERAGE_POOL_2D, {y}, {z}, pool_opts(4, 4));
  const NpuGraph g = lower(n.build({x}, {z}));
  ASSERT_EQ(types(g), (std::vector<std::string>{"MaxPool"}));
  EXPECT_EQ(g.passes[0].block_type, NpuBlockType::Pooling);
  EXPECT_EQ(g.passes[0].kernel, (NpuKernel{2, 2, 2, 2, 1, 1}));
  ASSERT_EQ(g.cpu_ops.size(), 1u);
  EXPECT_EQ(g.cpu_ops[0].name, "z");
  EXPECT_EQ(g.cpu_ops[0].vela_type, "AvgPool");
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0], (FallbackReason{"AVERAGE_POOL_2D", "z",
                                          {"- Stride values for both width and height must be in the range [1, 3]",
                                           "Op has stride WxH as: 4x4"}}));
  EXPECT_EQ(g.warnings, (std::vector<std::string>{"Warning: AvgPool operation is unknown or unsupported, placing on CPU"}));
  EXPECT_EQ(g.cpu_ops[0].reason, g.reasons[0].reason);
  EXPECT_EQ(g.cpu_ops[0].warning, g.warnings[0]);
  // The CPU op reads the NPU output: a boundary tensor produced by the pass, consumed by the CPU op.
  const LoweredTensor& t = g.tensors.at(static_cast<std::size_t>(g.cpu_ops[0].inputs.at(0)));
  EXPECT_EQ(t.name, "y");
  EXPECT_EQ(t.producers, (std::vector<NodeRef>{{NodeRef::Kind::NpuPass, 0}}));
  EXPECT_EQ(t.consumers, (std::vector<NodeRef>{{NodeRef::Kind::CpuOp, 0}}));
  expect_wired(g);
}

TEST(NpuLowering, BroadcastAddAndStandaloneReluFuse) {
  Net n;
  const int a = n.fm("a", {1, 4, 4, 8});
  const int b = n.fm("b", {1, 1, 1, 8});
  const int s = n.fm("s", {1, 4, 4, 8});
  const int r = n.fm("r", {1, 4, 4, 8});
  n.op(ADD, {a, b}, {s}, add_opts());
  n.op(RELU, {s}, {r});
  const NpuGraph g = lower(n.build({a, b}, {r}));
  ASSERT_EQ(g.passes.size(), 1u);
  const NpuPass& p = g.passes[0];
  EXPECT_EQ(p.name, "s");
  EXPECT_EQ(p.ops, (std::vector<V>{V::Add, V::Relu}));
  EXPECT_EQ(p.block_type, NpuBlockType::ElementWise);
  EXPECT_TRUE(p.has_ifm2);
  EXPECT_EQ(p.ifm2_shape, (Shape4{1, 1, 1, 8}));
  EXPECT_EQ(p.activation, NpuActivation::Relu);
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(p.output)).name, "r");
}

TEST(NpuLowering, ReluOnGraphInputGetsCreatedAvgPool) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8});
  n.op(RELU6, {x}, {y});
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].name, "y_avgpool");
  EXPECT_EQ(g.passes[0].ops, (std::vector<V>{V::AvgPool, V::Relu6}));
  EXPECT_EQ(g.passes[0].activation, NpuActivation::Relu6);
}

TEST(NpuLowering, ReluWithRequantisationBecomesAvgPool) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8}, kI8, 0.25f, 3);
  n.op(RELU, {x}, {y});
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].name, "y_avgpool");  // a requantising RELU (activations.md)
  EXPECT_EQ(g.passes[0].ops, (std::vector<V>{V::AvgPool}));
  EXPECT_EQ(g.passes[0].activation, NpuActivation::Relu);
}

TEST(NpuLowering, QuantizePassesAndFloatQuantizeFallback) {
  Net n;
  const int f = n.fm("f", {1, 16}, kF32, 0.0f);
  const int q = n.fm("q", {1, 16});
  const int r1 = n.fm("r1", {1, 16}, kI8, 0.25f);
  const int r2 = n.fm("r2", {1, 16}, kI8, 0.125f);
  n.op(QUANTIZE, {f}, {q});
  n.op(QUANTIZE, {q}, {r1});
  n.op(QUANTIZE, {r1}, {r2});
  const NpuGraph g = lower(n.build({f}, {r2}));
  // Two int8 QUANTIZEs in a row share one pass with a created AvgPool (pass-packing.md).
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].name, "r1_avgpool");
  EXPECT_EQ(g.passes[0].ops, (std::vector<V>{V::AvgPool, V::Quantize, V::Quantize}));
  ASSERT_EQ(g.cpu_ops.size(), 1u);
  EXPECT_EQ(g.cpu_ops[0].vela_type, "Quantize");
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0], (FallbackReason{"QUANTIZE", "q",
                                          {"- Tensors must be of type: int16, int32, int8, uint8",
                                           "Tensor 'f' has data type: float32"}}));
  EXPECT_EQ(g.warnings, (std::vector<std::string>{"Warning: Quantize operation is unknown or unsupported, placing on CPU"}));
  EXPECT_EQ(g.npu_subgraph_count, 1);
}

Model conv_then(std::int32_t act_op, std::int8_t type = kI8) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8}, type);
  const int w = n.weights("w", {8, 1, 1, 8});
  const int c = n.fm("c", {1, 4, 4, 8}, type);
  const int y = n.fm("y", {1, 4, 4, 8}, type, 1.0f / 128);
  n.op(CONV_2D, {x, w, -1}, {c}, conv_opts(1, 1));
  n.op(act_op, {c}, {y});
  return n.build({x}, {y});
}

TEST(NpuLowering, LogisticLutFusesIntoConv) {
  const NpuGraph g = lower(conv_then(LOGISTIC));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].op_type, V::Conv2DBias);
  EXPECT_EQ(g.passes[0].activation, NpuActivation::LUT);
  EXPECT_EQ(g.passes[0].lut, LutKind::Sigmoid);
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(g.passes[0].output)).name, "y");
}

TEST(NpuLowering, LutIsNotFusedWithoutLutBanks) {
  const NpuGraph g = lower(conv_then(TANH), "ethos-u55-64");
  ASSERT_EQ(types(g), (std::vector<std::string>{"Conv2DBias", "Add"}));
  EXPECT_EQ(g.passes[1].name, "y_lut_tanh");
  EXPECT_EQ(g.passes[1].activation, NpuActivation::LUT);
  EXPECT_EQ(g.passes[1].lut, LutKind::Tanh);
  EXPECT_EQ(g.passes[1].ifm2_shape, (Shape4{1, 1, 1, 1}));
}

TEST(NpuLowering, HardSwishAndLeakyReluBecomeLuts) {
  for (auto [code, suffix] : {std::pair{HARD_SWISH, "_lut_hardswish"}, std::pair{LEAKY_RELU, "_lut_lrelu"}}) {
    Net n;
    const int x = n.fm("x", {1, 4, 4, 8});
    const int y = n.fm("y", {1, 4, 4, 8});
    n.op(code, {x}, {y}, code == LEAKY_RELU ? tb::OptionsSpec{75, {tb::f32(0, 0.2f)}} : tb::OptionsSpec{});
    const NpuGraph g = lower(n.build({x}, {y}));
    ASSERT_EQ(g.passes.size(), 1u);  // on a graph input: not fused, a stand-alone LUT Add
    EXPECT_EQ(g.passes[0].name, std::string("y") + suffix);
    EXPECT_EQ(g.passes[0].op_type, V::Add);
    EXPECT_EQ(g.passes[0].activation, NpuActivation::LUT);
  }
}

TEST(NpuLowering, Int16TanhGetsCreatedAvgPool) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8}, kI16, 0.001f);
  const int y = n.fm("y", {1, 4, 4, 8}, kI16, 1.0f / 32768);
  n.op(TANH, {x}, {y});
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].ops, (std::vector<V>{V::AvgPool, V::Tanh}));
  EXPECT_EQ(g.passes[0].activation, NpuActivation::Tanh);
}

TEST(NpuLowering, MulMaximumPatternBecomesLeakyReluLut) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int c = n.cst_bytes("alpha", {}, kI8, {1}, 0.1f, 0);
  const int m = n.fm("m", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8});
  n.op(MUL, {x, c}, {m}, mul_opts());
  n.op(MAXIMUM, {x, m}, {y});
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);  // MUL + MAXIMUM -> LEAKY_RELU -> LUT op: the MUL disappears
  EXPECT_EQ(g.passes[0].name, "y_lut_lrelu");
  EXPECT_EQ(g.passes[0].lut, LutKind::LeakyRelu);
}

TEST(NpuLowering, AbsAndMaximumQuantisationFallback) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8});
  const int z = n.fm("z", {1, 4, 4, 8}, kI8, 0.25f);
  n.op(ABS, {x}, {y});
  n.op(MAXIMUM, {y, x}, {z});
  const NpuGraph g = lower(n.build({x}, {z}));
  ASSERT_EQ(types(g), (std::vector<std::string>{"Abs"}));
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0].tflite_op, "MAXIMUM");
  EXPECT_EQ(g.reasons[0].reason.at(0), "- Both Input quantization parameters must match OFM quantization parameters");
}

/// Softmax of IFM [1,10] int8: S = [1,1,1,10], R = [1,1,1,1].
TEST(NpuLowering, SoftmaxInt8Is31Passes) {
  Net n;
  const int x = n.fm("x", {1, 10});
  const int y = n.fm("y", {1, 10}, kI8, 1.0f / 256, -128);
  n.op(SOFTMAX, {x}, {y}, {9, {tb::f32(0, 1.0f)}});
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 31u);
  const std::map<std::string, int> expected{{"MaxPool", 1}, {"Sub", 7}, {"SHR", 2}, {"ReduceSum", 1}, {"CLZ", 1},
                                            {"SHL", 2},     {"RescaleAdd", 1}, {"Mul", 12}, {"Add", 4}};
  EXPECT_EQ(g.op_type_counts(), expected);
  const char* kinds[] = {"maxpool", "sub", "shr", "reduce_sum", "clz", "sub", "sub", "shl", "sub", "shl", "add",
                         "mul", "add", "mul", "sub", "mul", "mul", "add", "mul", "sub", "mul", "mul", "add",
                         "mul", "sub", "mul", "mul", "add", "mul", "mul", "shr"};
  auto op_name = [&](int i) { return "y_" + std::string(kinds[i]) + std::to_string(i); };
  // Packing order (pass-packing.md, "Pass order"): SHR 30 reads (#29, #5); #29's branch is walked
  // first, so after reversal #5 (and the CLZ it completes) comes before it: 0..30 in creation order.
  std::vector<std::string> want;
  for (int i = 0; i <= 30; ++i) want.push_back(op_name(i));
  EXPECT_EQ(names(g), want);
  // The reports' order (a post-order walk over predecessors) is 0,1,2,3,4,6,...,29,5,30 (softmax.md).
  std::vector<std::string> report, want_report;
  for (int i : g.report_order) report.push_back(g.passes.at(static_cast<std::size_t>(i)).name);
  for (int i : {0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 5, 30})
    want_report.push_back(op_name(i));
  EXPECT_EQ(report, want_report);
  EXPECT_EQ(g.passes[0].ifm_shape, (Shape4{1, 1, 10, 1}));  // MaxPool view [1, H*W, C, 1]
  EXPECT_EQ(g.passes[0].kernel.w, 10);
  EXPECT_EQ(g.passes[1].lut, LutKind::SoftmaxExp);
  EXPECT_EQ(g.passes.back().ofm_shape, (Shape4{1, 1, 1, 10}));
  expect_wired(g);
}

TEST(NpuLowering, SoftmaxInt16Is14Passes) {
  Net n;
  const int x = n.fm("x", {1, 10}, kI16, 0.001f);
  const int y = n.fm("y", {1, 10}, kI16, 1.0f / 32768);
  n.op(SOFTMAX, {x}, {y}, {9, {tb::f32(0, 1.0f)}});
  const NpuGraph g = lower(n.build({x}, {y}));
  EXPECT_EQ(g.passes.size(), 14u);
  const std::map<std::string, int> expected{{"MaxPool", 1}, {"Sub", 4}, {"Mul", 2}, {"Add", 1}, {"ReduceSum", 1},
                                            {"CLZ", 1},     {"SHL", 2}, {"SHR", 2}};
  EXPECT_EQ(g.op_type_counts(), expected);
}

TEST(NpuLowering, ConcatenationBecomesSliceWrites) {
  Net n;
  const int a = n.fm("a", {1, 4, 4, 8});
  const int b = n.fm("b", {1, 4, 4, 24});
  const int y = n.fm("y", {1, 4, 4, 32});
  n.op(CONCATENATION, {a, b}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 0)}});
  const NpuGraph g = lower(n.build({a, b}, {y}));
  ASSERT_EQ(names(g).size(), 2u);
  std::map<std::string, const NpuPass*> by;
  for (const NpuPass& p : g.passes) by[p.name] = &p;
  ASSERT_TRUE(by.count("y0_avgpool") && by.count("y1_avgpool"));
  EXPECT_EQ(by["y0_avgpool"]->ifm_shape, (Shape4{1, 4, 4, 8}));
  EXPECT_EQ(by["y0_avgpool"]->ofm_shape, (Shape4{1, 4, 4, 32}));  // the whole output (concat-split.md)
  EXPECT_EQ(by["y0_avgpool"]->ofm_offset, (Shape4{0, 0, 0, 0}));
  EXPECT_EQ(by["y1_avgpool"]->ofm_offset, (Shape4{0, 0, 0, 8}));
  const LoweredTensor& out = g.tensors.at(static_cast<std::size_t>(g.passes[0].output));
  EXPECT_EQ(out.producers.size(), 2u);
  EXPECT_TRUE(out.graph_output);
}

TEST(NpuLowering, PackAndUnpackUseTheirAxis) {
  constexpr std::int32_t PACK = 83, UNPACK = 88;
  {
    Net n;
    const int a = n.fm("a", {4, 8});
    const int b = n.fm("b", {4, 8});
    const int y = n.fm("y", {4, 2, 8});
    n.op(PACK, {a, b}, {y}, {59, {tb::i32(0, 2), tb::i32(1, 1)}});
    const NpuGraph g = lower(n.build({a, b}, {y}));
    ASSERT_EQ(g.passes.size(), 2u);
    for (const NpuPass& p : g.passes) {
      EXPECT_EQ(p.ifm_shape, (Shape4{1, 4, 1, 8}));  // [4,8] with a 1 at axis 1, full-4D
      EXPECT_EQ(p.ofm_shape, (Shape4{1, 4, 2, 8}));
      EXPECT_EQ(p.ofm_offset, (Shape4{0, 0, p.name == "y1_avgpool" ? 1 : 0, 0})) << p.name;
    }
  }
  {
    Net n;
    const int x = n.fm("x", {2, 4, 8});
    std::vector<std::int32_t> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(n.fm("u" + std::to_string(i), {2, 8}));
    n.op(UNPACK, {x}, outs, {64, {tb::i32(0, 4), tb::i32(1, 1)}});
    const NpuGraph g = lower(n.build({x}, outs));
    ASSERT_EQ(g.passes.size(), 4u);  // every output is a graph output: an AvgPool copy each (concat-split.md)
    std::set<std::int32_t> offsets;
    for (const NpuPass& p : g.passes) {
      EXPECT_EQ(p.name, "u0_avgpool");
      EXPECT_EQ(p.ifm_shape, (Shape4{1, 2, 4, 8}));
      EXPECT_EQ(p.ofm_shape, (Shape4{1, 2, 1, 8}));
      offsets.insert(p.ifm_offset[2]);
    }
    EXPECT_EQ(offsets, (std::set<std::int32_t>{0, 1, 2, 3}));
  }
}

TEST(NpuLowering, LayoutEligibility) {
  // a -> pool -> e -> conv -> c -> pool -> d; concat(c, d) -> y -> pool -> z. The concatenation
  // writes d at channel offset 8 (not a multiple of 16), so y must stay NHWC; c, d and e are read
  // and written whole by NPU passes only; a and z are graph input and output.
  Net n;
  const int a = n.fm("a", {1, 4, 4, 8});
  const int w = n.weights("w", {8, 1, 1, 8});
  const int c = n.fm("c", {1, 4, 4, 8});
  const int d = n.fm("d", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 16});
  const int z = n.fm("z", {1, 2, 2, 16});
  const int e = n.fm("e", {1, 4, 4, 8});
  n.op(MAX_POOL_2D, {a}, {e}, pool_opts(1, 1));
  n.op(CONV_2D, {e, w, -1}, {c}, conv_opts(1, 1));
  n.op(MAX_POOL_2D, {c}, {d}, pool_opts(1, 1));
  n.op(CONCATENATION, {c, d}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 0)}});
  n.op(MAX_POOL_2D, {y}, {z}, pool_opts(2, 2));
  const NpuGraph g = lower(n.build({a}, {z}));
  std::map<std::string, bool> elig;
  for (const LoweredTensor& t : g.tensors) elig[t.name] = t.nhcwb16_eligible;
  EXPECT_FALSE(elig.at("a"));  // graph input
  EXPECT_TRUE(elig.at("e"));   // plain NPU -> NPU
  EXPECT_TRUE(elig.at("c"));   // read whole by the pool and by the concat write (its IFM view is c itself)
  EXPECT_TRUE(elig.at("d"));
  EXPECT_FALSE(elig.at("y"));  // written at channel offset 8
  EXPECT_FALSE(elig.at("z"));  // graph output
  // Vela's needs_linear_format is the opposite of eligibility when no NPU subgraph boundary is crossed.
  for (const LoweredTensor& t : g.tensors)
    if (!t.constant) {
      EXPECT_EQ(t.needs_linear_format, !t.nhcwb16_eligible) << t.name;
    }
}

TEST(NpuLowering, TensorCrossingNpuSubgraphsWithoutCpuConsumerIsNotLinear) {
  // a -> pool -> e -> pool -> f; a -> TRANSPOSE (CPU) -> g; ADD(g, f) -> y. For Add(x, z) Vela puts
  // z's branch first (pass-packing.md), so the pass order is [pool e, pool f], transpose, [add]: f is written in
  // NPU subgraph 1 and read in subgraph 2 with only NPU producers and consumers. The scheduler keeps
  // it NHWC (not eligible), but the graph optimiser, which runs before the subgraphs are cut, cleared
  // its needs_linear_format. e stays inside subgraph 1: eligible and not linear.
  Net n;
  const int a = n.fm("a", {1, 4, 4, 8});
  const int e = n.fm("e", {1, 4, 4, 8});
  const int f = n.fm("f", {1, 4, 4, 8});
  const int perm = n.i32("perm", {4}, {0, 2, 1, 3});
  const int gt = n.fm("g", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8});
  n.op(MAX_POOL_2D, {a}, {e}, pool_opts(1, 1));
  n.op(MAX_POOL_2D, {e}, {f}, pool_opts(1, 1));
  n.op(TRANSPOSE, {a, perm}, {gt});
  n.op(ADD, {gt, f}, {y});
  const NpuGraph g = lower(n.build({a}, {y}));
  std::map<std::string, const LoweredTensor*> by;
  for (const LoweredTensor& x : g.tensors) by[x.name] = &x;
  std::map<std::string, int> sub;
  for (const NpuPass& p : g.passes) sub[p.name] = p.npu_subgraph;
  ASSERT_EQ(g.npu_subgraph_count, 2) << "the test needs f to cross two NPU subgraphs";
  ASSERT_EQ(sub.at("e"), sub.at("f"));
  ASSERT_NE(sub.at("f"), sub.at("y"));
  EXPECT_FALSE(by.at("f")->nhcwb16_eligible);
  EXPECT_FALSE(by.at("f")->needs_linear_format);
  EXPECT_TRUE(by.at("e")->nhcwb16_eligible);
  EXPECT_FALSE(by.at("e")->needs_linear_format);
  EXPECT_TRUE(by.at("g")->needs_linear_format);  // a CPU producer
  EXPECT_TRUE(by.at("a")->needs_linear_format);  // graph input
}

TEST(NpuLowering, ConcatenationWithFusedActivationIsAnError) {
  Net n;
  const int a = n.fm("a", {1, 4, 4, 8});
  const int b = n.fm("b", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 16});
  n.op(CONCATENATION, {a, b}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 1)}});
  const Model m = n.build({a, b}, {y});
  try {
    lower(m);
    FAIL() << "expected a UserError (Vela 2.1 asserts, 3.1 C5)";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("fused activation"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

int pad_tensor(Net& n, std::vector<std::int32_t> v) {
  return n.i32("paddings", {static_cast<std::int32_t>(v.size() / 2), 2}, v);
}

TEST(NpuLowering, PadFusesIntoValidConv) {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 4});
  const int p = pad_tensor(n, {0, 0, 1, 1, 1, 1, 0, 0});
  const int xp = n.fm("xp", {1, 10, 10, 4});
  const int w = n.weights("w", {4, 3, 3, 4});
  const int y = n.fm("y", {1, 8, 8, 4});
  n.op(PAD, {x, p}, {xp});
  n.op(CONV_2D, {xp, w, -1}, {y}, conv_opts(1, 1, false));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].ifm_shape, (Shape4{1, 8, 8, 4}));
  EXPECT_EQ(g.passes[0].padding, NpuPadding::Explicit);
  EXPECT_EQ(g.passes[0].explicit_padding, (Pad4{1, 1, 1, 1}));
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(g.passes[0].ifm)).name, "x");
}

TEST(NpuLowering, PadBeforeStride2ConvKeepsVelaAfterPadding) {
  // pad-and-padding.md: PAD (1,1,1,1) + 3x3 stride 2 on 120x160 gives (1,1,0,0) (ssd_slim).
  Net n;
  const int x = n.fm("x", {1, 120, 160, 4});
  const int p = pad_tensor(n, {0, 0, 1, 1, 1, 1, 0, 0});
  const int xp = n.fm("xp", {1, 122, 162, 4});
  const int w = n.weights("w", {4, 3, 3, 4});
  const int y = n.fm("y", {1, 60, 80, 4});
  const int x0 = n.fm("x0", {1, 120, 160, 4});
  n.op(RELU, {x}, {x0});  // something first, so the first-layer rewrite (op 0) does not apply
  n.op(PAD, {x0, p}, {xp});
  n.op(CONV_2D, {xp, w, -1}, {y}, conv_opts(2, 2, false));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(types(g), (std::vector<std::string>{"AvgPool", "Conv2DBias"}));
  EXPECT_EQ(g.passes[1].explicit_padding, (Pad4{1, 1, 0, 0}));
}

TEST(NpuLowering, PadFallbackBeforeMaxPool) {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 4});
  const int p = pad_tensor(n, {0, 0, 2, 2, 2, 2, 0, 0});
  const int xp = n.fm("xp", {1, 12, 12, 4});
  const int y = n.fm("y", {1, 6, 6, 4});
  n.op(PAD, {x, p}, {xp});
  n.op(MAX_POOL_2D, {xp}, {y}, pool_opts(2, 2));
  const NpuGraph g = lower(n.build({x}, {y}));
  std::vector<std::string> nm = names(g);
  std::sort(nm.begin(), nm.end());
  EXPECT_EQ(nm, (std::vector<std::string>{"xp_bottom", "xp_left", "xp_main", "xp_right", "xp_top", "y"}));
  for (const NpuPass& q : g.passes) {
    if (q.name != "y") {
      EXPECT_EQ(q.ofm_shape, (Shape4{1, 12, 12, 4})) << q.name;
    }
    if (q.name == "xp_main") {
      EXPECT_EQ(q.ofm_offset, (Shape4{0, 2, 2, 0}));
    }
    if (q.name == "xp_left") {
      EXPECT_EQ(q.ifm_shape, (Shape4{1, 8, 2, 4}));
    }
    if (q.name == "xp_bottom") {
      EXPECT_EQ(q.ofm_offset, (Shape4{0, 10, 0, 0}));
    }
  }
}

TEST(NpuLowering, PadInChannelsFallsBackWithVelaText) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 12});
  const int p = pad_tensor(n, {0, 0, 0, 0, 0, 0, 0, 12});
  const int y = n.fm("y", {1, 4, 4, 24});
  n.op(PAD, {x, p}, {y});
  const NpuGraph g = lower(n.build({x}, {y}));
  EXPECT_TRUE(g.passes.empty());
  ASSERT_EQ(g.reasons.size(), 1u);
  EXPECT_EQ(g.reasons[0], (FallbackReason{"PAD", "y",
                                          {"- The pad tensor can only pad width and height",
                                           "First dimension padding: [0 0], last dimension padding: [ 0 12]"}}));
  EXPECT_TRUE(g.warnings.empty());  // a CPU Pad prints no CPU pass notice
}

TEST(NpuLowering, ReshapeIsRemovedAndConsumerKeepsItsOpShape) {
  Net n;
  const int x = n.fm("x", {1, 16});
  const int c = n.fm("c", {1, 16});
  const int s = n.i32("shape", {4}, {1, 4, 4, 1});
  const int r = n.fm("r", {1, 4, 4, 1});
  const int w = n.weights("w", {2, 3, 3, 1});
  const int y = n.fm("y", {1, 4, 4, 2});
  n.op(RELU, {x}, {c});
  n.op(RESHAPE, {c, s}, {r}, {17, {tb::vec_i32(0, {1, 4, 4, 1})}});
  n.op(CONV_2D, {r, w, -1}, {y}, conv_opts(1, 1));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(types(g), (std::vector<std::string>{"AvgPool", "Conv2DBias"}));
  EXPECT_EQ(g.passes[1].ifm_shape, (Shape4{1, 4, 4, 1}));
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(g.passes[1].ifm)).name, "c");  // reads the reshape's input
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(g.passes[1].ifm)).shape, (std::vector<std::int32_t>{1, 16}));
}

TEST(NpuLowering, ReshapeBetweenGraphInputAndOutputGetsCopy) {
  Net n;
  const int x = n.fm("x", {1, 16});
  const int s = n.i32("shape", {3}, {1, 4, 4});
  const int y = n.fm("y", {1, 4, 4});
  n.op(RESHAPE, {x, s}, {y}, {17, {tb::vec_i32(0, {1, 4, 4})}});
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 1u);
  EXPECT_EQ(g.passes[0].name, "x_avgpool");  // reshape.md: a reshape between boundaries
  EXPECT_EQ(g.passes[0].ifm_shape, (Shape4{1, 1, 1, 16}));
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(g.passes[0].output)).name, "y");
}

TEST(NpuLowering, SplitOutputsAreReadInPlace) {
  Net n;
  const int x = n.fm("x", {1, 16});
  const int ax = n.i32("axis", {}, {1});
  const int a = n.fm("a", {1, 8});
  const int b = n.fm("b", {1, 8});
  const int ya = n.fm("ya", {1, 8}, kI8, 1.0f / 256, -128);
  n.op(SPLIT, {ax, x}, {a, b}, {35, {tb::i32(0, 2)}});
  n.op(LOGISTIC, {a}, {ya});
  const NpuGraph g = lower(n.build({x}, {ya, b}));
  // a is absorbed into the LUT Add (offset 0); b is a graph output -> an AvgPool copy named <split>_avgpool.
  std::map<std::string, const NpuPass*> by;
  for (const NpuPass& p : g.passes) by[p.name] = &p;
  ASSERT_EQ(by.size(), 2u);
  ASSERT_TRUE(by.count("ya_lut_sigmoid") && by.count("a_avgpool"));
  EXPECT_EQ(by["ya_lut_sigmoid"]->ifm_shape, (Shape4{1, 1, 1, 16}));
  EXPECT_EQ(by["ya_lut_sigmoid"]->ifm_offset, (Shape4{0, 0, 0, 0}));
  EXPECT_EQ(by["a_avgpool"]->ifm_offset, (Shape4{0, 0, 0, 8}));
  EXPECT_EQ(by["a_avgpool"]->ofm_shape, (Shape4{1, 1, 1, 8}));
}

TEST(NpuLowering, StridedSliceIsAbsorbedWithOffset) {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 4});
  const int b = n.i32("begin", {4}, {0, 2, 2, 0});
  const int e = n.i32("end", {4}, {1, 6, 6, 4});
  const int s = n.i32("strides", {4}, {1, 1, 1, 1});
  const int sl = n.fm("sl", {1, 4, 4, 4});
  const int w = n.weights("w", {4, 1, 1, 4});
  const int y = n.fm("y", {1, 4, 4, 4});
  const int x0 = n.fm("x0", {1, 8, 8, 4});
  n.op(RELU, {x}, {x0});
  n.op(STRIDED_SLICE, {x0, b, e, s}, {sl}, {32, {tb::i32(0, 0), tb::i32(1, 0), tb::i32(2, 0), tb::i32(3, 0), tb::i32(4, 0)}});
  n.op(CONV_2D, {sl, w, -1}, {y}, conv_opts(1, 1));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(types(g), (std::vector<std::string>{"AvgPool", "Conv2DBias"}));
  EXPECT_EQ(g.passes[1].ifm_shape, (Shape4{1, 8, 8, 4}));
  EXPECT_EQ(g.passes[1].ifm_offset, (Shape4{0, 2, 2, 0}));
}

TEST(NpuLowering, MeanVariants) {
  struct Case {
    std::vector<std::int32_t> out_shape;
    bool keep;
    float out_scale;
    std::vector<std::string> types;
  };
  const std::vector<Case> cases{
      {{1, 1, 1, 16}, true, 0.5f, {"DepthwiseConv2DBias", "Mul"}},  // case 1: int8, 4-D, axis {1,2}, keep_dims
      {{1, 16}, false, 0.5f, {"AvgPool"}},                          // case 2: same quantisation
      {{1, 16}, false, 0.25f, {"DepthwiseConv2DBias"}},             // case 3
  };
  for (const Case& c : cases) {
    Net n;
    const int x = n.fm("x", {1, 7, 7, 16});
    const int ax = n.i32("axes", {2}, {1, 2});
    const int y = n.fm("y", c.out_shape, kI8, c.out_scale);
    n.op(MEAN, {x, ax}, {y}, {27, {tb::boolean(0, c.keep)}});
    const NpuGraph g = lower(n.build({x}, {y}));
    EXPECT_EQ(types(g), c.types);
    EXPECT_EQ(g.passes.at(0).kernel.w, 7);
    EXPECT_EQ(g.passes.at(0).kernel.h, 7);
  }
}

TEST(NpuLowering, ResizeBilinearChains) {
  for (auto [out, count] : {std::pair{8, 1}, std::pair{16, 2}}) {
    Net n;
    const int x = n.fm("x", {1, 4, 4, 8});
    const int y = n.fm("y", {1, out, out, 8});
    n.op(RESIZE_BILINEAR, {x, n.i32("size", {2}, {out, out})}, {y}, {15, {tb::boolean(2, false), tb::boolean(3, false)}});
    const NpuGraph g = lower(n.build({x}, {y}));
    ASSERT_EQ(g.passes.size(), static_cast<std::size_t>(count));
    EXPECT_EQ(g.passes.back().ofm_shape, (Shape4{1, out, out, 8}));
    EXPECT_EQ(g.passes[0].kernel, (NpuKernel{2, 2, 1, 1, 1, 1}));
    EXPECT_EQ(g.passes[0].name, "y");
  }
  Net n;  // x3 is not a doubling: CPU
  const int x = n.fm("x", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 12, 12, 8});
  n.op(RESIZE_BILINEAR, {x, n.i32("size", {2}, {12, 12})}, {y}, {15, {tb::boolean(2, false), tb::boolean(3, false)}});
  const NpuGraph g = lower(n.build({x}, {y}));
  EXPECT_TRUE(g.passes.empty());
  ASSERT_EQ(g.cpu_ops.size(), 1u);
}

TEST(NpuLowering, TransposeConvPadding) {
  for (bool same : {true, false}) {
    Net n;
    const int shape = n.i32("oshape", {4}, {1, 8, 8, 4});
    const int w = n.weights("w", {4, 3, 3, 8});
    const int x = n.fm("x", {1, 4, 4, 8});
    const int y = n.fm("y", {1, same ? 8 : 9, same ? 8 : 9, 4});
    n.op(TRANSPOSE_CONV, {shape, w, x}, {y}, {49, {tb::i8(0, same ? 0 : 1), tb::i32(1, 2), tb::i32(2, 2), tb::i8(3, 0)}});
    const NpuGraph g = lower(n.build({x}, {y}));
    ASSERT_EQ(g.passes.size(), 1u);
    EXPECT_EQ(g.passes[0].op_type, V::Conv2DBackpropInputSwitchedBias);
    // convolution.md, "Transpose convolution": SAME (2,2,0,0), VALID (2,2,1,1).
    EXPECT_EQ(g.passes[0].explicit_padding, same ? (Pad4{2, 2, 0, 0}) : (Pad4{2, 2, 1, 1}));
  }
}

TEST(NpuLowering, CpuOnlyOpsSplitNpuSubgraphs) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int a = n.fm("a", {1, 4, 4, 8});
  const int perm = n.i32("perm", {4}, {0, 2, 1, 3});
  const int t = n.fm("t", {1, 4, 4, 8});
  const int b = n.fm("b", {1, 4, 4, 8}, kI8, 0.25f);
  const int f = n.fm("f", {1, 4, 4, 8}, kF32, 0.0f);
  n.op(RELU, {x}, {a});
  n.op(TRANSPOSE, {a, perm}, {t});
  n.op(QUANTIZE, {t}, {b});
  n.op(DEQUANTIZE, {b}, {f});
  const NpuGraph g = lower(n.build({x}, {f}));
  ASSERT_EQ(g.passes.size(), 2u);
  EXPECT_EQ(g.passes[0].npu_subgraph, 1);
  EXPECT_EQ(g.passes[1].npu_subgraph, 2);
  EXPECT_EQ(g.npu_subgraph_count, 2);
  ASSERT_EQ(g.cpu_ops.size(), 2u);
  EXPECT_EQ(g.cpu_ops[0].vela_type, "Transpose");
  EXPECT_EQ(g.cpu_ops[1].vela_type, "Dequantize");
  EXPECT_EQ(g.reasons, (std::vector<FallbackReason>{{"DEQUANTIZE", "f", {"CPU only op"}}, {"TRANSPOSE", "t", {"CPU only op"}}}));
  // A CPU Dequantize prints no CPU pass notice; a Transpose does.
  EXPECT_EQ(g.warnings, (std::vector<std::string>{"Warning: Transpose operation is unknown or unsupported, placing on CPU"}));
  expect_wired(g);
}

TEST(NpuLowering, GenericChecksGiveVelaReasons) {
  {  // G1: a dynamic (shape [], no data) input
    Net n;
    const int a = n.fm("a", {});
    const int b = n.fm("b", {1, 4});
    const int y = n.fm("y", {1, 4});
    n.op(ADD, {a, b}, {y}, add_opts());
    const NpuGraph g = lower(n.build({a, b}, {y}));
    ASSERT_EQ(g.reasons.size(), 1u);
    EXPECT_EQ(g.reasons[0].reason, (std::vector<std::string>{"- Input(s) and Output tensors must not be dynamic",
                                                             "Op has dynamic tensor(s): a"}));
  }
  {  // G9: no quantisation
    Net n;
    const int x = n.fm("x", {1, 4, 4, 8}, kI8, 0.0f);
    const int y = n.fm("y", {1, 2, 2, 8});
    n.op(MAX_POOL_2D, {x}, {y}, pool_opts(2, 2));
    const NpuGraph g = lower(n.build({x}, {y}));
    ASSERT_EQ(g.reasons.size(), 1u);
    EXPECT_EQ(g.reasons[0].reason.at(0), "- Input(s), Output and Weight tensors must have quantization parameters");
  }
  {  // convolution.md constraint 1: conv stride 4
    Net n;
    const int x = n.fm("x", {1, 16, 16, 8});
    const int w = n.weights("w", {8, 3, 3, 8});
    const int y = n.fm("y", {1, 4, 4, 8});
    n.op(CONV_2D, {x, w, -1}, {y}, conv_opts(4, 4));
    const NpuGraph g = lower(n.build({x}, {y}));
    ASSERT_EQ(g.cpu_ops.size(), 1u);
    EXPECT_EQ(g.reasons.at(0).reason, (std::vector<std::string>{"- Stride values for both width and height must be in the range [1, 3]",
                                                                "Op has stride WxH as: 4x4"}));
    EXPECT_EQ(g.warnings, (std::vector<std::string>{"Warning: Conv2DBias operation is unknown or unsupported, placing on CPU"}));
  }
}

/// The first reason line Vela prints for the only operator of `n` (empty when it stays on the NPU).
std::string first_reason(Net& n, std::vector<std::int32_t> in, std::vector<std::int32_t> out) {
  const NpuGraph g = lower(n.build(std::move(in), std::move(out)));
  return g.reasons.empty() ? std::string() : g.reasons[0].reason.at(0);
}

// One model per further fallback rule (supported-operators.md and the family pages). The constraint
// texts not seen in the reference records (all but the stride, data-type, dynamic-tensor and pad-axis
// ones) follow Vela 2.1's constraint docstrings and are unconfirmed beyond that.
TEST(NpuLowering, FallbackRules) {
  {  // G5: more than 4 dimensions
    Net n;
    const int x = n.fm("x", {1, 1, 2, 2, 4});
    const int y = n.fm("y", {1, 1, 2, 2, 4});
    n.op(RELU, {x}, {y});
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Input(s) and Output tensors must not be greater than 4D");
  }
  {  // G7: int32 outside ADD/MUL/SUB
    Net n;
    const int x = n.fm("x", {1, 4, 4, 8}, kI32);
    const int y = n.fm("y", {1, 2, 2, 8}, kI32);
    n.op(MAX_POOL_2D, {x}, {y}, pool_opts(2, 2));
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Tensors which are int32 are only valid when op type is: ADD, MUL, SUB");
  }
  {  // G8: a dimension above 65535
    Net n;
    const int x = n.fm("x", {1, 70000});
    const int y = n.fm("y", {1, 70000});
    n.op(RELU, {x}, {y});
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Tensor dimensions must be in the range [1, 65535]");
  }
  {  // G11: per-axis quantisation on a FULLY_CONNECTED
    Net n;
    const int x = n.fm("x", {1, 4});
    const int w = n.weights("w", {2, 4});
    n.sg.tensors.back().quant = tb::QuantSpec{{0.5f, 0.25f}, {0, 0}, 0, {}, {}};
    const int y = n.fm("y", {1, 2});
    n.op(FULLY_CONNECTED, {x, w, -1}, {y}, fc_opts());
    EXPECT_EQ(first_reason(n, {x}, {y}),
              "- Per-axis quantization is only supported for the following op types: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV");
  }
  {  // convolution.md constraint 4: dilated kernel height above 64
    Net n;
    const int x = n.fm("x", {1, 80, 8, 4});
    const int w = n.weights("w", {4, 65, 1, 4});
    const int y = n.fm("y", {1, 16, 8, 4});
    n.op(CONV_2D, {x, w, -1}, {y}, conv_opts(1, 1, false));
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Dilated kernel height must be in the range [1, 64]");
  }
  {  // convolution.md constraint 2: dilation 3
    Net n;
    const int x = n.fm("x", {1, 8, 8, 4});
    const int w = n.weights("w", {4, 3, 3, 4});
    const int y = n.fm("y", {1, 8, 8, 4});
    n.op(CONV_2D, {x, w, -1}, {y}, conv_opts(1, 1, true, 0, 3));
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Dilation factor values for both width and height must be in the range [1, 2]");
  }
  {  // convolution.md constraint 6: non-constant weights
    Net n;
    const int x = n.fm("x", {1, 4});
    const int w = n.fm("w", {2, 4});
    const int y = n.fm("y", {1, 2});
    n.op(FULLY_CONNECTED, {x, w, -1}, {y}, fc_opts());
    EXPECT_EQ(first_reason(n, {x, w}, {y}), "- Weight tensor must be constant");
  }
  {  // convolution.md constraint 9: batch 2 on a conv
    Net n;
    const int x = n.fm("x", {2, 4, 4, 4});
    const int w = n.weights("w", {4, 1, 1, 4});
    const int y = n.fm("y", {2, 4, 4, 4});
    n.op(CONV_2D, {x, w, -1}, {y}, conv_opts(1, 1));
    EXPECT_EQ(first_reason(n, {x}, {y}), "- IFM Tensor batch size must be 1");
  }
  {  // depthwise multiplier > 1 with more than one input channel
    Net n;
    const int x = n.fm("x", {1, 4, 4, 2});
    const int w = n.weights("w", {1, 3, 3, 4});
    const int y = n.fm("y", {1, 4, 4, 4});
    n.op(DEPTHWISE_CONV_2D, {x, w, -1}, {y}, dw_opts(1, 2));
    EXPECT_EQ(first_reason(n, {x}, {y}),
              "- For depth multipliers > 1, IFM channels must be 1 and OFM channels must be equal to the depth multiplier");
  }
  {  // pooling: SAME average pool kernel above 8, VALID max pool kernel height above 256
    Net n;
    const int x = n.fm("x", {1, 16, 16, 4});
    const int y = n.fm("y", {1, 16, 16, 4});
    n.op(AVERAGE_POOL_2D, {x}, {y}, pool_opts(1, 9, true));
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Kernel filter values for both width and height must be in the range [1, 8]");
    Net m;
    const int a = m.fm("a", {1, 300, 1, 4});
    const int b = m.fm("b", {1, 1, 1, 4});
    m.op(MAX_POOL_2D, {a}, {b}, {5, {tb::i8(0, 1), tb::i32(1, 1), tb::i32(2, 1), tb::i32(3, 1), tb::i32(4, 300), tb::i8(5, 0)}});
    EXPECT_EQ(first_reason(m, {a}, {b}), "- Kernel filter height must be in the range [1, 256]");
  }
  {  // elementwise: input types differ
    Net n;
    const int a = n.fm("a", {1, 4});
    const int b = n.fm("b", {1, 4}, kI16);
    const int y = n.fm("y", {1, 4});
    n.op(ADD, {a, b}, {y}, add_opts());
    EXPECT_EQ(first_reason(n, {a, b}, {y}), "- Both Input data types must match");
  }
  {  // elementwise: a broadcast neither input can provide
    Net n;
    const int a = n.fm("a", {1, 4, 1, 8});
    const int b = n.fm("b", {1, 1, 4, 8});
    const int y = n.fm("y", {1, 4, 4, 8});
    n.op(MUL, {a, b}, {y}, mul_opts());
    EXPECT_EQ(first_reason(n, {a, b}, {y}), "- At least one Input's shape must match the OFM's shape");
  }
  {  // LEAKY_RELU with a negative alpha
    Net n;
    const int x = n.fm("x", {1, 4});
    const int y = n.fm("y", {1, 4});
    n.op(LEAKY_RELU, {x}, {y}, {75, {tb::f32(0, -0.5f)}});
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Alpha must not be negative");
  }
  {  // TRANSPOSE_CONV with stride 1
    Net n;
    const int shape = n.i32("oshape", {4}, {1, 4, 4, 4});
    const int w = n.weights("w", {4, 3, 3, 4});
    const int x = n.fm("x", {1, 4, 4, 4});
    const int y = n.fm("y", {1, 4, 4, 4});
    n.op(TRANSPOSE_CONV, {shape, w, x}, {y}, {49, {tb::i8(0, 0), tb::i32(1, 1), tb::i32(2, 1), tb::i8(3, 0)}});
    EXPECT_EQ(first_reason(n, {x}, {y}), "- Stride values for both width and height must be 2");
  }
  {  // STRIDED_SLICE with a stride of 2
    Net n;
    const int x = n.fm("x", {1, 8});
    const int b = n.i32("begin", {2}, {0, 0});
    const int e = n.i32("end", {2}, {1, 8});
    const int st = n.i32("strides", {2}, {1, 2});
    const int y = n.fm("y", {1, 4});
    n.op(STRIDED_SLICE, {x, b, e, st}, {y}, {32, {tb::i32(0, 0), tb::i32(1, 0), tb::i32(2, 0), tb::i32(3, 0), tb::i32(4, 0)}});
    EXPECT_EQ(first_reason(n, {x}, {y}), "- All Strides values must be 1");
  }
  {  // SOFTMAX with different IFM and OFM shapes
    Net n;
    const int x = n.fm("x", {1, 8});
    const int y = n.fm("y", {1, 1, 8});
    n.op(SOFTMAX, {x}, {y}, {9, {tb::f32(0, 1.0f)}});
    EXPECT_EQ(first_reason(n, {x}, {y}), "- IFM and OFM shapes must match");
  }
}

TEST(NpuLowering, SqueezeIsAMemoryOnlyAlias) {
  constexpr std::int32_t SQUEEZE = 43;
  Net n;
  const int x = n.fm("x", {1, 1, 1, 16});
  const int x0 = n.fm("x0", {1, 1, 1, 16});
  const int sq = n.fm("sq", {1, 16});
  const int w = n.weights("w", {4, 16});
  const int y = n.fm("y", {1, 4});
  n.op(RELU, {x}, {x0});
  n.op(SQUEEZE, {x0}, {sq}, {30, {tb::vec_i32(0, {1, 2})}});
  n.op(FULLY_CONNECTED, {sq, w, -1}, {y}, fc_opts());
  const NpuGraph g = lower(n.build({x}, {y}));
  EXPECT_EQ(types(g), (std::vector<std::string>{"AvgPool", "FullyConnected"}));
  EXPECT_TRUE(g.cpu_ops.empty());  // no CPU pass: SQUEEZE is memory-only (reshape.md)
  EXPECT_EQ(g.reasons, (std::vector<FallbackReason>{{"SQUEEZE", "sq", {"CPU only op"}}}));
  EXPECT_TRUE(g.warnings.empty());
  EXPECT_EQ(g.tensors.at(static_cast<std::size_t>(g.passes[1].ifm)).name, "x0");
  EXPECT_EQ(g.npu_subgraph_count, 1);
}

TEST(NpuLowering, SliceAndSplitVAreAbsorbed) {
  constexpr std::int32_t SLICE = 65, SPLIT_V = 102;
  Net n;
  const int x = n.fm("x", {1, 4, 4, 32});
  const int x0 = n.fm("x0", {1, 4, 4, 32});
  const int begin = n.i32("begin", {4}, {0, 1, 0, 0});
  const int size = n.i32("size", {4}, {1, 2, 4, 32});
  const int sl = n.fm("sl", {1, 2, 4, 32});
  const int sizes = n.i32("sizes", {2}, {16, -1});
  const int axis = n.i32("axis", {}, {3});
  const int s0 = n.fm("s0", {1, 2, 4, 16});
  const int s1 = n.fm("s1", {1, 2, 4, 16});
  const int y = n.fm("y", {1, 2, 4, 16});
  n.op(RELU, {x}, {x0});
  n.op(SLICE, {x0, begin, size}, {sl});
  n.op(SPLIT_V, {sl, sizes, axis}, {s0, s1}, {79, {tb::i32(0, 2)}});
  n.op(ADD, {s0, s1}, {y}, add_opts());
  const NpuGraph g = lower(n.build({x}, {y}));
  // The SLICE output feeds SPLIT_V (not a compute op), so it becomes an AvgPool copy; both SPLIT_V
  // outputs are read in place by the ADD at channel offsets 0 and 16.
  ASSERT_EQ(types(g), (std::vector<std::string>{"AvgPool", "AvgPool", "Add"}));
  EXPECT_EQ(g.passes[1].name, "sl_avgpool");
  EXPECT_EQ(g.passes[1].ifm_offset, (Shape4{0, 1, 0, 0}));
  const NpuPass& add = g.passes[2];
  EXPECT_EQ(add.ifm_shape, (Shape4{1, 2, 4, 32}));
  EXPECT_EQ(add.ifm2_shape, (Shape4{1, 2, 4, 32}));
  EXPECT_EQ(add.ifm_offset, (Shape4{0, 0, 0, 0}));
  EXPECT_EQ(add.ifm2_offset, (Shape4{0, 0, 0, 16}));
}

TEST(NpuLowering, DilationKeepsKernelAndPadsWithDilatedExtent) {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 4});
  const int w = n.weights("w", {4, 3, 3, 4});
  const int y = n.fm("y", {1, 8, 8, 4});
  const int x0 = n.fm("x0", {1, 8, 8, 4});
  n.op(RELU, {x}, {x0});
  n.op(CONV_2D, {x0, w, -1}, {y}, conv_opts(1, 1, true, 0, 2));
  const NpuGraph g = lower(n.build({x}, {y}));
  ASSERT_EQ(g.passes.size(), 2u);
  EXPECT_EQ(g.passes[1].kernel, (NpuKernel{3, 3, 1, 1, 2, 2}));
  EXPECT_EQ(g.passes[1].explicit_padding, (Pad4{2, 2, 2, 2}));  // dilated extent 5
}

TEST(NpuLowering, AddBranchOrder) {
  // Add(a, b): all of b's branch comes before all of a's branch, then the Add (pass-packing.md).
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int a1 = n.fm("a1", {1, 4, 4, 8});
  const int a2 = n.fm("a2", {1, 4, 4, 8});
  const int b1 = n.fm("b1", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8});
  n.op(MAX_POOL_2D, {x}, {a1}, pool_opts(1, 1));
  n.op(MAX_POOL_2D, {a1}, {a2}, pool_opts(1, 1));
  n.op(MAX_POOL_2D, {x}, {b1}, pool_opts(1, 1));
  n.op(ADD, {a2, b1}, {y}, add_opts());
  const NpuGraph g = lower(n.build({x}, {y}));
  EXPECT_EQ(names(g), (std::vector<std::string>{"b1", "a1", "a2", "y"}));
}

TEST(NpuLowering, BadInputGivesOneLineUserError) {
  Net n;
  const int x = n.fm("x", {1, 4});
  const int y = n.fm("y", {1, 4});
  n.op(GELU, {x}, {y});
  const Model m = n.build({x}, {y});
  try {
    lower(m);
    FAIL() << "expected a UserError";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("operator code '150'"), std::string::npos) << e.what();
  }
  Net compiled;  // an operator Vela already compiled (CUSTOM "ethos-u" with options [1,4,1])
  const int cx = compiled.fm("x", {1, 4});
  const int cy = compiled.fm("y", {1, 4});
  compiled.spec.operator_codes.push_back(tb::OpCodeSpec{32, {}, "ethos-u", 1});
  compiled.sg.operators.push_back(tb::OperatorSpec{0, {cx}, {cy}, {}, {}, {1, 4, 1}, {}});
  try {
    lower(compiled.build({cx}, {cy}));
    FAIL() << "expected a UserError";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("already compiled"), std::string::npos) << e.what();
  }
  Net missing;  // an ADD without its second input
  const int mx = missing.fm("x", {1, 4});
  const int my = missing.fm("y", {1, 4});
  missing.op(ADD, {mx}, {my}, add_opts());
  EXPECT_THROW(lower(missing.build({mx}, {my})), common::UserError);
  Net ok;
  const int a = ok.fm("a", {1, 4});
  const int b = ok.fm("b", {1, 4});
  ok.op(RELU, {a}, {b});
  NpuLoweringOptions o;
  o.accelerator_config = "ethos-u99";
  EXPECT_THROW(lower_for_npu(ok.build({a}, {b}), o), common::UserError);
}

// ---------------------------------------------------------------- (b) the reference records

using npumap::testing::kModelsDir;
using npumap::testing::kVelaReference;

nlohmann::json load_reference() {
  std::ifstream in(kVelaReference);
  return nlohmann::json::parse(in);
}

std::string shape_str(const std::vector<std::int32_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}
std::string shape_str(const Shape4& s) { return shape_str(std::vector<std::int32_t>(s.begin(), s.end())); }
std::string json_shape(const nlohmann::json& j) {
  std::vector<std::int32_t> v;
  for (const auto& d : j) v.push_back(d.get<std::int32_t>());
  return shape_str(v);
}

/// One per-pass comparison: the fields of a record pass our pass of the same name must match.
std::string pass_diff(const nlohmann::json& rp, const NpuPass& p, int subgraph, const NpuGraph& g) {
  std::string d;
  const auto& po = rp["primary_op"];
  if (po.value("type", "") != vela_op_type_name(p.op_type)) d += " type";
  std::vector<std::string> ops;
  for (const auto& o : rp["ops"])
    if (o != "DMA") ops.push_back(o.get<std::string>());
  std::vector<std::string> ours;
  for (V v : p.ops) ours.emplace_back(vela_op_type_name(v));
  if (ops != ours) d += " ops";
  std::vector<std::string> ifms;
  for (const auto& s : rp["ifm_shapes"]) ifms.push_back(json_shape(s));
  std::vector<std::string> our_ifms{shape_str(p.ifm_shape)};
  if (p.has_ifm2) our_ifms.push_back(shape_str(p.ifm2_shape));
  if (ifms != our_ifms) d += " ifm_shapes";
  if (rp["ofm_shapes"].size() != 1 || json_shape(rp["ofm_shapes"][0]) != shape_str(p.ofm_shape)) d += " ofm_shape";
  if (po["kernel_hw"] != nlohmann::json({p.kernel.h, p.kernel.w})) d += " kernel";
  if (po["stride_hw"] != nlohmann::json({p.kernel.stride_h, p.kernel.stride_w})) d += " stride";
  if (po.contains("explicit_padding_tlbr") && po["explicit_padding_tlbr"] != nlohmann::json(p.explicit_padding)) d += " padding";
  const std::string act = po.contains("activation") ? po["activation"].get<std::string>() : "None";
  if (act != npu_activation_name(p.activation)) d += " activation";
  if (rp["weights"].is_object()) {
    // Records give Vela's weight layout: HWIO for conv, [H,W,1,C] for depthwise, [I,O] for FC.
    std::vector<std::int32_t> want;
    for (const auto& x : rp["weights"]["shape"]) want.push_back(x.get<std::int32_t>());
    const auto& w = p.weights_shape;
    std::vector<std::int32_t> got;
    if (w.size() == 4 && want.size() == 4)
      got = p.op_type == V::DepthwiseConv2DBias ? std::vector<std::int32_t>{w[1], w[2], 1, w[0]}
                                                : std::vector<std::int32_t>{w[1], w[2], w[3], w[0]};
    else if (w.size() == 4 && want.size() == 2)
      got = {w[3], w[0]};
    if (got != want) d += " weights(" + shape_str(got) + " vs " + shape_str(want) + ")";
  }
  if (p.npu_subgraph != subgraph) d += " npu_subgraph";
  // The records' final layouts: NHCWB16 exactly where layout.md allows it (the scheduler applies it to
  // every eligible tensor of these models).
  for (const auto& [key, id] : {std::pair{"ifm", p.ifm}, std::pair{"ofm", p.ofm}}) {
    if (!rp.contains(key) || !rp[key].is_object() || id < 0) continue;
    const bool bricks = rp[key]["format"] == "NHCWB16";
    if (bricks != g.tensors.at(static_cast<std::size_t>(id)).nhcwb16_eligible) d += std::string(" ") + key + "_layout";
  }
  return d;
}

/// The record's NPU pass names in listed order, and ours in NpuGraph::report_order.
std::pair<std::vector<std::string>, std::vector<std::string>> listed_orders(const nlohmann::json& r, const NpuGraph& g) {
  std::vector<std::string> want, got;
  for (const auto& sg : r["subgraphs"]) {
    if (sg["placement"] != "Npu") continue;
    for (const auto& cp : sg["cascaded_passes"])
      for (const auto& rp : cp["pass_records"])
        if (rp["placement"] == "Npu") want.push_back(rp["name"].get<std::string>());
  }
  for (int i : g.report_order) got.push_back(g.passes.at(static_cast<std::size_t>(i)).name);
  return {want, got};
}

struct RecordResult {
  bool counts = false, cpu_ops = false, reasons = false, warnings = false;
  int passes_total = 0, passes_matched = 0;
  std::string detail;
};

RecordResult check_record(const nlohmann::json& r, const NpuGraph& g) {
  RecordResult res;
  std::map<std::string, int> want_counts;
  for (const auto& [k, v] : r["npu_op_types"].items()) want_counts[k] = v.get<int>();
  res.counts = g.op_type_counts() == want_counts && static_cast<int>(g.passes.size()) == r["npu_passes"].get<int>();
  // CPU fallback ops: type, name, input and output shapes, in pass order.
  std::vector<std::string> want_cpu, got_cpu;
  for (const auto& c : r["cpu_fallback_ops"]) {
    std::string s = c["type"].get<std::string>() + " " + c["name"].get<std::string>() + " (";
    for (const auto& i : c["inputs"]) s += json_shape(i);
    s += ") -> (";
    for (const auto& o : c["outputs"]) s += json_shape(o);
    want_cpu.push_back(s + ")");
  }
  for (const CpuOp& c : g.cpu_ops) {
    std::string s = c.vela_type + " " + c.name + " (";
    for (int i : c.inputs) s += shape_str(g.tensors.at(static_cast<std::size_t>(i)).shape);
    s += ") -> (";
    for (int o : c.outputs) s += shape_str(g.tensors.at(static_cast<std::size_t>(o)).shape);
    got_cpu.push_back(s + ")");
  }
  res.cpu_ops = want_cpu == got_cpu;
  std::vector<FallbackReason> want_reasons;
  std::vector<std::string> want_warnings;
  for (const auto& x : r["cpu_fallback_reasons"]) {
    if (x.contains("warning")) {
      want_warnings.push_back(x["warning"].get<std::string>());
    } else {
      FallbackReason fr{x["tflite_op"].get<std::string>(), x["name"].get<std::string>(), {}};
      for (const auto& l : x["reason"]) fr.reason.push_back(l.get<std::string>());
      want_reasons.push_back(fr);
    }
  }
  res.reasons = want_reasons == g.reasons;
  res.warnings = want_warnings == g.warnings;
  // Every NPU pass of the record: a pass of ours with the same name and the same fields.
  std::multimap<std::string, const NpuPass*> by_name;
  for (const NpuPass& p : g.passes) by_name.emplace(p.name, &p);
  for (const auto& sg : r["subgraphs"]) {
    if (sg["placement"] != "Npu") continue;
    const std::string sname = sg["name"].get<std::string>();
    const int sub = std::stoi(sname.substr(sname.rfind('_') + 1));
    for (const auto& cp : sg["cascaded_passes"])
      for (const auto& rp : cp["pass_records"]) {
        if (rp["placement"] != "Npu") continue;
        ++res.passes_total;
        const auto [lo, hi] = by_name.equal_range(rp["name"].get<std::string>());
        std::string best = " (no pass of that name)";
        for (auto it = lo; it != hi; ++it) {
          const std::string d = pass_diff(rp, *it->second, sub, g);
          if (d.empty()) {
            best.clear();
            break;
          }
          best = d;
        }
        if (best.empty()) ++res.passes_matched;
        else if (res.detail.size() < 2000) res.detail += "\n  pass '" + rp["name"].get<std::string>() + "':" + best;
      }
  }
  return res;
}

TEST(NpuLoweringReference, EveryRecordMatches) {
  ASSERT_TRUE(fs::exists(kVelaReference)) << kVelaReference << " is missing (built by the tests' target npumap_test_data)";
  const nlohmann::json ref = load_reference();
  int records = 0;
  std::cout << "model                                          config         counts cpu_ops reasons warnings passes\n";
  for (const auto& r : ref["records"]) {
    if (r["status"] != "ok") continue;
    const std::string model = r["model"].get<std::string>();
    const std::string config = r["config"].get<std::string>();
    const fs::path path = kModelsDir / (model + ".tflite");
    if (!fs::exists(path)) {
      ADD_FAILURE() << "missing model " << path;
      continue;
    }
    ++records;
    const NpuGraph g = lower(read_model(path.string()), config);
    const RecordResult res = check_record(r, g);
    auto yn = [](bool b) { return b ? "y" : "n"; };
    std::cout << model << std::string(model.size() < 47 ? 47 - model.size() : 1, ' ') << config << "  " << yn(res.counts)
              << "      " << yn(res.cpu_ops) << "       " << yn(res.reasons) << "       " << yn(res.warnings) << "        "
              << res.passes_matched << "/" << res.passes_total << "\n";
    // Every record is matched exactly (no known exceptions): counts, CPU ops (type, name, shapes, order),
    // reason and warning lines (text and order) and every NPU pass's fields. Tensor names are not
    // compared: Vela's softmax constants ("F0_one_const") and the "_cpu"/"_npu" clones at NPU
    // subgraph boundaries are not reproduced.
    EXPECT_TRUE(res.counts) << model << " " << config;
    EXPECT_TRUE(res.cpu_ops) << model << " " << config;
    EXPECT_TRUE(res.reasons) << model << " " << config;
    EXPECT_TRUE(res.warnings) << model << " " << config;
    EXPECT_EQ(res.passes_matched, res.passes_total) << model << " " << config << res.detail;
    // The listed order: reproduced except where the scheduler forms an IfmStream cascade that pulls a
    // pass ahead (yolo-fastest's main_split_2: concat0_avgpool is cascaded with the next conv, so
    // concat1_avgpool is listed first). Cascades are scheduling, outside this lowering.
    const auto [want_order, got_order] = listed_orders(r, g);
    if (model == "emza__yolo-fastest_192_face_v4") {
      EXPECT_NE(want_order, got_order) << "yolo's cascade order now matches: drop this exception";
    } else {
      EXPECT_EQ(want_order, got_order) << model << " " << config;
    }
  }
  EXPECT_EQ(records, npumap::testing::kVelaReferenceRecords);
}

// ---------------------------------------------------------------- (c) every model lowers

std::vector<fs::path> all_models() {
  std::vector<fs::path> v;
  for (const fs::path& dir : {kModelsDir, kModelsDir / "other_precision"}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".tflite") v.push_back(e.path());
  }
  std::sort(v.begin(), v.end());
  return v;
}

TEST(NpuLoweringModels, EveryModelLowersOrFailsCleanly) {
  const auto models = all_models();
  ASSERT_FALSE(models.empty()) << kModelsDir << " is missing (run from the project root)";
  int lowered = 0;
  for (const fs::path& p : models) {
    const Model m = read_model(p.string());
    for (const char* config : {"ethos-u55-64", "ethos-u55-128", "ethos-u65-256"}) {
      try {
        const NpuGraph g = lower(m, config);
        ++lowered;
        expect_wired(g);
        for (const NpuPass& q : g.passes) {
          EXPECT_GE(q.ifm, 0) << p << " " << q.name;
          EXPECT_GE(q.ofm, 0) << p << " " << q.name;
          for (std::int32_t d : q.ofm_shape) EXPECT_GT(d, 0) << p << " " << q.name;
        }
      } catch (const common::UserError& e) {
        // None of the real models is expected to fail; a failure must still be one clean line.
        ADD_FAILURE() << p.filename() << ": " << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      }
    }
  }
  EXPECT_EQ(lowered, static_cast<int>(models.size()) * 3);
}

TEST(NpuLoweringModels, MutatedModelsNeverCrash) {
  // Fixed-seed byte mutations of small real models: the reader accepts some; lowering any of them
  // must succeed or throw a one-line UserError (a crash or another exception fails the test).
  int read_ok = 0, lowered = 0, refused = 0;
  for (const char* name : {"tflm__hello_world_int8.tflite", "tflm__micro_speech_quantized.tflite", "tflm__person_detect.tflite",
                           "mlexamples__basic_lstm_quantized_small.tflite"}) {
    const fs::path path = kModelsDir / name;
    ASSERT_TRUE(fs::exists(path)) << path << " is missing (run from the project root)";
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::mt19937 rng(12345);
    for (int i = 0; i < 300; ++i) {
      std::string b = bytes;
      // Mutate the first 4 KiB (tables, shapes, options) more often than the weight data.
      for (int k = 0; k < 4; ++k) {
        const std::size_t span = (k % 2 == 0) ? std::min<std::size_t>(b.size(), 4096) : b.size();
        b[rng() % span] = static_cast<char>(rng() & 0xff);
      }
      Model m;
      try {
        m = read_model_bytes(b, "mutated.tflite");
      } catch (const common::UserError&) {
        continue;
      }
      ++read_ok;
      try {
        lower(m);
        ++lowered;
      } catch (const common::UserError& e) {
        ++refused;
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      }
    }
  }
  std::cout << "mutations: " << read_ok << " read, " << lowered << " lowered, " << refused << " refused with a UserError\n";
}

}  // namespace
}  // namespace npumap::tflite
