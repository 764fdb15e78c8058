// Golden outputs: the text report of tiny_chain and tiny_residual, and tiny_chain's result.json,
// compared byte for byte with the files in test/golden/.
//
// A golden file is a regression guard, not a proof of correctness: it says "the output has not
// changed", and every intended change (a model fix, a new report column) shows up as a diff that a
// person reviews and then accepts by regenerating:
//
//   NPUMAP_UPDATE_GOLDEN=1 ./build/<dir>/test/cli_tests --gtest_filter='*Golden*'
//
// With that variable set the tests rewrite the files instead of comparing (and report themselves
// as skipped, so a regeneration is never mistaken for a passing check). The text goldens open with
// a block of `#` lines that say how they were produced; the JSON golden carries the same under a
// first key `_golden`. Both are stripped before comparing. The report's trailer (a blank line and
// `wrote <folder>/...`) names the temporary output folder, and result.json's `provenance` records
// the git revision and paths, so those are left out of the goldens.

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

bool updating() {
  const char* v = std::getenv("NPUMAP_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

fs::path golden_path(const std::string& name) { return fs::path(NPUMAP_SOURCE_DIR) / "test" / "golden" / name; }

std::vector<std::string> golden_args(const std::string& workload, const fs::path& out) {
  return {"--workload", "workloads/" + workload + ".yaml", "--keep-pareto", "--threads", "2", "--out", out.string()};
}

std::string text_header(const std::string& workload) {
  return "# Golden text report (stdout) of\n"
         "#   mapper --workload workloads/" + workload + ".yaml --keep-pareto --threads 2 --out <tmp>\n"
         "# run from the project root, without the trailer (a blank line and \"wrote <tmp>/result.json, ...\",\n"
         "# which names the temporary folder): this is what `mapper show` prints. Checked byte for byte by test/cli/golden_test.cpp, which strips these\n"
         "# leading '#' lines first. Regenerate after an intended, reviewed change with\n"
         "#   NPUMAP_UPDATE_GOLDEN=1 ./build/<dir>/test/cli_tests --gtest_filter='*Golden*'\n"
         "# A regression guard, not a proof of correctness.\n";
}

/// The golden text without its leading block of `#` lines.
std::string strip_header(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && text[i] == '#') {
    const std::size_t nl = text.find('\n', i);
    i = nl == std::string::npos ? text.size() : nl + 1;
  }
  return text.substr(i);
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, TextReportMatches) {
  const std::string workload = GetParam();
  TempDir tmp;
  const std::vector<std::string> args = golden_args(workload, tmp / "out");
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  const std::string report = drop_wrote_line(r.out);
  const fs::path file = golden_path(workload + ".txt");
  if (updating()) {
    write_text(file, text_header(workload) + report);
    GTEST_SKIP() << "rewrote " << file;
  }
  const std::string golden = read_text(file);
  ASSERT_FALSE(golden.empty()) << file << " is missing; create it with NPUMAP_UPDATE_GOLDEN=1";
  EXPECT_EQ(golden.rfind("# ", 0), 0u) << file << " must open with its header";
  const std::string expected = strip_header(golden);
  EXPECT_EQ(report, expected) << file << " differs at " << first_difference(expected, report);
}

INSTANTIATE_TEST_SUITE_P(TinyWorkloads, Golden, ::testing::Values("tiny_chain", "tiny_residual"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(GoldenJson, TinyChainResultMatches) {
  TempDir tmp;
  const std::vector<std::string> args = golden_args("tiny_chain", tmp / "out");
  const RunResult r = run_mapper(args);
  ASSERT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  const std::string actual = result_without_provenance(read_text(tmp / "out" / "result.json"));
  const fs::path file = golden_path("tiny_chain.result.json");
  if (updating()) {
    nlohmann::ordered_json doc;
    doc["_golden"] = {
        {"produced_by", "mapper --workload workloads/tiny_chain.yaml --keep-pareto --threads 2 --out <tmp>"},
        {"content", "<tmp>/result.json with the run-specific `provenance` object removed"},
        {"checked_by", "test/cli/golden_test.cpp (strips this `_golden` key, compares the rest byte for byte)"},
        {"regenerate", "NPUMAP_UPDATE_GOLDEN=1 ./build/<dir>/test/cli_tests --gtest_filter='*Golden*'"},
        {"note", "a regression guard, not a proof of correctness"}};
    const nlohmann::ordered_json result = nlohmann::ordered_json::parse(actual);
    for (const auto& [key, value] : result.items()) doc[key] = value;
    write_text(file, doc.dump(1) + "\n");
    GTEST_SKIP() << "rewrote " << file;
  }
  const std::string golden_text = read_text(file);
  ASSERT_FALSE(golden_text.empty()) << file << " is missing; create it with NPUMAP_UPDATE_GOLDEN=1";
  nlohmann::ordered_json golden = nlohmann::ordered_json::parse(golden_text);
  ASSERT_TRUE(golden.contains("_golden")) << file << " must carry its `_golden` header";
  golden.erase("_golden");
  const std::string expected = golden.dump(1) + "\n";
  EXPECT_EQ(actual, expected) << file << " differs at " << first_difference(expected, actual);
}

}  // namespace
}  // namespace npumap::cli_test
