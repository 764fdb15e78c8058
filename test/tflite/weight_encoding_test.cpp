// Tests of the Vela 2.1 weight encoder (workloads/tflite/weight_encoding.hpp, docs/design/lowering/weight-encoding.md):
//  (a) hand-derived cases: the traversal rule, reorder lengths and orders, codec sizes of streams
//      small enough to count bits by hand, the bias/scale packing, and the page's examples of the compression scale;
//  (b) every weighted pass of every record in test/data/vela_tflite_reference.json: the model's
//      weight tensor encoded with that pass's block depth, depth step and traversal must give the
//      record's worst-stream and mean compression scales, encoded bytes and bias/scale size;
//  (c) per record, the whole model's encoded and reordered bytes against Vela's totals;
//  plus bad input (UserError, never a crash) and every weight operator of the largest model.
// The models are workloads/models/, the reference is extracted into the build tree
// (test/support/reference_data.hpp); the tests fail if either is missing. Tests run with the
// working directory at the project root.

#include "workloads/tflite/weight_encoding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/user_error.hpp"
#include "workloads/tflite/reader.hpp"
#include "test/support/reference_data.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kModels = npumap::testing::kModelsDir.string();
const std::string kReference = npumap::testing::kVelaReference.string();

bool reference_present() { return fs::is_directory(kModels) && fs::is_regular_file(kReference); }

// ---------------------------------------------------------------------------------------------
// (a) Hand-derived cases

TEST(WeightTraversal, RuleOf73) {
  // 3x3 on I = 16, 8-bit: depth_util = 16/32 = 0.5; pkf_util = (16/16) * (9/12) = 0.75 -> PKF.
  EXPECT_EQ(choose_traversal(WeightBlockType::Conv, 3, 3, 16, 8), WeightTraversal::PartKernelFirst);
  // 1x1 on I = 32: depth_util = 1; pkf_util = 1 * (1/4) = 0.25 -> depth-first.
  EXPECT_EQ(choose_traversal(WeightBlockType::Conv, 1, 1, 32, 8), WeightTraversal::DepthFirst);
  // 1x1 on I = 8: I <= 8 always gives part-kernel-first.
  EXPECT_EQ(choose_traversal(WeightBlockType::Conv, 1, 1, 8, 8), WeightTraversal::PartKernelFirst);
  // 3x3 on I = 64: depth_util = 1; pkf_util = 1 * 9/12 = 0.75 -> depth-first.
  EXPECT_EQ(choose_traversal(WeightBlockType::Conv, 3, 3, 64, 8), WeightTraversal::DepthFirst);
  // 16-bit, 1x1 on I = 24: depth_util = 24/32 = 0.75; pkf_util = (24/24) * (1/2) = 0.5 -> depth-first.
  EXPECT_EQ(choose_traversal(WeightBlockType::Conv, 1, 1, 24, 16), WeightTraversal::DepthFirst);
  // 16-bit, 2x1 on I = 24: pkf_util = 1 * 2/2 = 1 >= 0.75 -> PKF.
  EXPECT_EQ(choose_traversal(WeightBlockType::Conv, 2, 1, 24, 16), WeightTraversal::PartKernelFirst);
  // Equality goes to PKF: 2x2 on I = 16: depth_util 0.5, pkf_util 1 * 4/4 = 1.
  EXPECT_EQ(choose_traversal(WeightBlockType::TransposeConv, 2, 2, 16, 8), WeightTraversal::PartKernelFirst);
  EXPECT_EQ(choose_traversal(WeightBlockType::Depthwise, 3, 3, 1, 8), WeightTraversal::DepthWise);
  EXPECT_EQ(choose_traversal(WeightBlockType::FullyConnected, 1, 1, 3, 8), WeightTraversal::DepthFirst);
}

std::vector<std::int16_t> iota_weights(std::size_t n, int start = 1) {
  std::vector<std::int16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int16_t>(start + static_cast<int>(i));
  return v;
}

TEST(WeightReorder, LengthsFromTheShapesAlone) {
  const WeightAccelerator acc;
  // person_detect's first conv after the depth multiplier and first-layer rewrites, OHWI
  // [8, 3, 2, 2], PKF 8-bit: one OFM block (8), one IFM block (min(16, 2) = 2 -> one 8-deep
  // micro-block), one 3x2 sub-kernel of 6 elements padded to 8: 8 elements x 8 OFM x 8 IFM = 512 values.
  EXPECT_EQ(
      reorder_weight_stream(iota_weights(96), 8, 3, 2, 2, WeightTraversal::PartKernelFirst, 8, 8, acc, 1, 1).size(),
      512u);
  // 3x3 depthwise on 8 channels: 9 elements padded to 12, x 8 OFM x 1 = 96 values.
  EXPECT_EQ(reorder_weight_stream(iota_weights(72), 8, 3, 3, 1, WeightTraversal::DepthWise, 8, 8, acc, 1, 1).size(),
            96u);
  // 1x1 conv, 8 -> 4 (yolo's 32-value convs): PKF, 1 element padded to 4 x 8 OFM x 8 IFM = 256.
  EXPECT_EQ(
      reorder_weight_stream(iota_weights(32), 4, 1, 1, 8, WeightTraversal::PartKernelFirst, 8, 8, acc, 1, 1).size(),
      256u);
  // Depth-first 1x1, I = 40, O = 16, block depth 16: IFM blocks of 32 (2 of them, the second padded
  // to 32) x 2 OFM micro-blocks x 1 element x 4 IFM micro-blocks x 64 = 2 x 2 x 4 x 64 = 1024.
  EXPECT_EQ(reorder_weight_stream(std::vector<std::int16_t>(640, 1), 16, 1, 1, 40, WeightTraversal::DepthFirst, 8, 16,
                                  acc, 1, 1)
                .size(),
            1024u);
  // 16-bit depth-first uses IFM blocks of 16: ceil(40/16) = 3 blocks x 2 x 2 micro-blocks x 64 = 768.
  EXPECT_EQ(reorder_weight_stream(std::vector<std::int16_t>(640, 1), 16, 1, 1, 40, WeightTraversal::DepthFirst, 16, 16,
                                  acc, 1, 1)
                .size(),
            768u);
  // A 9x9 depthwise kernel splits into 8x8, 8x1, 1x8, 1x1 sub-kernels: 64 + 8 + 8 + 4 (1 padded) = 84
  // elements x 8 OFM = 672. With dilation 2 the sub-kernels are 4x4: 16,16,4(4x1),16,16,4,4(1x4),4,4 ...
  EXPECT_EQ(reorder_weight_stream(std::vector<std::int16_t>(81 * 8, 1), 8, 9, 9, 1, WeightTraversal::DepthWise, 8, 8,
                                  acc, 1, 1)
                .size(),
            672u);
  // ... dilation 2: rows split 4,4,1 and columns 4,4,1: elements 16,16,4, 16,16,4, 4,4,1->4 = 84 again.
  EXPECT_EQ(reorder_weight_stream(std::vector<std::int16_t>(81 * 8, 1), 8, 9, 9, 1, WeightTraversal::DepthWise, 8, 8,
                                  acc, 2, 2)
                .size(),
            672u);
  // U55-32 (OFM micro-block 4): 4 output channels of a DW 1x1 fill one micro-block: 4 elements x 4 = 16.
  WeightAccelerator u55_32;
  u55_32.ofm_ublock_depth = 4;
  EXPECT_EQ(
      reorder_weight_stream(std::vector<std::int16_t>(4, 1), 4, 1, 1, 1, WeightTraversal::DepthWise, 8, 4, u55_32, 1, 1)
          .size(),
      16u);
}

TEST(WeightReorder, OrderOfADepthwiseBrick) {
  // DW 2x1 kernel, 2 channels, values w[o][y] = 10*o + y + 1 (OHWI [2,2,1,1]).
  // Order: element (2 real + 2 padding) outermost, then 8 OFM channels (2 real):
  //   e0: 1, 11, 0 x6;  e1: 2, 12, 0 x6;  e2, e3: 16 zeros.
  const std::vector<std::int16_t> w = {1, 2, 11, 12};
  const auto s = reorder_weight_stream(w, 2, 2, 1, 1, WeightTraversal::DepthWise, 8, 8, WeightAccelerator{}, 1, 1);
  ASSERT_EQ(s.size(), 32u);
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[1], 11);
  EXPECT_EQ(s[8], 2);
  EXPECT_EQ(s[9], 12);
  EXPECT_EQ(std::count(s.begin(), s.end(), 0), 28);
}

TEST(WeightReorder, PartKernelFirstPutsIfmChannelsInnermost) {
  // 1x1 conv, O = 2, I = 2, w[o][i] = 10*o + i + 1: PKF emits, per element, 8 OFM x 8 IFM, IFM fastest.
  const std::vector<std::int16_t> w = {1, 2, 11, 12};
  const auto s =
      reorder_weight_stream(w, 2, 1, 1, 2, WeightTraversal::PartKernelFirst, 8, 8, WeightAccelerator{}, 1, 1);
  ASSERT_EQ(s.size(), 256u);  // 4 elements (1 padded to 4) x 64
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[1], 2);
  EXPECT_EQ(s[8], 11);
  EXPECT_EQ(s[9], 12);
  EXPECT_EQ(std::count(s.begin(), s.end(), 0), 252);
}

TEST(WeightCodec, AllZeroStreamIsOneBlock) {
  // 256 zeros. Zero runs are on (0 is the only value), so the palette is empty and, because only
  // zeros remain, the first run is skipped and one zero is coded as a direct index: code 1 ("-0")
  // is mapped last, so 0 -> index 1 + 0 - 0 = 1. Weight stream [1], zero runs [0, 255].
  //   weights: every GRC config costs 2 bits for 1 (div 0: q=1 -> 2; trunc: 2; div 1: 1+1; uncompressed
  //            width 2); the first, div 0, wins the tie: 2 bits.
  //   runs: div 0: 1 + 256; div 1: 2 + 129; div 2: 3 + 66; div 3: 4 + 35 = 39 bits (best).
  //   slice: 23 header + 13 palette header + 0 entries + 2 + 39 = 77 bits; + 3 end = 80 bits = 10 bytes
  //   -> padded to 16.
  EXPECT_EQ(mlw_encoded_stream_bytes(std::vector<std::int16_t>(256, 0)), 16);
  // 4096 zeros: runs [0, 4095]: div 3 costs 4 + (511 + 1 + 3) = 519; 23 + 13 + 2 + 519 + 3 = 560 bits
  // -> 70 bytes -> 80.
  EXPECT_EQ(mlw_encoded_stream_bytes(std::vector<std::int16_t>(4096, 0)), 80);
  EXPECT_EQ(mlw_encoded_stream_bytes({}), 0);
}

TEST(WeightCodec, ConstantNonZeroStream) {
  // 100 values of 5. No zero runs (0 never occurs). Palette: the one code 10 (5 << 1), padded with a
  // second entry 0: size 2, PALBITS = 4 (2^4 > 10). Every value maps to index 0.
  // The palette search never restarts (one distinct value). GRC: index 0 costs 1 bit with div 0
  // (plain or truncated) -> 100 bits; uncompressed (only-palette, 1 bit for 2 entries) also 100.
  // Bits: 23 + 13 + 2 x 4 + 100 = 144; + 3 = 147 -> 19 bytes -> 32.
  EXPECT_EQ(mlw_encoded_stream_bytes(std::vector<std::int16_t>(100, 5)), 32);
  // 1000 values: 23 + 13 + 8 + 1000 + 3 = 1047 bits -> 131 bytes -> 144.
  EXPECT_EQ(mlw_encoded_stream_bytes(std::vector<std::int16_t>(1000, 5)), 144);
}

TEST(WeightCodec, AlternatingSigns) {
  // 64 values alternating 1, -1. Codes: 1 -> 2, -1 -> 3, 32 each; zero runs off (0 absent).
  // Palette (ties go to the larger code): [3, 2], PALBITS 2; 1 -> index 1, -1 -> index 0.
  // GRC: index 0/1 with div 1 (plain) = 2 bits, truncated div 0 = 1 or 2 bits (mean 1.5),
  // uncompressed = 1 bit (only-palette, 2 entries): 64 bits.
  // Palette search: at i = 31 (32 non-zero values seen) a 2-entry palette is tried: savings =
  // 32 * (90 - 15) / 16 - 16 - 20 = 150 - 36 > 0, so a palette starts at position 0 (already a
  // section start): still one section.
  // Bits: 23 + 13 + 2 x 2 + 64 = 104; + 3 = 107 -> 14 bytes -> 16.
  std::vector<std::int16_t> s(64);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = (i % 2) ? -1 : 1;
  EXPECT_EQ(mlw_encoded_stream_bytes(s), 16);
}

TEST(WeightCodec, RejectsOutOfRange) {
  EXPECT_THROW(mlw_encoded_stream_bytes(std::vector<std::int16_t>{0, 256}), common::UserError);
  EXPECT_THROW(mlw_encoded_stream_bytes(std::vector<std::int16_t>{-256}), common::UserError);
}

TEST(WeightEncoding, BricksScalesAndAlignment) {
  // DW 1x1, 32 channels, all weights 0: depth step 16 -> two bricks; block depth 16. Each brick's
  // stream is 4 elements x 2 OFM micro-blocks x 8 = 64 zeros -> 16 bytes (see AllZeroStreamIsOneBlock,
  // with runs [0, 63]: div 3 -> 4 + 7 + 1 + 3 = ... < 128 bits). elements_in_brick = 1*1*1*16 = 16,
  // so each brick's scale is 16 / 16 = 1.
  WeightEncodingInput in;
  in.values.assign(32, 0);
  in.ofm_depth = 32;
  in.ifm_depth = 1;
  in.block_type = WeightBlockType::Depthwise;
  in.traversal = WeightTraversal::DepthWise;
  in.ofm_block_depth = 16;
  in.depth_step = 16;
  const WeightEncoding e = encode_weights(in);
  ASSERT_EQ(e.bricks.size(), 2u);
  EXPECT_EQ(e.elements_in_brick, 16);
  EXPECT_EQ(e.total_bytes, 32);
  EXPECT_EQ(e.reordered_values, 128);
  EXPECT_DOUBLE_EQ(e.mean_scale, 1.0);
  EXPECT_DOUBLE_EQ(e.worst_scale, 1.0);
  // Depth step 24: bricks of 24 and 8 channels, both 16 bytes; the denominator is the full brick
  // (24) even for the short one, so both scales are 16/24.
  in.depth_step = 24;
  const WeightEncoding f = encode_weights(in);
  ASSERT_EQ(f.bricks.size(), 2u);
  EXPECT_EQ(f.bricks[1].channels, 8);
  EXPECT_DOUBLE_EQ(f.worst_scale, 16.0 / 24.0);
  // Two cores, block depth 16: each core gets 8-deep blocks and its own 16-byte stream.
  in.depth_step = 16;
  in.accelerator.cores = 2;
  const WeightEncoding g = encode_weights(in);
  ASSERT_EQ(g.bricks[0].core_bytes.size(), 2u);
  EXPECT_EQ(g.bricks[0].core_bytes[0], 16);
  EXPECT_EQ(g.bricks[0].core_bytes[1], 16);
  EXPECT_EQ(g.total_bytes, 64);
  // Per-channel zero points are subtracted per output channel: raw value c with zero point c is 0.
  in.accelerator.cores = 1;
  for (int c = 0; c < 32; ++c) in.values[static_cast<std::size_t>(c)] = c;
  in.zero_points.resize(32);
  for (int c = 0; c < 32; ++c) in.zero_points[static_cast<std::size_t>(c)] = c;
  EXPECT_EQ(encode_weights(in).total_bytes, 32);
}

TEST(WeightEncoding, BadInputThrowsUserError) {
  WeightEncodingInput in;
  in.values.assign(8, 1);
  in.ofm_depth = 8;
  in.ifm_depth = 1;
  EXPECT_NO_THROW(encode_weights(in));
  auto bad = [](auto mutate) {
    WeightEncodingInput b;
    b.values.assign(8, 1);
    b.ofm_depth = 8;
    b.ifm_depth = 1;
    mutate(b);
    EXPECT_THROW(encode_weights(b), common::UserError);
  };
  bad([](WeightEncodingInput& b) { b.values.pop_back(); });
  bad([](WeightEncodingInput& b) { b.ofm_depth = 0; });
  bad([](WeightEncodingInput& b) { b.values[0] = 300; });
  bad([](WeightEncodingInput& b) { b.zero_points = {1, 2}; });
  bad([](WeightEncodingInput& b) { b.zero_points = {-300}; });  // 1 - (-300) = 301 > 255
  bad([](WeightEncodingInput& b) { b.ofm_block_depth = 0; });
  bad([](WeightEncodingInput& b) { b.depth_step = -1; });
  bad([](WeightEncodingInput& b) { b.ifm_bits = 4; });
  bad([](WeightEncodingInput& b) { b.dilation_h = 0; });
  bad([](WeightEncodingInput& b) { b.accelerator.cores = 0; });
  bad([](WeightEncodingInput& b) { b.traversal = WeightTraversal::DepthWise; });
  bad([](WeightEncodingInput& b) { b.block_type = WeightBlockType::Depthwise; });
  // A shape whose reordered stream would explode (O = I = 1, a 4096x4096 kernel: 16.7 M weights,
  // each padded to 8 OFM x 32 IFM channels = 4.3 G values) is refused, not allocated.
  bad([](WeightEncodingInput& b) {
    b.ofm_depth = 1;
    b.kernel_h = b.kernel_w = 4096;
    b.values.assign(std::size_t{4096} * 4096, 1);
  });
  EXPECT_THROW(weight_accelerator("ethos-u99"), common::UserError);
  EXPECT_THROW(packed_bias_scale_size(0, 1, 0), common::UserError);
}

TEST(WeightEncoding, AHugeWeightTensorThatFitsItsBufferIsRefusedBeforeAllocating) {
  // Issue 41: a weight tensor whose buffer holds all its 2048 x 32769 = 67,110,912 int8 weights (just
  // over kMaxWeightElements = 2^26 = 67,108,864) was copied to 32-bit values (256 MiB), transposed and
  // reordered, and a larger one ended in "out of memory" (exit 4). It is refused, naming the file,
  // the operator and the field, before anything the size of the weights is allocated.
  const std::int32_t o = 2048, i = 32769;
  const std::size_t n = static_cast<std::size_t>(o) * static_cast<std::size_t>(i);
  ASSERT_GT(static_cast<std::int64_t>(n), kMaxWeightElements);
  Model m;
  m.name = "huge.tflite";
  m.bytes = std::make_shared<const std::string>(n, '\1');
  m.operator_codes.push_back({BuiltinOperator::CONV_2D, "", 1});
  m.buffers.resize(2);
  m.buffers[1].data = std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(m.bytes->data()), n);
  m.buffers[1].size = n;
  Subgraph sg;
  Tensor ifm;
  ifm.name = "ifm";
  ifm.shape = {1, 1, 1, i};
  ifm.type = TensorType::INT8;
  Tensor w;
  w.name = "weights";
  w.shape = {o, 1, 1, i};
  w.type = TensorType::INT8;
  w.buffer = 1;
  sg.tensors = {ifm, w};
  Operator op;
  op.code = BuiltinOperator::CONV_2D;
  op.inputs = {0, 1};
  op.outputs = {0};
  op.options = Conv2DOptions{};
  sg.operators.push_back(op);
  m.subgraphs.push_back(sg);
  ASSERT_EQ(m.tensor_data(m.subgraphs[0].tensors[1]).size(), n);  // the buffer fits the shape
  try {
    operator_weight_input(m, 0, 0, OperatorWeightOptions{});
    FAIL() << "accepted";
  } catch (const common::UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("huge.tflite"), std::string::npos) << what;
    EXPECT_NE(what.find("subgraphs[0].operators[0].inputs[1]"), std::string::npos) << what;
    EXPECT_NE(what.find("67110912 elements, over the 67108864"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(WeightBiasScale, Packing) {
  // 16 channels, one brick, one core: 160 bytes, already a multiple of 16: 16 elements, 160 bytes.
  EXPECT_EQ(packed_bias_scale_size(16, 1, 0).elements, 16);
  EXPECT_EQ(packed_bias_scale_size(16, 1, 0).storage_bytes, 160);
  // 12 channels: 120 -> padded to 128, padding 8 -> 12 + ceil(8/10) = 13 elements, 130 -> 144 bytes.
  EXPECT_EQ(packed_bias_scale_size(12, 1, 0).elements, 13);
  EXPECT_EQ(packed_bias_scale_size(12, 1, 0).packed_bytes, 128);
  EXPECT_EQ(packed_bias_scale_size(12, 1, 0).storage_bytes, 144);
  // 2 channels: 20 -> 32, padding 12 -> 2 + 2 = 4 elements, 40 -> 48 bytes.
  EXPECT_EQ(packed_bias_scale_size(2, 1, 0).elements, 4);
  // 40 channels, step 16: 160 + 160 + 80 = 400 bytes, no padding -> 40 elements.
  EXPECT_EQ(packed_bias_scale_size(40, 1, 16).elements, 40);
  // 40 channels, step 16, 2 cores: per brick 2 x 80, last brick 2 x 40 -> 48 each: 416 bytes, padding
  // 16 -> 42 elements.
  EXPECT_EQ(packed_bias_scale_size(40, 2, 16).packed_bytes, 416);
  EXPECT_EQ(packed_bias_scale_size(40, 2, 16).elements, 42);
}

// ---------------------------------------------------------------------------------------------
// Reference records

struct RefPass {
  std::string model, config, name;
  std::string weight_tensor;  // the TFLite tensor name
  std::vector<int> shape;     // the record's weight shape (HWIO, or [I, O] for FC)
  std::string block_type, traversal;
  int block_depth = 0;
  int depth_step = 0;  // 0 = whole depth
  double worst = 0, mean = 0;
  std::int64_t bytes = 0;
  int bias_channels = 0;
  std::int64_t bias_elements = 0, bias_bytes = 0;
};

struct RefRecord {
  std::string model, config;
  std::int64_t encoded = 0, reordered = 0;
  std::vector<RefPass> passes;
};

std::vector<RefRecord> load_weight_records() {
  std::ifstream f(kReference);
  const json d = json::parse(f);
  std::vector<RefRecord> out;
  for (const json& r : d.at("records")) {
    if (r.at("status") != "ok") continue;
    RefRecord rec;
    rec.model = r.at("model");
    rec.config = r.at("config");
    rec.encoded = r.at("total_npu_encoded_weights_bytes");
    rec.reordered = r.at("total_npu_weights_bytes");
    for (const json& sg : r.at("subgraphs")) {
      for (const json& cp : sg.at("cascaded_passes")) {
        for (const json& pr : cp.at("pass_records")) {
          const json& w = pr.at("weights");
          if (w.is_null()) continue;
          RefPass p;
          p.model = rec.model;
          p.config = rec.config;
          p.name = pr.at("name");
          std::string n = w.at("name");
          p.weight_tensor = n.substr(0, n.rfind("_reshape"));
          p.shape = w.at("shape").get<std::vector<int>>();
          p.block_type = pr.at("npu_block_type");
          p.traversal = pr.at("block_traversal");
          p.block_depth = pr.at("block_config_HWIdOd").at(3);
          const bool dma = w.contains("dma_source");
          // After scheduling: streamed (WeightStream cascade, DMA'd weights) bricks are block-depth deep.
          p.depth_step = (cp.at("strategy") == "WeightStream" && dma) ? p.block_depth : 0;
          p.worst = pr.at("weight_compression_scale");
          p.mean = w.at("bandwidth_compression_scale");
          p.bytes = dma ? w.at("dma_source").at("storage_size_bytes").get<std::int64_t>()
                        : w.at("storage_size_bytes").get<std::int64_t>();
          const json& sb = pr.at("scale_bias");
          p.bias_channels = sb.at("shape").at(0);
          p.bias_elements = sb.at("storage_shape").at(0);
          p.bias_bytes = sb.contains("dma_source") ? sb.at("dma_source").at("storage_size_bytes").get<std::int64_t>()
                                                   : sb.at("storage_size_bytes").get<std::int64_t>();
          rec.passes.push_back(std::move(p));
        }
      }
    }
    out.push_back(std::move(rec));
  }
  return out;
}

// The operator (subgraph 0) whose weight input is `tensor`; with several, the first whose rewritten
// shape matches the record's.
struct Located {
  int op = -1;
  WeightEncodingInput input;
};

std::vector<int> record_shape_of(const WeightEncodingInput& in) {
  if (in.block_type == WeightBlockType::FullyConnected) return {in.ifm_depth, in.ofm_depth};
  return {in.kernel_h, in.kernel_w, in.ifm_depth, in.ofm_depth};
}

Located locate(const Model& m, const RefPass& p, const WeightAccelerator& acc) {
  Located best;
  const Subgraph& sg = m.subgraphs.at(0);
  for (std::size_t i = 0; i < sg.operators.size(); ++i) {
    const Operator& op = sg.operators[i];
    if (op.inputs.size() < 2 || op.inputs[1] < 0) continue;
    if (sg.tensors[static_cast<std::size_t>(op.inputs[1])].name != p.weight_tensor) continue;
    OperatorWeightOptions o;
    o.ofm_block_depth = p.block_depth;
    o.depth_step = p.depth_step;
    o.accelerator = acc;
    WeightEncodingInput in = operator_weight_input(m, 0, static_cast<int>(i), o);
    if (best.op < 0 || record_shape_of(in) == p.shape) {
      best.op = static_cast<int>(i);
      best.input = std::move(in);
      if (record_shape_of(best.input) == p.shape) break;
    }
  }
  return best;
}

std::string compact_shape(const std::vector<int>& s) {
  std::ostringstream r;
  r << '[';
  for (std::size_t i = 0; i < s.size(); ++i) r << (i ? "," : "") << s[i];
  r << ']';
  return r.str();
}

class WeightReference : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reference_present()) << kModels << " or " << kReference << " is missing";
  }
  const Model& model(const std::string& name) {
    auto it = models_.find(name);
    if (it == models_.end())
      it = models_.emplace(name, read_model(kModels + "/" + name + ".tflite")).first;
    return it->second;
  }
  std::map<std::string, Model> models_;
};

TEST_F(WeightReference, PerPassScalesBytesAndBias) {
  const std::vector<RefRecord> records = load_weight_records();
  int total = 0, scale_exact = 0, bytes_exact = 0, shape_ok = 0, traversal_ok = 0, bias_ok = 0;
  double worst_err = 0;
  for (const RefRecord& rec : records) {
    const Model& m = model(rec.model);
    const WeightAccelerator acc = weight_accelerator(rec.config);
    for (const RefPass& p : rec.passes) {
      ++total;
      const Located loc = locate(m, p, acc);
      if (loc.op < 0) {
        ADD_FAILURE() << p.model << " " << p.config << ": no operator with weight tensor " << p.weight_tensor;
        continue;
      }
      if (record_shape_of(loc.input) == p.shape) {
        ++shape_ok;
      } else {
        ADD_FAILURE() << p.model << " op " << loc.op << ": shape " << compact_shape(record_shape_of(loc.input))
                      << " vs record " << compact_shape(p.shape);
      }
      const std::string trav = p.block_type == "VectorProduct" ? "DepthFirst" : p.traversal;
      if (weight_traversal_name(loc.input.traversal) == trav) {
        ++traversal_ok;
      } else {
        ADD_FAILURE() << p.model << " op " << loc.op << ": traversal " << weight_traversal_name(loc.input.traversal)
                      << " vs record " << trav;
      }
      const WeightEncoding e = encode_weights(loc.input);
      const double err = std::max(std::abs(e.worst_scale - p.worst), std::abs(e.mean_scale - p.mean));
      worst_err = std::max(worst_err, err);
      if (err <= 1e-9) {
        ++scale_exact;
      } else if (std::getenv("NPUMAP_WEIGHT_MISMATCHES")) {
        std::cout << "  mismatch: " << p.model << " " << p.config << " op " << loc.op << " (" << p.name << "): worst "
                  << e.worst_scale << " vs " << p.worst << ", mean " << e.mean_scale << " vs " << p.mean << ", bytes "
                  << e.total_bytes << " vs " << p.bytes << "\n";
      }
      if (e.total_bytes == p.bytes) ++bytes_exact;
      const BiasScaleSize b = packed_bias_scale_size(p.bias_channels, acc.cores, p.depth_step);
      if (b.elements == p.bias_elements && b.storage_bytes == p.bias_bytes) {
        ++bias_ok;
      } else {
        ADD_FAILURE() << p.model << " op " << loc.op << ": bias elements " << b.elements << " bytes " << b.storage_bytes
                      << " vs record " << p.bias_elements << " / " << p.bias_bytes;
      }
    }
  }
  std::cout << "[ weights  ] passes " << total << ": scales exact " << scale_exact << ", bytes exact " << bytes_exact
            << ", shapes " << shape_ok << ", traversals " << traversal_ok << ", bias/scale " << bias_ok
            << "; worst scale error " << worst_err << "\n";
  EXPECT_EQ(total, 1077);
  // Every pass matches: the reorder, the brick split, the traversal, the bias/scale packing and
  // the codec's bit count (palette sections, palette, zero-run mode, GRC parameter search, slices,
  // chunk fields and padding) all follow Vela 2.1's rules. NPUMAP_WEIGHT_MISMATCHES=1 lists any
  // pass that stops matching.
  constexpr int kExactScales = 1077, kExactBytes = 1077;
  EXPECT_EQ(scale_exact, kExactScales) << "of " << total;
  EXPECT_EQ(bytes_exact, kExactBytes) << "of " << total;
  EXPECT_EQ(shape_ok, total);
  EXPECT_EQ(traversal_ok, total);
  EXPECT_EQ(bias_ok, total);
}

TEST_F(WeightReference, WholeModelTotals) {
  const std::vector<RefRecord> records = load_weight_records();
  int exact = 0, reordered_exact = 0;
  std::int64_t worst_diff = 0;
  for (const RefRecord& rec : records) {
    const Model& m = model(rec.model);
    const WeightAccelerator acc = weight_accelerator(rec.config);
    std::int64_t encoded = 0, reordered = 0;
    for (const RefPass& p : rec.passes) {
      const Located loc = locate(m, p, acc);
      if (loc.op < 0) continue;
      const WeightEncoding e = encode_weights(loc.input);
      encoded += e.total_bytes;
      reordered += e.reordered_values;
    }
    worst_diff = std::max(worst_diff, std::abs(encoded - rec.encoded));
    if (encoded == rec.encoded) {
      ++exact;
    } else {
      std::cout << "  record mismatch: " << rec.model << " " << rec.config << ": encoded " << encoded << " vs "
                << rec.encoded << "\n";
    }
    if (reordered == rec.reordered) {
      ++reordered_exact;
    } else {
      ADD_FAILURE() << rec.model << " " << rec.config << ": reordered " << reordered << " vs " << rec.reordered;
    }
  }
  std::cout << "[ weights  ] records " << records.size() << ": encoded totals exact " << exact
            << ", reordered totals exact " << reordered_exact << "; worst encoded difference " << worst_diff
            << " bytes\n";
  // The reordered (unencoded) and the encoded totals match every record.
  constexpr int kExactRecords = 36;
  EXPECT_EQ(exact, kExactRecords) << "of " << records.size();
  EXPECT_EQ(worst_diff, 0);
  EXPECT_EQ(reordered_exact, static_cast<int>(records.size()));
}

TEST_F(WeightReference, SpecTableOf72) {
  // weight-encoding.md's compression scale examples, single-brick encodings: person_detect's first conv (a DW with
  // multiplier 8 on one channel -> conv -> first-layer rewrite [3,2,2,8], 96 values) is 144 bytes (scale 1.5);
  // its 3x3 DW on 8 channels (72 values) 112 bytes (1.556); yolo's 1x1 convs of 32 values 80 bytes (2.5).
  const Model& pd = model("tflm__person_detect");
  OperatorWeightOptions o;
  o.ofm_block_depth = 8;
  const WeightEncoding first = encode_operator_weights(pd, 0, 0, o);
  EXPECT_EQ(first.elements_in_brick, 96);
  EXPECT_EQ(first.total_bytes, 144);
  EXPECT_DOUBLE_EQ(first.worst_scale, 1.5);
  const WeightEncoding dw = encode_operator_weights(pd, 0, 1, o);
  EXPECT_EQ(dw.elements_in_brick, 72);
  EXPECT_EQ(dw.total_bytes, 112);
  const Model& yolo = model("emza__yolo-fastest_192_face_v4");
  const WeightEncoding y = encode_operator_weights(yolo, 0, 4, o);
  EXPECT_EQ(y.elements_in_brick, 32);
  EXPECT_EQ(y.total_bytes, 80);
  EXPECT_DOUBLE_EQ(y.mean_scale, 2.5);
  // Asking for the weights of an operator without weights is a UserError.
  int non_weight = -1;
  for (std::size_t i = 0; i < pd.subgraphs[0].operators.size(); ++i) {
    if (pd.subgraphs[0].operators[i].code == BuiltinOperator::SOFTMAX) non_weight = static_cast<int>(i);
  }
  ASSERT_GE(non_weight, 0);
  EXPECT_THROW(encode_operator_weights(pd, 0, non_weight, o), common::UserError);
  EXPECT_THROW(encode_operator_weights(pd, 0, 100000, o), common::UserError);
  EXPECT_THROW(encode_operator_weights(pd, 3, 0, o), common::UserError);
}

TEST_F(WeightReference, CanonicalVariantsEncodeAlike) {
  // WeightEncoder::canonical() is an optimisation: every variant must encode to exactly the sizes of
  // its canonical form. Checked on every weight operator of three models (depthwise, 1x1 and 3x3
  // convolutions with one and several IFM blocks, fully connected), every block depth of the
  // block-config search (multiples of 8 up past O) and both weight placements, on one and two cores.
  int variants = 0, folded = 0;
  for (const char* name : {"tflm__person_detect", "mlperftiny__kws_ref_model", "mlzoo__kws_micronet_m"}) {
    const Model& m = model(name);
    for (std::size_t i = 0; i < m.subgraphs[0].operators.size(); ++i) {
      const BuiltinOperator c = m.subgraphs[0].operators[i].code;
      if (c != BuiltinOperator::CONV_2D && c != BuiltinOperator::DEPTHWISE_CONV_2D &&
          c != BuiltinOperator::FULLY_CONNECTED) {
        continue;
      }
      for (const char* accel : {"ethos-u55-128", "ethos-u65-512"}) {
        OperatorWeightOptions o;
        o.accelerator = weight_accelerator(accel);
        const WeightEncodingInput in = operator_weight_input(m, 0, static_cast<int>(i), o);
        const WeightEncoder enc(in);
        std::vector<WeightTraversal> travs{in.traversal};
        if (in.block_type == WeightBlockType::Conv)
          travs = {WeightTraversal::DepthFirst, WeightTraversal::PartKernelFirst};
        for (WeightTraversal t : travs) {
          for (int bd = 8; bd <= in.ofm_depth + 8; bd += 8) {
            for (bool streamed : {false, true}) {
              const WeightVariant v{t, bd, streamed};
              const WeightVariant cv = enc.canonical(v);
              ++variants;
              if (cv == v) continue;
              ++folded;
              const WeightEncoding a = enc.encode(v), b = enc.encode(cv);
              EXPECT_EQ(a.total_bytes, b.total_bytes) << name << " op " << i << " bd " << bd << " streamed " << streamed;
              EXPECT_EQ(a.mean_scale, b.mean_scale) << name << " op " << i << " bd " << bd;
              EXPECT_EQ(a.worst_scale, b.worst_scale) << name << " op " << i << " bd " << bd;
              EXPECT_EQ(a.bricks.size(), b.bricks.size()) << name << " op " << i << " bd " << bd;
            }
          }
        }
      }
    }
  }
  std::cout << "[ weights  ] " << variants << " variants, " << folded << " folded onto another\n";
  EXPECT_GT(folded, variants / 8);  // the folding does something (802 of 4,048 when written)
}

TEST_F(WeightReference, EveryWeightOperatorOfTheLargestModelEncodes) {
  // mobilenet_v2 (4 MB file, 3.4 M weights): every CONV/DW/FC, block depth 16, one brick each.
  // (Its speed is measured in bench/tflite_bench.cpp.)
  const Model& m = model("tflm__mobilenet_v2_quantized_1x3x224x224");
  std::int64_t bytes = 0, values = 0;
  int ops = 0;
  for (std::size_t i = 0; i < m.subgraphs[0].operators.size(); ++i) {
    const BuiltinOperator c = m.subgraphs[0].operators[i].code;
    if (c != BuiltinOperator::CONV_2D && c != BuiltinOperator::DEPTHWISE_CONV_2D &&
        c != BuiltinOperator::FULLY_CONNECTED) {
      continue;
    }
    OperatorWeightOptions o;
    o.ofm_block_depth = 16;
    const WeightEncoding e = encode_operator_weights(m, 0, static_cast<int>(i), o);
    bytes += e.total_bytes;
    values += e.elements_in_brick * static_cast<std::int64_t>(e.bricks.size());
    ++ops;
  }
  EXPECT_GT(ops, 50);
  EXPECT_GT(values, 3'000'000);
  EXPECT_GT(bytes, 0);
}

}  // namespace
}  // namespace npumap::tflite
