#pragma once
// `mapper sweep SPEC.yaml`: map every workload of a sweep spec on every arch point (sweep.cpp), and
// render the sweep's outputs (sweep_report.cpp). See docs/sweep-format.md.
//
// Each finished arch point is appended as one JSON line to <out>/points.jsonl; a rerun with the same
// spec skips the points found there. The final files (sweep.csv, sweep.json, pareto.csv, pareto.svg)
// are rendered from those records sorted by point, so a resumed sweep writes the same bytes as one
// that was never interrupted, and so do a merge of shards (--shard K/N, --merge) and an MPI run
// (mpi_sweep.hpp): see docs/distributed-sweeps.md.

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
  int shard_index = 0;         ///< `--shard K/N`: compute only the points whose index % N == K ...
  int shard_count = 1;         ///< ... and write no final files (1: the whole sweep)
  std::vector<std::string> merge;  ///< `--merge DIR...`: combine these folders' journals; compute nothing
};

/// Parses `--shard K/N` (whole numbers, 0 <= K < N) into options.shard_index and shard_count; throws
/// UserError (key `--shard`) on anything else.
void parse_shard(const std::string& text, SweepOptions& options);

/// Runs a sweep (all of it, or the shard of `options`) in this process; returns 0, or 130 when
/// `interrupt` (the process's Ctrl-C flag; may be null) stopped it (finished points are kept). Bad
/// input throws UserError.
int run_sweep(const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out);

/// `--merge`: reads the journals in options.merge (folders, or points.jsonl files), refuses any of
/// another spec, and writes the output folder's journal and final files, byte-identical to a
/// single-process run. Throws UserError when a point is in none of them.
int merge_sweep(const SweepOptions& options, std::ostream& out);

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
