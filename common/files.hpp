#pragma once
// Reading input files and writing output files, one way for every input and output of the tool.
//
// Inputs: read_input_file() refuses a folder and anything over the input size limit before reading
// it (a device such as /dev/zero is read in bounded pieces and stopped at the limit), so no input can
// make the tool allocate more than the limit. The limit is 16 MiB, overridable with the environment
// variable NPUMAP_MAX_INPUT_MIB (docs/user-guide.md).
//
// Outputs: nothing is ever half-written: write a temporary file in the same folder, then rename it
// over the target (a rename within one file system is atomic); a failed write removes its temporary.

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace npumap::common {

/// The default input size limit in bytes (16 MiB).
inline constexpr std::size_t kDefaultMaxInputBytes = std::size_t{16} << 20;

/// The input size limit: NPUMAP_MAX_INPUT_MIB MiB when set (a whole number from 1 to 1048576; any
/// other value is a UserError), else kDefaultMaxInputBytes.
std::size_t max_input_bytes();

/// The bytes of an input file. A missing or unreadable file, a folder, or a file (or device, or pipe)
/// over max_input_bytes() throws UserError naming it, before more than the limit is read.
std::string read_input_file(const std::string& path);

/// Writes `content` to `path` through a temporary file in the same folder and a rename; on failure
/// the temporary file is removed and a UserError names the path.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

/// Checks, before any work is done, that the output folder `folder` can be created, or written if
/// it exists: every name on the path fits the file system, no symlink loop or file is in the way,
/// and the folder (or its nearest existing parent) is writable (a probe file is created and removed).
/// Throws UserError naming the folder and `key` (e.g. "--out") otherwise.
void check_output_folder_path(const std::filesystem::path& folder, const std::string& key);

/// Writes a whole output folder in one step: the files go into a temporary folder next to it, which
/// is then renamed to `folder` (so a killed run leaves either all files or none). When `folder`
/// already exists and holds files, each file is written atomically instead, in the given order. On
/// any failure the temporaries are removed and a UserError names the path.
void write_folder_atomic(const std::filesystem::path& folder,
                         const std::vector<std::pair<std::string, std::string>>& files, const std::string& key);

}  // namespace npumap::common
