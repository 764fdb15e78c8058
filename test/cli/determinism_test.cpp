// The output must not depend on the number of threads (docs/design/architecture.md §5): 1, 2 and 8 threads give
// byte-identical reports and files. The only allowed differences are the provenance object of
// result.json (it records the thread count) and the report's last line (it names the output
// folder, which differs because each run needs its own). Eight threads on a two-core machine also
// shakes up task timing, which is what a hidden order dependence would react to.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

struct RunFiles {
  std::string report;  ///< stdout without the final `wrote ...` line
  std::string result;  ///< result.json without provenance
  int recorded_threads = 0;
  std::string csv;
  std::string svg;
};

RunFiles run_with_threads(const std::string& workload, int threads) {
  TempDir tmp;
  const std::vector<std::string> args = {"--workload", workload, "--keep-pareto", "--threads", std::to_string(threads),
                                         "--out", (tmp / "out").string()};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  RunFiles f;
  f.report = drop_wrote_line(r.out);
  const std::string json = read_text(tmp / "out" / "result.json");
  if (!json.empty()) {
    f.result = result_without_provenance(json);
    f.recorded_threads = nlohmann::json::parse(json)["provenance"]["threads"].get<int>();
  }
  f.csv = read_text(tmp / "out" / "front.csv");
  f.svg = read_text(tmp / "out" / "front.svg");
  return f;
}

class ThreadCount : public ::testing::TestWithParam<std::string> {};

TEST_P(ThreadCount, OneTwoAndEightThreadsGiveIdenticalOutputs) {
  const std::string workload = "workloads/" + GetParam() + ".yaml";
  const RunFiles one = run_with_threads(workload, 1);
  ASSERT_FALSE(one.result.empty());
  ASSERT_FALSE(one.report.empty());
  EXPECT_EQ(one.recorded_threads, 1);
  for (int threads : {2, 8}) {
    const RunFiles other = run_with_threads(workload, threads);
    EXPECT_EQ(other.recorded_threads, threads) << "provenance records the thread count";
    EXPECT_EQ(other.report, one.report) << threads << " threads, text report: " << first_difference(one.report, other.report);
    EXPECT_EQ(other.result, one.result) << threads << " threads, result.json: " << first_difference(one.result, other.result);
    EXPECT_EQ(other.csv, one.csv) << threads << " threads, front.csv: " << first_difference(one.csv, other.csv);
    EXPECT_EQ(other.svg, one.svg) << threads << " threads, front.svg: " << first_difference(one.svg, other.svg);
  }
}

INSTANTIATE_TEST_SUITE_P(TinyWorkloads, ThreadCount, ::testing::Values("tiny_chain", "tiny_residual"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace npumap::cli_test
