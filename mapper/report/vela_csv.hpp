#pragma once
// Vela's CSV files for the chosen point of a result document, so scripts written for Vela (and Arm's
// ML Inference Advisor) read npu-mapper's results unchanged:
//   <net>_summary_<system config>.csv   Vela 2.1's summary (stats_writer.write_summary_metrics_csv):
//                                       53 columns, one row
//   <net>_per-layer.csv                 Vela's --verbose-performance table (the 15-column form of
//                                       Vela 3): one row per NPU layer
// The column lists are Vela's exactly (vela_summary_columns(), vela_per_layer_columns()); values are
// written as Python's csv module writes Vela's (floats as repr(): 500000000.0, 1e-05).
// docs/user-guide.md "Vela's CSV files" says how each column is filled from the model, and what is
// written where Vela's quantity has no counterpart here.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace npumap::report {

/// The header of Vela 2.1's summary CSV, in order.
const std::vector<std::string>& vela_summary_columns();
/// The header of Vela's per-layer CSV (--verbose-performance), in order; "Network%" appears twice.
const std::vector<std::string>& vela_per_layer_columns();

/// The summary CSV of the result's chosen point (header only without one).
std::string render_vela_summary_csv(const nlohmann::ordered_json& result);
/// The per-layer CSV of the result's chosen point (header only without one).
std::string render_vela_per_layer_csv(const nlohmann::ordered_json& result);

/// Both files, named as Vela names them: {"<net>_summary_<sys>.csv", text}, {"<net>_per-layer.csv",
/// text}; none when the result has no chosen point. <net> is the workload's name, <sys> the system
/// config's, with any `/` replaced by `_`.
std::vector<std::pair<std::string, std::string>> render_vela_csvs(const nlohmann::ordered_json& result);

/// A double as Python's repr() writes it: shortest round-trip digits, fixed notation for exponents
/// -4..15 with at least one decimal ("500000000.0"), else d.ddde+XX ("1e-05", "1.5e+16"); nan, inf.
std::string python_float(double v);

}  // namespace npumap::report
