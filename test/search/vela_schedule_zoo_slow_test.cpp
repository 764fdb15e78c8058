// The Vela point is on or behind the front for every workload of the zoo on every preset (issue 38):
// some point of the exact front is at least as good in every objective of the search. Vela's
// mapspace (feature maps in the arena, block configs from its shortlist, no rolling buffers) is a
// subset of ours, so a Vela point better than every front point in every objective would be a
// bound of the join dropping a row it must keep, or a cost the two evaluate differently.
// Two cheap exact fronts per case: cycles with off-chip bytes, and cycles with peak SRAM.

#include <gtest/gtest.h>

#include <cstdio>

#include "mapper/search/map_network.hpp"
#include "mapper/search/vela_schedule.hpp"
#include "test/search/test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;
using testing::tiny;

TEST(VelaScheduleZoo, OnOrBehindTheFrontOnEveryPreset) {
  const std::vector<std::string> zoo = {"tiny_chain", "tiny_residual", "bert_base_layer",
                                        "resnet18",   "mobilenet_v2",  "resnet50"};
  const std::vector<std::string> presets = {"ethos-u55-32",  "ethos-u55-64",  "ethos-u55-128",
                                            "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
  const std::vector<std::vector<Objective>> objective_sets = {{Objective::Cycles, Objective::OffchipBytes},
                                                              {Objective::Cycles, Objective::Sram}};
  int cases = 0, with_vela = 0;
  for (const std::string& name : zoo) {
    const workloads::Workload w = tiny(name);
    for (const std::string& p : presets) {
      const arch::Arch a = preset(p);
      for (const auto& objectives : objective_sets) {
        SearchOptions options;
        options.objectives = objectives;
        options.compare_without_fusion = false;
        options.threads = 2;
        const SearchResult r = map_network(a, w, options, {});
        ASSERT_EQ(r.status, SearchStatus::Ok) << name << " on " << p;
        ++cases;
        // Vela keeps every feature map whole in the arena: where they cannot all fit the SRAM
        // (resnet18 on an ethos-u65-512's 384 KiB), Vela fails to allocate and there is no point.
        if (!r.vela) {
          std::printf("no Vela schedule: %s on %s\n", name.c_str(), p.c_str());
          continue;
        }
        ++with_vela;
        bool covered = false;
        for (const FrontPoint& f : r.joined->front) {
          bool all = true;
          for (const Objective o : objectives) all = all && f.objective(o) <= r.vela->point.objective(o);
          covered = covered || all;
        }
        EXPECT_TRUE(covered) << name << " on " << p << " (" << objective_name(objectives[1])
                             << "): Vela's point beats every front point";
      }
    }
  }
  EXPECT_EQ(cases, 6 * 6 * 2);
  std::printf("%d of %d cases have a Vela schedule\n", with_vela, cases);
  EXPECT_GE(with_vela, cases / 2);
}

}  // namespace
}  // namespace npumap::search
