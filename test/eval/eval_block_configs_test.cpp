// `mapper eval --block-configs`: the whole reference file checks 120/120; a corrupted record is reported
// as a mismatch with exit status 1; bad input raises common::UserError naming the file and key path.

#include "mapper/eval/eval_block_configs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/user_error.hpp"

namespace npumap::eval {
namespace {

const char* kReference = "test/data/npu_reference_block_configs.json";

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         (std::string("npumap_eval_bc_") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
          name);
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream o(path);
  o << j.dump(1);
}

nlohmann::json reference() {
  std::ifstream in(kReference);
  return nlohmann::json::parse(in);
}

TEST(EvalBlockConfigs, CheckReferenceFileMatchesAll) {
  std::ostringstream out, err;
  EXPECT_EQ(run_eval_block_configs(kReference, true, "", out, err), 0);
  EXPECT_EQ(out.str(), "120/120 matched\n");
}

TEST(EvalBlockConfigs, ReportsMismatches) {
  nlohmann::json records = reference();
  ASSERT_EQ(records.size(), 120u);
  records[0]["num_valid"] = records[0]["num_valid"].get<int>() + 1;
  records[3]["alloc"]["available_banks"] = 99;
  records[3]["scheduler_candidates_limit16"].erase(0);
  const auto path = temp_path("bad.json");
  write_json(path, records);
  std::ostringstream out, err;
  EXPECT_EQ(run_eval_block_configs(path.string(), true, "", out, err), 1);
  const std::string text = out.str();
  EXPECT_NE(
      text.find(
          "records[0] ethos-u55-32 conv1x1_56x56x64_to128 (int8, uses_lut=false): num_valid: expected 745, actual 744"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("records[3] "), std::string::npos);
  EXPECT_NE(text.find("alloc.available_banks: expected 99, actual"), std::string::npos) << text;
  EXPECT_NE(text.find("scheduler_candidates_limit16: expected"), std::string::npos) << text;
  EXPECT_NE(text.find("118/120 matched"), std::string::npos) << text;
  std::filesystem::remove(path);
}

TEST(EvalBlockConfigs, WritesResultsThatMatchTheReference) {
  const auto out_path = temp_path("out.json");
  std::ostringstream out, err;
  ASSERT_EQ(run_eval_block_configs(kReference, false, out_path.string(), out, err), 0);
  EXPECT_TRUE(out.str().empty());
  std::ifstream in(out_path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  const nlohmann::json ref = reference();
  ASSERT_EQ(doc.at("records").size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const auto& got = doc["records"][i];
    EXPECT_EQ(got.at("accelerator"), ref[i].at("accelerator"));
    EXPECT_EQ(got.at("layer_name"), ref[i].at("layer_name"));
    EXPECT_EQ(got.at("alloc"), ref[i].at("alloc"));
    EXPECT_EQ(got.at("num_valid"), ref[i].at("num_valid"));
    EXPECT_EQ(got.at("scheduler_candidates_limit16"), ref[i].at("scheduler_candidates_limit16"));
    if (ref[i].contains("valid_block_configs")) {
      EXPECT_EQ(got.at("valid_block_configs"), ref[i]["valid_block_configs"]);
    }
  }
  std::filesystem::remove(out_path);
}

std::string user_error_of(const nlohmann::json& records) {
  const auto path = temp_path("input.json");
  write_json(path, records);
  std::ostringstream out, err;
  try {
    run_eval_block_configs(path.string(), true, "", out, err);
  } catch (const common::UserError& e) {
    std::filesystem::remove(path);
    return e.what();
  }
  std::filesystem::remove(path);
  return "no error";
}

TEST(EvalBlockConfigs, BadInputNamesFileAndKey) {
  const nlohmann::json ref = reference();
  nlohmann::json r = nlohmann::json::array({ref[5]});
  r[0]["accelerator"] = "ethos-u55-2566";
  std::string e = user_error_of(r);
  EXPECT_NE(e.find("records[0].accelerator: unknown accelerator 'ethos-u55-2566' (did you mean 'ethos-u55-256'?)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("npumap_eval_bc_BadInputNamesFileAndKey_input.json: "), std::string::npos) << e;

  r = nlohmann::json::array({ref[5]});
  r[0]["ifm_shap"] = r[0]["ifm_shape"];
  e = user_error_of(r);
  EXPECT_NE(e.find("records[0].ifm_shap: unknown key (did you mean 'ifm_shape'?)"), std::string::npos) << e;

  r = nlohmann::json::array({ref[5]});
  r[0].erase("ofm_shape");
  e = user_error_of(r);
  EXPECT_NE(e.find("records[0].ofm_shape: missing required key"), std::string::npos) << e;

  r = nlohmann::json::array({ref[5]});
  r[0]["kernel_hw"] = {3, 0};
  e = user_error_of(r);
  EXPECT_NE(e.find("records[0].kernel_hw[1]: 0 is out of range"), std::string::npos) << e;

  r = nlohmann::json::array({ref[0]});  // a Conv2DBias with a 32-bit IFM
  r[0]["ifm_dtype"] = "int32";
  e = user_error_of(r);
  EXPECT_NE(e.find("records[0].ifm_dtype: a 32-bit IFM is not supported by Conv2DBias"), std::string::npos) << e;

  r = nlohmann::json::array({ref[0]});
  r[0]["op_type"] = "Conv2DBais";
  e = user_error_of(r);
  EXPECT_NE(e.find("(did you mean 'Conv2DBias'?)"), std::string::npos) << e;

  e = user_error_of(nlohmann::json::object());
  EXPECT_NE(e.find("expected a JSON list of records"), std::string::npos) << e;
}

TEST(EvalBlockConfigs, MalformedJsonHasLineAndColumn) {
  const auto path = temp_path("broken.json");
  {
    std::ofstream o(path);
    o << "[\n {\"accelerator\": \"ethos-u55-32\",\n  \"layer_name\" 1}\n]\n";
  }
  std::ostringstream out, err;
  try {
    run_eval_block_configs(path.string(), true, "", out, err);
    ADD_FAILURE() << "expected a common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(e.where().line, 3) << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(run_eval_block_configs("no/such/file.json", true, "", out, err), common::UserError);
}

}  // namespace
}  // namespace npumap::eval
