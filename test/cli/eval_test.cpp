// `mapper eval` through the executable: the reference data must check clean (exit 0 with the full
// count matched), and a copy with one expected number changed must fail with exit 1 and a mismatch
// line that names the record and the field, so a user can find what disagrees.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : lines_of(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST(EvalPasses, ReferencePassesAllMatch) {
  const std::vector<std::string> args = {"eval", "test/data/npu_reference_passes.json", "--check"};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  EXPECT_TRUE(has_line(r.out + r.err, "175/175 matched")) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
}

TEST(EvalPasses, ChangedExpectedTotalIsAMismatchNamingIdAndField) {
  Json passes = Json::parse(read_text("test/data/npu_reference_passes.json"));
  ASSERT_EQ(passes.size(), 175u);
  Json& record = passes[7];
  const std::string id = record["id"].get<std::string>();
  const double total = record["expected"]["cycles"]["Total"].get<double>();
  record["expected"]["cycles"]["Total"] = total + 1000.0;
  TempDir tmp;
  write_text(tmp / "passes.json", passes.dump(1));

  const std::vector<std::string> args = {"eval", (tmp / "passes.json").string(), "--check"};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 1) << command_text(args) << "\n" << r.err;
  const std::string all = r.out + r.err;
  EXPECT_TRUE(has_line(all, "174/175 matched")) << all;
  bool named = false;
  for (const auto& l : lines_of(all)) named = named || (l.find(id) != std::string::npos && l.find("cycles.Total") != std::string::npos);
  EXPECT_TRUE(named) << "no line names both `" << id << "` and `cycles.Total`:\n" << all;
}

TEST(EvalPasses, WithoutCheckEvaluatesAndExitsZero) {
  // Without --check nothing is compared: the changed copy still evaluates fine.
  Json passes = Json::parse(read_text("test/data/npu_reference_passes.json"));
  passes[0]["expected"]["cycles"]["Total"] = 1.0;
  TempDir tmp;
  write_text(tmp / "passes.json", passes.dump());
  const RunResult r = run_mapper({"eval", (tmp / "passes.json").string(), "--out", (tmp / "results.json").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp / "results.json"));
}

TEST(EvalPasses, MalformedJsonIsBadInput) {
  TempDir tmp;
  write_text(tmp / "broken.json", "[{\"id\": 1,");
  const RunResult r = run_mapper({"eval", (tmp / "broken.json").string(), "--check"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind((tmp / "broken.json").string(), 0), 0u) << r.err;
}

TEST(EvalBlockConfigs, ReferenceRecordsAllMatch) {
  const std::vector<std::string> args = {"eval", "--block-configs", "test/data/npu_reference_block_configs.json",
                                         "--check"};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  EXPECT_TRUE(has_line(r.out + r.err, "120/120 matched")) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
}

TEST(EvalBlockConfigs, ChangedCountIsAMismatchNamingLayerAndField) {
  Json records = Json::parse(read_text("test/data/npu_reference_block_configs.json"));
  ASSERT_EQ(records.size(), 120u);
  const std::string layer = records[0]["layer_name"].get<std::string>();
  records[0]["num_valid"] = records[0]["num_valid"].get<int>() + 1;
  TempDir tmp;
  write_text(tmp / "bc.json", records.dump());
  const RunResult r = run_mapper({"eval", "--block-configs", (tmp / "bc.json").string(), "--check"});
  EXPECT_EQ(r.status, 1) << r.err;
  const std::string all = r.out + r.err;
  EXPECT_TRUE(has_line(all, "119/120 matched")) << all;
  bool named = false;
  for (const auto& l : lines_of(all)) named = named || (l.find(layer) != std::string::npos && l.find("num_valid") != std::string::npos);
  EXPECT_TRUE(named) << "no line names both `" << layer << "` and `num_valid`:\n" << all;
}

}  // namespace
}  // namespace npumap::cli_test
