#pragma once
// Objectives of a search and the named value columns that the per-layer stage and the join compare.
// Adding an objective touches this file (its name and column) and the rows' value() accessors.

#include <cstdint>
#include <string>
#include <vector>

namespace npumap::search {

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
/// The objectives of a search when none are given: cycles and off-chip bytes (the exact front). The
/// sizing front (`--objectives cycles,offchip_bytes,sram --epsilon 0.01`) is opt-in until it meets its
/// speed targets on ethos-u65 presets. Energy is opt-in and reported for every point.
std::vector<Objective> default_objectives();
/// The ε of a search's front when none is given (JoinOptions::epsilon): 0, the exact front.
inline constexpr double kDefaultEpsilon = 0.0;
/// Parses a comma-separated list such as "cycles,offchip_bytes"; throws UserError on unknown names.
std::vector<Objective> parse_objectives(const std::string& text);

/// A value column of a pmapping row (per-layer stage) or of a partial mapping (join). The first four
/// are the objectives' columns, in Objective order.
enum class Column : std::uint8_t {
  Cycles,        ///< summed over layers
  OffchipBytes,  ///< summed over layers
  Sram,          ///< stage: the pass's own transient SRAM; join: the peak SRAM so far
  Energy,        ///< summed over layers
  CascadeSram,   ///< join only: SRAM held by the open cascade (rolling buffers and what they keep live)
};

/// The column of an objective.
constexpr Column column_of(Objective o) { return static_cast<Column>(o); }

/// Pareto columns of the per-layer stage: the chosen objectives a single pass contributes to, and
/// always the pass's own SRAM, which decides feasibility in the join.
std::vector<Column> stage_columns(const std::vector<Objective>& objectives);
/// Pareto columns of the join: the chosen objectives, and the open cascade's SRAM while one is open.
std::vector<Column> join_columns(const std::vector<Objective>& objectives, bool open_cascade);

}  // namespace npumap::search
