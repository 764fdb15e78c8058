// The search pipeline, end to end.
//
//   map_networks: every layer of every workload -> run_shared_stage (each distinct layer once, all
//   jobs as tasks of one arena) -> per workload: stage_of_workload -> unless a layer has no pmapping:
//   make_join_problem + join (with fusion) -> the same join without rolling buffers, for the report's
//   comparison -> keep rates with the join's causes -> status.
//   map_network is map_networks of one workload.
//
// Threads: with options.threads > 0 everything runs in an arena of that size; with 0, in the caller's
// arena (a sweep runs many points in its own parallel loop). Joins of several workloads run in
// parallel. Nothing here touches process-wide state (signals, logging set-up, global TBB limits).

#include "mapper/search/map_network.hpp"

#include <algorithm>
#include <optional>

#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "mapper/search/long_lived.hpp"

namespace npumap::search {
namespace {

/// The columns Vela's choice reads: a per-layer stage pruned on fewer of them (`--objectives
/// cycles,sram`, say) may drop every row Vela would choose.
const std::vector<Objective>& vela_columns() {
  static const std::vector<Objective> columns = {Objective::Cycles, Objective::OffchipBytes, Objective::Sram};
  return columns;
}

/// Whether Vela's schedule reads the search's stage (it kept every column Vela reads and offers
/// rolling buffers, or it is Vela's own: --baseline-only), rather than a stage of its own.
bool vela_reads_search_stage(const SearchOptions& options) {
  const bool stage_keeps_all = std::all_of(vela_columns().begin(), vela_columns().end(), [&](Objective o) {
    return std::find(options.objectives.begin(), options.objectives.end(), o) != options.objectives.end();
  });
  return (stage_keeps_all && options.fusion) || options.baseline_only;
}

/// Vela's schedule of `w` into r.vela: from the search's stage when it kept every column Vela reads
/// and offers rolling buffers (Vela cascades on every arch), else from a
/// stage of its own pruned on those columns, kept in r.vela_stage for the report. In the caller's
/// arena, with the same stop.
void find_vela_schedule(const arch::Arch& arch, const workloads::Workload& w, const SearchOptions& options,
                        const common::StopToken& stop, SearchResult& r) {
  if (vela_reads_search_stage(options)) {
    r.vela = vela_schedule(arch, w, r.stage, stop, options.vela_block_config_limit);
    return;
  }
  StageOptions own;
  own.chunk_size = options.chunk_size;
  own.objectives = vela_columns();
  own.space.fusion = true;  // Vela cascades (rolling buffers) on every arch
  own.stop = stop;
  std::vector<LayerRef> refs;
  for (int l = 0; l < static_cast<int>(w.layers.size()); ++l) refs.push_back(LayerRef{&w, l});
  StageResult vela_stage = stage_of_workload(run_shared_stage(arch, refs, own, nullptr), 0, refs.size());
  if (vela_stage.partial) return;
  r.vela = vela_schedule(arch, w, vela_stage, stop, options.vela_block_config_limit);
  if (!r.vela) return;
  // Vela's problem holds the rows its point chose from; the report reads only this stage's layer
  // spaces and jobs (to rebuild the passes), so its rows go (on a chain, most of the run's memory).
  for (LayerResult& lr : vela_stage.layers) lr.groups = SharedVector<PmappingGroup>();
  r.vela_stage = std::move(vela_stage);
}

/// The join of one workload whose stage is done (r.stage: stage_of_workload(shared, first_ref, ...)).
void join_network(const arch::Arch& arch, const workloads::Workload& w, const SearchOptions& options,
                  const SharedStage& shared, std::size_t first_ref, const common::StopToken& stop,
                  JoinProgress* progress, SearchResult& r) {
  r.keep_rates = r.stage.overall;
  r.partial = r.stage.partial;
  bool some_layer_empty = false;
  for (const LayerResult& lr : r.stage.layers) {
    std::size_t rows = 0;
    for (const auto& g : lr.groups) rows += g.rows.size();
    some_layer_empty = some_layer_empty || rows == 0;
  }
  if (options.baseline_only && !options.per_layer_only && !some_layer_empty && !r.partial) {
    // Vela's point is the whole answer: its problem and a one-point front, so every report shows it.
    find_vela_schedule(arch, w, options, stop, r);
    r.joined = JoinResult{};
    if (r.vela) {
      r.problem = r.vela->problem;
      r.joined->front.push_back(r.vela->point);
    } else {
      r.partial = stop.stop_requested();
    }
  } else if (!options.per_layer_only && !some_layer_empty) {
    JoinProblem problem = make_join_problem(arch, w, r.stage, options.fusion);
    JoinOptions join_options;
    join_options.objectives = options.objectives;
    join_options.epsilon = options.epsilon;
    JoinRunContext context;
    context.threads = 0;  // the arena this runs in
    context.stop = stop;
    context.progress = progress;
    // Without any rolling group (nothing in this network can fuse) the join without fusion is the
    // same problem: its best point is the fused front's.
    bool can_fuse = false;
    for (const JoinStep& step : problem.steps) {
      for (const PmappingGroup& g : step.groups) {
        for (const TensorCompat& c : g.compat) can_fuse = can_fuse || c.residence == Residence::Rolling;
      }
    }
    // The comparison without fusion runs alongside the join when there are two threads or more (its
    // tasks fill the join's serial moments; neither result depends on the other's scheduling), after
    // it on one thread (so a stop during the comparison finds the join done); it is used when the
    // join found a front.
    std::optional<JoinResult> unfused;
    const bool compare = options.fusion && options.compare_without_fusion && can_fuse;
    if (progress != nullptr) progress->steps_planned.fetch_add(problem.steps.size() * long_lived_joins(problem) * (compare ? 2 : 1));
    if (compare) {
      if (tbb::this_task_arena::max_concurrency() > 1) {
        const JoinProblem plain = make_join_problem(arch, w, r.stage, false);
        tbb::parallel_invoke([&] { r.joined = join_long_lived(problem, join_options, context); },
                             [&] { unfused = join_best_long_lived(plain, join_options, context); });
      } else {
        r.joined = join_long_lived(problem, join_options, context);
        // Made once the join is done, so the two problems and the join's tables do not peak together.
        if (!r.joined->front.empty()) unfused = join_best_long_lived(make_join_problem(arch, w, r.stage, false), join_options, context);
      }
    } else {
      r.joined = join_long_lived(problem, join_options, context);
    }
    r.problem = std::move(problem);
    add_join_causes(r.keep_rates, r.joined->totals());
    r.partial = r.partial || r.joined->partial;
    if (options.fusion && options.compare_without_fusion && !r.joined->front.empty() && !can_fuse) {
      r.unfused = UnfusedSummary{r.joined->front[0]};
    } else if (unfused && !r.joined->front.empty()) {
      r.partial = r.partial || unfused->partial;
      if (!unfused->front.empty()) r.unfused = UnfusedSummary{unfused->front[0]};
    }
  }
  if (options.vela_baseline && !options.baseline_only && !options.per_layer_only && !some_layer_empty && !r.partial) {
    // The join problem (its steps share the stage's groups; its tables are its own) goes while
    // Vela's stage and problem are built (on a long chain the four together were the run's peak) and
    // is made again after (unless the caller makes it itself: keep_join_problem); the join did not
    // change it, so it is the same. So does the stage when Vela builds one of its own: every layer's
    // result, expanded from the shared stage, which expands it again after (the same function of the
    // same data, so the same stage).
    const bool had_problem = r.problem.has_value();
    r.problem.reset();
    const bool own_stage = !vela_reads_search_stage(options);
    if (own_stage) r.stage = StageResult();
    find_vela_schedule(arch, w, options, stop, r);
    if (r.vela && !options.keep_join_problem) {
      // Vela's point as the report reads it; its problem and stage go before the search's stage is
      // made again (on a long chain the three were the run's peak).
      r.vela_mappings = vela_point_mappings(arch, w, r.stage_of_vela(), *r.vela);
      r.vela->problem = JoinProblem();
      r.vela_stage.reset();
    }
    if (own_stage) r.stage = stage_of_workload(shared, first_ref, w.layers.size());
    if (had_problem && options.keep_join_problem) r.problem = make_join_problem(arch, w, r.stage, options.fusion);
  }
  if (r.partial) {
    r.status = SearchStatus::Interrupted;
  } else if (some_layer_empty || (r.joined && r.joined->front.empty())) {
    r.status = SearchStatus::NoValidMapping;
  } else {
    r.status = SearchStatus::Ok;
  }
}

MultiSearchResult run_all(const arch::Arch& arch, const std::vector<const workloads::Workload*>& workloads,
                          const SearchOptions& options, const common::StopToken& stop, SearchProgress* progress) {
  std::vector<LayerRef> refs;
  std::vector<std::size_t> first_ref;
  for (const workloads::Workload* w : workloads) {
    first_ref.push_back(refs.size());
    for (int l = 0; l < static_cast<int>(w->layers.size()); ++l) refs.push_back(LayerRef{w, l});
  }
  StageOptions stage_options;
  stage_options.chunk_size = options.chunk_size;
  stage_options.objectives = options.objectives;
  stage_options.space.fusion = options.fusion;
  stage_options.stop = stop;
  if (options.baseline_only) {  // only Vela's schedule: its columns, rolling buffers for its cascades
    stage_options.objectives = vela_columns();
    stage_options.space.fusion = true;
  }
  const SharedStage shared =
      run_shared_stage(arch, refs, stage_options, progress != nullptr ? &progress->stage : nullptr, options.share_layers);

  MultiSearchResult out;
  out.layers_total = refs.size();
  out.layers_distinct = shared.stage.layers.size();
  for (const KeepCounters& k : shared.stage.counters) out.evaluated += k.evaluated;
  out.networks.resize(workloads.size());
  tbb::parallel_for(std::size_t{0}, workloads.size(), [&](std::size_t i) {
    SearchResult& r = out.networks[i];
    r.stage = stage_of_workload(shared, first_ref[i], workloads[i]->layers.size());
    for (const LayerResult& lr : r.stage.layers) {
      for (std::size_t t = 0; t < lr.space.templates.size(); ++t) r.evaluated += r.stage.counters_of(lr, t).evaluated;
    }
    join_network(arch, *workloads[i], options, shared, first_ref[i], stop, progress != nullptr ? &progress->join : nullptr, r);
  });
  for (const SearchResult& r : out.networks) out.partial = out.partial || r.partial;
  return out;
}

}  // namespace

MultiSearchResult map_networks(const arch::Arch& arch, const std::vector<const workloads::Workload*>& workloads,
                               const SearchOptions& options, const common::StopToken& stop, SearchProgress* progress) {
  if (options.threads <= 0) return run_all(arch, workloads, options, stop, progress);
  tbb::task_arena arena(options.threads);
  MultiSearchResult out;
  arena.execute([&] { out = run_all(arch, workloads, options, stop, progress); });
  return out;
}

SearchResult map_network(const arch::Arch& arch, const workloads::Workload& workload, const SearchOptions& options,
                         const common::StopToken& stop, SearchProgress* progress) {
  MultiSearchResult all = map_networks(arch, {&workload}, options, stop, progress);
  return std::move(all.networks.front());
}

}  // namespace npumap::search
