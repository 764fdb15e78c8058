#pragma once
// The per-layer stage (DESIGN.md §2, FFM_NOTES.md "Jobs"): one job per (layer, template), run as
// oneTBB tasks longest first; each enumerates its block configs in fixed-size chunks, evaluates them
// with the cycle model and keeps the Pareto-optimal pmappings per compatibility. The jobs of a layer
// then merge, in job order, into the layer's PmappingGroups. See jobs.cpp.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "arch/arch.hpp"
#include "mapper/join.hpp"
#include "mapper/keep_rates.hpp"
#include "mapper/mapspace.hpp"
#include "mapper/options.hpp"
#include "mapper/pmapping.hpp"
#include "workloads/workload.hpp"

namespace npumap::mapper {

/// Knobs of the per-layer stage.
struct StageOptions {
  int threads = 1;                       ///< worker threads (a oneTBB arena of this size)
  std::uint32_t chunk_size = 128;        ///< block configs evaluated between Pareto merges and stop checks
  std::vector<Objective> objectives = all_objectives();  ///< columns kept by the per-layer Pareto filter
  SpaceOptions space;
  /// Set (e.g. by a SIGINT handler) to stop at the next chunk boundary; may be null.
  const std::atomic<bool>* interrupt = nullptr;
  /// Stop at the first chunk boundary after this instant.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// Live counters a progress display may read while the stage runs.
struct StageProgress {
  std::atomic<std::uint64_t> jobs_done{0};
  std::atomic<std::uint64_t> jobs_total{0};
  std::atomic<std::uint64_t> evaluated{0};
};

/// One job: a layer and one of its templates.
struct Job {
  int layer = -1;
  std::uint32_t template_index = 0;
  KeepCounters counters;
};

/// The result of one layer.
struct LayerResult {
  LayerSpace space;
  std::vector<std::uint32_t> jobs;     ///< indices into StageResult::jobs, in template order
  std::vector<PmappingGroup> groups;   ///< sorted by compatibility
  KeepRates rates;
};

/// The whole per-layer stage.
struct StageResult {
  std::vector<LayerResult> layers;  ///< indexed by layer (file order)
  std::vector<Job> jobs;
  KeepRates overall;
  bool partial = false;             ///< stopped early by the time limit or an interrupt
};

/// Runs every job of every layer. Deterministic: independent of `threads` and timing, except that a
/// stop marks the result partial.
StageResult run_per_layer(const arch::Arch& arch, const workloads::Workload& workload, const StageOptions& options,
                          StageProgress* progress = nullptr);

/// The join problem of a workload: tensors with their sizes and lifetimes in topological order, and
/// each layer's groups (copied into `storage`, indexed by layer; groups with a rolling buffer are left
/// out unless `allow_fusion`).
JoinProblem make_join_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                              const std::vector<Objective>& objectives,
                              std::vector<std::vector<PmappingGroup>>& storage, bool allow_fusion);

/// The pass of a row of a layer's group (for reports and `mapper eval`).
model::Pass pass_of(const arch::Arch& arch, const StageResult& stage, int layer, const PmappingRow& row);

}  // namespace npumap::mapper
