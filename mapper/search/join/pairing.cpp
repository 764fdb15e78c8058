// Pairing of compatible groups (pairing.hpp).

#include "mapper/search/join/pairing.hpp"

#include <map>
#include <unordered_map>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/user_error.hpp"
#include "mapper/search/join/collapse.hpp"

namespace npumap::search::join_internal {
namespace {

using BucketKey = std::vector<std::pair<Residence, Layout>>;

/// Which of a step's tensors are live before it runs (the same for every left key).
struct LiveSlots {
  std::vector<char> input;  ///< per input slot
  bool output = false;      ///< the output, made live by an earlier writer (a concatenation)
};

LiveSlots live_slots(const PassContext& ctx, int st, const std::vector<char>& introduced) {
  const JoinStep& step = ctx.step(st);
  LiveSlots live;
  live.input.assign(step.inputs.size(), 0);
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    const JoinTensor& t = ctx.tensor(step.inputs[i]);
    live.input[i] = (t.producer_step >= 0 && t.producer_step < st) || introduced[static_cast<std::size_t>(step.inputs[i])];
  }
  // A tensor several layers write (a concatenation) is live from its first writer on: a later writer
  // must store its part where and how the first one placed the tensor.
  const JoinTensor& out = ctx.tensor(step.output);
  live.output = out.producer_step >= 0 && out.producer_step < st;
  return live;
}

/// The (residence, layout) of a side's live slots, by `compat_of(slot)`.
template <typename CompatOf>
BucketKey bucket_key(const LiveSlots& live, const CompatOf& compat_of) {
  BucketKey key;
  for (std::size_t i = 0; i < live.input.size(); ++i) {
    if (live.input[i]) key.push_back({compat_of(i).residence, compat_of(i).layout});
  }
  if (live.output) key.push_back({compat_of(live.input.size()).residence, compat_of(live.input.size()).layout});
  return key;
}

/// The layer's groups that can be paired at all, bucketed by their live slots.
std::map<BucketKey, std::vector<std::uint32_t>> bucket_groups(const JoinStep& step, const LiveSlots& live) {
  std::map<BucketKey, std::vector<std::uint32_t>> buckets;
  for (std::uint32_t h = 0; h < step.groups.size(); ++h) {
    const PmappingGroup& g = step.groups[h];
    // Inputs read twice by one layer (x + x) must agree with themselves.
    bool self_consistent = true;
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      for (std::size_t j = i + 1; j < step.inputs.size(); ++j) {
        if (step.inputs[i] == step.inputs[j] && !(g.compat[i] == g.compat[j])) self_consistent = false;
      }
      if (!live.input[i] && g.compat[i].residence == Residence::Rolling) self_consistent = false;
    }
    if (self_consistent) buckets[bucket_key(live, [&](std::size_t i) { return g.compat[i]; })].push_back(h);
  }
  return buckets;
}

/// The pair of left key `left_key` (live entries per slot `entries`) with layer group h: its new key
/// and task, or false when the group's in-place output is not allowed here.
bool make_pair(const PassContext& ctx, int st, const LiveSlots& live, const LiveKey& left_key,
               const std::vector<const LiveEntry*>& entries, std::uint32_t h, LiveKey& key, PairTask& task) {
  const JoinStep& step = ctx.step(st);
  const PmappingGroup& pg = step.groups[h];
  task.right = h;
  task.sram_grid = ctx.sram_grid.empty() ? nullptr : &ctx.sram_grid;
  key = left_key;
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    const int t = step.inputs[i];
    if (entries[i] != nullptr) {
      if (pg.compat[i].residence == Residence::Rolling && !task.input_rolling) {
        task.input_rolling = true;
        task.rolling_bytes = static_cast<double>(rolling_buffer_bytes(ctx.tensor(t), entries[i]->compat.rows, pg.compat[i].rows));
      }
    } else if (find_live(key, t) == nullptr) {
      insert_live(key, LiveEntry{t, pg.compat[i], false});
    }
  }
  TensorCompat out_compat = pg.compat.back();
  task.output_rolling = out_compat.residence == Residence::Rolling;
  const int over = out_compat.over_input;
  out_compat.over_input = -1;  // later layers see an ordinary tensor
  if (over >= 0) {
    // In place: the output overwrites input `over`, which must be produced by an earlier layer, die
    // at this layer and not be a network output; the shared storage counts once. A tensor several
    // layers write is never written in place.
    const JoinTensor& in = ctx.tensor(step.inputs[static_cast<std::size_t>(over)]);
    if (live.output || in.producer_step < 0 || in.network_output || in.last_consumer_step != st) return false;
    task.full_bytes -= ctx.reserved(step.output, out_compat);
  }
  if (!live.output) insert_live(key, LiveEntry{step.output, out_compat, false});
  for (const LiveEntry& e : key) {
    if (!e.dead) task.full_bytes += ctx.reserved(e.tensor, e.compat);
  }
  // Release what no later layer needs (collapse.hpp).
  task.held_bytes = release_finished(ctx, key, st, task.output_rolling);
  return true;
}

}  // namespace

void mark_introduced(const PassContext& ctx, int st, std::vector<char>& introduced) {
  for (int t : ctx.step(st).inputs) {
    if (ctx.tensor(t).producer_step < 0) introduced[static_cast<std::size_t>(t)] = 1;
  }
}

StepPairs match_pairs(const PassContext& ctx, int st, const std::vector<const LiveKey*>& left_keys,
                      const std::vector<char>& introduced, std::uint64_t& matched) {
  const JoinStep& step = ctx.step(st);
  const LiveSlots live = live_slots(ctx, st, introduced);
  const std::size_t out_slot = step.inputs.size();
  const auto buckets = bucket_groups(step, live);
  // Each left key's pairs (the new key and the pair), in parallel; then grouped in left-key order.
  const std::size_t num_keys = left_keys.size();
  std::vector<std::vector<std::pair<LiveKey, PairTask>>> pairs_of(num_keys);
  std::vector<std::uint64_t> matched_of(num_keys, 0);
  const auto pair_left_key = [&](std::uint32_t gi) {
    const LiveKey& left_key = *left_keys[gi];
    std::vector<const LiveEntry*> entries(step.inputs.size() + 1, nullptr);
    for (std::size_t i = 0; i <= out_slot; ++i) {
      if (i < out_slot ? !live.input[i] : !live.output) continue;
      entries[i] = find_live(left_key, i < out_slot ? step.inputs[i] : step.output);
      NPUMAP_ASSERT(entries[i] != nullptr);
    }
    const auto bucket = buckets.find(bucket_key(live, [&](std::size_t i) { return entries[i]->compat; }));
    if (bucket == buckets.end()) return;
    for (std::uint32_t h : bucket->second) {
      ++matched_of[gi];
      PairTask task;
      task.left = gi;
      LiveKey key;
      if (make_pair(ctx, st, live, left_key, entries, h, key, task)) pairs_of[gi].emplace_back(std::move(key), task);
    }
  };
  ctx.arena.run([&] {
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, static_cast<std::uint32_t>(num_keys)),
                      [&](const tbb::blocked_range<std::uint32_t>& range) {
                        for (std::uint32_t gi = range.begin(); gi != range.end(); ++gi) pair_left_key(gi);
                      });
  });
  // The pairs by the key they produce, in sorted key order (grouped through a hash table first: keys
  // can hold many entries, and an ordered map compared them once per level of its tree).
  StepPairs tasks;
  std::unordered_map<LiveKey, std::size_t, LiveKeyHash> slot_of;
  for (std::uint32_t gi = 0; gi < num_keys; ++gi) {
    matched += matched_of[gi];
    for (auto& [key, task] : pairs_of[gi]) {
      const auto [it, fresh] = slot_of.try_emplace(key, tasks.size());
      if (fresh) tasks.emplace_back(std::move(key), std::vector<PairTask>{});
      tasks[it->second].second.push_back(task);
    }
  }
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return tasks;
}

}  // namespace npumap::search::join_internal
