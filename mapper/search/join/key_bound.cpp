// Key bound (key_bound.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/key_bound.hpp"

#include <chrono>
#include <map>

#include <tbb/parallel_for.h>

#include <spdlog/spdlog.h>

#include "mapper/search/join/pairing.hpp"

namespace npumap::search::join_internal {
namespace {

/// (Key, SRAM interval) sets over all steps up to which the key bound is used: each holds up to
/// kRestPoints points, so this caps its memory (more: the rest sets alone bound the pass).
constexpr std::size_t kMaxBoundSets = std::size_t{1} << 19;
/// Rows the quick pass before paired per (key, interval) set from which the key bound is automatic.
/// It repays its cost on yolo-fastest and ResNet-50 on ethos-u65 (460-1300 rows per set before, 20-40%
/// fewer rows paired), not on the unrolled LSTMs (360 rows per set).
constexpr std::uint64_t kKeyBoundRowsPerSet = 400;
/// Candidate rows (left rows times layer rows over a key's pairs) from which a key's own bound is used.
constexpr std::size_t kKeyBoundMinRows = std::size_t{1} << 14;

}  // namespace

KeyBoundSets::KeyBoundSets(const PassContext& ctx, const IncumbentBound& bound, const PassHistory& history)
    : ctx_(ctx), bound_(bound) {
  const KeyBound mode = ctx.speedups.key_bound;
  const bool use = mode == KeyBound::On || (mode == KeyBound::Automatic && history.keys > 0 &&
                                            history.rows_paired >= kKeyBoundRowsPerSet * history.keys * bound.num_levels());
  if (!use || !bound.has_incumbents() || !bound.uses_regions()) return;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<LiveKey>> keys(static_cast<std::size_t>(ctx.num_steps));
  std::vector<std::vector<Edge>> edges(static_cast<std::size_t>(ctx.num_steps));  // at step s: keys of s - 1 -> keys of s
  const bool enumerated = enumerate(keys, edges);
  std::size_t num_sets = 0;
  for (const auto& here : keys) num_sets += here.size() * bound.num_levels();
  if (enumerated) {
    steps_.resize(static_cast<std::size_t>(ctx.num_steps));
    for (int s = 0; s < ctx.num_steps; ++s) {
      StepSets& kb = steps_[static_cast<std::size_t>(s)];
      const std::vector<LiveKey>& here = keys[static_cast<std::size_t>(s)];
      for (std::uint32_t k = 0; k < here.size(); ++k) kb.index.emplace(here[k], k);
      kb.sets.resize(here.size());
    }
    for (auto& sets : steps_.back().sets) sets.assign(bound.num_levels(), std::vector<Point>{{0.0, 0.0}});
    for (int s = ctx.num_steps - 1; s >= 1; --s) build_step(s, edges[static_cast<std::size_t>(s)]);
  }
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  spdlog::debug("join key bound: {} (key, interval) sets{}, {:.1f} ms", num_sets, enumerated ? "" : " (too many: not used)",
                took.count());
}

bool KeyBoundSets::enumerate(std::vector<std::vector<LiveKey>>& keys, std::vector<std::vector<Edge>>& edges) const {
  std::vector<char> intro(ctx_.problem.tensors.size(), 0);
  std::vector<LiveKey> before{LiveKey{}};
  std::size_t num_sets = 0;
  for (int s = 0; s < ctx_.num_steps; ++s) {
    std::vector<const LiveKey*> left_keys;
    for (const LiveKey& k : before) left_keys.push_back(&k);
    std::uint64_t unused = 0;
    StepPairs step_tasks = match_pairs(ctx_, s, left_keys, intro, unused);
    mark_introduced(ctx_, s, intro);
    std::vector<LiveKey>& here = keys[static_cast<std::size_t>(s)];
    for (auto& [key, pairs] : step_tasks) {
      for (const PairTask& task : pairs) {
        edges[static_cast<std::size_t>(s)].push_back(Edge{task.left, task.right, static_cast<std::uint32_t>(here.size()), task.full_bytes});
      }
      here.push_back(std::move(key));
    }
    num_sets += here.size() * bound_.num_levels();
    if (num_sets > kMaxBoundSets) return false;
    before = here;
  }
  return true;
}

void KeyBoundSets::build_step(int s, const std::vector<Edge>& step_edges) {
  const std::size_t num_levels = bound_.num_levels();
  const std::vector<double>& levels = bound_.levels();
  const JoinStep& st = ctx_.step(s);
  const Column c0 = ctx_.obj.summed_columns[0];
  const Column c1 = ctx_.obj.summed_columns[1];
  // What a completion through each distinct (layer group, next key) adds, per interval.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> slot;
  std::vector<const Edge*> distinct;
  std::vector<std::uint32_t> slot_of_edge(step_edges.size());
  for (std::size_t e = 0; e < step_edges.size(); ++e) {
    const auto [it, fresh] = slot.try_emplace({step_edges[e].right, step_edges[e].to}, static_cast<std::uint32_t>(distinct.size()));
    if (fresh) distinct.push_back(&step_edges[e]);
    slot_of_edge[e] = it->second;
  }
  std::vector<std::vector<std::vector<Point>>> through(distinct.size());
  const StepSets& next = steps_[static_cast<std::size_t>(s)];
  ctx_.arena.run([&] {
    tbb::parallel_for(std::size_t{0}, distinct.size(), [&](std::size_t d) {
      const Edge& e = *distinct[d];
      const PmappingGroup& g = st.groups[e.right];
      through[d].resize(num_levels);
      for (std::size_t l = 0; l < num_levels; ++l) {
        const std::vector<Point>& after = next.sets[e.to][l];
        if (after.empty()) continue;
        std::vector<Point> pts;
        for (const PmappingRow& r : g.rows) {
          const double u = e.full_bytes + r.sram_bytes;
          if (u > ctx_.capacity || (l + 1 < num_levels && !(u < levels[l + 1]))) continue;
          pts.emplace_back(r.value(c0), r.value(c1));
        }
        if (pts.empty()) continue;
        through[d][l] = sum_bound(pts, after);
      }
    });
  });
  // Each key of step s - 1: the union over its edges.
  StepSets& prev = steps_[static_cast<std::size_t>(s) - 1];
  std::vector<std::vector<std::uint32_t>> out_of(prev.sets.size());
  for (std::size_t e = 0; e < step_edges.size(); ++e) out_of[step_edges[e].from].push_back(slot_of_edge[e]);
  ctx_.arena.run([&] {
    tbb::parallel_for(std::size_t{0}, prev.sets.size(), [&](std::size_t k) {
      std::vector<std::uint32_t>& outs = out_of[k];
      std::sort(outs.begin(), outs.end());
      outs.erase(std::unique(outs.begin(), outs.end()), outs.end());
      prev.sets[k].resize(num_levels);
      const std::vector<Point> zero{{0.0, 0.0}};
      for (std::size_t l = 0; l < num_levels; ++l) {
        std::vector<Point> all;
        for (std::uint32_t d : outs) all.insert(all.end(), through[d][l].begin(), through[d][l].end());
        if (all.empty()) continue;
        prev.sets[k][l] = sum_bound(all, zero);  // the union's thinned front
      }
    });
  });
}

DropRegions KeyBoundSets::regions(int s, const LiveKey& key, std::size_t candidates) const {
  if (steps_.empty() || (candidates < kKeyBoundMinRows && ctx_.speedups.key_bound != KeyBound::On)) return {};
  const StepSets& kb = steps_[static_cast<std::size_t>(s)];
  const auto found = kb.index.find(key);
  if (found == kb.index.end()) return {};
  return bound_.regions_for([&](std::size_t l) -> const std::vector<Point>& { return kb.sets[found->second][l]; });
}

}  // namespace npumap::search::join_internal
