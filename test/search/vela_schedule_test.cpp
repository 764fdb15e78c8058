// search::vela_schedule on small workloads (docs/design/vela-schedule.md):
//  (a) the Vela point is on or behind the front of the same search: some front point is at least as
//      good in every objective (the front is exact and Vela's mapspace is a subset of ours);
//  (b) it uses only Vela's choices: block configs from Vela's shortlist, Vela's weight placements
//      (vela_template: DMA to SRAM, double buffer or whole copy) and, unless the arch spills, every
//      feature map in the arena (no whole-tensor SRAM copy, no rolling buffer: Vela 2.1 moves feature
//      maps to SRAM and, in practice, cascades only where the arena is off-chip);
//  (c) metamorphic: without the shortlist (block_config_limit 0) the schedule is never worse in its
//      first objective (least SRAM, or cycles when the arch spills), and
//      map_network's vela point is vela_schedule's.

#include <gtest/gtest.h>

#include "mapper/search/map_network.hpp"
#include "mapper/search/vela_schedule.hpp"
#include "model/block_config.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

using testing::branch_rejoin;
using testing::chain5;
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
        if (!a.spilling_enabled)
          for (const TensorCompat& c : g.compat) EXPECT_EQ(c.residence, Residence::Arena) << w.name << " step " << s;
        const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(w.topological_order.at(s)));
        if (lr.space.cpu) continue;
        const PmappingRow& row = g.rows.at(v->point.row[s]);
        EXPECT_TRUE(vela_template(a, lr.space, lr.space.templates.at(stage.jobs.at(row.job).template_index)))
            << w.name << " step " << s << " on " << name;
        const model::BlockConfig bc = lr.space.block_configs.at(row.candidate);
        const auto shortlist = model::scheduler_block_configs(lr.space.block_configs, kVelaBlockConfigLimit);
        EXPECT_NE(std::find(shortlist.begin(), shortlist.end(), bc), shortlist.end()) << w.name << " step " << s;
      }
    }
  }
}

TEST(VelaSchedule, WithoutTheShortlistNeverSlower) {
  for (const std::string& name : kPresets) {
    const arch::Arch a = preset(name);
    for (const workloads::Workload& w : workloads_under_test()) {
      const StageResult stage = run_per_layer(a, w, StageOptions{});
      const auto limited = vela_schedule(a, w, stage, {}, kVelaBlockConfigLimit);
      const auto all = vela_schedule(a, w, stage, {}, 0);
      ASSERT_TRUE(limited && all);
      // Both are the least of the same first objective, over a superset without the shortlist.
      const Objective first = a.spilling_enabled ? Objective::Cycles : Objective::Sram;
      EXPECT_LE(all->point.objective(first), limited->point.objective(first)) << w.name << " on " << name;
    }
  }
}

}  // namespace
}  // namespace npumap::search
