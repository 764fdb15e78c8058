#pragma once
// The join (docs/design/search.md "Join"): walks the layers in topological order and merges each
// layer's pmapping groups into the partial mappings of the layers before it, keeping only the
// Pareto-optimal rows per live compatibility. This header is the package's whole public interface:
//
//   JoinProblem     what is joined: the tensors, the layers' groups, the SRAM (make_join_problem builds it)
//   JoinOptions     how: the objectives, the tolerance, and the exact speed-ups (JoinSpeedups, switched
//                   off one by one by the tests)
//   JoinRunContext  where: threads, the stop token, a progress display
//   JoinResult      the front, with per step counters
//
// Everything else in mapper/search/join/ is the implementation (namespace join_internal), one file per
// part; docs/design/search.md "Join" has the map of the files. A rule that prunes the join lives in a
// file of its own whose opening comment says what it drops and why that is safe.

#include <atomic>
#include <cstdint>
#include <string>
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
  /// Step of the first writer; -1 for a network input or constant. A tensor several layers write (a
  /// concatenation) is live from its first writer on, and its later writers find it live.
  int producer_step = -1;
  int last_consumer_step = -1;     ///< -1 if nothing consumes it
  bool network_output = false;     ///< live until the end of the network
  bool constant = false;           ///< a constant operand: read in place from permanent storage, no SRAM
  /// A long-lived feature map (kLongLivedSteps, lowering.hpp) where the arena is not the SRAM: its
  /// layers offer it the arena and SRAM, and join_long_lived (long_lived.hpp) joins one variant with
  /// every such map in the arena and one with every such map in SRAM, not a choice per mapping.
  bool long_lived = false;
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
  /// The layer's groups: the stage's own, shared (copy on write: SharedVector::edit), or a filtered
  /// copy shared by identical layers.
  SharedVector<PmappingGroup> groups;
};

/// What is joined: the network's tensors and layers with their groups, and the SRAM they share.
struct JoinProblem {
  std::vector<JoinTensor> tensors;
  std::vector<JoinStep> steps;
  bool arena_is_sram = true;       ///< the tensor arena is the SRAM (U55 systems): whole tensors there count
  std::int64_t sram_capacity = 0;  ///< bytes; rows whose SRAM in use exceeds it are dropped
};

/// Whether the incumbent bound uses per-key lower bounds (JoinSpeedups::key_bound).
enum class KeyBound { Off, Automatic, On };

/// The join's exact speed-ups, each of which can be switched off (for tests; the front never depends
/// on them). Every one is a file of mapper/search/join/ whose opening comment says what it drops and
/// why the front stays exact; docs/design/search.md "Join" describes each.
enum class Speedup : std::uint8_t {
  Lookahead,         ///< lookahead.hpp: drop keys no later layer could match
  Collapse,          ///< collapse.hpp: forget tensors no later layer reads
  FutureSramBound,   ///< future_sram_bound.hpp: compare peak SRAM as max(peak, what every completion uses)
  IncumbentBound,    ///< incumbent_bound.hpp (+ quick_passes, incumbent_regions): drop rows real mappings beat
  KeyBound,          ///< key_bound.hpp: the incumbent bound with per-key rest sets
  DominanceFilter,   ///< dominance_snapshot.hpp: skip merges a snapshot of the key's rows dominates
  LeastValueSkips,   ///< least_value_skips.hpp: skip whole units, blocks and rows from their least values
  SiblingBound,      ///< sibling_bound.hpp: skip merges a sibling layer row's merge dominates
  CascadeClamp,      ///< cascade_clamp.hpp: compare an open cascade's SRAM by the limits that matter
  CombineLeft,       ///< combined_left.hpp: pair a layer group once with the left groups it meets
};
inline constexpr int kNumSpeedups = 10;
/// The stable name of a speed-up, e.g. "incumbent_bound".
const char* speedup_name(Speedup s);

struct JoinSpeedups {
  bool lookahead = true;
  bool collapse = true;
  bool future_sram_bound = true;
  bool incumbent_bound = true;
  /// Automatic: used when the quick pass before paired enough rows per key to repay building it.
  KeyBound key_bound = KeyBound::Automatic;
  bool dominance_filter = true;
  bool least_value_skips = true;
  bool sibling_bound = true;
  bool cascade_clamp = true;
  bool combine_left = true;
  /// Rows per key of each quick pass of the incumbent bound; empty: the defaults (64 with two
  /// objectives, 32 then 256 with more). Tests set a tiny width so that small networks are thinned.
  std::vector<std::size_t> quick_beams;
  /// Keys per step a quick pass keeps at most (those holding the best rows); 0: the default (64).
  /// Tests set 1 so that small networks are thinned by key too.
  std::size_t quick_keys = 0;
  /// Rows merged into a key's table before its first pruning (which builds the dominance filter's
  /// snapshot); 0: the default (1,024). Tests set a few rows so that small networks are filtered too.
  std::size_t first_prune_rows = 0;
  /// Rows a source needs for the dominance filter's pilot to sample it; 0: the default (64). Tests set
  /// a few rows so that small networks have a pilot.
  std::size_t pilot_min_rows = 0;

  /// Switches one speed-up on or off (the key bound: Automatic when on).
  void set(Speedup s, bool on);
  /// Every speed-up off: the plain join the speed-ups are checked against.
  static JoinSpeedups none();
};

/// How to join: the objectives of the front and the pruning.
struct JoinOptions {
  std::vector<Objective> objectives = all_objectives();
  /// 0: exact. Otherwise rows whose columns fall in the same cell of a log grid with ratio 1+tolerance
  /// compare as equal while pruning (tolerance_grid.hpp), which bounds the fronts of runs with many
  /// objectives at the price of an approximate front; the exact speed-ups that compare values before
  /// the pruning (dominance filter, sibling bound, incumbent bound) are then off.
  double tolerance = 0.0;
  /// 0: the exact front. Otherwise join() returns an ε-Pareto front (epsilon_front.hpp,
  /// docs/design/search.md "ε-front"): for every point x of the exact front a returned point y with
  /// f_i(y) <= (1 + epsilon) f_i(x) in every objective, each objective's least value (ties broken
  /// lexicographically on the others, in order) exact and on it, every value a real mapping's.
  double epsilon = 0.0;
  /// Unused by the ε-front since its pruning carries the peak's error per row (kept for tests and
  /// experiments; 0: exact): while SRAM is an objective, the peak SRAM column keeps each
  /// step's SRAM in use rounded up to the next level of a log grid of this ratio from sram_grid_base
  /// (values below it: to it); the capacity check still reads the true usage. The rounding is
  /// monotone, so it commutes with the maximum and its error does not compound.
  double sram_grid_ratio = 0.0;
  double sram_grid_base = 0.0;
  /// Internal to the ε-front (0: none): the error budget ε1 of the join's pruning (tolerance_grid.hpp,
  /// StepSlack): a row may stand in for rows it is within ε1 of, relative to a lower bound of their
  /// final values, each row's error carried in JoinRow::err, so that the front's points are within
  /// 1 + step_slack of the exact front's in every objective. The exact speed-ups stay on but for the
  /// dominance filter; join() then also returns the quick passes' complete mappings (the incumbents) with
  /// the front, since a row the incumbent bound drops is covered by one.
  double step_slack = 0.0;
  /// Objective values (row-major, the objectives above in order) of mappings already known, of this
  /// problem or another (join_long_lived: the other variant's front). With the incumbent bound on and
  /// no tolerance, slack or ε they bound the join as its quick passes' incumbents do: a partial mapping
  /// every completion of which one of them strictly dominates is dropped, so the front is this
  /// problem's exact front less the points they strictly dominate (none of which is on the Pareto
  /// front of the union). Ignored otherwise.
  std::vector<double> known_mappings;
  JoinSpeedups speedups;
};

/// The ε-front's guarantee in one sentence, for the reports: "every point of the exact Pareto front
/// is within 1% ..." (epsilon 0: the front is exact).
std::string epsilon_guarantee(double epsilon);

/// Live counters a progress display may read while joins run (several joins may add to them).
struct JoinProgress {
  std::atomic<std::uint64_t> steps_done{0};
  std::atomic<std::uint64_t> steps_total{0};
  /// The steps of every join the caller means to run, set before they start (map_network), so a
  /// display has a fixed denominator; steps_total grows as each join's exact pass starts.
  std::atomic<std::uint64_t> steps_planned{0};
  std::atomic<std::uint64_t> rows_paired{0};
  /// The running exact pass's estimate of the rows it has still to pair (pass.cpp), once it has one.
  std::atomic<std::uint64_t> rows_to_come{0};
  std::atomic<bool> rows_estimated{false};
};

/// Where the join runs. The result never depends on it (only a stop makes it partial).
struct JoinRunContext {
  /// New groups of a step are merged in parallel in an arena of this many workers, or in the caller's
  /// oneTBB arena when 0 (map_network, sweeps).
  int threads = 1;
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

/// Runs the join. Deterministic: it depends only on the problem and the options, never on timing or
/// the thread count.
JoinResult join(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& context = {});

/// The points of join(problem, options)'s front whose first objective is the least (so its first
/// point is join's front[0]), found by bounding the join with that least value: much cheaper than the
/// whole front when it is large. Used for the report's comparison without fusion. Deterministic.
JoinResult join_best(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& context = {});

}  // namespace npumap::search
