#pragma once
// Writing output files so that nothing is ever half-written: write a temporary file in the same
// folder, then rename it over the target (a rename within one file system is atomic).

#include <filesystem>
#include <string>

namespace npumap::common {

/// Writes `content` to `path` through a temporary file in the same folder and a rename; on failure
/// the temporary file is removed and a UserError names the path.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

}  // namespace npumap::common
