// run_eval (`mapper eval`) end to end: the full reference file must match 175/175; a perturbed file must
// report the differing fields and return 1; bare inputs and --out write `{id, result}` lists.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/user_error.hpp"
#include "mapper/eval/eval_command.hpp"

namespace npumap::eval {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kPassReference = "test/data/npu_reference_passes.json";

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("npumap_eval_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const json& j) const {
    const fs::path p = path / name;
    std::ofstream(p) << j.dump();
    return p.string();
  }
};

json load_reference() {
  std::ifstream in(kPassReference);
  return json::parse(in);
}

TEST(EvalCommand, FullReferenceMatches) {
  EvalOptions o;
  o.input_path = kPassReference;
  o.check = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_eval(o, out, err), 0) << out.str();
  EXPECT_NE(out.str().find("175/175 matched"), std::string::npos) << out.str();
}

TEST(EvalCommand, MismatchesAreReported) {
  TempDir dir;
  json recs = load_reference();
  recs = json::array({recs[0], recs[1], recs[2]});
  recs[1]["expected"]["cycles"]["Npu"] = recs[1]["expected"]["cycles"]["Npu"].get<double>() * (1.0 + 1e-6);
  recs[2]["expected"]["macs"] = recs[2]["expected"]["macs"].get<std::int64_t>() + 1;
  recs[2]["expected"]["bandwidths"].erase(0);
  EvalOptions o;
  o.input_path = dir.write("bad.json", recs);
  o.check = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_eval(o, out, err), 1);
  const std::string text = out.str();
  EXPECT_NE(text.find("1/3 matched"), std::string::npos) << text;
  EXPECT_NE(text.find(recs[1]["id"].get<std::string>() + " cycles.Npu "), std::string::npos) << text;
  EXPECT_NE(text.find(recs[2]["id"].get<std::string>() + " macs "), std::string::npos) << text;
  EXPECT_NE(text.find(recs[2]["id"].get<std::string>() + " bandwidths["), std::string::npos) << text;
}

TEST(EvalCommand, ToleranceIsRelativeOneInABillion) {
  TempDir dir;
  json recs = json::array({load_reference()[5]});
  const double npu = recs[0]["expected"]["cycles"]["Npu"].get<double>();
  recs[0]["expected"]["cycles"]["Npu"] = npu * (1.0 + 1e-11);  // inside 1e-9
  EvalOptions o;
  o.input_path = dir.write("ok.json", recs);
  o.check = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_eval(o, out, err), 0) << out.str();
}

// A pass of Vela's compile of a real model with the inputs its reference record lacks (docs/design/
// tflite-import.md "Per-pass cycles against Vela"): the LSTM's sigmoid LUT pass on U55-128, with its
// LUT table, op shapes and scales. Expected by hand (test/model/evaluate_vela_ops_test.cpp): Npu 118
// (118 elements at 1 cycle), SRAM (256 + 472) / 8 = 91, flash 257 * 128/118 (Vela prints 278.78).
TEST(EvalCommand, RealModelLutPassMatches) {
  TempDir dir;
  const json fm_ifm = {{"shape", {1, 472}}, {"dtype", "int8"}, {"mem_area", "Sram"}, {"format", "NHWC"},
                       {"needs_linear_format", true}, {"quant_scale", 0.5}, {"op_shape", {1, 1, 1, 472}}};
  const json fm_ifm2 = {{"shape", json::array()}, {"dtype", "int8"}, {"mem_area", "OffChipFlash"}, {"format", "NHWC"},
                        {"needs_linear_format", true}, {"quant_scale", 0.5}, {"op_shape", {1, 1, 1, 1}}};
  const json fm_ofm = {{"shape", {1, 118}}, {"dtype", "int8"}, {"mem_area", "Sram"}, {"format", "NHCWB16"},
                       {"needs_linear_format", false}, {"quant_scale", 0.5}, {"op_shape", {1, 1, 1, 118}}};
  const json input = {{"accelerator", "ethos-u55-128"},
                      {"layer_name", "model/lstm/lstm_cell/Sigmoid_2_lut_sigmoid"},
                      {"op", {{"type", "Add"}, {"activation", "LUT"}}},
                      {"ifm", fm_ifm},
                      {"ifm2", fm_ifm2},
                      {"ofm", fm_ofm},
                      {"lut", {{"shape", {1, 1, 1, 256}}, {"dtype", "int8"}, {"mem_area", "OffChipFlash"}}},
                      {"block_config", {1, 2, 120, 120}},
                      {"has_npu_predecessor", true}};
  const double flash = 257.0 * 128.0 / 118.0;
  const json expected = {{"cycles",
                          {{"Npu", 118.0}, {"SramAccess", 91.0}, {"DramAccess", 0.0}, {"OnChipFlashAccess", 0.0},
                           {"OffChipFlashAccess", flash}, {"Total", flash}}}};
  EvalOptions o;
  o.input_path = dir.write("lut.json", json::array({{{"id", "lut"}, {"input", input}, {"expected", expected}}}));
  o.check = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_eval(o, out, err), 0) << out.str();
  EXPECT_NE(out.str().find("1/1 matched"), std::string::npos) << out.str();
}

TEST(EvalCommand, BareInputsAndOutputFile) {
  TempDir dir;
  const json ref = load_reference();
  const json inputs = json::array({ref[0]["input"], ref[40]["input"]});
  EvalOptions o;
  o.input_path = dir.write("inputs.json", inputs);
  o.output_path = (dir.path / "out.json").string();
  std::ostringstream out, err;
  ASSERT_EQ(run_eval(o, out, err), 0);
  EXPECT_TRUE(out.str().empty());
  std::ifstream in(o.output_path);
  const json results = json::parse(in);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["id"], 0);
  EXPECT_EQ(results[1]["id"], 1);
  EXPECT_EQ(results[0]["result"]["cycles"]["Total"], ref[0]["expected"]["cycles"]["Total"]);
  EXPECT_EQ(results[1]["result"]["macs"], ref[40]["expected"]["macs"]);
  // Only the output file is left behind: the temporary was renamed into place.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 2);
}

TEST(EvalCommand, WritesToStreamWithoutCheck) {
  EvalOptions o;
  o.input_path = kPassReference;
  std::ostringstream out, err;
  ASSERT_EQ(run_eval(o, out, err), 0);
  const json results = json::parse(out.str());
  ASSERT_EQ(results.size(), 175u);
  EXPECT_EQ(results[3]["id"], load_reference()[3]["id"]);
}

TEST(EvalCommand, BadInputThrowsUserError) {
  TempDir dir;
  const std::string path = (dir.path / "broken.json").string();
  std::ofstream(path) << "[{\"input\": ";
  EvalOptions o;
  o.input_path = path;
  std::ostringstream out, err;
  try {
    run_eval(o, out, err);
    FAIL() << "expected common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
  }
  json recs = json::array({load_reference()[0]});
  recs[0]["input"]["ofm"]["dtype"] = "int9";
  o.input_path = dir.write("dtype.json", recs);
  try {
    run_eval(o, out, err);
    FAIL() << "expected common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("records[0].input.ofm.dtype"), std::string::npos) << e.what();
  }
  o.input_path = (dir.path / "missing.json").string();
  EXPECT_THROW(run_eval(o, out, err), common::UserError);
}

}  // namespace
}  // namespace npumap::eval
