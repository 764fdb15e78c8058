// The merge kernel (merge_kernel.hpp).

#include "mapper/search/join/merge_kernel.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "mapper/search/join/dominance_snapshot.hpp"
#include "mapper/search/join/prune.hpp"
#include "mapper/search/join/quick_passes.hpp"
#include "mapper/search/join/sibling_bound.hpp"

namespace npumap::search::join_internal {
namespace {

/// Merged rows per unit of parallel work.
constexpr std::size_t kUnitRows = std::size_t{1} << 16;

/// Rows a merge has produced so far, with its counters and its dominance filter's snapshot.
struct MergeAcc {
  std::vector<PendingRow> rows;
  std::uint64_t paired = 0;
  std::uint64_t over_capacity = 0;
  std::uint64_t dropped = 0;  ///< dominated: by pruning or by the incumbent bound
  std::uint64_t stored = 0;   ///< rows pushed into `rows` (the others were dropped as they were merged)
  std::size_t threshold = 0;  ///< rows from which the table is pruned next
  DominanceFilter filter;     ///< snapshot of the rows after the last pruning, to skip rows it dominates

  void add(const DropCounts& c) {
    paired += c.paired;
    over_capacity += c.over_capacity;
    dropped += c.dominated;
  }
};

/// Left rows [begin, end) of one pair of the key.
struct MergeUnit {
  std::uint32_t pair;
  std::uint32_t begin;
  std::uint32_t end;
};

/// The merge of one key: its pairs, how its rows compare, and which rules apply.
class KeyMerge {
 public:
  KeyMerge(const PassContext& ctx, const PassRules& rules, const StepData& step, const KeyWork& kw, const KeyColumns& key,
           const DropRegions& regions);
  /// Merges every unit; the table is pruned when it has grown, but not at the end.
  MergeAcc run() const;
  /// Prunes the table to the key's front.
  void prune(MergeAcc& acc) const { acc.dropped += prune_rows(acc.rows, key_, ctx_.grid, ctx_.slack(step_.s), ctx_.obj.sram_tiebreak()); }
  /// Drops the rows the incumbent bound drops (each row checked once per step).
  void bound_filter(MergeAcc& acc) const;
  /// Prunes, bounds and refreshes the snapshot when the table has doubled since the last pruning.
  void maybe_prune(MergeAcc& acc) const;
  void merge_units(MergeAcc& acc, std::size_t first, std::size_t last) const;
  std::size_t first_prune() const { return ctx_.first_prune_rows; }

 private:
  void merge_unit(MergeAcc& acc, const MergeUnit& unit) const;
  /// Merges left row lr with every layer row of the pair.
  void merge_row(MergeAcc& acc, const PairTask& task, const JoinRow& lr) const;
  /// Drops every merge of left rows [first, last) of the pair, counted as merging would count them.
  void drop_range(MergeAcc& acc, const PairTask& task, std::uint32_t first, std::uint32_t last) const;
  bool filtered(const MergeAcc& acc, const JoinRow& row) const {
    const DominanceFilter& f = acc.filter.empty() ? pilot_filter_ : acc.filter;
    if (!use_filter_ || f.empty()) return false;
    // The ε-front's join: only a row without error, which stands in for itself alone (see the constructor).
    if (epsilon_ && (row.err[0] != 0.0f || row.err[1] != 0.0f || row.err[2] != 0.0f || row.err[3] != 0.0f)) return false;
    double v[8];
    for (std::size_t c = 0; c < key_.cols.size(); ++c) v[c] = key_.value(row, key_.cols[c]);
    return f.dominated(v);
  }
  bool completions_dominated(const JoinRow& row) const {
    return rules_.bound.completions_dominated(row, key_.value(row, Column::Sram), regions_, rest_);
  }
  /// The least merge of lr with the pair's layer group is dropped: so is every merge of lr.
  bool least_dropped(const MergeAcc& acc, const PairTask& task, const JoinRow& lr, double cascade_in) const {
    const JoinRow least = least_merge(task, lr, cascade_in, step_.group_least[task.right]);
    // In the ε-front's join the merges of a range may carry error: the filter judges rows one by one.
    return (!epsilon_ && filtered(acc, least)) || (use_bound_ && completions_dominated(least));
  }

  const PassContext& ctx_;
  const PassRules& rules_;
  const StepData& step_;
  const KeyWork& kw_;
  const KeyColumns& key_;
  const DropRegions& regions_;
  const double* rest_;
  bool use_filter_ = false;
  bool epsilon_ = false;  ///< the ε-front's join (StepSlack not exact)
  bool use_bound_ = false;
  bool use_sibling_ = false;
  bool use_least_ = false;
  double sram_floor_ = 0.0;
  std::vector<double> pilot_;
  DominanceFilter pilot_filter_;  ///< used by a table that has not been pruned yet
  std::vector<MergeUnit> units_;
  std::size_t key_rows_ = 0;      ///< merged rows of the whole key
};

KeyMerge::KeyMerge(const PassContext& ctx, const PassRules& rules, const StepData& step, const KeyWork& kw, const KeyColumns& key,
                   const DropRegions& regions)
    : ctx_(ctx), rules_(rules), step_(step), kw_(kw), key_(key), regions_(regions), rest_(rules.bound.rest(step.s + 1)) {
  const JoinSpeedups& on = ctx.speedups;
  // The filter drops a merge for a snapshot row it cannot name. In the ε-front's join (StepSlack) it
  // drops only rows without error: a snapshot row y strictly dominating such a row x is a real merge of
  // the key, so after the pruning a kept row z covers y (or the incumbent bound dropped y, and then x,
  // with a returned mapping); z's lows are at most y's lows, at most y's values, at most x's values,
  // which are x's lows, and z's completions are within 1 + ε1 of y's, at most x's: z covers x.
  epsilon_ = !ctx.slack(step.s).exact();
  use_filter_ = on.dominance_filter && ctx.grid.exact() && key.cols.size() <= kFilterColumns;
  use_bound_ = rules.bound.active();
  use_sibling_ = on.sibling_bound && ctx.grid.exact();
  use_least_ = on.least_value_skips;
  sram_floor_ = key.sram_floor();
  if (use_filter_) {
    std::vector<PilotSource> sources;
    for (const PairTask& task : *kw.pairs) {
      sources.push_back(PilotSource{&task, &step.rows_of(task.left), &step.samples[task.left], &step.step->groups[task.right]});
    }
    pilot_ = build_pilot(sources, key, ctx.capacity, ctx.pilot_min_rows);
    pilot_filter_.build(pilot_.data(), pilot_.size() / key.cols.size(), key.cols.size());
  }
  for (std::uint32_t i = 0; i < kw.pairs->size(); ++i) {
    const PairTask& task = (*kw.pairs)[i];
    const std::size_t left_rows = step.rows_of(task.left).size();
    const std::size_t per_left = std::max<std::size_t>(1, step.step->groups[task.right].rows.size());
    key_rows_ += left_rows * per_left;
    const std::size_t step_rows = std::max<std::size_t>(1, kUnitRows / per_left);
    for (std::size_t r = 0; r < left_rows; r += step_rows) {
      units_.push_back(MergeUnit{i, static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(std::min(left_rows, r + step_rows))});
    }
  }
}

void KeyMerge::bound_filter(MergeAcc& acc) const {
  if (!use_bound_) return;
  std::size_t out = 0;
  for (std::size_t r = 0; r < acc.rows.size(); ++r) {
    PendingRow& p = acc.rows[r];
    if (!p.bound_checked) {
      if (completions_dominated(p.row)) {
        ++acc.dropped;
        continue;
      }
      p.bound_checked = true;
    }
    acc.rows[out++] = p;
  }
  acc.rows.resize(out);
}

void KeyMerge::maybe_prune(MergeAcc& acc) const {
  if (acc.rows.size() < acc.threshold) return;
  prune(acc);
  bound_filter(acc);
  if (use_filter_) refresh_snapshot(acc.filter, pilot_, acc.rows, key_);
  acc.threshold = std::max<std::size_t>(8192, 2 * acc.rows.size());
}

void KeyMerge::drop_range(MergeAcc& acc, const PairTask& task, std::uint32_t first, std::uint32_t last) const {
  const LayerGroupLeast& g = step_.group_least[task.right];
  const std::size_t rows = step_.step->groups[task.right].rows.size();
  DropCounts counts;
  if (!task.input_rolling) {
    count_dropped(task, g, rows, 0.0, ctx_.capacity, last - first, counts);  // every row fits the same
  } else {
    const std::vector<JoinRow>& g_rows = step_.rows_of(task.left);
    for (std::uint32_t r = first; r < last; ++r) count_dropped(task, g, rows, cascade_in_of(task, g_rows[r]), ctx_.capacity, 1, counts);
  }
  acc.add(counts);
}

void KeyMerge::merge_units(MergeAcc& acc, std::size_t first, std::size_t last) const {
  for (std::size_t u = first; u < last; ++u) {
    if (ctx_.stop_requested()) return;
    merge_unit(acc, units_[u]);
  }
}

void KeyMerge::merge_unit(MergeAcc& acc, const MergeUnit& unit) const {
  const PairTask& task = (*kw_.pairs)[unit.pair];
  const std::vector<JoinRow>& g_rows = step_.rows_of(task.left);
  const bool batches = use_least_ && step_.step->groups[task.right].rows.size() > 1;
  // The whole unit, from the source's least values (a row below every one of its rows).
  const SourceLeast& least = step_.source_least[task.left];
  if (batches && unit.end - unit.begin > 1 && least_dropped(acc, task, least.all, cascade_in_of(task, least.all))) {
    drop_range(acc, task, unit.begin, unit.end);
    return;
  }
  for (std::uint32_t r = unit.begin; r < unit.end; ++r) {
    // The next kLeastBlock left rows, at the start of each block.
    if (batches && r % kLeastBlock == 0 && r + 1 < unit.end) {
      const JoinRow& block = least.blocks[r / kLeastBlock];
      if (least_dropped(acc, task, block, cascade_in_of(task, block))) {
        const std::uint32_t end = std::min<std::uint32_t>(unit.end, r + kLeastBlock);
        drop_range(acc, task, r, end);
        r = end - 1;
        continue;
      }
    }
    const JoinRow& lr = g_rows[r];
    if (batches && least_dropped(acc, task, lr, cascade_in_of(task, lr))) {
      drop_range(acc, task, r, r + 1);
      continue;
    }
    merge_row(acc, task, lr);
    maybe_prune(acc);
  }
}

void KeyMerge::merge_row(MergeAcc& acc, const PairTask& task, const JoinRow& lr) const {
  const PmappingGroup& pg = step_.step->groups[task.right];
  const double cascade_in = cascade_in_of(task, lr);
  const std::vector<std::uint32_t>& siblings = step_.siblings[task.right];
  for (std::uint32_t m = 0; m < pg.rows.size(); ++m) {
    const PmappingRow& pr = pg.rows[m];
    ++acc.paired;
    const double usage = task.full_bytes + cascade_in + pr.sram_bytes;
    if (usage > ctx_.capacity) {
      ++acc.over_capacity;
      continue;
    }
    if (use_sibling_ && siblings[m] != kNoSibling &&
        sibling_dominates(task, lr, cascade_in, usage, pr, pg.rows[siblings[m]], ctx_.capacity, ctx_.obj.sram_objective, sram_floor_,
                          ctx_.obj.summed_columns, ctx_.obj.sram_objective && !ctx_.slack(step_.s).exact())) {
      ++acc.dropped;
      continue;
    }
    PendingRow p;
    p.row = merged_row(task, lr, cascade_in, usage, pr.cycles, pr.offchip_bytes, pr.energy_pj, pr.sram_bytes);
    if (filtered(acc, p.row)) {
      ++acc.dropped;
      continue;
    }
    p.parent = lr.trace;
    p.group = task.right;
    p.member = m;
    acc.rows.push_back(p);
    ++acc.stored;
  }
}

MergeAcc KeyMerge::run() const {
  MergeAcc total;
  total.threshold = ctx_.first_prune_rows;
  if (units_.size() <= 1 || key_rows_ <= kUnitRows) {  // one unit's worth: no parallel reduction
    merge_units(total, 0, units_.size());
    return total;
  }
  struct Body {
    const KeyMerge* merge;
    MergeAcc acc;
    explicit Body(const KeyMerge* m) : merge(m) { acc.threshold = merge->first_prune(); }
    Body(Body& other, tbb::split) : merge(other.merge) { acc.threshold = merge->first_prune(); }
    void operator()(const tbb::blocked_range<std::size_t>& r) { merge->merge_units(acc, r.begin(), r.end()); }
    void join(Body& rhs) {
      acc.rows.insert(acc.rows.end(), rhs.acc.rows.begin(), rhs.acc.rows.end());
      acc.paired += rhs.acc.paired;
      acc.stored += rhs.acc.stored;
      acc.over_capacity += rhs.acc.over_capacity;
      acc.dropped += rhs.acc.dropped;
      merge->maybe_prune(acc);
    }
  };
  Body body(this);
  tbb::parallel_deterministic_reduce(tbb::blocked_range<std::size_t>(0, units_.size(), 1), body, tbb::simple_partitioner());
  return std::move(body.acc);
}

}  // namespace

void merge_key(const PassContext& ctx, const PassRules& rules, const StepData& step, std::size_t num_keys, KeyWork& kw) {
  // The key bound's regions for this key when its sets are known and it has many candidate rows, else
  // the step's.
  std::size_t candidates = 0;
  for (const PairTask& task : *kw.pairs) candidates += step.rows_of(task.left).size() * step.step->groups[task.right].rows.size();
  DropRegions own;
  if (!step.regions.empty()) own = rules.key_bound.regions(step.s, *kw.key, candidates);
  const DropRegions& regions = own.empty() ? step.regions : own;
  KeyColumns key;
  key.open_cascade = kw.open_cascade;
  key.cols = join_columns(ctx.obj.objectives, kw.open_cascade);
  key.floor = rules.future.floor_of(*kw.key);
  key.clamp = kw.clamp.known ? &kw.clamp : nullptr;
  const KeyMerge merge(ctx, rules, step, kw, key, regions);
  MergeAcc total = merge.run();
  if (ctx.stop_requested()) return;
  merge.prune(total);
  merge.bound_filter(total);
  // Kept until the step's keys are all merged: only the front's rows (the table was sized for rows
  // merged between prunings), so the next keys reuse the memory instead of touching more.
  total.rows.shrink_to_fit();
  kw.rows = std::move(total.rows);
  kw.paired = total.paired;
  kw.stored = total.stored;
  kw.over_capacity = total.over_capacity;
  kw.dominated = total.dropped;
  // A quick pass keeps at most a few rows per key.
  const std::size_t beam = ctx.beam > 0 ? step_beam(ctx.beam, num_keys) : 0;
  if (ctx.beam > 0 && step.s + 1 < ctx.num_steps && kw.rows.size() > beam) {
    thin_to_beam(kw.rows, key, beam);
    kw.thinned = true;
  }
  if (ctx.speedups.lookahead) kw.acceptable = rules.lookahead.acceptable(*kw.key, step.s);
}

}  // namespace npumap::search::join_internal
