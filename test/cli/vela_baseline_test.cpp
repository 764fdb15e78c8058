// Vela's schedule from the command line: --baseline-only reports the same point a full run carries
// as vela_baseline, --block-config-limit reaches the schedule and is recorded, and bad values of it
// are one-line usage errors.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using VelaJson = nlohmann::json;

VelaJson run_result(const TempDir& tmp, const std::string& name, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--workload", std::string(NPUMAP_SOURCE_DIR) + "/workloads/models/tflm__person_detect.tflite",
                                   "--arch", "ethos-u55-128", "--out", (tmp / name).string(), "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return VelaJson::parse(read_text(tmp / name / "result.json"));
}

TEST(VelaBaselineCli, BaselineOnlyIsTheFullRunsVelaPoint) {
  TempDir tmp;
  const VelaJson full = run_result(tmp, "full", {});
  const VelaJson only = run_result(tmp, "only", {"--baseline-only"});
  ASSERT_TRUE(full.contains("vela_baseline"));
  ASSERT_EQ(only["front"].size(), 1u);
  // The same schedule: the one-point front is Vela's point of the full run, to the cycle and byte.
  EXPECT_EQ(only["front"][0]["cycles"], full["vela_baseline"]["cycles"]);
  EXPECT_EQ(only["front"][0]["offchip_bytes"], full["vela_baseline"]["offchip_bytes"]);
  EXPECT_EQ(only["front"][0]["sram_bytes"], full["vela_baseline"]["sram_bytes"]);
  EXPECT_EQ(full["provenance"]["options"]["block_config_limit"], 16);
  // Vela's point is never better than every front point in every objective (on or behind the front).
  bool dominates_front = true;
  for (const VelaJson& p : full["front"]) {
    const bool better = full["vela_baseline"]["cycles"].get<double>() < p["cycles"].get<double>() &&
                        full["vela_baseline"]["offchip_bytes"].get<double>() < p["offchip_bytes"].get<double>();
    dominates_front = dominates_front && better;
  }
  EXPECT_FALSE(dominates_front);
}

TEST(VelaBaselineCli, NoFrontPointAtVelasSramIsSaidInWords) {
  // hello_world on ethos-u65-256: Vela's schedule holds 32 B in SRAM, and the default front (cycles,
  // off-chip bytes) keeps only points that buy speed with more SRAM, so no front point is within
  // Vela's SRAM: front_best_cycles_within_sram is null and the text report says so in words.
  TempDir tmp;
  const std::vector<std::string> args = {"--workload", std::string(NPUMAP_SOURCE_DIR) + "/workloads/models/tflm__hello_world_int8.tflite",
                                         "--arch", "ethos-u65-256", "--out", (tmp / "hw").string()};
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const VelaJson doc = VelaJson::parse(read_text(tmp / "hw" / "result.json"));
  const double vela_sram = doc["vela_baseline"]["sram_bytes"].get<double>();
  bool any_within = false;
  for (const VelaJson& p : doc["front"]) any_within = any_within || p["sram_bytes"].get<double>() <= vela_sram;
  ASSERT_FALSE(any_within) << "the case no longer shows a front wholly above Vela's SRAM; pick another";
  EXPECT_TRUE(doc["vela_baseline"]["front_best_cycles_within_sram"].is_null());
  EXPECT_NE(r.out.find("at <= Vela's SRAM: no front point uses that little"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("n/a latency"), std::string::npos) << r.out;
}

/// Rows of a CSV whose quoted fields hold no quotes or line breaks (ofm_shape's "[1,48,48,8]").
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(text)) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    rows.push_back(fields);
  }
  return rows;
}

TEST(VelaBaselineCli, LayersBesideVelaAgreeWithBothLayerFiles) {
  // layers_vs_vela.csv pairs each layer of layers.csv (the chosen point) with the same layer of
  // layers_vela.csv: its cycles columns are those files' cycles, and `changed` names exactly the
  // choices whose columns differ.
  TempDir tmp;
  run_result(tmp, "cmp", {});
  const auto both = csv_rows(read_text(tmp / "cmp" / "layers_vs_vela.csv"));
  const auto chosen = csv_rows(read_text(tmp / "cmp" / "layers.csv"));
  const auto vela = csv_rows(read_text(tmp / "cmp" / "layers_vela.csv"));
  ASSERT_GT(both.size(), 10u);
  ASSERT_EQ(both.size(), chosen.size());
  ASSERT_EQ(both.size(), vela.size());
  const auto at = [](const std::vector<std::string>& head, const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << name;
    return static_cast<std::size_t>(it - head.begin());
  };
  int changed_rows = 0;
  for (std::size_t i = 1; i < both.size(); ++i) {
    const auto& row = both[i];
    ASSERT_EQ(row.size(), both[0].size()) << i;
    EXPECT_EQ(row[0], chosen[i][0]);
    EXPECT_EQ(row[at(both[0], "cycles_chosen")], chosen[i][at(chosen[0], "cycles")]);
    EXPECT_EQ(row[at(both[0], "cycles_vela")], vela[i][at(vela[0], "cycles")]);
    const std::string changed = row[at(both[0], "changed")];
    for (const char* choice : {"block_config", "traversal", "weights"}) {
      const bool differs = chosen[i][at(chosen[0], choice)] != vela[i][at(vela[0], choice)];
      EXPECT_EQ(differs, changed.find(choice) != std::string::npos) << row[0] << " " << choice;
    }
    changed_rows += changed.empty() ? 0 : 1;
  }
  EXPECT_GT(changed_rows, 0);  // the front's chosen point improves on Vela's schedule somewhere
}

TEST(VelaBaselineCli, BlockConfigLimitReachesTheSchedule) {
  TempDir tmp;
  const VelaJson all = run_result(tmp, "all", {"--baseline-only", "--block-config-limit", "0"});
  const VelaJson one = run_result(tmp, "one", {"--baseline-only", "--block-config-limit", "1"});
  EXPECT_EQ(all["provenance"]["options"]["block_config_limit"], 0);
  EXPECT_EQ(one["provenance"]["options"]["block_config_limit"], 1);
  // A limit of 1 keeps the first and last config of Vela's sort per pass, 0 keeps all: person_detect's
  // passes have many more than two valid configs, so the limit must change the schedule.
  EXPECT_NE(all["front"][0]["cycles"], one["front"][0]["cycles"]);
}

TEST(VelaBaselineCli, BadBlockConfigLimitIsAUsageError) {
  for (const char* bad : {"-1", "x", "1.5"}) {
    const RunResult r = run_mapper({"--workload", std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_chain.yaml",
                                    "--block-config-limit", bad, "--out", "/nonexistent/never", "-q"});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--block-config-limit"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace npumap::cli_test
