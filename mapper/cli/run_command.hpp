#pragma once
// `mapper --workload W ...`: load, search::map_network, result document, reports, output folder.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/stop_token.hpp"
#include "mapper/search/objectives.hpp"

namespace npumap::cli {

/// Output format of the report printed on stdout.
enum class Format : std::uint8_t { Text, Json, Csv };

/// Everything a mapping run depends on: the one source of truth for its options. The CLI binds flags
/// to these fields; the result document records the effective values.
struct RunOptions {
  std::string workload;                    ///< workload YAML or .tflite path, or a zoo name (required)
  bool vela_rewrites = true;               ///< .tflite: apply Vela's graph rewrites (--no-vela-rewrites: off)
  /// Preset name or arch YAML path; empty: the accelerator `accelerator_config` alone (Vela's way),
  /// which is the preset of that name except that the SRAM follows the memory mode.
  std::string arch;
  std::string accelerator_config = "ethos-u55-256";  ///< Vela's --accelerator-config (used when `arch` is empty)
  std::vector<std::string> config_files;    ///< Vela's --config files (vela.ini): sections the names below may name
  std::string system_config;                ///< overrides the arch's system config (Vela's names); empty: keep
  std::string memory_mode;                  ///< overrides the arch's memory mode (Vela's names); empty: keep
  std::optional<std::int64_t> arena_cache_size;  ///< Vela's --arena-cache-size (bytes): the arena or cache SRAM
  /// Vela's --optimise: "Performance" (least cycles) or "Size" (least SRAM) picks the chosen point of
  /// the front; empty: the best by the first objective.
  std::string optimise;
  bool allow_cpu_only = false;              ///< map a network no operator of which runs on the NPU (else exit 1)
  /// Optional file of per-layer weight compression ratios (workloads/weight_compression.hpp).
  std::string weight_compression_file;
  bool keep_pareto = false;                ///< keep and write the whole front (else report the best point)
  /// Objectives of the final front (search::default_objectives(): cycles, off-chip bytes and peak SRAM).
  std::vector<search::Objective> objectives = search::default_objectives();
  /// ε of the front (0 = the exact front); see search::JoinOptions::epsilon.
  double epsilon = search::kDefaultEpsilon;
  int threads = 1;                         ///< worker threads; the CLI defaults it to the core count
  std::uint64_t seed = 1;                  ///< recorded in provenance; the search is exhaustive, nothing is sampled
  std::optional<double> time_limit_s;      ///< stop at chunk boundaries after this many seconds
  std::string out_dir;                     ///< output folder; empty = a new timestamped folder under runs/
  Format format = Format::Text;            ///< report format on stdout
  bool no_fusion = false;                  ///< forbid layer fusion (rolling buffers)
  bool per_layer = false;                  ///< stop after the per-layer stage and report it
  bool baseline_only = false;              ///< find only Vela's schedule (no join of the whole mapspace)
  /// Vela's --block-config-limit for its schedule (0: every config); search::kVelaBlockConfigLimit.
  int block_config_limit = 16;
  int verbosity = 0;                       ///< -1 quiet, 0 normal, 1 verbose (-v), 2 per join step (-vv)
};

/// Runs `mapper --workload ...`; returns the exit status (0 ok, 1 no valid mapping, 130 interrupted).
/// `interrupt` is the process's Ctrl-C flag (may be null). Bad input throws UserError.
int run_mapping(const RunOptions& options, const std::atomic<bool>* interrupt, std::ostream& out);

}  // namespace npumap::cli
