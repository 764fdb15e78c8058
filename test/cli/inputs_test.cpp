// Inputs that can be read only once (issue 41, point 3): a pipe on standard input (`--workload -`
// and `--workload /dev/stdin`, for workload YAML and .tflite models), a FIFO, and the special files
// the mapper refuses (devices, sockets, folders). Each input is read exactly once, so a pipe gives
// the same mapping as the file it carries; a FIFO without a writer waits, but Ctrl-C and
// --time-limit stop the wait.

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Clock = std::chrono::steady_clock;

double input_seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Runs the mapper with `bytes` written into a pipe on its standard input (by a thread, so a model
/// larger than the pipe buffer does not deadlock).
RunResult run_with_stdin(const std::vector<std::string>& args, const std::string& bytes) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  TempDir io;
  const Spawned s = spawn_mapper(args, io, {}, fds[0]);
  ::close(fds[0]);
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fds[1], bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;  // the mapper stopped reading (refused the input)
      done += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  RunResult r = wait_mapper(s);
  writer.join();
  return r;
}

/// The mapping part of a result.json: what must not depend on how the input was read.
std::string piped_mapping_of(const fs::path& result) {
  const nlohmann::json j = nlohmann::json::parse(read_text(result));
  return j.at("front").dump() + j.at("layer_mappings").dump() + j.at("workload").at("layers").dump();
}

TEST(Inputs, APipeOnStandardInputMapsAsTheFile) {
  ::signal(SIGPIPE, SIG_IGN);
  TempDir tmp;
  for (const std::string file : {"workloads/tiny_chain.yaml", "workloads/models/tflm__person_detect.tflite"}) {
    const RunResult direct = run_mapper({"--workload", file, "--out", (tmp / "direct").string(), "-q"});
    ASSERT_EQ(direct.status, 0) << direct.err;
    for (const std::string name : {"-", "/dev/stdin"}) {
      const fs::path out = tmp / ("piped" + std::to_string(name.size()));
      const RunResult piped = run_with_stdin({"--workload", name, "--out", out.string(), "-q"}, read_text(file));
      ASSERT_EQ(piped.status, 0) << file << " via " << name << ": " << piped.err;
      EXPECT_EQ(piped_mapping_of(out / "result.json"), piped_mapping_of(tmp / "direct" / "result.json")) << file << " via " << name;
      // The provenance hash is of the bytes read, the same as the file's.
      const auto hash = [](const fs::path& p) {
        return nlohmann::json::parse(read_text(p)).at("provenance").at("inputs").at("workload").at("hash").get<std::string>();
      };
      EXPECT_EQ(hash(out / "result.json"), hash(tmp / "direct" / "result.json"));
      fs::remove_all(out);
    }
    fs::remove_all(tmp / "direct");
  }
}

TEST(Inputs, EachKindHasItsOwnLimitCheckedWhileReading) {
  ::signal(SIGPIPE, SIG_IGN);
  TempDir tmp;
  // 17 MiB of text is over the 16 MiB text limit, refused after reading 16 MiB.
  const std::string text(std::size_t{17} << 20, '#');
  RunResult r = run_with_stdin({"--workload", "-", "--out", (tmp / "a").string()}, text);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("<stdin>: the input is larger than 16 MiB"), std::string::npos) << r.err;
  // The same bytes with the .tflite identifier are a model (limit 512 MiB): not refused for their
  // size but as a flatbuffer, which shows the kind was sniffed from the bytes of the one read.
  const std::string model = std::string("\x10\0\0\0TFL3", 8) + std::string((std::size_t{17} << 20) - 8, '\0');
  r = run_with_stdin({"--workload", "-", "--out", (tmp / "b").string()}, model);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.find("larger than"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("<stdin>: ", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "a"));
  EXPECT_FALSE(fs::exists(tmp / "b"));
}

TEST(Inputs, AFifoIsReadOnceWhenItsWriterComes) {
  TempDir tmp;
  const fs::path fifo = tmp / "wl.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  TempDir io;
  const Spawned s = spawn_mapper({"--workload", fifo.string(), "--out", (tmp / "o").string(), "-q"}, io);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the mapper waits for a writer
  write_text(fifo, read_text("workloads/tiny_chain.yaml"));      // opens, writes and closes once
  const RunResult r = wait_mapper(s);
  ASSERT_EQ(r.status, 0) << r.err;
  const RunResult direct = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--out", (tmp / "d").string(), "-q"});
  ASSERT_EQ(direct.status, 0) << direct.err;
  EXPECT_EQ(piped_mapping_of(tmp / "o" / "result.json"), piped_mapping_of(tmp / "d" / "result.json"));
}

TEST(Inputs, AFifoWithoutAWriterStopsOnCtrlCAndTheTimeLimit) {
  TempDir tmp;
  const fs::path fifo = tmp / "never.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  {
    TempDir io;
    const Spawned s = spawn_mapper({"--workload", fifo.string(), "--out", (tmp / "a").string()}, io);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto t0 = Clock::now();
    ::kill(s.pid, SIGINT);
    const RunResult r = wait_mapper(s);
    EXPECT_LT(input_seconds_since(t0), 1.0);  // the wait polls the stop flag every 100 ms
    EXPECT_EQ(r.status, 130) << r.err;
    EXPECT_NE(r.out.find("while loading the workload"), std::string::npos) << r.out;
  }
  const auto t0 = Clock::now();
  const RunResult r = run_mapper({"--workload", fifo.string(), "--out", (tmp / "b").string(), "--time-limit", "1"});
  const double s = input_seconds_since(t0);
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_GT(s, 0.9);
  EXPECT_LT(s, 1.5);  // the 1 s limit within 0.5 s
  // Stopped while loading, as any stop: the run folder, marked partial, without layers.
  for (const char* out : {"a", "b"}) {
    const std::string text = read_text(tmp / out / "result.json");
    EXPECT_NE(text.find("\"stopped_while_loading\": true"), std::string::npos) << out;
  }
}

TEST(Inputs, SpecialFilesAreRefusedInOneLineAtOnce) {
  TempDir tmp;
  const fs::path sock = tmp / "s.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << sock;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/dev/zero", "/dev/zero: is a character device, not a file or pipe"},
      {"/dev/null", "/dev/null: is a character device, not a file or pipe"},
      {sock.string(), ": is a socket, not a file or pipe"},
      {tmp.path().string(), ": is a folder, not a file"},
      // The test harness gives the mapper /dev/null as its standard input: a device, not a pipe.
      {"-", "<stdin>: standard input is a terminal or device, not a file or pipe"}};
  for (const auto& c : cases) {
    for (const std::string ext : {"", ".tflite"}) {
      if (!ext.empty() && c.first != "/dev/zero") continue;
      std::string path = c.first;
      if (!ext.empty()) {
        // A device named .tflite (through a symlink) is refused the same way, before any read.
        path = (tmp / "zero.tflite").string();
        fs::create_symlink("/dev/zero", path);
      }
      const auto t0 = Clock::now();
      const RunResult r = run_mapper({"--workload", path, "--out", (tmp / "o").string()});
      EXPECT_LT(input_seconds_since(t0), 2.0) << path;
      EXPECT_EQ(r.status, 2) << path << ": " << r.err;
      EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
      EXPECT_NE(r.err.find(ext.empty() ? c.second : "zero.tflite: is a character device"), std::string::npos) << r.err;
    }
  }
  ::close(fd);
  EXPECT_FALSE(fs::exists(tmp / "o"));
}

}  // namespace
}  // namespace npumap::cli_test
