// Speaking Vela, end to end through the executable: a Vela user's command line with `mapper` in place
// of `vela` (the model as an argument, --accelerator-config, --config, --system-config, --memory-mode,
// --output-dir, --optimise, --arena-cache-size), Vela's CSV files read with Vela's own column lists
// by a strict reader, the built-in sections printed as ini and read back, Vela options npu-mapper does
// not take, and a float model that no operator of runs on the NPU.

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"
#include "test/tflite/tflite_net.hpp"

namespace npumap::cli_test {
namespace {

// Vela 2.1's summary columns (ethos-u-vela 64556f32, stats_writer.write_summary_metrics_csv), in order.
const std::vector<std::string> kVelaSummaryColumns = {
    "experiment", "network", "accelerator_configuration", "system_config", "memory_mode", "core_clock", "sram_size",
    "sram_bandwidth", "dram_bandwidth", "on_chip_flash_bandwidth", "off_chip_flash_bandwidth", "weights_storage_area",
    "feature_map_storage_area", "inferences_per_second", "batch_size", "inference_time", "passes_before_fusing",
    "passes_after_fusing", "sram_memory_used", "dram_memory_used", "on_chip_flash_memory_used",
    "off_chip_flash_memory_used", "total_original_weights", "total_npu_weights", "total_npu_encoded_weights",
    "sram_feature_map_read_bytes", "sram_feature_map_write_bytes", "sram_weight_read_bytes", "sram_weight_write_bytes",
    "sram_total_bytes", "dram_feature_map_read_bytes", "dram_feature_map_write_bytes", "dram_weight_read_bytes",
    "dram_weight_write_bytes", "dram_total_bytes", "on_chip_flash_feature_map_read_bytes",
    "on_chip_flash_feature_map_write_bytes", "on_chip_flash_weight_read_bytes", "on_chip_flash_weight_write_bytes",
    "on_chip_flash_total_bytes", "off_chip_flash_feature_map_read_bytes", "off_chip_flash_feature_map_write_bytes",
    "off_chip_flash_weight_read_bytes", "off_chip_flash_weight_write_bytes", "off_chip_flash_total_bytes", "nn_macs",
    "nn_tops", "cycles_npu", "cycles_sram_access", "cycles_dram_access", "cycles_on_chip_flash_access",
    "cycles_off_chip_flash_access", "cycles_total"};
// The columns of Vela's --verbose-performance table (npu_performance.print_performance, Vela 3).
const std::vector<std::string> kVelaPerLayerColumns = {"TFLite_operator", "NNG Operator", "SRAM Usage", "Peak%",
                                                       "Op Cycles",       "Network%",     "NPU",        "SRAM AC",
                                                       "DRAM AC",         "OnFlash AC",   "OffFlash AC", "MAC Count",
                                                       "Network%",        "Util%",        "Name"};

/// A strict CSV reader: every record ends with "\r\n" (Python's csv.writer), fields are quoted only
/// as csv quotes them, and every record has as many fields as the header.
std::vector<std::vector<std::string>> read_csv_strict(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::size_t i = 0;
  while (i < text.size()) {
    std::vector<std::string> row;
    std::string f;
    bool quoted = false;
    for (;;) {
      if (i >= text.size()) throw std::runtime_error("record without its \\r\\n end");
      const char c = text[i];
      if (quoted) {
        if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          f += '"';
          i += 2;
        } else if (c == '"') {
          quoted = false;
          ++i;
        } else {
          f += c;
          ++i;
        }
      } else if (c == '"' && f.empty()) {
        quoted = true;
        ++i;
      } else if (c == ',') {
        row.push_back(f);
        f.clear();
        ++i;
      } else if (c == '\r') {
        if (i + 1 >= text.size() || text[i + 1] != '\n') throw std::runtime_error("lone \\r");
        row.push_back(f);
        i += 2;
        break;
      } else if (c == '\n' || c == '"') {
        throw std::runtime_error("bare newline or quote in a field");
      } else {
        f += c;
        ++i;
      }
    }
    if (!rows.empty() && row.size() != rows.front().size()) throw std::runtime_error("a record's field count differs");
    rows.push_back(row);
  }
  return rows;
}

/// Python's float(): the only forms Vela's CSV has (a decimal, an exponent, nan).
double as_float(const std::string& s) {
  if (s == "nan") return std::nan("");
  std::size_t used = 0;
  const double v = std::stod(s, &used);
  if (used != s.size() || (s.find('.') == std::string::npos && s.find('e') == std::string::npos))
    throw std::runtime_error("not a Python float: " + s);
  return v;
}

std::int64_t as_int(const std::string& s) {
  std::size_t used = 0;
  const long long v = std::stoll(s, &used);
  if (used != s.size()) throw std::runtime_error("not an integer: " + s);
  return v;
}

std::string file_named(const fs::path& folder, const std::string& suffix) {
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string n = e.path().filename().string();
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) return e.path().string();
  }
  return "";
}

const char* kMyIni =
    "; a system of ours, as a Vela user writes it\n"
    "[System_Config.My_U55]\n"
    "inherit=System_Config.Ethos_U55_High_End_Embedded\n"
    "core_clock=400e6\n"
    "Sram_max_reads=4\n"
    "\n"
    "[Memory_Mode.My_Shared_1MB]\n"
    "const_mem_area=Axi1\n"
    "arena_mem_area=Axi0\n"
    "cache_mem_area=Axi0\n"
    "arena_cache_size=1048576\n";

TEST(VelaCli, AVelaCommandLineRunsWithMapperInPlaceOfVela) {
  TempDir tmp;
  write_text(tmp / "my.ini", kMyIni);
  // `--config FILE` takes one file: the model after it stays the model.
  const std::vector<std::string> args = {"--config", (tmp / "my.ini").string(), "workloads/tiny_chain.yaml",
                                         "--accelerator-config", "ethos-u55-128", "--system-config", "My_U55",
                                         "--memory-mode", "My_Shared_1MB", "--output-dir", (tmp / "out").string(), "-q"};
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  const nlohmann::json result = nlohmann::json::parse(read_text(tmp / "out" / "result.json"));
  const nlohmann::json& a = result["arch"];
  EXPECT_EQ(a["accelerator"], "ethos-u55-128");
  EXPECT_EQ(a["system_config"], "My_U55");
  EXPECT_EQ(a["memory_mode"], "My_Shared_1MB");
  EXPECT_EQ(a["core_clock_hz"], 400e6);                // the section's own
  EXPECT_EQ(a["memories"]["OffChipFlash"]["bytes_per_cycle"], 1.0);  // inherited: 64 bits x 0.125 / 8
  EXPECT_EQ(a["sram_capacity_bytes"], 1048576);        // arena_cache_size of a mode that does not spill
  EXPECT_EQ(result["provenance"]["inputs"]["config"][0]["path"], (tmp / "my.ini").string());
  EXPECT_NE(file_named(tmp / "out", "_summary_My_U55.csv"), "");
  EXPECT_NE(file_named(tmp / "out", "_per-layer.csv"), "");
  // -v lists the keys the model does not use, once.
  const RunResult v = run_mapper({"workloads/tiny_chain.yaml", "--accelerator-config", "ethos-u55-128", "--config",
                                  (tmp / "my.ini").string(), "--config", (tmp / "my.ini").string(), "--system-config",
                                  "My_U55", "--output-dir", (tmp / "v").string(), "-v"});
  ASSERT_EQ(v.status, 0) << v.err;
  const auto lines = lines_of(v.err);
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("Sram_max_reads") != std::string::npos; }),
            1)
      << v.err;
}

TEST(VelaCli, AnImpossibleMemoryModeIsRefusedWithTheModesThatWork) {
  // The case: Dedicated_Sram on an ethos-u55 used to put the feature maps in off-chip flash.
  TempDir tmp;
  const RunResult r = run_mapper({"workloads/tiny_chain.yaml", "--accelerator-config", "ethos-u55-256", "--memory-mode",
                                  "Dedicated_Sram", "--output-dir", (tmp / "out").string()});
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("(memory modes for ethos-u55-256 with system config `internal-default`: internal-default, "
                       "Sram_Only, Shared_Sram)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(VelaCli, VelasCsvFilesParseWithVelasColumnLists) {
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "workloads/tiny_residual.yaml", "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json result = nlohmann::json::parse(read_text(tmp / "out" / "result.json"));
  const nlohmann::json& point = result["front"][0];
  const auto summary = read_csv_strict(read_text(tmp / "out" / "tiny_residual_summary_internal-default.csv"));
  ASSERT_EQ(summary.size(), 2u);
  ASSERT_EQ(summary[0], kVelaSummaryColumns);
  std::map<std::string, std::string> s;
  for (std::size_t i = 0; i < kVelaSummaryColumns.size(); ++i) s[kVelaSummaryColumns[i]] = summary[1][i];
  // Typed as Vela writes them: strings, Python ints, Python floats.
  for (const char* k : {"batch_size", "passes_before_fusing", "passes_after_fusing", "total_original_weights",
                        "total_npu_weights", "total_npu_encoded_weights", "nn_macs"})
    EXPECT_NO_THROW(as_int(s[k])) << k;
  for (std::size_t i = 5; i < kVelaSummaryColumns.size(); ++i) {
    const std::string& k = kVelaSummaryColumns[i];
    if (k == "weights_storage_area" || k == "feature_map_storage_area" || k == "batch_size" || k.rfind("passes_", 0) == 0 ||
        k.rfind("total_", 0) == 0 || k == "nn_macs")
      continue;
    EXPECT_NO_THROW(as_float(s[k])) << k << " = " << s[k];
  }
  // The arch, by hand: ethos-u55-256 on Vela's internal default (500 MHz; 64-bit AXI: SRAM clock
  // scale 1 -> 8 B/cycle = 4 GB/s, flash 0.125 -> 0.5 GB/s, the unconfigured DRAM and on-chip flash at
  // scale 1 -> 4 GB/s); no spilling, so Vela's sram_size is 9999 MiB = 10238976 KiB.
  EXPECT_EQ(s["experiment"], "default");
  EXPECT_EQ(s["network"], "tiny_residual");
  EXPECT_EQ(s["accelerator_configuration"], "Ethos_U55_256");
  EXPECT_EQ(s["system_config"], "internal-default");
  EXPECT_EQ(s["core_clock"], "500000000.0");
  EXPECT_EQ(s["sram_size"], "10238976.0");
  EXPECT_EQ(s["sram_bandwidth"], "4.0");
  EXPECT_EQ(s["dram_bandwidth"], "4.0");
  EXPECT_EQ(s["off_chip_flash_bandwidth"], "0.5");
  EXPECT_EQ(s["weights_storage_area"], "Off-chip Flash");
  EXPECT_EQ(s["feature_map_storage_area"], "SRAM");
  EXPECT_EQ(s["batch_size"], "1");
  // Against result.json's chosen point.
  const double cycles = point["cycles"].get<double>();
  EXPECT_EQ(as_float(s["cycles_total"]), cycles);
  EXPECT_EQ(as_float(s["inference_time"]), cycles / 500e6);
  EXPECT_EQ(as_float(s["sram_memory_used"]) * 1024, point["sram_bytes"].get<double>());
  EXPECT_EQ(as_int(s["nn_macs"]), result["workload"]["macs"].get<std::int64_t>());
  EXPECT_EQ(as_int(s["passes_before_fusing"]), result["workload"]["layers"].get<std::int64_t>());
  EXPECT_EQ(as_float(s["off_chip_flash_total_bytes"]) + as_float(s["dram_total_bytes"]), point["offchip_bytes"].get<double>());
  double component_sum = 0.0;
  for (const char* k : {"cycles_npu", "cycles_sram_access", "cycles_dram_access", "cycles_on_chip_flash_access",
                        "cycles_off_chip_flash_access"})
    component_sum += as_float(s[k]);
  EXPECT_GE(component_sum, cycles);  // a layer's total is the largest of its components

  const auto per_layer = read_csv_strict(read_text(tmp / "out" / "tiny_residual_per-layer.csv"));
  ASSERT_EQ(per_layer[0], kVelaPerLayerColumns);
  ASSERT_EQ(per_layer.size(), 1 + result["workload"]["layers"].get<std::size_t>());  // every layer runs on the NPU
  double op_cycles = 0.0, network_pct = 0.0, peak_pct = 0.0;
  std::int64_t macs = 0;
  for (std::size_t i = 1; i < per_layer.size(); ++i) {
    const auto& row = per_layer[i];
    EXPECT_NE(row[0], "");
    EXPECT_NE(row[1], "");
    const std::int64_t sram = as_int(row[2]);
    EXPECT_LE(static_cast<double>(sram), point["sram_bytes"].get<double>());
    peak_pct = std::max(peak_pct, as_float(row[3]));
    op_cycles += as_float(row[4]);
    network_pct += as_float(row[5]);
    for (std::size_t c = 6; c <= 10; ++c) EXPECT_LE(as_float(row[c]), as_float(row[4]));
    macs += as_int(row[11]);
    EXPECT_GE(as_float(row[13]), 0.0);  // 0 for the add, which has no MACs
    EXPECT_LE(as_float(row[13]), 100.0);
  }
  EXPECT_EQ(per_layer.back()[14], "add");  // tiny_residual's last layer
  EXPECT_EQ(op_cycles, cycles);
  EXPECT_NEAR(network_pct, 100.0, 1e-9);
  EXPECT_EQ(peak_pct, 100.0);  // the point's peak is some layer's SRAM in use
  EXPECT_EQ(macs, as_int(s["nn_macs"]));
}

TEST(VelaCli, OptimiseChoosesTheBestLatencyOrTheLeastSramPoint) {
  TempDir tmp;
  const auto run = [&](const std::string& dir, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--workload", "workloads/tiny_residual.yaml", "--objectives", "sram,cycles",
                                     "--out", (tmp / dir).string(), "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run_mapper(args);
    EXPECT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
    return nlohmann::json::parse(read_text(tmp / dir / "result.json"));
  };
  const nlohmann::json all = run("all", {"--keep-pareto"});
  const nlohmann::json& front = all["front"];
  ASSERT_GT(front.size(), 1u) << "the test needs a front with a trade-off";
  std::size_t least_cycles = 0, least_sram = 0;
  for (std::size_t i = 1; i < front.size(); ++i) {
    const auto c = [&](std::size_t k, const char* key) { return front[k][key].get<double>(); };
    if (std::make_pair(c(i, "cycles"), c(i, "sram_bytes")) < std::make_pair(c(least_cycles, "cycles"), c(least_cycles, "sram_bytes")))
      least_cycles = i;
    if (std::make_pair(c(i, "sram_bytes"), c(i, "cycles")) < std::make_pair(c(least_sram, "sram_bytes"), c(least_sram, "cycles")))
      least_sram = i;
  }
  EXPECT_EQ(all["chosen"], 0);  // without --optimise: the best by the first objective (here sram)
  const nlohmann::json perf = run("perf", {"--keep-pareto", "--optimise", "Performance"});
  EXPECT_EQ(perf["chosen"], least_cycles);
  EXPECT_EQ(perf["provenance"]["options"]["optimise"], "Performance");
  // front.csv marks the chosen point in its `chosen` column (the 8th).
  const auto front_csv = read_text(tmp / "perf" / "front.csv");
  auto rows = lines_of(front_csv);
  ASSERT_FALSE(rows.empty());
  ASSERT_EQ(rows.front().rfind("point,", 0), 0u) << "an exact front's front.csv starts with its header";
  ASSERT_EQ(rows.size(), 1 + front.size());
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> cells;
    std::istringstream line(rows[i]);
    for (std::string c; std::getline(line, c, ',');) cells.push_back(c);
    ASSERT_GT(cells.size(), 7u);
    EXPECT_EQ(cells[7], i - 1 == least_cycles ? "1" : "0") << rows[i];
  }
  const nlohmann::json size = run("size", {"--optimise", "Size"});  // only the chosen point kept
  ASSERT_EQ(size["front"].size(), 1u);
  EXPECT_EQ(size["front"][0]["cycles"], front[least_sram]["cycles"]);
  EXPECT_EQ(size["front"][0]["sram_bytes"], front[least_sram]["sram_bytes"]);
  // The report and Vela's summary follow the chosen point.
  const RunResult text = run_mapper({"show", (tmp / "size").string()});
  EXPECT_NE(text.out.find("Chosen mapping (least SRAM, --optimise Size):"), std::string::npos) << text.out;
  const auto summary = read_csv_strict(read_text(tmp / "size" / "tiny_residual_summary_internal-default.csv"));
  EXPECT_EQ(as_float(summary[1][std::find(kVelaSummaryColumns.begin(), kVelaSummaryColumns.end(), "cycles_total") -
                                kVelaSummaryColumns.begin()]),
            front[least_sram]["cycles"].get<double>());
}

TEST(VelaCli, TheListedSectionsReadBackAsTheBuiltIns) {
  TempDir tmp;
  const RunResult sys = run_mapper({"list", "system-configs"});
  const RunResult modes = run_mapper({"list", "memory-modes"});
  ASSERT_EQ(sys.status, 0);
  ASSERT_EQ(modes.status, 0);
  EXPECT_NE(sys.out.find("[System_Config.Ethos_U65_High_End]\ncore_clock=1e9\n"), std::string::npos) << sys.out;
  EXPECT_NE(modes.out.find("[Memory_Mode.Dedicated_Sram_384KB]\ninherit=Memory_Mode.Dedicated_Sram\n"), std::string::npos);
  write_text(tmp / "sys.ini", sys.out);
  write_text(tmp / "modes.ini", modes.out);
  const std::vector<std::string> common = {"--workload", "workloads/tiny_chain.yaml", "--accelerator-config", "ethos-u65-512",
                                           "--system-config", "Ethos_U65_Mid_End", "--memory-mode", "Dedicated_Sram_512KB",
                                           "-q", "--keep-pareto"};
  std::vector<std::string> a = common;
  a.insert(a.end(), {"--config", (tmp / "sys.ini").string(), "--config", (tmp / "modes.ini").string(), "--out", (tmp / "a").string()});
  std::vector<std::string> b = common;
  b.insert(b.end(), {"--out", (tmp / "b").string()});
  ASSERT_EQ(run_mapper(a).status, 0);
  ASSERT_EQ(run_mapper(b).status, 0);
  const nlohmann::json ra = nlohmann::json::parse(read_text(tmp / "a" / "result.json"));
  const nlohmann::json rb = nlohmann::json::parse(read_text(tmp / "b" / "result.json"));
  EXPECT_EQ(ra["arch"], rb["arch"]);
  EXPECT_EQ(ra["front"], rb["front"]);
  EXPECT_EQ(ra["arch"]["sram_capacity_bytes"], 524288);
}

TEST(VelaCli, VelaOptionsWithoutACounterpartAreNotedOrRefused) {
  TempDir tmp;
  const RunResult noted = run_mapper({"workloads/tiny_chain.yaml", "--timing", "--verbose-performance", "--recursion-limit",
                                      "2000", "--out", (tmp / "a").string()});
  ASSERT_EQ(noted.status, 0) << noted.err;
  const auto notes = lines_of(noted.err);
  ASSERT_EQ(notes.size(), 3u) << noted.err;
  for (const char* option : {"--timing", "--verbose-performance", "--recursion-limit"}) {
    const std::string prefix = std::string("note: ") + option + " is a Vela option npu-mapper ignores: ";
    EXPECT_EQ(std::count_if(notes.begin(), notes.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }), 1)
        << option << "\n" << noted.err;
  }
  const RunResult refused = run_mapper({"workloads/tiny_chain.yaml", "--force-block-config", "8x8x8", "--out", (tmp / "b").string()});
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(lines_of(refused.err).size(), 1u);
  EXPECT_EQ(refused.err.rfind("--force-block-config: is a Vela option npu-mapper does not take (", 0), 0u) << refused.err;
  EXPECT_FALSE(fs::exists(tmp / "b"));
  // The model once; a mistyped command; --arch and --accelerator-config together.
  EXPECT_EQ(run_mapper({"workloads/tiny_chain.yaml", "--workload", "workloads/tiny_chain.yaml"}).status, 2);
  const RunResult typo = run_mapper({"evl"});
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("did you mean `mapper eval`?"), std::string::npos) << typo.err;
  EXPECT_EQ(run_mapper({"workloads/tiny_chain.yaml", "--arch", "ethos-u55-64", "--accelerator-config", "ethos-u55-64"}).status, 2);
}

TEST(VelaCli, AFloatModelSaysNoOperatorRunsOnTheNpu) {
  // A float32 convolution and ReLU: Vela places both on the CPU (its type constraint), so there is no
  // NPU mapping: one line saying so and why, exit status 1, nothing written.
  using namespace npumap::tflite;
  Net n;
  const int x = n.fm("x", {1, 8, 8, 4}, kF32, 0.0f);
  const int w = n.cst_bytes("w", {4, 1, 1, 4}, kF32, std::vector<std::uint8_t>(64, 0));
  const int y = n.fm("y", {1, 8, 8, 4}, kF32, 0.0f);
  const int z = n.fm("z", {1, 8, 8, 4}, kF32, 0.0f);
  n.op(CONV_2D, {x, w, -1}, {y}, conv_opts(1, 1));
  n.op(RELU, {y}, {z});
  n.sg.inputs = {x};
  n.sg.outputs = {z};
  tflite::testing::ModelSpec spec = n.spec;
  spec.subgraphs = {n.sg};
  TempDir tmp;
  write_text(tmp / "float.tflite", tflite::testing::build_model(spec));
  const RunResult r = run_mapper({(tmp / "float.tflite").string(), "--out", (tmp / "out").string()});
  EXPECT_EQ(r.status, 1);
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind((tmp / "float.tflite").string() + ": no operator runs on the NPU: all 2 operators fall back to "
                                                            "the CPU: ",
                           0),
            0u)
      << lines[0];
  EXPECT_NE(lines[0].find("Tensors must be of type: int16, int32, int8, uint8"), std::string::npos) << lines[0];  // Vela's
  EXPECT_NE(lines[0].find("float32 tensors"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--allow-cpu-only"), std::string::npos) << lines[0];
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(tmp / "out"));
  const RunResult allowed = run_mapper({(tmp / "float.tflite").string(), "--allow-cpu-only", "--out", (tmp / "ok").string(), "-q"});
  EXPECT_EQ(allowed.status, 0) << allowed.err;
  EXPECT_TRUE(fs::exists(tmp / "ok" / "result.json"));
}

TEST(VelaCli, ARealModelRunsTheVelaWay) {
  const fs::path model = fs::path("workloads") / "models" / "tflm__person_detect.tflite";
  TempDir tmp;
  const RunResult r = run_mapper({model.string(), "--accelerator-config", "ethos-u65-256", "--system-config",
                                  "Ethos_U65_High_End", "--memory-mode", "Dedicated_Sram_384KB", "--optimise", "Size",
                                  "--output-dir", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = read_csv_strict(read_text(tmp / "out" / "tflm__person_detect_summary_Ethos_U65_High_End.csv"));
  ASSERT_EQ(summary[0], kVelaSummaryColumns);
  std::map<std::string, std::string> s;
  for (std::size_t i = 0; i < kVelaSummaryColumns.size(); ++i) s[kVelaSummaryColumns[i]] = summary[1][i];
  // U65 High-End, by hand: 1 GHz, 128-bit AXI: DRAM clock scale 0.234375 -> 3.75 GB/s; the 384 KiB cache.
  EXPECT_EQ(s["accelerator_configuration"], "Ethos_U65_256");
  EXPECT_EQ(s["dram_bandwidth"], "3.75");
  EXPECT_EQ(s["sram_bandwidth"], "16.0");
  EXPECT_EQ(s["sram_size"], "384.0");
  EXPECT_EQ(s["weights_storage_area"], "DRAM");
  EXPECT_EQ(s["feature_map_storage_area"], "DRAM");
  EXPECT_GT(as_float(s["dram_memory_used"]), 0.0);  // the constants and the arena
  const auto per_layer = read_csv_strict(read_text(tmp / "out" / "tflm__person_detect_per-layer.csv"));
  ASSERT_EQ(per_layer[0], kVelaPerLayerColumns);
  EXPECT_EQ(per_layer.size(), 61u);  // 60 NPU passes (tflite_cli_test)
}

}  // namespace
}  // namespace npumap::cli_test
