// The memory of one front point per layer (mapper/search/point_memory.hpp): on a chain without fusion
// by hand (while layer s runs, its input and its output are live, plus the layer's own copies), and
// on networks with fusion, branches and in-place elementwise layers against the join's own peak: the
// maximum over the layers must be each point's peak SRAM, for every point of the front.

#include <gtest/gtest.h>

#include <algorithm>

#include "mapper/search/map_network.hpp"
#include "mapper/search/point_memory.hpp"
#include "test_support.hpp"

namespace npumap::search {
namespace {

using testing::preset;
using testing::tiny;

/// Bytes of a tensor as placed: NHCWB16 rounds the channels up to 16.
double placed_bytes(const JoinTensor& t, const TensorCompat& c) {
  return static_cast<double>(c.layout == Layout::Nhcwb16 ? t.nhcwb16_bytes : t.linear_bytes);
}

TEST(PointMemory, ChainWithoutFusionIsInputPlusOutputPlusOwnCopies) {
  // tiny_chain: input [1,16,16,8] -> conv_a -> a [1,16,16,16] -> conv_b -> b [1,8,8,16] -> conv_c -> c.
  // Without fusion, while layer s runs exactly its input and output are live (the input of s dies at
  // s, the output is read at s + 1, c is the network output). In SRAM they count when resident in
  // SRAM, or in the arena where the arena is SRAM (U55); in the arena whenever they are in the arena.
  for (const char* name : {"ethos-u55-256", "ethos-u65-256"}) {
    SCOPED_TRACE(name);
    const arch::Arch a = preset(name);
    SearchOptions o;
    o.fusion = false;
    o.compare_without_fusion = false;
    o.objectives = all_objectives();
    const SearchResult r = map_network(a, tiny("tiny_chain"), o, {});
    ASSERT_TRUE(r.joined && r.problem);
    const JoinProblem& p = *r.problem;
    const bool arena_is_sram = a.feature_map_storage == arch::MemArea::Sram;
    ASSERT_GT(r.joined->front.size(), 1u);
    for (const FrontPoint& point : r.joined->front) {
      const PointMemory m = point_memory(p, point);
      ASSERT_EQ(m.sram_bytes.size(), 3u);
      for (std::size_t s = 0; s < 3; ++s) {
        const PmappingGroup& g = p.steps[s].groups[point.group[s]];
        const PmappingRow& row = g.rows[point.row[s]];
        const JoinTensor& in = p.tensors[p.steps[s].inputs[0]];
        const JoinTensor& out = p.tensors[p.steps[s].output];
        const TensorCompat& ci = g.compat[0];
        const TensorCompat& co = g.compat.back();
        const auto in_sram = [&](const TensorCompat& c) {
          return c.residence == Residence::Sram || (c.residence == Residence::Arena && arena_is_sram);
        };
        double sram = row.sram_bytes;
        double arena = 0.0;
        if (in_sram(ci)) sram += placed_bytes(in, ci);
        if (in_sram(co)) sram += placed_bytes(out, co);
        if (ci.residence == Residence::Arena) arena += placed_bytes(in, ci);
        if (co.residence == Residence::Arena) arena += placed_bytes(out, co);
        EXPECT_EQ(m.sram_bytes[s], sram) << "step " << s;
        EXPECT_EQ(m.arena_bytes[s], arena) << "step " << s;
      }
      EXPECT_EQ(*std::max_element(m.sram_bytes.begin(), m.sram_bytes.end()), point.peak_sram_bytes);
    }
  }
}

TEST(PointMemory, TheLargestLayerIsThePointsPeakOnEveryFront) {
  const std::vector<workloads::Workload> networks = {testing::chain5(), testing::pair_residual(), testing::peak_then_pair(),
                                                     testing::branch_rejoin(), tiny("tiny_residual")};
  for (const char* name : {"ethos-u55-64", "ethos-u65-256"}) {
    const arch::Arch a = preset(name);
    for (const workloads::Workload& w : networks) {
      SCOPED_TRACE(std::string(name) + " " + w.name);
      SearchOptions o;
      o.compare_without_fusion = false;
      o.objectives = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
      const SearchResult r = map_network(a, w, o, {});
      ASSERT_TRUE(r.joined && r.problem);
      ASSERT_FALSE(r.joined->front.empty());
      int fused_points = 0;
      for (const FrontPoint& point : r.joined->front) {
        const PointMemory m = point_memory(*r.problem, point);
        EXPECT_EQ(*std::max_element(m.sram_bytes.begin(), m.sram_bytes.end()), point.peak_sram_bytes);
        for (std::size_t s = 0; s < point.group.size(); ++s) {
          const PmappingGroup& g = r.problem->steps[s].groups[point.group[s]];
          if (g.compat.back().residence == Residence::Rolling) {
            ++fused_points;
            break;
          }
        }
      }
      // On the U55 (the arena is the SRAM) fusion saves SRAM, so the 3-objective front uses it: the
      // check above then covers rolling buffers and cascades.
      if (a.feature_map_storage == arch::MemArea::Sram && (w.name == "chain5" || w.name == "pair_residual")) {
        EXPECT_GT(fused_points, 0) << "the front should use fusion";
      }
    }
  }
}

}  // namespace
}  // namespace npumap::search
