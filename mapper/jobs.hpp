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

/// A layer of some workload, as input to a shared per-layer stage.
struct LayerRef {
  const workloads::Workload* workload = nullptr;
  int layer = -1;
};

/// The per-layer stage of layers from any number of workloads, each distinct layer computed once.
struct SharedStage {
  /// One LayerResult per distinct layer (in order of first appearance); its space.layer is the layer
  /// index in the workload of that first appearance, and Job::layer indexes `stage.layers`.
  StageResult stage;
  std::vector<std::uint32_t> distinct_of;  ///< per LayerRef: index into stage.layers
};

/// Two layers are the same job set when their mapspaces (base pass, templates, block configs, batch
/// repeat, support) and the SRAM their own whole feature maps take under every template are equal:
/// the per-layer stage reads nothing else of the workload, so their results are identical.
/// Runs in the caller's oneTBB arena (`options.threads` is not used); deterministic.
/// With `share_identical` false every layer is computed on its own (to measure what sharing saves).
SharedStage run_shared_stage(const arch::Arch& arch, const std::vector<LayerRef>& layers, const StageOptions& options,
                             StageProgress* progress = nullptr, bool share_identical = true);

/// The join problem of a workload: tensors with their sizes and lifetimes in topological order, and
/// each layer's groups (copied into `storage`, indexed by layer; groups with a rolling buffer are left
/// out unless `allow_fusion`).
JoinProblem make_join_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                              const std::vector<Objective>& objectives,
                              std::vector<std::vector<PmappingGroup>>& storage, bool allow_fusion);
/// As above, with each layer's result given by pointer (indexed by the workload's layer index).
JoinProblem make_join_problem(const arch::Arch& arch, const workloads::Workload& workload,
                              const std::vector<const LayerResult*>& layers, const std::vector<Objective>& objectives,
                              std::vector<std::vector<PmappingGroup>>& storage, bool allow_fusion);

/// The pass of a row of a layer's group (for reports and `mapper eval`).
model::Pass pass_of(const arch::Arch& arch, const StageResult& stage, int layer, const PmappingRow& row);

}  // namespace npumap::mapper
