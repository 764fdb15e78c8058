// Hand-derived checks of evaluate(), one or more per branch of docs/design/npu-model.md §5, §6.2 and §6.3.
// Every expected number is worked out in the comment above it from the spec's formulas and the
// arch tables of §1-§2 (default system config: U55 SRAM 8 B/cycle, burst 32, latency 32/32;
// OffChipFlash 1 B/cycle, burst 128, latency 64/64; U65 SRAM 16 B/cycle, burst 32).

#include <gtest/gtest.h>

#include "model/evaluate.hpp"
#include "test_passes.hpp"

namespace npumap::model {
namespace {

using arch::MemArea;
using testing::conv;
using testing::depthwise;
using testing::elementwise;
using testing::fully_connected;
using testing::pool;

constexpr int kR = 0;
constexpr int kW = 1;
constexpr int kWeightsP = static_cast<int>(TensorPurpose::Weights);
constexpr int kFmP = static_cast<int>(TensorPurpose::FeatureMap);

double bw(const BandwidthArray& a, MemArea area, int purpose, int dir) {
  return a[static_cast<int>(area)][purpose][dir];
}

PassMetrics run(const char* accel, const Pass& p) { return evaluate(arch::make_arch(accel), p); }

// ---------------------------------------------------------------- §6.2 estimate_output_cycles

// Elementwise on U55-256, shape [1,8,8,16], block [8,8,16,16]: n = 1024 elements in one block.
// cmd/n = (32 + 1024*ei/8 + 1024*cpe + 32 + 1024*eo/8) / 4 / 1024 stays below cpe in all of these, so
// Npu = 1024 * cpe with cpe = output_cycles_per_elem[idx] (U55-256 row: .625 1.125 .5 .375 .5 .75 .125 .25).
constexpr std::array<int, 4> kEwBlock{8, 8, 16, 16};
const Shape kEwShape = Shape::of({1, 8, 8, 16});

TEST(OutputCycles, Index0Int32Unary) {
  // Abs, int32 in/out, no ifm2 -> idx 0 = 0.625; cmd = (32+512+640+32+512)/4 = 432, 432/1024 < .625.
  const auto m = run("ethos-u55-256", elementwise(OpType::Abs, kEwShape, kEwBlock, DataType::Int32, DataType::Int32));
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 640.0);
  EXPECT_DOUBLE_EQ(m.trace.output_cycles, 640.0);
  EXPECT_FALSE(m.trace.has_conv_pooling);
}

TEST(OutputCycles, Index1Int32Binary) {
  // Add with int32 IFM -> idx 1 = 1.125 whatever the scales: 1024 * 1.125 = 1152.
  Pass p = elementwise(OpType::Add, kEwShape, kEwBlock, DataType::Int32, DataType::Int32);
  p.ifm2->quant_scale = 0.5f;
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", p).cycle(PassCycles::Npu), 1152.0);
}

TEST(OutputCycles, Index2MulInt32Ofm) {
  // Mul, int8 IFM, int32 OFM -> idx 2 = 0.5; cmd = (32+128+512+32+512)/4 = 304 -> .297 < .5. 1024*.5 = 512.
  EXPECT_DOUBLE_EQ(
      run("ethos-u55-256", elementwise(OpType::Mul, kEwShape, kEwBlock, DataType::Int8, DataType::Int32))
          .cycle(PassCycles::Npu),
      512.0);
}

TEST(OutputCycles, Index3Mul) {
  // Mul int8 -> idx 3 = 0.375: 384.
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", elementwise(OpType::Mul, kEwShape, kEwBlock)).cycle(PassCycles::Npu), 384.0);
}

TEST(OutputCycles, Index3MacWithAcc40) {
  // U55-32 3x3 conv, int16, IFM [1,3,3,8] -> OFM [1,1,1,8], all FMs quantized -> acc40 -> idx 3 = 3.0.
  // The per-block call: elems_blk = 1*1*8 = 8 -> 8 * 3.0 = 24.
  const Pass p = conv(Shape::of({1, 3, 3, 8}), Shape::of({1, 1, 1, 8}), 3, 3, BlockTraversal::DepthFirst,
                      {1, 1, 8, 8}, DataType::Int16);
  EXPECT_DOUBLE_EQ(run("ethos-u55-32", p).trace.output_cycles, 24.0);
}

TEST(OutputCycles, Index4SimpleAddAndMissingScale) {
  // Add int8 with equal IFM scales -> idx 4 = 0.5: 512.
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", elementwise(OpType::Add, kEwShape, kEwBlock)).cycle(PassCycles::Npu), 512.0);
  // Different IFM scales but no OFM scale -> still idx 4 (a None scale means "simple").
  Pass p = elementwise(OpType::Sub, kEwShape, kEwBlock);
  p.ifm2->quant_scale = 0.5f;
  p.ofm.quant_scale.reset();
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", p).cycle(PassCycles::Npu), 512.0);
}

TEST(OutputCycles, Index5AdvancedAdd) {
  // IFM scale 1.0 vs IFM2 scale 0.5 -> idx 5 = 0.75: 768 (cmd/n = 272/1024 < .75).
  Pass p = elementwise(OpType::Add, kEwShape, kEwBlock);
  p.ifm2->quant_scale = 0.5f;
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", p).cycle(PassCycles::Npu), 768.0);
}

TEST(OutputCycles, Index6MaxPoolAnd7AvgPool) {
  // Pool 3x3 on [1,8,8,16], block [8,8,16,16]: elems_blk = 1024. MaxPool idx 6 = .125 -> 128;
  // AvgPool idx 7 = .25 -> 256.
  const Shape s = Shape::of({1, 8, 8, 16});
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", pool(OpType::MaxPool, s, s, 3, 3, {8, 8, 16, 16})).trace.output_cycles, 128.0);
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", pool(OpType::AvgPool, s, s, 3, 3, {8, 8, 16, 16})).trace.output_cycles, 256.0);
}

TEST(OutputCycles, Index7OtherAndActivations) {
  // Maximum int8 -> idx 7 = 0.25: 256. With Sigmoid: max(.25, act[0] = 1.0) = 1.0 -> 1024
  // (cmd = (32+128+1024+32+128)/4 = 336, 336/1024 < 1).
  Pass p = elementwise(OpType::Maximum, kEwShape, kEwBlock);
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", p).cycle(PassCycles::Npu), 256.0);
  p.op.activation = Activation::Sigmoid;
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", p).cycle(PassCycles::Npu), 1024.0);
  // U55-128 MaxPool with Relu: max(idx 6 = .25, act[1] = .5) = .5 -> 1024 * .5 = 512.
  Pass mp = pool(OpType::MaxPool, kEwShape, kEwShape, 3, 3, {8, 8, 16, 16});
  mp.op.activation = Activation::Relu;
  EXPECT_DOUBLE_EQ(run("ethos-u55-128", mp).trace.output_cycles, 512.0);
}

TEST(OutputCycles, ElementwiseCommandTermDominates) {
  // Maximum on [1,1,1,8], block [1,1,8,8]: n = 8, cpe = .25.
  // cmd = (32 + 8*1/8 + 8*.25 + 32 + 8*1/8) / 4 = 68/4 = 17; cmd/n = 2.125 > .25 -> Npu = 8 * 2.125 = 17.
  const auto m = run("ethos-u55-256", elementwise(OpType::Maximum, Shape::of({1, 1, 1, 8}), {1, 1, 8, 8}));
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 17.0);
}

// ---------------------------------------------------------------- §6.3 estimate_conv_pooling_cycles

TEST(ConvPooling, ConvDepthFirstOneBlock) {
  // U55-256 conv 3x3, IFM [1,8,8,32] -> OFM [1,8,8,16], block [8,8,32,16].
  // ofm_block (8,8,16); ifm depth min(32, 32) = 32; ifm h = w = 7 + 3 = 10 -> clamp 8: ifm_block (8,8,32).
  // ub (2,2,8): nx = 4, ny = 4, nxy = 16, nz = 2. One sub-kernel, e = 9, cycles_wb = 32.
  // c = max(32, 64) * 9 * 2 = 1152, no delay (nx > 1); x ceil(32/32) = 1 -> dpu 1152.
  // out = 1024 * .25 = 256. cmd = (32 + 8*8*32/8 + 256 + 1152 + 32 + 8*8*16/8)/4 = 1856/4 = 464.
  // dpu 1152 > out 464 -> 1152 * 1 + 464 = 1616.
  const auto m = run("ethos-u55-256", conv(Shape::of({1, 8, 8, 32}), Shape::of({1, 8, 8, 16}), 3, 3,
                                           BlockTraversal::DepthFirst, {8, 8, 32, 16}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 1616.0);
  EXPECT_EQ(m.trace.ifm_block, (arch::Block{8, 8, 32}));
  EXPECT_EQ(m.trace.ofm_block, (arch::Block{8, 8, 16}));
  EXPECT_DOUBLE_EQ(m.trace.output_cycles, 256.0);
  // macs = 1*8*8 * 3*3*32*16 = 294912; ifm_read_multiple = 1 sub-kernel * ceil(16/16) = 1.
  EXPECT_EQ(m.macs, 294912);
  EXPECT_EQ(m.ifm_read_multiple, 1);
  EXPECT_EQ(m.weight_read_multiple, 1);
}

TEST(ConvPooling, DpuGreaterThanOutputManyBlocks) {
  // Same conv, block [4,4,32,16]: ofm_block (4,4,16); ifm h = w = 3 + 3 = 6 -> ifm_block (6,6,32).
  // nx = ny = 2, nxy = 4, nz = 2: c = max(32, 16) * 9 * 2 = 576 = dpu. out = 256 * .25 = 64.
  // cmd = (32 + 6*6*32/8 + 64 + 576 + 32 + 256/8)/4 = 880/4 = 220 -> out 220.
  // blocks = 2*2*1 = 4; dpu > out -> 576*4 + 220 = 2524. weight_read_multiple = 2*2 = 4.
  const auto m = run("ethos-u55-256", conv(Shape::of({1, 8, 8, 32}), Shape::of({1, 8, 8, 16}), 3, 3,
                                           BlockTraversal::DepthFirst, {4, 4, 32, 16}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 2524.0);
  EXPECT_EQ(m.weight_read_multiple, 4);
}

TEST(ConvPooling, OutputGreaterThanDpu) {
  // U55-32 conv 1x1, IFM [1,8,8,8] -> OFM [1,8,8,8], block [4,4,8,8]: ofm_block (4,4,8), ifm_block (4,4,8).
  // ub (1,1,4): nx = ny = 4, nxy = 16, nz = 2, cycles_wb = 16: c = max(16, 64) * 1 * 2 = 128 = dpu.
  // out = 128 * 2.0 = 256. cmd = (32 + 16 + 256 + 128 + 32 + 16)/4 = 120.
  // out 256 >= dpu 128 -> out * blocks + dpu = 256 * 4 + 128 = 1152.
  const auto m = run("ethos-u55-32", conv(Shape::of({1, 8, 8, 8}), Shape::of({1, 8, 8, 8}), 1, 1,
                                          BlockTraversal::DepthFirst, {4, 4, 8, 8}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 1152.0);
}

TEST(ConvPooling, PartKernelFirst) {
  // The 1616 conv with PKF: ifm depth 16 -> ifm_block (8,8,16); steps = ceil(9/4) = 3;
  // c = 64 * (3 * ceil(16/8) * 2) = 768; x ceil(32/16) = 2 -> dpu 1536.
  // cmd = (32 + 128 + 256 + 1536 + 32 + 128)/4 = 528. 1536 + 528 = 2064.
  const auto m = run("ethos-u55-256", conv(Shape::of({1, 8, 8, 32}), Shape::of({1, 8, 8, 16}), 3, 3,
                                           BlockTraversal::PartKernelFirst, {8, 8, 32, 16}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 2064.0);
  EXPECT_EQ(m.trace.ifm_block.d, 16);
}

TEST(ConvPooling, PartKernelFirstDelayScalesWithIfmDepth) {
  // U55-256 PKF conv 3x3, IFM [1,4,4,16] -> OFM [1,2,2,8], block [2,2,16,8]: ofm_block (2,2,8),
  // ifm_block (4,4,16). nx = ny = nz = 1, steps = ceil(9/4) = 3, ceil(16/8) = 2.
  // c = max(32, 4) * (3*2*1) = 192; delay = 2*3 = 6, x2 (PKF) = 12 -> 204; x ceil(16/16) = 1.
  // out = 32 * .25 = 8; cmd = (32 + 4*4*16/8 + 8 + 204 + 32 + 32/8)/4 = 312/4 = 78. 204 + 78 = 282.
  const auto m = run("ethos-u55-256", conv(Shape::of({1, 4, 4, 16}), Shape::of({1, 2, 2, 8}), 3, 3,
                                           BlockTraversal::PartKernelFirst, {2, 2, 16, 8}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 282.0);
}

TEST(ConvPooling, Depthwise8And16Bit) {
  // U55-256 DW 3x3 on [1,8,8,16], block [8,8,16,16]: ifm_block (8,8,16); nxy = 16, nz = 2.
  // int8: c = 4*16 = 64, steps = ceil(9/4) = 3, c = max(32,64)*3*2 = 384 = dpu (no depth factor for DW).
  //       out = 256; cmd = (32 + 128 + 256 + 384 + 32 + 128)/4 = 240 -> 384 + 256 = 640. macs = 64*9*16 = 9216.
  const Shape s = Shape::of({1, 8, 8, 16});
  const auto m8 = run("ethos-u55-256", depthwise(s, s, 3, 3, {8, 8, 16, 16}));
  EXPECT_DOUBLE_EQ(m8.trace.conv_pooling_cycles, 640.0);
  EXPECT_EQ(m8.macs, 9216);
  EXPECT_EQ(m8.ifm_read_multiple, 1);
  // int16: c = 128, x3x2 = 768; acc40 -> idx 3: out = 1024*.375 = 384;
  //        cmd = (32 + 256 + 384 + 768 + 32 + 256)/4 = 432 -> 768 + 432 = 1200.
  const auto m16 = run("ethos-u55-256", depthwise(s, s, 3, 3, {8, 8, 16, 16}, DataType::Int16));
  EXPECT_DOUBLE_EQ(m16.trace.conv_pooling_cycles, 1200.0);
}

TEST(ConvPooling, Pooling8And16Bit) {
  // U55-256 MaxPool 3x3 on [1,8,8,16], block [8,8,16,16]: nxy = 16, nz = 2, e = 9.
  // int8: c = max(4,9)*16*2 = 288; out = 128; cmd = (32+128+128+288+32+128)/4 = 184 -> 288 + 184 = 472.
  const Shape s = Shape::of({1, 8, 8, 16});
  const auto m8 = run("ethos-u55-256", pool(OpType::MaxPool, s, s, 3, 3, {8, 8, 16, 16}));
  EXPECT_DOUBLE_EQ(m8.trace.conv_pooling_cycles, 472.0);
  EXPECT_EQ(m8.macs, 0);
  EXPECT_EQ(m8.weight_read_multiple, 1);  // set for pooling too (§11.12)
  // int16 (not U55-32): c x2 = 576; out = 128 (pooling never uses acc40);
  // cmd = (32 + 256 + 128 + 576 + 32 + 256)/4 = 320 -> 576 + 320 = 896.
  EXPECT_DOUBLE_EQ(
      run("ethos-u55-256", pool(OpType::MaxPool, s, s, 3, 3, {8, 8, 16, 16}, DataType::Int16)).trace.conv_pooling_cycles,
      896.0);
  // int16 on U55-32 (no doubling): ub (1,1,4): nx = ny = 8, nz = 4: c = 9*64*4 = 2304; out = 1024*1.0;
  // cmd = (32 + 256 + 1024 + 2304 + 32 + 256)/4 = 976 -> 2304 + 1024 = 3328.
  EXPECT_DOUBLE_EQ(
      run("ethos-u55-32", pool(OpType::MaxPool, s, s, 3, 3, {8, 8, 16, 16}, DataType::Int16)).trace.conv_pooling_cycles,
      3328.0);
}

TEST(ConvPooling, PoolingKernelDimsAreWidthHeight) {
  // A 2-high, 3-wide pool reports kernel_dims (kw, kh) = (3, 2) (§11.5).
  const Shape s = Shape::of({1, 8, 8, 16});
  EXPECT_EQ(run("ethos-u55-256", pool(OpType::AvgPool, s, s, 2, 3, {8, 8, 16, 16})).trace.kernel_dims,
            (std::array<int, 2>{3, 2}));
}

TEST(ConvPooling, VectorProductAndFloorNy) {
  // U55-256 FC 64 -> 32 int8, block [1,2,32,32]: ofm_block (1,1,32); ifm_block (1,1,32).
  // No 1-D tweak (OFM W = 1 is odd). nx = 1, ny = 1//2 = 0 (floor), nz = 4: c = max(32, 0)*1*4 = 128;
  // no delay (ny != 1); x ceil(64/32) = 2 -> 256. out = 32*.25 = 8; cmd = (32+4+8+256+32+4)/4 = 84.
  // 256 + 84 = 340. macs = 64*32 = 2048.
  const auto m = run("ethos-u55-256", fully_connected(1, 64, 32, {1, 2, 32, 32}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 340.0);
  EXPECT_EQ(m.macs, 2048);
  EXPECT_EQ(m.trace.kernel_dims, (std::array<int, 2>{1, 1}));
}

TEST(ConvPooling, OneDimensionalUblockTweak) {
  // U55-256 conv 1x3, IFM [1,1,64,32] -> OFM [1,1,64,16], block [1,64,32,16]: OFM H = 1, W = 64 even,
  // k0 = 1 -> ub = (4,1,8): nx = 16, ny = 1, nxy = 16, nz = 2. ifm_block (64,1,32).
  // e = 3: c = max(32, 64)*3*2 = 384. out = 1024*.25 = 256;
  // cmd = (32 + 64*32/8 + 256 + 384 + 32 + 64*16/8)/4 = 272 -> 384 + 272 = 656.
  // (Without the tweak ny = 0 and c would be 32*3*2 = 192.)
  const auto m = run("ethos-u55-256", conv(Shape::of({1, 1, 64, 32}), Shape::of({1, 1, 64, 16}), 1, 3,
                                           BlockTraversal::DepthFirst, {1, 64, 32, 16}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 656.0);
  EXPECT_EQ(m.trace.ofm_block, (arch::Block{64, 1, 16}));
}

TEST(ConvPooling, U55_32DelaySingleUblock) {
  // U55-32 conv 3x3, IFM [1,3,3,8] -> OFM [1,1,1,4], block [1,1,8,4]: nx = ny = nz = 1, steps = 9.
  // cycles_wb = 16: c = 16*9 = 144; delay = 3*9 = 27 -> 171. out = 4*2.0 = 8.
  // cmd = (32 + 3*3*8/8 + 8 + 171 + 32 + 4/8)/4 = 252.5/4 = 63.125 -> 171 + 63.125 = 234.125.
  const auto m = run("ethos-u55-32", conv(Shape::of({1, 3, 3, 8}), Shape::of({1, 1, 1, 4}), 3, 3,
                                          BlockTraversal::DepthFirst, {1, 1, 8, 4}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 234.125);
}

TEST(ConvPooling, U55_32DelayManyDepthUblocks) {
  // OFM depth 8, block [1,1,8,8]: nz = 2: c = 16*9*2 = 288; delay = 3*(9-1)*2 = 48 -> 336.
  // out = 16; cmd = (32 + 9 + 16 + 336 + 32 + 1)/4 = 106.5 -> 336 + 106.5 = 442.5.
  const auto m = run("ethos-u55-32", conv(Shape::of({1, 3, 3, 8}), Shape::of({1, 1, 1, 8}), 3, 3,
                                          BlockTraversal::DepthFirst, {1, 1, 8, 8}));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 442.5);
}

TEST(ConvPooling, U55_32DelayAcc40) {
  // int16 version: acc40 -> dly 7: 7*8*2 = 112, plus (nx==1, nz>1, acc40) 7*2 = 14 -> delay 126; dpu 414.
  // out = 8 * 3.0 = 24; cmd = (32 + 3*3*8*2/8 + 24 + 414 + 32 + 8*2/8)/4 = 522/4 = 130.5 -> 544.5.
  const auto m = run("ethos-u55-32", conv(Shape::of({1, 3, 3, 8}), Shape::of({1, 1, 1, 8}), 3, 3,
                                          BlockTraversal::DepthFirst, {1, 1, 8, 8}, DataType::Int16));
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 544.5);
}

TEST(ConvPooling, OtherAcceleratorDelays) {
  // U55-64 (ub (1,1,8)) int16 acc40 -> dly 3: IFM [1,3,3,8] -> OFM [1,1,1,8], block [1,1,8,8]: nz = 1,
  // cycles_wb = 32: c = 32*9 = 288, delay = 3*9 = 27 -> 315. out = 8*1.5 = 12;
  // cmd = (32 + 18 + 12 + 315 + 32 + 2)/4 = 102.75 -> 417.75.
  EXPECT_DOUBLE_EQ(run("ethos-u55-64", conv(Shape::of({1, 3, 3, 8}), Shape::of({1, 1, 1, 8}), 3, 3,
                                            BlockTraversal::DepthFirst, {1, 1, 8, 8}, DataType::Int16))
                       .trace.conv_pooling_cycles,
                   417.75);
  // U55-256 int8 -> dly 2: IFM [1,4,4,8] -> OFM [1,2,2,8], block [2,2,8,8]: nx = ny = nz = 1;
  // c = 288, delay = 18 -> 306; out = 8; cmd = (32 + 16 + 8 + 306 + 32 + 4)/4 = 99.5 -> 405.5.
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", conv(Shape::of({1, 4, 4, 8}), Shape::of({1, 2, 2, 8}), 3, 3,
                                             BlockTraversal::DepthFirst, {2, 2, 8, 8}))
                       .trace.conv_pooling_cycles,
                   405.5);
  // OFM depth 16, block [2,2,8,16]: nz = 2: c = 576, delay = 2*(9-1)*2 = 32 -> 608; out = 16;
  // cmd = (32 + 16 + 16 + 608 + 32 + 8)/4 = 178 -> 786.
  EXPECT_DOUBLE_EQ(run("ethos-u55-256", conv(Shape::of({1, 4, 4, 8}), Shape::of({1, 2, 2, 16}), 3, 3,
                                             BlockTraversal::DepthFirst, {2, 2, 8, 16}))
                       .trace.conv_pooling_cycles,
                   786.0);
}

TEST(ConvPooling, ScaleTensorLatency) {
  // The FC of VectorProductAndFloorNy with a bias in OffChipFlash (read latency 64):
  // out = max(8, 10 * min(32, 32) * 64 / 256 = 80) = 80; cmd = (32+4+80+256+32+4)/4 = 102 -> 256 + 102 = 358.
  Pass p = fully_connected(1, 64, 32, {1, 2, 32, 32});
  Bias b;
  b.shape = Shape::of({32});
  b.storage_shape = b.shape;
  b.mem_area = MemArea::OffChipFlash;
  p.bias = b;
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 358.0);
  EXPECT_DOUBLE_EQ(m.trace.output_cycles, 8.0);  // the raw estimate_output_cycles value
}

TEST(ConvPooling, ReduceSumQuirks) {
  // U55-256 ReduceSum [1,4,4,16] -> [1,4,4,1], block [4,4,16,4]: ofm_block (4,4,1); ifm depth min(16,32) = 16.
  // kernel_dims [1,1]; nz = 1//8 = 0 -> c = 0 -> dpu 0. out = 16*.25 = 4;
  // cmd = (32 + 4*4*16/8 + 4 + 0 + 32 + 16/8)/4 = 25.5 -> both 25.5 -> 25.5*1 + 25.5 = 51.
  // The weight bandwidth shape is all zeros: ifm_read_multiple = 1 * ceil(0/1) = 0, so the IFM read is 0.
  // macs = 16 * 16*1 = 256. OFM write: 16 B, burst 1*1*4 = 4 -> x8 -> 128 scaled; Sram 16 cycles < 51.
  Pass p = pool(OpType::ReduceSum, Shape::of({1, 4, 4, 16}), Shape::of({1, 4, 4, 1}), 1, 1, {4, 4, 16, 4});
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 51.0);
  EXPECT_EQ(m.trace.block_traversal, BlockTraversal::DepthFirst);
  EXPECT_EQ(m.ifm_read_multiple, 0);
  EXPECT_EQ(m.macs, 256);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kFmP, kR), 0.0);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::Sram, kFmP, kW), 128.0);
  EXPECT_DOUBLE_EQ(m.total_cycles(), 51.0);
}

TEST(ConvPooling, UpscaledIfmBlock) {
  // Transpose conv 3x3 (2x upscaled IFM) on U55-256, OFM block 8x8: h = ceil((7 + 3)/2) = 5 -> round_up 2 = 6.
  Pass p = conv(Shape::of({1, 16, 16, 8}), Shape::of({1, 32, 32, 8}), 3, 3, BlockTraversal::DepthFirst, {8, 8, 8, 8});
  p.op.type = OpType::TransposeConv2D;
  p.op.resampling = Resampling::Transpose;
  EXPECT_EQ(run("ethos-u55-256", p).trace.ifm_block, (arch::Block{6, 6, 8}));
}

// ---------------------------------------------------------------- §5 burst efficiency

TEST(Burst, NhwcReadFullVersusPartialDepth) {
  // MaxPool 1x1, IFM in OffChipFlash (burst 128), block [2,2,16,16] -> ifm_block (2,2,16).
  // IFM C = 16: strides[3] = 16 == depth -> burst 1*16*2 = 32 -> 1024 * 128/32 = 4096.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 8, 16}), Shape::of({1, 8, 8, 16}), 1, 1, {2, 2, 16, 16});
  p.ifm.mem_area = MemArea::OffChipFlash;
  auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::OffChipFlash, kFmP, kR), 1024.0);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::OffChipFlash, kFmP, kR), 4096.0);
  // IFM C = 32 with a 16-deep block: strides[3] = 32 != 16 -> burst 1*16 = 16 -> 2048 * 8 = 16384.
  p.ifm.shape = Shape::of({1, 8, 8, 32});
  p.ofm.shape = Shape::of({1, 8, 8, 32});
  m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::OffChipFlash, kFmP, kR), 16384.0);
  // Writes in SRAM (burst 32), ofm_block (2,2,16) of a 32-deep OFM: not full depth ->
  // min(64, 16*1*1, 16*1) = 16 -> 2048 * 32/16 = 4096.
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::Sram, kFmP, kW), 4096.0);
}

TEST(Burst, NhwcWriteDepthAtMost16AndCores) {
  // OFM [1,8,8,16], ofm_block (2,2,16): depth <= 16 and strides[3] == 16 -> burst 1*16*2 = 32 -> x1.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 8, 16}), Shape::of({1, 8, 8, 16}), 1, 1, {2, 2, 16, 16});
  EXPECT_DOUBLE_EQ(bw(run("ethos-u55-256", p).scaled_bandwidth, MemArea::Sram, kFmP, kW), 1024.0);
  // OFM [1,8,8,32], ofm_block (2,2,32): depth 32 > 16 -> min(64, 16*1*ncores, 32).
  // U65-256 (1 core): 16 -> 2048 * 32/16 = 4096. U65-512 (2 cores): 32 -> 2048.
  p = pool(OpType::MaxPool, Shape::of({1, 8, 8, 32}), Shape::of({1, 8, 8, 32}), 1, 1, {2, 2, 32, 32});
  EXPECT_DOUBLE_EQ(bw(run("ethos-u65-256", p).scaled_bandwidth, MemArea::Sram, kFmP, kW), 4096.0);
  EXPECT_DOUBLE_EQ(bw(run("ethos-u65-512", p).scaled_bandwidth, MemArea::Sram, kFmP, kW), 2048.0);
}

TEST(Burst, Nhcwb16StrideEqualsDepth) {
  // NHCWB16 OFM [1,8,1,16], ofm_block (w1,h8,d16): strides[1] = 16*1*W(1) = 16 == 16 ->
  // burst 1*16*1 = 16 -> 128 * 32/16 = 256.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 1, 16}), Shape::of({1, 8, 1, 16}), 1, 1, {8, 1, 16, 16});
  p.ofm.format = TensorFormat::NHCWB16;
  EXPECT_DOUBLE_EQ(bw(run("ethos-u55-256", p).scaled_bandwidth, MemArea::Sram, kFmP, kW), 256.0);
  // W = 2, ofm_block (2,8,16): strides[1] = 32 != 16 -> write burst 16*1*2*1 = 32 -> x1 -> 256.
  p = pool(OpType::MaxPool, Shape::of({1, 8, 2, 16}), Shape::of({1, 8, 2, 16}), 1, 1, {8, 2, 16, 16});
  p.ofm.format = TensorFormat::NHCWB16;
  p.ifm.format = TensorFormat::NHCWB16;
  p.ifm.mem_area = MemArea::OffChipFlash;
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::Sram, kFmP, kW), 256.0);
  // The IFM read (ifm_block (2,8,16)): burst 16*1*2 = 32 -> 256 * 128/32 = 1024.
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::OffChipFlash, kFmP, kR), 1024.0);
}

TEST(Burst, Nhcwb16WriteUsesCores) {
  // NHCWB16 OFM [1,8,2,16], block w = 1: strides[1] = 32 != 16 -> burst 16*1*1*ncores.
  // U65-256: 16 -> 256 * 32/16 = 512. U65-512: 32 -> 256.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 2, 16}), Shape::of({1, 8, 2, 16}), 1, 1, {8, 1, 16, 16});
  p.ofm.format = TensorFormat::NHCWB16;
  EXPECT_DOUBLE_EQ(bw(run("ethos-u65-256", p).scaled_bandwidth, MemArea::Sram, kFmP, kW), 512.0);
  EXPECT_DOUBLE_EQ(bw(run("ethos-u65-512", p).scaled_bandwidth, MemArea::Sram, kFmP, kW), 256.0);
  // Reads never use ncores: NHCWB16 IFM [1,8,2,16] in DRAM (U65 burst 128), ifm_block w = round_up(1, 2) = 2:
  // burst 16*1*2 = 32 -> 256 * 128/32 = 1024 on both U65-256 and U65-512.
  p.ifm.format = TensorFormat::NHCWB16;
  p.ifm.mem_area = MemArea::Dram;
  EXPECT_DOUBLE_EQ(bw(run("ethos-u65-256", p).scaled_bandwidth, MemArea::Dram, kFmP, kR), 1024.0);
  EXPECT_DOUBLE_EQ(bw(run("ethos-u65-512", p).scaled_bandwidth, MemArea::Dram, kFmP, kR), 1024.0);
}

TEST(Burst, NonLinearNhwcCostedAsBricks) {
  // OFM [1,8,8,8] NHWC with needs_linear_format false: unscaled 512 B, but the efficiency copy is
  // NHCWB16 with C -> 16: 1024 B; strides[1] = 16*8 = 128 != 8 -> burst 16*1*8 = 128 -> min 32 -> x1 -> 1024.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 8, 8}), Shape::of({1, 8, 8, 8}), 1, 1, {8, 8, 8, 8});
  p.ofm.needs_linear_format = false;
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kFmP, kW), 512.0);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::Sram, kFmP, kW), 1024.0);
}

TEST(Burst, PackedBiasUsesDtypeBytesForBurst) {
  // FC int16 64 -> 32: ifm_block (1,1,16). Bias [32] packed (10 B) in OffChipFlash: bandwidth 320 B;
  // strides[3] = 10*32 = 320 != 16 -> burst = 4 (dtype bytes) * 16 = 64 -> 320 * 128/64 = 640.
  Pass p = fully_connected(1, 64, 32, {1, 2, 32, 32}, DataType::Int16);
  Bias b;
  b.shape = Shape::of({32});
  b.storage_shape = b.shape;
  b.mem_area = MemArea::OffChipFlash;
  b.element_size_bytes = 10;
  p.bias = b;
  auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::OffChipFlash, kFmP, kR), 320.0);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::OffChipFlash, kFmP, kR), 640.0);
  // Unpacked (4 B): 128 B, same burst -> 256.
  p.bias->element_size_bytes = 0;
  m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.scaled_bandwidth, MemArea::OffChipFlash, kFmP, kR), 256.0);
}

// ---------------------------------------------------------------- §6.5 wiring, DMA, rewrite, energy

TEST(PassWiring, DmaCostOnlyWithoutNpuPredecessor) {
  // FC of VectorProductAndFloorNy; weights in OffChipFlash DMA'd to SRAM (storage [1,1,1,1000] -> 1008 B),
  // bias [32] packed in OffChipFlash DMA'd to SRAM (FSBias; 320 B storage).
  // Scale latency now from SRAM (32): 10*32*32/256 = 40 > 8 -> out 40; cmd = (32+4+40+256+32+4)/4 = 92
  // -> conv 256 + 92 = 348. Without an NPU predecessor: + 320/1.0 (bias DMA) + 1008/1.0 (weights DMA) = 1676.
  Pass p = fully_connected(1, 64, 32, {1, 2, 32, 32});
  p.weights->mem_area = MemArea::OffChipFlash;
  p.weights->dma_to = MemArea::Sram;
  p.weights->storage_shape = Shape::of({1, 1, 1, 1000});
  Bias b;
  b.shape = Shape::of({32});
  b.storage_shape = b.shape;
  b.mem_area = MemArea::OffChipFlash;
  b.element_size_bytes = 10;
  b.dma_to = MemArea::Sram;
  p.bias = b;
  auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(m.trace.conv_pooling_cycles, 348.0);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 348.0);
  p.has_npu_predecessor = false;
  m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::Npu), 1676.0);
  // Weights appear twice: the flash source read once (2048 B), the SRAM copy written once and read
  // weight_read_multiple (1) times. The FSBias copy is written and read once (320 B each).
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::OffChipFlash, kWeightsP, kR), 2048.0);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kWeightsP, kW), 2048.0);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kWeightsP, kR), 2048.0);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, static_cast<int>(TensorPurpose::FSBias), kR), 320.0);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, static_cast<int>(TensorPurpose::FSBias), kW), 320.0);
  // Off-chip traffic: 2048 (weights) + 320 (bias source) in OffChipFlash.
  EXPECT_DOUBLE_EQ(off_chip_bytes(m), 2368.0);
}

TEST(PassWiring, BatchMultipliesWeightReads) {
  // FC batch 4, 64 -> 32, weights in SRAM with compression 0.5: read = 4 * 2048 * 1 * 0.5 * 1 = 4096.
  // macs = 4*1*1 * 64*32 = 8192.
  Pass p = fully_connected(4, 64, 32, {1, 2, 32, 32});
  p.weights->compression_scale = 0.5;
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kWeightsP, kR), 4096.0);
  EXPECT_EQ(m.macs, 8192);
}

TEST(PassWiring, DoubleBufferRewriteKeepsWeightReadInFastStorage) {
  // Conv weights in SRAM, rewritten to a double buffer: the read is booked once, in fast storage (SRAM).
  // 3x3x32x16 = 4608 B x weight_read_multiple 4 (block [4,4,32,16] on 8x8) = 18432.
  Pass p = conv(Shape::of({1, 8, 8, 32}), Shape::of({1, 8, 8, 16}), 3, 3, BlockTraversal::DepthFirst, {4, 4, 32, 16});
  p.weights->mem_area = MemArea::OffChipFlash;
  p.weights->dma_to = MemArea::Sram;
  p.weights_double_buffer_depth = 16;
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kWeightsP, kR), 18432.0);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::OffChipFlash, kWeightsP, kR), 4608.0);
}

TEST(PassWiring, ForcedFastStorageOutputs) {
  // U65 default: FMs in DRAM. Forcing outputs to fast storage books the OFM write in SRAM.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 8, 16}), Shape::of({1, 8, 8, 16}), 1, 1, {8, 8, 16, 16});
  p.ifm.mem_area = MemArea::Dram;
  p.ofm.mem_area = MemArea::Dram;
  p.force_outputs_to_fast_storage = true;
  const auto m = run("ethos-u65-256", p);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Sram, kFmP, kW), 1024.0);
  EXPECT_DOUBLE_EQ(bw(m.bandwidth, MemArea::Dram, kFmP, kW), 0.0);
}

TEST(PassWiring, EnergyFromUnscaledBytes) {
  // The ReduceSum pass: 16 B written to SRAM, 0 read, 256 MACs. With SRAM write 3 pJ/B and 0.5 pJ/MAC:
  // 16*3 + 256*0.5 = 176 pJ (the scaled 128 B must not be used).
  arch::Arch a = arch::make_arch("ethos-u55-256");
  a.energy = arch::EnergyTable{};
  a.energy.read_pj_per_byte[static_cast<int>(MemArea::Sram)] = 2.0;
  a.energy.write_pj_per_byte[static_cast<int>(MemArea::Sram)] = 3.0;
  a.energy.pj_per_mac = 0.5;
  const Pass p = pool(OpType::ReduceSum, Shape::of({1, 4, 4, 16}), Shape::of({1, 4, 4, 1}), 1, 1, {4, 4, 16, 4});
  const auto m = evaluate(a, p);
  EXPECT_DOUBLE_EQ(m.energy_pj, 176.0);
  EXPECT_DOUBLE_EQ(total_energy_pj(m), 176.0);
}

TEST(PassWiring, AccessCyclesAndTotal) {
  // Burst test pass with the IFM in OffChipFlash: scaled flash bytes 4096 at 1 B/cycle = 4096 cycles,
  // far above the NPU estimate, so Total = OffChipFlashAccess = 4096.
  Pass p = pool(OpType::MaxPool, Shape::of({1, 8, 8, 16}), Shape::of({1, 8, 8, 16}), 1, 1, {2, 2, 16, 16});
  p.ifm.mem_area = MemArea::OffChipFlash;
  const auto m = run("ethos-u55-256", p);
  EXPECT_DOUBLE_EQ(m.cycle(PassCycles::OffChipFlashAccess), 4096.0);
  EXPECT_DOUBLE_EQ(m.total_cycles(), 4096.0);
}

}  // namespace
}  // namespace npumap::model
