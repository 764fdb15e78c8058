// Time and utilisation in result.json, front.csv and the text report, derived by hand for tiny_chain
// on ethos-u55-256 (500 MHz core clock, 256 MACs x 1 core per cycle at peak):
//   MACs: conv_a 16*16*16 outputs x 3*3*8 = 294,912; conv_b (stride 2) 8*8*16 x 3*3*16 = 147,456;
//         conv_c 8*8*8 x 1*1*16 = 8,192; total 450,560.
//   latency_ms = cycles / 500e6 s = cycles / 500,000 ms (to the nanosecond);
//   macs_per_cycle = 450,560 / cycles; utilisation = macs_per_cycle / 256.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>
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
    const std::vector<Json> layers = layers_of(j, p);
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(layers[0]["macs"].get<std::int64_t>(), 294912);
    EXPECT_EQ(layers[1]["macs"].get<std::int64_t>(), 147456);
    EXPECT_EQ(layers[2]["macs"].get<std::int64_t>(), 8192);
  }
  // The report says the same, and shows the arch as resolved.
  EXPECT_NE(r.out.find("  500 MHz, 256 MACs/cycle peak"), std::string::npos) << r.out;
  const double best = j["front"][0]["cycles"].get<double>();
  EXPECT_NE(r.out.find(fmt::format("{:.1f}% of the 256 peak", 100.0 * 450560.0 / best / 256.0)), std::string::npos) << r.out;
  // An exact front's front.csv is plain CSV: the header first.
  const std::string text = read_text(tmp / "out" / "front.csv");
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "point,cycles,offchip_bytes,sram_bytes,energy_pj,edp,fused_layers,chosen,latency_ms,inferences_per_s,"
            "macs_per_cycle,utilisation");
  // An ε-front's states its guarantee in a comment line first, then carries the same columns.
  const RunResult eps = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--objectives", "cycles,offchip_bytes,sram",
                                    "--epsilon", "0.01", "--out", (tmp / "eps").string(), "-q"});
  ASSERT_EQ(eps.status, 0) << eps.err;
  const std::string approx = read_text(tmp / "eps" / "front.csv");
  ASSERT_EQ(approx.rfind("# ε-Pareto front with ε = 0.01: ", 0), 0u) << approx;
  const std::string csv = approx.substr(approx.find('\n') + 1);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), text.substr(0, text.find('\n')));
}

TEST(Timing, LayersCsvBreaksDownEachLayerOfThePoint) {
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--keep-pareto", "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(read_text(tmp / "out" / "result.json"));
  const std::vector<std::string> lines = lines_of(read_text(tmp / "out" / "layers.csv"));
  ASSERT_EQ(lines.size(), 4u);  // a header and tiny_chain's three layers
  std::vector<std::string> head;
  {
    std::stringstream ss(lines[0]);
    for (std::string cell; std::getline(ss, cell, ',');) head.push_back(cell);
  }
  const auto col = [&head](const std::string& name) {
    return static_cast<std::size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  // Each layer's cycles are the largest component (the pass's total is their maximum), bound_by names
  // it, and the layers add up to the chosen point's cycles.
  const std::vector<std::string> components = {"npu_cycles", "sram_cycles", "dram_cycles", "onchip_flash_cycles",
                                               "offchip_flash_cycles"};
  const std::vector<std::string> names = {"Npu", "SramAccess", "DramAccess", "OnChipFlashAccess", "OffChipFlashAccess"};
  double sum = 0.0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    // The quoted shape "[1,16,16,16]" spans three extra commas; the fields before it are plain.
    const std::string row = lines[i];
    const std::size_t close = row.find("]\"");
    ASSERT_NE(close, std::string::npos) << row;
    std::vector<std::string> rest;
    std::stringstream tail(row.substr(close + 3));
    for (std::string cell; std::getline(tail, cell, ',');) rest.push_back(cell);
    const auto at = [&](const std::string& name) { return rest[col(name) - 3]; };
    const double cycles = std::stod(at("cycles"));
    double largest = -1.0;
    std::string largest_name;
    for (std::size_t c = 0; c < components.size(); ++c) {
      const double v = std::stod(at(components[c]));
      if (v > largest) largest = v, largest_name = names[c];
    }
    EXPECT_EQ(cycles, largest) << row;
    EXPECT_EQ(at("bound_by"), largest_name) << row;
    sum += cycles;
  }
  EXPECT_EQ(sum, j["front"][0]["cycles"].get<double>());
  // `mapper show DIR --point 0 --format csv` is layers.csv; a point the result does not keep is an error.
  const RunResult shown = run_mapper({"show", (tmp / "out").string(), "--point", "0", "--format", "csv"});
  EXPECT_EQ(shown.status, 0) << shown.err;
  EXPECT_EQ(shown.out, read_text(tmp / "out" / "layers.csv"));
  const RunResult missing = run_mapper({"show", (tmp / "out").string(), "--point", "99"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(lines_of(missing.err).size(), 1u) << missing.err;
}

}  // namespace
}  // namespace npumap::cli_test
