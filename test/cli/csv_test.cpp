// Every CSV the tool writes loads with a strict reader: each row has exactly as many fields as the
// header (quoted fields may hold commas). Regression: sweep.csv rows of a workload without a valid
// mapping had one field too many.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace npumap::cli_test {
namespace {

/// Fields of one CSV line (RFC 4180 quoting: "a,b" is one field, "" is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote: " << line;
  return out;
}

void expect_rectangular(const fs::path& file) {
  const std::vector<std::string> lines = lines_of(read_text(file));
  ASSERT_FALSE(lines.empty()) << file;
  const std::size_t width = csv_fields(lines[0]).size();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(csv_fields(lines[i]).size(), width) << file << " line " << i + 1 << ": " << lines[i];
  }
}

TEST(Csv, SweepFilesAreRectangularAlsoWithoutAValidMapping) {
  // 1 KiB of SRAM holds no mapping of tiny_chain (its input alone is 2 KiB): a no_valid_mapping row.
  TempDir tmp;
  write_text(tmp / "spec.yaml",
             "name: csv\nworkloads: [" + std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_chain.yaml]\n"
             "base: ethos-u55-256\ngrid:\n  sram_capacity: [1KiB, 1MiB]\n");
  const RunResult r = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_text(tmp / "out" / "sweep.csv").find("no_valid_mapping"), std::string::npos);
  // The summary names the point where the workload has no valid mapping (p1: 1 KiB).
  EXPECT_NE(r.out.find("no valid mapping on 1 point: p1"), std::string::npos) << r.out;
  expect_rectangular(tmp / "out" / "sweep.csv");
  expect_rectangular(tmp / "out" / "pareto.csv");

  // pareto.csv has sweep.csv's columns, and its rows are sweep.csv's rows marked cross_arch_pareto.
  const std::vector<std::string> sweep = lines_of(read_text(tmp / "out" / "sweep.csv"));
  const std::vector<std::string> pareto = lines_of(read_text(tmp / "out" / "pareto.csv"));
  ASSERT_GE(pareto.size(), 2u);
  EXPECT_EQ(pareto[0], sweep[0]);
  for (std::size_t i = 1; i < pareto.size(); ++i) {
    EXPECT_NE(std::find(sweep.begin(), sweep.end(), pareto[i]), sweep.end()) << pareto[i];
    const std::vector<std::string> fields = csv_fields(pareto[i]);
    const std::vector<std::string> names = csv_fields(pareto[0]);
    const auto at = static_cast<std::size_t>(std::find(names.begin(), names.end(), "cross_arch_pareto") - names.begin());
    ASSERT_LT(at, fields.size());
    EXPECT_EQ(fields[at], "1") << pareto[i];
  }
  // latency_ms is cycles / clock in ms to the nanosecond: at most 6 decimals, no float noise.
  const std::vector<std::string> head = csv_fields(sweep[0]);
  const auto column = static_cast<std::size_t>(std::find(head.begin(), head.end(), "latency_ms") - head.begin());
  ASSERT_LT(column, head.size());
  for (std::size_t i = 1; i < sweep.size(); ++i) {
    const std::string ms = csv_fields(sweep[i])[column];
    const std::size_t dot = ms.find('.');
    if (dot != std::string::npos) {
      EXPECT_LE(ms.size() - dot - 1, 6u) << ms;
    }
  }
}

TEST(Csv, FrontCsvIsRectangular) {
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "workloads/tiny_residual.yaml", "--keep-pareto", "--objectives",
                                  "cycles,offchip_bytes,sram", "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_rectangular(tmp / "out" / "front.csv");
  expect_rectangular(tmp / "out" / "layers.csv");
}

TEST(Csv, FrontCsvFusedLayersCountsEachPointsFusions) {
  // front.csv's fused_layers of a point is the number of its layer mappings in result.json with
  // fused_with_next. Regression: a point that reused a layer mapping of an earlier point (person_detect's
  // second point shares all but a few layers with the first) counted only its new layers' fusions.
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "workloads/models/tflm__person_detect.tflite", "--keep-pareto", "--out",
                                  (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json result = nlohmann::json::parse(read_text(tmp / "out" / "result.json"));
  const std::vector<std::string> lines = lines_of(read_text(tmp / "out" / "front.csv"));
  std::vector<std::string> rows;
  for (const std::string& l : lines)
    if (!l.empty() && l[0] != '#') rows.push_back(l);
  const std::vector<std::string> head = csv_fields(rows.at(0));
  const auto column = static_cast<std::size_t>(std::find(head.begin(), head.end(), "fused_layers") - head.begin());
  ASSERT_LT(column, head.size());
  ASSERT_EQ(rows.size(), result["front"].size() + 1);
  ASSERT_GE(result["front"].size(), 2u);
  std::size_t reusing = 0;  // points after the first: they reuse layer mappings
  for (std::size_t i = 0; i < result["front"].size(); ++i) {
    int fused = 0;
    for (const auto& ref : result["front"][i]["layers"]) fused += result["layer_mappings"][ref.get<std::size_t>()]["fused_with_next"].get<bool>();
    EXPECT_EQ(csv_fields(rows[i + 1])[column], std::to_string(fused)) << "point " << i;
    reusing += i > 0 && fused > 0;
  }
  EXPECT_GT(reusing, 0u) << "no later point fuses: the check proves nothing";
}

TEST(SweepRanking, AFasterClockWinsAtEqualCycles) {
  // The NPU's memory bandwidth per cycle does not depend on the core clock, so both points map
  // tiny_chain in the same cycles; at 1 GHz that is 4x less time than at 250 MHz. Ranked on time only
  // the 1 GHz point is on the cross-arch front (ranked on cycles, the first point won as a duplicate).
  TempDir tmp;
  write_text(tmp / "spec.yaml",
             "name: clocks\nworkloads: [" + std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_chain.yaml]\n"
             "base: ethos-u55-256\ngrid:\n  core_clock: [250e6, 1e9]\n");
  const RunResult r = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> pareto = lines_of(read_text(tmp / "out" / "pareto.csv"));
  const std::vector<std::string> head = csv_fields(pareto[0]);
  const auto clock = static_cast<std::size_t>(std::find(head.begin(), head.end(), "core_clock_hz") - head.begin());
  ASSERT_LT(clock, head.size());
  ASSERT_GE(pareto.size(), 2u);
  for (std::size_t i = 1; i < pareto.size(); ++i) EXPECT_EQ(std::stod(csv_fields(pareto[i])[clock]), 1e9) << pareto[i];
}

TEST(Csv, SweepVelaColumnsAreEachPointsVelaSchedule) {
  // sweep.csv's vela_* columns hold the Vela schedule of the workload on the row's point: on the
  // preset's own SRAM (4 MiB) they equal a plain run's vela_baseline on that preset; on 1 KiB, where
  // nothing maps, they are empty.
  TempDir tmp;
  write_text(tmp / "spec.yaml",
             "name: vela\nworkloads: [" + std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_residual.yaml]\n"
             "base: ethos-u55-256\ngrid:\n  sram_capacity: [1KiB, 4MiB]\n");
  const RunResult r = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const RunResult run = run_mapper({"--workload", std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_residual.yaml",
                                    "--arch", "ethos-u55-256", "--out", (tmp / "run").string(), "-q"});
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json vela = nlohmann::json::parse(read_text(tmp / "run" / "result.json"))["vela_baseline"];
  ASSERT_TRUE(vela.is_object());

  const std::vector<std::string> lines = lines_of(read_text(tmp / "out" / "sweep.csv"));
  const std::vector<std::string> head = csv_fields(lines[0]);
  const auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  ASSERT_LT(col("vela_energy_pj"), head.size());
  int p1 = 0, p2 = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> f = csv_fields(lines[i]);
    if (f[col("point")] == "p1") {
      ++p1;
      for (const char* c : {"vela_cycles", "vela_latency_ms", "vela_offchip_bytes", "vela_peak_sram_bytes", "vela_energy_pj"})
        EXPECT_EQ(f[col(c)], "") << c;
    } else {
      ++p2;
      EXPECT_EQ(std::stod(f[col("vela_cycles")]), vela["cycles"].get<double>());
      EXPECT_EQ(std::stod(f[col("vela_offchip_bytes")]), vela["offchip_bytes"].get<double>());
      EXPECT_EQ(std::stod(f[col("vela_peak_sram_bytes")]), vela["sram_bytes"].get<double>());
      // latency at the preset's clock: cycles / clock in ms.
      EXPECT_NEAR(std::stod(f[col("vela_latency_ms")]),
                  vela["cycles"].get<double>() / std::stod(f[col("core_clock_hz")]) * 1e3, 1e-6);
    }
  }
  EXPECT_EQ(p1, 1);
  EXPECT_GE(p2, 1);
}

}  // namespace
}  // namespace npumap::cli_test
