#include "common/files.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::common {
namespace {

std::string mib_text(std::size_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

/// Closes a file descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::size_t max_input_bytes() {
  const char* env = std::getenv("NPUMAP_MAX_INPUT_MIB");
  if (env == nullptr || *env == '\0') return kDefaultMaxInputBytes;
  const std::string text = env;
  std::size_t mib = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mib);
  if (ec != std::errc() || ptr != text.data() + text.size() || mib < 1 || mib > (std::size_t{1} << 20)) {
    throw UserError({}, "NPUMAP_MAX_INPUT_MIB", fmt::format("expected a whole number of MiB from 1 to 1048576, got `{}`", text),
                    "unset it for the default of 16 MiB");
  }
  return mib << 20;
}

std::string read_input_file(const std::string& path) {
  const std::size_t limit = max_input_bytes();
  const std::string hint = fmt::format("inputs are limited to {}; set NPUMAP_MAX_INPUT_MIB to raise the limit", mib_text(limit));
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) {
    const int err = errno;
    if (err == EISDIR) throw UserError({path, 0, 0}, "", "is a folder, not a file", "give a file");
    throw UserError({path, 0, 0}, "", fmt::format("cannot open the file: {}", std::strerror(err)), "check the path");
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw UserError({path, 0, 0}, "", "cannot read the file", "check the path");
  if (S_ISDIR(st.st_mode)) throw UserError({path, 0, 0}, "", "is a folder, not a file", "give a file");
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > limit) {
    throw UserError({path, 0, 0}, "", fmt::format("the file is too large ({:.1f} MiB)", static_cast<double>(st.st_size) / (1 << 20)),
                    hint);
  }
  // Blocking reads from here on (O_NONBLOCK only kept open() from waiting on a FIFO with no writer).
  ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UserError({path, 0, 0}, "", fmt::format("cannot read the file: {}", std::strerror(errno)), "check the path");
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > limit) {
      throw UserError({path, 0, 0}, "", fmt::format("the input is larger than {}", mib_text(limit)), hint);
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp{}", static_cast<long>(::getpid()));
  const auto fail = [&](const std::string& message, const std::string& hint) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw UserError({path.string(), 0, 0}, "", message, hint);
  };
  // POSIX I/O so that every failure is seen (an ofstream can report success for a write that the
  // close then fails on a full disk).
  Fd f;
  f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f.fd < 0) {
    const int err = errno;
    throw UserError({path.string(), 0, 0}, "", fmt::format("cannot write output file: {}", std::strerror(err)),
                    "check the folder's permissions");
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(f.fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(fmt::format("writing failed: {}", std::strerror(n < 0 ? errno : ENOSPC)), "check free disk space");
    written += static_cast<std::size_t>(n);
  }
  const int fd = f.fd;
  f.fd = -1;
  if (::close(fd) != 0) fail(fmt::format("writing failed: {}", std::strerror(errno)), "check free disk space");
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("cannot rename the temporary output: " + ec.message(), "check the folder");
}

void check_output_folder_path(const std::filesystem::path& folder, const std::string& key) {
  const std::string shown = folder.string();
  const auto fail = [&](const std::string& message, const std::string& hint) {
    throw UserError({shown, 0, 0}, key, message, hint);
  };
  if (shown.empty()) fail("empty output folder name", "give a folder name");
  // Walk up to the nearest existing ancestor; stat() reports a symlink loop, a name too long and a
  // file in the way.
  std::filesystem::path existing = folder;
  std::vector<std::string> to_create;
  for (;;) {
    struct stat st {};
    const std::string p = existing.empty() ? std::string(".") : existing.string();
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) fail(fmt::format("`{}` is not a folder", p), "choose another output folder");
      break;
    }
    const int err = errno;
    if (err == ELOOP) fail("a symbolic link loop on the path", "check the links on the path");
    if (err == ENAMETOOLONG) fail("a name on the path is too long for the file system", "use shorter names");
    if (err == ENOTDIR) fail("a part of the path is a file, not a folder", "check the path");
    if (err != ENOENT) fail(fmt::format("cannot use the path: {}", std::strerror(err)), "check the path");
    if (existing.filename().empty() || existing == existing.parent_path()) break;
    to_create.push_back(existing.filename().string());
    existing = existing.parent_path();
  }
  const std::string base = existing.empty() ? std::string(".") : existing.string();
  const long name_max = ::pathconf(base.c_str(), _PC_NAME_MAX);
  for (const std::string& name : to_create) {
    if (name_max > 0 && name.size() > static_cast<std::size_t>(name_max)) {
      fail(fmt::format("the name `{}...` ({} bytes) is too long for the file system (at most {})", name.substr(0, 16), name.size(),
                       name_max),
           "use a shorter name");
    }
  }
  const std::string probe = base + fmt::format("/.npumap-probe-{}", static_cast<long>(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    fail(fmt::format("cannot create output files in `{}`: {}", base, std::strerror(err)), "check the folder's permissions");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_folder_atomic(const std::filesystem::path& folder,
                         const std::vector<std::pair<std::string, std::string>>& files, const std::string& key) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool holds_files = fs::is_directory(folder, ec) && !fs::is_empty(folder, ec);
  if (holds_files) {
    for (const auto& [name, content] : files) write_file_atomic(folder / name, content);
    return;
  }
  const fs::path parent = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) throw UserError({folder.string(), 0, 0}, key, "cannot create the output folder: " + ec.message(), "check the path");
  const fs::path tmp = parent / fmt::format(".npumap-out-{}", static_cast<long>(::getpid()));
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec) {
    throw UserError({folder.string(), 0, 0}, key, "cannot create the output folder: " + ec.message(), "check the path");
  }
  try {
    for (const auto& [name, content] : files) write_file_atomic(tmp / name, content);
  } catch (const UserError& e) {
    fs::remove_all(tmp, ec);
    throw UserError({folder.string(), 0, 0}, key, e.message(), e.hint());
  }
  // rename() replaces an empty folder (--out made by hand) but never one that holds files.
  fs::rename(tmp, folder, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove_all(tmp, ec);
    throw UserError({folder.string(), 0, 0}, key, "cannot create the output folder: " + why, "check the path");
  }
}

}  // namespace npumap::common
