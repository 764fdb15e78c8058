// Every point of a saved front can be re-evaluated: `mapper eval result.json` runs the cycle model
// on each layer's pass, and per point the layers' Total cycles (times the layer's repeat count) and
// off-chip bytes add up to the point's totals.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

TEST(EvalResult, FrontPassesReproduceTheTotals) {
  // Hand-written workloads, then real models (imported: LUT passes such as micro_speech's softmax,
  // weights whose encoded size follows each point's traversal, block depth and placement) on three
  // accelerators (the two smallest U55s, without LUT fusion, and the largest U65), and
  // ssd_mobilenet_v3 on an ethos-u65-256, whose ten standalone requantisations are post-ops-only
  // passes timed by a copy of their input in DRAM (pass JSON `primary_ofm`).
  std::vector<std::pair<std::string, std::string>> runs = {
      {"workloads/tiny_residual.yaml", "ethos-u55-256"},
      {"workloads/tiny_residual.yaml", "ethos-u65-256"},
      {"workloads/models/mlzoo__ssd_mobilenet_v3_int8.tflite", "ethos-u65-256"}};
  // ssd_mobilenet_v3's whole front is over 20 MiB of result.json (seconds to write and check): its
  // run keeps the chosen point only.
  for (const char* model : {"tflm__micro_speech_quantized", "tflm__person_detect", "mlperftiny__kws_ref_model",
                            "mlperftiny__ad01_int8", "mlperftiny__vww_96_int8"}) {
    for (const char* arch : {"ethos-u55-32", "ethos-u55-64", "ethos-u65-512"}) {
      runs.emplace_back(std::string("workloads/models/") + model + ".tflite", arch);
    }
  }
  int primary_ofm_passes = 0;
  int cpu_layers = 0;
  for (const auto& [workload, arch] : runs) {
    TempDir tmp;
    SCOPED_TRACE(workload + " " + arch);
    std::vector<std::string> args = {"--workload", workload, "--arch", arch, "--out", (tmp / "out").string(), "-q"};
    if (workload.find("ssd_mobilenet") == std::string::npos) args.emplace_back("--keep-pareto");
    const RunResult run = run_mapper(args);
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string text = read_text(tmp / "out" / "result.json");
    const Json result = Json::parse(text);
    // The front's passes only: vela_baseline repeats the layers of Vela's schedule.
    Json front_only = result;
    front_only.erase("vela_baseline");
    const std::string front_text = front_only.dump();
    for (std::size_t at = front_text.find("\"primary_ofm\""); at != std::string::npos;
         at = front_text.find("\"primary_ofm\"", at + 1))
      ++primary_ofm_passes;
    const RunResult ev = run_mapper({"eval", (tmp / "out" / "result.json").string()});
    ASSERT_EQ(ev.status, 0) << ev.err;
    const Json evaluated = Json::parse(ev.out);
    std::map<std::string, Json> by_id;
    for (const auto& r : evaluated) by_id[r["id"].get<std::string>()] = r["result"];
    const Json& front = result["front"];
    ASSERT_FALSE(front.empty());
    for (std::size_t p = 0; p < front.size(); ++p) {
      double cycles = 0.0;
      double offchip = 0.0;
      for (const auto& layer : layers_of(result, front[p])) {
        if (layer["op"] == "cpu") {  // a CPU operator has no pass and costs nothing
          EXPECT_EQ(layer["cycles"].get<double>(), 0.0);
          EXPECT_EQ(layer["offchip_bytes"].get<double>(), 0.0);
          ++cpu_layers;
          continue;
        }
        const std::string id = "point" + std::to_string(p) + ":" + layer["layer"].get<std::string>();
        ASSERT_TRUE(by_id.count(id)) << id;
        const Json& m = by_id[id];
        const double repeat = layer["repeat"].get<double>();
        const double total = m["cycles"]["Total"].get<double>() * repeat;
        EXPECT_EQ(total, layer["cycles"].get<double>()) << id;
        double layer_offchip = 0.0;
        for (const auto& [area, bytes] : m["bandwidth_totals_by_area"].items()) {
          if (area == "Dram" || area == "OffChipFlash") layer_offchip += bytes.get<double>();
        }
        EXPECT_DOUBLE_EQ(layer_offchip * repeat, layer["offchip_bytes"].get<double>()) << id;
        cycles += total;
        offchip += layer_offchip * repeat;
      }
      EXPECT_EQ(cycles, front[p]["cycles"].get<double>()) << arch << " point " << p;
      EXPECT_DOUBLE_EQ(offchip, front[p]["offchip_bytes"].get<double>()) << arch << " point " << p;
    }
  }
  // ssd_mobilenet_v3's ten layer mappings of created AvgPools (one point).
  EXPECT_EQ(primary_ofm_passes, 10);
  EXPECT_GT(cpu_layers, 0);  // kws_ref_model's AvgPool (stride 5x25) stays on the CPU
}

TEST(EvalResult, ARunFolderStandsForItsResult) {
  // `mapper show DIR` and `mapper eval DIR` on a run folder read DIR/result.json (they used to abort).
  TempDir tmp;
  const RunResult run = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(run.status, 0) << run.err;
  const RunResult by_file = run_mapper({"show", (tmp / "out" / "result.json").string()});
  const RunResult by_folder = run_mapper({"show", (tmp / "out").string()});
  EXPECT_EQ(by_folder.status, 0) << by_folder.err;
  EXPECT_EQ(by_folder.out, by_file.out);
  const RunResult eval_file = run_mapper({"eval", (tmp / "out" / "result.json").string()});
  const RunResult eval_folder = run_mapper({"eval", (tmp / "out").string()});
  EXPECT_EQ(eval_folder.status, 0) << eval_folder.err;
  EXPECT_EQ(eval_folder.out, eval_file.out);
  // A folder without a result is a clear one-line error, exit 2.
  const RunResult empty = run_mapper({"show", tmp.path().string()});
  EXPECT_EQ(empty.status, 2) << empty.err;
  EXPECT_EQ(lines_of(empty.err).size(), 1u) << empty.err;
}

TEST(EvalResult, ALargeFrontStaysSmallAndRoundTrips) {
  // mobilenet_v2's whole front on ethos-u65-256 (about 100 points of 64 layers) wrote 20.6 MB when
  // every point inlined its layers; shared layer mappings are written once. Bound: 10x smaller.
  TempDir tmp;
  const RunResult run = run_mapper({"--workload", "mobilenet_v2", "--arch", "ethos-u65-256", "--keep-pareto", "--out",
                                    (tmp / "out").string(), "-q"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_LT(fs::file_size(tmp / "out" / "result.json"), 2'060'000u);
  const Json result = Json::parse(read_text(tmp / "out" / "result.json"));
  std::size_t refs = 0;
  for (const Json& p : result["front"]) refs += p["layers"].size();
  EXPECT_LT(result["layer_mappings"].size() * 10, refs) << "points share their layers' mappings";
  // Every reference resolves, and `mapper eval` re-evaluates every layer of every point.
  const RunResult ev = run_mapper({"eval", (tmp / "out").string()});
  ASSERT_EQ(ev.status, 0) << ev.err;
  EXPECT_EQ(Json::parse(ev.out).size(), refs);
}

}  // namespace
}  // namespace npumap::cli_test
