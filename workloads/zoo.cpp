#include "workloads/zoo.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/data_dir.hpp"
#include "common/user_error.hpp"

namespace npumap::workloads {

namespace fs = std::filesystem;

namespace {

/// The stems of the files with extension `ext` in `dir`, sorted.
std::vector<std::string> stems(const fs::path& dir, const char* ext) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ext && it->is_regular_file(ec)) names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

fs::path zoo_folder() { return common::data_dir() / "workloads"; }

std::vector<std::string> zoo_names() {
  std::vector<std::string> names = stems(zoo_folder(), ".yaml");
  for (std::string& m : stems(zoo_folder() / "models", ".tflite")) names.push_back(std::move(m));
  return names;
}

bool is_zoo_name(const std::string& text) {
  return !text.empty() && text != "-" && text.find('/') == std::string::npos && !fs::path(text).has_extension();
}

std::string zoo_file(const std::string& name, const std::string& key) {
  // The error_code form: a name the OS refuses (over 255 bytes: ENAMETOOLONG) is an unknown name,
  // not a filesystem_error (found by fuzz_sweep_spec).
  std::error_code ec;
  for (const fs::path& file : {zoo_folder() / (name + ".yaml"), zoo_folder() / "models" / (name + ".tflite")}) {
    if (fs::is_regular_file(file, ec)) return file.string();
  }
  const std::vector<std::string> names = zoo_names();
  if (names.empty()) {
    throw common::UserError({zoo_folder().string(), 0, 0}, key, fmt::format("unknown zoo workload `{}`: the zoo is empty", name),
                            fmt::format("mapper reads its zoo from {} (found from {}); give a path to a workload file, "
                                        "reinstall, or point NPUMAP_DATA_DIR at a folder with workloads/ and presets/",
                                        zoo_folder().string(), common::data_dir_origin()));
  }
  const std::string near = common::closest_match(name, names);
  // The list names the YAML workloads; the models are many (`mapper list workloads` shows all).
  std::vector<std::string> yaml = stems(zoo_folder(), ".yaml");
  const std::string all = fmt::format("{}, and {} real models (mapper list workloads)", fmt::join(yaml, ", "),
                                      names.size() - yaml.size());
  throw common::UserError({}, key, fmt::format("unknown zoo workload `{}`", name),
                          near.empty() ? "zoo workloads: " + all + "; or give a path to a .yaml or .tflite file"
                                       : "did you mean `" + near + "`? zoo workloads: " + all);
}

}  // namespace npumap::workloads
