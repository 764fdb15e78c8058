#include "workloads/zoo.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::workloads {

namespace fs = std::filesystem;

fs::path zoo_folder() { return fs::path(NPUMAP_SOURCE_DIR) / "workloads"; }

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(zoo_folder(), ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool is_zoo_name(const std::string& text) {
  return !text.empty() && text.find('/') == std::string::npos && !fs::path(text).has_extension();
}

std::string zoo_file(const std::string& name, const std::string& key) {
  const fs::path file = zoo_folder() / (name + ".yaml");
  // The error_code form: a name the OS refuses (over 255 bytes: ENAMETOOLONG) is an unknown name,
  // not a filesystem_error (found by fuzz_sweep_spec).
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) return file.string();
  const std::vector<std::string> names = zoo_names();
  const std::string near = common::closest_match(name, names);
  const std::string all = fmt::format("{}", fmt::join(names, ", "));
  throw common::UserError({}, key, fmt::format("unknown zoo workload `{}`", name),
                          near.empty() ? "zoo workloads: " + all + "; or give a path to a .yaml file"
                                       : "did you mean `" + near + "`? zoo workloads: " + all);
}

}  // namespace npumap::workloads
