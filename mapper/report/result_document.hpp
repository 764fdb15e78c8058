#pragma once
// The result document (result.json) of a mapping run: provenance, the per-layer stage, keep rates,
// the join's steps, the front with every layer's pass, and the comparison without fusion. It is the
// single source of every report: render_text/csv/svg (report.hpp) and `mapper show` read only it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch.hpp"
#include "mapper/search/map_network.hpp"
#include "workloads/workload.hpp"

namespace npumap::report {

/// What the run was asked to do, recorded in the document's provenance.
struct RunProvenance {
  std::string workload_path;          ///< as given on the command line
  std::string workload_hash;          ///< fnv1a_hex of the bytes read (a pipe cannot be read again); empty: hash the file
  std::string arch_spec;              ///< preset name or arch file path
  std::string weight_compression_path;  ///< per-layer weight compression file, if one was given
  std::uint64_t seed = 1;
  int threads = 1;
  bool keep_pareto = false;           ///< every front point in the document (else only the best)
  bool per_layer = false;
  std::optional<double> time_limit_s;
  std::vector<std::string> config_files;  ///< Vela's --config files the arch's sections came from
  /// Vela's --optimise: "Performance" chooses the front's least-cycles point, "Size" its least-SRAM
  /// point; empty: the best by the first objective (the front's first point).
  std::string optimise;
  /// Stopped (--time-limit, Ctrl-C) while the workload loaded: no layer was read or mapped
  /// (result.json's `stopped_while_loading`).
  bool stopped_while_loading = false;
};

/// Builds result.json from a finished (or interrupted) search. The search's per-layer stages and join
/// problems are released once read, before the layer mappings are written out (on a long chain the
/// two are the run's memory, and need not peak together); `result` keeps its status, keep rates,
/// front and Vela's point.
nlohmann::ordered_json result_document(const RunProvenance& run, const arch::Arch& arch,
                                       const workloads::Workload& workload, const search::SearchOptions& options,
                                       search::SearchResult& result);

/// The keep-rate counts and per-cause rates as JSON (total, valid, evaluated, pareto_optimal,
/// keep_rate_by_cause).
nlohmann::ordered_json keep_rates_json(const search::KeepRates& rates);

/// Checks a result.json read back (`mapper show`, `mapper eval`) before anything renders it: every
/// section and field the renderers read is present with the right JSON type, counts are integers in
/// range, layer references point into `layer_mappings`. A tampered or truncated document throws
/// common::UserError naming `file` and the key path (e.g. `front[0].layers[2]`), never crashes or
/// prints nonsense.
void check_result_document(const nlohmann::ordered_json& result, const std::string& file);

/// The index in `front` of the result's chosen point (its `chosen` key; 0 when absent or out of range).
std::size_t chosen_point(const nlohmann::ordered_json& result);

/// The exit status of a search: 0 ok, 1 no valid mapping, 130 interrupted.
int exit_status(search::SearchStatus status);

}  // namespace npumap::report
