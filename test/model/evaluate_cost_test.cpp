// evaluate_cost() is the search's fast path of the cycle model: a pass prepared once (prepare_pass),
// then evaluated for many block configs and weight double-buffer depths. It must give exactly (==,
// not within a tolerance) evaluate()'s total cycles, off-chip bytes and energy for every variant:
// the per-layer stage and `mapper eval` must never disagree. Likewise evaluate_area_cost(), which
// Vela's schedule prices its candidates with: evaluate()'s every cycle figure and every memory's
// unscaled bytes (area_bytes). Checked on the 175 reference passes, each with its own block config
// and with others of several shapes.

#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "model/evaluate.hpp"
#include "model/pass_json.hpp"

namespace npumap::model {
namespace {

TEST(EvaluateCost, EqualsEvaluateForEveryBlockConfigOfAPreparedPass) {
  std::ifstream in("test/data/npu_reference_passes.json");
  ASSERT_TRUE(in) << "test/data/npu_reference_passes.json";
  const auto records = nlohmann::json::parse(in);
  ASSERT_GT(records.size(), 100u);
  // [ofm_h, ofm_w, ifm_d, ofm_d]: small, square, deep, wide, and each record's own.
  const std::vector<std::array<int, 4>> configs = {{1, 1, 8, 8}, {2, 2, 8, 16}, {4, 8, 16, 16}, {8, 8, 32, 32},
                                                   {16, 2, 8, 64}, {2, 32, 64, 8}, {32, 32, 128, 128}};
  std::size_t checked = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const PassInput base = read_pass_input(records[i].at("input"), "npu_reference_passes.json",
                                           "records[" + std::to_string(i) + "].input");
    const PreparedPass prepared = prepare_pass(base.arch, base.pass);
    std::vector<std::array<int, 4>> tried = configs;
    tried.push_back(base.pass.block_config);
    for (const std::array<int, 4>& bc : tried) {
      for (const std::optional<int> depth : {base.pass.weights_double_buffer_depth, std::optional<int>{}, std::optional<int>{16}}) {
        Pass p = base.pass;
        p.block_config = bc;
        if (p.weights) p.weights_double_buffer_depth = depth;
        const PassMetrics full = evaluate(base.arch, p);
        const PassCost cost = evaluate_cost(base.arch, prepared, p);
        SCOPED_TRACE("record " + std::to_string(i) + " block " + std::to_string(bc[0]) + "," + std::to_string(bc[1]) + "," +
                     std::to_string(bc[2]) + "," + std::to_string(bc[3]));
        EXPECT_EQ(cost.total_cycles, full.total_cycles());
        EXPECT_EQ(cost.off_chip_bytes, off_chip_bytes(full));
        EXPECT_EQ(cost.energy_pj, full.energy_pj);
        const PassAreaCost areas = evaluate_area_cost(base.arch, prepared, p);
        for (int k = 0; k < kNumPassCycles; ++k) EXPECT_EQ(areas.cycles[static_cast<std::size_t>(k)], full.cycles[static_cast<std::size_t>(k)]) << k;
        for (int a = 0; a < arch::kNumMemAreas; ++a)
          EXPECT_EQ(areas.area_bytes[static_cast<std::size_t>(a)], area_bytes(full, static_cast<arch::MemArea>(a))) << a;
        EXPECT_EQ(areas.total_cycles(), full.total_cycles());
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 2000u);
}

}  // namespace
}  // namespace npumap::model
