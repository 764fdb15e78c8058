#pragma once
// Reports rendered from the result document (result.json): text, CSV and an SVG plot of the front,
// and the atomic writing of an output folder. `mapper show` uses the same functions.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace npumap::report {

/// The human report: workload, arch, options, per-layer table of the chosen point, totals, the front,
/// keep rates, and the gain over the best mapping without fusion.
std::string render_text(const nlohmann::ordered_json& result);
/// front.csv: one line per front point.
std::string render_csv(const nlohmann::ordered_json& result);
/// front.svg: cycles vs off-chip bytes, SRAM as colour, chosen and no-fusion points marked.
std::string render_svg(const nlohmann::ordered_json& result);

/// Throws common::UserError if `folder` already holds a result (runs never overwrite each other).
void check_output_folder(const std::filesystem::path& folder);
/// Creates `folder` and writes result.json, front.csv and front.svg into it.
void write_outputs(const std::filesystem::path& folder, const nlohmann::ordered_json& result);

}  // namespace npumap::report
