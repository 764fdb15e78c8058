#include "common/files.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <system_error>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::common {
namespace {

std::string mib_text(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

/// Closes a file descriptor on every path out.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

/// fsync of a folder, so a rename in it survives a crash. Errors are ignored: some file systems
/// cannot sync a folder, and the data itself was synced.
void sync_folder(const std::filesystem::path& folder) {
  const std::string name = folder.empty() ? std::string(".") : folder.string();
  Fd d(::open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.fd >= 0) ::fsync(d.fd);
}

/// Renames `from` to `to` unless `to` exists (then fails with EEXIST). renameat2(RENAME_NOREPLACE)
/// where the kernel and file system have it; elsewhere a folder claims the name with mkdir() and
/// replaces that empty folder with rename(), a file with link() and unlink().
int rename_no_replace(const std::filesystem::path& from, const std::filesystem::path& to, bool is_folder) {
#if defined(__linux__) && defined(RENAME_NOREPLACE)
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return -1;
#endif
  if (is_folder) {
    if (::mkdir(to.c_str(), 0700) != 0) return -1;
    if (::rename(from.c_str(), to.c_str()) == 0) return 0;
    const int err = errno;
    ::rmdir(to.c_str());
    errno = err;
    return -1;
  }
  if (::link(from.c_str(), to.c_str()) != 0) return -1;
  ::unlink(from.c_str());
  return 0;
}

/// Writes and fsyncs a new file `tmp`: `content`, or what `writer` (when given) writes to it.
int write_synced(const std::filesystem::path& tmp, const std::string& content,
                 const std::function<int(int fd)>* writer = nullptr) {
  // POSIX I/O so that every failure is seen (an ofstream can report success for a write that the
  // close then fails on a full disk).
  Fd f(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (f.fd < 0) return errno;
  if (const int err = writer != nullptr && *writer ? (*writer)(f.fd) : write_all(f.fd, content.data(), content.size()); err != 0)
    return err;
  // The data reaches the disk before the rename makes it visible (EINVAL/EROFS: nothing to sync).
  if (::fsync(f.fd) != 0 && errno != EINVAL && errno != EROFS) return errno;
  if (::close(f.release()) != 0) return errno;
  return 0;
}

std::string temp_name(const std::filesystem::path& path) {
  return path.string() + fmt::format(".tmp{}", static_cast<long>(::getpid()));
}

/// The pid in `text` at `pos` (digits up to the end or a '-'), or 0.
long pid_at(const std::string& text, std::size_t pos) {
  long pid = 0;
  const char* begin = text.data() + pos;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, pid);
  if (ec != std::errc() || ptr == begin || (ptr != end && *ptr != '-')) return 0;
  return pid;
}

bool process_gone(long pid) { return pid > 0 && pid != static_cast<long>(::getpid()) && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

[[noreturn]] void lost_race(const std::filesystem::path& folder, const std::string& key) {
  throw UserError({folder.string(), 0, 0}, key, "the folder already holds a result (another run wrote it first)",
                  "runs never overwrite each other: choose another --out or leave it out for a new timestamped folder");
}

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

InputLimit text_input_limit() {
  const std::size_t limit = max_input_bytes();
  return {limit, fmt::format("inputs are limited to {}; set NPUMAP_MAX_INPUT_MIB to raise the limit", mib_text(limit))};
}

InputLimit result_document_limit() {
  const std::size_t limit = std::max(kMaxResultDocumentBytes, max_input_bytes());
  return {limit, fmt::format("a result document is limited to {} (no run writes a larger one); is this a result.json?",
                             mib_text(limit))};
}

bool is_stdin_path(const std::string& path) {
  return path == "-" || path == "/dev/stdin" || path == "/dev/fd/0" || path == "/proc/self/fd/0";
}

std::string input_display_name(const std::string& path) { return path == "-" ? std::string("<stdin>") : path; }

namespace {

/// The kind of a file that is not a regular file, FIFO or pipe (and not a folder), for the refusal.
std::string special_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Refuses what read_input() does not read: folders, devices, sockets (except a socket on standard
/// input, which reads as a pipe does), a terminal on standard input.
void check_input_kind(const std::string& name, const struct stat& st, bool from_stdin) {
  if (S_ISDIR(st.st_mode)) throw UserError({name, 0, 0}, "", "is a folder, not a file", "give a file");
  if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || (from_stdin && S_ISSOCK(st.st_mode))) return;
  if (from_stdin && S_ISCHR(st.st_mode)) {
    throw UserError({name, 0, 0}, "", "standard input is a terminal or device, not a file or pipe",
                    "pipe the input in (`cat model.tflite | mapper --workload -`) or give its path");
  }
  throw UserError({name, 0, 0}, "", fmt::format("is {}, not a file or pipe", special_kind(st.st_mode)),
                  "give a regular file, a FIFO or `-` for standard input");
}

/// Opens `path` ("-": a duplicate of standard input) without blocking on a FIFO that has no writer.
int open_input(const std::string& path, const std::string& name) {
  const bool dash = path == "-";
  if (!dash) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) check_input_kind(name, st, is_stdin_path(path));
  }
  const int fd = dash ? ::fcntl(0, F_DUPFD_CLOEXEC, 3) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == EISDIR) throw UserError({name, 0, 0}, "", "is a folder, not a file", "give a file");
    if (err == ENXIO) throw UserError({name, 0, 0}, "", "is a socket, not a file or pipe", "give a regular file, a FIFO or `-`");
    if (dash) throw UserError({name, 0, 0}, "", fmt::format("cannot read standard input: {}", std::strerror(err)), "pipe the input in");
    throw UserError({name, 0, 0}, "", fmt::format("cannot open the file: {}", std::strerror(err)), "check the path");
  }
  if (dash) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

/// Waits up to 100 ms for `fd` to be readable; poll()'s revents, 0 on a timeout or a signal.
short wait_readable(int fd) {
  struct pollfd p {};
  p.fd = fd;
  p.events = POLLIN;
  return ::poll(&p, 1, 100) > 0 ? p.revents : 0;
}

}  // namespace

std::string read_input(const std::string& path, const std::function<InputLimit(std::string_view)>& limit_for,
                       const StopToken& stop, const std::string& phase) {
  const std::string name = input_display_name(path);
  Fd f(open_input(path, name));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw UserError({name, 0, 0}, "", "cannot read the file", "check the path");
  check_input_kind(name, st, is_stdin_path(path));
  const bool regular = S_ISREG(st.st_mode);
  std::optional<InputLimit> limit;
  std::string out;
  const auto set_limit = [&] {
    limit = limit_for(std::string_view(out).substr(0, 8));
    const auto too_large = [&](const std::string& what) { throw UserError({name, 0, 0}, "", what, limit->hint); };
    if (regular && static_cast<std::size_t>(st.st_size) > limit->bytes) {
      const auto size = static_cast<std::size_t>(st.st_size);
      too_large(size < (std::size_t{1} << 20) ? fmt::format("the file is too large ({} bytes)", size)
                                              : fmt::format("the file is too large ({:.1f} MiB)", static_cast<double>(size) / (1 << 20)));
    }
    if (out.size() > limit->bytes) too_large(fmt::format("the input is larger than {}", mib_text(limit->bytes)));
    if (regular) out.reserve(static_cast<std::size_t>(st.st_size) + 1);
  };
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  // `stop` is polled only while waiting for a pipe or FIFO: a file at hand is read whole (the loader
  // then stops at its own checks, and a small workload still gives a partial result).
  const auto wait = [&] {
    if (stop.stop_requested()) throw Interrupted(phase);
    const short revents = wait_readable(f.fd);
    if (stop.stop_requested()) throw Interrupted(phase);
    return revents;
  };
  for (;;) {
    const std::size_t old = out.size();
    out.resize(old + kChunk);
    const ssize_t n = ::read(f.fd, out.data() + old, kChunk);
    const int err = errno;
    out.resize(old + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0) {
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        wait();  // a pipe or FIFO without data: wait in 100 ms steps, polling `stop`
        continue;
      }
      throw UserError({name, 0, 0}, "", fmt::format("cannot read the file: {}", std::strerror(err)), "check the path");
    }
    // End of the input, except on a FIFO whose writer has not opened it yet (read() says 0 there too):
    // wait for poll() to report data (read it) or a hang-up (Linux reports POLLHUP on a FIFO only
    // after a writer came and went).
    if (n == 0 && !regular && old == 0) {
      const short revents = wait();
      if (revents == 0 || (revents & POLLIN) != 0) continue;
    }
    if (!limit && (out.size() >= 8 || n == 0)) set_limit();
    if (limit && out.size() > limit->bytes) {
      throw UserError({name, 0, 0}, "", fmt::format("the input is larger than {}", mib_text(limit->bytes)), limit->hint);
    }
    if (n == 0) break;
  }
  return out;
}

std::string read_input_file(const std::string& path) {
  return read_input(path, [](std::string_view) { return text_input_limit(); });
}

std::string read_result_or_text_file(const std::string& path) {
  return read_input(path, [](std::string_view head) {
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && head[first] == '{' ? result_document_limit() : text_input_limit();
  });
}

std::string errno_hint(int err) {
  switch (err) {
    case ENOSPC: return "the file system is full: no free space or no free inodes";
#ifdef EDQUOT
    case EDQUOT: return "the disk quota (space or inodes) is used up";
#endif
    case EROFS: return "the file system is read-only";
    case EACCES:
    case EPERM: return "check the folder's permissions";
    case ENAMETOOLONG: return "use shorter names";
    case EMFILE:
    case ENFILE: return "too many open files";
    case EIO: return "an I/O error: check the disk";
    case EFBIG: return "the file is over a file size limit (ulimit -f) or the file system's largest file";
    default: return "check the path";
  }
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content, bool replace) {
  const std::filesystem::path tmp = temp_name(path);
  const auto fail = [&](int err, const std::string& what) {
    ::unlink(tmp.c_str());
    throw UserError({path.string(), 0, 0}, "", fmt::format("{}: {}", what, std::strerror(err)), errno_hint(err));
  };
  if (const int err = write_synced(tmp, content); err != 0) fail(err, "cannot write the output file");
  if (replace) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno, "cannot rename the temporary output");
  } else if (rename_no_replace(tmp, path, false) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    if (err == EEXIST) throw UserError({path.string(), 0, 0}, "", "the file already exists", "remove it first, or choose another name");
    throw UserError({path.string(), 0, 0}, "", fmt::format("cannot write the output file: {}", std::strerror(err)), errno_hint(err));
  }
  sync_folder(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

void remove_stale_temporaries(const std::filesystem::path& folder, const std::vector<std::string>& names) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) return;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    long pid = 0;
    for (const std::string prefix : {".npumap-out-", ".npumap-probe-"}) {
      if (name.rfind(prefix, 0) == 0) pid = pid_at(name, prefix.size());
    }
    for (const std::string& n : names) {
      if (name.size() > n.size() + 4 && name.compare(0, n.size() + 4, n + ".tmp") == 0) pid = pid_at(name, n.size() + 4);
    }
    if (process_gone(pid)) fs::remove_all(entry.path(), ec);
  }
}

std::filesystem::path without_trailing_slash(const std::filesystem::path& folder) {
  std::string s = folder.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return std::filesystem::path(s);
}

void check_output_folder_path(const std::filesystem::path& folder_in, const std::string& key) {
  const std::string shown = folder_in.string();
  const auto fail = [&](const std::string& message, const std::string& hint) {
    throw UserError({shown, 0, 0}, key, message, hint);
  };
  if (shown.empty()) fail("empty output folder name", "give a folder name");
  const std::filesystem::path folder = without_trailing_slash(folder_in);
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
    if (err != ENOENT) fail(fmt::format("cannot use the path: {}", std::strerror(err)), errno_hint(err));
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
    fail(fmt::format("cannot create output files in `{}`: {}", base, std::strerror(err)), errno_hint(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

int write_all(int fd, const char* data, std::size_t size) {
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

std::filesystem::path write_folder_atomic(const std::filesystem::path& folder_in, const std::vector<OutputFile>& files,
                                          const std::string& key, bool numbered) {
  namespace fs = std::filesystem;
  const fs::path folder = without_trailing_slash(folder_in);
  const auto fail = [&](int err, const std::string& what) {
    throw UserError({folder.string(), 0, 0}, key, fmt::format("{}: {}", what, std::strerror(err)), errno_hint(err));
  };
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  std::error_code ec;
  const bool holds_files = !numbered && fs::is_directory(folder, ec) && !fs::is_empty(folder, ec);
  if (holds_files) {
    // File by file into a folder that holds other files: every file under a temporary name first;
    // the first one (result.json) then claims the folder, never replacing one that is there.
    remove_stale_temporaries(folder, names);
    std::vector<fs::path> temps;
    const auto drop_temps = [&] {
      for (const fs::path& t : temps) ::unlink(t.c_str());
    };
    for (const auto& f : files) {
      temps.push_back(temp_name(folder / f.name));
      int err = 0;
      try {
        err = write_synced(temps.back(), f.content, &f.write);
      } catch (...) {  // a writer's own error (a result over its limit)
        drop_temps();
        throw;
      }
      if (err != 0) {
        drop_temps();
        fail(err, fmt::format("cannot write `{}`", f.name));
      }
    }
    for (std::size_t i = 0; i < files.size(); ++i) {
      const fs::path target = folder / files[i].name;
      const int rc = i == 0 ? rename_no_replace(temps[i], target, false) : ::rename(temps[i].c_str(), target.c_str());
      if (rc != 0) {
        const int err = errno;
        drop_temps();
        if (i == 0 && err == EEXIST) lost_race(folder, key);
        fail(err, fmt::format("cannot write `{}`", files[i].name));
      }
    }
    sync_folder(folder);
    return folder;
  }
  const fs::path parent = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) fail(ec.value(), "cannot create the output folder");
  remove_stale_temporaries(parent);
  // A private temporary folder: the pid and a counter make its name unique among live processes.
  fs::path tmp;
  for (int n = 0;; ++n) {
    tmp = parent / fmt::format(".npumap-out-{}-{}", static_cast<long>(::getpid()), n);
    if (::mkdir(tmp.c_str(), 0777) == 0) break;
    if (errno != EEXIST || n > 1000) fail(errno, "cannot create the output folder");
  }
  const auto drop_tmp = [&] {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
  };
  for (const auto& f : files) {
    int err = 0;
    try {
      err = write_synced(tmp / f.name, f.content, &f.write);
    } catch (...) {  // a writer's own error (a result over its limit)
      drop_tmp();
      throw;
    }
    if (err != 0) {
      drop_tmp();
      fail(err, fmt::format("cannot write `{}`", f.name));
    }
  }
  sync_folder(tmp);
  fs::path claimed = folder;
  for (int n = 1;; ++n) {
    claimed = n == 1 ? folder : fs::path(folder.string() + fmt::format("-{}", n));
    if (rename_no_replace(tmp, claimed, true) == 0) break;
    int err = errno;
    if (err == EEXIST && !numbered) {
      // An empty folder made by hand is replaced (rename() replaces an empty folder, never one that
      // holds files): of two runs racing for it, one gets it and the other ENOTEMPTY.
      if (::rename(tmp.c_str(), claimed.c_str()) == 0) break;
      err = errno;
      drop_tmp();
      if (err == ENOTEMPTY || err == EEXIST) lost_race(folder, key);
      fail(err, "cannot create the output folder");
    }
    if ((err == EEXIST || err == ENOTEMPTY) && numbered && n < 100000) continue;
    drop_tmp();
    fail(err, "cannot create the output folder");
  }
  sync_folder(parent);
  return claimed;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

FolderLock lock_folder(const std::filesystem::path& folder, const std::string& key, const std::string& message,
                       const std::string& hint) {
  Fd d(::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.fd < 0) {
    const int err = errno;
    throw UserError({folder.string(), 0, 0}, key, fmt::format("cannot open the folder: {}", std::strerror(err)), errno_hint(err));
  }
  if (::flock(d.fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw UserError({folder.string(), 0, 0}, key, message, hint);
    return FolderLock();  // no locks on this file system (ENOLCK, EINVAL): go on without
  }
  return FolderLock(d.release());
}

}  // namespace npumap::common
