// The process contract (mapper/cli/process.hpp): nothing process-wide is set up inside library code,
// so a whole mapping can run twice in one process with identical results; and an internal error
// (an exception that is not a UserError) exits 3 with one line on stderr, never an abort (134).

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "arch/arch_loader.hpp"
#include "cli_harness.hpp"
#include "mapper/cli/cli.hpp"
#include "mapper/cli/process.hpp"
#include "mapper/search/map_network.hpp"
#include "workloads/loader.hpp"

namespace npumap::cli_test {
namespace {

/// Runs the command line in this process, with stdout captured; returns the exit status.
int run_in_process(std::vector<std::string> args, std::string& out) {
  args.insert(args.begin(), "mapper");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream captured;
  std::streambuf* previous = std::cout.rdbuf(captured.rdbuf());
  const int status = npumap::cli::run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(previous);
  out = captured.str();
  return status;
}

TEST(Process, AWholeMappingRunsTwiceInOneProcessWithIdenticalResults) {
  npumap::cli::set_up_process();
  TempDir tmp;
  std::string out1, out2;
  const std::vector<std::string> common_args = {"--workload", "workloads/tiny_residual.yaml", "--keep-pareto",
                                                "--threads", "2", "--objectives", "cycles,offchip_bytes,sram"};
  std::vector<std::string> a1 = common_args, a2 = common_args;
  a1.insert(a1.end(), {"--out", (tmp / "first").string()});
  a2.insert(a2.end(), {"--out", (tmp / "second").string()});
  ASSERT_EQ(run_in_process(a1, out1), 0) << out1;
  ASSERT_EQ(run_in_process(a2, out2), 0) << "the second run in the same process failed:\n" << out2;
  EXPECT_EQ(read_text(tmp / "first" / "result.json"), read_text(tmp / "second" / "result.json"));
  EXPECT_EQ(read_text(tmp / "first" / "front.csv"), read_text(tmp / "second" / "front.csv"));
  EXPECT_EQ(drop_wrote_line(out1), drop_wrote_line(out2));
}

TEST(Process, MapNetworkTwiceGivesTheSameFrontAndCounts) {
  const arch::Arch a = arch::load_arch("ethos-u65-256");
  const workloads::Workload w = workloads::load_workload("workloads/tiny_chain.yaml");
  search::SearchOptions o;
  o.objectives = search::all_objectives();
  o.threads = 2;
  const search::SearchResult r1 = search::map_network(a, w, o, {});
  const search::SearchResult r2 = search::map_network(a, w, o, {});
  ASSERT_TRUE(r1.joined && r2.joined);
  ASSERT_FALSE(r1.joined->front.empty());
  ASSERT_EQ(r1.joined->front.size(), r2.joined->front.size());
  for (std::size_t i = 0; i < r1.joined->front.size(); ++i) {
    EXPECT_EQ(r1.joined->front[i].cycles, r2.joined->front[i].cycles);
    EXPECT_EQ(r1.joined->front[i].offchip_bytes, r2.joined->front[i].offchip_bytes);
    EXPECT_EQ(r1.joined->front[i].peak_sram_bytes, r2.joined->front[i].peak_sram_bytes);
    EXPECT_EQ(r1.joined->front[i].group, r2.joined->front[i].group);
    EXPECT_EQ(r1.joined->front[i].row, r2.joined->front[i].row);
  }
  EXPECT_EQ(r1.evaluated, r2.evaluated);
  EXPECT_EQ(r1.status, search::SearchStatus::Ok);
}

TEST(Process, AnInternalErrorExitsThreeWithOneLine) {
  // --internal-error-test is a hidden hook that throws std::logic_error where a bug would.
  const std::vector<std::string> args = {"--internal-error-test", "--workload", "workloads/tiny_chain.yaml"};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 3) << command_text(args) << "\n" << r.err;
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("internal error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("test hook"), std::string::npos) << lines[0];
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace npumap::cli_test
