// The exit-status contract of `mapper`: 0 success, 1 no valid mapping or eval mismatch, 2 bad
// input or usage with exactly one line on stderr, 130 interrupted. This file covers 0 and 2 for the
// command line itself (flags, subcommands, --help, --version, list, show); the outcomes 1 and 130
// are in outcomes_test.cpp and eval_test.cpp.
//
// Every bad invocation also passes a fresh --out, and the test checks no result was written there:
// a rejected command line must not leave a half-made run behind.

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

/// Runs `args` and checks the usage-error contract: status 2, one stderr line containing
/// `must_contain`, empty stdout.
void expect_usage_error(const std::vector<std::string>& args, const std::string& must_contain) {
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 2) << command_text(args) << "\nstderr: " << r.err;
  const std::vector<std::string> lines = lines_of(r.err);
  EXPECT_EQ(lines.size(), 1u) << command_text(args) << ": stderr must be one line, got:\n" << r.err;
  EXPECT_NE(r.err.find(must_contain), std::string::npos)
      << command_text(args) << ": stderr should contain `" << must_contain << "`, got:\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << command_text(args) << ": stdout should be empty, got:\n" << r.out;
}

class BadCommandLine : public ::testing::Test {
 protected:
  /// --workload tiny_chain --out <fresh> followed by `extra`.
  std::vector<std::string> run_args(std::vector<std::string> extra) const {
    std::vector<std::string> a = {"--workload", "workloads/tiny_chain.yaml", "--out", out_dir()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  std::string out_dir() const { return (tmp_ / "out").string(); }
  void TearDown() override {
    EXPECT_FALSE(fs::exists(fs::path(out_dir()) / "result.json")) << "a rejected command line wrote a result";
  }
  TempDir tmp_;
};

TEST_F(BadCommandLine, NonFiniteNumbersAndNegativeSeedsAreRejected) {
  expect_usage_error(run_args({"--time-limit", "nan"}), "--time-limit: must be a finite number");
  expect_usage_error(run_args({"--tolerance", "nan"}), "--tolerance: must be a finite number");
  expect_usage_error(run_args({"--seed", "-5"}), "--seed: must be a non-negative integer");
  expect_usage_error(run_args({"--seed", "99999999999999999999"}), "--seed: must be below 2^64");
}

TEST(OneLineErrors, ANewlineInsideAValueIsEscaped) {
  // A layer name holding a newline (written as \n in a YAML double-quoted string) must not split
  // the error message over two lines.
  TempDir tmp;
  write_text(tmp / "w.yaml",
             "name: nl\ninputs:\n  - {name: x, shape: [1, 4, 4, 8], dtype: int8}\nlayers:\n"
             "  - {name: \"bad\\nname\", op: conv2d, inputs: [x], output: o, output_shape: [1, 4, 4, 8], kernel: 1, "
             "padding: VALID}\n"
             "  - {name: \"bad\\nname\", op: conv2d, inputs: [o], output: p, output_shape: [1, 4, 4, 8], kernel: 1, "
             "padding: VALID}\n");
  const RunResult r = run_mapper({"--workload", (tmp / "w.yaml").string(), "--out", (tmp / "out").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("bad\\nname"), std::string::npos) << "the name is shown, escaped: " << r.err;
}

TEST_F(BadCommandLine, MistypedFlagsAndSubcommandsGetADidYouMean) {
  expect_usage_error(run_args({"--keep-paretto"}), "did you mean `--keep-pareto`?");
  expect_usage_error({"swep", "sweeps/example.yaml"}, "did you mean `mapper sweep`?");
  expect_usage_error({"sweep", "sweeps/example.yaml", "--dryrun"}, "did you mean `--dry-run`?");
}

TEST_F(BadCommandLine, ZeroThreads) { expect_usage_error(run_args({"--threads", "0"}), "--threads"); }

TEST_F(BadCommandLine, NegativeThreads) { expect_usage_error(run_args({"--threads", "-3"}), "--threads"); }

TEST_F(BadCommandLine, ThreadsNotANumber) { expect_usage_error(run_args({"--threads", "many"}), "--threads"); }

TEST_F(BadCommandLine, UnknownFormat) { expect_usage_error(run_args({"--format", "xml"}), "xml"); }

TEST_F(BadCommandLine, ZeroTimeLimit) {
  // "0 means unlimited" is banned by the style guide: zero is an error, not a default.
  expect_usage_error(run_args({"--time-limit", "0"}), "--time-limit");
}

TEST_F(BadCommandLine, UnknownFlag) { expect_usage_error(run_args({"--frobnicate"}), "--frobnicate"); }

TEST_F(BadCommandLine, UnknownSubcommand) { expect_usage_error({"frobnicate"}, "frobnicate"); }

TEST_F(BadCommandLine, UnknownObjectiveNearAKnownOneGetsAClosestMatchHint) {
  expect_usage_error(run_args({"--objectives", "cycles,cylces"}), "did you mean `cycles`?");
}

TEST_F(BadCommandLine, UnknownObjectiveFarFromAllListsThem) {
  expect_usage_error(run_args({"--objectives", "cycles,foo"}), "unknown objective `foo`");
  expect_usage_error(run_args({"--objectives", "cycles,foo"}), "cycles, offchip_bytes, sram, energy");
}

TEST_F(BadCommandLine, MissingWorkload) { expect_usage_error({"--out", out_dir()}, "--workload"); }

TEST_F(BadCommandLine, MissingWorkloadFile) {
  expect_usage_error({"--workload", "workloads/no_such.yaml", "--out", out_dir()}, "workloads/no_such.yaml");
}

TEST_F(BadCommandLine, UnknownArchPreset) { expect_usage_error(run_args({"--arch", "ethos-u55-257"}), "ethos-u55-257"); }

TEST_F(BadCommandLine, UnknownList) { expect_usage_error({"list", "gadgets"}, "gadgets"); }

TEST_F(BadCommandLine, ListWithoutWhat) { expect_usage_error({"list"}, "what"); }

TEST_F(BadCommandLine, EvalWithoutFile) { expect_usage_error({"eval"}, "file"); }

TEST_F(BadCommandLine, EvalMissingFile) { expect_usage_error({"eval", "test/data/no_such.json"}, "test/data/no_such.json"); }

TEST_F(BadCommandLine, ShowWithoutFile) { expect_usage_error({"show"}, "result"); }

TEST_F(BadCommandLine, ShowMissingFile) { expect_usage_error({"show", out_dir() + "/result.json"}, out_dir()); }

TEST_F(BadCommandLine, ShowNonJsonFile) {
  expect_usage_error({"show", "workloads/tiny_chain.yaml"}, "workloads/tiny_chain.yaml");
}

TEST_F(BadCommandLine, ShowJsonThatIsNotAResult) {
  // Valid JSON, wrong document: must be refused as input, not crash while rendering.
  expect_usage_error({"show", "test/data/npu_reference_passes.json"}, "test/data/npu_reference_passes.json");
}

TEST(GoodCommandLine, HelpExitsZeroAndDescribesTheOptions) {
  const RunResult r = run_mapper({"--help"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  for (const char* word : {"--workload", "--arch", "--keep-pareto", "--objectives", "--threads", "--time-limit",
                           "--out", "--format", "eval", "list", "show"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << "--help does not mention " << word;
  }
}

TEST(GoodCommandLine, VersionExitsZeroWithVersionAndGitRevision) {
  const RunResult r = run_mapper({"--version"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_NE(lines[0].find("0.1.0"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("git"), std::string::npos) << lines[0];
  EXPECT_TRUE(std::regex_search(lines[0], std::regex(R"(git [0-9a-f]{7,40}|git unknown)"))) << lines[0];
}

TEST(GoodCommandLine, ListsNameWhatCanBeNamed) {
  struct Case {
    const char* what;
    const char* one_entry;
  };
  for (const Case& c : {Case{"presets", "ethos-u55-256"}, Case{"workloads", "tiny_chain"}, Case{"workloads", "tflm__person_detect"},
                        Case{"objectives", "offchip_bytes"}, Case{"system-configs", "[System_Config.Ethos_U65_High_End]"},
                        Case{"memory-modes", "[Memory_Mode.Shared_Sram]"}, Case{"sweep-parameters", "memory.OffChipFlash.bandwidth"}}) {
    const RunResult r = run_mapper({"list", c.what});
    EXPECT_EQ(r.status, 0) << c.what << ": " << r.err;
    EXPECT_TRUE(r.err.empty()) << c.what << ": " << r.err;
    const std::vector<std::string> lines = lines_of(r.out);
    EXPECT_NE(std::find(lines.begin(), lines.end(), c.one_entry), lines.end())
        << "`mapper list " << c.what << "` should have a line `" << c.one_entry << "`, got:\n" << r.out;
  }
}

TEST(GoodCommandLine, EveryListedPresetIsAcceptedByArch) {
  // The list and the loader must agree: each name printed by `list presets` maps tiny_chain.
  const RunResult list = run_mapper({"list", "presets"});
  ASSERT_EQ(list.status, 0);
  const std::vector<std::string> presets = lines_of(list.out);
  ASSERT_GE(presets.size(), 4u);
  for (const auto& p : presets) {
    TempDir tmp;
    const std::vector<std::string> args = {"--workload", "workloads/tiny_chain.yaml", "--arch", p,
                                           "--threads", "2", "--out", (tmp / "out").string()};
    const RunResult r = run_mapper(args);
    EXPECT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  }
}

TEST(ZooNames, WorkloadAcceptsAZooNameAsSweepSpecsDo) {
  // `--workload tiny_chain` is workloads/tiny_chain.yaml of the source tree, from any folder.
  TempDir tmp;
  const RunResult by_name = run_mapper({"--workload", "tiny_chain", "--out", (tmp / "a").string(), "-q"});
  const RunResult by_path = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "b").string(), "-q"});
  ASSERT_EQ(by_name.status, 0) << by_name.err;
  ASSERT_EQ(by_path.status, 0) << by_path.err;
  EXPECT_EQ(result_without_provenance(read_text(tmp / "a" / "result.json")),
            result_without_provenance(read_text(tmp / "b" / "result.json")));
  const RunResult typo = run_mapper({"--workload", "tiny_chian", "--out", (tmp / "c").string()});
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("did you mean `tiny_chain`?"), std::string::npos) << typo.err;
}

TEST(ArchFlags, SystemConfigAndMemoryModeOverrideTheArch) {
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "tiny_chain", "--arch", "ethos-u65-256", "--system-config",
                                  "Ethos_U65_Mid_End", "--memory-mode", "Shared_Sram", "--out", (tmp / "a").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_text(tmp / "a" / "result.json"));
  EXPECT_EQ(j["arch"]["system_config"], "Ethos_U65_Mid_End");
  EXPECT_EQ(j["arch"]["memory_mode"], "Shared_Sram");
  const RunResult typo = run_mapper({"--workload", "tiny_chain", "--system-config", "Ethos_U65_Mid_Ed", "--out",
                                     (tmp / "b").string()});
  EXPECT_EQ(typo.status, 2);
  EXPECT_EQ(lines_of(typo.err).size(), 1u) << typo.err;
  EXPECT_NE(typo.err.find("did you mean `Ethos_U65_Mid_End`?"), std::string::npos) << typo.err;
}

}  // namespace
}  // namespace npumap::cli_test
