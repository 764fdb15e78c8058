#pragma once
// The one source of truth for the options of a mapping run: defaults and documentation live here.
// The CLI (cli.cpp) binds flags to these fields; reports write the effective values into result.json.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npumap::mapper {

/// An objective of the final Pareto front (all minimised).
enum class Objective : std::uint8_t {
  Cycles,        ///< total NPU cycles of the network (sum over layers of each pass's Total)
  OffchipBytes,  ///< bytes read and written in DRAM and flash (unscaled)
  Sram,          ///< peak SRAM bytes reserved over the execution
  Energy,        ///< pJ, from the arch's energy table
};

/// Stable names used on the command line and in outputs: cycles, offchip_bytes, sram, energy.
const char* objective_name(Objective o);
/// All objectives in their canonical order.
std::vector<Objective> all_objectives();
/// Parses a comma-separated list such as "cycles,offchip_bytes"; throws UserError on unknown names.
std::vector<Objective> parse_objectives(const std::string& text);

/// Output format of the report printed on stdout.
enum class Format : std::uint8_t { Text, Json, Csv };

/// Everything a mapping run depends on.
struct RunOptions {
  std::string workload;                    ///< workload YAML path (required)
  std::string arch = "ethos-u55-256";      ///< preset name or arch YAML path
  bool keep_pareto = false;                ///< keep and write the whole front (else report the best point)
  /// Objectives of the final front. The default, cycles and off-chip bytes, keeps the join exact and
  /// fast; SRAM and energy are still reported for every point, and can be added as objectives.
  std::vector<Objective> objectives = {Objective::Cycles, Objective::OffchipBytes};
  /// Relative tolerance of the join's Pareto pruning (0 = exact); see JoinProblem::tolerance.
  double tolerance = 0.0;
  int threads = 0;                         ///< worker threads; set by the CLI to the core count by default
  std::uint64_t seed = 1;                  ///< recorded in provenance; the search is exhaustive, nothing is sampled
  std::optional<double> time_limit_s;      ///< stop at chunk boundaries after this many seconds
  std::string out_dir;                     ///< output folder; empty = a new timestamped folder under runs/
  Format format = Format::Text;            ///< report format on stdout
  bool no_fusion = false;                  ///< forbid layer fusion (rolling buffers)
  bool per_layer = false;                  ///< stop after the per-layer stage and report it
  int verbosity = 0;                       ///< -1 quiet, 0 normal, 1 verbose (-v), 2 per join step (-vv)
};

}  // namespace npumap::mapper
