#pragma once
// Reports rendered from the result document (result.json): text, CSV and an SVG plot of the front,
// and the atomic writing of an output folder. `mapper show` uses the same functions.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npumap::report {

/// The layers of a front point, resolved: entry i is the mapping of the i-th layer in topological
/// order (a point lists indices into the result's `layer_mappings`; older results inline them).
std::vector<const nlohmann::ordered_json*> point_layers(const nlohmann::ordered_json& result,
                                                        const nlohmann::ordered_json& point);

/// The human report: workload, arch, options, per-layer table of the chosen point, totals, the front,
/// keep rates, and the gain over the best mapping without fusion.
std::string render_text(const nlohmann::ordered_json& result);
/// front.csv: one line per front point.
std::string render_csv(const nlohmann::ordered_json& result);
/// layers.csv of one front point (0 = the chosen one): per layer the cycles of each component and the
/// one that bounds it, MACs and utilisation, bytes per memory, block config, traversal, placements and
/// fusion. Only the header when the result has no such point.
std::string render_layers_csv(const nlohmann::ordered_json& result, std::size_t point);
/// The per-layer table, time and totals of one front point (`mapper show --point N`); empty if absent.
std::string render_point_text(const nlohmann::ordered_json& result, std::size_t point);
/// front.svg: cycles vs off-chip bytes, SRAM as colour, chosen and no-fusion points marked.
std::string render_svg(const nlohmann::ordered_json& result);

/// Throws common::UserError if `folder` already holds a result (runs never overwrite each other) or
/// could not be created or written (common::check_output_folder_path); called before the mapping runs.
void check_output_folder(const std::filesystem::path& folder);
/// The document as result.json text (indent 1); any invalid UTF-8 in a name (e.g. a path given on
/// the command line) is written as U+FFFD rather than failing the run.
std::string document_text(const nlohmann::ordered_json& result);
/// Writes result.json, front.csv, front.svg, layers.csv (of the chosen point) and, when there is a
/// chosen point, Vela's two CSV files (vela_csv.hpp) as one folder (common::write_folder_atomic).
void write_outputs(const std::filesystem::path& folder, const nlohmann::ordered_json& result);

}  // namespace npumap::report
