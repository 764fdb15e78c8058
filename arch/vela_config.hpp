#pragma once
// Vela's system configs and memory modes: the `[System_Config.<Name>]` and `[Memory_Mode.<Name>]`
// sections of vela.ini files (`--config`), on top of the built-in ones, which are the sections Arm
// ships with Vela (docs/arch-format.md "Vela's vela.ini").
//
// A name resolves from the --config files first (a section several files define is merged, later
// files winning key by key, as configparser's read() does), then from the built-ins; `internal-default`
// is Vela's default for the accelerator unless a file defines a section of that name. Within a
// section, a key is looked up as Vela's _read_config does: the section's `inherit` chain first (a
// parent's value), then the section itself (its own value, or the file's [DEFAULT]).
//
// Every section of every --config file is checked when the files are read, whether or not it is
// selected: each key must be one Vela reads in that kind of section (Vela 2.1 and Vela 3 to 5, keys
// compared without regard to case as configparser does), each value must parse as Vela parses it
// (float(), int(), MemArea[...], MemPort[...]), and `inherit` must name a section without a loop.
// Keys of the selected sections that the model does not use (the Ethos-U85 keys `<Mem>_ports_used`,
// `<Mem>_max_reads`, `<Mem>_max_writes`; the timing of a memory no AXI port names; Vela 2.1's
// `cache_sram_size` where nothing spills) are accepted and reported as notes (`mapper -v`).

#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.hpp"
#include "arch/vela_ini.hpp"

namespace npumap::arch {

class VelaConfig {
 public:
  /// The built-in sections only.
  VelaConfig();
  /// The built-in sections, then `files` in order (Vela's repeated --config). Throws
  /// common::UserError at file:line for anything a file gets wrong.
  explicit VelaConfig(const std::vector<std::string>& files);
  /// As above from texts in memory: (text, name used in messages) pairs.
  static VelaConfig from_texts(const std::vector<std::pair<std::string, std::string>>& texts);

  /// The --config files read, in order.
  const std::vector<std::string>& files() const { return files_; }

  /// `internal-default`, then the files' sections in order of first appearance, then the built-ins
  /// that no file redefines.
  std::vector<std::string> system_config_names() const;
  std::vector<std::string> memory_mode_names() const;
  bool has_system_config(std::string_view name) const;
  bool has_memory_mode(std::string_view name) const;

  /// The system config `name` for `accel` (internal-default depends on it). An unknown name throws
  /// common::UserError with key `system_config` and the names as hint (callers relocate it). Each key
  /// of a --config file that the selected sections hold but the model does not use is appended to
  /// `notes` (may be null), once.
  SystemConfig system_config(std::string_view name, const AcceleratorConfig& accel,
                             std::vector<std::string>* notes = nullptr) const;
  MemoryMode memory_mode(std::string_view name, const AcceleratorConfig& accel, std::vector<std::string>* notes = nullptr) const;

  /// arch::make_arch() of the named sections; an impossible combination's hint lists the system
  /// configs or memory modes that would work with the others.
  Arch make_arch(const AcceleratorConfig& accel, std::string_view system_config, std::string_view memory_mode,
                 const NameSources& sources = {}, std::vector<std::string>* notes = nullptr) const;

  /// The built-in sections (no --config file), shared.
  static const VelaConfig& builtin();

  /// Where a section's data lives: the merged sections of the files, or the built-ins.
  struct Store {
    std::vector<IniSection> sections;               ///< merged across files, in order of first appearance
    std::vector<std::vector<std::string>> option_file;  ///< per section, per option: its file
    std::vector<std::string> section_file;          ///< per section: the file of its first header
    IniSection defaults;                            ///< [DEFAULT], merged
    std::vector<std::string> defaults_file;
  };

 private:
  void add(const IniFile& file);
  void check() const;

  std::vector<std::string> files_;
  Store user_;
};

/// The built-in sections as vela.ini text, with comments: the system configs, or the memory modes.
/// `mapper list system-configs` / `memory-modes` print these; `--config` reads them back as the same
/// sections. Together they are the one source of the built-in tables.
const std::string& builtin_system_configs_ini();
const std::string& builtin_memory_modes_ini();

}  // namespace npumap::arch
