// Time and utilisation in result.json, front.csv and the text report, derived by hand for tiny_chain
// on ethos-u55-256 (500 MHz core clock, 256 MACs x 1 core per cycle at peak):
//   MACs: conv_a 16*16*16 outputs x 3*3*8 = 294,912; conv_b (stride 2) 8*8*16 x 3*3*16 = 147,456;
//         conv_c 8*8*8 x 1*1*16 = 8,192; total 450,560.
//   latency_ms = cycles / 500e6 s = cycles / 500,000 ms (to the nanosecond);
//   macs_per_cycle = 450,560 / cycles; utilisation = macs_per_cycle / 256.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

TEST(Timing, LatencyAndUtilisationFollowFromCyclesClockAndMacs) {
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--keep-pareto", "--out", (tmp / "out").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(j["arch"]["core_clock_hz"].get<double>(), 500e6);
  EXPECT_EQ(j["arch"]["peak_macs_per_cycle"].get<int>(), 256);
  ASSERT_FALSE(j["front"].empty());
  for (const Json& p : j["front"]) {
    const double cycles = p["cycles"].get<double>();
    EXPECT_DOUBLE_EQ(p["latency_ms"].get<double>(), std::round(cycles / 500e6 * 1e9) / 1e6);
    EXPECT_DOUBLE_EQ(p["inferences_per_s"].get<double>(), 500e6 / cycles);
    EXPECT_DOUBLE_EQ(p["macs_per_cycle"].get<double>(), 450560.0 / cycles);
    EXPECT_DOUBLE_EQ(p["utilisation"].get<double>(), 450560.0 / cycles / 256.0);
    const Json& layers = p["layers"];
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(layers[0]["macs"].get<std::int64_t>(), 294912);
    EXPECT_EQ(layers[1]["macs"].get<std::int64_t>(), 147456);
    EXPECT_EQ(layers[2]["macs"].get<std::int64_t>(), 8192);
  }
  // The report says the same, and shows the arch as resolved.
  EXPECT_NE(r.out.find("arch: 500 MHz, 256 MACs/cycle peak"), std::string::npos) << r.out;
  const double best = j["front"][0]["cycles"].get<double>();
  EXPECT_NE(r.out.find(fmt::format("{:.1f}% of the 256 peak", 100.0 * 450560.0 / best / 256.0)), std::string::npos) << r.out;
  // front.csv carries the columns.
  const std::string csv = read_text(tmp / "out" / "front.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,cycles,offchip_bytes,sram_bytes,energy_pj,edp,fused_layers,chosen,latency_ms,inferences_per_s,"
            "macs_per_cycle,utilisation");
}

}  // namespace
}  // namespace npumap::cli_test
