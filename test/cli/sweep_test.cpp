// `mapper sweep` through the real executable: nothing is lost when a run is killed part-way (SIGKILL)
// or interrupted (Ctrl-C), a rerun finishes the missing points and writes the same bytes as an
// uninterrupted run, whatever the thread count; a cut-off journal line is recomputed; a journal of
// another sweep is refused; `--shard K/N` runs then `--merge` give the same files, and merging shards
// of another spec, an incomplete set of shards or a bad K/N are refused.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

// 12 arch points of resnet18 and a small residual network: long enough (~0.1 s per point on one
// thread) to be stopped part-way.
constexpr const char* kSpec = R"(name: resume
workloads: [resnet18, tiny_residual]
grid:
  accelerator: [ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256]
  sram_capacity: [1MiB, 2MiB, 4MiB]
)";
constexpr std::size_t kPoints = 12;
const std::vector<std::string> kFinalFiles = {"sweep.csv", "sweep.json", "pareto.csv", "pareto.svg"};

std::size_t journal_points(const fs::path& folder) {
  const std::size_t lines = lines_of(read_text(folder / "points.jsonl")).size();
  return lines > 0 ? lines - 1 : 0;  // the first line is the header
}

/// Runs the sweep to completion into `folder` and checks it succeeded.
RunResult complete_run(const fs::path& spec, const fs::path& folder, const std::string& threads) {
  const std::vector<std::string> args = {"sweep", spec.string(), "--out", folder.string(), "-j", threads};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
  return r;
}

void expect_same_final_files(const fs::path& a, const fs::path& b) {
  for (const auto& f : kFinalFiles) {
    ASSERT_TRUE(fs::exists(a / f)) << (a / f);
    ASSERT_TRUE(fs::exists(b / f)) << (b / f);
    const std::string x = read_text(a / f), y = read_text(b / f);
    EXPECT_TRUE(x == y) << f << " differs: " << first_difference(x, y);
  }
}

/// Starts a sweep and stops it with `signal` once at least one point is in its journal.
/// Returns the number of points the journal held when the signal was sent.
std::size_t stop_part_way(const fs::path& spec, const fs::path& folder, int signal, const TempDir& io, RunResult& result) {
  const std::vector<std::string> args = {"sweep", spec.string(), "--out", folder.string(), "-j", "1", "-q"};
  const Spawned s = spawn_mapper(args, io);
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    seen = journal_points(folder);
    if (seen >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(s.pid, signal);
  result = wait_mapper(s);
  return seen;
}

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = tmp_ / "resume.yaml";
    write_text(spec_, kSpec);
    reference_ = tmp_ / "reference";
    complete_run(spec_, reference_, "2");
  }
  TempDir tmp_;
  fs::path spec_;
  fs::path reference_;
};

TEST_F(SweepCli, KilledRunResumesToTheSameFiles) {
  const fs::path folder = tmp_ / "killed";
  RunResult killed;
  const std::size_t at_kill = stop_part_way(spec_, folder, SIGKILL, tmp_, killed);
  EXPECT_EQ(killed.status, 1000 + SIGKILL);
  const std::size_t kept = journal_points(folder);
  ASSERT_GE(kept, at_kill);
  ASSERT_LT(kept, kPoints) << "the run finished before it could be killed; the test needs a slower spec";
  for (const auto& f : kFinalFiles) EXPECT_FALSE(fs::exists(folder / f)) << f << " is written only when every point is done";

  const RunResult resumed = complete_run(spec_, folder, "1");
  EXPECT_NE(resumed.out.find(std::to_string(kPoints - kept) + " points computed in this run, " + std::to_string(kept) + " resumed"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(journal_points(folder), kPoints);
  expect_same_final_files(reference_, folder);
}

TEST_F(SweepCli, InterruptedRunExits130AndResumes) {
  const fs::path folder = tmp_ / "interrupted";
  RunResult interrupted;
  stop_part_way(spec_, folder, SIGINT, tmp_, interrupted);
  EXPECT_EQ(interrupted.status, 130) << interrupted.err;
  EXPECT_NE(interrupted.err.find("run the same command to resume"), std::string::npos) << interrupted.err;
  EXPECT_LT(journal_points(folder), kPoints);
  complete_run(spec_, folder, "2");
  expect_same_final_files(reference_, folder);
}

TEST_F(SweepCli, ThreadCountDoesNotChangeTheFiles) {
  const fs::path one = tmp_ / "one";
  complete_run(spec_, one, "1");
  expect_same_final_files(reference_, one);
  const fs::path eight = tmp_ / "eight";
  complete_run(spec_, eight, "8");
  expect_same_final_files(reference_, eight);
}

TEST_F(SweepCli, CutOffJournalLineIsRecomputed) {
  // A kill in the middle of an append leaves a last line without its newline: drop half of the last
  // record, remove the final files, and rerun.
  const fs::path folder = tmp_ / "torn";
  fs::create_directories(folder);
  const std::string journal = read_text(reference_ / "points.jsonl");
  const std::size_t last = journal.rfind('\n', journal.size() - 2);
  write_text(folder / "points.jsonl", journal.substr(0, last + 1 + (journal.size() - last) / 2));
  const RunResult r = complete_run(spec_, folder, "2");
  EXPECT_NE(r.out.find("1 points computed in this run, 11 resumed"), std::string::npos) << r.out;
  expect_same_final_files(reference_, folder);
}

TEST_F(SweepCli, RerunOfAFinishedSweepRewritesTheSameFiles) {
  const RunResult r = complete_run(spec_, reference_, "2");
  EXPECT_NE(r.out.find("0 points computed in this run, 12 resumed"), std::string::npos) << r.out;
  const fs::path copy = tmp_ / "copy";
  complete_run(spec_, copy, "2");
  expect_same_final_files(copy, reference_);
}

TEST_F(SweepCli, JournalOfAnotherSweepIsRefused) {
  write_text(spec_, std::string(kSpec) + "fusion: false\n");
  const std::vector<std::string> args = {"sweep", spec_.string(), "--out", reference_.string()};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("points.jsonl:1:1: the folder holds points of a different sweep"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--restart"), std::string::npos) << r.err;
  // --restart starts over.
  const std::vector<std::string> restart = {"sweep", spec_.string(), "--out", reference_.string(), "--restart", "-q"};
  const RunResult again = run_mapper(restart);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(read_text(reference_ / "sweep.json").find("\"fusion\": false"), std::string::npos);
}

TEST_F(SweepCli, DryRunListsThePointsAndWritesNothing) {
  const fs::path folder = tmp_ / "dry";
  const std::vector<std::string> args = {"sweep", spec_.string(), "--out", folder.string(), "--dry-run"};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(folder));
  const std::vector<std::string> lines = lines_of(r.out);
  // A title, the 2 workloads, then the 12 points: p01 is the first grid point (last key fastest).
  ASSERT_EQ(lines.size(), 1u + 2u + kPoints) << r.out;
  EXPECT_EQ(lines[3].rfind("  p01    accelerator=ethos-u55-32 sram_capacity=1MiB", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].find("32 MACs/cycle, 1.00 MiB SRAM, 500 MHz, weights in OffChipFlash, feature maps in Sram"),
            std::string::npos)
      << lines[3];
  EXPECT_EQ(lines.back().rfind("  p12    accelerator=ethos-u55-256 sram_capacity=4MiB", 0), 0u) << lines.back();
}

TEST_F(SweepCli, SummaryReportsTheSharedLayerCache) {
  const RunResult r = complete_run(spec_, tmp_ / "summary", "2");
  // resnet18 has 31 layers (conv1, max pool, 8 basic blocks of two convs and an add, 3 downsample
  // convs, avg pool, fc) and tiny_residual 3: 34 per point, 408 over the 12 points.
  EXPECT_NE(r.out.find("layers: 408 (arch point, layer) pairs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cross-arch Pareto front"), std::string::npos) << r.out;
}


/// The point indices a journal holds, ascending.
std::vector<std::size_t> journal_indices(const fs::path& folder) {
  std::vector<std::size_t> out;
  const std::vector<std::string> lines = lines_of(read_text(folder / "points.jsonl"));
  for (std::size_t i = 1; i < lines.size(); ++i) out.push_back(nlohmann::json::parse(lines[i])["point"].get<std::size_t>());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(SweepCli, ShardsThenMergeGiveTheSameFiles) {
  std::vector<std::string> merge = {"sweep", spec_.string(), "--out", (tmp_ / "merged").string(), "--merge"};
  for (int k = 0; k < 3; ++k) {
    const fs::path folder = tmp_ / ("shard" + std::to_string(k));
    const std::vector<std::string> args = {"sweep", spec_.string(), "--shard", std::to_string(k) + "/3", "--out", folder.string(),
                                           "-j", "1"};
    const RunResult r = run_mapper(args);
    ASSERT_EQ(r.status, 0) << command_text(args) << "\n" << r.err;
    EXPECT_NE(r.out.find("shard " + std::to_string(k) + "/3: 4 points computed in this run"), std::string::npos) << r.out;
    // 12 points, every third from k: indices k, k+3, k+6, k+9.
    const std::vector<std::size_t> want = {static_cast<std::size_t>(k), static_cast<std::size_t>(k) + 3,
                                           static_cast<std::size_t>(k) + 6, static_cast<std::size_t>(k) + 9};
    EXPECT_EQ(journal_indices(folder), want);
    for (const auto& f : kFinalFiles) EXPECT_FALSE(fs::exists(folder / f)) << f << ": a shard writes no final files";
    merge.push_back(folder.string());
  }
  // Merging only two of the three shards: refused, naming what is missing, nothing written.
  std::vector<std::string> partial(merge.begin(), merge.end() - 1);
  const RunResult refused = run_mapper(partial);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("--merge: 4 of 12 arch points are in none of the 2 journals: p03, p06, p09, p12"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(tmp_ / "merged"));

  const RunResult merged = run_mapper(merge);
  ASSERT_EQ(merged.status, 0) << command_text(merge) << "\n" << merged.err;
  EXPECT_NE(merged.out.find("12 points merged from 3 journals"), std::string::npos) << merged.out;
  expect_same_final_files(reference_, tmp_ / "merged");
  EXPECT_EQ(journal_points(tmp_ / "merged"), kPoints);
  // The merged folder is an ordinary finished sweep: a plain rerun computes nothing, same files.
  const RunResult rerun = complete_run(spec_, tmp_ / "merged", "1");
  EXPECT_NE(rerun.out.find("0 points computed in this run, 12 resumed"), std::string::npos) << rerun.out;
  expect_same_final_files(reference_, tmp_ / "merged");
}

TEST_F(SweepCli, ShardsOfAnotherSpecAreNotMerged) {
  // The shard of a spec that differs in one key (fusion) next to two shards of this one.
  const fs::path other = tmp_ / "other.yaml";
  write_text(other, std::string(kSpec) + "fusion: false\n");
  std::vector<std::string> merge = {"sweep", spec_.string(), "--out", (tmp_ / "merged").string(), "--merge"};
  for (int k = 0; k < 3; ++k) {
    const fs::path folder = tmp_ / ("shard" + std::to_string(k));
    const fs::path spec = k == 1 ? other : spec_;
    const std::vector<std::string> args = {"sweep", spec.string(), "--shard", std::to_string(k) + "/3", "--out", folder.string(), "-q"};
    ASSERT_EQ(run_mapper(args).status, 0) << command_text(args);
    merge.push_back(folder.string());
  }
  const RunResult r = run_mapper(merge);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find((tmp_ / "shard1" / "points.jsonl").string() + ":1:1: the folder holds points of a different sweep"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "merged"));
  // A folder without a journal is refused too.
  const std::vector<std::string> empty = {"sweep", spec_.string(), "--out", (tmp_ / "merged").string(), "--merge", tmp_.path().string()};
  const RunResult none = run_mapper(empty);
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("--merge: no sweep journal here"), std::string::npos) << none.err;
}

TEST_F(SweepCli, BadShardIsRefused) {
  for (const std::string bad : {"3/3", "0/0", "1", "a/3", "-1/3", "1/-3", "1/3/4", "/3", "1/", "0x1/3", "99999999999/3"}) {
    const std::vector<std::string> args = {"sweep", spec_.string(), "--shard=" + bad, "--out", (tmp_ / "bad").string()};
    const RunResult r = run_mapper(args);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
    EXPECT_EQ(r.err, "--shard: expected K/N with whole numbers 0 <= K < N, got `" + bad + "` (e.g. --shard 0/4 .. --shard 3/4 for four shards)\n")
        << bad;
    EXPECT_FALSE(fs::exists(tmp_ / "bad")) << bad;
  }
  // --shard and --merge exclude each other.
  const std::vector<std::string> both = {"sweep", spec_.string(), "--shard", "0/2", "--merge", reference_.string()};
  EXPECT_EQ(run_mapper(both).status, 2);
}

TEST_F(SweepCli, ShardDefaultsToItsOwnFolderUnderTheSweepFolder) {
  // Without --out a shard writes runs/sweep-<name>/shard-K-of-N (relative to the working directory),
  // and --merge without --out writes runs/sweep-<name>.
  const fs::path cwd = tmp_ / "cwd";
  fs::create_directories(cwd);
  for (int k = 0; k < 2; ++k) {
    const std::vector<std::string> args = {"sweep", spec_.string(), "--shard", std::to_string(k) + "/2", "-q"};
    ASSERT_EQ(run_mapper(args, cwd).status, 0) << command_text(args);
  }
  EXPECT_EQ(journal_indices(cwd / "runs/sweep-resume/shard-0-of-2"), (std::vector<std::size_t>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(journal_indices(cwd / "runs/sweep-resume/shard-1-of-2"), (std::vector<std::size_t>{1, 3, 5, 7, 9, 11}));
  const std::vector<std::string> merge = {"sweep", spec_.string(), "-q", "--merge", "runs/sweep-resume/shard-0-of-2",
                                          "runs/sweep-resume/shard-1-of-2"};
  const RunResult r = run_mapper(merge, cwd);
  ASSERT_EQ(r.status, 0) << r.err;
  expect_same_final_files(reference_, cwd / "runs/sweep-resume");
}

}  // namespace
}  // namespace npumap::cli_test
