// Messages that say what happened: a stopped run says it was stopped (and reports the best complete
// mappings found so far when there are any), `show --point` beyond the front says how many points
// there are, `mapper` alone prints the usage, a tab in YAML is named as a tab, and a sweep summary
// compares latency in ms across clocks.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

/// The fields of a CSV line ("" quoting).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

TEST(StoppedRun, SaysItWasStoppedNeverNoValidMapping) {
  // The command: three objectives on ethos-u65-256 take seconds (a front of about 14,000
  // points), so one second stops the run during the per-layer stage or the join, depending on the
  // machine. Either way the report says it was stopped; stopped during the join after the quick
  // passes, it reports their mappings.
  TempDir tmp;
  const std::vector<std::string> args = {"--workload", "resnet18", "--arch", "ethos-u65-256", "--objectives", "cycles,offchip_bytes,sram",
                                         "--time-limit", "1", "--threads", "2", "--out", (tmp / "out").string()};
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 130) << command_text(args) << "\n" << r.out << r.err;
  EXPECT_EQ(r.out.find("No valid mapping"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no valid mapping"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STOPPED EARLY (--time-limit or Ctrl-C)"), std::string::npos) << r.out;
  const Json j = Json::parse(read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(j["status"], "interrupted");
  if (j.value("front_is_partial", false)) {
    ASSERT_FALSE(j["front"].empty());
    EXPECT_NE(r.out.find("Mappings found: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stopped before the join had its exact front"), std::string::npos) << r.out;
    EXPECT_NE(read_text(tmp / "out" / "front.svg").find("not the exact front"), std::string::npos);
  } else {
    EXPECT_TRUE(!j.contains("front") || j["front"].empty());
    EXPECT_NE(r.out.find("Stopped (--time-limit or Ctrl-C) during the"), std::string::npos) << r.out;
    EXPECT_NE(read_text(tmp / "out" / "front.svg").find("the run was stopped"), std::string::npos);
  }
}

TEST(ShowPoint, BeyondTheFrontSaysHowManyPointsThereAre) {
  TempDir tmp;
  // tiny_chain's front has 2 points; without --keep-pareto the result keeps the first.
  const RunResult run = run_mapper({"--workload", "tiny_chain", "--threads", "2", "-q", "--out", (tmp / "out").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_EQ(Json::parse(read_text(tmp / "out" / "result.json"))["front_size"], 2);
  const RunResult beyond = run_mapper({"show", (tmp / "out").string(), "--point", "5"});
  EXPECT_EQ(beyond.status, 2);
  ASSERT_EQ(lines_of(beyond.err).size(), 1u) << beyond.err;
  EXPECT_NE(beyond.err.find("no front point 5: the front has 2 points, numbered 0 to 1"), std::string::npos) << beyond.err;
  const RunResult not_kept = run_mapper({"show", (tmp / "out").string(), "--point", "1"});
  EXPECT_EQ(not_kept.status, 2);
  EXPECT_NE(not_kept.err.find("front point 1 is not in this result: it keeps 1 of the front's 2 points"), std::string::npos)
      << not_kept.err;
  EXPECT_NE(not_kept.err.find("--keep-pareto"), std::string::npos) << not_kept.err;
  const RunResult chosen = run_mapper({"show", (tmp / "out").string(), "--point", "0"});
  EXPECT_EQ(chosen.status, 0) << chosen.err;
  EXPECT_EQ(chosen.out.rfind("Front point 0 of 2: time and SRAM per layer\n", 0), 0u) << chosen.out;
}

TEST(Usage, MapperAlonePrintsTheUsage) {
  const RunResult r = run_mapper({});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("--workload"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Examples:"), std::string::npos) << r.out;
  EXPECT_EQ(run_mapper({"--help"}).out, r.out);
}

TEST(YamlTabs, ATabInTheIndentationIsNamedAsATab) {
  TempDir tmp;
  write_text(tmp / "arch.yaml", "preset: ethos-u55-256\nmemory:\n\tSram: {burst_length: 64}\n");
  const RunResult a = run_mapper({"--arch", (tmp / "arch.yaml").string(), "--workload", "tiny_chain", "--out", (tmp / "a").string()});
  EXPECT_EQ(a.status, 2);
  ASSERT_EQ(lines_of(a.err).size(), 1u) << a.err;
  EXPECT_NE(a.err.find("arch.yaml:3:1: a tab character in the indentation (YAML indents with spaces only)"), std::string::npos) << a.err;
  // A tab after spaces, in a nested block; and in a workload.
  write_text(tmp / "arch2.yaml", "preset: ethos-u55-256\nmemory:\n  Sram:\n  \tburst_length: 64\n");
  const RunResult b = run_mapper({"--arch", (tmp / "arch2.yaml").string(), "--workload", "tiny_chain", "--out", (tmp / "b").string()});
  EXPECT_NE(b.err.find("arch2.yaml:4:3: a tab character"), std::string::npos) << b.err;
  write_text(tmp / "net.yaml", "name: x\ninputs:\n  - {name: x, shape: [1, 8, 8, 8], dtype: int8}\nlayers:\n\t- name: a\n");
  const RunResult c = run_mapper({"--workload", (tmp / "net.yaml").string(), "--out", (tmp / "c").string()});
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.err.find("net.yaml:5:1: a tab character in the indentation"), std::string::npos) << c.err;
  // A tab between a key and its value is YAML: not an error.
  write_text(tmp / "arch3.yaml", "preset:\tethos-u55-256\n");
  const RunResult d = run_mapper({"--arch", (tmp / "arch3.yaml").string(), "--workload", "tiny_chain", "-q", "--out", (tmp / "d").string()});
  EXPECT_EQ(d.status, 0) << d.err;
}

TEST(SweepSummary, ComparesLatencyInMsAcrossClocks) {
  // Two points that differ only in clock map tiny_chain in the same cycles; the summary's latency
  // column says which is faster (only the 1 GHz point is on the cross-arch front), and its MHz.
  TempDir tmp;
  write_text(tmp / "spec.yaml", "name: clocks\nworkloads: [" + (fs::current_path() / "workloads" / "tiny_chain.yaml").string() +
                                    "]\nbase: ethos-u55-256\ngrid:\n  core_clock: [250e6, 1e9]\n");
  const RunResult r = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string(), "-j", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("best ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compare ms, not cycles"), std::string::npos) << r.out;
  const std::vector<std::string> pareto = lines_of(read_text(tmp / "out" / "pareto.csv"));
  ASSERT_GE(pareto.size(), 2u);
  const std::vector<std::string> head = csv_cells(pareto[0]);
  const auto column = [&](const char* name) { return static_cast<std::size_t>(std::find(head.begin(), head.end(), name) - head.begin()); };
  // pareto.csv has one row per front mapping; the summary gives the point's best (least) latency.
  double best_ms = 1e300;
  for (std::size_t i = 1; i < pareto.size(); ++i) {
    const std::vector<std::string> row = csv_cells(pareto[i]);
    EXPECT_EQ(std::stod(row[column("core_clock_hz")]), 1e9);
    best_ms = std::min(best_ms, std::stod(row[column("latency_ms")]));
  }
  EXPECT_NE(r.out.find(fmt::format(" {:.4g} {:>8g} ", best_ms, 1000.0)), std::string::npos) << best_ms << "\n" << r.out;
}

}  // namespace
}  // namespace npumap::cli_test
