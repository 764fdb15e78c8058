// One stop token stops the whole search, wherever it lands: a stop during the comparison join without
// fusion (after the fused join has finished) marks the result partial and interrupted. It used to be
// swallowed (status ok, partial false, the no-fusion section silently missing).

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "mapper/search/map_network.hpp"
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
