// One join step (step.hpp).

#include "mapper/search/join/step.hpp"

#include <algorithm>
#include <chrono>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <spdlog/spdlog.h>

#include "mapper/search/join/combined_left.hpp"
#include "mapper/search/join/dominance_snapshot.hpp"
#include "mapper/search/join/merge_kernel.hpp"
#include "mapper/search/join/quick_passes.hpp"
#include "mapper/search/join/sibling_bound.hpp"

namespace npumap::search::join_internal {
namespace {

/// Summaries of the layer's groups: least values (least-value skips) and siblings (sibling bound).
void summarise_layer_groups(const PassContext& ctx, StepData& data) {
  const auto& groups = data.step->groups;
  data.group_least.resize(groups.size());
  data.siblings.resize(groups.size());
  const bool siblings = ctx.speedups.sibling_bound && ctx.grid.exact();
  ctx.arena.run([&] {
    tbb::parallel_for(std::size_t{0}, groups.size(), [&](std::size_t h) {
      data.group_least[h] = least_of_group(groups[h]);
      if (siblings && !groups[h].rows.empty()) data.siblings[h] = find_siblings(groups[h].rows, ctx.obj.summed_columns);
    });
  });
}

/// Summaries of the sources some pair reads (a left group whose every pair was moved to a combined
/// table is not read): least values (least-value skips) and the pilot's samples (dominance filter).
void summarise_sources(const PassContext& ctx, const StepPairs& tasks, StepData& data) {
  const std::size_t num_sources = data.left->size() + data.combined.size();
  std::vector<char> used(num_sources, 0);
  for (const auto& [key, pairs] : tasks) {
    for (const PairTask& t : pairs) used[t.left] = 1;
  }
  data.source_least.resize(num_sources);
  data.samples.resize(num_sources);
  const bool least = ctx.speedups.least_value_skips;
  const bool samples = ctx.speedups.dominance_filter && ctx.grid.exact();
  ctx.arena.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, static_cast<std::uint32_t>(num_sources)),
                      [&](const tbb::blocked_range<std::uint32_t>& range) {
                        for (std::uint32_t gi = range.begin(); gi != range.end(); ++gi) {
                          if (!used[gi]) continue;
                          if (least) least_of_source(data.rows_of(gi), data.source_least[gi]);
                          if (samples) data.samples[gi] = pilot_samples(data.rows_of(gi), ctx.pilot_min_rows);
                        }
                      });
  });
}

/// The keys of the step, with the cascade clamp's limits of those holding an open cascade.
std::vector<KeyWork> make_work(PassRules& rules, int s, const StepPairs& tasks,
                               const std::vector<char>& introduced) {
  std::vector<KeyWork> work;
  work.reserve(tasks.size());
  for (const auto& [key, pairs] : tasks) {
    KeyWork kw;
    kw.key = &key;
    kw.pairs = &pairs;
    kw.open_cascade = has_open_cascade(key);
    work.push_back(std::move(kw));
  }
  if (rules.clamp.applies(s)) {
    std::vector<const LiveKey*> keys;
    std::vector<CascadeLimits*> out;
    for (KeyWork& kw : work) {
      if (!kw.open_cascade) continue;
      keys.push_back(kw.key);
      out.push_back(&kw.clamp);
    }
    if (!keys.empty()) rules.clamp.find_limits(s, keys, introduced, out);
  }
  return work;
}

/// Phase 3, in key order: the counters, the new left groups and their trace nodes (each surviving key's
/// first node in order, then the groups and nodes in parallel).
std::vector<LeftGroup> assemble(const PassContext& ctx, int s, std::vector<KeyWork>& work, TraceChain& trace, JoinStepStats& stats,
                                bool& thinned) {
  std::vector<TraceNode>& level = trace.level(s);
  std::vector<std::pair<std::uint32_t, std::size_t>> out_keys;  // (work index, first trace node)
  std::size_t rows_kept = 0;
  for (std::uint32_t k = 0; k < work.size(); ++k) {
    const KeyWork& kw = work[k];
    thinned = thinned || kw.thinned;
    stats.rows_paired += kw.paired;
    stats.rows_stored += kw.stored;
    stats.dropped_sram_capacity += kw.over_capacity;
    stats.dropped_dominated += kw.dominated;
    if (kw.rows.empty()) continue;
    if (!kw.acceptable) {
      ++stats.groups_dropped_incompatible;
      stats.rows_dropped_incompatible += kw.rows.size();
      continue;
    }
    out_keys.emplace_back(k, rows_kept);
    rows_kept += kw.rows.size();
  }
  stats.rows_out += rows_kept;
  level.resize(rows_kept);
  std::vector<LeftGroup> merged(out_keys.size());
  ctx.arena.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out_keys.size()), [&](const tbb::blocked_range<std::size_t>& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        KeyWork& kw = work[out_keys[i].first];
        std::size_t node = out_keys[i].second;
        LeftGroup& out = merged[i];
        out.key = *kw.key;
        out.rows.reserve(kw.rows.size());
        for (const PendingRow& p : kw.rows) {
          JoinRow row = p.row;
          row.trace = static_cast<std::uint32_t>(node);
          level[node++] = TraceNode{p.parent, p.group, p.member};
          out.rows.push_back(row);
        }
        std::vector<PendingRow>().swap(kw.rows);  // copied: its memory serves the next keys
      }
    });
  });
  stats.groups_out = merged.size();
  trace.keep_ancestors(s);
  return merged;
}

}  // namespace

bool run_step(const PassContext& ctx, PassRules& rules, int s, std::vector<LeftGroup>& left, std::vector<char>& introduced,
              TraceChain& trace, JoinResult& result, bool& thinned) {
  const auto step_start = std::chrono::steady_clock::now();
  if (ctx.stop_requested()) return false;
  StepData data;
  data.s = s;
  data.step = &ctx.step(s);
  data.left = &left;
  summarise_layer_groups(ctx, data);
  JoinStepStats stats;
  stats.left_groups = left.size();
  stats.right_groups = data.step->groups.size();
  std::vector<const LiveKey*> left_keys;
  left_keys.reserve(left.size());
  for (const LeftGroup& g : left) left_keys.push_back(&g.key);
  StepPairs tasks = match_pairs(ctx, s, left_keys, introduced, stats.group_pairs_matched);
  mark_introduced(ctx, s, introduced);
  if (ctx.speedups.combine_left) data.combined = combine_left_tables(ctx, left, tasks);
  summarise_sources(ctx, tasks, data);
  std::vector<KeyWork> work = make_work(rules, s, tasks, introduced);
  rules.future.begin_step(s, introduced);
  data.regions = rules.bound.step_regions(s);
  // Phase 2, in parallel over the new keys.
  ctx.arena.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, work.size(), 1),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        for (std::size_t k = range.begin(); k != range.end(); ++k) merge_key(ctx, rules, data, work.size(), work[k]);
                      },
                      tbb::simple_partitioner());
  });
  if (ctx.stop_requested()) return false;
  if (ctx.beam > 0 && s + 1 < ctx.num_steps) keep_best_keys(work, ctx.speedups.quick_keys, ctx.obj.summed_columns);
  left = assemble(ctx, s, work, trace, stats, thinned);
  const std::chrono::duration<double, std::milli> step_took = std::chrono::steady_clock::now() - step_start;
  spdlog::debug("join step {}: {} left groups x {} layer groups, {} pairs, {} rows paired, {} stored, {} groups / {} rows out, {:.1f} ms",
                s, stats.left_groups, stats.right_groups, stats.group_pairs_matched, stats.rows_paired, stats.rows_stored, stats.groups_out,
                stats.rows_out, step_took.count());
  result.steps.push_back(stats);
  if (JoinProgress* progress = ctx.beam == 0 ? ctx.run.progress : nullptr; progress != nullptr) {
    progress->rows_paired.fetch_add(stats.rows_paired, std::memory_order_relaxed);
    progress->steps_done.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

}  // namespace npumap::search::join_internal
