// One stop token stops the whole search, wherever it lands: a stop during the comparison join without
// fusion (after the fused join has finished) marks the result partial and interrupted. It used to be
// swallowed (status ok, partial false, the no-fusion section silently missing).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <tuple>

#include "mapper/search/map_network.hpp"
#include "mapper/search/point_memory.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

TEST(Stop, AStopDuringTheComparisonJoinMarksTheResultInterrupted) {
  // mobilenet_v2 on ethos-u65-256: the comparison join takes long enough (tens of ms) for the watcher.
  const arch::Arch a = testing::preset("ethos-u65-256");
  const workloads::Workload w = testing::tiny("mobilenet_v2");
  SearchOptions o;
  o.threads = 1;  // leaves a core to the watcher below
  // The stop must land while the comparison join runs; on a busy machine the watcher can miss it, so
  // a few attempts (a test never skips: every attempt missing is a failure).
  constexpr int kAttempts = 5;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    SearchProgress progress;
    std::atomic<bool> flag{false};
    std::atomic<bool> done{false};
    std::atomic<bool> fired_during_search{false};
    // The comparison join adds its steps to steps_total when it starts: stop right then.
    std::thread watcher([&] {
      const std::uint64_t fused_steps = w.layers.size();
      while (!done.load() && progress.join.steps_total.load() <= fused_steps) {
      }
      if (!done.load()) {
        flag.store(true);
        fired_during_search.store(!done.load());
      }
    });
    const SearchResult r = map_network(a, w, o, common::StopToken(&flag), &progress);
    done.store(true);
    watcher.join();
    if (!fired_during_search.load() || progress.join.steps_done.load() >= 2 * w.layers.size()) {
      ASSERT_LT(attempt, kAttempts) << "in " << kAttempts << " attempts the comparison join always finished before the stop "
                                    << "landed (last: " << progress.join.steps_done.load() << " steps done)";
      continue;
    }
    ASSERT_TRUE(r.joined.has_value());
    EXPECT_FALSE(r.joined->front.empty()) << "the fused join had finished";
    EXPECT_TRUE(r.partial);
    EXPECT_EQ(r.status, SearchStatus::Interrupted);
    EXPECT_FALSE(r.unfused.has_value());
    return;
  }
}

}  // namespace
}  // namespace npumap::search

namespace npumap::search {
namespace {

TEST(Stop, AStopDuringTheExactPassKeepsTheBestMappingsTheQuickPassesFound) {
  // resnet18 on ethos-u65-256 with three objectives: the quick passes finish in a fraction of a
  // second, the exact pass takes seconds (a front of about 14,000 points). Stop as soon as the exact
  // pass starts (it is the only pass that counts steps for a progress display).
  const arch::Arch a = testing::preset("ethos-u65-256");
  const workloads::Workload w = testing::tiny("resnet18");
  SearchOptions o;
  o.threads = 1;
  o.objectives = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
  o.compare_without_fusion = false;
  SearchProgress progress;
  std::atomic<bool> flag{false};
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load() && progress.join.steps_total.load() == 0) {
    }
    flag.store(true);
  });
  const SearchResult r = map_network(a, w, o, common::StopToken(&flag), &progress);
  done.store(true);
  watcher.join();
  ASSERT_TRUE(r.joined.has_value());
  ASSERT_LT(progress.join.steps_done.load(), w.layers.size()) << "the exact pass finished before the stop";
  EXPECT_TRUE(r.partial);
  EXPECT_EQ(r.status, SearchStatus::Interrupted);
  EXPECT_TRUE(r.joined->front.empty()) << "a stopped join has no exact front";
  const std::vector<FrontPoint>& found = r.joined->found_before_stop;
  ASSERT_FALSE(found.empty()) << "the finished quick passes found complete mappings";
  for (std::size_t i = 0; i < found.size(); ++i) {
    const FrontPoint& p = found[i];
    // A real complete mapping: one row per layer, whose cycles and off-chip bytes sum to the point's
    // and whose SRAM profile peaks at the point's peak.
    ASSERT_EQ(p.group.size(), w.layers.size());
    double cycles = 0.0, offchip = 0.0;
    for (std::size_t s = 0; s < p.group.size(); ++s) {
      const PmappingRow& row = r.problem->steps[s].groups[p.group[s]].rows[p.row[s]];
      cycles += row.cycles;
      offchip += row.offchip_bytes;
    }
    EXPECT_DOUBLE_EQ(cycles, p.cycles);
    EXPECT_DOUBLE_EQ(offchip, p.offchip_bytes);
    const std::vector<double> live = point_memory(*r.problem, p).sram_bytes;
    EXPECT_EQ(*std::max_element(live.begin(), live.end()), p.peak_sram_bytes);
    EXPECT_LE(p.peak_sram_bytes, static_cast<double>(a.sram_capacity_bytes));
    // Sorted by the objectives in order, and none dominates another.
    if (i > 0) {
      const FrontPoint& q = found[i - 1];
      EXPECT_TRUE(std::tie(q.cycles, q.offchip_bytes, q.peak_sram_bytes) < std::tie(p.cycles, p.offchip_bytes, p.peak_sram_bytes));
    }
    for (const FrontPoint& q : found) {
      const bool dominates = q.cycles <= p.cycles && q.offchip_bytes <= p.offchip_bytes && q.peak_sram_bytes <= p.peak_sram_bytes &&
                             (q.cycles < p.cycles || q.offchip_bytes < p.offchip_bytes || q.peak_sram_bytes < p.peak_sram_bytes);
      EXPECT_FALSE(dominates);
    }
  }
}

}  // namespace
}  // namespace npumap::search
