// search::vela_schedule on small workloads (docs/design/vela-schedule.md):
//  (a) the Vela point is on or behind the front of the same search: some front point is at least as
//      good in every objective (the front is exact and Vela's mapspace is a subset of ours);
//  (b) it uses only Vela's choices: block configs from Vela's shortlist, Vela's weight placements
//      (vela_template: DMA to SRAM, double buffer or whole copy) and, unless the arch spills, every
//      feature map in the arena or a cascade's rolling buffer (no whole-tensor SRAM copy: Vela 2.1
//      moves feature maps to SRAM only where the arena is off-chip);
//  (d) add_vela_cascades (Vela's choice where the arena is SRAM): with no weight on SRAM and no row
//      able to stream its IFM it takes, per step, the row of least metric among its group's rows
//      (oracle: the minimum per step by brute force), and where the arena is SRAM every rolling
//      output of the schedule meets a rolling IFM of the next step and vice versa;
//  (c) metamorphic: without the shortlist (block_config_limit 0) Vela's problem (without its weight
//      placements) is never worse in its first objective (least SRAM, or cycles when the arch
//      spills), and
//      map_network's vela point is vela_schedule's;
//  (e) Vela's scheduling figures by hand: the OFM-over-IFM overlap, its order breaking only exact
//      ties, its feature maps' bytes (NHWC while it schedules), and the live bytes with an
//      elementwise step's shared range (vww2_50_50 u55-128's add, 1x1 convolution and depthwise);
//  (f) where the arena spills, the fill moves a concatenation's output (several writers) to SRAM;
//  (g) a concatenation's writer cascades with its reader, the tensor whole, where the arena is SRAM
//      (Vela's rolling-buffer figure chooses the writer and the reader's row, by hand), and not where
//      the arch spills, nor where a writer cannot stream its IFM or a step stands between the
//      writers and the reader.

#include <gtest/gtest.h>

#include "mapper/search/map_network.hpp"
#include "mapper/search/vela_cascades.hpp"
#include "mapper/search/vela_schedule.hpp"
#include "mapper/search/vela_sram.hpp"
#include "model/block_config.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

using testing::branch_rejoin;
using testing::chain5;
using testing::feature_map;
using testing::pair_residual;
using testing::preset;
using testing::tiny;

std::vector<workloads::Workload> workloads_under_test() {
  return {tiny("tiny_chain"), tiny("tiny_residual"), branch_rejoin(), chain5(), pair_residual()};
}

const std::vector<std::string> kPresets = {"ethos-u55-32", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};

/// Whether `p` is at least as good as `v` in every objective of the search.
bool covers(const FrontPoint& p, const FrontPoint& v, const std::vector<Objective>& objectives) {
  for (const Objective o : objectives)
    if (p.objective(o) > v.objective(o)) return false;
  return true;
}

TEST(VelaSchedule, OnOrBehindTheFront) {
  for (const std::string& name : kPresets) {
    const arch::Arch a = preset(name);
    for (const workloads::Workload& w : workloads_under_test()) {
      SearchOptions options;
      options.objectives = all_objectives();
      const SearchResult r = map_network(a, w, options, {});
      ASSERT_EQ(r.status, SearchStatus::Ok) << w.name << " on " << name;
      ASSERT_TRUE(r.vela.has_value()) << w.name << " on " << name;
      bool covered = false;
      for (const FrontPoint& p : r.joined->front) covered = covered || covers(p, r.vela->point, options.objectives);
      EXPECT_TRUE(covered) << w.name << " on " << name << ": Vela's point beats every front point somewhere";
      // The same point as vela_schedule on the same stage.
      const auto direct = vela_schedule(a, w, r.stage);
      ASSERT_TRUE(direct.has_value());
      EXPECT_EQ(direct->point.cycles, r.vela->point.cycles);
      EXPECT_EQ(direct->point.peak_sram_bytes, r.vela->point.peak_sram_bytes);
    }
  }
}

TEST(VelaSchedule, OnlyVelasChoices) {
  for (const std::string& name : kPresets) {
    const arch::Arch a = preset(name);
    for (const workloads::Workload& w : workloads_under_test()) {
      const StageResult stage = run_per_layer(a, w, StageOptions{});
      const auto v = vela_schedule(a, w, stage);
      ASSERT_TRUE(v.has_value()) << w.name << " on " << name;
      for (std::size_t s = 0; s < v->problem.steps.size(); ++s) {
        const PmappingGroup& g = v->problem.steps[s].groups.at(v->point.group[s]);
        if (!a.spilling_enabled) {
          for (const TensorCompat& c : g.compat) EXPECT_NE(c.residence, Residence::Sram) << w.name << " step " << s;
        }
        const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(w.topological_order.at(s)));
        if (lr.space.cpu) continue;
        const PmappingRow& row = g.rows.at(v->point.row[s]);
        // Vela's weight placement, unless the stage kept none for the layer (reading tiny weights in
        // place dominates copying them, so the per-layer stage may have dropped every such row).
        const auto velas = [&](const PmappingRow& r) {
          return vela_template(a, lr.space, lr.space.templates.at(r.template_index));
        };
        const auto shortlist = model::scheduler_block_configs(lr.space.block_configs, kVelaBlockConfigLimit);
        const auto listed = [&](const PmappingRow& r) {
          return std::find(shortlist.begin(), shortlist.end(), lr.space.block_configs.at(r.candidate)) != shortlist.end();
        };
        bool offered = false;
        for (const PmappingGroup& lg : lr.groups) {
          bool arena = true;
          for (const TensorCompat& c : lg.compat) arena = arena && c.residence == Residence::Arena;
          for (const PmappingRow& r : lg.rows) offered = offered || ((arena || a.spilling_enabled) && listed(r) && velas(r));
        }
        if (offered) {
          EXPECT_TRUE(velas(row)) << w.name << " step " << s << " on " << name;
        }
        const model::BlockConfig bc = lr.space.block_configs.at(row.candidate);
        EXPECT_NE(std::find(shortlist.begin(), shortlist.end(), bc), shortlist.end()) << w.name << " step " << s;
      }
    }
  }
}

TEST(VelaSchedule, CascadesPairAndLeastMetricWithoutSramWeight) {
  for (const std::string& name : kPresets) {
    const arch::Arch a = preset(name);
    for (const workloads::Workload& w : workloads_under_test()) {
      const StageResult stage = run_per_layer(a, w, StageOptions{});
      const auto v = vela_schedule(a, w, stage);
      ASSERT_TRUE(v.has_value()) << w.name << " on " << name;
      const std::size_t n = v->problem.steps.size();
      // Rolling buffers pair up: a rolling output is the next step's rolling IFM.
      for (std::size_t s = 0; s < n; ++s) {
        const auto& g = v->problem.steps[s].groups.at(v->point.group[s]);
        const bool out_rolls = g.compat.back().residence == Residence::Rolling;
        const bool next_in_rolls = s + 1 < n && v->problem.steps[s + 1].groups.at(v->point.group[s + 1]).compat.front().residence ==
                                                    Residence::Rolling &&
                                   v->problem.steps[s + 1].inputs.front() == v->problem.steps[s].output;
        EXPECT_EQ(out_rolls, next_in_rolls) << w.name << " step " << s << " on " << name;
      }
      if (a.spilling_enabled) continue;
      // Oracle: with SRAM unweighted and no IFM streaming, each step takes its group's least metric
      // (here the row's cycles); the sum is the sum of the per-step minima.
      FrontPoint p = v->point;
      const std::vector<bool> npu(n, true);
      const std::vector<VelaPassRows> shapes(n);
      const VelaRowCostFn cost = [](std::size_t, const PmappingRow& r) { return VelaRowCost{r.cycles, false, 1}; };
      add_vela_cascades(v->problem, npu, {}, shapes, cost, 0.0, false, p);
      double got = 0.0, least = 0.0;
      for (std::size_t s = 0; s < n; ++s) {
        const auto& g = v->problem.steps[s].groups.at(p.group[s]);
        for (const TensorCompat& c : g.compat) EXPECT_NE(c.residence, Residence::Rolling) << w.name << " step " << s;
        got += g.rows.at(p.row[s]).cycles;
        double m = g.rows.front().cycles;
        for (const PmappingRow& r : g.rows) m = std::min(m, r.cycles);
        least += m;
      }
      EXPECT_EQ(got, least) << w.name << " on " << name;
    }
  }
}

TEST(VelaSchedule, IfmOverlapByHand) {
  // A 1x1 convolution, 4 rows of 10 bytes in and out, stride 1, block height 1: stripe k reads IFM
  // row k (lowest IFM byte still read: 10k) and writes OFM row k (highest written: 10(k+1)), so it
  // needs 10(k+1) - 10k = 10 bytes apart and 40 - 10 = 30 OFM bytes may overwrite the IFM.
  VelaPassRows one{true, 4, 4, 1, 0, 1, 10.0, 10.0};
  EXPECT_EQ(vela_ifm_overlap({&one}, {1}), 30.0);
  // A 3x3 convolution, padding 1, block height 2: stripe 0 (OFM rows 0-1) reads IFM rows 0-2 from
  // byte 0 and writes up to byte 20 (20 apart); stripe 1 (rows 2-3) reads from IFM row 1 (byte 10)
  // and writes up to byte 40 (30 apart): 40 - 30 = 10.
  VelaPassRows three{true, 4, 4, 1, 1, 3, 10.0, 10.0};
  EXPECT_EQ(vela_ifm_overlap({&three}, {2}), 10.0);
  // A cascade of the 1x1 (block height 1) into the 3x3 (block height 2). The 3x3's stripe 0 needs
  // rows 0-2, so the 1x1 runs stripes 0, 1, 2 (IFM read from 0, 10, 20; nothing written yet: each
  // leaves 40), after which the first pass's IFM is read up to byte 30 (the end of its last box);
  // the 3x3 then writes up to byte 20: 40 - max(0, 20 - 30) = 40. Its stripe 1 needs row 3: the
  // 1x1's stripe 3 reads from 30 (40 - max(0, 20 - 30) = 40) and ends at 40; the 3x3 writes up to
  // 40: 40 - max(0, 40 - 40) = 40. The whole OFM may overwrite the IFM.
  EXPECT_EQ(vela_ifm_overlap({&one, &three}, {1, 2}), 40.0);
  // Without rows (not a 4-D pass) nothing overlaps.
  VelaPassRows none;
  EXPECT_EQ(vela_ifm_overlap({&none}, {1}), 0.0);
}

/// vww2_50_50's second NPU subgraph, as far as its first three passes: a CPU pad writes p (13x13x24
/// int8, 4,056 bytes, 4,064 rounded to 16), the NPU adds p and q (the same shape, from before) into x,
/// a 1x1 convolution expands x to y (13x13x128, 21,632) and a stride-2 depthwise makes z (7x7x128,
/// 6,272), the network's output here.
JoinProblem vww2_add_expand_depthwise() {
  JoinProblem p;
  const auto& fm = testing::feature_map;
  // 0 r (the pad's input), 1 p, 2 q, 3 x, 4 y, 5 z.
  p.tensors = {fm(4064, -1, 0), fm(4064, 0, 1), fm(4064, -1, 1), fm(4064, 1, 2), fm(21632, 2, 3), fm(6272, 3, -1)};
  p.tensors[5].network_output = true;
  p.steps = {{{0}, 1, {}}, {{1, 2}, 3, {}}, {{3}, 4, {}}, {{4}, 5, {}}};
  p.arena_is_sram = true;
  return p;
}

TEST(VelaSchedule, SharedLiveRangeByHand) {
  // Vela's scheduler (calc_non_local_mem_usage) adds every tensor's size over the live range it maps
  // to, and its merge gives the add's output x the range of its first operand p (p has x's shape and
  // type and no other reader): [add, convolution] (p's first use in the NPU subgraph is the add, x's
  // last the convolution). So p counts at the convolution too. Live bytes per step, by hand:
  //   pad (CPU):     r + p                 = 4,064 + 4,064          =  8,128
  //   add:           p + q + x             = 3 x 4,064              = 12,192
  //   convolution:   p (shared range) + x + y = 4,064 + 4,064 + 21,632 = 29,760 (25,696 without the merge)
  //   depthwise:     y + z                 = 21,632 + 6,272         = 27,904
  // So Vela's convolution alone carries 4,064 bytes that are not its own: IFM-streamed, its best,
  // 29,760 - 25,696 (around it) + 4,064 (IFM) + 3,696 (weights) + 21,632 (OFM) - 3,120 (its OFM over its
  // IFM, block height 5) = 30,336, above the depthwise's 28,320 (21,632 + a 416-byte double buffer +
  // 6,272), while the cascade of the two, ending at the depthwise, counts none of it: 4,064 + 3,696 +
  // 16,640 (rolling buffer) + 1,648 + 6,272 - 4,056 = 28,264. The cascade saves 30,336 - 28,264 =
  // 2,072 bytes of the subgraph's peak, 2,072,000 of candidate metric against its 659,136 more pass
  // metric, which is why Vela cascades them (without the shared range it saved 56).
  const JoinProblem p = vww2_add_expand_depthwise();
  const std::vector<bool> npu = {false, true, true, true};
  std::vector<VelaSramStep> steps(4);
  for (std::size_t s = 1; s < 4; ++s) steps[s].npu = true;
  steps[1].merge_input = {true, true};
  const std::vector<int> merged = vela_scheduling_merges(p, steps);
  EXPECT_EQ(merged, (std::vector<int>{-1, 0, -1, -1}));
  EXPECT_EQ(vela_scheduling_live(p, npu, merged), (std::vector<double>{8128, 12192, 29760, 27904}));
  EXPECT_EQ(vela_scheduling_live(p, npu, {}), (std::vector<double>{8128, 12192, 25696, 27904}));
  // Vela's first operand is q when the graph has the operands the other way round: q shares x's
  // range, and it is live from the add only, as p is.
  steps[1].operands_swapped = true;
  EXPECT_EQ(vela_scheduling_merges(p, steps), (std::vector<int>{-1, 1, -1, -1}));
  // An input with another reader keeps its own range: with q read by the depthwise's step too (a
  // skip connection) the add's output takes p's (q first in the graph, but it cannot).
  JoinProblem skip = p;
  skip.steps[3].inputs.push_back(2);
  skip.tensors[2].last_consumer_step = 3;
  EXPECT_EQ(vela_scheduling_merges(skip, steps), (std::vector<int>{-1, 0, -1, -1}));
  // The range ends with the subgraph: a CPU step between the add and the convolution starts a new
  // NPU subgraph, in which p is not live.
  EXPECT_EQ(vela_scheduling_live(p, {false, true, false, true}, merged), (std::vector<double>{8128, 12192, 25696, 27904}));
}

TEST(VelaSchedule, SchedulingPassHasNhwcFeatureMaps) {
  // vww2_50_50's 1x1 convolution PartitionedCall_12 (25x25x4 -> 25x25x8) between two NPU
  // convolutions, so both its feature maps may be NHCWB16, which Vela's final passes use. While Vela
  // schedules, every feature map is NHWC (mark_tensors.py; apply_result sets NHCWB16 after the
  // search), so the pass's bytes are its tensors' own: IFM 25 x 25 x 4 = 2,500 bytes read once (one
  // OFM-depth stage: 8 channels in one block of depth 8, a 1x1 kernel), OFM 25 x 25 x 8 = 5,000
  // written, where NHCWB16 rounds both to 16 channels: 10,000 each. The transfer efficiency still
  // sees NHCWB16 (the tensors need not be linear), so the scaled OFM write is 10,000 either way (write
  // burst 16 bytes x block width 2 = 32, SRAM's burst: no scaling).
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: vww2_pointwise
inputs:
  - {name: x, shape: [1, 25, 25, 4], dtype: int8}
layers:
  - {name: c0, op: conv2d, inputs: [x], output: a, output_shape: [1, 25, 25, 4], kernel: 3, padding: SAME}
  - {name: c1, op: conv2d, inputs: [a], output: b, output_shape: [1, 25, 25, 8], kernel: 1, padding: SAME}
  - {name: c2, op: conv2d, inputs: [b], output: y, output_shape: [1, 25, 25, 8], kernel: 1, padding: SAME}
)",
                                                                     "vww2_pointwise.yaml");
  const arch::Arch a = preset("ethos-u55-128");
  const LayerSpace space = make_layer_space(a, w, 1, SpaceOptions{});
  const auto tpl = std::find_if(space.templates.begin(), space.templates.end(), [](const Template& t) {
    return t.weights == WeightPlacement::Copy && t.inputs[0].residence == Residence::Arena &&
           t.inputs[0].layout == Layout::Nhcwb16 && t.output.residence == Residence::Arena && t.output.layout == Layout::Nhcwb16;
  });
  ASSERT_NE(tpl, space.templates.end());
  const auto bc = std::find(space.block_configs.begin(), space.block_configs.end(), model::BlockConfig{5, 2, 8, 8});
  ASSERT_NE(bc, space.block_configs.end());
  const auto sram_fm = [](const model::BandwidthArray& b, model::Direction d) {
    return b[static_cast<int>(arch::MemArea::Sram)][static_cast<int>(model::TensorPurpose::FeatureMap)][static_cast<int>(d)];
  };
  const model::Pass sched = vela_scheduling_pass(a, space, *tpl, *bc);
  EXPECT_EQ(sched.ofm.format, model::TensorFormat::NHWC);
  EXPECT_FALSE(sched.ofm.needs_linear_format);
  const model::PassMetrics m = model::evaluate(a, sched);
  EXPECT_EQ(sram_fm(m.bandwidth, model::Direction::Read), 2500.0);
  EXPECT_EQ(sram_fm(m.bandwidth, model::Direction::Write), 5000.0);
  EXPECT_EQ(sram_fm(m.scaled_bandwidth, model::Direction::Write), 10000.0);
  // The final pass (make_pass) is NHCWB16: 10,000 bytes each way.
  const model::PassMetrics f = model::evaluate(a, make_pass(a, space, *tpl, *bc));
  EXPECT_EQ(sram_fm(f.bandwidth, model::Direction::Read), 10000.0);
  EXPECT_EQ(sram_fm(f.bandwidth, model::Direction::Write), 10000.0);
}

TEST(VelaSchedule, OrderBreaksOnlyExactTies) {
  // One NPU step, x (100 bytes) -> y (100 bytes, the network's output), three weight-streamed rows of
  // equal metric: row 0 first in Vela's order with 300 bytes of its own SRAM, rows 1 and 2 with 200,
  // row 2 before row 1 in Vela's order. Vela's filter (filter_pareto_frontier) sorts its candidates by
  // (metric, largest finished SRAM, open SRAM), stably, and keeps one unless one kept before it is no
  // worse in all three: open SRAM 100 + 300 = 400 for row 0, 300 for rows 1 and 2, so rows 1 and 2
  // come first, equal in all three, and the first of them in Vela's order, row 2, is all that is
  // kept. Row 0's place before them does not make it better (a millionth of metric per place did,
  // and chose row 0); the order only chooses between rows 1 and 2 (without it, row 1, the first in
  // the group, would be kept).
  JoinProblem p;
  JoinTensor x;
  x.linear_bytes = x.nhcwb16_bytes = 100;
  x.last_consumer_step = 0;
  JoinTensor y = x;
  y.producer_step = 0;
  y.last_consumer_step = -1;
  y.network_output = true;
  p.tensors = {x, y};
  PmappingGroup g;
  g.compat = std::vector<TensorCompat>(2, TensorCompat{});
  g.rows = std::vector<PmappingRow>(3);
  g.rows[0].sram_bytes = 300;
  g.rows[1].sram_bytes = g.rows[2].sram_bytes = 200;
  for (std::uint32_t r = 0; r < 3; ++r) g.rows[r].candidate = r;
  p.steps = {{{0}, 1, {g}}};
  p.arena_is_sram = true;
  p.sram_capacity = 1 << 20;
  FrontPoint point;
  point.group = point.row = {0};
  const VelaRowCostFn cost = [](std::size_t, const PmappingRow& r) {
    VelaRowCost c{1000.0, false, 1};
    c.order = r.candidate == 0 ? 0.0 : r.candidate == 2 ? 1.0 : 2.0;
    return c;
  };
  add_vela_cascades(p, {true}, {}, {VelaPassRows{}}, cost, 1000.0, false, point);
  EXPECT_EQ(point.row[0], 2U);
}

TEST(VelaSchedule, SpillingFiguresHoldNoFeatureMap) {
  // Two NPU steps x -> y -> z, every feature map 1,000 bytes, y 10 rows of 10 x 16 (1 byte each); each
  // step IFM-streams 400 bytes of weights (whole in SRAM), costs 100 of pass metric alone, and step 1
  // costs 50 with its IFM in a rolling buffer (both sides' block heights 2). Where the arena is off
  // chip (DRAM), Vela's scheduler counts only tensors in SRAM (scheduler.py: `tens.mem_area ==
  // self.mem_area`): the weights and the rolling buffer, which it adds whatever its memory
  // (storage_size_for_sub_purpose, RollingBufferY), and no OFM-over-IFM overlap. The rolling buffer
  // holds ceil((2 + 2) / 2) x 2 = 4 rows (at most the 10 of y) of 10 x 16 channels: 640 bytes. So:
  //   apart:    step 0 400, step 1 400, metric 200;
  //   cascaded: 400 + 640 + 400 = 1,440, metric 150.
  // With a limit of 1,500 both fit and the least metric (SRAM weight 0) is the cascade; with 1,400 the
  // cascade is over the limit and dropped, so the steps stay apart. Where the arena is SRAM the same
  // problem counts the feature maps: step 0 apart holds x (1,000) + 400 + y (1,000) = 2,400 > 1,500,
  // so no candidate fits and the point is left as it was (both steps apart, rows 0).
  JoinProblem p;
  JoinTensor y = feature_map(1000, 0, 1);
  y.height = 10, y.width = 10, y.channels = 16;
  JoinTensor z = feature_map(1000, 1, -1);
  z.network_output = true;
  p.tensors = {feature_map(1000, -1, 0), y, z};
  const TensorCompat arena{}, rolls{Residence::Rolling, Layout::Nhcwb16, 2};
  PmappingGroup g00{{arena, arena}, {PmappingRow{}}}, g01{{arena, rolls}, {PmappingRow{}}};
  PmappingGroup g10{{arena, arena}, {PmappingRow{}}}, g11{{rolls, arena}, {PmappingRow{}}};
  p.steps = {{{0}, 1, {g00, g01}}, {{1}, 2, {g10, g11}}};
  // Step 1's rolled row costs 50: the cost function sees only the row, so it is marked by its candidate.
  p.steps[1].groups.edit()[1].rows[0].candidate = 1;
  const VelaRowCostFn costs = [](std::size_t, const PmappingRow& r) {
    VelaRowCost c{r.candidate == 1 ? 50.0 : 100.0, true, 2};
    c.weight_bytes = 400.0;
    return c;
  };
  const std::vector<VelaPassRows> shapes(2);
  const auto schedule = [&](std::int64_t limit, bool spills) {
    JoinProblem q = p;
    q.sram_capacity = limit;
    q.arena_is_sram = !spills;
    FrontPoint point;
    point.group = point.row = {0, 0};
    add_vela_cascades(q, {true, true}, {}, shapes, costs, 0.0, spills, point);
    return point.group;
  };
  EXPECT_EQ(schedule(1500, true), (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(schedule(1400, true), (std::vector<std::uint32_t>{0, 0}));
  EXPECT_EQ(schedule(1500, false), (std::vector<std::uint32_t>{0, 0}));
}

TEST(VelaSchedule, WithoutTheShortlistNeverSlower) {
  for (const std::string& name : kPresets) {
    const arch::Arch a = preset(name);
    for (const workloads::Workload& w : workloads_under_test()) {
      const StageResult stage = run_per_layer(a, w, StageOptions{});
      ASSERT_TRUE(vela_schedule(a, w, stage, {}, kVelaBlockConfigLimit) && vela_schedule(a, w, stage, {}, 0));
      // Without Vela's weight placements (whose fallback depends on what the shortlist leaves), the
      // problem without the shortlist is a superset of the one with it, so the least of the same
      // first objective is never worse.
      JoinOptions options;
      options.objectives = {a.spilling_enabled ? Objective::Cycles : Objective::Sram};
      const JoinResult limited = join_best(vela_problem(a, w, stage, kVelaBlockConfigLimit, false), options);
      const JoinResult all = join_best(vela_problem(a, w, stage, 0, false), options);
      ASSERT_FALSE(limited.front.empty() || all.front.empty()) << w.name << " on " << name;
      EXPECT_LE(all.front[0].objective(options.objectives[0]), limited.front[0].objective(options.objectives[0]))
          << w.name << " on " << name;
    }
  }
}

/// The index of the workload's tensor `name`, -1 when there is none.
int tensor_named(const workloads::Workload& w, const std::string& name) {
  for (std::size_t t = 0; t < w.tensors.size(); ++t)
    if (w.tensors[t].name == name) return static_cast<int>(t);
  return -1;
}

/// Where the schedule's point holds `tensor` at each of its uses, in step order: as a step's output
/// (its writers) and as a step's input (its readers).
struct TensorUses {
  std::vector<Residence> written, read;
};
TensorUses uses_of(const VelaBaseline& v, int tensor) {
  TensorUses u;
  for (std::size_t s = 0; s < v.problem.steps.size(); ++s) {
    const JoinStep& step = v.problem.steps[s];
    const PmappingGroup& g = step.groups.at(v.point.group[s]);
    if (step.output == tensor) u.written.push_back(g.compat.back().residence);
    for (std::size_t i = 0; i < step.inputs.size(); ++i)
      if (step.inputs[i] == tensor) u.read.push_back(g.compat.at(i).residence);
  }
  return u;
}

TEST(VelaSchedule, FillMovesAConcatenationsOutput) {
  // Where the arena spills (ethos-u65-256: arena in DRAM, 384 KiB of SRAM), Vela's fill
  // (use_fast_storage_for_feature_maps) moves to SRAM every feature map that is an output of an NPU
  // cascaded pass, read only by NPU passes and not a network output, wherever the cascaded passes it
  // spans keep their SRAM within the limit. A concatenation is several passes each writing a slice of
  // one tensor, which Vela lists as an output of each: here `cat` (8x8x24 int8, 1,536 bytes) is
  // written by two average pools and read by the 1x1 convolution `head`, all on the NPU, and `head`'s
  // output is the network's. Nothing else is large (every tensor here under 2 KiB, the weights under
  // 1 KiB), so it fits and both writers and the reader must hold it in SRAM. (Our fill had skipped
  // tensors with more than one writer.)
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: concat_fill
inputs:
  - {name: x, shape: [1, 8, 8, 8], dtype: int8}
tensors:
  - {name: cat, shape: [1, 8, 8, 24], dtype: int8}
layers:
  - {name: stem, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 8], kernel: 3, padding: SAME}
  - {name: side, op: conv2d, inputs: [a], output: b, output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}
  - {name: pool_a, op: avg_pool, inputs: [a], output: cat, output_shape: [1, 8, 8, 8], kernel: 1, padding: VALID}
  - {name: pool_b, op: avg_pool, inputs: [b], output: cat, output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}
  - {name: head, op: conv2d, inputs: [cat], output: y, output_shape: [1, 8, 8, 8], kernel: 1, padding: VALID}
)",
                                                                      "concat_fill.yaml");
  const arch::Arch a = preset("ethos-u65-256");
  ASSERT_TRUE(a.spilling_enabled);
  const StageResult stage = run_per_layer(a, w, StageOptions{});
  const auto v = vela_schedule(a, w, stage);
  ASSERT_TRUE(v.has_value());
  const int cat = tensor_named(w, "cat");
  ASSERT_GE(cat, 0);
  const TensorUses u = uses_of(*v, cat);
  EXPECT_EQ(u.written, (std::vector<Residence>{Residence::Sram, Residence::Sram}));
  EXPECT_EQ(u.read, (std::vector<Residence>{Residence::Sram}));
}

TEST(VelaSchedule, FillLeavesASubgraphsOutputInTheArena) {
  // Vela's fill (use_fast_storage_for_feature_maps) sees only the tensors passed between the passes
  // of one NPU subgraph: a tensor also read in another NPU subgraph is an output of its own
  // (extract_npu_subgraphs.py), whose consumers there include the subgraph's end, and the fill never
  // offers it. Here the CPU layer `host` cuts the network into two NPU subgraphs, {stem, mid, mid2}
  // and {tail} (Vela's pass order walks back from y: tail, its first operand p through host, mid2,
  // mid and stem, then a, already placed). `a` (8x8x8 int8, 512 bytes) is read by mid in the first
  // subgraph and by tail in the second: it stays in the arena (DRAM) at its writer and both readers,
  // though it would fit (every tensor here is under 1 KiB, the SRAM 384 KiB). `m`, passed from mid to
  // mid2 within the first subgraph, is moved to SRAM or rolls there: it is never the arena's. (Our
  // fill had moved `a` too: vww2_50_50 u65-256's PartitionedCall_20 output, 4,064 bytes over Vela's
  // SRAM used.)
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: subgraph_fill
inputs:
  - {name: x, shape: [1, 8, 8, 8], dtype: int8}
layers:
  - {name: stem, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 8], kernel: 3, padding: SAME}
  - {name: mid, op: conv2d, inputs: [a], output: m, output_shape: [1, 8, 8, 8], kernel: 1, padding: VALID}
  - {name: mid2, op: conv2d, inputs: [m], output: n, output_shape: [1, 8, 8, 8], kernel: 1, padding: VALID}
  - {name: host, op: cpu, operator: PAD, inputs: [n], output: p, output_shape: [1, 8, 8, 8]}
  - {name: tail, op: add, inputs: [p, a], output: y, output_shape: [1, 8, 8, 8]}
)",
                                                                      "subgraph_fill.yaml");
  const arch::Arch arch = preset("ethos-u65-256");
  ASSERT_TRUE(arch.spilling_enabled);
  const StageResult stage = run_per_layer(arch, w, StageOptions{});
  const auto v = vela_schedule(arch, w, stage);
  ASSERT_TRUE(v.has_value());
  const int a = tensor_named(w, "a"), m = tensor_named(w, "m");
  ASSERT_GE(a, 0);
  ASSERT_GE(m, 0);
  const TensorUses ua = uses_of(*v, a);
  EXPECT_EQ(ua.written, (std::vector<Residence>{Residence::Arena}));
  EXPECT_EQ(ua.read, (std::vector<Residence>{Residence::Arena, Residence::Arena}));
  const TensorUses um = uses_of(*v, m);
  ASSERT_EQ(um.written.size(), 1u);
  ASSERT_EQ(um.read.size(), 1u);
  EXPECT_NE(um.written[0], Residence::Arena);
  EXPECT_EQ(um.read[0], um.written[0]);
}

/// The concatenation of ConcatWriterCascadesWithItsReader: steps a (x0 -> cat), b (x1 -> cat), r
/// (cat -> y), `between` adding an unrelated step d (x2 -> z) between b and r.
JoinProblem concat_problem(bool between) {
  JoinProblem p;
  const auto fm = [](std::int64_t h, std::int64_t w, std::int64_t c, int producer, int consumer) {
    JoinTensor t = feature_map(h * w * c, producer, consumer);
    t.nhcwb16_bytes = h * w * ((c + 15) / 16 * 16);
    t.height = static_cast<int>(h), t.width = static_cast<int>(w), t.channels = static_cast<int>(c);
    return t;
  };
  const int r = between ? 3 : 2;
  JoinTensor y = fm(12, 12, 120, r, -1), z = fm(12, 12, 8, 2, -1);
  y.network_output = z.network_output = true;
  p.tensors = {fm(12, 12, 16, -1, 0), fm(12, 12, 104, -1, 1), fm(12, 12, 120, 0, r), y};
  const TensorCompat arena{}, nhcwb16{Residence::Arena, Layout::Nhcwb16, 0};
  PmappingGroup writer{{arena, nhcwb16}, {PmappingRow{}}}, reader{{nhcwb16, arena}, std::vector<PmappingRow>(2)};
  reader.rows[1].candidate = 1;
  p.steps = {{{0}, 2, {writer}}, {{1}, 2, {writer}}, {{2}, 3, {reader}}};
  if (between) {
    p.tensors.push_back(fm(12, 12, 8, -1, 2));
    p.tensors.push_back(z);
    p.steps.insert(p.steps.begin() + 2, JoinStep{{4}, 5, {PmappingGroup{{arena, arena}, {PmappingRow{}}}}});
  }
  p.sram_capacity = 1 << 20;
  return p;
}

TEST(VelaSchedule, ConcatWriterCascadesWithItsReader) {
  // Steps a (x0 12x12x16 -> cat) and b (x1 12x12x104 -> cat) write the concatenation cat (12x12x120,
  // NHCWB16 in the arena), read by r alone (-> y 12x12x120, the network's output); every step
  // IFM-streams (metric 100, 100, 1,000: equal whatever the choice), a and b with OFM block height
  // 1 and no weights, r with 1,000 bytes of weights and two rows, IFM block heights 16 (row 0) and
  // 8 (row 1). Vela's figures (scheduler.py; NHWC bytes while it schedules): x0 2,304, x1 14,976,
  // cat 17,280, y 17,280; at each step the tensors around it that are not its own are its output
  // only (17,280). Apart: a 2,304 + 17,280 = 19,584; b 14,976 + 17,280 = 32,256; r 17,280 + 1,000 +
  // 17,280 = 35,560 (either row; the first kept). Vela offers a cascade of each writer with r
  // (avoid_for_cascading refuses a concatenation's writer only where the arch spills), its rolling
  // buffer min(12, 16 + 1) = 12 rows at row 0 and 8 + 1 = 9 at row 1, of 12 x 128 channels (NHCWB16):
  // 18,432 and 13,824 bytes. a with r at row 1: 2,304 + 13,824 + 1,000 + 17,280 = 34,408 (b apart
  // 32,256); at row 0, 39,016; b with r: 14,976 + 13,824 + 1,000 + 17,280 = 47,080 at best. So the
  // least largest SRAM is a cascaded with r at row 1, 34,408 < 35,560: Vela's choice, and the
  // point keeps cat whole (the pair costs what it costs apart).
  const VelaRowCostFn cost = [](std::size_t s, const PmappingRow& row) {
    VelaRowCost c{s == 2 ? 1000.0 : 100.0, true, s == 2 ? (row.candidate == 1 ? 4 : 12) : 1};
    c.weight_bytes = s == 2 ? 1000.0 : 0.0;
    c.ifm_block_h = s == 2 ? (row.candidate == 1 ? 8 : 16) : 1;
    c.order = row.candidate;
    return c;
  };
  VelaPassRows rows;
  rows.rows = true, rows.ifm_h = rows.ofm_h = 12, rows.kernel_h = 1;  // no row bytes: no OFM-over-IFM overlap
  const auto schedule = [&](const JoinProblem& p, bool spills, std::vector<VelaPassRows> shapes, FrontPoint& point) {
    point.group.assign(p.steps.size(), 0), point.row.assign(p.steps.size(), 0);
    std::vector<std::pair<std::size_t, std::size_t>> whole;
    const auto costs = [&](std::size_t s, const PmappingRow& row) { return cost(s == 3 ? 2 : s == 2 && p.steps.size() == 4 ? 0 : s, row); };
    add_vela_cascades(p, std::vector<bool>(p.steps.size(), true), {}, shapes, costs, 1000.0, spills, point, &whole);
    return whole;
  };
  FrontPoint point;
  using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;
  const JoinProblem p = concat_problem(false);
  EXPECT_EQ(schedule(p, false, std::vector<VelaPassRows>(3, rows), point), (Pairs{{0, 2}}));
  EXPECT_EQ(point.row[2], 1U);
  // Where the arch spills Vela refuses a concatenation's writer (the point stays apart, r's first row).
  EXPECT_EQ(schedule(p, true, std::vector<VelaPassRows>(3, rows), point), Pairs{});
  EXPECT_EQ(point.row[2], 0U);
  // Writers that cannot stream their IFM (no rows: not a convolution, depthwise or pooling pass).
  EXPECT_EQ(schedule(p, false, {VelaPassRows{}, VelaPassRows{}, rows}, point), Pairs{});
  // A step that is not a writer between the writers and the reader.
  EXPECT_EQ(schedule(concat_problem(true), false, std::vector<VelaPassRows>(4, rows), point), Pairs{});
}

TEST(VelaSchedule, ConcatWriterCascadeOnU55NotOnU65) {
  // yolo-fastest's concatenate_1 in small: two 1x1 average pools copy x (12x12x96) and x2 (12x12x24)
  // into cat (12x12x120, channels 0-95 and 96-119, NHCWB16: both parts start at a multiple of 16)
  // and a 5x5 depthwise reads cat alone. Where the arena is SRAM (ethos-u55-128) Vela's scheduler
  // may cascade either pool with the depthwise; where it spills (ethos-u65-256) its
  // avoid_for_cascading refuses a concatenation's writer. Either way the tensor is whole: on U55 in
  // the arena at both writers and the reader (Vela's allocation re-sizes the rolling buffer whole),
  // and nothing reads it through a rolling buffer. (U55 takes a cascade because Vela's scheduling
  // figures then count, at the depthwise, the writer's IFM and a rolling buffer of the concatenation
  // instead of the whole concatenation; the figures are the dynamic program's, not worked here.)
  const workloads::Workload w = workloads::load_workload_from_string(R"(
name: concat_dw
inputs:
  - {name: x, shape: [1, 12, 12, 96], dtype: int8}
  - {name: x2, shape: [1, 12, 12, 24], dtype: int8}
tensors:
  - {name: cat, shape: [1, 12, 12, 120], dtype: int8}
layers:
  - {name: pool_a, op: avg_pool, inputs: [x], output: cat, output_shape: [1, 12, 12, 96], kernel: 1, padding: VALID}
  - {name: pool_b, op: avg_pool, inputs: [x2], output: cat, output_shape: [1, 12, 12, 24], kernel: 1, padding: VALID}
  - {name: dw, op: depthwise_conv2d, inputs: [cat], output: y, output_shape: [1, 12, 12, 120], kernel: 5, padding: SAME}
)",
                                                                      "concat_dw.yaml");
  const int cat = tensor_named(w, "cat");
  ASSERT_GE(cat, 0);
  for (const char* name : {"ethos-u55-128", "ethos-u65-256"}) {
    const arch::Arch a = preset(name);
    const auto v = vela_schedule(a, w, run_per_layer(a, w, StageOptions{}));
    ASSERT_TRUE(v.has_value()) << name;
    const TensorUses u = uses_of(*v, cat);
    EXPECT_EQ(u.read.size(), 1U);
    EXPECT_NE(u.read.at(0), Residence::Rolling) << name;
    if (a.spilling_enabled) {
      EXPECT_TRUE(v->whole_cascades.empty()) << name;
      continue;
    }
    // Which writer is the dynamic program's choice (ConcatWriterCascadesWithItsReader works one by
    // hand); the reader is the depthwise, step 2.
    ASSERT_EQ(v->whole_cascades.size(), 1U);
    EXPECT_EQ(v->whole_cascades[0].second, 2U);
    EXPECT_LT(v->whole_cascades[0].first, 2U);
    EXPECT_EQ(u.written, (std::vector<Residence>{Residence::Arena, Residence::Arena}));
    // The report shows Vela's cascade (layers_vela.csv): the writer fused with the next layer, the
    // depthwise with the previous; nothing else fused.
    const FrontMappings m = vela_point_mappings(a, w, run_per_layer(a, w, StageOptions{}), *v);
    for (std::size_t s = 0; s < 3; ++s) {
      const LayerMapping& l = m.layers.at(m.points.at(0).layers.at(s));
      EXPECT_EQ(l.fused_with_next, s == v->whole_cascades[0].first) << s;
      EXPECT_EQ(l.fused_with_previous, s == 2) << s;
    }
  }
}

}  // namespace
}  // namespace npumap::search
