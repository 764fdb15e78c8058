// front.svg, the sizing view (mapper/report/front_svg.hpp), in-process on result documents made by
// hand: the staircase worked by hand and against brute force, the two panels and the three marks,
// and the edges (one point, no Vela point, no no-fusion point, thousands of points over decades,
// only the chosen point kept, no clock, an empty front). outputs_test.cpp and svg_test.cpp check
// the file a real run writes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/text_escape.hpp"
#include "mapper/report/front_svg.hpp"
#include "mapper/report/report.hpp"
#include "test/cli/xml_check.hpp"

namespace npumap::report {
namespace {

using Json = nlohmann::ordered_json;

PlotPoint pt(double cycles, double offchip, double sram) { return PlotPoint{cycles, offchip, sram}; }

TEST(SizingStaircase, StepsByHand) {
  // (cycles, off-chip, SRAM) per point; sorted by SRAM (then cycles, off-chip, index):
  //   SRAM 200: #8 (1200 cycles, 8 B off-chip), #2 (1200, 10 B)  -> step #8 (equal cycles: fewer off-chip bytes)
  //   SRAM 300: #4 (1100)                                         -> step: 1100 < 1200
  //   SRAM 350: #5 (1150)                                         -> no: 1150 >= 1100
  //   SRAM 400: #0 (1000)                                         -> step
  //   SRAM 600: #1 (900), #3 (950)                                -> step #1; #3 no
  //   SRAM 800: #6 (900)                                          -> no: 900 is not < 900
  //   SRAM 1000: #7 (800)                                         -> step
  const std::vector<PlotPoint> points{pt(1000, 50, 400), pt(900, 60, 600),  pt(1200, 10, 200),
                                      pt(950, 70, 600),  pt(1100, 20, 300), pt(1150, 5, 350),
                                      pt(900, 40, 800),  pt(800, 90, 1000), pt(1200, 8, 200)};
  const std::vector<StairStep> steps = sizing_staircase(points);
  ASSERT_EQ(steps.size(), 5u);
  const std::vector<std::size_t> expected_points{8, 4, 0, 1, 7};
  const std::vector<double> expected_sram{200, 300, 400, 600, 1000}, expected_cycles{1200, 1100, 1000, 900, 800};
  for (std::size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k].point, expected_points[k]) << k;
    EXPECT_EQ(steps[k].sram_bytes, expected_sram[k]) << k;
    EXPECT_EQ(steps[k].cycles, expected_cycles[k]) << k;
  }
}

TEST(SizingStaircase, EdgeCases) {
  EXPECT_TRUE(sizing_staircase({}).empty());
  // One point: one step, itself.
  const auto one = sizing_staircase({pt(5, 1, 7)});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].point, 0u);
  // Every point at the same SRAM: one step, the fewest cycles (#1).
  const auto flat = sizing_staircase({pt(30, 1, 64), pt(10, 9, 64), pt(20, 0, 64)});
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].point, 1u);
  // More SRAM never helps: one step, the least SRAM.
  const auto useless = sizing_staircase({pt(10, 1, 900), pt(10, 1, 100), pt(12, 1, 500)});
  ASSERT_EQ(useless.size(), 1u);
  EXPECT_EQ(useless[0].point, 1u);
}

TEST(SizingStaircase, EqualsBruteForceOnRandomFronts) {
  // The staircase's value at SRAM s (the last step at or below s) is the least cycles of the points
  // needing at most s; checked at every point's SRAM and between them, on fronts from a fixed LCG.
  std::uint64_t state = 12345;
  const auto next = [&state](int mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>((state >> 33) % static_cast<std::uint64_t>(mod));
  };
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PlotPoint> points;
    const int n = 1 + static_cast<int>(next(40));
    for (int i = 0; i < n; ++i) points.push_back(pt(100 + next(50), next(10), 10 * (1 + next(20))));
    const std::vector<StairStep> steps = sizing_staircase(points);
    for (std::size_t k = 1; k < steps.size(); ++k) {
      ASSERT_LT(steps[k - 1].sram_bytes, steps[k].sram_bytes);
      ASSERT_GT(steps[k - 1].cycles, steps[k].cycles);
    }
    for (double s = 5; s <= 215; s += 5) {
      double brute = -1;
      for (const PlotPoint& p : points)
        if (p.sram_bytes <= s && (brute < 0 || p.cycles < brute)) brute = p.cycles;
      double stair = -1;
      for (const StairStep& st : steps)
        if (st.sram_bytes <= s) stair = st.cycles;
      ASSERT_EQ(stair, brute) << "trial " << trial << ", SRAM " << s;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The rendering, on result documents made by hand.

/// A document with `points` as its front (point 0 chosen), a no-fusion and a Vela point, at 500 MHz
/// with `capacity` bytes of SRAM, an ε-front of ε = 0.01.
Json document(const std::vector<PlotPoint>& points, double capacity = 1200.0) {
  Json front = Json::array();
  for (const PlotPoint& p : points) front.push_back({{"cycles", p.cycles}, {"offchip_bytes", p.offchip_bytes}, {"sram_bytes", p.sram_bytes}});
  return Json{{"workload", {{"name", "net <&> \"x\""}}},
              {"arch", {{"name", "ethos-u55-128"}, {"sram_capacity_bytes", capacity}, {"core_clock_hz", 5e8}}},
              {"objectives", {"cycles", "offchip_bytes", "sram"}},
              {"front_size", points.size()},
              {"front_summary", {{"epsilon", 0.01}}},
              {"front", front},
              {"chosen", 0},
              {"vela_baseline", {{"cycles", 1150.0}, {"offchip_bytes", 95.0}, {"sram_bytes", 450.0}}},
              {"no_fusion", {{"cycles", 1250.0}, {"offchip_bytes", 120.0}, {"sram_bytes", 250.0}}}};
}

const std::vector<PlotPoint> kHandFront{pt(1000, 50, 400), pt(900, 60, 600), pt(1200, 10, 200), pt(1100, 20, 300), pt(800, 90, 1000)};

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t i = haystack.find(needle); i != std::string::npos; i = haystack.find(needle, i + needle.size())) ++n;
  return n;
}

/// The texts of the <text class="cls"> elements of an SVG.
std::vector<std::string> texts_of_class(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex re("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) out.push_back((*it)[1].str());
  return out;
}

/// The `d` of the staircase path.
std::string staircase_path(const std::string& svg) {
  std::smatch m;
  const std::regex re("<path class=\"staircase\" d=\"([^\"]*)\"");
  return std::regex_search(svg, m, re) ? m[1].str() : std::string("(none)");
}

/// The part of the SVG that draws panel `id` ("sizing" or "offchip").
std::string panel(const std::string& svg, const std::string& id) {
  const std::size_t sizing = svg.find("<g class=\"panel\" id=\"sizing\">");
  const std::size_t offchip = svg.find("<g class=\"panel\" id=\"offchip\">");
  if (sizing == std::string::npos || offchip == std::string::npos) return {};
  return id == "sizing" ? svg.substr(sizing, offchip - sizing) : svg.substr(offchip);
}

void expect_distinct(const std::vector<std::string>& labels, const std::string& what) {
  EXPECT_GE(labels.size(), 2u) << what;
  EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size()) << what;
}

TEST(FrontSvgView, TwoPanelsThreeMarksAndTheStaircase) {
  const std::string svg = render_svg(document(kHandFront));
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "") << svg;
  EXPECT_EQ(count_of(svg, "<g class=\"panel\" id=\"sizing\">"), 1u);
  EXPECT_EQ(count_of(svg, "<g class=\"panel\" id=\"offchip\">"), 1u);
  EXPECT_EQ(count_of(svg, "class=\"point\""), 2 * kHandFront.size());
  for (const std::string mark : {"chosen", "no-fusion", "vela"}) EXPECT_EQ(count_of(svg, "class=\"" + mark + "\""), 2u) << mark;
  // The hand front's staircase has 4 steps after the first (200, 300, 400, 600, 1000 bytes: every
  // point is a step): M, then H and V per further step, then H to the right edge.
  const std::string d = staircase_path(svg);
  EXPECT_EQ(count_of(d, " V "), 4u) << d;
  EXPECT_EQ(count_of(d, " H "), 5u) << d;
  EXPECT_EQ(count_of(svg, "class=\"capacity\""), 1u) << "1200 B is on the SRAM axis";
  // Each mark has a legend entry; the workload's name is escaped.
  const std::vector<std::string> legend = texts_of_class(svg, "legend");
  for (const char* entry : {"chosen point", "best without fusion", "Vela 2.1's schedule", "staircase", "arch's SRAM capacity"})
    EXPECT_NE(std::find(legend.begin(), legend.end(), entry), legend.end()) << entry;
  EXPECT_EQ(std::set<std::string>(legend.begin(), legend.end()).size(), legend.size());
  EXPECT_NE(svg.find(common::xml_escape("net <&> \"x\"")), std::string::npos);
  EXPECT_EQ(svg.find("net <&>"), std::string::npos);
  // Axes: latency in cycles (panel 1) and in ms (panel 2), peak SRAM and off-chip bytes.
  EXPECT_NE(svg.find("latency (cycles)"), std::string::npos);
  EXPECT_NE(svg.find("latency at 500 MHz (ms)"), std::string::npos);
  EXPECT_NE(svg.find("peak SRAM (KiB)"), std::string::npos) << "the axis reaches the 1200 B capacity";
  EXPECT_NE(svg.find("off-chip traffic per inference (B)"), std::string::npos);
  for (const char* id : {"sizing", "offchip"}) {
    expect_distinct(texts_of_class(panel(svg, id), "xtick"), std::string("x ticks of ") + id);
    expect_distinct(texts_of_class(panel(svg, id), "ytick"), std::string("y ticks of ") + id);
  }
  EXPECT_NE(svg.find("ε = 0.01"), std::string::npos);
  // The same document, the same bytes.
  EXPECT_EQ(render_svg(document(kHandFront)), svg);
}

TEST(FrontSvgView, NoVelaPointNoNoFusionPoint) {
  Json r = document(kHandFront);
  r.erase("vela_baseline");
  std::string svg = render_svg(r);
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "");
  EXPECT_EQ(count_of(svg, "class=\"vela\""), 0u);
  EXPECT_EQ(svg.find("Vela"), std::string::npos);
  EXPECT_EQ(count_of(svg, "class=\"no-fusion\""), 2u);
  r.erase("no_fusion");
  svg = render_svg(r);
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "");
  EXPECT_EQ(count_of(svg, "class=\"no-fusion\""), 0u);
  EXPECT_EQ(svg.find("without fusion"), std::string::npos);
  EXPECT_EQ(count_of(svg, "class=\"chosen\""), 2u);
}

TEST(FrontSvgView, OnePoint) {
  // A single point: a staircase of one step (no V), every mark, no "zoomed in" (no spread to misread).
  const std::string svg = render_svg(document({pt(1000, 50, 400)}));
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "") << svg;
  EXPECT_EQ(count_of(svg, "class=\"point\""), 2u);
  EXPECT_EQ(count_of(staircase_path(svg), " V "), 0u);
  EXPECT_EQ(count_of(svg, "class=\"chosen\""), 2u);
  EXPECT_EQ(count_of(svg, "class=\"vela\""), 2u);
  EXPECT_EQ(count_of(svg, "class=\"zoom\""), 0u);
  for (const char* id : {"sizing", "offchip"}) {
    expect_distinct(texts_of_class(panel(svg, id), "xtick"), std::string("x ticks of ") + id);
    expect_distinct(texts_of_class(panel(svg, id), "ytick"), std::string("y ticks of ") + id);
  }
}

TEST(FrontSvgView, ThousandsOfPointsOverDecadesStaySmallOnLogAxes) {
  // 5000 points: SRAM from 1 KiB to 4 MiB and off-chip bytes from 10 KiB to 100 MiB (more than two
  // decades: log axes with power-of-two byte ticks), latency 1e6 to 3e6 cycles (linear).
  std::vector<PlotPoint> points;
  for (int i = 0; i < 5000; ++i) {
    const double f = i / 4999.0;
    points.push_back(pt(3e6 - 2e6 * f, 10240.0 * std::pow(10240.0, 1.0 - f), 1024.0 * std::pow(4096.0, f)));
  }
  Json r = document(points, 8.0 * 1024 * 1024);
  r["vela_baseline"] = {{"cycles", 2.5e6}, {"offchip_bytes", 1e6}, {"sram_bytes", 65536.0}};
  r["no_fusion"] = {{"cycles", 2.9e6}, {"offchip_bytes", 5e7}, {"sram_bytes", 4096.0}};
  const std::string svg = render_svg(r);
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "");
  // Points on the same pixel are drawn once: far fewer circles than points, the staircase short.
  EXPECT_GT(count_of(svg, "class=\"point\""), 400u);
  EXPECT_LT(count_of(svg, "class=\"point\""), 5000u);
  EXPECT_LT(count_of(staircase_path(svg), " V "), 800u) << "at most one corner per half pixel of a 400-pixel axis";
  EXPECT_LT(svg.size(), 150u * 1000u);
  EXPECT_NE(svg.find(">5000 front points<"), std::string::npos);
  EXPECT_EQ(count_of(svg, "<title>#"), 0u);
  EXPECT_NE(svg.find("peak SRAM (log scale)"), std::string::npos);
  EXPECT_NE(svg.find("off-chip traffic per inference (log scale)"), std::string::npos);
  EXPECT_NE(svg.find("latency (million cycles)"), std::string::npos);
  for (const char* id : {"sizing", "offchip"}) {
    const std::vector<std::string> x = texts_of_class(panel(svg, id), "xtick");
    expect_distinct(x, std::string("x ticks of ") + id);
    EXPECT_GE(x.size(), 3u) << id;
    EXPECT_LE(x.size(), 7u) << id;
    // Powers of two in their own units: "256 KiB", "1 MiB", "16 MiB".
    for (const std::string& label : x) EXPECT_TRUE(std::regex_match(label, std::regex("(1|2|4|8|16|32|64|128|256|512) (B|KiB|MiB)"))) << label;
  }
  EXPECT_EQ(count_of(svg, "class=\"capacity\""), 1u) << "8 MiB is within 3 times the largest SRAM";
}

TEST(FrontSvgView, OnlyTheChosenPointKeptNoClockAndNoFront) {
  Json r = document(kHandFront);
  r["front"] = Json::array({r["front"][0]});
  r["arch"].erase("core_clock_hz");
  r["arch"]["sram_capacity_bytes"] = 1e9;
  std::string svg = render_svg(r);
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "");
  EXPECT_NE(svg.find("rerun with --keep-pareto"), std::string::npos);
  EXPECT_EQ(svg.find("MHz"), std::string::npos);
  EXPECT_EQ(count_of(svg, "class=\"capacity\""), 0u);
  EXPECT_NE(svg.find("(beyond the scale)"), std::string::npos);
  r["front"] = Json::array();
  svg = render_svg(r);
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "");
  EXPECT_NE(svg.find("Nothing to plot"), std::string::npos);
  EXPECT_EQ(count_of(svg, "class=\"point\""), 0u);
}

TEST(FrontSvgView, FrontValuesPlotEveryPointWhenOnlyTheChosenOneIsKept) {
  // Without --keep-pareto, `front` holds only the chosen point (here kHandFront[3], as --optimise
  // could choose) while `front_values` lists every point: all five are plotted, and the ring marks
  // point #3, found by its values.
  Json r = document(kHandFront);
  Json values = Json::array();
  for (const PlotPoint& p : kHandFront) values.push_back({p.cycles, p.offchip_bytes, p.sram_bytes, 1.0});
  r["front_values"] = values;
  r["front"] = Json::array({r["front"][3]});
  const std::string svg = render_svg(r);
  ASSERT_EQ(cli_test::check_xml(svg, "svg"), "") << svg;
  EXPECT_EQ(count_of(svg, "class=\"point\""), 2 * kHandFront.size());
  EXPECT_EQ(svg.find("rerun with --keep-pareto"), std::string::npos);
  EXPECT_NE(svg.find(">5 front points<"), std::string::npos);
  EXPECT_EQ(count_of(svg, "class=\"chosen\""), 2u);
  EXPECT_NE(svg.find("<title>chosen point #3: "), std::string::npos);
  // The staircase is that of all five points, as with the whole front kept: identical drawings.
  Json all = document(kHandFront);
  all["front_values"] = values;
  all["chosen"] = std::size_t{3};  // unsigned, as the mapper writes it
  EXPECT_EQ(svg, render_svg(all));
  // A malformed row falls back to `front` (an edited document): only the kept point.
  r["front_values"][2] = "x";
  EXPECT_EQ(count_of(render_svg(r), "class=\"point\""), 2u);
}

}  // namespace
}  // namespace npumap::report
