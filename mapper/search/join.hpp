#pragma once
// The join (docs/design/search.md "Join"): walks the layers in topological order and merges each layer's
// pmapping groups into the partial mappings of the layers before it, keeping only Pareto-optimal
// rows per live compatibility. See join.cpp for the algorithm and its SRAM accounting.

#include <atomic>
#include <cstdint>
#include <vector>

#include "common/stop_token.hpp"
#include "mapper/search/keep_rates.hpp"
#include "mapper/search/objectives.hpp"
#include "mapper/search/pmapping.hpp"

namespace npumap::search {

/// A feature map as the join sees it: its sizes for SRAM reservations and when it is live.
struct JoinTensor {
  std::int64_t linear_bytes = 0;   ///< storage size of the whole tensor in linear layout
  std::int64_t nhcwb16_bytes = 0;  ///< storage size in NHCWB16 (channels rounded up to 16)
  int height = 0;                  ///< H of the NHWC shape (rolling buffers keep a few rows)
  int width = 0;
  int channels = 0;
  int element_bytes = 1;
  int producer_step = -1;          ///< step of the first writer; -1 for a network input or constant
  int last_consumer_step = -1;     ///< -1 if nothing consumes it
  bool network_output = false;     ///< live until the end of the network
  bool constant = false;           ///< a constant operand: read in place from permanent storage, no SRAM
};

/// SRAM bytes of a rolling buffer between a producer with OFM block height `producer_rows` and a
/// consumer with IFM block height `consumer_rows` (docs/design/npu-model.md §9, §4.3 RollingBufferY).
std::int64_t rolling_buffer_bytes(const JoinTensor& t, int producer_rows, int consumer_rows);

/// SRAM bytes a live tensor with this compatibility reserves (0 if it is not in SRAM).
std::int64_t reserved_bytes(const JoinTensor& t, const TensorCompat& c, bool arena_is_sram);

/// One layer of the join, in topological order.
struct JoinStep {
  std::vector<int> inputs;                        ///< tensor indices, in the layer's input order
  int output = -1;                                ///< tensor index
  std::vector<PmappingGroup> groups;              ///< the layer's groups (the problem owns them)
};

/// Live counters a progress display may read while joins run (several joins may add to them).
struct JoinProgress {
  std::atomic<std::uint64_t> steps_done{0};
  std::atomic<std::uint64_t> steps_total{0};
  /// The steps of every join the caller means to run, set before they start (map_network), so a
  /// display has a fixed denominator; steps_total grows as each join's exact pass starts.
  std::atomic<std::uint64_t> steps_planned{0};
  std::atomic<std::uint64_t> rows_paired{0};
};

/// Whether the join's incumbent bound uses per-key lower bounds (JoinProblem::key_bound).
enum class KeyBound { Off, Automatic, On };

/// Everything the join needs.
struct JoinProblem {
  std::vector<JoinTensor> tensors;
  std::vector<JoinStep> steps;
  bool arena_is_sram = true;
  std::int64_t sram_capacity = 0;
  std::vector<Objective> objectives = all_objectives();
  bool lookahead = true;  ///< drop groups that no later layer could match (off: for metamorphic tests)
  bool collapse = true;   ///< forget tensors that can no longer affect later layers (off: for tests)
  /// Compare peak SRAM while pruning as max(peak, a lower bound of every completion's later usage),
  /// which is exact and merges rows whose peak no completion can reveal (off: for metamorphic tests).
  bool future_sram_bound = true;
  /// Bound the exact join by the front of a quick approximate pass (at most a few rows per key): a
  /// partial mapping is dropped when a complete mapping of that front strictly dominates a lower
  /// bound of all its completions. Exact (off: for metamorphic tests). Not used with a tolerance.
  bool incumbent_bound = true;
  /// Rows per key of each quick pass of the incumbent bound; empty: the defaults (64 with two
  /// objectives, 32 then 256 with more). Tests set a tiny width so that small networks are thinned.
  std::vector<std::size_t> quick_beams;
  /// Keys per step a quick pass keeps at most (those holding the best rows); 0: the default (64).
  /// Tests set 1 so that small networks are thinned by key too.
  std::size_t quick_keys = 0;
  /// Skip merged rows strictly dominated by rows already merged into the same key (a snapshot taken
  /// at each pruning, plus a pilot of sampled merges). Exact, and the counters are unchanged: a
  /// skipped row counts as dominated (off: for metamorphic tests).
  bool dominance_filter = true;
  /// Skip a merged row when its left row merged with another row of the same layer group strictly
  /// dominates it (below in one summed objective, at most in the others and in the key's SRAM
  /// columns). Exact, and the counters are unchanged: a skipped row counts as dominated (off: for
  /// metamorphic tests).
  bool sibling_bound = true;
  /// When peak SRAM is not an objective and the next layer closes an open cascade, compare the
  /// cascade's SRAM while pruning by the least SRAM limit of the next layer's rows at or above it
  /// (the cascade matters to completions only through which of them fit). Exact (off: for
  /// metamorphic tests).
  bool cascade_clamp = true;
  /// Pair each layer group once with one Pareto-filtered table of the rows of every left group that
  /// meets it in the same new key (the groups differ only in tensors that die at that layer), instead
  /// of once with each group. Exact (off: for metamorphic tests).
  bool combine_left = true;
  /// Bound the incumbent test by what each key's own completions must add (a backward pass over the
  /// graph of the keys every step can produce) instead of what any completion adds. Exact. Automatic:
  /// used when the quick pass before paired enough rows per key to repay building it (On and Off: for
  /// metamorphic tests).
  KeyBound key_bound = KeyBound::Automatic;
  /// New groups of a step are merged in parallel in an arena of this many workers, or in the caller's
  /// oneTBB arena when 0 (map_network, sweeps). The result does not depend on it.
  int threads = 1;
  /// 0: exact. Otherwise rows whose columns fall in the same cell of a log grid with ratio 1+tolerance
  /// compare as equal while pruning (FFM's optional tolerance), which bounds the fronts of runs with
  /// many objectives at the price of an approximate front.
  double tolerance = 0.0;
  /// Checked between steps and while merging; a stop marks the result partial.
  common::StopToken stop;
  /// Where to count finished steps for a progress display; may be null.
  JoinProgress* progress = nullptr;
};

/// A point of the front: its objectives and, per step, the chosen (group, row) of that layer.
struct FrontPoint {
  double cycles = 0.0;
  double offchip_bytes = 0.0;
  double energy_pj = 0.0;
  double peak_sram_bytes = 0.0;
  std::vector<std::uint32_t> group;  ///< per step
  std::vector<std::uint32_t> row;    ///< per step
  double objective(Objective o) const;
};

/// Counters of one join step.
struct JoinStepStats {
  std::uint64_t left_groups = 0;
  std::uint64_t right_groups = 0;
  std::uint64_t group_pairs_matched = 0;
  std::uint64_t rows_paired = 0;                 ///< candidate merged rows
  std::uint64_t dropped_sram_capacity = 0;       ///< Cause::SramCapacityAfterJoin
  std::uint64_t dropped_dominated = 0;           ///< Cause::DominatedAfterJoin
  std::uint64_t groups_dropped_incompatible = 0; ///< Cause::Incompatible (look-ahead)
  std::uint64_t rows_dropped_incompatible = 0;
  std::uint64_t rows_out = 0;
  std::uint64_t groups_out = 0;
  /// Merged rows stored before a pruning: rows_paired less those the capacity check, the dominance
  /// filter, the sibling bound and the incumbent bound dropped as they were merged (the work left
  /// to the pruning; not a keep-rate counter, and it depends on the exact speed-ups that are on).
  std::uint64_t rows_stored = 0;
};

/// The join's result: the front (sorted by the objectives in order) and per-step counters.
struct JoinResult {
  std::vector<FrontPoint> front;
  bool partial = false;  ///< stopped before the last layer: the front is empty
  std::vector<JoinStepStats> steps;
  /// Stopped (partial) after join()'s first quick passes had finished: the best complete mappings
  /// they found (the Pareto front of their union, sorted as `front` is). Real mappings, but not
  /// the exact front. Empty otherwise.
  std::vector<FrontPoint> found_before_stop;
  /// The join's filter counts summed over the steps, for the keep rates.
  JoinCounts totals() const;
};

/// Runs the join. Deterministic: it depends only on the problem, never on timing.
JoinResult join(const JoinProblem& problem);

/// The points of join(problem)'s front whose first objective is the least (so its first point is
/// join(problem).front[0]), found by bounding the join with that least value: much cheaper than the
/// whole front when it is large. Used for the report's comparison without fusion. Deterministic.
JoinResult join_best(const JoinProblem& problem);

}  // namespace npumap::search
