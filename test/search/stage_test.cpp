// Tests of the per-layer stage (mapper/search/stage.cpp): an exhaustive oracle, determinism across thread counts
// and chunk sizes, and keep-rate arithmetic on a layer small enough to count by hand.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "mapper/search/lowering.hpp"
#include "mapper/search/stage.hpp"
#include "model/evaluate.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;
using testing::tiny;

struct NaiveRow {
  double cycles, offchip, energy, sram;
  std::uint32_t job, candidate;
};

bool dominates_or_equals(const NaiveRow& a, const NaiveRow& b) {
  return a.cycles <= b.cycles && a.offchip <= b.offchip && a.energy <= b.energy && a.sram <= b.sram;
}
bool equal_objectives(const NaiveRow& a, const NaiveRow& b) {
  return a.cycles == b.cycles && a.offchip == b.offchip && a.energy == b.energy && a.sram == b.sram;
}

/// O(n^2) Pareto: keep a row unless another dominates it, or an earlier row equals it.
std::vector<NaiveRow> naive_front(const std::vector<NaiveRow>& rows) {
  std::vector<NaiveRow> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool keep = true;
    for (std::size_t j = 0; j < rows.size() && keep; ++j) {
      if (j == i) continue;
      if (equal_objectives(rows[j], rows[i])) keep = j > i;
      else if (dominates_or_equals(rows[j], rows[i])) keep = false;
    }
    if (keep) out.push_back(rows[i]);
  }
  return out;
}

/// SRAM of the whole feature maps a template keeps in SRAM, written out independently of stage.cpp;
/// a tensor that is a rolling buffer in this variant is left out.
std::int64_t naive_fm_sram(const arch::Arch& a, const workloads::Workload& w, int layer, const Template& t,
                           bool in_roll, bool out_roll) {
  const auto& l = w.layers[static_cast<std::size_t>(layer)];
  const bool arena_sram = a.feature_map_storage == a.fast_storage;
  std::int64_t total = 0;
  const auto add = [&](int tensor, const FmChoice& c) {
    if (!(arena_sram || c.residence == Residence::Sram)) return;
    const auto& s = w.tensors[static_cast<std::size_t>(tensor)].shape;
    const std::int64_t ch = c.layout == Layout::Nhcwb16 ? (s.c + 15) / 16 * 16 : s.c;
    total += (s.n * s.h * s.w * ch * workloads::data_type_bytes(w.tensors[static_cast<std::size_t>(tensor)].dtype) + 15) / 16 * 16;
  };
  if (!in_roll) add(l.inputs[0], t.inputs[0]);
  if (l.inputs.size() > 1 && l.inputs[1] != l.inputs[0]) add(l.inputs[1], t.inputs[1]);
  if (!out_roll && t.output_over_input < 0) add(l.output, t.output);  // in place: the input's storage
  return total;
}

/// Every candidate of every template evaluated, grouped by compatibility, filtered naively.
std::map<std::vector<TensorCompat>, std::vector<NaiveRow>> naive_layer(const arch::Arch& a, const workloads::Workload& w,
                                                                       int layer) {
  std::map<std::vector<TensorCompat>, std::vector<NaiveRow>> groups;
  const LayerSpace space = make_layer_space(a, w, layer, SpaceOptions{});
  for (std::size_t ti = 0; ti < space.templates.size(); ++ti) {
    const Template& t = space.templates[ti];
    for (std::size_t c = 0; c < space.block_configs.size(); ++c) {
      const model::Pass pass = make_pass(a, space, t, space.block_configs[c]);
      const std::int64_t transient = transient_sram_bytes(pass);
      const model::PassMetrics m = model::evaluate(a, pass);
      const NaiveRow row{m.total_cycles() * space.batch_repeat, model::off_chip_bytes(m) * space.batch_repeat,
                         m.energy_pj * space.batch_repeat, static_cast<double>(transient), static_cast<std::uint32_t>(ti),
                         static_cast<std::uint32_t>(c)};
      const int consumer_rows = rolling_consumer_rows(a, space, space.block_configs[c]);
      for (bool in_roll : {false, true}) {
        for (bool out_roll : {false, true}) {
          if ((in_roll && !t.input_may_roll[0]) || (out_roll && !t.output_may_roll)) continue;
          if (transient + naive_fm_sram(a, w, layer, t, in_roll, out_roll) > a.sram_capacity_bytes) continue;
          std::vector<TensorCompat> key;
          for (int i = 0; i < space.num_inputs; ++i) key.push_back({t.inputs[i].residence, t.inputs[i].layout, 0});
          key.push_back({t.output.residence, t.output.layout, 0, static_cast<std::int8_t>(t.output_over_input)});
          if (in_roll) key[0] = {Residence::Rolling, Layout::Nhcwb16, static_cast<std::uint16_t>(consumer_rows)};
          if (out_roll) {
            key.back() = {Residence::Rolling, Layout::Nhcwb16, static_cast<std::uint16_t>(space.block_configs[c].ofm_h)};
          }
          groups[key].push_back(row);
        }
      }
    }
  }
  // Rows in canonical order (template, candidate), as the stage orders them.
  for (auto& [key, rows] : groups) {
    std::stable_sort(rows.begin(), rows.end(), [](const NaiveRow& x, const NaiveRow& y) {
      return std::tie(x.job, x.candidate) < std::tie(y.job, y.candidate);
    });
    rows = naive_front(rows);
  }
  return groups;
}

class StageOracle : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

void check_against_oracle(const arch::Arch& a, const workloads::Workload& w) {
  StageOptions options;
  options.threads = 2;
  options.chunk_size = 7;  // small chunks: many merges into the running fronts
  const StageResult stage = run_per_layer(a, w, options);
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const LayerResult& lr = stage.layers[l];
    const auto naive = naive_layer(a, w, static_cast<int>(l));
    ASSERT_EQ(lr.groups.size(), naive.size()) << w.layers[l].name;
    std::size_t g = 0;
    for (const auto& [key, rows] : naive) {
      const PmappingGroup& got = lr.groups[g++];
      ASSERT_EQ(got.compat, key) << w.layers[l].name;
      ASSERT_EQ(got.rows.size(), rows.size()) << w.layers[l].name << " group " << g;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        EXPECT_EQ(got.rows[r].template_index, rows[r].job);
        EXPECT_EQ(got.rows[r].candidate, rows[r].candidate);
        EXPECT_EQ(got.rows[r].cycles, rows[r].cycles);
        EXPECT_EQ(got.rows[r].offchip_bytes, rows[r].offchip);
        EXPECT_EQ(got.rows[r].energy_pj, rows[r].energy);
        EXPECT_EQ(got.rows[r].sram_bytes, rows[r].sram);
      }
    }
  }
}

TEST_P(StageOracle, ExhaustiveNaiveSearchGivesTheSameGroups) {
  const auto [arch_name, workload_name] = GetParam();
  arch::Arch a = preset(arch_name);
  const workloads::Workload w = workload_name == "branch_rejoin" ? testing::branch_rejoin()
                                : workload_name == "chain5"      ? testing::chain5()
                                                                 : tiny(workload_name);
  check_against_oracle(a, w);
  // Tight SRAM: some templates fit only when a tensor becomes a rolling buffer.
  a.sram_capacity_bytes = 5120;
  check_against_oracle(a, w);
}

INSTANTIATE_TEST_SUITE_P(SmallLayers, StageOracle,
                         ::testing::Combine(::testing::Values("ethos-u55-256", "ethos-u65-256", "ethos-u55-32"),
                                            ::testing::Values("tiny_chain", "tiny_residual", "branch_rejoin", "chain5")));

void expect_same(const StageResult& x, const StageResult& y) {
  ASSERT_EQ(x.num_jobs, y.num_jobs);
  ASSERT_EQ(x.layers.size(), y.layers.size());
  for (std::size_t l = 0; l < x.layers.size(); ++l) {
    const LayerResult& lx = x.layers[l];
    const LayerResult& ly = y.layers[l];
    ASSERT_EQ(lx.space.templates.size(), ly.space.templates.size());
    for (std::size_t t = 0; t < lx.space.templates.size(); ++t) {
      EXPECT_EQ(x.counters_of(lx, t).total, y.counters_of(ly, t).total);
      EXPECT_EQ(x.counters_of(lx, t).valid, y.counters_of(ly, t).valid);
      EXPECT_EQ(x.counters_of(lx, t).evaluated, y.counters_of(ly, t).evaluated);
      EXPECT_EQ(x.counters_of(lx, t).pareto, y.counters_of(ly, t).pareto);
      EXPECT_EQ(x.counters_of(lx, t).removed, y.counters_of(ly, t).removed);
    }
  }
  for (std::size_t l = 0; l < x.layers.size(); ++l) {
    const auto& gx = x.layers[l].groups;
    const auto& gy = y.layers[l].groups;
    ASSERT_EQ(gx.size(), gy.size());
    for (std::size_t g = 0; g < gx.size(); ++g) {
      ASSERT_EQ(gx[g].compat, gy[g].compat);
      ASSERT_EQ(gx[g].rows.size(), gy[g].rows.size());
      for (std::size_t r = 0; r < gx[g].rows.size(); ++r) {
        EXPECT_EQ(gx[g].rows[r].template_index, gy[g].rows[r].template_index);
        EXPECT_EQ(gx[g].rows[r].candidate, gy[g].rows[r].candidate);
        EXPECT_EQ(gx[g].rows[r].cycles, gy[g].rows[r].cycles);
      }
    }
  }
}

TEST(StageDeterminism, ThreadsAndChunkSizesDoNotChangeTheResult) {
  const arch::Arch a = preset("ethos-u65-256");
  const workloads::Workload w = tiny("tiny_residual");
  StageOptions o1;
  o1.threads = 1;
  const StageResult r1 = run_per_layer(a, w, o1);
  for (int threads : {2, 8}) {
    for (std::uint32_t chunk : {1u, 5u, 128u, 100000u}) {
      StageOptions o;
      o.threads = threads;
      o.chunk_size = chunk;
      expect_same(r1, run_per_layer(a, w, o));
    }
  }
}

// A single 1x1 convolution, 4x4x8 -> 4x4x8, on ethos-u55-256, counted by hand.
//  Block-config grid (docs/design/npu-model.md §8.4, ofm_ublock (2,2,8)): w in {2,4}, h in {2,4}, c in {8}
//  (max_d = min(128, 8) = 8 and c >= max_d) -> 4 configs.
//  Templates: traversal {DF, PKF} x weights {in place, copy, double buffer} (flash != SRAM) x bias
//  {in place, copy}; the input is a network input and the output a network output, so both are
//  arena/linear only -> 12 templates, 48 candidates.
//  SHRAM (§8.3): ifm block depth min(32, round_up(8, 8)) = 8; an ifm block of at most 4x4x8 bytes
//  takes round_up(2*1, 8) = 8 banks, the Acc32 block 4x4x(8*4) = 512 B takes round_up(2*1, 16) = 16;
//  2 + 8 <= (48 - 2) - 16 = 30, so all 4 configs are valid.
//  SRAM with a 300-byte capacity: the arena is SRAM, so IFM and OFM take 128 + 128 = 256 B.
//  Weights 1*1*8*8 = 64 B at ratio 0.625 = 40 -> 48 B when copied (the double buffer holds
//  min(8, 2*8) = 8 output channels: also 48 B); the bias copy is 8 x 10 = 80 B. Only templates with
//  weights and bias in place fit (256 <= 300; 256 + 48 = 304 and 256 + 80 = 336 do not):
//  2 templates x 4 configs = 8 valid of 48.
TEST(StageKeepRates, HandCountedLayer) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: one_conv
inputs:
  - {name: x, shape: [1, 4, 4, 8], dtype: int8}
layers:
  - {name: conv, op: conv2d, inputs: [x], output: y, output_shape: [1, 4, 4, 8], kernel: 1, padding: VALID, weight_compression: 0.625}
)",
                                                                     "one_conv.yaml");
  arch::Arch a = preset("ethos-u55-256");
  {
    const StageResult r = run_per_layer(a, w, StageOptions{});
    const LayerResult& lr = r.layers[0];
    EXPECT_EQ(lr.space.templates.size(), 12u);
    EXPECT_EQ(lr.space.block_configs.size(), 4u);
    EXPECT_EQ(lr.rates.total, 48u);
    EXPECT_DOUBLE_EQ(lr.rates.valid, 48.0);
    EXPECT_DOUBLE_EQ(lr.rates.evaluated, 48.0);
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::ShramCapacity)], 1.0);
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::SramCapacity)], 1.0);
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::Unsupported)], 1.0);
    // Pareto-optimal: each surviving (job, candidate) once, however many groups hold it.
    std::set<std::pair<std::uint32_t, std::uint32_t>> kept;
    for (const auto& g : lr.groups)
      for (const auto& row : g.rows) kept.insert({row.template_index, row.candidate});
    EXPECT_DOUBLE_EQ(lr.rates.pareto, static_cast<double>(kept.size()));
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::Dominated)], static_cast<double>(kept.size()) / 48.0);
  }
  a.sram_capacity_bytes = 300;
  {
    const StageResult r = run_per_layer(a, w, StageOptions{});
    const LayerResult& lr = r.layers[0];
    EXPECT_EQ(lr.rates.total, 48u);
    EXPECT_DOUBLE_EQ(lr.rates.valid, 8.0);
    EXPECT_DOUBLE_EQ(lr.rates.evaluated, 8.0);
    // Weighted by each job's total (4): 2 jobs keep 4/4, 10 jobs keep 0/4 -> 8/48.
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::SramCapacity)], 8.0 / 48.0);
    EXPECT_EQ(summary_line(lr.rates).rfind("48 total, 8 (1/6) valid, 8 (1/6) evaluated", 0), 0u) << summary_line(lr.rates);
  }
  a.sram_capacity_bytes = 200;  // not even the feature maps fit: no valid pmapping, explained by the rates
  {
    const StageResult r = run_per_layer(a, w, StageOptions{});
    const LayerResult& lr = r.layers[0];
    EXPECT_TRUE(lr.groups.empty());
    EXPECT_DOUBLE_EQ(lr.rates.valid, 0.0);
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::SramCapacity)], 0.0);
    EXPECT_DOUBLE_EQ(lr.rates.rate[static_cast<int>(Cause::Dominated)], 1.0);  // never applied
  }
}

TEST(StageStop, AnExpiredDeadlineStopsAtTheFirstChunkAndMarksThePartialResult) {
  const arch::Arch a = preset("ethos-u55-256");
  const workloads::Workload w = tiny("tiny_chain");
  StageOptions o;
  o.stop = common::StopToken(nullptr, std::chrono::steady_clock::now());
  const StageResult r = run_per_layer(a, w, o);
  EXPECT_TRUE(r.partial);
  for (const LayerResult& lr : r.layers) {
    for (std::size_t t = 0; t < lr.space.templates.size(); ++t) EXPECT_EQ(r.counters_of(lr, t).evaluated, 0u);
  }
  EXPECT_LT(r.overall.rate[static_cast<int>(Cause::Interrupted)], 1.0);
}

TEST(StagePasses, EveryGroupRowRebuildsToAPassWithTheSameMetrics) {
  for (const char* name : {"ethos-u55-128", "ethos-u65-512"}) {
    const arch::Arch a = preset(name);
    const workloads::Workload w = tiny("tiny_residual");
    const StageResult r = run_per_layer(a, w, StageOptions{});
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
      for (const auto& g : r.layers[l].groups) {
        for (const auto& row : g.rows) {
          const model::PassMetrics m = model::evaluate(a, pass_of(a, r, static_cast<int>(l), row));
          EXPECT_EQ(m.total_cycles(), row.cycles);
          EXPECT_EQ(model::off_chip_bytes(m), row.offchip_bytes);
          EXPECT_EQ(m.energy_pj, row.energy_pj);
        }
      }
    }
  }
}

}  // namespace
}  // namespace npumap::search

namespace npumap::search {
namespace {

// Vela 2.1 keeps a pooled [1,1,1,C] feature map feeding a fully-connected layer in NHCWB16 (its layout
// rule 6: the FC's IFM op shape is the tensor's whole 4-D shape; e.g. mcunet-10fps's classifier in
// the reference compile reads "AvgPool2D/AvgPool" [1,1,1,160] as NHCWB16). An FC that flattens an
// [1,H,W,C] map reads it with another shape and keeps it linear.
// A fully-connected layer that reads one row of a larger tensor (an unrolled LSTM's step reading its
// input through an absorbed SplitSliceRead): Vela's op sees the whole tensor as its IFM, its shape and
// its bytes (docs/design/npu-model.md §7.3; basic_lstm's MatMul_10 in the reference compile reads
// "model/lstm/transpose_npu" [49, 1, 10] as IFM shape [1, 49, 1, 10] and 490 bytes per depth stage).
// By hand, for x = [1, 4, 1, 8] read as [1, 8] by an FC with 32 outputs and OFM block depth 16: the
// IFM is read once per OFM depth stage, ceil(32 / 16) = 2 times, each time whole: 2 x (4 x 8) = 64
// bytes, where the FC `whole` reading its own [1, 8] tensor reads 2 x 8 = 16; both do 8 x 32 = 256 MACs.
TEST(Mapspace, AFullyConnectedReadingASliceReadsTheWholeTensorAsVelaDoes) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: slice_fc
inputs:
  - {name: x, shape: [1, 4, 1, 8], dtype: int8}
  - {name: r, shape: [1, 8], dtype: int8}
layers:
  - {name: step, op: fully_connected, inputs: [x], input_shapes: [[1, 8]], output: y, output_shape: [1, 32], bias: false}
  - {name: whole, op: fully_connected, inputs: [r], output: z, output_shape: [1, 32], bias: false}
)",
                                                                     "slice_fc.yaml");
  const arch::Arch a = arch::load_arch("ethos-u55-256");
  const auto ifm_read = [&](int layer) {
    const LoweredLayer low = lower_layer(a, w, layer);
    model::Pass pass = low.base;
    pass.block_config = {1, 1, 8, 16};
    const model::PassMetrics m = model::evaluate(a, pass);
    EXPECT_EQ(m.macs, 256);
    double bytes = 0.0;
    for (const auto& area : m.bandwidth)
      bytes += area[static_cast<int>(model::TensorPurpose::FeatureMap)][static_cast<int>(model::Direction::Read)];
    return std::make_pair(pass, bytes);
  };
  const auto [step, step_bytes] = ifm_read(0);
  EXPECT_EQ(step.ifm.shape, model::Shape::of({1, 4, 1, 8}));
  EXPECT_EQ(step.ifm_op_shape(), (std::array<int, 4>{1, 4, 1, 8}));
  EXPECT_DOUBLE_EQ(step_bytes, 64.0);
  const auto [whole, whole_bytes] = ifm_read(1);
  EXPECT_EQ(whole.ifm.shape, model::Shape::of({1, 8}));
  EXPECT_DOUBLE_EQ(whole_bytes, 16.0);
}

// A concatenation along C may be NHCWB16 when every part starts at a multiple of 16 channels (Vela's
// avoid_nhcwb16_for_concat tests each write offset's depth), whatever the parts' sizes: parts of 96
// then 24 channels start at 0 and 96, so the 120-channel tensor may be NHCWB16 (yolo-fastest's
// concatenate_1, which Vela stores so); parts of 24 then 96 start at 0 and 24, so it may not.
TEST(Mapspace, AConcatenationMayBeNhcwb16WhereEveryPartStartsAtAMultipleOf16) {
  const auto cat = [](int first, int second) {
    return workloads::load_workload_from_string(fmt::format(R"(
name: cat
inputs:
  - {{name: x0, shape: [1, 4, 4, {0}], dtype: int8}}
  - {{name: x1, shape: [1, 4, 4, {1}], dtype: int8}}
tensors:
  - {{name: c, shape: [1, 4, 4, 120], dtype: int8}}
layers:
  - {{name: p0, op: avg_pool, inputs: [x0], output: c, output_shape: [1, 4, 4, {0}], kernel: 1, padding: VALID}}
  - {{name: p1, op: avg_pool, inputs: [x1], output: c, output_shape: [1, 4, 4, {1}], kernel: 1, padding: VALID}}
  - {{name: conv, op: conv2d, inputs: [c], output: y, output_shape: [1, 4, 4, 16], kernel: 1, padding: SAME}}
)",
                                                            first, second),
                                                "cat.yaml");
  };
  const arch::Arch a = arch::load_arch("ethos-u55-256");
  const workloads::Workload at_96 = cat(96, 24);
  EXPECT_TRUE(lower_layer(a, at_96, 0).output_nhcwb16);
  EXPECT_TRUE(lower_layer(a, at_96, 1).output_nhcwb16);
  EXPECT_TRUE(lower_layer(a, at_96, 2).input_nhcwb16[0]);
  const workloads::Workload at_24 = cat(24, 96);
  EXPECT_FALSE(lower_layer(a, at_24, 0).output_nhcwb16);
  EXPECT_FALSE(lower_layer(a, at_24, 2).input_nhcwb16[0]);
}

TEST(Mapspace, APooledFeatureMapFeedingAClassifierMayBeNhcwb16) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: pool_fc
inputs:
  - {name: x, shape: [1, 8, 8, 16], dtype: int8}
layers:
  - {name: conv, op: conv2d, inputs: [x], output: c, output_shape: [1, 8, 8, 32], kernel: 1, padding: VALID}
  - {name: pool, op: avg_pool, inputs: [c], output: p, output_shape: [1, 1, 1, 32], kernel: [8, 8], padding: VALID}
  - {name: fc, op: fully_connected, inputs: [p], output: y, output_shape: [1, 10]}
  - {name: flat, op: fully_connected, inputs: [c], output: z, output_shape: [1, 4]}
)",
                                                                     "pool_fc.yaml");
  const arch::Arch a = arch::load_arch("ethos-u55-256");
  const auto layouts = [](const LayerSpace& s, bool input) {
    std::set<Layout> out;
    for (const Template& t : s.templates) out.insert(input ? t.inputs[0].layout : t.output.layout);
    return out;
  };
  const LayerSpace pool = make_layer_space(a, w, 1, SpaceOptions{});
  EXPECT_EQ(layouts(pool, false), (std::set<Layout>{Layout::Linear, Layout::Nhcwb16}));
  const LayerSpace fc = make_layer_space(a, w, 2, SpaceOptions{});
  EXPECT_EQ(layouts(fc, true), (std::set<Layout>{Layout::Linear, Layout::Nhcwb16}));
  bool checked = false;
  for (const Template& t : fc.templates) {
    if (t.inputs[0].layout != Layout::Nhcwb16 || fc.block_configs.empty()) continue;
    const model::Pass pass = make_pass(a, fc, t, fc.block_configs.front());
    EXPECT_EQ(pass.ifm.format, model::TensorFormat::NHCWB16);
    EXPECT_FALSE(pass.ifm.needs_linear_format);
    EXPECT_EQ(pass.ifm.shape, model::Shape::of({1, 1, 1, 32}));
    checked = true;
  }
  EXPECT_TRUE(checked);
  // The classifier's output is a network output; `flat` reads c as [1, 8*8*32]: both linear.
  EXPECT_EQ(layouts(fc, false), (std::set<Layout>{Layout::Linear}));
  EXPECT_EQ(layouts(make_layer_space(a, w, 3, SpaceOptions{}), true), (std::set<Layout>{Layout::Linear}));
}

// Vela stores a fully connected layer's output NHCWB16 where the tensor is otherwise eligible and the
// FC's op shape is the tensor's own (its rule 3, npu-model.md §4.5): an unbatched FC runs with its
// OFM tensor's shape [1,1,1,N], a batched one with a reshaped [N,1,1,O]. So f = fc(x), 1 row of 48,
// read by an elementwise abs, may be either layout, at the FC's output and at abs's input; g = fc(x4),
// 4 rows, stays linear (and so does abs's input from it). basic_lstm's 49 lstm_cell/add passes read
// two such outputs: NHCWB16 in Vela's schedules.
TEST(Mapspace, AnUnbatchedFullyConnectedOutputMayBeNhcwb16) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: fc_outputs
inputs:
  - {name: x, shape: [1, 32], dtype: int8}
  - {name: x4, shape: [4, 32], dtype: int8}
layers:
  - {name: fc, op: fully_connected, inputs: [x], output: f, output_shape: [1, 48]}
  - {name: fc4, op: fully_connected, inputs: [x4], output: g, output_shape: [4, 48]}
  - {name: abs, op: abs, inputs: [f], output: y, output_shape: [1, 48]}
  - {name: abs4, op: abs, inputs: [g], output: y4, output_shape: [4, 48]}
)",
                                                                     "fc_outputs.yaml");
  const arch::Arch a = arch::load_arch("ethos-u55-256");
  const auto layouts = [&](int layer, bool input) {
    std::set<Layout> out;
    for (const Template& t : make_layer_space(a, w, layer, SpaceOptions{}).templates) out.insert(input ? t.inputs[0].layout : t.output.layout);
    return out;
  };
  EXPECT_EQ(layouts(0, false), (std::set<Layout>{Layout::Linear, Layout::Nhcwb16}));
  EXPECT_EQ(layouts(2, true), (std::set<Layout>{Layout::Linear, Layout::Nhcwb16}));
  EXPECT_EQ(layouts(1, false), (std::set<Layout>{Layout::Linear}));
  EXPECT_EQ(layouts(3, true), (std::set<Layout>{Layout::Linear}));
}

// Vela 2.1 keeps a channel concatenation in NHCWB16 when every part starts at a channel offset that is a
// multiple of 16 (graph_optimiser.py avoid_nhcwb16_for_concat: each writer's write_offset.depth % 16),
// whatever the last part's size. Parts written in order: cat1 = 32 + 8 channels, offsets 0 and 32,
// both multiples of 16, so NHCWB16 may be used (yolo-fastest's concatenate_1: 96 + 24, offsets 0 and
// 96, NHCWB16 in the reference compiles); cat2 = 8 + 32 channels, offsets 0 and 8, so it stays linear.
TEST(Mapspace, AConcatenationIsNhcwb16WhenEveryPartStartsAtAMultipleOf16) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: concat_offsets
inputs:
  - {name: x, shape: [1, 4, 4, 32], dtype: int8}
  - {name: y, shape: [1, 4, 4, 8], dtype: int8}
tensors:
  - {name: cat1, shape: [1, 4, 4, 40], dtype: int8}
  - {name: cat2, shape: [1, 4, 4, 40], dtype: int8}
layers:
  - {name: a1, op: avg_pool, inputs: [x], output: cat1, output_shape: [1, 4, 4, 32], kernel: 1, padding: VALID}
  - {name: b1, op: avg_pool, inputs: [y], output: cat1, output_shape: [1, 4, 4, 8], kernel: 1, padding: VALID}
  - {name: a2, op: avg_pool, inputs: [y], output: cat2, output_shape: [1, 4, 4, 8], kernel: 1, padding: VALID}
  - {name: b2, op: avg_pool, inputs: [x], output: cat2, output_shape: [1, 4, 4, 32], kernel: 1, padding: VALID}
  - {name: r1, op: avg_pool, inputs: [cat1], output: o1, output_shape: [1, 4, 4, 40], kernel: 1, padding: VALID}
  - {name: r2, op: avg_pool, inputs: [cat2], output: o2, output_shape: [1, 4, 4, 40], kernel: 1, padding: VALID}
)",
                                                                     "concat_offsets.yaml");
  const arch::Arch a = arch::load_arch("ethos-u55-256");
  const auto output_layouts = [&](int layer) {
    std::set<Layout> out;
    for (const Template& t : make_layer_space(a, w, layer, SpaceOptions{}).templates) out.insert(t.output.layout);
    return out;
  };
  EXPECT_EQ(output_layouts(0), (std::set<Layout>{Layout::Linear, Layout::Nhcwb16}));
  EXPECT_EQ(output_layouts(1), (std::set<Layout>{Layout::Linear, Layout::Nhcwb16}));
  EXPECT_EQ(output_layouts(2), (std::set<Layout>{Layout::Linear}));
  EXPECT_EQ(output_layouts(3), (std::set<Layout>{Layout::Linear}));
}

}  // namespace
}  // namespace npumap::search

namespace npumap::search {
namespace {

// On an ethos-u65 Dedicated_Sram system the arena is DRAM and SRAM is a separate choice for each
// feature map. Network inputs and outputs stay in the arena, where the application hands them over
// (as Vela keeps them), unless the arch sets `network_io_in_sram`; intermediate maps keep both.
TEST(Mapspace, NetworkInputsAndOutputsStayInTheArenaUnlessTheArchSaysOtherwise) {
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: io
inputs:
  - {name: x, shape: [1, 8, 8, 16], dtype: int8}
layers:
  - {name: a, op: conv2d, inputs: [x], output: m, output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}
  - {name: b, op: conv2d, inputs: [m], output: y, output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}
)",
                                                                     "io.yaml");
  arch::Arch a = arch::load_arch("ethos-u65-256");
  ASSERT_NE(a.feature_map_storage, a.fast_storage);
  const auto residences = [&](int layer, bool input) {
    std::set<Residence> out;
    for (const Template& t : make_layer_space(a, w, layer, SpaceOptions{}).templates) {
      out.insert(input ? t.inputs[0].residence : t.output.residence);
    }
    return out;
  };
  const std::set<Residence> arena{Residence::Arena};
  const std::set<Residence> both{Residence::Arena, Residence::Sram};
  EXPECT_EQ(residences(0, true), arena);   // x: network input
  EXPECT_EQ(residences(0, false), both);   // m: intermediate
  EXPECT_EQ(residences(1, true), both);
  EXPECT_EQ(residences(1, false), arena);  // y: network output
  a.network_io_in_sram = true;
  EXPECT_EQ(residences(0, true), both);
  EXPECT_EQ(residences(1, false), both);
}

}  // namespace
}  // namespace npumap::search
