// front.svg reads honestly: distinct tick labels in human units (ms, KiB/MiB), gridlines, a legend
// whose labels differ, a note when an axis zooms into a tiny spread, and a message instead of empty
// axes when there is no front.

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace npumap::cli_test {
namespace {

/// The texts of the <text class="cls"> elements of an SVG.
std::vector<std::string> texts_of_class(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex re("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

void expect_distinct(const std::vector<std::string>& labels, const std::string& what) {
  EXPECT_GE(labels.size(), 2u) << what;
  EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size()) << what;
}

TEST(FrontSvg, TicksAreDistinctAndInHumanUnits) {
  // resnet18's front spans only 0.04% in latency: labels must still differ, and the zoom is stated.
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "resnet18", "--keep-pareto", "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = read_text(tmp / "out" / "front.svg");
  expect_distinct(texts_of_class(svg, "xtick"), "x ticks");
  expect_distinct(texts_of_class(svg, "ytick"), "y ticks");
  EXPECT_NE(svg.find("latency at 500 MHz (ms)"), std::string::npos);
  EXPECT_NE(svg.find("off-chip traffic per inference (MiB)"), std::string::npos);
  EXPECT_NE(svg.find("peak SRAM (KiB)"), std::string::npos);
  EXPECT_NE(svg.find("class=\"grid\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"zoom\""), std::string::npos) << "a 0.04% spread must be marked";
  const std::vector<std::string> legend = texts_of_class(svg, "legend");
  EXPECT_EQ(std::set<std::string>(legend.begin(), legend.end()).size(), legend.size());
}

TEST(FrontSvg, NoFrontGivesAMessageNotEmptyAxes) {
  TempDir tmp;
  write_text(tmp / "arch.yaml", "preset: ethos-u55-256\nsram_capacity: 1KiB\n");
  const RunResult r = run_mapper({"--workload", "tiny_chain", "--arch", (tmp / "arch.yaml").string(), "--out",
                                  (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 1) << r.err;
  const std::string svg = read_text(tmp / "out" / "front.svg");
  EXPECT_NE(svg.find("Nothing to plot: no valid mapping"), std::string::npos) << svg;
  EXPECT_TRUE(texts_of_class(svg, "xtick").empty());
}

TEST(FrontSvg, WithoutKeepParetoEveryFrontPointIsPlotted) {
  // tiny_chain on ethos-u65-256 with three objectives has a front of several points (73 at ε = 0.01
  // when written). Without --keep-pareto, result.json keeps one point in `front` but every point's
  // values in `front_values`; the oracle is the same run with --keep-pareto, whose `front` lists every
  // point in full: the rows must be its points' values, in order, and front.svg must not depend on
  // the option (the chosen point is #0 in both).
  TempDir tmp;
  const std::vector<std::string> args{"--workload", "tiny_chain", "--arch", "ethos-u65-256", "--objectives",
                                      "cycles,offchip_bytes,sram", "--epsilon", "0.01", "-q"};
  std::vector<std::string> plain = args, kept = args;
  plain.insert(plain.end(), {"--out", (tmp / "plain").string()});
  kept.insert(kept.end(), {"--keep-pareto", "--out", (tmp / "kept").string()});
  const RunResult a = run_mapper(plain);
  ASSERT_EQ(a.status, 0) << a.err;
  const RunResult b = run_mapper(kept);
  ASSERT_EQ(b.status, 0) << b.err;
  const auto r = nlohmann::json::parse(read_text(tmp / "plain" / "result.json"));
  const auto full = nlohmann::json::parse(read_text(tmp / "kept" / "result.json"));
  const std::size_t n = r.at("front_size").get<std::size_t>();
  ASSERT_GE(n, 2u) << "the case needs a front of several points";
  ASSERT_EQ(r.at("front").size(), 1u);
  EXPECT_EQ(r.at("front_values_columns"), nlohmann::json({"cycles", "offchip_bytes", "sram_bytes", "energy_pj"}));
  ASSERT_EQ(r.at("front_values").size(), n);
  ASSERT_EQ(full.at("front").size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = full["front"][i];
    EXPECT_EQ(r["front_values"][i], nlohmann::json({p["cycles"], p["offchip_bytes"], p["sram_bytes"], p["energy_pj"]})) << i;
  }
  EXPECT_EQ(full.at("front_values"), r.at("front_values"));
  const std::string svg = read_text(tmp / "plain" / "front.svg");
  std::size_t points = 0;
  for (std::size_t i = svg.find("class=\"point\""); i != std::string::npos; i = svg.find("class=\"point\"", i + 1)) ++points;
  EXPECT_EQ(points, 2 * n) << "every front point in both panels";
  EXPECT_EQ(svg.find("rerun with --keep-pareto"), std::string::npos);
  EXPECT_EQ(svg, read_text(tmp / "kept" / "front.svg"));
}

TEST(ParetoSvg, HumanUnitsFamiliesAndFailedPoints) {
  // p1 (1 KiB of SRAM) has no valid mapping of tiny_chain: the panel names it; the U65 point is a
  // square, the U55 points circles; tick labels are distinct and in ms / KiB.
  TempDir tmp;
  write_text(tmp / "spec.yaml",
             "name: svg\nworkloads: [" + std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_chain.yaml]\n"
             "base: ethos-u55-256\ngrid:\n  sram_capacity: [1KiB, 1MiB, 4MiB]\npoints:\n"
             "  - {accelerator: ethos-u65-256, system_config: Ethos_U65_High_End, memory_mode: Dedicated_Sram}\n");
  const RunResult r = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = read_text(tmp / "out" / "pareto.svg");
  const std::vector<std::string> failed = texts_of_class(svg, "failed");
  ASSERT_EQ(failed.size(), 1u) << svg;
  EXPECT_EQ(failed[0], "no valid mapping on 1 point: p1");
  expect_distinct(texts_of_class(svg, "xtick"), "x ticks");
  expect_distinct(texts_of_class(svg, "ytick"), "y ticks");
  EXPECT_NE(svg.find("latency, ms"), std::string::npos);
  EXPECT_NE(svg.find(" KiB</text>"), std::string::npos);
  EXPECT_NE(svg.find("<rect class=\""), std::string::npos) << "the U65 point is a square";
  EXPECT_NE(svg.find("<circle class=\""), std::string::npos) << "the U55 points are circles";
}

}  // namespace
}  // namespace npumap::cli_test
