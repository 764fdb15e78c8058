// Every must-fail input in test/errors/ through the real executable.
//
// The loader tests (test/arch, test/workloads) check the exception each file raises; this test
// checks what the user sees of it: exit status 2, exactly one line on stderr that starts with the
// file's path and contains the text of the file's `# expect:` first line, nothing on stdout, and no
// result written. arch_*.yaml go to --arch, workload_*.yaml to --workload, sweep_*.yaml to `mapper sweep`,
// pass_*.json to `mapper eval`, blockcfg_*.json to `mapper eval --block-configs`, result_eval_*.json
// (a result.json whose front `mapper eval` reads) to `mapper eval`, other result_*.json to `mapper show`. A JSON file cannot hold a comment, so its expected text is the
// first line of `<file>.expect`. ini_*.ini are Vela configuration files given with `--config` (first line
// `; expect: <text>`, an optional second line `; args: <options>` selecting its sections). cli_*.args hold a
// command line's options (first line `# expect: <text>`, second line the options, split at spaces): the
// error names no file, so the line must start with the expected text (the option at fault). The files are listed when the test binary starts, sorted, one test
// case per file (and command), so adding a file to test/errors adds a case without touching this file.

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

/// test/errors/*.yaml as paths relative to the project root (the tests' working directory).
/// Listed through NPUMAP_SOURCE_DIR so test discovery works from any directory.
std::vector<std::string> error_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(NPUMAP_SOURCE_DIR) / "test" / "errors", ec)) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".yaml" || ext == ".json" || ext == ".ini" || ext == ".args")
      files.push_back("test/errors/" + entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string expect_line(const std::string& file) {
  if (fs::path(file).extension() == ".json") {
    const std::vector<std::string> lines = lines_of(read_text(file + ".expect"));
    return lines.empty() ? std::string() : lines.front();
  }
  const std::string first = lines_of(read_text(file)).empty() ? "" : lines_of(read_text(file)).front();
  const std::string prefix = fs::path(file).extension() == ".ini" ? "; expect: " : "# expect: ";
  return first.rfind(prefix, 0) == 0 ? first.substr(prefix.size()) : std::string();
}

/// The options on the second line of an .args file, or after `; args: ` on an .ini file's second line.
std::vector<std::string> extra_args(const std::string& file) {
  const std::vector<std::string> lines = lines_of(read_text(file));
  std::string line = lines.size() > 1 ? lines[1] : std::string();
  if (fs::path(file).extension() == ".ini") {
    const std::string prefix = "; args: ";
    line = line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : std::string();
  }
  std::vector<std::string> args;
  std::istringstream words(line);
  for (std::string w; words >> w;) args.push_back(w);
  return args;
}

class ErrorFile : public ::testing::TestWithParam<std::string> {};

TEST_P(ErrorFile, ExitsTwoWithOneLineNamingTheFile) {
  const std::string file = GetParam();
  const std::string name = fs::path(file).filename().string();
  const std::string expect = expect_line(file);
  ASSERT_FALSE(expect.empty()) << file << ": the first line must be `# expect: <text>` (JSON: the first line of FILE.expect)";

  TempDir tmp;
  const std::string out_dir = (tmp / "out").string();
  std::vector<std::string> args;
  if (name.rfind("arch_", 0) == 0) {
    args = {"--arch", file, "--workload", "workloads/tiny_chain.yaml", "--out", out_dir};
  } else if (name.rfind("workload_", 0) == 0) {
    args = {"--workload", file, "--out", out_dir};
  } else if (name.rfind("sweep_", 0) == 0) {
    args = {"sweep", file, "--out", out_dir};
  } else if (name.rfind("pass_", 0) == 0) {
    args = {"eval", file, "--out", (tmp / "eval.json").string()};
  } else if (name.rfind("blockcfg_", 0) == 0) {
    args = {"eval", "--block-configs", file, "--out", (tmp / "eval.json").string()};
  } else if (name.rfind("result_eval_", 0) == 0) {
    args = {"eval", file, "--out", (tmp / "eval.json").string()};
  } else if (name.rfind("result_", 0) == 0) {
    args = {"show", file};
  } else if (name.rfind("ini_", 0) == 0) {
    args = {"--workload", "workloads/tiny_chain.yaml", "--config", file, "--out", out_dir};
    for (const std::string& a : extra_args(file)) args.push_back(a);
  } else if (name.rfind("cli_", 0) == 0) {
    args = {"--workload", "workloads/tiny_chain.yaml", "--out", out_dir};
    const std::vector<std::string> extra = extra_args(file);
    ASSERT_FALSE(extra.empty()) << file << ": the second line must hold the options";
    args.insert(args.end(), extra.begin(), extra.end());
  } else {
    FAIL() << file << ": name must start with arch_, workload_, sweep_, pass_, blockcfg_, result_, ini_ or cli_ to say how it is given to the mapper";
  }
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 2) << command_text(args) << "\nstderr: " << r.err;
  const std::vector<std::string> err_lines = lines_of(r.err);
  ASSERT_EQ(err_lines.size(), 1u) << command_text(args) << "\nstderr:\n" << r.err;
  EXPECT_EQ(r.err.back(), '\n') << "the line ends with a newline";
  if (name.rfind("cli_", 0) == 0) {
    EXPECT_EQ(err_lines[0].rfind(expect, 0), 0u) << "stderr must start with the expected text\n  expect: " << expect
                                                 << "\n  got:    " << err_lines[0];
  } else {
    EXPECT_EQ(err_lines[0].rfind(file, 0), 0u) << "stderr must start with the file path\n  got: " << err_lines[0];
    EXPECT_NE(err_lines[0].find(expect), std::string::npos)
        << "stderr does not contain the expected text\n  expect: " << expect << "\n  got:    " << err_lines[0];
  }
  EXPECT_TRUE(r.out.empty()) << "nothing on stdout for bad input, got:\n" << r.out;
  EXPECT_FALSE(fs::exists(fs::path(out_dir) / "result.json")) << "a rejected input must not leave a result";
  EXPECT_FALSE(fs::exists(fs::path(out_dir))) << "a rejected sweep spec must not start any work";
  EXPECT_FALSE(fs::exists(tmp / "eval.json")) << "a rejected eval input must not write results";
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).stem().string();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(TestErrors, ErrorFile, ::testing::ValuesIn(error_files()), case_name);

TEST(TestErrorsFolder, HoldsEveryKindOfFile) {
  // Guards against the listing silently finding nothing (wrong folder, renamed files).
  const std::vector<std::string> files = error_files();
  const auto count = [&](const char* prefix) {
    return std::count_if(files.begin(), files.end(), [&](const std::string& f) {
      return fs::path(f).filename().string().rfind(prefix, 0) == 0;
    });
  };
  EXPECT_GE(count("arch_"), 10);
  EXPECT_GE(count("workload_"), 10);
  EXPECT_GE(count("sweep_"), 10);
  EXPECT_GE(count("pass_"), 5);
  EXPECT_GE(count("blockcfg_"), 2);
  EXPECT_GE(count("result_"), 5);
  EXPECT_GE(count("ini_"), 20);
  EXPECT_GE(count("cli_"), 3);
}

}  // namespace
}  // namespace npumap::cli_test
