#pragma once
// Reading and checking a workload YAML file (docs/workload-format.md). Every problem in the file
// becomes one npumap::common::UserError naming file:line:col, the key path and a hint; a Workload that
// comes back has consistent shapes, exactly one producer per produced tensor, no cycle, and MAC and
// byte counts that fit in 64 bits.

#include <cstdint>
#include <string>

#include "common/stop_token.hpp"
#include "common/yaml_reader.hpp"
#include "workloads/workload.hpp"

namespace npumap::workloads {

/// Compressed / raw weight bytes when neither the layer nor the network says otherwise: Vela's
/// placeholder estimate before real weight encoding (docs/design/npu-model.md §4.2).
inline constexpr double kDefaultWeightCompression = 0.625;
/// The largest accepted size, stride, dilation, padding or rank size: downstream block and kernel
/// arithmetic uses 32-bit integers.
inline constexpr std::int64_t kMaxDimension = 2147483647;

/// Loads and checks a workload file.
Workload load_workload(const std::string& path);
/// As load_workload(path), polling `stop` (--time-limit, Ctrl-C) every 256 layers while reading
/// them; throws common::Interrupted when it asks to stop.
Workload load_workload(const std::string& path, const common::StopToken& stop);
/// Loads and checks workload text; `file_name` is used in error messages and as source_file.
Workload load_workload_from_string(const std::string& text, const std::string& file_name);
/// As load_workload_from_string, polling `stop` as load_workload(path, stop) does.
Workload load_workload_from_string(const std::string& text, const std::string& file_name, const common::StopToken& stop);
/// Loads and checks an already parsed document.
Workload load_workload(const common::YamlNode& root);

}  // namespace npumap::workloads
