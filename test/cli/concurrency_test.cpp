// Runs that race, runs that are killed, and small output-path cases (issue 41): nothing is lost and
// nothing is overwritten.
//
//   - 20 processes started at once on one --out: one result, 19 one-line errors (exit 2), never an
//     overwrite; 20 processes at once without --out: 20 run folders, each whole.
//   - `--out ''` is refused, a trailing slash on a new --out is fine, `import -o` keeps an existing
//     file unless --force, temporaries of killed runs are removed by the next run.

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/files.hpp"
#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

const std::string kTinyChain = std::string(NPUMAP_SOURCE_DIR) + "/workloads/tiny_chain.yaml";

/// The names in `folder`, sorted.
std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Starts `n` mappers with `args` at once (in `cwd`) and waits for all of them.
std::vector<RunResult> run_at_once(int n, const std::vector<std::string>& args, const TempDir& io, const fs::path& cwd = {}) {
  std::vector<Spawned> spawned;
  for (int i = 0; i < n; ++i) spawned.push_back(spawn_mapper(args, io, cwd));
  std::vector<RunResult> results;
  for (const Spawned& s : spawned) results.push_back(wait_mapper(s));
  return results;
}

/// A pid no process has (a child that has exited and been reaped).
long dead_pid() {
  TempDir io;
  const Spawned s = spawn_program("/bin/true", {}, io);
  wait_mapper(s);
  return static_cast<long>(s.pid);
}

TEST(Concurrency, TwentyRunsOnOneOutGiveOneResultAndNineteenOneLineErrors) {
  TempDir tmp;
  TempDir io;
  const fs::path out = tmp / "run";
  const std::vector<RunResult> results =
      run_at_once(20, {"--workload", kTinyChain, "--threads", "1", "--format", "json", "--out", out.string()}, io);
  int won = 0;
  std::string winner_stdout;
  for (const RunResult& r : results) {
    if (r.status == 0) {
      ++won;
      winner_stdout = r.out;
      continue;
    }
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--out: the folder already holds a result"), std::string::npos) << r.err;
  }
  EXPECT_EQ(won, 1) << "exactly one run claims the folder";
  // The folder holds the winner's files, whole (its result.json is the one it printed).
  EXPECT_EQ(read_text(out / "result.json"), winner_stdout);
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"run"}) << "no temporary folder is left";
  EXPECT_EQ(names_in(out).size(), 8u)
      << "result.json, front.csv, front.svg, layers.csv, layers_vela.csv, layers_vs_vela.csv and Vela's two CSV files";
}

TEST(Concurrency, TwentyRunsWithoutOutGetTwentyFolders) {
  TempDir tmp;
  TempDir io;
  // All in one second, so they all start from the same runs/<timestamp> name.
  const std::vector<RunResult> results = run_at_once(20, {"--workload", kTinyChain, "--threads", "1", "-q"}, io, tmp.path());
  for (const RunResult& r : results) EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> folders = names_in(tmp / "runs");
  EXPECT_EQ(folders.size(), 20u);
  for (const std::string& f : folders) {
    EXPECT_EQ(f.find(".npumap"), std::string::npos) << "a temporary folder was left: " << f;
    EXPECT_TRUE(fs::exists(tmp / "runs" / f / "result.json")) << f;
    EXPECT_TRUE(fs::exists(tmp / "runs" / f / "layers.csv")) << f;
  }
}

TEST(Concurrency, TheReportNamesTheFolderTheRunGot) {
  TempDir tmp;
  TempDir io;
  const std::vector<RunResult> results = run_at_once(3, {"--workload", kTinyChain, "--threads", "1"}, io, tmp.path());
  std::set<std::string> named;
  for (const RunResult& r : results) {
    ASSERT_EQ(r.status, 0) << r.err;
    const std::size_t at = r.out.find("runs/");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string folder = r.out.substr(at, r.out.find(':', at) - at);
    EXPECT_TRUE(fs::exists(tmp / folder / "result.json")) << folder;
    named.insert(folder);
  }
  EXPECT_EQ(named.size(), 3u) << "each run reports its own folder";
}

TEST(OutputPaths, AnEmptyOutIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--workload", "workloads/tiny_chain.yaml", "--out", ""},
        std::vector<std::string>{"sweep", "sweeps/example.yaml", "--dry-run", "--out", ""}}) {
    const RunResult r = run_mapper(args);
    EXPECT_EQ(r.status, 2) << command_text(args) << "\n" << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--out: empty output folder name"), std::string::npos) << r.err;
  }
}

TEST(OutputPaths, ATrailingSlashOnANewOutIsFine) {
  TempDir tmp;
  const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "new").string() + "//"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp / "new" / "result.json"));
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"new"});
}

TEST(OutputPaths, ImportKeepsAnExistingFileUnlessForced) {
  TempDir tmp;
  const fs::path yaml = tmp / "model.yaml";
  write_text(yaml, "keep me\n");
  const std::vector<std::string> args = {"import", "workloads/models/tflm__person_detect.tflite", "-o", yaml.string()};
  const RunResult refused = run_mapper(args);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_EQ(lines_of(refused.err).size(), 1u) << refused.err;
  EXPECT_NE(refused.err.find("--out: the file already exists (pass --force"), std::string::npos) << refused.err;
  EXPECT_EQ(read_text(yaml), "keep me\n");
  std::vector<std::string> forced = args;
  forced.push_back("--force");
  const RunResult r = run_mapper(forced);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_text(yaml).find("layers:"), std::string::npos);
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"model.yaml"});
}

TEST(OutputPaths, TemporariesOfKilledRunsAreRemoved) {
  TempDir tmp;
  const long gone = dead_pid();
  const long alive = static_cast<long>(::getpid());
  // What a run killed while writing its folder leaves next to it, and a live process's own.
  fs::create_directories(tmp / fmt::format(".npumap-out-{}-0", gone));
  write_text(tmp / fmt::format(".npumap-out-{}-0", gone) / "result.json", "{");
  write_text(tmp / fmt::format(".npumap-probe-{}", gone), "");
  fs::create_directories(tmp / fmt::format(".npumap-out-{}-0", alive));
  const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{fmt::format(".npumap-out-{}-0", alive), "run"}));

  // A sweep killed while writing its final files leaves <file>.tmp<pid>: the next run removes it.
  const fs::path sweep = tmp / "sweep";
  write_text(tmp / "spec.yaml", "name: s\nworkloads: [tiny_chain]\ngrid:\n  sram_capacity: [512KiB]\n");
  ASSERT_EQ(run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", sweep.string(), "-q"}).status, 0);
  write_text(sweep / fmt::format("sweep.csv.tmp{}", gone), "half");
  write_text(sweep / fmt::format("points.jsonl.tmp{}", gone), "half");
  const RunResult again = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", sweep.string(), "-q"});
  ASSERT_EQ(again.status, 0) << again.err;
  for (const std::string& name : names_in(sweep)) EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
}

TEST(OutputPaths, TwoSweepsOnOneFolderDoNotMix) {
  TempDir tmp;
  TempDir io;
  write_text(tmp / "spec.yaml", "name: s\nworkloads: [resnet18]\ngrid:\n  sram_capacity: [256KiB, 512KiB, 1MiB]\n");
  const std::vector<RunResult> results =
      run_at_once(2, {"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string(), "-q", "-j", "1"}, io);
  int ok = 0;
  for (const RunResult& r : results) {
    if (r.status == 0) {
      ++ok;
      continue;
    }
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("another mapper sweep is writing into this folder"), std::string::npos) << r.err;
  }
  EXPECT_GE(ok, 1);
  // The journal holds each point once.
  EXPECT_EQ(lines_of(read_text(tmp / "out" / "points.jsonl")).size(), 4u) << "the header and three points";
}

TEST(OutputPaths, AFullFileSystemIsNamedAsSuch) {
  // No free inodes is ENOSPC, as no free space is: the hint says both (not "check permissions").
  EXPECT_NE(common::errno_hint(ENOSPC).find("no free inodes"), std::string::npos);
  EXPECT_NE(common::errno_hint(ENOSPC).find("no free space"), std::string::npos);
  EXPECT_NE(common::errno_hint(EDQUOT).find("quota"), std::string::npos);
  EXPECT_NE(common::errno_hint(EROFS).find("read-only"), std::string::npos);
}

}  // namespace
}  // namespace npumap::cli_test
