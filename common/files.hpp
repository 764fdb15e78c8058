#pragma once
// Reading input files and writing output files, one way for every input and output of the tool.
//
// Inputs: read_input() reads every input exactly once, from a regular file, a pipe or FIFO, or
// standard input ("-", /dev/stdin); it refuses folders, devices (/dev/zero) and sockets before
// reading, and anything over the input's size limit while reading (a regular file before reading,
// from its size), so no input makes the tool allocate more than its limit. A pipe or FIFO is polled
// every 100 ms, so --time-limit and Ctrl-C stop a wait for a writer. The limit depends on the kind of
// input (read from its first bytes): 16 MiB for text inputs, overridable with the environment
// variable NPUMAP_MAX_INPUT_MIB, 512 MiB for .tflite models, and 512 MiB for result documents (a
// result.json given to `mapper show` or `mapper eval`; the run refuses to write a larger one), see
// docs/user-guide.md, "Input limits".
//
// Outputs: nothing is ever half-written, and nothing another process wrote is overwritten: files
// are written under a temporary name, flushed to the disk (fsync), renamed into place, and then the
// folder is flushed too. A new output folder is written as a whole into a private temporary folder
// and renamed to its name only if that name is still free (renameat2 RENAME_NOREPLACE, or mkdir() +
// rename() where the file system lacks it), so two runs racing for one folder end with one result
// and one one-line error, never with one overwriting the other.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/stop_token.hpp"

namespace npumap::common {

/// The default input size limit in bytes (16 MiB).
inline constexpr std::size_t kDefaultMaxInputBytes = std::size_t{16} << 20;

/// The input size limit: NPUMAP_MAX_INPUT_MIB MiB when set (a whole number from 1 to 1048576; any
/// other value is a UserError), else kDefaultMaxInputBytes.
std::size_t max_input_bytes();

/// The size limit of one kind of input and the hint printed when an input is over it.
struct InputLimit {
  std::size_t bytes = kDefaultMaxInputBytes;
  std::string hint;
};

/// The limit of text inputs: max_input_bytes() and the hint naming NPUMAP_MAX_INPUT_MIB.
InputLimit text_input_limit();

/// The size limit of a result document (result.json), read by `mapper show` and `mapper eval`: a
/// run never writes a larger one (report::write_outputs), so every result.json the tool writes is
/// read back. It is the .tflite limit: a refused input still peaks near 512 MiB.
inline constexpr std::size_t kMaxResultDocumentBytes = std::size_t{512} << 20;

/// The limit of result documents: the larger of kMaxResultDocumentBytes and the text limit.
InputLimit result_document_limit();

/// True for the names of standard input: "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0".
bool is_stdin_path(const std::string& path);

/// How errors name the input `path`: "<stdin>" for "-", else `path`.
std::string input_display_name(const std::string& path);

/// The bytes of the input `path` ("-": standard input), read once. `limit_for` gets the first bytes
/// (8, or fewer at the end of a shorter input) and returns the input's limit; anything larger is
/// refused while reading. A missing or unreadable file, a folder, a device, a socket, or a terminal
/// on standard input throws UserError naming it (one line). `stop` is polled every 100 ms while a
/// pipe or FIFO has no data; when it asks to stop, Interrupted(phase) is thrown.
std::string read_input(const std::string& path, const std::function<InputLimit(std::string_view)>& limit_for,
                       const StopToken& stop = StopToken(), const std::string& phase = "reading the input");

/// read_input() with the text input limit: every YAML, JSON and INI input.
std::string read_input_file(const std::string& path);

/// read_input() of an input that may be a result document (`mapper show`, `mapper eval`): one whose
/// first non-blank byte is `{` (a JSON object) gets result_document_limit(), anything else (a list
/// of passes) the text input limit.
std::string read_result_or_text_file(const std::string& path);

/// The hint for a failed create or write: a full file system (no free space or no free inodes), a
/// used-up quota, a read-only file system, missing permissions, ...
std::string errno_hint(int err);

/// Writes `content` to `path` through a temporary file `<path>.tmp<pid>` in the same folder
/// (fsync'ed), a rename and an fsync of the folder; on failure the temporary file is removed and a
/// UserError names the path. With `replace` false an existing `path` is never replaced: the
/// UserError says it already exists (also when another process created it while this one wrote).
void write_file_atomic(const std::filesystem::path& path, const std::string& content, bool replace = true);

/// Removes what killed processes of this tool left in `folder`: temporary output folders
/// (`.npumap-out-<pid>-<n>`), probe files (`.npumap-probe-<pid>`) and `<name>.tmp<pid>` files of the
/// given names, each only when the process <pid> no longer exists. Errors are ignored.
void remove_stale_temporaries(const std::filesystem::path& folder, const std::vector<std::string>& names = {});

/// `folder` without trailing slashes ("out/" -> "out"; "/" stays).
std::filesystem::path without_trailing_slash(const std::filesystem::path& folder);

/// Checks, before any work is done, that the output folder `folder` can be created, or written if
/// it exists: every name on the path fits the file system, no symlink loop or file is in the way,
/// and the folder (or its nearest existing parent) is writable (a probe file is created and removed).
/// A trailing slash is allowed. Throws UserError naming the folder and `key` (e.g. "--out") otherwise.
void check_output_folder_path(const std::filesystem::path& folder, const std::string& key);

/// Writes a whole output folder and returns its name (so a killed run leaves all files or none).
///   - `folder` does not exist or is an empty folder: the files go into a private temporary folder
///     next to it (`.npumap-out-<pid>-<n>`), which is renamed to `folder` only if that is still free
///     (or still empty). With `numbered`, a taken name is not an error: folder-2, folder-3, ... are
///     tried in turn (the default `runs/<timestamp>` folders of concurrent runs).
///   - `folder` exists and holds other files: every file is written under a temporary name first;
///     the first file (result.json) then claims the folder and never replaces an existing one.
/// A name another process took first is a UserError (`key`: the folder already holds a result). On
/// any failure (or an exception from a file's writer) the temporaries are removed.
struct OutputFile {
  std::string name;
  std::string content;  ///< the file's bytes, unless `write` is set
  /// When set, writes the file's bytes to the open file `fd` instead (a large file is then never
  /// held whole in memory) and returns 0 or an errno (write_all's); it may throw.
  std::function<int(int fd)> write;
};
std::filesystem::path write_folder_atomic(const std::filesystem::path& folder, const std::vector<OutputFile>& files,
                                          const std::string& key, bool numbered = false);

/// Writes all `size` bytes to `fd` (retrying on EINTR); 0, or the errno (ENOSPC when nothing moves).
int write_all(int fd, const char* data, std::size_t size);

/// An exclusive lock on a folder for as long as the object lives: flock() on the folder itself, so
/// nothing is left behind by a killed process (the kernel drops the lock with the process).
class FolderLock {
 public:
  FolderLock() = default;
  explicit FolderLock(int fd) : fd_(fd) {}
  FolderLock(FolderLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FolderLock& operator=(FolderLock&&) = delete;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

 private:
  int fd_ = -1;
};

/// Locks `folder` (which exists) against other processes of this tool; a folder another process has
/// locked is a UserError (`key`, `message`, `hint`). Where the file system has no locks, no lock.
FolderLock lock_folder(const std::filesystem::path& folder, const std::string& key, const std::string& message,
                       const std::string& hint);

}  // namespace npumap::common
