// The text report as a reader sees it (mapper/report/text_report.cpp): at most 100 columns whatever
// the names, the per-layer time and SRAM it promises (checked against result.json), the five slowest
// layers, units on energy and EDP, singular counts, keep-rate details only with -v, and the full
// names kept in the files.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

/// Terminal columns of a line: its UTF-8 code points.
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (const char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

void expect_fits_100_columns(const std::string& text, const std::string& what) {
  for (const std::string& line : lines_of(text)) {
    EXPECT_LE(columns(line), 100u) << what << ": a line of " << columns(line) << " columns:\n" << line;
  }
}

struct ReportRun {
  RunResult r;
  Json result;
};

ReportRun run(const std::vector<std::string>& extra, const TempDir& dir, const std::string& name) {
  std::vector<std::string> args = {"--threads", "2", "--out", (dir / name).string()};
  args.insert(args.begin(), extra.begin(), extra.end());
  ReportRun out;
  out.r = run_mapper(args);
  EXPECT_EQ(out.r.status, 0) << command_text(args) << "\n" << out.r.err;
  out.result = Json::parse(read_text(dir / name / "result.json"));
  return out;
}

/// The lines of the block that starts with the line `title` (up to the next blank line).
std::vector<std::string> block(const std::string& text, const std::string& title) {
  std::vector<std::string> out;
  bool in = false;
  for (const std::string& line : lines_of(text)) {
    if (!in) {
      in = line.rfind(title, 0) == 0;
      continue;
    }
    if (line.empty()) break;
    out.push_back(line);
  }
  return out;
}

TEST(TextReport, EveryLineFitsOneHundredColumns) {
  TempDir dir;
  // Long TFLite names, a CPU operator with Vela's reason, -v's per-layer keep rates.
  const ReportRun person = run({"--workload", "workloads/models/tflm__person_detect.tflite", "-v"}, dir, "person");
  expect_fits_100_columns(person.r.out, "person_detect -v");
  const ReportRun dscnn = run({"--workload", "workloads/models/mlexamples__ds_cnn_s_quantized.tflite", "--keep-pareto"}, dir, "dscnn");
  expect_fits_100_columns(dscnn.r.out, "ds_cnn_s (float I/O: CPU operators)");
  EXPECT_NE(dscnn.r.out.find("CPU operators ("), std::string::npos) << dscnn.r.out;
  // An arch file with a long path, and a large summarised front.
  const fs::path long_dir = dir / std::string(90, 'd');
  fs::create_directories(long_dir);
  write_text(long_dir / "my-very-long-named-arch-file-for-a-hypothetical-npu.yaml", "preset: ethos-u65-256\n");
  const ReportRun big = run({"--workload", "workloads/tiny_chain.yaml", "--arch",
                       (long_dir / "my-very-long-named-arch-file-for-a-hypothetical-npu.yaml").string(), "--objectives",
                       "cycles,offchip_bytes,sram", "--keep-pareto"},
                      dir, "big");
  expect_fits_100_columns(big.r.out, "a long arch path and a summarised front");
  const ReportRun per_layer = run({"--workload", "workloads/mobilenet_v2.yaml", "--per-layer", "-v"}, dir, "per-layer");
  expect_fits_100_columns(per_layer.r.out, "mobilenet_v2 --per-layer -v");
  // The full names stay in the files.
  const std::string csv = read_text(dir / "person" / "layers.csv");
  for (const Json& l : person.result["per_layer"]) {
    EXPECT_NE(csv.find(l["layer"].get<std::string>()), std::string::npos) << l["layer"];
  }
}

TEST(TextReport, PerLayerTimeAndLiveSramAreTheResultsValues) {
  TempDir dir;
  const ReportRun r = run({"--workload", "workloads/resnet18.yaml"}, dir, "r18");
  const Json& p = r.result["front"][0];
  const Json& live = p["sram_in_use_bytes"];
  ASSERT_EQ(live.size(), 31u);
  // The peak is the largest live SRAM.
  double most = 0.0;
  for (const Json& v : live) most = std::max(most, v.get<double>());
  EXPECT_EQ(most, p["sram_bytes"].get<double>());
  // Each row: ms = cycles / clock, time = cycles / total, live SRAM as in result.json.
  const std::vector<std::string> rows = block(r.r.out, "Chosen mapping (best by cycles): time and SRAM per layer");
  ASSERT_EQ(rows.size(), 1u + 31u + 3u) << r.r.out;  // header, layers, time / where / total
  EXPECT_NE(rows[0].find("live SRAM"), std::string::npos) << rows[0];
  const double clock = r.result["arch"]["core_clock_hz"].get<double>();
  const double total = p["cycles"].get<double>();
  for (std::size_t i = 0; i < 31; ++i) {
    const Json& l = r.result["layer_mappings"][p["layers"][i].get<std::size_t>()];
    const std::string& line = rows[1 + i];
    EXPECT_EQ(line.find("  " + l["layer"].get<std::string>() + " "), 0u) << line;
    const double cycles = l["cycles"].get<double>();
    EXPECT_NE(line.find(fmt::format(" {:.4f} ", cycles / clock * 1e3)), std::string::npos) << line;
    // A share under 0.05% would print as 0.0%: the report says "<0.1%" then.
    const double share = 100.0 * cycles / total;
    EXPECT_NE(line.find(share > 0.0 && share < 0.05 ? std::string(" <0.1% ") : fmt::format(" {:.1f}% ", share)), std::string::npos)
        << line;
    const double bytes = live[i].get<double>();
    const std::string kib = bytes >= 1024 * 1024 ? fmt::format("{:.2f} MiB", bytes / 1048576)
                            : bytes >= 1024      ? fmt::format("{:.1f} KiB", bytes / 1024)
                                                 : fmt::format("{:.0f} B", bytes);
    EXPECT_NE(line.find(kib), std::string::npos) << line << " (live " << bytes << ")";
  }
  // Energy and EDP in units: 12.7M cycles at 500 MHz and about 1.06 mJ.
  const double seconds = total / clock;
  const double joules = p["energy_pj"].get<double>() * 1e-12;
  const std::string& totals = rows.back();
  EXPECT_NE(totals.find(fmt::format("energy {:.2f} mJ", joules * 1e3)), std::string::npos) << totals;
  EXPECT_NE(totals.find(fmt::format("EDP {:.1f} µJ·s", joules * seconds * 1e6)), std::string::npos) << totals;
}

TEST(TextReport, TopFiveLayersByTime) {
  TempDir dir;
  const ReportRun r = run({"--workload", "workloads/resnet18.yaml"}, dir, "r18");
  const Json& p = r.result["front"][0];
  std::vector<std::pair<double, std::string>> layers;
  for (const Json& i : p["layers"]) {
    const Json& l = r.result["layer_mappings"][i.get<std::size_t>()];
    layers.push_back({l["cycles"].get<double>(), l["layer"].get<std::string>()});
  }
  std::stable_sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  double top = 0.0;
  for (int k = 0; k < 5; ++k) top += layers[static_cast<std::size_t>(k)].first;
  const std::string title = fmt::format("Top 5 layers by time ({:.1f}% of the total):", 100.0 * top / p["cycles"].get<double>());
  const std::vector<std::string> rows = block(r.r.out, title);
  ASSERT_EQ(rows.size(), 6u) << "no block `" << title << "`:\n" << r.r.out;
  for (int k = 0; k < 5; ++k) {
    EXPECT_NE(rows[static_cast<std::size_t>(k + 1)].find(fmt::format("{} {} ", k + 1, layers[static_cast<std::size_t>(k)].second)),
              std::string::npos)
        << rows[static_cast<std::size_t>(k + 1)];
  }
}

TEST(TextReport, TheNoFusionLineGivesSramAndWhatFusionChanges) {
  TempDir dir;
  // On an ethos-u65-256 (on the U55s the fastest point of person_detect fuses nothing since streamed
  // weight reads are charged at Vela's bandwidth scale, issue 37 point 3).
  const ReportRun r = run({"--workload", "workloads/models/tflm__person_detect.tflite", "--arch", "ethos-u65-256"}, dir, "pd");
  const Json& u = r.result["no_fusion"];
  const Json& p = r.result["front"][0];
  const double sram_change = 100.0 * (p["sram_bytes"].get<double>() - u["sram_bytes"].get<double>()) / u["sram_bytes"].get<double>();
  EXPECT_LT(sram_change, -1.0) << "fusion saves SRAM on person_detect";
  EXPECT_NE(r.r.out.find(fmt::format("peak SRAM by {:+.1f}%", sram_change)), std::string::npos) << r.r.out;
}

TEST(TextReport, KeepRateDetailsOnlyWithVerbose) {
  TempDir dir;
  const ReportRun plain = run({"--workload", "workloads/tiny_chain.yaml"}, dir, "plain");
  const ReportRun verbose = run({"--workload", "workloads/tiny_chain.yaml", "-v"}, dir, "verbose");
  std::size_t summaries = 0;
  for (const std::string& line : lines_of(plain.r.out)) summaries += line.rfind("Keep rates: ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(summaries, 1u) << plain.r.out;
  EXPECT_EQ(plain.r.out.find("dominated: kept"), std::string::npos) << plain.r.out;
  EXPECT_EQ(plain.r.out.find("Per-layer stage"), std::string::npos) << plain.r.out;
  EXPECT_NE(verbose.r.out.find("Per-layer stage (keep rates):"), std::string::npos) << verbose.r.out;
  EXPECT_NE(verbose.r.out.find("dominated: kept"), std::string::npos) << verbose.r.out;
  EXPECT_NE(verbose.r.out.find("Join: "), std::string::npos) << verbose.r.out;
  // `mapper show -v` is the run's -v.
  const RunResult shown = run_mapper({"show", (dir / "verbose").string(), "-v"});
  EXPECT_EQ(drop_wrote_line(verbose.r.out), shown.out);
}

TEST(TextReport, OnePointIsOnePoint) {
  TempDir dir;
  const ReportRun r = run({"--workload", "workloads/tiny_residual.yaml", "--keep-pareto"}, dir, "res");
  ASSERT_EQ(r.result["front_size"], 1);
  EXPECT_NE(r.r.out.find("Pareto front: 1 point;"), std::string::npos) << r.r.out;
  EXPECT_EQ(r.r.out.find("1 points"), std::string::npos) << r.r.out;
}

TEST(TextReport, PerLayerRunsWriteOnlyTheirResult) {
  // --per-layer has no front: no front.svg claiming failure, no empty front.csv or layers.csv.
  TempDir dir;
  const ReportRun r = run({"--workload", "workloads/tiny_chain.yaml", "--per-layer"}, dir, "pl");
  EXPECT_FALSE(fs::exists(dir / "pl" / "front.svg"));
  EXPECT_FALSE(fs::exists(dir / "pl" / "front.csv"));
  EXPECT_FALSE(fs::exists(dir / "pl" / "layers.csv"));
  EXPECT_EQ(lines_of(r.r.out).back(), "wrote " + (dir / "pl").string() + ": result.json");
  EXPECT_EQ(r.r.out.find("No valid mapping"), std::string::npos) << r.r.out;
}

}  // namespace
}  // namespace npumap::cli_test
