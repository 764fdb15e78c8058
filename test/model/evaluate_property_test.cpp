// Seeded random passes (the seed is printed; set NPUMAP_TEST_SEED to replay one) checked against
// properties that follow from docs/design/npu-model.md §5-§6 whatever the numbers:
//   * Total is exactly the max of Npu and the four access-cycle entries (§6.6);
//   * halving one memory's bandwidth never decreases any cycle entry (every term is monotone in 1/bw);
//   * the weight bytes (reads and DMA-copy writes) scale linearly with the compression scale (§6.5),
//     while the MACs and the NPU estimate without DMA terms do not change;
//   * evaluate() is pure: the same input gives bit-identical output.

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>

#include "common/user_error.hpp"
#include "model/evaluate.hpp"
#include "test_passes.hpp"
#include "test/support/test_seed.hpp"

namespace npumap::model {
namespace {

using arch::MemArea;

std::uint64_t property_seed() {
  static const std::uint64_t seed = npumap::testing::test_seed("evaluate_property_test", 20240517ULL);
  return seed;
}

class RandomPasses {
 public:
  explicit RandomPasses(std::uint64_t seed) : rng_(seed) {}

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return uniform(0, 1) == 1; }
  template <typename T, std::size_t N>
  T pick(const std::array<T, N>& a) {
    return a[static_cast<std::size_t>(uniform(0, static_cast<int>(N) - 1))];
  }

  arch::Arch arch() {
    static const std::array<const char*, 6> accels = {"ethos-u55-32",  "ethos-u55-64",  "ethos-u55-128",
                                                      "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
    static const std::array<const char*, 4> systems = {"internal-default", "Ethos_U55_Deep_Embedded",
                                                       "Ethos_U65_High_End", "Ethos_U65_Mid_End"};
    static const std::array<const char*, 4> modes = {"internal-default", "Sram_Only", "Shared_Sram",
                                                     "Dedicated_Sram"};
    // Only combinations that can exist (an Ethos-U55 has no DRAM and no dedicated SRAM; the arena
    // must be in SRAM or DRAM): draw again until one does.
    for (;;) {
      const char* acc = pick(accels);
      const char* sys = pick(systems);
      const char* mode = pick(modes);
      try {
        return arch::make_arch(acc, sys, mode);
      } catch (const common::UserError&) {
      }
    }
  }

  FeatureMap feature_map(Shape s, DataType t) {
    FeatureMap f = testing::fm(s, t, pick(std::array{MemArea::Sram, MemArea::Dram, MemArea::OffChipFlash}));
    f.format = coin() ? TensorFormat::NHCWB16 : TensorFormat::NHWC;
    f.needs_linear_format = coin();
    if (uniform(0, 4) == 0) f.quant_scale.reset();
    return f;
  }

  Pass pass() {
    static const std::array<OpType, 11> ops = {OpType::Conv2DBias, OpType::Conv2DBias,  OpType::DepthwiseConv2DBias,
                                               OpType::MaxPool,    OpType::AvgPool,     OpType::FullyConnected,
                                               OpType::Add,        OpType::Mul,         OpType::Maximum,
                                               OpType::Abs,        OpType::ReduceSum};
    Pass p;
    p.op.type = pick(ops);
    const arch::NpuBlockType type = npu_block_type(p.op.type);
    const DataType dt = is_elementwise(p.op.type) ? pick(std::array{DataType::Int8, DataType::Int16, DataType::Int32})
                                                  : pick(std::array{DataType::Int8, DataType::Int16});
    const int kh = type == arch::NpuBlockType::Pooling ? uniform(1, 12) : uniform(1, 5);
    const int kw = type == arch::NpuBlockType::Pooling ? uniform(1, 12) : uniform(1, 5);
    const int stride = uniform(1, 2);
    int h = uniform(1, 40);
    int w = uniform(1, 40);
    const int c = uniform(1, 96);
    int oc = uniform(1, 96);
    Shape ifm;
    Shape ofm;
    if (p.op.type == OpType::FullyConnected) {
      ifm = Shape::of({uniform(1, 3), c});
      ofm = Shape::of({ifm.dims[0], oc});
    } else if (type == arch::NpuBlockType::ElementWise) {
      ifm = ofm = Shape::of({1, h, w, c});
    } else {
      const bool kernel_op = type != arch::NpuBlockType::ReduceSum;
      if (kernel_op) {
        p.op.kernel = Kernel{kw, kh, stride, stride, 1, 1};
        h = std::max(h, kh);
        w = std::max(w, kw);
      }
      if (type == arch::NpuBlockType::ConvolutionDepthWise || type == arch::NpuBlockType::Pooling) oc = c;
      if (type == arch::NpuBlockType::ReduceSum) oc = 1;
      ifm = Shape::of({1, h, w, c});
      ofm = kernel_op ? Shape::of({1, (h - kh) / stride + 1, (w - kw) / stride + 1, oc}) : Shape::of({1, h, w, oc});
    }
    p.ifm = feature_map(ifm, dt);
    p.ofm = feature_map(ofm, dt);
    if (is_binary_elementwise(p.op.type)) p.ifm2 = feature_map(ifm, dt);
    if (has_weights(p.op.type)) {
      Shape ws = p.op.type == OpType::FullyConnected ? Shape::of({c, oc})
                 : p.op.type == OpType::DepthwiseConv2DBias ? Shape::of({kh, kw, 1, oc})
                                                            : Shape::of({kh, kw, c, oc});
      const BlockTraversal trav = p.op.type == OpType::DepthwiseConv2DBias ? BlockTraversal::DepthWise
                                  : p.op.type == OpType::FullyConnected    ? BlockTraversal::Default
                                  : coin()                                 ? BlockTraversal::PartKernelFirst
                                                                           : BlockTraversal::DepthFirst;
      Weights wt = testing::weights(ws, trav, pick(std::array{MemArea::Sram, MemArea::Dram, MemArea::OffChipFlash,
                                                              MemArea::OnChipFlash}),
                                    uniform(20, 100) / 100.0);
      if (coin()) wt.dma_to = MemArea::Sram;
      p.weights = wt;
      if (wt.dma() && coin()) p.weights_double_buffer_depth = 16;
      if (coin()) {
        Bias b;
        b.shape = Shape::of({oc});
        b.storage_shape = b.shape;
        b.mem_area = pick(std::array{MemArea::Sram, MemArea::Dram, MemArea::OffChipFlash});
        b.element_size_bytes = coin() ? 10 : 0;
        if (coin()) b.dma_to = MemArea::Sram;
        p.bias = b;
      }
    }
    static const std::array<Activation, 4> acts = {Activation::None, Activation::Relu, Activation::Sigmoid,
                                                   Activation::Relu6};
    p.op.activation = pick(acts);
    p.block_config = {uniform(1, 32), uniform(1, 64), 8 * uniform(1, 16), 8 * uniform(1, 16)};
    p.has_npu_predecessor = coin();
    p.force_outputs_to_fast_storage = uniform(0, 3) == 0;
    return p;
  }

 private:
  std::mt19937_64 rng_;
};

constexpr int kPasses = 3000;

TEST(EvaluateProperties, TotalIsMaxOfParts) {
  RandomPasses gen(property_seed());
  for (int i = 0; i < kPasses; ++i) {
    const arch::Arch a = gen.arch();
    const Pass p = gen.pass();
    const PassMetrics m = evaluate(a, p);
    double mx = m.cycles[0];
    for (int c = 1; c < 5; ++c) mx = std::max(mx, m.cycles[c]);
    ASSERT_EQ(m.total_cycles(), mx) << "pass " << i;
    ASSERT_TRUE(std::isfinite(mx)) << "pass " << i;
    ASSERT_GE(m.cycle(PassCycles::Npu), 0.0) << "pass " << i;
    ASSERT_GE(off_chip_bytes(m), 0.0);
  }
}

TEST(EvaluateProperties, LowerBandwidthNeverDecreasesCycles) {
  RandomPasses gen(property_seed() + 1);
  constexpr std::array<MemArea, 4> areas = {MemArea::Sram, MemArea::Dram, MemArea::OnChipFlash, MemArea::OffChipFlash};
  for (int i = 0; i < kPasses; ++i) {
    const arch::Arch a = gen.arch();
    const Pass p = gen.pass();
    const PassMetrics base = evaluate(a, p);
    arch::Arch slower = a;
    const MemArea area = areas[static_cast<std::size_t>(gen.uniform(0, 3))];
    slower.memory[static_cast<int>(area)].bandwidth_per_cycle *= 0.5;
    const PassMetrics m = evaluate(slower, p);
    for (int c = 0; c < kNumPassCycles; ++c)
      ASSERT_GE(m.cycles[c], base.cycles[c]) << "pass " << i << " cycles[" << c << "] area " << static_cast<int>(area);
    // Bytes do not depend on bandwidth.
    ASSERT_EQ(m.bandwidth, base.bandwidth) << "pass " << i;
  }
}

TEST(EvaluateProperties, WeightBytesLinearInCompression) {
  RandomPasses gen(property_seed() + 2);
  constexpr int kWeights = static_cast<int>(TensorPurpose::Weights);
  int checked = 0;
  for (int i = 0; i < kPasses; ++i) {
    const arch::Arch a = gen.arch();
    Pass p = gen.pass();
    if (!p.weights) continue;
    p.weights->compression_scale = gen.uniform(10, 50) / 100.0;
    Pass q = p;
    q.weights->compression_scale = 2.0 * p.weights->compression_scale;
    const PassMetrics mp = evaluate(a, p);
    const PassMetrics mq = evaluate(a, q);
    for (int area = 0; area < arch::kNumMemAreas; ++area)
      for (int d = 0; d < 2; ++d) {
        const double x = mp.bandwidth[area][kWeights][d];
        const double y = mq.bandwidth[area][kWeights][d];
        ASSERT_NEAR(y, 2.0 * x, 1e-12 * std::max(1.0, y)) << "pass " << i << " area " << area << " dir " << d;
      }
    ASSERT_EQ(mp.macs, mq.macs);
    ASSERT_EQ(mp.trace.conv_pooling_cycles, mq.trace.conv_pooling_cycles);
    ++checked;
  }
  EXPECT_GT(checked, kPasses / 4);
}

TEST(EvaluateProperties, Pure) {
  RandomPasses gen(property_seed() + 3);
  for (int i = 0; i < 500; ++i) {
    const arch::Arch a = gen.arch();
    const Pass p = gen.pass();
    const PassMetrics m1 = evaluate(a, p);
    const PassMetrics m2 = evaluate(a, p);
    ASSERT_EQ(m1.cycles, m2.cycles);
    ASSERT_EQ(m1.bandwidth, m2.bandwidth);
    ASSERT_EQ(m1.scaled_bandwidth, m2.scaled_bandwidth);
    ASSERT_EQ(m1.energy_pj, m2.energy_pj);
  }
}

}  // namespace
}  // namespace npumap::model
