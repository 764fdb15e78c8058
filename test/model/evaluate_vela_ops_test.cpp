// The pass inputs added for Vela's compile of real models (docs/pass-format.md): a LUT activation's
// table (`lut`), an explicit op shape per feature map (`op_shape`), and Vela's softmax ops SHL, SHR,
// RescaleAdd and CLZ. Every expectation is worked out by hand below from npu-model.md §1.2, §5, §6.2
// and §6.5 with the internal-default memory system of the Ethos-U55-128: SRAM 8 bytes/cycle with
// bursts of 32, off-chip flash 1 byte/cycle with bursts of 128 (checked first). The LUT pass is the
// LSTM's sigmoid pass `model/lstm/lstm_cell/Sigmoid_2_lut_sigmoid` of the Vela reference, whose
// printed cycles (Npu 118, SRAM 91, off-chip flash 278.78) this reproduces.

#include <gtest/gtest.h>

#include <string>

#include "arch/arch.hpp"
#include "common/user_error.hpp"
#include "model/evaluate.hpp"
#include "model/pass_json.hpp"

namespace npumap::model {
namespace {

using arch::MemArea;

arch::Arch u55_128() { return arch::make_arch("ethos-u55-128", "internal-default", "internal-default"); }

TEST(VelaOps, MemorySystemAssumedBelow) {
  const arch::Arch a = u55_128();
  EXPECT_DOUBLE_EQ(a.mem(MemArea::Sram).bandwidth_per_cycle, 8.0);
  EXPECT_EQ(a.mem(MemArea::Sram).burst_length, 32);
  EXPECT_DOUBLE_EQ(a.mem(MemArea::OffChipFlash).bandwidth_per_cycle, 1.0);
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).burst_length, 128);
  EXPECT_EQ(a.permanent_storage, MemArea::OffChipFlash);
}

/// The LSTM sigmoid: Add of a 118-channel slice of a 472-channel NHWC tensor and a scalar 0 in flash,
/// LUT activation, OFM [1, 118] in NHCWB16, block config [1, 2, 120, 120].
Pass lut_pass() {
  Pass p;
  p.op.type = OpType::Add;
  p.op.activation = Activation::Lut;
  p.ifm = FeatureMap{Shape::of({1, 472}), DataType::Int8, MemArea::Sram, TensorFormat::NHWC, true, 0.5f,
                     std::array<int, 4>{1, 1, 1, 472}};
  p.ifm2 = FeatureMap{Shape{}, DataType::Int8, MemArea::OffChipFlash, TensorFormat::NHWC, true, 0.5f,
                      std::array<int, 4>{1, 1, 1, 1}};
  p.ofm = FeatureMap{Shape::of({1, 118}), DataType::Int8, MemArea::Sram, TensorFormat::NHCWB16, false, 0.5f,
                     std::array<int, 4>{1, 1, 1, 118}};
  p.lut = Lut{Shape::of({1, 1, 1, 256}), DataType::Int8, MemArea::OffChipFlash};
  p.block_config = {1, 2, 120, 120};
  p.has_npu_predecessor = true;
  return p;
}

TEST(VelaOps, LutActivationTableIsReadFromFlashAndDmaedToShram) {
  const PassMetrics m = evaluate(u55_128(), lut_pass());
  // OFM block (w 2, h 1, d 120) clamped to the OFM op shape [1,1,1,118]: (1, 1, 118). Equal scales give
  // the simple Add (index 4: 1.0 cycle/elem), the LUT activation index 0 (1.0): 118 elements x 1.0.
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 118.0);
  // SRAM: OFM [1,118] NHCWB16 = 128 bytes; write burst 16*1*w 1*1 core = 16 (brick stride 16 != 118),
  // so 128 * 32/16 = 256. IFM 472 bytes, NHWC, x stride 472 != depth 118: burst 118 capped at 32: 472.
  // (256 + 472) / 8 = 91.
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::SramAccess), 91.0);
  // Flash: the scalar (1 byte, burst 118) and the LUT (256 bytes, x stride 256 != 118, burst 118), both
  // scaled by 128/118: 257 * 128 / 118.
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::OffChipFlashAccess), 257.0 * 128.0 / 118.0);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Total), 257.0 * 128.0 / 118.0);
  const int lut = static_cast<int>(TensorPurpose::Lut);
  EXPECT_DOUBLE_EQ(m.bandwidth[static_cast<int>(MemArea::OffChipFlash)][lut][0], 256.0);
  EXPECT_DOUBLE_EQ(m.bandwidth[static_cast<int>(MemArea::Shram)][lut][0], 256.0);  // read by the op
  EXPECT_DOUBLE_EQ(m.bandwidth[static_cast<int>(MemArea::Shram)][lut][1], 256.0);  // written by the DMA
}

TEST(VelaOps, LutDmaAddsToNpuCyclesWithoutPredecessor) {
  Pass p = lut_pass();
  p.has_npu_predecessor = false;
  // The LUT's DMA: storage_size 256 bytes at 1 byte/cycle from flash.
  EXPECT_DOUBLE_EQ(evaluate(u55_128(), p).cycle(PassCycles::Npu), 118.0 + 256.0);
}

TEST(VelaOps, OpShapeGivesStridesAndBlocksButNotBytes) {
  // Dropping the OFM's op shape changes nothing: [1,118] pads to [1,1,1,118], the shape given.
  Pass p = lut_pass();
  p.ofm.op_shape.reset();
  EXPECT_DOUBLE_EQ(evaluate(u55_128(), p).cycle(PassCycles::SramAccess), 91.0);
  // An OFM op shape of [1,1,2,59] (the same 118 elements) changes the OFM block to (w 2, h 1, d 59):
  // the brick stride 16*1*2 = 32 != 59, write burst 16*1*2 = 32: 128 * 32/32 = 128. The IFM block is
  // (w 2 clamped to the IFM's 1, h 1, d 59); IFM x stride 472 != 59: burst 59 capped at 32: 472.
  // (128 + 472) / 8 = 75.
  p.ofm.op_shape = std::array<int, 4>{1, 1, 2, 59};
  const PassMetrics m = evaluate(u55_128(), p);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::SramAccess), 75.0);
  // Npu: still the 118 elements of the OFM tensor x 1.0.
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 118.0);
}

TEST(VelaOps, SoftmaxOpsAreInt32Elementwise) {
  // SHL of two int32 [1,1,1118,1] NHCWB16 tensors in SRAM (ssd_slim's softmax `_shl7`, block [1,64,8,8]):
  // binary int32 elementwise, index 1 = 1.25 cycles/elem on U55-128: 1118 x 1.25 = 1397.5.
  Pass p;
  p.op.type = OpType::Shl;
  const FeatureMap fm{Shape::of({1, 1, 1118, 1}), DataType::Int32, MemArea::Sram, TensorFormat::NHCWB16, false,
                      std::nullopt, std::nullopt};
  p.ifm = fm;
  p.ifm2 = fm;
  p.ofm = fm;
  p.block_config = {1, 64, 8, 8};
  EXPECT_DOUBLE_EQ(evaluate(u55_128(), p).cycle(PassCycles::Npu), 1397.5);
  EXPECT_EQ(npu_block_type(OpType::Shr), arch::NpuBlockType::ElementWise);
  EXPECT_TRUE(is_binary_elementwise(OpType::RescaleAdd));
  // CLZ: unary int32, index 0 = 0.75: 1118 x 0.75 = 838.5.
  p.op.type = OpType::Clz;
  p.ifm2.reset();
  EXPECT_DOUBLE_EQ(evaluate(u55_128(), p).cycle(PassCycles::Npu), 838.5);
  EXPECT_FALSE(is_binary_elementwise(OpType::Clz));
}

TEST(VelaOps, JsonRoundTripAndErrors) {
  const Pass p = lut_pass();
  const arch::Arch a = u55_128();
  const auto j = write_pass_input(p, a);
  const nlohmann::json plain = nlohmann::json::parse(j.dump());
  const PassInput back = read_pass_input(plain, "x.json", "records[0].input");
  EXPECT_EQ(back.pass, p);
  EXPECT_EQ(plain.at("lut").at("shape"), nlohmann::json({1, 1, 1, 256}));
  EXPECT_EQ(plain.at("ifm").at("op_shape"), nlohmann::json({1, 1, 1, 472}));
  EXPECT_EQ(plain.at("op").at("type"), "Add");

  nlohmann::json bad = plain;
  bad["lut"]["entries"] = 256;
  try {
    read_pass_input(bad, "x.json", "records[0].input");
    ADD_FAILURE() << "accepted an unknown lut key";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("records[0].input.lut.entries: unknown key"), std::string::npos) << e.what();
  }
  bad = plain;
  bad["ofm"]["op_shape"] = {1, 118};
  try {
    read_pass_input(bad, "x.json", "records[0].input");
    ADD_FAILURE() << "accepted a 2-D op shape";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("records[0].input.ofm.op_shape"), std::string::npos) << e.what();
  }
  bad = plain;
  bad["op"]["type"] = "SHL";
  bad.erase("ifm2");
  try {
    read_pass_input(bad, "x.json", "records[0].input");
    ADD_FAILURE() << "accepted SHL without ifm2";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ifm2"), std::string::npos) << e.what();
  }
}


/// Vela's 1x1 AvgPool created for a pass of post ops only (docs/pass-format.md "primary_ofm"), on an
/// ethos-u65-256 with the internal-default Dedicated_Sram memory mode: IFM and OFM [1, 8, 8, 16] int8
/// NHCWB16 in SRAM (the scheduler moved them to fast storage), the AvgPool's own output (a copy of its
/// input made at pass packing) in DRAM, the feature-map storage area. Block config [8, 8, 16, 16].
Pass post_ops_only_pass() {
  Pass p;
  p.op.type = OpType::AvgPool;
  p.op.padding = PaddingMode::Valid;
  p.ifm = FeatureMap{Shape::of({1, 8, 8, 16}), DataType::Int8, MemArea::Sram, TensorFormat::NHCWB16, false, 0.5f, {}};
  p.ofm = FeatureMap{Shape::of({1, 8, 8, 16}), DataType::Int8, MemArea::Sram, TensorFormat::NHCWB16, false, 0.25f, {}};
  p.block_config = {8, 8, 16, 16};
  p.has_npu_predecessor = true;
  return p;
}

TEST(VelaOps, APassOfPostOpsOnlyIsTimedByItsCreatedAvgPoolsOutputInDram) {
  const arch::Arch a = arch::make_arch("ethos-u65-256", "internal-default", "internal-default");
  // npu-model.md §2.3, U65 internal default: SRAM 16 bytes/cycle, latency 32/32; DRAM 12, 500/250.
  ASSERT_EQ(a.feature_map_storage, MemArea::Dram);
  ASSERT_DOUBLE_EQ(a.mem(MemArea::Sram).bandwidth_per_cycle, 16.0);
  ASSERT_DOUBLE_EQ(a.mem(MemArea::Dram).bandwidth_per_cycle, 12.0);
  ASSERT_EQ(a.mem(MemArea::Sram).latency_read, 32);
  ASSERT_EQ(a.mem(MemArea::Sram).latency_write, 32);
  ASSERT_EQ(a.mem(MemArea::Dram).latency_write, 250);
  // §6.3 on U65-256 (ofm_ublock 2x2x8): OFM block (8, 8, 16); pooling IFM block depth = 16, IFM block
  // 8x8 (1x1 kernel). nx = 8/2 = 4, ny = 4, nz = 16/8 = 2; one sub-kernel (e = 1), steps 1,
  // c = max(4, 1) * 16 * 2 = 128, no delay (nx, ny > 1): dpu = 128. One OFM block.
  // out = 8*8*16 elements * max(output[7] 0.25, activation[2] 0.0) = 256.
  // §6.1 with the OFM in SRAM: (32 + 1024/16 + 128 + 256 + 32 + 1024/16) / 4 = 576/4 = 144;
  // dpu = max(128, 144) = 144, out = max(256, 144) = 256; out >= dpu: 256 * 1 + 144 = 400.
  const Pass plain = post_ops_only_pass();
  EXPECT_DOUBLE_EQ(evaluate(a, plain).cycle(PassCycles::Npu), 400.0);
  // The created AvgPool's output: a copy of the IFM (int8) in DRAM. §6.1:
  // (32 + 64 + 128 + 256 + 250 + 1024/12) / 4 = (730 + 85.333..) / 4 = 203.8333..;
  // dpu = 203.8333.., out = 256: 256 + 203.8333.. = 459.8333.. (= 400 + (218 + 21.333..) / 4).
  Pass created = plain;
  created.primary_ofm = FeatureMap{Shape::of({1, 8, 8, 16}), DataType::Int8, MemArea::Dram, TensorFormat::NHWC, true,
                                   0.5f, {}};
  const PassMetrics m = evaluate(a, created);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 256.0 + (730.0 + 1024.0 / 12.0) / 4.0);
  EXPECT_NEAR(m.cycle(PassCycles::Npu), 459.8333, 1e-4);
  // The bytes are the pass's: read and written in SRAM as before, nothing in DRAM.
  const PassMetrics before = evaluate(a, plain);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::SramAccess), before.cycle(PassCycles::SramAccess));
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::DramAccess), 0.0);
  // With the timing output in SRAM the pass is the plain one.
  created.primary_ofm->mem_area = MemArea::Sram;
  EXPECT_DOUBLE_EQ(evaluate(a, created).cycle(PassCycles::Npu), 400.0);
}

TEST(VelaOps, PrimaryOfmRoundTripsThroughThePassJson) {
  const arch::Arch a = arch::make_arch("ethos-u65-256", "internal-default", "internal-default");
  Pass p = post_ops_only_pass();
  p.primary_ofm = FeatureMap{Shape::of({1, 8, 8, 16}), DataType::Int8, MemArea::Dram, TensorFormat::NHWC, true, 0.5f, {}};
  const PassInput back = read_pass_input(write_pass_input(p, a), "f", "input");
  EXPECT_EQ(back.pass.primary_ofm, p.primary_ofm);
  EXPECT_DOUBLE_EQ(evaluate(back.arch, back.pass).cycle(PassCycles::Npu), evaluate(a, p).cycle(PassCycles::Npu));
}

}  // namespace
}  // namespace npumap::model
