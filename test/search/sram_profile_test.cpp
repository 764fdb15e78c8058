// The SRAM in use per layer of a complete mapping (mapper/search/sram_profile.hpp): the join keeps only
// its maximum (peak SRAM), the report prints every layer's. So the two must agree: for every point of
// the exact front of networks with fusion (rolling buffers, cascades), in-place elementwise outputs and
// branches, on U55 (arena in SRAM) and U65 (arena in DRAM) presets, the profile's maximum is the
// point's peak. A hand-worked case pins the values themselves.

#include <gtest/gtest.h>

#include <algorithm>

#include "mapper/search/map_network.hpp"
#include "mapper/search/sram_profile.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

/// Every front point's profile has one entry per layer, none negative, and its maximum is the peak.
void expect_profiles_match_peaks(const workloads::Workload& w, const std::string& arch_name, const std::vector<Objective>& objectives) {
  SCOPED_TRACE(w.name + " on " + arch_name);
  const arch::Arch a = testing::preset(arch_name);
  SearchOptions o;
  o.threads = 2;
  o.objectives = objectives;
  o.compare_without_fusion = false;
  const SearchResult r = map_network(a, w, o, {});
  ASSERT_TRUE(r.joined.has_value() && r.problem.has_value());
  ASSERT_FALSE(r.joined->front.empty());
  bool some_rolling = false;
  for (const FrontPoint& p : r.joined->front) {
    const std::vector<double> live = sram_profile(*r.problem, p);
    ASSERT_EQ(live.size(), w.layers.size());
    for (double v : live) EXPECT_GE(v, 0.0);
    EXPECT_EQ(*std::max_element(live.begin(), live.end()), p.peak_sram_bytes);
    for (std::size_t s = 0; s < p.group.size(); ++s) {
      for (const TensorCompat& c : r.problem->steps[s].groups[p.group[s]].compat) some_rolling = some_rolling || c.residence == Residence::Rolling;
    }
  }
  if (arch_name.rfind("ethos-u55", 0) == 0 && w.name != "tiny_chain") {
    EXPECT_TRUE(some_rolling) << "the check should cover fused points (rolling buffers)";
  }
}

TEST(SramProfile, ItsMaximumIsEveryFrontPointsPeak) {
  const std::vector<Objective> two = {Objective::Cycles, Objective::OffchipBytes};
  const std::vector<Objective> with_sram = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
  expect_profiles_match_peaks(testing::tiny("tiny_chain"), "ethos-u55-256", with_sram);
  expect_profiles_match_peaks(testing::tiny("tiny_residual"), "ethos-u55-256", with_sram);
  expect_profiles_match_peaks(testing::branch_rejoin(), "ethos-u55-128", with_sram);
  expect_profiles_match_peaks(testing::chain5(), "ethos-u55-64", with_sram);
  expect_profiles_match_peaks(testing::tiny("resnet18"), "ethos-u55-256", with_sram);
  expect_profiles_match_peaks(testing::tiny("mobilenet_v2"), "ethos-u55-128", two);
  expect_profiles_match_peaks(testing::tiny("resnet18"), "ethos-u65-256", two);
}

TEST(SramProfile, TinyChainByHand) {
  // tiny_chain on ethos-u55-256 (feature maps and the arena in SRAM): input x [1,16,16,8] -> conv_a ->
  // a [1,16,16,16] -> conv_b -> b [1,8,8,16] -> conv_c -> c [1,8,8,8], int8. Take the mapping with
  // every feature map a whole linear tensor in the arena and weights and bias read in place (the
  // chosen point of the exact front, test/golden/tiny_chain.txt), so no layer reserves SRAM of its own:
  //   conv_a: x (16*16*8 = 2048) + a (16*16*16 = 4096)  = 6144
  //   conv_b: a (4096) + b (8*8*16 = 1024)               = 5120   (x died at conv_a)
  //   conv_c: b (1024) + c (8*8*8 = 512)                  = 1536   (c is the network output)
  const arch::Arch a = testing::preset("ethos-u55-256");
  const workloads::Workload w = testing::tiny("tiny_chain");
  SearchOptions o;
  o.threads = 1;
  o.compare_without_fusion = false;
  const SearchResult r = map_network(a, w, o, {});
  ASSERT_TRUE(r.joined.has_value());
  ASSERT_FALSE(r.joined->front.empty());
  const FrontPoint& p = r.joined->front[0];
  for (std::size_t s = 0; s < p.group.size(); ++s) {
    const PmappingGroup& g = r.problem->steps[s].groups[p.group[s]];
    for (const TensorCompat& c : g.compat) {
      ASSERT_EQ(c.residence, Residence::Arena) << "the derivation assumes whole tensors in the arena";
      ASSERT_EQ(c.layout, Layout::Linear);
    }
    ASSERT_EQ(g.rows[p.row[s]].sram_bytes, 0.0) << "the derivation assumes no weight or bias copies";
  }
  EXPECT_EQ(sram_profile(*r.problem, p), (std::vector<double>{6144, 5120, 1536}));
  EXPECT_EQ(p.peak_sram_bytes, 6144);
}

}  // namespace
}  // namespace npumap::search
