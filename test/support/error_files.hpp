#pragma once
// The must-fail inputs of test/errors/: each file's first line is `# expect: <message text>`.
// Shared by the arch and workload loader tests (the CLI tests read the same files).

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace npumap::testing {

/// test/errors/<prefix>*.yaml, sorted (tests run from the project root).
inline std::vector<std::string> error_files(const std::string& prefix) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator("test/errors")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".yaml") files.push_back("test/errors/" + name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The text after `# expect: ` on a file's first line, or empty if the line is missing.
inline std::string expected_message(const std::string& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  const std::string prefix = "# expect: ";
  if (first.rfind(prefix, 0) != 0) return {};
  return first.substr(prefix.size());
}

}  // namespace npumap::testing
