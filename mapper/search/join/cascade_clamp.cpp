// Cascade clamp (cascade_clamp.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/cascade_clamp.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <tbb/parallel_for.h>

namespace npumap::search::join_internal {
namespace {

/// Keys with more limits than this are not clamped.
constexpr std::size_t kMaxLimits = std::size_t{1} << 11;

void sort_unique(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/// Sorts `v`, made of ascending runs starting at `runs`, by merging the runs pairwise (O(n log runs)).
void merge_runs(std::vector<double>& v, std::vector<std::size_t>& runs) {
  std::vector<double> buffer(v.size());
  std::vector<std::size_t> merged_runs;
  while (runs.size() > 1) {
    merged_runs.clear();
    for (std::size_t j = 0; j < runs.size(); j += 2) {
      const std::size_t mid = j + 1 < runs.size() ? runs[j + 1] : v.size();
      const std::size_t end = j + 2 < runs.size() ? runs[j + 2] : v.size();
      const auto at = [&](std::size_t x) { return v.begin() + static_cast<std::ptrdiff_t>(x); };
      std::merge(at(runs[j]), at(mid), at(mid), at(end), buffer.begin() + static_cast<std::ptrdiff_t>(runs[j]));
      merged_runs.push_back(runs[j]);
    }
    v.swap(buffer);
    runs.swap(merged_runs);
  }
}

/// The pairs continue the cascade: the new key holds a rolling buffer that the next step reads.
bool continues(const std::vector<PairTask>& pairs) {
  return !pairs.empty() && pairs.front().output_rolling && pairs.front().input_rolling;
}

}  // namespace

void CascadeLimits::set(std::vector<double> values) {
  known = true;
  limits = std::move(values);
  grid.build([this](std::size_t j) { return limits[j]; }, limits.size());
}

/// An open-cascade key of the look-ahead and its limits.
struct CascadeClamp::AheadKey {
  const LiveKey* key = nullptr;
  std::vector<double> limits;
  bool known = true;  ///< limits found (false: the cascade outlasts the look-ahead, or too many limits)
};

/// The look-ahead from one step: levels[d], the open-cascade keys after step s + d; tasks[d], their
/// pairs at step s + d + 1 (levels has one level more than tasks).
struct CascadeClamp::Lookahead {
  std::vector<std::vector<AheadKey>> levels;
  std::vector<StepPairs> tasks;
};

CascadeClamp::CascadeClamp(const PassContext& ctx, ClampCache& cache)
    : ctx_(ctx),
      cache_(cache),
      cascade_run_(static_cast<std::size_t>(ctx.num_steps) + 1, 0),
      distinct_own_sram_(static_cast<std::size_t>(ctx.num_steps), nullptr) {
  cache_.by_step.resize(static_cast<std::size_t>(ctx.num_steps));
  // A cascade that may outlast the look-ahead cannot be clamped, and looking ahead for it would be
  // wasted work (a chain of fusable layers keeps every cascade open as long as it likes).
  for (int s = ctx.num_steps - 1; s >= 0; --s) {
    bool keeps_open = false;
    for (const PmappingGroup& g : ctx.step(s).groups) {
      bool rolling_in = false;
      for (std::size_t i = 0; i + 1 < g.compat.size(); ++i) rolling_in = rolling_in || g.compat[i].residence == Residence::Rolling;
      keeps_open = keeps_open || (rolling_in && g.compat.back().residence == Residence::Rolling);
    }
    cascade_run_[static_cast<std::size_t>(s)] = keeps_open ? cascade_run_[static_cast<std::size_t>(s) + 1] + 1 : 0;
  }
  for (int s = 0; s < ctx.num_steps; ++s) {
    const SharedVector<PmappingGroup>& groups = ctx.step(s).groups;
    auto [it, added] = own_sram_by_groups_.try_emplace(groups.buffer());
    if (added) {
      for (const PmappingGroup& g : groups) {
        std::vector<double> own;
        for (const PmappingRow& r : g.rows) own.push_back(r.sram_bytes);
        sort_unique(own);
        it->second.push_back(std::move(own));
      }
    }
    distinct_own_sram_[static_cast<std::size_t>(s)] = &it->second;
  }
}

bool CascadeClamp::applies(int s) const {
  return ctx_.obj.sram_tiebreak() && ctx_.speedups.cascade_clamp && s + 1 < ctx_.num_steps &&
         cascade_run_[static_cast<std::size_t>(s + 1)] < kMaxAhead;
}

void CascadeClamp::find_limits(int s, const std::vector<const LiveKey*>& keys, const std::vector<char>& introduced,
                               const std::vector<CascadeLimits*>& out) {
  Lookahead la;
  la.levels.resize(1);
  std::vector<std::size_t> out_of;  // level-0 index -> index into keys
  auto& cached = cache_.by_step[static_cast<std::size_t>(s)];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto found = cached.find(*keys[i]);
    if (found != cached.end()) {
      out[i]->set(found->second);
      continue;
    }
    la.levels[0].push_back(AheadKey{keys[i], {}, true});
    out_of.push_back(i);
  }
  explore(s, la, introduced);
  for (std::size_t d = la.tasks.size(); d-- > 0;) resolve(s, la, d);
  // Every key whose limits are known, for the steps after this one and the passes after this one.
  for (std::size_t d = 0; d < la.levels.size() && s + static_cast<int>(d) < ctx_.num_steps; ++d) {
    auto& at = cache_.by_step[static_cast<std::size_t>(s) + d];
    for (const AheadKey& k : la.levels[d]) {
      if (k.known) at.try_emplace(*k.key, k.limits);
    }
  }
  for (std::size_t i = 0; i < la.levels[0].size(); ++i) {
    if (la.levels[0][i].known) out[out_of[i]]->set(std::move(la.levels[0][i].limits));
  }
}

void CascadeClamp::explore(int s, Lookahead& la, const std::vector<char>& introduced) const {
  std::vector<char> intro = introduced;
  for (int d = 0; !la.levels[static_cast<std::size_t>(d)].empty(); ++d) {
    const int st = s + 1 + d;
    std::vector<AheadKey>& here = la.levels[static_cast<std::size_t>(d)];
    if (st >= ctx_.num_steps || d >= kMaxAhead) {
      for (AheadKey& k : here) k.known = false;
      break;
    }
    std::vector<const LiveKey*> keys;
    for (const AheadKey& k : here) keys.push_back(k.key);
    std::uint64_t unused = 0;
    la.tasks.push_back(match_pairs(ctx_, st, keys, intro, unused));
    mark_introduced(ctx_, st, intro);
    std::vector<AheadKey> deeper;
    for (const auto& [next_key, pairs] : la.tasks.back()) {
      if (continues(pairs)) deeper.push_back(AheadKey{&next_key, {}, true});
    }
    la.levels.push_back(std::move(deeper));
  }
}

void CascadeClamp::resolve(int s, Lookahead& la, std::size_t d) const {
  std::vector<AheadKey>& here = la.levels[d];
  const std::vector<AheadKey>& deeper = la.levels[d + 1];
  std::uint32_t deeper_index = 0;  // the deeper keys were made in key order
  // Each key's pairs at the next step, with the deeper key each goes to (kNoTrace: none).
  std::vector<std::vector<std::pair<const PairTask*, std::uint32_t>>> pairs_of_key(here.size());
  for (const auto& [next_key, pairs] : la.tasks[d]) {
    const std::uint32_t to = continues(pairs) ? deeper_index++ : kNoTrace;
    for (const PairTask& task : pairs) pairs_of_key[task.left].emplace_back(&task, to);
  }
  const int st = s + 1 + static_cast<int>(d);
  ctx_.arena.run([&] {
    tbb::parallel_for(std::size_t{0}, here.size(), [&](std::size_t i) { limits_of(st, pairs_of_key[i], deeper, here[i]); });
  });
}

void CascadeClamp::limits_of(int st, const std::vector<std::pair<const PairTask*, std::uint32_t>>& pairs,
                             const std::vector<AheadKey>& deeper, AheadKey& k) const {
  // The SRAM the key's next step adds to the cascade value in each fit check, and per deeper key the
  // amounts by which its value grows on the way there.
  std::vector<double> direct;
  std::map<std::uint32_t, std::vector<double>> shifts;
  for (const auto& [task, to] : pairs) {
    if (!k.known || !task->input_rolling) continue;  // not read: the cascade's value sets no limit
    if (to != kNoTrace && !deeper[to].known) {
      k.known = false;
      continue;
    }
    for (double own : (*distinct_own_sram_[static_cast<std::size_t>(st)])[task->right]) {
      direct.push_back(task->full_bytes + task->rolling_bytes + own);
      if (to != kNoTrace) shifts[to].push_back(task->rolling_bytes + own + task->held_bytes);
    }
  }
  if (k.known) {
    // The candidate limits come as ascending runs (the fit checks, then one run per shift of a deeper
    // key's limits); merged pairwise, they are sorted in O(n log runs).
    sort_unique(direct);
    std::vector<std::size_t> runs{0};
    // capacity - add falls as add rises: the run is the fit checks in reverse.
    for (auto add = direct.rbegin(); add != direct.rend(); ++add) k.limits.push_back(ctx_.capacity - *add);
    for (auto& [to, add] : shifts) {
      sort_unique(add);
      if (k.limits.size() + add.size() * deeper[to].limits.size() > kMaxLimits * 4) {
        k.known = false;
        break;
      }
      for (double a : add) {
        runs.push_back(k.limits.size());
        for (double lim : deeper[to].limits) {
          if (lim >= a) k.limits.push_back(lim - a);
        }
      }
    }
    if (k.known) {
      merge_runs(k.limits, runs);
      std::vector<double>& v = k.limits;
      v.erase(std::unique(v.begin(), v.end()), v.end());
      // A cascade value lies in [0, capacity] (it is part of a usage that fits), so only limits in
      // that range and the first one above it can be the least limit at or above a value.
      v.erase(v.begin(), std::lower_bound(v.begin(), v.end(), 0.0));
      const auto above = std::lower_bound(v.begin(), v.end(), ctx_.capacity);
      if (above != v.end()) v.erase(above + 1, v.end());
      k.known = v.size() <= kMaxLimits;
    }
  }
  if (!k.known) k.limits.clear();
}

void clamp_tiebreak(std::vector<double>& tie, const std::vector<PendingRow>& rows, std::vector<double>& scratch_a,
                    std::vector<double>& scratch_b) {
  const std::size_t n = rows.size();
  constexpr double kSpan = 67108864.0;  // 2^26
  const auto small_whole = [&](double v) { return v >= 0.0 && v < kSpan && v == std::floor(v); };
  bool direct = true;
  for (std::size_t r = 0; r < n && direct; ++r) direct = small_whole(tie[r]) && small_whole(rows[r].row.cascade);
  if (direct) {
    for (std::size_t r = 0; r < n; ++r) tie[r] += rows[r].row.cascade * kSpan;
    return;
  }
  std::vector<double>& by_peak = scratch_a;
  std::vector<double>& by_cascade = scratch_b;
  by_peak.assign(tie.begin(), tie.begin() + static_cast<std::ptrdiff_t>(n));
  by_cascade.resize(n);
  for (std::size_t r = 0; r < n; ++r) by_cascade[r] = rows[r].row.cascade;
  for (std::vector<double>* v : {&by_peak, &by_cascade}) sort_unique(*v);
  const auto rank = [](const std::vector<double>& sorted, double x) {
    return static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
  };
  const double peaks = static_cast<double>(by_peak.size());
  for (std::size_t r = 0; r < n; ++r) tie[r] = rank(by_cascade, rows[r].row.cascade) * peaks + rank(by_peak, tie[r]);
}

}  // namespace npumap::search::join_internal
