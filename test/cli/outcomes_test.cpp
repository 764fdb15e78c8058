// The two non-success outcomes of a mapping run that are not user errors:
//
//   1    no valid mapping: a normal result, reported with the keep rates that explain it;
//   130  interrupted (by --time-limit or Ctrl-C): the run stops at a chunk boundary, still writes
//        result.json, and marks it partial.
//
// resnet50 is the workload for interruption because its per-layer stage is long enough that a
// microsecond deadline or an early SIGINT lands in the middle of it.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

void expect_partial_result(const RunResult& r, const fs::path& out, const std::string& what) {
  ASSERT_TRUE(fs::exists(out / "result.json")) << what << ": an interrupted run still writes its result";
  const Json j = Json::parse(read_text(out / "result.json"));
  EXPECT_EQ(j["partial"], true) << what;
  EXPECT_EQ(j["status"], "interrupted") << what;
  EXPECT_NE(r.out.find("STOPPED EARLY (--time-limit or Ctrl-C)"), std::string::npos) << what << ": the report says the run was stopped:\n" << r.out;
  EXPECT_EQ(r.out.find("No valid mapping"), std::string::npos) << what << ": a stopped run is not a failed one:\n" << r.out;
  EXPECT_TRUE(fs::exists(out / "front.csv")) << what;
  EXPECT_TRUE(fs::exists(out / "front.svg")) << what;
}

TEST(Interrupted, TinyTimeLimitExits130WithAPartialResult) {
  TempDir tmp;
  const std::vector<std::string> args = {"--workload", "workloads/resnet50.yaml", "--time-limit", "0.000001",
                                         "--threads", "2", "--out", (tmp / "out").string()};
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run_mapper(args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 130) << command_text(args) << "\n" << r.err;
  expect_partial_result(r, tmp / "out", command_text(args));
  // Stopping "at chunk boundaries" should be prompt, not after the whole per-layer stage.
  EXPECT_LT(seconds, 10.0) << "the time limit took " << seconds << " s to take effect";
}

/// Whether process `pid` has a handler installed for `sig` (the SigCgt mask of /proc/<pid>/status).
bool catches_signal(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SigCgt:", 0) == 0) {
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      return ((mask >> (sig - 1)) & 1ull) != 0;
    }
  }
  return false;
}

/// Whether process `pid` has exited (without reaping it).
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

/// Sends `sig` to a resnet50 run once its handler is installed: exit 130 with a partial result.
void expect_signal_gives_partial_result(int sig, const std::string& name) {
  // resnet50 maps for seconds, so the signal lands during the search; should the run still finish
  // first (a very fast machine), try again: a test never skips.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    TempDir tmp;
    TempDir io;
    const std::vector<std::string> args = {"--workload", "workloads/resnet50.yaml", "--threads", "2", "--out",
                                           (tmp / "out").string()};
    const Spawned s = spawn_mapper(args, io);
    // Send the signal once the mapper has installed its handler: earlier, the default action would
    // just kill it.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!catches_signal(s.pid, sig) && !has_exited(s.pid) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const bool exited_early = has_exited(s.pid);
    kill(s.pid, sig);
    const RunResult r = wait_mapper(s);
    if (exited_early && r.status == 0) {
      ASSERT_LT(attempt, 3) << "the run finished before " << name << " could interrupt it, three times";
      continue;
    }
    ASSERT_NE(r.status, 1000 + sig) << "killed by " << name << ": no handler was installed in time";
    ASSERT_EQ(r.status, 130) << command_text(args) << " then " << name << "\n" << r.err;
    expect_partial_result(r, tmp / "out", name);
    return;
  }
}

TEST(Interrupted, SigintExits130WithAPartialResult) { expect_signal_gives_partial_result(SIGINT, "SIGINT"); }

// A kill (SIGTERM: `kill`, a batch system's time limit, systemd) is Ctrl-C, not a lost run.
TEST(Interrupted, SigtermExits130WithAPartialResult) { expect_signal_gives_partial_result(SIGTERM, "SIGTERM"); }

TEST(NoValidMapping, TooLittleSramExits1AndExplainsWithKeepRates) {
  // 1 KiB of SRAM cannot hold tiny_chain's 2 KiB input (16x16x8 int8), so no layer has a mapping.
  TempDir tmp;
  write_text(tmp / "arch.yaml", "preset: ethos-u55-256\nsram_capacity: 1KiB\n");
  const std::vector<std::string> args = {"--arch", (tmp / "arch.yaml").string(), "--workload",
                                         "workloads/tiny_chain.yaml", "--threads", "2", "--out",
                                         (tmp / "out").string()};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 1) << command_text(args) << "\n" << r.err;
  EXPECT_TRUE(r.err.empty()) << "no valid mapping is an outcome, not an error:\n" << r.err;
  EXPECT_NE(r.out.find("keep rates"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sram_capacity: kept 0.0000"), std::string::npos)
      << "the report names the cause that removed everything from conv_a:\n" << r.out;
  EXPECT_EQ(r.out.find("Chosen mapping"), std::string::npos) << r.out;

  ASSERT_TRUE(fs::exists(tmp / "out" / "result.json"));
  const Json j = Json::parse(read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(j["status"], "no_valid_mapping");
  EXPECT_EQ(j["partial"], false);
  EXPECT_EQ(j["arch"]["sram_capacity_bytes"], 1024);
  EXPECT_GT(j["keep_rates"]["total"].get<int>(), 0);
  EXPECT_LT(j["keep_rates"]["keep_rate_by_cause"]["sram_capacity"].get<double>(), 1.0);
  // conv_a's 16x16x8 network input alone (2 KiB) exceeds the SRAM; conv_b could still run with both
  // of its tensors as rolling buffers, which only the join finds too large.
  EXPECT_EQ(j["per_layer"][0]["layer"], "conv_a");
  EXPECT_EQ(j["per_layer"][0]["pmappings"], 0);
  EXPECT_TRUE(j["per_layer"][0]["best_cycles"].is_null());
  EXPECT_DOUBLE_EQ(j["per_layer"][0]["keep_rates"]["keep_rate_by_cause"]["sram_capacity"].get<double>(), 0.0);
  EXPECT_TRUE(!j.contains("front") || j["front"].empty());
  // What conv_a would need at the least: its input, a network input, is linear in the arena (the
  // SRAM on U55): 16*16*8 = 2048 bytes; its output can roll into conv_b (0 bytes of its own); weights
  // and bias read in place (0). So 2048 bytes, 2.0 KiB, against the arch's 1.0 KiB.
  EXPECT_EQ(j["per_layer"][0]["min_sram_bytes"], 2048);
  EXPECT_NE(r.out.find("conv_a needs at least 2.0 KiB of SRAM (its smallest placement); the arch has 1.0 KiB"),
            std::string::npos)
      << r.out;

  // `show` re-renders a failed run too.
  const RunResult shown = run_mapper({"show", (tmp / "out" / "result.json").string()});
  EXPECT_EQ(shown.status, 0) << shown.err;
  EXPECT_EQ(shown.out, drop_wrote_line(r.out)) << first_difference(drop_wrote_line(r.out), shown.out);
}

TEST(NoValidMapping, OneImpossibleLayerIsEnoughAndTheOthersStillReport) {
  // 1900 B holds conv_c (8x8x16 in, 8x8x8 out: 1.5 KiB) but not conv_a, whose 2 KiB input alone
  // exceeds the SRAM: exit 1, and the per-layer stage still reports conv_c's mappings.
  TempDir tmp;
  write_text(tmp / "arch.yaml", "preset: ethos-u55-256\nsram_capacity: 1900\n");
  const std::vector<std::string> args = {"--arch", (tmp / "arch.yaml").string(), "--workload",
                                         "workloads/tiny_chain.yaml", "--threads", "2", "--out",
                                         (tmp / "out").string()};
  const RunResult r = run_mapper(args);
  EXPECT_EQ(r.status, 1) << command_text(args) << "\n" << r.err;
  const Json j = Json::parse(read_text(tmp / "out" / "result.json"));
  ASSERT_EQ(j["per_layer"].size(), 3u);
  EXPECT_EQ(j["per_layer"][0]["layer"], "conv_a");
  EXPECT_EQ(j["per_layer"][0]["pmappings"], 0);
  EXPECT_EQ(j["per_layer"][2]["layer"], "conv_c");
  EXPECT_GT(j["per_layer"][2]["pmappings"].get<int>(), 0);
  EXPECT_EQ(j["status"], "no_valid_mapping");
}

}  // namespace
}  // namespace npumap::cli_test
