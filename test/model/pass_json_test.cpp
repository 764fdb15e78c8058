// The pass JSON reader's validation: each bad input throws common::UserError naming the file and the key path,
// with a closest-match hint where one exists; plus arch_params overrides and the Pass value semantics.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "common/user_error.hpp"
#include "model/pass_json.hpp"

namespace npumap::model {
namespace {

using nlohmann::json;

json first_reference_input() {
  std::ifstream in("test/data/npu_reference_passes.json");
  return json::parse(in).at(0).at("input");
}

/// Reads `input` and returns the common::UserError text (empty if it was accepted).
std::string error_of(const json& input) {
  try {
    read_pass_input(input, "passes.json", "records[7].input");
  } catch (const common::UserError& e) {
    return e.what();
  }
  return {};
}

TEST(PassJson, UnknownKeyGetsClosestMatch) {
  json in = first_reference_input();
  in["op"]["kernal"] = in["op"]["kernel"];
  const std::string e = error_of(in);
  EXPECT_NE(e.find("passes.json: records[7].input.op.kernal: unknown key"), std::string::npos) << e;
  EXPECT_NE(e.find("kernel"), std::string::npos) << e;
}

TEST(PassJson, WrongTypeNamesKeyPath) {
  json in = first_reference_input();
  in["ifm"]["shape"][2] = "224";
  const std::string e = error_of(in);
  EXPECT_NE(e.find("records[7].input.ifm.shape[2]"), std::string::npos) << e;
  EXPECT_NE(e.find("expected an integer"), std::string::npos) << e;
}

TEST(PassJson, MissingKey) {
  json in = first_reference_input();
  in.erase("ofm");
  EXPECT_NE(error_of(in).find("records[7].input.ofm: missing required key"), std::string::npos);
}

TEST(PassJson, UnknownNamesGetHints) {
  json in = first_reference_input();
  in["accelerator"] = "ethos-u55-12";
  std::string e = error_of(in);
  EXPECT_NE(e.find("records[7].input.accelerator"), std::string::npos) << e;
  EXPECT_NE(e.find("ethos-u55-128"), std::string::npos) << e;

  in = first_reference_input();
  in["weights"]["block_traversal"] = "PartKernelFrist";
  e = error_of(in);
  EXPECT_NE(e.find("records[7].input.weights.block_traversal"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'PartKernelFirst'"), std::string::npos) << e;

  in = first_reference_input();
  in["ifm"]["mem_area"] = "SRAM";
  EXPECT_NE(error_of(in).find("Sram"), std::string::npos);
}

TEST(PassJson, StructuralErrors) {
  json in = first_reference_input();
  in["op"]["type"] = "Add";  // binary elementwise without ifm2
  EXPECT_NE(error_of(in).find("records[7].input.ifm2"), std::string::npos);

  in = first_reference_input();
  in.erase("weights");
  EXPECT_NE(error_of(in).find("records[7].input.weights: this op needs weights"), std::string::npos);

  in = first_reference_input();
  in["block_config"] = {16, 4, 8};
  EXPECT_NE(error_of(in).find("records[7].input.block_config"), std::string::npos);

  in = first_reference_input();
  in["bias"]["element_size_bytes"] = 8;
  EXPECT_NE(error_of(in).find("element_size_bytes"), std::string::npos);

  in = first_reference_input();
  in["rewrite_list"] = json::array({{{"op", "ChangeTensorSubPurpose"}, {"tensor", "ifm"},
                                     {"sub_purpose", "DoubleBuffer"}, {"param_a", 16}}});
  EXPECT_NE(error_of(in).find("records[7].input.rewrite_list[0].tensor"), std::string::npos);

  EXPECT_NE(error_of(json::array()).find("expected an object"), std::string::npos);
}

TEST(PassJson, ArchParamsOverrideTheNamedArch) {
  json in = first_reference_input();
  in["arch_params"] = {{"memory_bandwidths_per_cycle", {{"Sram", 4.0}}}, {"memory_burst_length", {{"Dram", 64}}}};
  const PassInput p = read_pass_input(in, "f", "input");
  EXPECT_EQ(p.arch.mem(arch::MemArea::Sram).bandwidth_per_cycle, 4.0);
  EXPECT_EQ(p.arch.mem(arch::MemArea::Dram).burst_length, 64);
  // Untouched values stay as make_arch gave them (U55 internal default: OffChipFlash 1 B/cycle).
  EXPECT_EQ(p.arch.mem(arch::MemArea::OffChipFlash).bandwidth_per_cycle, 1.0);

  in["arch_params"] = {{"memory_latency_read", {{"Flash", 3}}}};
  EXPECT_NE(error_of(in).find("records[7].input.arch_params.memory_latency_read.Flash"), std::string::npos);
}

TEST(PassJson, ReadsTheFirstReferencePass) {
  const PassInput p = read_pass_input(first_reference_input(), "f", "input");
  EXPECT_EQ(p.pass.op.type, OpType::Conv2DBias);
  EXPECT_EQ(p.pass.op.kernel.h, 3);
  EXPECT_EQ(p.pass.op.kernel.stride_x, 2);
  EXPECT_EQ(p.pass.op.activation, Activation::Relu);
  EXPECT_EQ(p.pass.ifm.shape, Shape::of({1, 224, 224, 3}));
  EXPECT_FALSE(p.pass.ifm.needs_linear_format);
  ASSERT_TRUE(p.pass.weights.has_value());
  EXPECT_EQ(p.pass.weights->dma_to, arch::MemArea::Sram);
  EXPECT_EQ(p.pass.weights->traversal, BlockTraversal::PartKernelFirst);
  ASSERT_TRUE(p.pass.bias.has_value());
  EXPECT_EQ(p.pass.bias->storage_shape, Shape::of({32}));  // defaults to the shape
  EXPECT_EQ(p.pass.block_config, (std::array<int, 4>{16, 4, 8, 16}));
  EXPECT_TRUE(p.pass.has_npu_predecessor);
  EXPECT_EQ(p.labels.layer_name, "conv3x3s2_224x224x3_to32");
}

TEST(PassValue, EqualityIsMemberwise) {
  const Pass a = read_pass_input(first_reference_input(), "f", "input").pass;
  Pass b = a;
  EXPECT_EQ(a, b);
  b.weights->compression_scale += 0.01;
  EXPECT_NE(a, b);
  b = a;
  b.block_config[2] = 16;  // ignored by the model, but part of the pass
  EXPECT_NE(a, b);
  // Shapes compare only their used dimensions.
  Shape s = Shape::of({2, 3});
  Shape t = s;
  t.dims[3] = 99;
  EXPECT_EQ(s, t);
  EXPECT_EQ(s.as_4d(), (std::array<int, 4>{1, 1, 2, 3}));
  EXPECT_EQ(Shape{}.elements(), 1);
}

TEST(PassValue, OpShapes) {
  Pass p;
  p.op.type = OpType::FullyConnected;
  p.ifm.shape = Shape::of({3, 64});
  p.ofm.shape = Shape::of({3, 10});
  EXPECT_EQ(p.ifm_op_shape(), (std::array<int, 4>{3, 1, 1, 64}));
  EXPECT_EQ(p.ofm_op_shape(), (std::array<int, 4>{3, 1, 1, 10}));
  p.op.type = OpType::Add;
  p.ifm.shape = Shape::of({5, 6, 7});
  EXPECT_EQ(p.ifm_op_shape(), (std::array<int, 4>{1, 5, 6, 7}));
  EXPECT_EQ(npu_block_type(OpType::TransposeConv2D), arch::NpuBlockType::ConvolutionMxN);
  EXPECT_EQ(npu_block_type(OpType::ResizeBilinear), arch::NpuBlockType::Pooling);
  EXPECT_EQ(npu_block_type(OpType::LeakyRelu), arch::NpuBlockType::ElementWise);
  EXPECT_TRUE(is_binary_elementwise(OpType::Minimum));
  EXPECT_FALSE(is_binary_elementwise(OpType::Abs));
}

}  // namespace
}  // namespace npumap::model
