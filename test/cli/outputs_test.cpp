// The files a run leaves behind, and the rule that runs never overwrite each other.
//
// One run of tiny_chain with --keep-pareto (made once for the whole suite) is inspected from every
// side: result.json must parse and carry provenance, the front, per-layer keep rates and overall
// keep rates that are consistent with each other; front.csv must list the same points; front.svg
// must be well-formed XML with one circle per front point in each of its two panels; and `mapper show`
// must re-render the run's exact report. The SVG is checked by a small hand-written XML checker
// (xml_check.hpp: balanced tags, one <svg> root, quoted attributes, valid entity references) so the
// test needs no external tool.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <sstream>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"
#include "test/cli/xml_check.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t i = haystack.find(needle); i != std::string::npos; i = haystack.find(needle, i + needle.size())) ++n;
  return n;
}

TEST(XmlChecker, AcceptsWellFormedAndRejectsBrokenDocuments) {
  // The checker must be able to say no, or the SVG test below proves nothing.
  EXPECT_EQ(check_xml("<?xml version=\"1.0\"?>\n<svg a=\"1\"><g><text>x &amp; y</text></g><rect/></svg>\n", "svg"), "");
  EXPECT_NE(check_xml("<svg><g></svg>", "svg"), "");                 // unclosed <g>
  EXPECT_NE(check_xml("<svg><g></text></g></svg>", "svg"), "");      // crossed tags
  EXPECT_NE(check_xml("<svg a=1></svg>", "svg"), "");                // unquoted attribute
  EXPECT_NE(check_xml("<svg></svg><svg></svg>", "svg"), "");         // two roots
  EXPECT_NE(check_xml("<html></html>", "svg"), "");                  // wrong root
  EXPECT_NE(check_xml("<svg><text>a & b</text></svg>", "svg"), "");  // bare ampersand
  EXPECT_NE(check_xml("<svg a=\"1\"b=\"2\"></svg>", "svg"), "");     // attributes not separated
  EXPECT_NE(check_xml("<svg a=\"1\" a=\"2\"></svg>", "svg"), "");    // duplicate attribute
  EXPECT_NE(check_xml("stray<svg></svg>", "svg"), "");               // text outside the root
}

// ---------------------------------------------------------------------------------------------
// One tiny_chain run shared by the tests below.

/// FNV-1a 64 of a file, written from the published algorithm (offset basis 14695981039346656037,
/// prime 1099511628211) to check the hash the mapper records, not to reuse its code.
std::string fnv1a64_of_file(const std::string& path) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : read_text(path)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* hex = "0123456789abcdef";
  std::string s = "fnv1a64:";
  for (int shift = 60; shift >= 0; shift -= 4) s.push_back(hex[(h >> shift) & 0xf]);
  return s;
}

class TinyChainRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    args_ = {"--workload", "workloads/tiny_chain.yaml", "--keep-pareto", "--threads", "2", "--seed", "7",
             "--out", out().string()};
    run_ = new RunResult(run_mapper(args_));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
    run_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(run_->status, 0) << command_text(args_) << "\n" << run_->err;
    ASSERT_TRUE(fs::exists(out() / "result.json"));
  }
  static fs::path out() { return dir_->path() / "out"; }
  static Json result() { return Json::parse(read_text(out() / "result.json")); }

  static TempDir* dir_;
  static std::vector<std::string> args_;
  static RunResult* run_;
};

TempDir* TinyChainRun::dir_ = nullptr;
std::vector<std::string> TinyChainRun::args_;
RunResult* TinyChainRun::run_ = nullptr;

TEST_F(TinyChainRun, WritesExactlyItsFilesAndNoTemporaries) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out())) names.insert(e.path().filename().string());
  // Ours (layers_vela.csv: Vela's schedule's layers; layers_vs_vela.csv: the chosen point's beside
  // them), then Vela's two CSV files of the chosen point (<net>_summary_<system config>.csv,
  // <net>_per-layer.csv).
  EXPECT_EQ(names, (std::set<std::string>{"result.json", "front.csv", "front.svg", "layers.csv", "layers_vela.csv",
                                          "layers_vs_vela.csv", "tiny_chain_summary_internal-default.csv",
                                          "tiny_chain_per-layer.csv"}));
  EXPECT_TRUE(run_->err.empty()) << "a successful run prints nothing on stderr, got:\n" << run_->err;
}

TEST_F(TinyChainRun, LastStdoutLineNamesTheResultFile) {
  EXPECT_EQ(wrote_trailer(run_->out), "wrote " + out().string() +
                                         ": result.json, front.csv, front.svg, layers.csv, layers_vela.csv, "
                                         "layers_vs_vela.csv, tiny_chain_summary_internal-default.csv, "
                                         "tiny_chain_per-layer.csv");
}

TEST_F(TinyChainRun, ResultJsonRecordsToolAndProvenance) {
  const Json r = result();
  ASSERT_TRUE(r.contains("tool"));
  EXPECT_EQ(r["tool"]["name"], "npu-mapper");
  EXPECT_EQ(r["tool"]["version"], "0.1.0");
  ASSERT_TRUE(r.contains("provenance"));
  const Json& p = r["provenance"];
  ASSERT_TRUE(p.contains("git_revision"));
  EXPECT_FALSE(p["git_revision"].get<std::string>().empty());
  EXPECT_EQ(p["seed"], 7);
  EXPECT_EQ(p["threads"], 2);
  EXPECT_EQ(p["inputs"]["workload"]["path"], "workloads/tiny_chain.yaml");
  EXPECT_EQ(p["inputs"]["workload"]["hash"], fnv1a64_of_file("workloads/tiny_chain.yaml"));
  EXPECT_EQ(p["inputs"]["arch"]["spec"], "ethos-u55-256");
  ASSERT_TRUE(p["inputs"]["arch"].contains("hash"));
  const Json& o = p["options"];
  EXPECT_EQ(o["keep_pareto"], true);
  EXPECT_EQ(o["objectives"], Json::parse(R"(["cycles","offchip_bytes"])"));
  EXPECT_EQ(o["no_fusion"], false);
  EXPECT_TRUE(o["time_limit_s"].is_null());
  EXPECT_EQ(r["partial"], false);
  EXPECT_EQ(r["status"], "ok");
}

TEST_F(TinyChainRun, ArchFileIsHashedInProvenance) {
  // An arch given as a file (not a preset) is recorded with the hash of its bytes.
  TempDir tmp;
  const fs::path arch = tmp / "arch.yaml";
  write_text(arch, "preset: ethos-u55-128\n");
  const std::vector<std::string> args = {"--workload", "workloads/tiny_chain.yaml", "--arch", arch.string(),
                                         "--threads", "2", "--out", (tmp / "out").string()};
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  const Json j = Json::parse(read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(j["provenance"]["inputs"]["arch"]["spec"], arch.string());
  EXPECT_EQ(j["provenance"]["inputs"]["arch"]["hash"], fnv1a64_of_file(arch.string()));
  EXPECT_EQ(j["arch"]["accelerator"], "ethos-u55-128");
}

TEST_F(TinyChainRun, FrontIsAParetoFrontOfWholeNetworkMappings) {
  const Json r = result();
  ASSERT_TRUE(r["front"].is_array());
  const Json& front = r["front"];
  ASSERT_GE(front.size(), 1u);
  EXPECT_EQ(r["front_size"].get<std::size_t>(), front.size()) << "--keep-pareto keeps every point";
  EXPECT_EQ(r["chosen"], 0);
  const std::vector<std::string> layer_names = {"conv_a", "conv_b", "conv_c"};
  for (std::size_t i = 0; i < front.size(); ++i) {
    const Json& p = front[i];
    const std::vector<Json> layers = layers_of(r, p);
    ASSERT_EQ(layers.size(), 3u) << "point " << i;
    double cycles = 0, offchip = 0, energy = 0;
    for (std::size_t l = 0; l < 3; ++l) {
      EXPECT_EQ(layers[l]["layer"], layer_names[l]) << "point " << i << ": layers in topological order";
      cycles += layers[l]["cycles"].get<double>();
      offchip += layers[l]["offchip_bytes"].get<double>();
      energy += layers[l]["energy_pj"].get<double>();
    }
    // Layers run one after another on the NPU, so the totals are the sums over layers.
    EXPECT_DOUBLE_EQ(p["cycles"].get<double>(), cycles) << "point " << i;
    EXPECT_DOUBLE_EQ(p["offchip_bytes"].get<double>(), offchip) << "point " << i;
    EXPECT_NEAR(p["energy_pj"].get<double>(), energy, 1e-9 * energy) << "point " << i;
    EXPECT_DOUBLE_EQ(p["edp"].get<double>(), p["cycles"].get<double>() * p["energy_pj"].get<double>()) << "point " << i;
    EXPECT_LE(p["sram_bytes"].get<double>(), r["arch"]["sram_capacity_bytes"].get<double>()) << "point " << i;
    // The chosen point is the best by the first objective (cycles).
    EXPECT_LE(front[0]["cycles"].get<double>(), p["cycles"].get<double>()) << "point " << i;
  }
  // No point dominates another in (cycles, offchip, sram, energy).
  const auto key = [](const Json& p) {
    return std::vector<double>{p["cycles"].get<double>(), p["offchip_bytes"].get<double>(), p["sram_bytes"].get<double>(),
                               p["energy_pj"].get<double>()};
  };
  for (std::size_t a = 0; a < front.size(); ++a) {
    for (std::size_t b = 0; b < front.size(); ++b) {
      if (a == b) continue;
      const auto ka = key(front[a]), kb = key(front[b]);
      bool no_worse = true, better = false;
      for (std::size_t k = 0; k < ka.size(); ++k) {
        no_worse = no_worse && ka[k] <= kb[k];
        better = better || ka[k] < kb[k];
      }
      EXPECT_FALSE(no_worse && better) << "front point " << a << " dominates point " << b;
      EXPECT_NE(ka, kb) << "front points " << a << " and " << b << " are duplicates";
    }
  }
}

TEST_F(TinyChainRun, KeepRatesAreConsistent) {
  const Json r = result();
  ASSERT_EQ(r["per_layer"].size(), 3u);
  std::uint64_t total = 0, valid = 0, evaluated = 0, pareto = 0;
  const auto check = [](const Json& k, const std::string& what) {
    const auto t = k["total"].get<std::uint64_t>(), v = k["valid"].get<std::uint64_t>(),
               e = k["evaluated"].get<std::uint64_t>(), p = k["pareto_optimal"].get<std::uint64_t>();
    EXPECT_GT(t, 0u) << what;
    EXPECT_LE(v, t) << what;
    EXPECT_LE(e, t) << what;
    EXPECT_LE(p, e) << what;
    ASSERT_TRUE(k["keep_rate_by_cause"].is_object()) << what;
    for (const auto& [cause, rate] : k["keep_rate_by_cause"].items()) {
      EXPECT_GE(rate.get<double>(), 0.0) << what << " " << cause;
      EXPECT_LE(rate.get<double>(), 1.0) << what << " " << cause;
    }
  };
  for (const auto& l : r["per_layer"]) {
    const std::string name = l["layer"].get<std::string>();
    ASSERT_TRUE(l.contains("keep_rates")) << name;
    check(l["keep_rates"], name);
    EXPECT_GT(l["pmappings"].get<int>(), 0) << name;
    total += l["keep_rates"]["total"].get<std::uint64_t>();
    valid += l["keep_rates"]["valid"].get<std::uint64_t>();
    evaluated += l["keep_rates"]["evaluated"].get<std::uint64_t>();
    pareto += l["keep_rates"]["pareto_optimal"].get<std::uint64_t>();
  }
  ASSERT_TRUE(r.contains("keep_rates"));
  check(r["keep_rates"], "overall");
  EXPECT_EQ(r["keep_rates"]["total"].get<std::uint64_t>(), total) << "overall = sum over layers";
  EXPECT_EQ(r["keep_rates"]["valid"].get<std::uint64_t>(), valid);
  EXPECT_EQ(r["keep_rates"]["evaluated"].get<std::uint64_t>(), evaluated);
  EXPECT_EQ(r["keep_rates"]["pareto_optimal"].get<std::uint64_t>(), pareto);
}

TEST_F(TinyChainRun, FrontCsvListsTheSamePoints) {
  const Json r = result();
  const std::vector<std::string> lines = lines_of(read_text(out() / "front.csv"));
  ASSERT_GE(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "point,cycles,offchip_bytes,sram_bytes,energy_pj,edp,fused_layers,chosen,latency_ms,inferences_per_s,"
            "macs_per_cycle,utilisation");
  ASSERT_EQ(lines.size(), 1 + r["front_size"].get<std::size_t>()) << "a header and one line per front point";
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells;
    std::stringstream ss(lines[i]);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 12u) << lines[i];
    const Json& p = r["front"][i - 1];
    EXPECT_EQ(std::stoul(cells[0]), i - 1);
    EXPECT_DOUBLE_EQ(std::stod(cells[1]), p["cycles"].get<double>()) << lines[i];
    EXPECT_DOUBLE_EQ(std::stod(cells[2]), p["offchip_bytes"].get<double>()) << lines[i];
    EXPECT_DOUBLE_EQ(std::stod(cells[3]), p["sram_bytes"].get<double>()) << lines[i];
    EXPECT_DOUBLE_EQ(std::stod(cells[4]), p["energy_pj"].get<double>()) << lines[i];
    int fused = 0;
    for (const auto& l : layers_of(r, p)) fused += l["fused_with_next"].get<bool>() ? 1 : 0;
    EXPECT_EQ(std::stoi(cells[6]), fused) << lines[i];
    EXPECT_EQ(cells[7], i == 1 ? "1" : "0") << "only the first point is the chosen one";
    EXPECT_DOUBLE_EQ(std::stod(cells[8]), p["latency_ms"].get<double>()) << lines[i];
    EXPECT_DOUBLE_EQ(std::stod(cells[10]), p["macs_per_cycle"].get<double>()) << lines[i];
  }
}

TEST_F(TinyChainRun, FrontSvgIsWellFormedWithOneCirclePerPointInEachPanel) {
  // Two panels (sizing: latency against peak SRAM; latency against off-chip bytes), each with a
  // circle per front point and the chosen, no-fusion and Vela marks.
  const std::string svg = read_text(out() / "front.svg");
  EXPECT_EQ(check_xml(svg, "svg"), "");
  EXPECT_EQ(count_of(svg, "<g class=\"panel\""), 2u);
  EXPECT_EQ(count_of(svg, "class=\"point\""), 2 * result()["front"].size());
  EXPECT_EQ(count_of(svg, "class=\"chosen\""), 2u);
  EXPECT_EQ(count_of(svg, "class=\"no-fusion\""), result().contains("no_fusion") ? 2u : 0u);
  EXPECT_EQ(count_of(svg, "class=\"vela\""), result().contains("vela_baseline") ? 2u : 0u);
  EXPECT_EQ(count_of(svg, "class=\"staircase\""), 1u);
}

TEST_F(TinyChainRun, ShowReproducesTheReport) {
  const RunResult text = run_mapper({"show", (out() / "result.json").string()});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(text.err.empty()) << text.err;
  EXPECT_EQ(text.out, drop_wrote_line(run_->out)) << first_difference(drop_wrote_line(run_->out), text.out);

  const RunResult csv = run_mapper({"show", "--format", "csv", (out() / "result.json").string()});
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out, read_text(out() / "front.csv"));

  const RunResult json = run_mapper({"show", "--format", "json", (out() / "result.json").string()});
  EXPECT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out, read_text(out() / "result.json"));
}

TEST_F(TinyChainRun, JsonFormatOnStdoutIsTheResultDocument) {
  TempDir tmp;
  std::vector<std::string> args = args_;
  args.back() = (tmp / "out").string();
  args.insert(args.end(), {"--format", "json"});
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(result_without_provenance(r.out), result_without_provenance(read_text(out() / "result.json")));
}

TEST_F(TinyChainRun, SecondRunIntoTheSameFolderIsRefusedAndChangesNothing) {
  const std::string before_json = read_text(out() / "result.json");
  const std::string before_csv = read_text(out() / "front.csv");
  const std::string before_svg = read_text(out() / "front.svg");
  // Different options, so an overwrite would change the bytes.
  const std::vector<std::string> args = {"--workload", "workloads/tiny_residual.yaml", "--objectives", "cycles",
                                         "--threads", "2", "--out", out().string()};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 2) << command_text(args);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind(out().string(), 0), 0u) << "the error names the folder: " << r.err;
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(read_text(out() / "result.json"), before_json);
  EXPECT_EQ(read_text(out() / "front.csv"), before_csv);
  EXPECT_EQ(read_text(out() / "front.svg"), before_svg);
}

TEST(DefaultOutputFolder, TwoRunsMakeTwoFoldersUnderRuns) {
  // Without --out each run gets a new runs/<timestamp> folder in the working directory; two runs in
  // the same second must still not share one.
  TempDir cwd;
  const std::string workload = (fs::current_path() / "workloads" / "tiny_chain.yaml").string();
  const std::vector<std::string> args = {"--workload", workload, "--threads", "2"};
  const RunResult first = run_mapper(args, cwd.path());
  const RunResult second = run_mapper(args, cwd.path());
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_EQ(second.status, 0) << second.err;
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(cwd / "runs")) folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  ASSERT_EQ(folders.size(), 2u);
  EXPECT_NE(folders[0], folders[1]);
  for (const auto& f : folders) {
    EXPECT_TRUE(fs::exists(f / "result.json")) << f;
    EXPECT_TRUE(fs::exists(f / "front.csv")) << f;
    EXPECT_TRUE(fs::exists(f / "front.svg")) << f;
  }
  // Each run's report names its own folder (relative to the working directory).
  const std::string wrote_first = wrote_trailer(first.out), wrote_second = wrote_trailer(second.out);
  EXPECT_NE(wrote_first, wrote_second);
  for (const auto& wrote : {wrote_first, wrote_second}) {
    EXPECT_EQ(wrote.rfind("wrote runs/", 0), 0u) << wrote;
  }
  EXPECT_EQ(result_without_provenance(read_text(folders[0] / "result.json")),
            result_without_provenance(read_text(folders[1] / "result.json")));
}

// ---------------------------------------------------------------------------------------------
// A front too large to print whole (tiny_chain with 3 objectives on ethos-u65-256: 90 points) is
// summarised: the best point of each objective and an even spread, each row's # being its index
// in front.csv, and the # column widens for fronts of 10^4 points and more.

/// The rows of the report's front table: (index, the row's text), read between the table's header
/// (the line starting with spaces and `#`) and the "(K of N points shown" line.
std::vector<std::pair<std::size_t, std::string>> front_table_rows(const std::string& report, std::string* header) {
  std::vector<std::pair<std::size_t, std::string>> rows;
  bool in_table = false;
  for (const std::string& line : lines_of(report)) {
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    if (!in_table) {
      if (line[first] == '#') {
        in_table = true;
        *header = line;
      }
      continue;
    }
    if (line[first] == '(' || !std::isdigit(static_cast<unsigned char>(line[first]))) break;
    rows.emplace_back(std::stoul(line.substr(first)), line);
  }
  return rows;
}

TEST(LargeFrontSummary, ShowsTheExtremesAndASpreadIndexedAsInFrontCsv) {
  TempDir dir;
  const std::vector<std::string> args = {"--workload", "workloads/tiny_chain.yaml", "--arch", "ethos-u65-256",
                                         "--objectives", "cycles,offchip_bytes,sram", "--keep-pareto",
                                         "--threads", "2", "--out", (dir / "out").string()};
  const RunResult run = run_mapper(args);
  ASSERT_EQ(run.status, 0) << command_text(args) << "\n" << run.err;
  const Json result = Json::parse(read_text(dir / "out" / "result.json"));
  const Json& front = result["front"];
  const std::size_t n = front.size();
  ASSERT_GT(n, 24u) << "the case must produce a front larger than the 24 points printed whole";

  std::string header;
  const auto rows = front_table_rows(run.out, &header);
  ASSERT_FALSE(rows.empty()) << run.out;
  EXPECT_LT(rows.size(), n);
  EXPECT_LE(rows.size(), 4u + 12u) << "at most one row per objective's best plus the 12-point spread";
  EXPECT_NE(run.out.find("(" + std::to_string(rows.size()) + " of " + std::to_string(n) + " points shown"),
            std::string::npos) << run.out;
  std::set<std::size_t> shown;
  for (const auto& [index, line] : rows) {
    ASSERT_LT(index, n) << line;
    EXPECT_TRUE(shown.insert(index).second) << "row shown twice: " << line;
    // The cycles column is the point's cycles rounded to an integer.
    std::istringstream fields(line);
    std::size_t i = 0;
    double cycles = 0;
    fields >> i >> cycles;
    EXPECT_EQ(cycles, std::round(front[index]["cycles"].get<double>())) << line;
  }
  EXPECT_TRUE(shown.count(0) && shown.count(n - 1)) << "the spread starts and ends at the front's ends";
  // Each labelled row is the first point with that objective's least value.
  const std::pair<const char*, const char*> labels[] = {
      {"cycles", "best cycles"}, {"offchip_bytes", "least off-chip"}, {"sram_bytes", "least SRAM"}, {"energy_pj", "least energy"}};
  for (const auto& [key, label] : labels) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (front[i][key].get<double>() < front[best][key].get<double>()) best = i;
    }
    bool found = false;
    for (const auto& [index, line] : rows) {
      if (line.find(label) != std::string::npos) {
        EXPECT_EQ(index, best) << label << ": " << line;
        found = true;
      }
    }
    EXPECT_TRUE(found) << "no row labelled " << label << "\n" << run.out;
  }

  // The same result with its front repeated to 12,000 points: every row's columns stay under the
  // header's (the # column takes the width of the largest index, 11999).
  Json big = result;
  Json repeated = Json::array();
  for (std::size_t i = 0; i < 12000; ++i) repeated.push_back(front[i % n]);
  big["front"] = repeated;
  Json repeated_values = Json::array();  // front_values has one row per front point
  for (std::size_t i = 0; i < 12000; ++i) repeated_values.push_back(result["front_values"][i % n]);
  big["front_values"] = repeated_values;
  std::vector<Json*> stack = {&big};
  while (!stack.empty()) {  // every front_size of the document names the new size
    Json* j = stack.back();
    stack.pop_back();
    if (j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) {
        if (it.key() == "front_size") *it = 12000;
        else if (it.key() != "front") stack.push_back(&*it);
      }
    } else if (j->is_array()) {
      for (auto& v : *j) stack.push_back(&v);
    }
  }
  write_text(dir / "big.json", big.dump(1) + "\n");
  const RunResult shown_big = run_mapper({"show", (dir / "big.json").string()});
  ASSERT_EQ(shown_big.status, 0) << shown_big.err;
  std::string big_header;
  const auto big_rows = front_table_rows(shown_big.out, &big_header);
  ASSERT_FALSE(big_rows.empty()) << shown_big.out;
  EXPECT_EQ(big_rows.back().first, 11999u);
  const std::size_t cycles_end = big_header.find("cycles") + std::string("cycles").size();
  for (const auto& [index, line] : big_rows) {
    // The cycles value ends where the header's "cycles" ends.
    const std::size_t digits_end = line.find(' ', line.find_first_not_of(' ', line.find_first_of("0123456789") +
                                                                            std::to_string(index).size()));
    EXPECT_EQ(digits_end, cycles_end) << "\n" << big_header << "\n" << line;
  }
}

}  // namespace
}  // namespace npumap::cli_test
