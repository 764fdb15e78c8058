#pragma once
// The workload zoo: the networks shipped in the source tree's workloads/ folder, named by file stem
// ("resnet18"). `mapper --workload` and sweep specs accept these names as well as paths.

#include <filesystem>
#include <string>
#include <vector>

namespace npumap::workloads {

/// The zoo's folder.
std::filesystem::path zoo_folder();
/// The zoo's workload names, sorted.
std::vector<std::string> zoo_names();
/// True if `text` is written as a name (no folder, no extension), not as a path.
bool is_zoo_name(const std::string& text);
/// The file of a zoo name; throws UserError (key `key`, with a did-you-mean hint) if there is none.
std::string zoo_file(const std::string& name, const std::string& key);

}  // namespace npumap::workloads
