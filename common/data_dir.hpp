#pragma once
// Where the data that ships with `mapper` is found at run time: the workload zoo (workloads/, the
// real models in workloads/models/) and the arch presets (presets/). No path is compiled in: the
// folder is found relative to the running executable, as installed (`cmake --install`):
//
//   <prefix>/bin/mapper                    the executable
//   <prefix>/share/npu-mapper/workloads/   the zoo (*.yaml, models/*.tflite)
//   <prefix>/share/npu-mapper/presets/     arch presets (*.yaml)
//
// i.e. <folder of the executable>/NPUMAP_DATA_REL (the install's path from its bin folder to its data
// folder, "../share/npu-mapper" by default). The build tree has the same shape: every executable is
// one folder below build/<preset>/, and configuring creates build/<preset>/share/npu-mapper/ with
// links to the source tree's workloads/ and arch/presets/, so a binary run from the build tree
// reads the source tree's files. NPUMAP_DATA_DIR in the environment overrides the folder.

#include <filesystem>
#include <string>

namespace npumap::common {

/// The data folder (see above); the same for the whole process.
std::filesystem::path data_dir();
/// How data_dir() was found, for messages: "NPUMAP_DATA_DIR", or the unnormalised path
/// "<folder of the executable>/<NPUMAP_DATA_REL>".
std::string data_dir_origin();

}  // namespace npumap::common
