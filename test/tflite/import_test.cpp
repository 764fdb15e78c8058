// The importer's last step (workloads/tflite/import.hpp): lowered NPU passes become workload layers.
// Hand-built models check each construct (weights, concatenation, constant operands, CPU operators).

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arch/arch_loader.hpp"
#include "common/user_error.hpp"
#include "mapper/search/lowering.hpp"
#include "mapper/search/map_network.hpp"
#include "tflite_net.hpp"
#include "workloads/loader.hpp"
#include "workloads/tflite/import.hpp"
#include "workloads/tflite/weight_encoding.hpp"
#include "workloads/writer.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
using workloads::OpKind;

ImportedModel import(const Model& m, const std::string& config = "ethos-u55-256") {
  ImportOptions o;
  o.accelerator_config = config;
  return import_model(m, o);
}

/// input [1,8,8,8] -> conv 3x3 SAME (16 out) and conv 1x1 (16 out) -> CONCATENATION on C -> [1,8,8,32].
Model concat_model() {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 8});
  const int w1 = n.weights("w1", {16, 3, 3, 8}, 3);
  const int b1 = n.bias("b1", 16);
  const int a = n.fm("a", {1, 8, 8, 16});
  n.op(CONV_2D, {x, w1, b1}, {a}, conv_opts(1, 1, true));
  const int w2 = n.weights("w2", {16, 1, 1, 8}, 5);
  const int b2 = n.bias("b2", 16);
  const int b = n.fm("b", {1, 8, 8, 16});
  n.op(CONV_2D, {x, w2, b2}, {b}, conv_opts(1, 1, true));
  const int y = n.fm("y", {1, 8, 8, 32});
  n.op(CONCATENATION, {a, b}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 0)}});
  return n.build({x}, {y});
}

TEST(TfliteImport, ConvolutionsAndAConcatenationBecomeLayersWritingOneDeclaredTensor) {
  const ImportedModel im = import(concat_model());
  const workloads::Workload& w = im.workload;
  // Two convolutions and Vela's two AvgPool copies of the concatenation (docs/design/lowering/concat-split.md).
  ASSERT_EQ(w.layers.size(), 4u) << im.yaml;
  const int y = w.tensor_index("y");
  ASSERT_GE(y, 0);
  const workloads::TensorInfo& t = w.tensors[static_cast<std::size_t>(y)];
  EXPECT_TRUE(t.is_declared);
  EXPECT_EQ(t.writers.size(), 2u);
  EXPECT_EQ(t.shape, (workloads::Shape{1, 8, 8, 32}));
  for (int wr : t.writers) {
    const workloads::Layer& l = w.layers[static_cast<std::size_t>(wr)];
    EXPECT_EQ(l.kind, OpKind::AvgPool);
    // Each copy writes its 16 channels, and runs (as in Vela 2.1) with the whole tensor as its OFM.
    EXPECT_EQ(l.output_dims, (std::vector<std::int64_t>{1, 8, 8, 16}));
    EXPECT_EQ(l.ofm_shape, (workloads::Shape{1, 8, 8, 32}));
  }
  // Every writer runs before the tensor's readers (here: none, it is the network output).
  EXPECT_TRUE(t.is_network_output());
  // The 3x3 convolution: SAME padding of a 3x3 kernel at stride 1 is (1, 1, 1, 1); 8*8*16*9*8 MACs.
  const int conv = [&] {
    for (std::size_t i = 0; i < w.layers.size(); ++i)
      if (w.layers[i].kind == OpKind::Conv2D && w.layers[i].kernel_h == 3) return static_cast<int>(i);
    return -1;
  }();
  ASSERT_GE(conv, 0);
  const workloads::Layer& c = w.layers[static_cast<std::size_t>(conv)];
  EXPECT_EQ(c.padding, (workloads::Padding{1, 1, 1, 1}));
  EXPECT_EQ(c.macs, 8 * 8 * 16 * 9 * 8);
  EXPECT_EQ(c.weight_shape, (std::vector<std::int64_t>{3, 3, 8, 16}));
  // Its weight compression is Vela's encoder's bytes over the raw 1152 bytes, for the importer's
  // representative block depth (16 for 16 output channels).
  WeightEncodingInput in;
  in.values.assign(16 * 3 * 3 * 8, 3);
  in.zero_points = {0};
  in.ofm_depth = 16;
  in.kernel_h = in.kernel_w = 3;
  in.ifm_depth = 8;
  in.traversal = choose_traversal(WeightBlockType::Conv, 3, 3, 8, 8);
  in.ofm_block_depth = 16;
  in.accelerator = weight_accelerator("ethos-u55-256");
  const double expected = static_cast<double>(encode_weights(in).total_bytes) / 1152.0;
  EXPECT_DOUBLE_EQ(c.weight_compression, expected);
}

/// input [1,8,8,16] -> conv 1x1 -> c; max pool 3x3 (c -> a) and max pool 5x5 (c -> b), both SAME at
/// stride 1; CONCATENATION {b, a, c} on C -> y: a spatial-pyramid block like yolo-fastest's.
Model pyramid_model() {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 16});
  const int w = n.weights("w", {16, 1, 1, 16}, 3);
  const int bias = n.bias("bias", 16);
  const int c = n.fm("c", {1, 8, 8, 16});
  n.op(CONV_2D, {x, w, bias}, {c}, conv_opts(1, 1, true));
  const int a = n.fm("a", {1, 8, 8, 16});
  n.op(MAX_POOL_2D, {c}, {a}, pool_opts(1, 3, true));
  const int b = n.fm("b", {1, 8, 8, 16});
  n.op(MAX_POOL_2D, {c}, {b}, pool_opts(1, 5, true));
  const int y = n.fm("y", {1, 8, 8, 48});
  n.op(CONCATENATION, {b, a, c}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 0)}});
  return n.build({x}, {y});
}

// Each max pool's only reader is its copy into the concatenation, which reads nothing else: a chain
// link, and c, the pools' input, is read again by the copy of c (operator index 3, the copies'), so
// moving a pool to its copy keeps c live no longer: the importer takes the pool right before its copy
// and the mapspace may roll both pools' outputs (producer and consumer adjacent). By hand, the
// importer's rule: operator indices conv 0,
// 3x3 pool 1, 5x5 pool 2, the three copies 3 (in Vela's pass order: copy of b, of a, of c); each pool
// takes its copy's place, just before it: convolution, 5x5 pool, copy of b, 3x3 pool, copy of a,
// copy of c. Vela's pass packing gives the same order (pass_packing.py: from the output, a tensor's
// writers last first, a writer packed once every reader of its output has been visited, the list
// reversed): the copy of c first (c has three readers: nothing more), then the copy of a and the 3x3
// pool, then the copy of b, the 5x5 pool and, c's readers all seen, the convolution; reversed, as
// above. (TFLite operator order alone, which the importer had followed, puts both pools before the
// copies: only the 5x5 pool was next to its copy.)
TEST(TfliteImport, ALinkedProducerComesRightBeforeItsReaderAsInVelasPassOrder) {
  const ImportedModel im = import(pyramid_model(), "ethos-u65-256");
  const workloads::Workload& w = im.workload;
  ASSERT_EQ(w.layers.size(), 6u) << im.yaml;
  const auto step = [&](std::size_t k) -> const workloads::Layer& {
    return w.layers[static_cast<std::size_t>(w.topological_order.at(k))];
  };
  const auto reads = [&](std::size_t k) { return w.tensors[static_cast<std::size_t>(step(k).inputs.at(0))].name; };
  EXPECT_EQ(step(0).kind, OpKind::Conv2D);
  EXPECT_EQ(step(1).kind, OpKind::MaxPool);
  EXPECT_EQ(step(1).kernel_h, 5);
  EXPECT_EQ(step(2).kind, OpKind::AvgPool);
  EXPECT_EQ(reads(2), "b");
  EXPECT_EQ(step(3).kind, OpKind::MaxPool);
  EXPECT_EQ(step(3).kernel_h, 3);
  EXPECT_EQ(step(4).kind, OpKind::AvgPool);
  EXPECT_EQ(reads(4), "a");
  EXPECT_EQ(step(5).kind, OpKind::AvgPool);
  EXPECT_EQ(reads(5), "c");
  // Both pools' outputs may now go through a rolling buffer into their copies.
  const arch::Arch arch = arch::load_arch("ethos-u65-256");
  for (const std::size_t k : {std::size_t{1}, std::size_t{3}}) {
    EXPECT_TRUE(search::lower_layer(arch, w, w.topological_order[k]).output_may_roll) << k;
    EXPECT_TRUE(search::lower_layer(arch, w, w.topological_order[k + 1]).input_may_roll) << k;
  }
}

/// input [1,8,8,16] -> conv 1x1 -> c; max pool 3x3 SAME (c -> e) and conv 1x1 (c -> d); CONCATENATION
/// {e, d} on C -> y.
Model link_that_would_extend_model() {
  Net n;
  const int x = n.fm("x", {1, 8, 8, 16});
  const int w = n.weights("w", {16, 1, 1, 16}, 3);
  const int bias = n.bias("bias", 16);
  const int c = n.fm("c", {1, 8, 8, 16});
  n.op(CONV_2D, {x, w, bias}, {c}, conv_opts(1, 1, true));
  const int e = n.fm("e", {1, 8, 8, 16});
  n.op(MAX_POOL_2D, {c}, {e}, pool_opts(1, 3, true));
  const int w2 = n.weights("w2", {16, 1, 1, 16}, 5);
  const int bias2 = n.bias("bias2", 16);
  const int d = n.fm("d", {1, 8, 8, 16});
  n.op(CONV_2D, {c, w2, bias2}, {d}, conv_opts(1, 1, true));
  const int y = n.fm("y", {1, 8, 8, 32});
  n.op(CONCATENATION, {e, d}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 0)}});
  return n.build({x}, {y});
}

// The pool and the second convolution are links too (each read only by its copy, which reads
// nothing else), but c's other reader has a lower operator index than the copies (1 or 2 against 3):
// taking either late would keep c live longer, so neither moves and operator order stands:
// convolution, pool, second convolution, copy of e, copy of d.
TEST(TfliteImport, ALinkStaysWhereTakingItLateWouldKeepItsInputLive) {
  const ImportedModel im = import(link_that_would_extend_model(), "ethos-u65-256");
  const workloads::Workload& w = im.workload;
  ASSERT_EQ(w.layers.size(), 5u) << im.yaml;
  const auto step = [&](std::size_t k) -> const workloads::Layer& {
    return w.layers[static_cast<std::size_t>(w.topological_order.at(k))];
  };
  const auto reads = [&](std::size_t k) { return w.tensors[static_cast<std::size_t>(step(k).inputs.at(0))].name; };
  EXPECT_EQ(step(0).kind, OpKind::Conv2D);
  EXPECT_EQ(step(1).kind, OpKind::MaxPool);
  EXPECT_EQ(step(2).kind, OpKind::Conv2D);
  EXPECT_EQ(reads(2), "c");
  EXPECT_EQ(step(3).kind, OpKind::AvgPool);
  EXPECT_EQ(reads(3), "e");
  EXPECT_EQ(step(4).kind, OpKind::AvgPool);
  EXPECT_EQ(reads(4), "d");
}

TEST(TfliteImport, TheYamlLoadsBackEqualAndMapsIdentically) {
  const ImportedModel im = import(concat_model());
  const workloads::Workload again = workloads::load_workload_from_string(im.yaml, "again.yaml");
  EXPECT_EQ(workloads::to_yaml(again), workloads::to_yaml(im.workload));
  const arch::Arch arch = arch::load_arch("ethos-u55-256");
  search::SearchOptions o;
  const auto a = search::map_network(arch, im.workload, o, {});
  const auto b = search::map_network(arch, again, o, {});
  ASSERT_TRUE(a.joined && b.joined);
  ASSERT_FALSE(a.joined->front.empty());
  ASSERT_EQ(a.joined->front.size(), b.joined->front.size());
  for (std::size_t i = 0; i < a.joined->front.size(); ++i) {
    EXPECT_EQ(a.joined->front[i].cycles, b.joined->front[i].cycles);
    EXPECT_EQ(a.joined->front[i].peak_sram_bytes, b.joined->front[i].peak_sram_bytes);
  }
}

TEST(TfliteImport, AConstantOperandIsReadInPlaceAndTakesNoArena) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 16});
  const int k = n.cst_bytes("k", {1, 1, 1, 16}, kI8, std::vector<std::uint8_t>(16, 2), 0.5f, 0);
  const int y = n.fm("y", {1, 4, 4, 16});
  n.op(ADD, {x, k}, {y}, add_opts());
  const ImportedModel im = import(n.build({x}, {y}));
  const workloads::Workload& w = im.workload;
  ASSERT_EQ(w.layers.size(), 1u) << im.yaml;
  const workloads::Layer& add = w.layers[0];
  EXPECT_EQ(add.kind, OpKind::Add);
  ASSERT_EQ(add.inputs.size(), 2u);
  const workloads::TensorInfo& kt = w.tensors[static_cast<std::size_t>(add.inputs[1])];
  EXPECT_TRUE(kt.is_constant);
  // Broadcast: the [1,1,1,16] operand against [1,4,4,16].
  EXPECT_EQ(*add.ifm2_shape, (workloads::Shape{1, 1, 1, 16}));
  // The best mapping's peak SRAM holds x and y only: 4*4*16 bytes each (linear, 16-byte aligned).
  const arch::Arch arch = arch::load_arch("ethos-u55-256");
  search::SearchOptions o;
  o.objectives = {search::Objective::Cycles, search::Objective::Sram};
  const auto r = search::map_network(arch, w, o, {});
  ASSERT_TRUE(r.joined && !r.joined->front.empty());
  double least = 1e300;
  for (const auto& p : r.joined->front) least = std::min(least, p.peak_sram_bytes);
  EXPECT_EQ(least, 2.0 * 256.0);
}

TEST(TfliteImport, ACpuOperatorStaysWithVelasReason) {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int perm = n.i32("perm", {4}, {0, 2, 1, 3});
  const int g = n.fm("g", {1, 4, 4, 8});
  n.op(TRANSPOSE, {x, perm}, {g});
  const int w1 = n.weights("w", {8, 1, 1, 8});
  const int b1 = n.bias("b", 8);
  const int y = n.fm("y", {1, 4, 4, 8});
  n.op(CONV_2D, {g, w1, b1}, {y}, conv_opts(1, 1, true));
  const ImportedModel im = import(n.build({x}, {y}));
  const workloads::Workload& w = im.workload;
  ASSERT_EQ(w.layers.size(), 2u) << im.yaml;
  EXPECT_EQ(w.layers[0].kind, OpKind::Cpu);
  EXPECT_EQ(w.layers[0].cpu_operator, "Transpose") << im.yaml;
  EXPECT_EQ(w.layers[0].cpu_reason, "CPU only op");
  // It reads the feature map only (its permutation is a constant of its own).
  EXPECT_EQ(w.layers[0].inputs.size(), 1u);
  EXPECT_EQ(w.layers[1].kind, OpKind::Conv2D);
}

TEST(TfliteImport, BadFilesAreOneLineUserErrors) {
  const fs::path p = fs::temp_directory_path() / "npumap_import_truncated.tflite";
  {
    std::ofstream out(p, std::ios::binary);
    out << "\x10\0\0\0TFL3";
  }
  try {
    import_tflite(p.string(), {});
    ADD_FAILURE() << "no error";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  fs::remove(p);
  EXPECT_TRUE(is_tflite_path("model.TFLITE"));
  EXPECT_FALSE(is_tflite_path("workloads/resnet18.yaml"));
}

}  // namespace
}  // namespace npumap::tflite
