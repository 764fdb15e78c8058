#pragma once
// The workload zoo: the networks that ship with mapper, named by file stem. They are the workload
// YAML files of workloads/ ("resnet18") and the real int8 TFLite models of workloads/models/
// ("tflm__person_detect") in the data folder (common/data_dir.hpp: the source tree when run from
// the build tree, <prefix>/share/npu-mapper when installed). `mapper --workload` and sweep specs
// accept these names as well as paths.

#include <filesystem>
#include <string>
#include <vector>

namespace npumap::workloads {

/// The zoo's folder (workloads/ of the data folder).
std::filesystem::path zoo_folder();
/// The zoo's names, sorted: the workload YAML files, then the models.
std::vector<std::string> zoo_names();
/// True if `text` is written as a name (no folder, no extension), not as a path.
bool is_zoo_name(const std::string& text);
/// The file of a zoo name (workloads/NAME.yaml, else workloads/models/NAME.tflite); throws UserError
/// (key `key`, with a did-you-mean hint) if there is none.
std::string zoo_file(const std::string& name, const std::string& key);

}  // namespace npumap::workloads
