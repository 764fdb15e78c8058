// The pass strategy (docs/design/search.md "Join", "Incumbent bound" and the report's comparison without
// fusion): join() runs quick passes of growing width, each bounded by the fronts of the ones before,
// then the exact pass bounded by the union of their fronts; join_best() bounds the exact pass by the
// least first objective instead.

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "mapper/search/join/epsilon_front.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/join/pass.hpp"
#include "mapper/search/join/quick_passes.hpp"
#include "mapper/search/pareto.hpp"

namespace npumap::search {
namespace {

using join_internal::ClampCache;
using join_internal::Incumbents;
using join_internal::PassHistory;

/// join_pass with its wall time in the debug log (-vv).
JoinResult timed_pass(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& run, std::size_t beam,
                      const Incumbents* incumbents, ClampCache& clamp_cache, bool& thinned, const PassHistory& history = {}) {
  const auto start = std::chrono::steady_clock::now();
  JoinResult r = join_internal::join_pass(problem, options, run, beam, incumbents, thinned, history, clamp_cache);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (beam > 0) {
    spdlog::debug("join quick pass ({} rows per key): {:.1f} ms, {} points", beam, took.count(), r.front.size());
  } else {
    spdlog::debug("join exact pass: {:.1f} ms, {} points", took.count(), r.front.size());
  }
  return r;
}

/// Counts a quick pass that turned out exact towards a progress display (it did not count as it ran).
void count_progress(const JoinRunContext& run, const JoinResult& r) {
  if (run.progress == nullptr) return;
  const auto n = static_cast<std::uint64_t>(r.steps.size());
  run.progress->steps_total.fetch_add(n);
  run.progress->steps_done.fetch_add(n);
  run.progress->rows_paired.fetch_add(r.totals().rows_paired);
}

/// `r` (stopped) with the best of the complete mappings the finished quick passes found: the Pareto
/// front of `found` on the objectives, sorted by them in order (ties: the order found).
JoinResult with_found_before_stop(JoinResult r, const std::vector<FrontPoint>& found, const std::vector<Objective>& objectives) {
  const std::size_t k = objectives.size();
  if (found.empty() || k == 0) return r;
  std::vector<double> values;
  for (const FrontPoint& p : found) {
    for (Objective o : objectives) values.push_back(p.objective(o));
  }
  std::vector<std::uint32_t> keep = pareto_front(values.data(), found.size(), k);
  std::sort(keep.begin(), keep.end(), [&](std::uint32_t a, std::uint32_t b) {
    for (std::size_t j = 0; j < k; ++j) {
      if (values[a * k + j] != values[b * k + j]) return values[a * k + j] < values[b * k + j];
    }
    return a < b;
  });
  // Equal objective vectors (two passes found the same mapping's values): the first only.
  keep.erase(std::unique(keep.begin(), keep.end(), [&](std::uint32_t a, std::uint32_t b) {
               return std::equal(values.begin() + a * k, values.begin() + (a + 1) * k, values.begin() + b * k);
             }),
             keep.end());
  for (std::uint32_t i : keep) r.found_before_stop.push_back(found[i]);
  return r;
}

/// With a step slack (JoinOptions::step_slack) the incumbent bound may drop a row whose completions a
/// quick pass's mapping covers only within the slack: those mappings join the front (callers filter it).
JoinResult with_incumbents(JoinResult r, const std::vector<FrontPoint>& found, const JoinOptions& options) {
  if (options.step_slack > 0.0) r.front.insert(r.front.end(), found.begin(), found.end());
  return r;
}

/// Sets the value of objective `o` of `p`.
void set_objective(FrontPoint& p, Objective o, double v) {
  switch (o) {
    case Objective::Cycles: p.cycles = v; break;
    case Objective::OffchipBytes: p.offchip_bytes = v; break;
    case Objective::Energy: p.energy_pj = v; break;
    case Objective::Sram: p.peak_sram_bytes = v; break;
  }
}

}  // namespace

JoinResult join(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& run) {
  if (options.epsilon > 0.0) {
    JoinOptions own = options;
    own.known_mappings.clear();  // the ε-front bounds itself (epsilon_front.hpp)
    return join_internal::epsilon_join(problem, own, run);
  }
  ClampCache clamp_cache;  // the passes of this join share their cascade clamp's limits
  bool thinned = false;
  if (!options.speedups.incumbent_bound || options.tolerance > 0.0) return timed_pass(problem, options, run, 0, nullptr, clamp_cache, thinned);
  // Quick passes of growing width, each bounded by the incumbents of the ones before; the union of
  // their fronts (its Pareto front, sorted by the objectives) bounds the exact pass.
  const std::size_t k = options.objectives.size();
  Incumbents inc;
  inc.k = k;
  if (options.step_slack == 0.0 && k > 0 && !options.known_mappings.empty()) {
    NPUMAP_ASSERT(options.known_mappings.size() % k == 0);
    JoinResult known;  // only their values are read
    for (std::size_t i = 0; i < options.known_mappings.size(); i += k) {
      FrontPoint p;
      for (std::size_t j = 0; j < k; ++j) set_objective(p, options.objectives[j], options.known_mappings[i + j]);
      known.front.push_back(p);
    }
    join_internal::add_incumbents(inc, known, options.objectives);
  }
  PassHistory history;
  std::vector<FrontPoint> found;  // complete mappings of the finished quick passes, for a stop
  const std::vector<std::size_t>& beams =
      options.speedups.quick_beams.empty() ? join_internal::default_quick_beams(k) : options.speedups.quick_beams;
  for (std::size_t beam : beams) {
    thinned = false;
    JoinResult quick = timed_pass(problem, options, run, beam, inc.size() > 0 ? &inc : nullptr, clamp_cache, thinned, history);
    if (quick.partial) return with_found_before_stop(std::move(quick), found, options.objectives);
    history = PassHistory{};
    for (const JoinStepStats& st : quick.steps) {
      history.rows_paired += st.rows_paired;
      history.keys += st.groups_out;
      history.step_rows.push_back(st.rows_paired);
    }
    if (!thinned) {
      // No key ever held more rows than the pass keeps: it was the exact join (bounded by the fronts
      // before it, which is exact), so it is the answer.
      count_progress(run, quick);
      return with_incumbents(std::move(quick), found, options);
    }
    found.insert(found.end(), quick.front.begin(), quick.front.end());
    join_internal::add_incumbents(inc, quick, options.objectives);
  }
  JoinResult exact = timed_pass(problem, options, run, 0, &inc, clamp_cache, thinned, history);
  if (exact.partial) return with_found_before_stop(std::move(exact), found, options.objectives);
  return with_incumbents(std::move(exact), found, options);
}

JoinResult join_best(const JoinProblem& problem, const JoinOptions& given, const JoinRunContext& run) {
  // The least first objective is exact whatever the ε of the front (epsilon_front.hpp uses this).
  JoinOptions options = given;
  options.epsilon = 0.0;
  options.known_mappings.clear();  // bounded by its own least first objective
  const auto first_best = [&](JoinResult r) {
    if (r.front.empty()) return r;
    const Objective o = options.objectives.front();
    const double best = r.front.front().objective(o);
    r.front.erase(std::remove_if(r.front.begin(), r.front.end(), [&](const FrontPoint& p) { return p.objective(o) > best; }),
                  r.front.end());
    return r;
  };
  if (options.objectives.empty() || options.objectives.front() == Objective::Sram || !options.speedups.incumbent_bound ||
      options.tolerance > 0.0) {
    return first_best(join(problem, options, run));
  }
  // The least first objective, from the join on it alone (few rows per key: cheap). A mapping's sums
  // are added in the same order whatever the objectives, so it is the full front's least value.
  JoinOptions alone = options;
  alone.objectives = {options.objectives.front()};
  JoinRunContext quiet = run;
  quiet.progress = nullptr;
  const JoinResult least = join(problem, alone, quiet);
  if (least.partial || least.front.empty()) return least;
  // Then the join on every objective, bounded by that mapping (a real one: an exact incumbent) and
  // capped at its first objective: only the front's points with that value remain, and its first point
  // is the full front's.
  Incumbents inc;
  inc.k = options.objectives.size();
  for (Objective o : options.objectives) inc.values.push_back(least.front.front().objective(o));
  inc.cap = least.front.front().objective(options.objectives.front());
  JoinOptions capped = options;
  if (capped.speedups.key_bound == KeyBound::Automatic) capped.speedups.key_bound = KeyBound::On;
  ClampCache clamp_cache;
  bool thinned = false;
  return first_best(timed_pass(problem, capped, run, 0, &inc, clamp_cache, thinned));
}

}  // namespace npumap::search
