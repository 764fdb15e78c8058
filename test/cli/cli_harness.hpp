// Running the real `mapper` executable from a test.
//
// The CLI tests check what a user sees: the exit status, the bytes on stdout and stderr, and the
// files a run leaves behind. So they do not call run_cli() in-process (that would share spdlog's
// registry, signal handlers and the working directory with the test) but spawn the executable the
// build produced (NPUMAP_MAPPER_EXE), with stdout and stderr redirected to files in a private
// temporary folder. posix_spawn with an argument vector avoids a shell, so paths need no quoting.

#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace npumap::cli_test {

namespace fs = std::filesystem;

/// A fresh folder under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "npumap-cli-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  /// The folder itself.
  const fs::path& path() const { return path_; }
  /// A path inside the folder (not created).
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

/// Everything observable about one finished run of the executable.
struct RunResult {
  int status = -1;  ///< exit status, or 1000 + signal number if a signal killed the process
  std::string out;  ///< stdout bytes
  std::string err;  ///< stderr bytes
};

/// The whole content of a file ("" if it cannot be read).
inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes `content` to `path`, replacing it.
inline void write_text(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

/// Splits on '\n'; a final newline does not make an extra empty line.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

/// A spawned, not yet reaped mapper process (for tests that signal it while it runs).
struct Spawned {
  pid_t pid = -1;
  fs::path out_file;
  fs::path err_file;
};

/// Starts `program` with `args`, stdout/stderr into files of `io`, in working directory `cwd` (empty:
/// inherit the test's, which is the project root).
/// `stdin_fd` >= 0 becomes its standard input (else /dev/null).
inline Spawned spawn_program(const std::string& program, const std::vector<std::string>& args, const TempDir& io,
                             const fs::path& cwd = {}, int stdin_fd = -1) {
  static int counter = 0;
  ++counter;
  Spawned s;
  s.out_file = io / ("stdout" + std::to_string(counter));
  s.err_file = io / ("stderr" + std::to_string(counter));
  std::vector<std::string> storage;
  storage.push_back(program);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, s.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, s.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (stdin_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  const int rc = posix_spawn(&s.pid, storage[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
  return s;
}

/// Starts the mapper with `args` (see spawn_program).
inline Spawned spawn_mapper(const std::vector<std::string>& args, const TempDir& io, const fs::path& cwd = {}, int stdin_fd = -1) {
  return spawn_program(NPUMAP_MAPPER_EXE, args, io, cwd, stdin_fd);
}

/// Waits for a spawned mapper and collects its status and output.
inline RunResult wait_mapper(const Spawned& s) {
  int wstatus = 0;
  while (waitpid(s.pid, &wstatus, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  RunResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WIFSIGNALED(wstatus) ? 1000 + WTERMSIG(wstatus) : -1;
  r.out = read_text(s.out_file);
  r.err = read_text(s.err_file);
  return r;
}

/// Runs the mapper to completion.
inline RunResult run_mapper(const std::vector<std::string>& args, const fs::path& cwd = {}) {
  TempDir io;
  return wait_mapper(spawn_mapper(args, io, cwd));
}

/// For failure messages: the command line as a user would type it.
inline std::string command_text(const std::vector<std::string>& args) {
  std::string s = "mapper";
  for (const auto& a : args) s += " " + a;
  return s;
}

/// The text report's trailer `wrote <folder>: result.json, ...` as one line (the report wraps it at
/// 100 columns; continuation lines start with two spaces). Empty if the report has none.
inline std::string wrote_trailer(const std::string& report) {
  const std::vector<std::string> lines = lines_of(report);
  std::size_t end = lines.size();
  while (end > 0 && lines[end - 1].rfind("  ", 0) == 0) --end;
  if (end == 0 || lines[end - 1].rfind("wrote ", 0) != 0) return {};
  std::string out = lines[end - 1];
  for (std::size_t i = end; i < lines.size(); ++i) out += " " + lines[i].substr(2);
  return out;
}

/// The text report without its trailer: the last line(s) `wrote <folder>: result.json, front.csv,
/// front.svg` (it names the output folder, so it differs between otherwise equal runs) and the
/// blank line that separates it from the report. What remains is what `mapper show` prints.
inline std::string drop_wrote_line(const std::string& report) {
  std::vector<std::string> lines = lines_of(report);
  // The trailer may wrap: continuation lines start with two spaces.
  std::size_t end = lines.size();
  while (end > 0 && lines[end - 1].rfind("  ", 0) == 0) --end;
  if (end > 0 && lines[end - 1].rfind("wrote ", 0) == 0) {
    lines.resize(end - 1);
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

/// result.json with the run-specific `provenance` object removed, re-serialised the way the
/// mapper writes it (ordered keys, one-space indent), so equal results compare equal as bytes.
inline std::string result_without_provenance(const std::string& result_json_text) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(result_json_text);
  j.erase("provenance");
  return j.dump(1) + "\n";
}

/// The layer entries of a front point of result.json: a point lists indices into `layer_mappings`.
template <class Json>
std::vector<Json> layers_of(const Json& result, const Json& point) {
  std::vector<Json> out;
  for (const auto& ref : point["layers"]) out.push_back(result["layer_mappings"][ref.template get<std::size_t>()]);
  return out;
}

/// "line N: expected `a` / got `b`" for the first line where two texts differ ("" if equal).
inline std::string first_difference(const std::string& expected, const std::string& actual) {
  const std::vector<std::string> a = lines_of(expected);
  const std::vector<std::string> b = lines_of(actual);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "<end of text>";
    const std::string y = i < b.size() ? b[i] : "<end of text>";
    if (x != y) return "line " + std::to_string(i + 1) + ":\n  expected: " + x + "\n  got:      " + y;
  }
  if (expected != actual) return "texts differ only in trailing newlines";
  return {};
}

}  // namespace npumap::cli_test
