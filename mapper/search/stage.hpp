#pragma once
// The per-layer stage (docs/design/architecture.md §2, docs/design/search.md "Jobs"): one job per (layer, template), run as
// oneTBB tasks longest first; each enumerates its block configs in fixed-size chunks, evaluates them
// with the cycle model and keeps the Pareto-optimal pmappings per compatibility. The jobs of a layer
// then merge, in job order, into the layer's PmappingGroups. See stage.cpp; a mapping runs it through map_network (map_network.hpp).

#include <atomic>
#include <cstdint>
#include <vector>

#include "arch/arch.hpp"
#include "common/stop_token.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/keep_rates.hpp"
#include "mapper/search/mapspace.hpp"
#include "mapper/search/objectives.hpp"
#include "mapper/search/pmapping.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// Knobs of the per-layer stage.
struct StageOptions {
  int threads = 1;                       ///< run_per_layer only: worker threads (a oneTBB arena of this size)
  std::uint32_t chunk_size = 128;        ///< block configs evaluated between Pareto merges and stop checks
  std::vector<Objective> objectives = all_objectives();  ///< columns kept by the per-layer Pareto filter
  SpaceOptions space;
  /// Checked at every chunk boundary; once it says stop, the remaining candidates count as `interrupted`.
  common::StopToken stop;
};

/// Live counters a progress display may read while the stage runs.
struct StageProgress {
  std::atomic<std::uint64_t> jobs_done{0};
  std::atomic<std::uint64_t> jobs_total{0};
  std::atomic<std::uint64_t> evaluated{0};
};

/// The result of one layer. Its jobs are its templates: job t is (this layer, template t), and a
/// row's PmappingRow::template_index names it. Identical layers share their groups (their rows name
/// no layer) and their jobs' counters.
struct LayerResult {
  LayerSpace space;
  /// The keep-rate counters of job t are StageResult::counters[first_counter + t] (t < templates).
  std::uint32_t first_counter = 0;
  SharedVector<PmappingGroup> groups;  ///< sorted by compatibility; shared by identical layers' copies
  KeepRates rates;
  /// The least SRAM any candidate of the layer needs by itself (its own feature maps and weight
  /// copies, rolling where it may): what a layer without pmappings would need. -1: none considered.
  std::int64_t min_sram_bytes = -1;
};

/// The whole per-layer stage.
struct StageResult {
  std::vector<LayerResult> layers;  ///< indexed by layer (file order)
  /// Jobs of all layers, one per (layer, template); identical layers' jobs each count.
  std::size_t num_jobs = 0;
  /// Per computed job (the jobs of identical layers share theirs): LayerResult::first_counter indexes it.
  std::vector<KeepCounters> counters;
  /// The keep-rate counters of job (lr, template t).
  const KeepCounters& counters_of(const LayerResult& lr, std::size_t t) const { return counters[lr.first_counter + t]; }
  KeepRates overall;
  bool partial = false;             ///< stopped early by the time limit or an interrupt
};


/// A layer of some workload, as input to a shared per-layer stage.
struct LayerRef {
  const workloads::Workload* workload = nullptr;
  int layer = -1;
};

/// The per-layer stage of layers from any number of workloads, each distinct layer computed once.
struct SharedStage {
  /// One LayerResult per distinct layer (in order of first appearance); its space.layer is the layer
  /// index in the workload of that first appearance.
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

/// The per-layer stage of one workload whose layers are refs [first_ref, first_ref + num_layers) of
/// `shared`: each layer gets its distinct layer's result (sharing its groups and counters), exactly
/// as if every layer had been computed on its own.
StageResult stage_of_workload(const SharedStage& shared, std::size_t first_ref, std::size_t num_layers);

/// The per-layer stage of one workload in an arena of `options.threads` workers (identical layers
/// computed once). Deterministic: independent of `threads` and timing, except that a stop marks the
/// result partial. For tests and benchmarks of the stage alone; a mapping runs search::map_network.
StageResult run_per_layer(const arch::Arch& arch, const workloads::Workload& workload, const StageOptions& options,
                          StageProgress* progress = nullptr);

/// The join problem of a workload: tensors with their sizes and lifetimes in topological order, and
/// each layer's groups, shared with the stage (groups with a rolling buffer are left out unless
/// `allow_fusion`: then a copy without them, shared by the layers that share the stage's list), less
/// the layouts that never pay (layout_dominance.hpp) unless `keep_all_layouts` (Vela's problem, whose
/// groups are made afresh).
JoinProblem make_join_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                              bool allow_fusion, bool keep_all_layouts = false);

/// The pass of a row of a layer's group (for reports and `mapper eval`).
model::Pass pass_of(const arch::Arch& arch, const StageResult& stage, int layer, const PmappingRow& row);

}  // namespace npumap::search
