// Every point of a saved front can be re-evaluated: `mapper eval result.json` runs the cycle model
// on each layer's pass, and per point the layers' Total cycles (times the layer's repeat count) and
// off-chip bytes add up to the point's totals.

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

TEST(EvalResult, FrontPassesReproduceTheTotals) {
  for (const char* arch : {"ethos-u55-256", "ethos-u65-256"}) {
    TempDir tmp;
    const RunResult run = run_mapper({"--workload", "workloads/tiny_residual.yaml", "--arch", arch, "--keep-pareto",
                                      "--out", (tmp / "out").string(), "-q"});
    ASSERT_EQ(run.status, 0) << run.err;
    const Json result = Json::parse(read_text(tmp / "out" / "result.json"));
    const RunResult ev = run_mapper({"eval", (tmp / "out" / "result.json").string()});
    ASSERT_EQ(ev.status, 0) << ev.err;
    const Json evaluated = Json::parse(ev.out);
    std::map<std::string, Json> by_id;
    for (const auto& r : evaluated) by_id[r["id"].get<std::string>()] = r["result"];
    const Json& front = result["front"];
    ASSERT_FALSE(front.empty());
    for (std::size_t p = 0; p < front.size(); ++p) {
      double cycles = 0.0;
      double offchip = 0.0;
      for (const auto& layer : front[p]["layers"]) {
        const std::string id = "point" + std::to_string(p) + ":" + layer["layer"].get<std::string>();
        ASSERT_TRUE(by_id.count(id)) << id;
        const Json& m = by_id[id];
        const double repeat = layer["repeat"].get<double>();
        const double total = m["cycles"]["Total"].get<double>() * repeat;
        EXPECT_EQ(total, layer["cycles"].get<double>()) << id;
        double layer_offchip = 0.0;
        for (const auto& [area, bytes] : m["bandwidth_totals_by_area"].items()) {
          if (area == "Dram" || area == "OffChipFlash") layer_offchip += bytes.get<double>();
        }
        EXPECT_DOUBLE_EQ(layer_offchip * repeat, layer["offchip_bytes"].get<double>()) << id;
        cycles += total;
        offchip += layer_offchip * repeat;
      }
      EXPECT_EQ(cycles, front[p]["cycles"].get<double>()) << arch << " point " << p;
      EXPECT_DOUBLE_EQ(offchip, front[p]["offchip_bytes"].get<double>()) << arch << " point " << p;
    }
  }
}

}  // namespace
}  // namespace npumap::cli_test
