// Hostile and careless inputs that cannot be a file in test/errors/ (devices, generated large
// inputs, output paths the OS refuses, a full disk, a run killed while writing): each must end in
// exit status 2 with one line on stderr, quickly, leaving nothing behind (issue 15). The must-fail
// files of test/errors/ (errors_test.cpp) cover the classes a file can show.

#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Runs the mapper and checks the bad-input contract: exit 2, one line containing `expect`, nothing
/// on stdout. Returns the run's wall time in seconds.
double expect_one_line_error(const std::vector<std::string>& args, const std::string& expect) {
  const auto t0 = Clock::now();
  const RunResult r = run_mapper(args);
  const double s = seconds_since(t0);
  EXPECT_EQ(r.status, 2) << command_text(args) << "\nstderr: " << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << command_text(args) << "\nstderr:\n" << r.err;
  EXPECT_NE(r.err.find(expect), std::string::npos) << command_text(args) << "\nexpect: " << expect << "\ngot:    " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  return s;
}

/// Sets an environment variable for the runs in one scope (the mapper inherits the environment).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(Hardening, DevicesAsInputsAreRefusedAtOnce) {
  TempDir tmp;
  // A device is not read at all (an endless one would only stop at the size limit): every input is
  // a regular file, a pipe or FIFO, or standard input (test/cli/inputs_test.cpp).
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    const std::string refused = std::string(device) + ": is a character device, not a file or pipe";
    EXPECT_LT(expect_one_line_error({"--workload", device, "--out", (tmp / "a").string()}, refused), 10.0);
    // The arch loader takes only regular files (else a preset name).
    EXPECT_LT(expect_one_line_error({"--arch", device, "--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "b").string()},
                                    std::string(device) + ": cannot open arch file"),
              10.0);
    EXPECT_LT(expect_one_line_error({"sweep", device, "--out", (tmp / "c").string()}, refused), 10.0);
    EXPECT_LT(expect_one_line_error({"show", device}, refused), 10.0);
    EXPECT_LT(expect_one_line_error({"eval", device}, refused), 10.0);
  }
  EXPECT_FALSE(fs::exists(tmp / "a"));
}

TEST(Hardening, LargeFilesAreRefusedBeforeReading) {
  TempDir tmp;
  // 50 MB of a valid-looking workload: refused from its size alone, at once.
  const fs::path big = tmp / "big.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    out << "name: big\nlayers:\n";
    const std::string line(1000, ' ');
    for (int i = 0; i < 50'000; ++i) out << "#" << line << "\n";
  }
  EXPECT_LT(expect_one_line_error({"--workload", big.string(), "--out", (tmp / "o").string()}, "the file is too large (47.8 MiB)"), 5.0);
  // The limit is overridable: NPUMAP_MAX_INPUT_MIB=1 refuses a 1.5 MiB pass file, and a bad value is an error.
  const fs::path mid = tmp / "mid.json";
  write_text(mid, "[" + std::string(1'500'000, ' ') + "]");
  {
    ScopedEnv env("NPUMAP_MAX_INPUT_MIB", "1");
    expect_one_line_error({"eval", mid.string()}, "set NPUMAP_MAX_INPUT_MIB to raise the limit");
  }
  {
    ScopedEnv env("NPUMAP_MAX_INPUT_MIB", "lots");
    expect_one_line_error({"eval", mid.string()}, "NPUMAP_MAX_INPUT_MIB: expected a whole number of MiB");
  }
}

TEST(Hardening, AResultJsonIsReadUpToItsOwnLimit) {
  // Issue 41: `mapper eval` refused a 20.6 MiB result.json the mapper had written (16 MiB, the text
  // limit). A result document has its own limit (512 MiB, the most a run writes): with the text
  // limit lowered to 1 MiB, a 1.5 MiB result.json of a 200-layer chain (7.6 KB of JSON per layer) is
  // still read by eval and show, while a 1.5 MiB pass list (text) is refused above.
  TempDir tmp;
  std::string text = "name: chain\ninputs: [{name: t0, shape: [1, 8, 8, 16], dtype: int8}]\nlayers:\n";
  for (int i = 0; i < 200; ++i) {
    const std::string n = std::to_string(i);
    text += "  - {name: l";
    text += n;
    text += ", op: relu, inputs: [t";
    text += n;
    text += "], output: t";
    text += std::to_string(i + 1);
    text += ", output_shape: [1, 8, 8, 16]}\n";
  }
  write_text(tmp / "chain.yaml", text);
  const RunResult run = run_mapper({"--workload", (tmp / "chain.yaml").string(), "--out", (tmp / "o").string(), "-q"});
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_GT(fs::file_size(tmp / "o" / "result.json"), std::uintmax_t{1} << 20);
  ScopedEnv env("NPUMAP_MAX_INPUT_MIB", "1");
  const RunResult ev = run_mapper({"eval", (tmp / "o").string()});
  ASSERT_EQ(ev.status, 0) << ev.err;
  EXPECT_EQ(nlohmann::json::parse(ev.out).size(), 200u);  // one record per layer of the front's point
  const RunResult show = run_mapper({"show", (tmp / "o").string()});
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("chain (200 layers"), std::string::npos) << show.out.substr(0, 200);
}

TEST(Hardening, AFolderIsNotAFile) {
  TempDir tmp;
  expect_one_line_error({"eval", tmp.path().string()}, "result.json: cannot open the file");
  expect_one_line_error({"--workload", tmp.path().string(), "--out", (tmp / "o").string()}, "is a folder, not a file");
}

TEST(Hardening, OutputPathsTheSystemRefusesAreFoundBeforeMapping) {
  TempDir tmp;
  // resnet50 takes many seconds to map: each of these must stop before that.
  const auto run = [&](const std::string& out, const std::string& expect) {
    const double s = expect_one_line_error({"--workload", "workloads/resnet50.yaml", "--out", out}, expect);
    EXPECT_LT(s, 5.0) << out.substr(0, 80);
  };
  run((tmp / std::string(300, 'x')).string(), "too long for the file system");
  fs::create_symlink(tmp / "loop", tmp / "loop");
  run((tmp / "loop" / "run").string(), "a symbolic link loop on the path");
  write_text(tmp / "file", "x");
  run((tmp / "file" / "run").string(), "a part of the path is a file, not a folder");
  run("/proc/self/npumap-run", "cannot create output files in `/proc/self`");
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left.size(), 2u) << "only `loop` and `file`";
}

TEST(Hardening, AFailedWriteLeavesNoTemporaryFiles) {
  TempDir tmp;
  // A file size limit makes every write past 4 KiB fail, as a full disk would (EFBIG instead of
  // ENOSPC); SIGXFSZ is ignored so the write returns an error. Both are inherited by the mapper.
  struct rlimit old {};
  getrlimit(RLIMIT_FSIZE, &old);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  void (*previous)(int) = signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &small);
  const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "run").string()});
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, previous);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("cannot write `result.json`: File too large"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("file size limit"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "run"));
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path())) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
}

TEST(Hardening, TheOutputFolderAppearsWhole) {
  // Written under a temporary name and renamed once: the folder never exists with only some files.
  // Poll the folder while the run writes it; every time it exists it must hold all four files.
  TempDir tmp;
  TempDir io;
  const fs::path out = tmp / "run";
  const Spawned s = spawn_mapper({"--workload", "workloads/resnet18.yaml", "--keep-pareto", "--out", out.string()}, io);
  int seen = 0;
  bool whole = true;
  for (;;) {
    if (fs::exists(out)) {
      ++seen;
      whole = whole && fs::exists(out / "result.json") && fs::exists(out / "front.csv") && fs::exists(out / "front.svg") &&
              fs::exists(out / "layers.csv");
    }
    int status = 0;
    if (waitpid(s.pid, &status, WNOHANG) == s.pid) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      break;
    }
    usleep(200);
  }
  EXPECT_TRUE(whole);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"run"});
}

TEST(Hardening, ASweepGridOf50000ValuesIsCheckedQuickly) {
  TempDir tmp;
  std::string values;
  for (int i = 1; i <= 50'000; ++i) {
    values += std::to_string(1000 + i);
    values += "KiB, ";
  }
  values += "1001KiB";  // the first value again, at the end: found only after every value was compared
  write_text(tmp / "big.yaml", std::string("workloads: [tiny_chain]\ngrid:\n  sram_capacity: [").append(values).append("]\n"));
  const double s = expect_one_line_error({"sweep", (tmp / "big.yaml").string(), "--dry-run"}, "value `1001KiB` is listed twice");
  EXPECT_LT(s, 10.0);
}

TEST(Hardening, TheTimeLimitHoldsWhileLoading) {
  TempDir tmp;
  // A chain of 50,000 layers takes seconds to load (2.5 s of CPU on the CI machine). With
  // --time-limit 0.2 the loader stops at its next check (every 64 KiB of YAML after the first MiB,
  // every 256 layers) instead of loading and setting up everything first, and the run ends as any
  // stopped run does (docs/user-guide.md, exit status 130): the run folder with result.json marked
  // partial, status "interrupted", stopped_while_loading, no layers; the report says so.
  std::string text = "name: long_chain\ninputs: [{name: t0, shape: [1, 8, 8, 16], dtype: int8}]\nlayers:\n";
  for (int i = 0; i < 50'000; ++i) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on a long `+` chain here.
    const std::string n = std::to_string(i);
    text += "  - {name: l";
    text += n;
    text += ", op: relu, inputs: [t";
    text += n;
    text += "], output: t";
    text += std::to_string(i + 1);
    text += ", output_shape: [1, 8, 8, 16]}\n";
  }
  write_text(tmp / "chain.yaml", text);
  const std::vector<std::string> args = {"--workload", (tmp / "chain.yaml").string(), "--time-limit", "0.2", "--out",
                                         (tmp / "o").string()};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_NE(r.out.find("STOPPED EARLY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("while loading the workload"), std::string::npos) << r.out;
  const nlohmann::ordered_json result = nlohmann::ordered_json::parse(read_text(tmp / "o" / "result.json"));
  EXPECT_EQ(result["partial"], true);
  EXPECT_EQ(result["status"], "interrupted");
  EXPECT_EQ(result["stopped_while_loading"], true);
  EXPECT_EQ(result["workload"]["layers"], 0);
  EXPECT_FALSE(result.contains("front"));
  // The saved result is a result: `mapper show` renders the same report.
  const RunResult show = run_mapper({"show", (tmp / "o").string()});
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("while loading the workload"), std::string::npos) << show.out;
}

TEST(Hardening, ALoadStopsWithinHalfASecondOfTheLimit) {
  // Issue 41 point 4: a 1 s limit on a 50,000-layer chain stopped after 4.8 s (the YAML parse could
  // not be interrupted). The parse now polls every 64 KiB of text and the loader every 256 layers,
  // so the run ends within 0.5 s of the limit (1.25 s measured on a machine running 10 jobs on 2
  // cores). The bound here is wall time on a machine that may be that busy, or busier under
  // `ctest -j`: 2.5 s past the limit, still well below the 3.8 s the unstoppable parse took.
  TempDir tmp;
  std::string text = "name: long_chain\ninputs: [{name: t0, shape: [1, 8, 8, 16], dtype: int8}]\nlayers:\n";
  for (int i = 0; i < 50'000; ++i) {
    const std::string n = std::to_string(i);
    text += "  - {name: l";
    text += n;
    text += ", op: conv2d, inputs: [t";
    text += n;
    text += "], output: t";
    text += std::to_string(i + 1);
    text += ", output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}\n";
  }
  write_text(tmp / "chain.yaml", text);
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run_mapper({"--workload", (tmp / "chain.yaml").string(), "--time-limit", "1", "--out", (tmp / "o").string()});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_LT(elapsed, 3.5) << "stopped " << elapsed - 1.0 << " s after the limit";
}

TEST(Hardening, NonUtf8PathsAreWrittenSafely) {
  TempDir tmp;
  // A workload path that is not UTF-8 ends up in result.json's provenance: written as U+FFFD, not a crash.
  const fs::path odd = tmp / "net\xff.yaml";
  fs::copy_file("workloads/tiny_chain.yaml", odd);
  const RunResult r = run_mapper({"--workload", odd.string(), "--out", (tmp / "o").string(), "-q"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_text(tmp / "o" / "result.json").find("net\xef\xbf\xbd.yaml"), std::string::npos);
}

}  // namespace
}  // namespace npumap::cli_test
