#pragma once
// The one entry point of a search: a workload (or several, sharing their per-layer stage) on an arch
// -> per-layer stage -> join with fusion -> the best mapping without fusion for comparison -> keep
// rates, in one typed result. `mapper`, `mapper sweep` and the benchmarks all call this; nothing else
// wires the stage to the join. See docs/mapper-algorithm.md for the algorithm and
// docs/design/search.md for the design.

#include <cstdint>
#include <optional>
#include <vector>

#include "arch/arch.hpp"
#include "common/stop_token.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/keep_rates.hpp"
#include "mapper/search/mapping.hpp"
#include "mapper/search/objectives.hpp"
#include "mapper/search/stage.hpp"
#include "mapper/search/vela_schedule.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// Everything a search depends on besides the arch and the workload.
struct SearchOptions {
  std::vector<Objective> objectives = default_objectives();  ///< columns of the final front
  bool fusion = true;               ///< offer layer fusion through SRAM rolling buffers
  /// ε of the front (0 = the exact front); see JoinOptions::epsilon.
  double epsilon = kDefaultEpsilon;
  bool per_layer_only = false;      ///< stop after the per-layer stage (no join)
  /// Also join without rolling buffers, to report what fusion gains (only when fusion is on).
  bool compare_without_fusion = true;
  /// Worker threads: 0 runs in the caller's oneTBB arena; N > 0 in an arena of N workers. The
  /// result never depends on it.
  int threads = 0;
  std::uint32_t chunk_size = 128;   ///< block configs evaluated between Pareto merges and stop checks
  bool share_layers = true;         ///< compute identical layers once (off: to measure the saving)
  bool vela_baseline = true;        ///< also find Vela's schedule (vela_schedule.hpp) for the reports
  /// Find only Vela's schedule: no join of the whole mapspace; the "front" is Vela's point alone.
  bool baseline_only = false;
  /// Vela's --block-config-limit for its schedule (0: every block config, as Arm's evaluation kit runs it).
  int vela_block_config_limit = kVelaBlockConfigLimit;
  /// The join problem is released while Vela's schedule is found; kept, it is made again after (in
  /// SearchResult::problem). Off, Vela's point is made into layer mappings at once
  /// (SearchResult::vela_mappings) and Vela's problem and stage go before the search's stage is made
  /// again, and the join problem is left out for the caller to make again from the stage
  /// (make_join_problem(arch, w, result.stage, fusion): the same problem): report::result_document
  /// does, so no two problems are held together.
  bool keep_join_problem = true;
};

/// Live counters of a search for a progress display: the per-layer stage, then the joins.
struct SearchProgress {
  StageProgress stage;
  JoinProgress join;
};

/// How a search ended.
enum class SearchStatus : std::uint8_t {
  Ok,              ///< a front of at least one point (or, per-layer only, every layer has pmappings)
  NoValidMapping,  ///< some layer has no valid pmapping, or the join found no complete mapping
  Interrupted,     ///< the stop token fired: the stage's counts are partial and the front is empty
};

/// The best mapping without fusion: the first point of that front (best by the first objective, then
/// the others in order), found by join_best without the rest of that front.
struct UnfusedSummary {
  FrontPoint best;
};

/// The result of mapping one workload.
struct SearchResult {
  StageResult stage;                    ///< per layer (indexed by layer), with keep rates per job
  /// The join problem (it owns the groups the front's points index) and its result; empty when the
  /// search stopped after the stage (per-layer only, a layer without pmappings, or interrupted).
  /// Without SearchOptions::keep_join_problem the problem is also empty once Vela's schedule is found.
  std::optional<JoinProblem> problem;
  std::optional<JoinResult> joined;
  std::optional<UnfusedSummary> unfused;  ///< when compared and a mapping without fusion exists
  std::optional<VelaBaseline> vela;     ///< Vela's schedule, when asked for and one fits
  /// The stage Vela's schedule indexes when it is not `stage`: a search whose objectives leave out
  /// cycles, off-chip bytes or peak SRAM gives Vela a stage of its own (map_network.cpp). Its groups
  /// are emptied once the schedule is found (`vela->problem` holds the rows): only its layer spaces
  /// and jobs are kept, to rebuild the passes of Vela's point.
  std::optional<StageResult> vela_stage;
  /// The stage `vela` indexes.
  const StageResult& stage_of_vela() const { return vela_stage ? *vela_stage : stage; }
  /// Vela's point as layer mappings (front_mappings of it, with its memory), made in the search
  /// without SearchOptions::keep_join_problem; then `vela->problem` is empty and `vela_stage` absent.
  std::optional<FrontMappings> vela_mappings;
  KeepRates keep_rates;                 ///< the stage's overall rates with the join's causes applied
  bool partial = false;                 ///< stopped by the stop token somewhere
  SearchStatus status = SearchStatus::Ok;
  std::uint64_t evaluated = 0;          ///< pmappings scored by the cycle model (shared layers once)
};

/// Maps one workload on `arch`. Deterministic: the same inputs give the same result for any thread
/// count; only a stop (token) changes it, and then the result is marked partial.
SearchResult map_network(const arch::Arch& arch, const workloads::Workload& workload, const SearchOptions& options,
                         const common::StopToken& stop, SearchProgress* progress = nullptr);

/// Results of several workloads mapped on one arch with one shared per-layer stage.
struct MultiSearchResult {
  std::vector<SearchResult> networks;  ///< one per workload, in the order given
  std::size_t layers_total = 0;        ///< layers of all workloads
  std::size_t layers_distinct = 0;     ///< of which computed (identical layers share one result)
  std::uint64_t evaluated = 0;         ///< pmappings scored, each distinct layer counted once
  bool partial = false;
};

/// Maps every workload on `arch`; each distinct layer across all of them is computed once (unless
/// options.share_layers is off). Per workload the result equals map_network's.
MultiSearchResult map_networks(const arch::Arch& arch, const std::vector<const workloads::Workload*>& workloads,
                               const SearchOptions& options, const common::StopToken& stop,
                               SearchProgress* progress = nullptr);

}  // namespace npumap::search
