#pragma once
// Reading an arch: a preset name (arch/presets/<name>.yaml) or a YAML file in the format of
// docs/arch-format.md. Every problem with the input is a common::UserError located at file:line:col.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch.hpp"
#include "common/yaml_reader.hpp"

namespace npumap::arch {

/// The presets directory: presets/ of the data folder (common/data_dir.hpp), which is the source
/// tree's arch/presets when run from the build tree.
std::string default_presets_dir();

/// Names of the presets in `presets_dir` (file stems of its *.yaml files), sorted.
std::vector<std::string> preset_names(const std::string& presets_dir);
/// Names of the presets in the default presets directory, sorted.
std::vector<std::string> preset_names();

/// Load a preset by name, or else an arch YAML file by path, using the default presets directory.
Arch load_arch(const std::string& spec);
/// As load_arch(spec), resolving preset names (and `preset:` keys) in `presets_dir`.
Arch load_arch(const std::string& spec, const std::string& presets_dir);

class VelaConfig;

/// An arch as a mapping run asks for it: a preset or arch file (or the accelerator alone), with
/// Vela's command-line options applied last (`--system-config`, `--memory-mode`, `--arena-cache-size`)
/// and the sections of Vela's `--config` files available by name.
struct ArchRequest {
  std::string spec;          ///< preset name or arch file; empty: `accelerator` alone, as Vela builds it
  std::string accelerator;   ///< with an empty spec: the accelerator config (Vela's --accelerator-config)
  std::string system_config;  ///< overrides every file's `system_config`; empty: keep
  std::string memory_mode;    ///< overrides every file's `memory_mode`; empty: keep
  /// The arena's SRAM, or the cache's when the memory mode spills (Vela's --arena-cache-size): sets
  /// the cache size and the SRAM the mapper may reserve, over every file.
  std::optional<std::int64_t> arena_cache_size;
  const VelaConfig* vela = nullptr;  ///< sections the names may refer to; null: the built-ins only
  /// How errors name the overrides (and a system config or memory mode that no file states).
  std::string system_config_key = "system_config";
  std::string memory_mode_key = "memory_mode";
  std::string arena_cache_size_key = "arena_cache_size";
  std::string accelerator_key = "accelerator";
};

/// Load the arch of `request`. Keys of the selected --config sections that the model does not use
/// are appended to `notes` (may be null).
Arch load_arch(const ArchRequest& request, const std::string& presets_dir, std::vector<std::string>* notes = nullptr);

/// Parse arch YAML held in memory; `file` names it in error messages.
Arch load_arch_string(const std::string& text, const std::string& file, const std::string& presets_dir);

/// An arch built from `base` (a preset name or an arch file) with `overrides` applied last: a map of
/// arch-file keys whose nodes may come from another file (a sweep spec), so every error points there.
/// `name` names the result in reports.
Arch load_arch_with_overrides(const std::string& base, const common::YamlNode& overrides, const std::string& name,
                              const std::string& presets_dir);

/// A base arch (a preset name or an arch file) read once, then built with many sets of overrides
/// (a sweep's points): build(o, n) is load_arch_with_overrides(base, o, n, presets_dir) without
/// reading or parsing the base again.
class ArchBase {
 public:
  ArchBase(const std::string& base, const std::string& presets_dir);
  Arch build(const common::YamlNode& overrides, const std::string& name) const;

 private:
  std::shared_ptr<const void> started_;  ///< the base's layers applied (null: its identity alone fails)
  std::string presets_dir_;
  std::vector<std::string> presets_;
  std::vector<common::YamlNode> layers_;  ///< the base's files, its own `preset:` chain first
  std::vector<std::string> base_chain_;   ///< the presets being read when the base was (a loop check)
};

/// How many arch files and presets this process has read and parsed (a sweep reads its base once,
/// however many points it has).
std::size_t arch_files_read();

/// Parse a byte size: an integer, or a number with a unit B, KiB, MiB or GiB ("512KiB", "1.5MiB").
/// Returns false when `text` is not such a size (the value may still be zero or negative).
bool parse_byte_size(const std::string& text, std::int64_t& bytes);

}  // namespace npumap::arch
