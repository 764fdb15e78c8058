// `mpirun -np N mapper sweep` through the real executable and Open MPI's mpirun: the final files are
// byte-identical to a single-process run for 2 and 3 ranks and 1 or 2 threads per rank; killing a
// worker rank part-way ends the run, and rerunning resumes (finished points are not recomputed) to
// the same files; a bad spec is reported once, by rank 0, with exit status 2 and no rank left
// waiting. Every mpirun has a deadline, so a hang fails the test instead of blocking ctest.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

// The same 12 points as sweep_test.cpp's: ~0.1 s each on one thread.
constexpr const char* kSpec = R"(name: resume
workloads: [resnet18, tiny_residual]
grid:
  accelerator: [ethos-u55-32, ethos-u55-64, ethos-u55-128, ethos-u55-256]
  sram_capacity: [1MiB, 2MiB, 4MiB]
)";
constexpr std::size_t kPoints = 12;
const std::vector<std::string> kFinalFiles = {"sweep.csv", "sweep.json", "pareto.csv", "pareto.svg"};
constexpr auto kDeadline = std::chrono::seconds(180);

std::size_t journal_points(const fs::path& folder) {
  const std::size_t lines = lines_of(read_text(folder / "points.jsonl")).size();
  return lines > 0 ? lines - 1 : 0;
}

void expect_same_final_files(const fs::path& a, const fs::path& b) {
  for (const auto& f : kFinalFiles) {
    ASSERT_TRUE(fs::exists(a / f)) << (a / f);
    ASSERT_TRUE(fs::exists(b / f)) << (b / f);
    const std::string x = read_text(a / f), y = read_text(b / f);
    EXPECT_TRUE(x == y) << f << " differs: " << first_difference(x, y);
  }
}

/// mpirun's arguments: as root (CI containers), more ranks than cores, and no single-copy transfers
/// between ranks on a node (they use process_vm_readv, which containers without CAP_SYS_PTRACE forbid:
/// "Read -1, expected 6152, errno = 1"), then the mapper's.
std::vector<std::string> mpirun_args(int ranks, const std::vector<std::string>& mapper_args) {
  std::vector<std::string> args = {"--allow-run-as-root", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none",
                                   "-np", std::to_string(ranks), NPUMAP_MAPPER_EXE};
  args.insert(args.end(), mapper_args.begin(), mapper_args.end());
  return args;
}

/// Waits for mpirun; past the deadline, terminates it (mpirun passes SIGTERM on to its ranks) and
/// reports status -2.
RunResult wait_with_deadline(const Spawned& s) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  int wstatus = 0;
  for (;;) {
    const pid_t r = waitpid(s.pid, &wstatus, WNOHANG);
    if (r == s.pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(s.pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      kill(s.pid, SIGKILL);
      waitpid(s.pid, &wstatus, 0);
      RunResult hung;
      hung.status = -2;
      hung.err = read_text(s.err_file);
      return hung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  RunResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WIFSIGNALED(wstatus) ? 1000 + WTERMSIG(wstatus) : -1;
  r.out = read_text(s.out_file);
  r.err = read_text(s.err_file);
  return r;
}

RunResult run_mpi(int ranks, const std::vector<std::string>& mapper_args) {
  TempDir io;
  return wait_with_deadline(spawn_program(NPUMAP_MPIRUN, mpirun_args(ranks, mapper_args), io));
}

/// The pid of the child of `parent` whose environment says OMPI_COMM_WORLD_RANK=`rank` (-1: none yet).
pid_t rank_pid(pid_t parent, int rank) {
  const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
    const std::string stat = read_text(entry.path() / "stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent) continue;
    const std::string env = read_text(entry.path() / "environ");
    std::size_t at = 0;
    while (at < env.size()) {
      const std::size_t end = env.find('\0', at);
      if (env.compare(at, (end == std::string::npos ? env.size() : end) - at, want) == 0) return std::stoi(name);
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return -1;
}

class MpiSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = tmp_ / "resume.yaml";
    write_text(spec_, kSpec);
    reference_ = tmp_ / "reference";
    const std::vector<std::string> args = {"sweep", spec_.string(), "--out", reference_.string(), "-j", "2", "-q"};
    const RunResult r = run_mapper(args);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  TempDir tmp_;
  fs::path spec_;
  fs::path reference_;
};

TEST_F(MpiSweep, RanksGiveTheFilesOfOneProcess) {
  for (const auto& [ranks, threads] : std::vector<std::pair<int, std::string>>{{3, "1"}, {2, "2"}}) {
    const fs::path folder = tmp_ / ("np" + std::to_string(ranks));
    const RunResult r = run_mpi(ranks, {"sweep", spec_.string(), "--out", folder.string(), "-j", threads});
    ASSERT_EQ(r.status, 0) << ranks << " ranks\n" << r.out << r.err;
    // One summary, from rank 0; the work done by the other ranks.
    EXPECT_NE(r.out.find("12 points computed in this run, 0 resumed"), std::string::npos) << r.out;
    const std::string workers = std::to_string(ranks - 1) + " worker rank" + (ranks == 2 ? "" : "s") + " x " + threads + " thread";
    EXPECT_NE(r.out.find(workers), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("coordinator (rank 0):"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("sweep resume:"), r.out.rfind("sweep resume:")) << "the summary is printed once\n" << r.out;
    EXPECT_EQ(journal_points(folder), kPoints);
    expect_same_final_files(reference_, folder);
  }
}

TEST_F(MpiSweep, KilledRankEndsTheRunAndARerunResumes) {
  const fs::path folder = tmp_ / "killed";
  TempDir io;
  const Spawned s = spawn_program(NPUMAP_MPIRUN, mpirun_args(3, {"sweep", spec_.string(), "--out", folder.string(), "-j", "1", "-q"}), io);
  // Wait for the first finished point, then kill worker rank 1 with SIGKILL.
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (journal_points(folder) < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const pid_t victim = rank_pid(s.pid, 1);
  ASSERT_GT(victim, 0) << "no rank 1 among mpirun's children";
  kill(victim, SIGKILL);
  const RunResult killed = wait_with_deadline(s);
  EXPECT_NE(killed.status, 0) << "mpirun must fail when a rank dies";
  EXPECT_NE(killed.status, -2) << "the run hung after a rank died";
  const std::size_t kept = journal_points(folder);
  ASSERT_GE(kept, 1u);
  ASSERT_LT(kept, kPoints) << "the run finished before the kill; the test needs a slower spec";
  for (const auto& f : kFinalFiles) EXPECT_FALSE(fs::exists(folder / f)) << f;

  const RunResult resumed = run_mpi(3, {"sweep", spec_.string(), "--out", folder.string(), "-j", "1"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find(std::to_string(kPoints - kept) + " points computed in this run, " + std::to_string(kept) + " resumed"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(journal_points(folder), kPoints) << "finished points are not computed again";
  expect_same_final_files(reference_, folder);
}

TEST_F(MpiSweep, BadSpecIsReportedOnceAndNoRankHangs) {
  const fs::path bad = tmp_ / "bad.yaml";
  write_text(bad, "name: bad\nworkloads: [resnet18]\ngrid:\n  sram_capacity: [1MiB, 12XB]\n");
  const fs::path folder = tmp_ / "bad-out";
  const RunResult r = run_mpi(3, {"sweep", bad.string(), "--out", folder.string()});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const std::string error = bad.string() + ":4:25: sram_capacity: expected a byte size, got `12XB`";
  const std::size_t first = r.err.find(error);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind(error), first) << "reported more than once:\n" << r.err;
  EXPECT_FALSE(fs::exists(folder)) << "nothing is written for a refused spec";
}

}  // namespace
}  // namespace npumap::cli_test
