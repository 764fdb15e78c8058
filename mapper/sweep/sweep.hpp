#pragma once
// `mapper sweep SPEC.yaml`: map every workload of a sweep spec on every arch point (sweep.cpp), and
// render the sweep's outputs (sweep_report.cpp). See docs/sweep-format.md.
//
// Each finished arch point is appended as one JSON line to <out>/points.jsonl; a rerun with the same
// spec skips the points found there. The final files (sweep.csv, sweep.json, pareto.csv, pareto.svg)
// are rendered from those records sorted by point, so a resumed sweep writes the same bytes as one
// that was never interrupted.

#include <array>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/stop_token.hpp"
#include "mapper/sweep/sweep_spec.hpp"

namespace npumap::sweep {

/// Options of `mapper sweep`.
struct SweepOptions {
  std::string spec;     ///< the spec file
  std::string out_dir;  ///< empty: runs/sweep-<name>
  int threads = 1;
  bool restart = false;        ///< discard the points an earlier run finished
  bool share_layers = true;    ///< compute identical layers once per arch point (off: to measure the saving)
  bool dry_run = false;        ///< check the spec and list its arch points; map nothing, write nothing
  int verbosity = 0;           ///< -1 quiet, 0 normal, 1 a line per finished point
};

/// Runs a sweep; returns 0, or 130 when `interrupt` (the process's Ctrl-C flag; may be null) stopped it
/// (finished points are kept). Bad input throws UserError.
int run_sweep(const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out);

/// The record of one arch point: its parameters, arch summary, and per workload the status and front
/// (cycles, offchip_bytes, sram_bytes, energy_pj per point); plus `layers` {total, distinct} and
/// `evaluated`. Runs search::map_networks in the caller's oneTBB arena; deterministic. `complete` is
/// false when `stop` stopped it (the record must then be discarded).
nlohmann::ordered_json compute_sweep_point(const SweepSpec& spec, const SweepPoint& point, bool share_layers,
                                           const common::StopToken& stop, bool& complete);

/// The final files, rendered from one record per point in point order.
struct SweepFiles {
  std::string csv;         ///< sweep.csv: one row per (arch point, workload, front point)
  std::string json;        ///< sweep.json: the spec summary, every point, the cross-arch fronts
  std::string pareto_csv;  ///< pareto.csv: the cross-arch Pareto front of each workload
  std::string svg;         ///< pareto.svg: one panel per workload
};
SweepFiles render_sweep(const SweepSpec& spec, const std::vector<nlohmann::ordered_json>& records);

/// The indices (ascending) of the cross-arch Pareto-optimal rows of one workload, where a row is
/// (MACs per cycle, SRAM capacity bytes, latency, off-chip bytes), all minimised; exact duplicates keep
/// the first.
std::vector<std::uint32_t> cross_arch_front(const std::vector<std::array<double, 4>>& rows);

}  // namespace npumap::sweep
