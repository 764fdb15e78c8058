// Future SRAM bound (future_sram_bound.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/future_sram_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npumap::search::join_internal {

FutureSramBound::FutureSramBound(const PassContext& ctx)
    : ctx_(ctx),
      on_(ctx.speedups.future_sram_bound),
      least_own_sram_(static_cast<std::size_t>(ctx.num_steps), nullptr),
      fresh_cache_(static_cast<std::size_t>(ctx.num_steps)) {
  if (!on_) return;
  for (int s = 0; s < ctx.num_steps; ++s) {
    const SharedVector<PmappingGroup>& groups = ctx.step(s).groups;
    auto [it, added] = least_by_groups_.try_emplace(groups.buffer());
    if (added) {
      for (const PmappingGroup& g : groups) {
        double least = std::numeric_limits<double>::infinity();
        for (const PmappingRow& r : g.rows) least = std::min(least, r.sram_bytes);
        it->second.push_back(least);
      }
    }
    least_own_sram_[static_cast<std::size_t>(s)] = &it->second;
  }
  touching_.resize(ctx.problem.tensors.size());
  for (int s = 0; s < ctx.num_steps; ++s) {
    const JoinStep& step = ctx.step(s);
    for (int tensor : step.inputs) touching_[static_cast<std::size_t>(tensor)].push_back(s);
    touching_[static_cast<std::size_t>(step.output)].push_back(s);
  }
}

double FutureSramBound::fresh_of(int t, int s, const std::vector<char>& introduced) {
  const JoinStep& later = ctx_.step(t);
  const std::size_t num_inputs = later.inputs.size();
  std::vector<char> live_now(num_inputs, 0);
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < num_inputs; ++i) {
    const int tensor = later.inputs[i];
    const JoinTensor& jt = ctx_.tensor(tensor);
    live_now[i] = (jt.producer_step >= 0 && jt.producer_step <= s) ||
                  (jt.producer_step < 0 && (introduced[static_cast<std::size_t>(tensor)] ||
                                            ctx_.first_consumer[static_cast<std::size_t>(tensor)] <= s));
    if (live_now[i] && i < 63) mask |= std::uint64_t{1} << i;
  }
  // A tensor several layers write (a concatenation) is live from its first writer on: a later writer
  // of it that runs after this step writes into a tensor the keys hold already.
  const JoinTensor& out = ctx_.tensor(later.output);
  const bool out_live = out.producer_step >= 0 && out.producer_step <= s;
  if (out_live) mask |= std::uint64_t{1} << 63;
  auto& cache = fresh_cache_[static_cast<std::size_t>(t)];
  const bool cacheable = num_inputs <= 63;
  const auto hit = std::find_if(cache.begin(), cache.end(), [&](const auto& c) { return c.first == mask; });
  if (cacheable && hit != cache.end()) return hit->second;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t gi = 0; gi < later.groups.size(); ++gi) {
    const PmappingGroup& g = later.groups[gi];
    double bytes = 0.0;
    for (std::size_t i = 0; i < num_inputs; ++i) {
      const int tensor = later.inputs[i];
      bool repeated = false;
      for (std::size_t j = 0; j < i; ++j) repeated = repeated || later.inputs[j] == tensor;
      if (!live_now[i] && !repeated) bytes += ctx_.reserved(tensor, g.compat[i]);
    }
    // An output written in place over an input shares that input's storage; an output already live
    // is counted with the key's entries.
    if (g.compat.back().over_input < 0 && !out_live) bytes += ctx_.reserved(later.output, g.compat.back());
    if (g.rows.empty()) continue;
    best = std::min(best, bytes + (*least_own_sram_[static_cast<std::size_t>(t)])[gi]);
  }
  const double fresh = std::isfinite(best) ? best : 0.0;
  if (cacheable) cache.emplace_back(mask, fresh);
  return fresh;
}

void FutureSramBound::set_fresh(int t, double v) {
  std::size_t i = static_cast<std::size_t>(t) + fresh_size_;
  fresh_tree_[i] = v;
  for (i /= 2; i >= 1; i /= 2) fresh_tree_[i] = std::max(fresh_tree_[2 * i], fresh_tree_[2 * i + 1]);
}

void FutureSramBound::begin_step(int s, const std::vector<char>& introduced) {
  const int previous = s_;
  s_ = s;
  if (!on_) return;
  const int num_steps = ctx_.num_steps;
  if (previous < 0 || s != previous + 1 || fresh_tree_.empty()) {
    // Every later step's fresh part (the first step of a pass, or steps out of order).
    fresh_size_ = static_cast<std::size_t>(std::max(num_steps, 1));
    fresh_tree_.assign(2 * fresh_size_, 0.0);
    for (int t = s + 1; t < num_steps; ++t) fresh_tree_[fresh_size_ + static_cast<std::size_t>(t)] = fresh_of(t, s, introduced);
    for (std::size_t i = fresh_size_; i-- > 1;) fresh_tree_[i] = std::max(fresh_tree_[2 * i], fresh_tree_[2 * i + 1]);
    return;
  }
  // One step on: only the steps that read or write a tensor whose liveness step s changed (its
  // network inputs, now introduced, and its output, now written) see another set of live tensors, so
  // only theirs are recomputed. (Every step recomputing every later one was quadratic in the layers:
  // a 50,000-layer chain spent most of its join here.) Step s itself leaves the range queried.
  set_fresh(s, 0.0);
  const JoinStep& step = ctx_.step(s);
  const auto refresh = [&](int tensor) {
    for (int t : touching_[static_cast<std::size_t>(tensor)]) {
      if (t > s) set_fresh(t, fresh_of(t, s, introduced));
    }
  };
  for (int tensor : step.inputs) {
    if (ctx_.tensor(tensor).producer_step < 0) refresh(tensor);
  }
  if (ctx_.tensor(step.output).producer_step == s) refresh(step.output);
}

double FutureSramBound::fresh_max(int a, int b) const {
  double best = 0.0;  // fresh parts are never negative
  for (std::size_t l = static_cast<std::size_t>(a) + fresh_size_, r = static_cast<std::size_t>(b) + fresh_size_ + 1; l < r;
       l /= 2, r /= 2) {
    if (l & 1) best = std::max(best, fresh_tree_[l++]);
    if (r & 1) best = std::max(best, fresh_tree_[--r]);
  }
  return best;
}

SramFloor FutureSramBound::floor_of(const LiveKey& key) const {
  SramFloor floor;
  const int s = s_;
  const int num_steps = ctx_.num_steps;
  if (!on_ || s + 1 >= num_steps) return floor;
  // The key's entries stay live up to their last consumer (network outputs to the end), so their
  // bytes are a step function of t: constant between consecutive last consumers. Each such range adds
  // its live bytes to the range's largest fresh part. Bytes are whole numbers, so the sums are exact
  // in any order.
  std::vector<std::pair<int, double>> ends;  // (last step live, bytes)
  double live = 0.0;
  for (const LiveEntry& e : key) {
    const JoinTensor& jt = ctx_.tensor(e.tensor);
    if (e.dead) continue;
    const int last = jt.network_output ? num_steps - 1 : std::min(jt.last_consumer_step, num_steps - 1);
    if (last <= s) continue;
    const double bytes = ctx_.reserved(e.tensor, e.compat);
    ends.emplace_back(last, bytes);
    live += bytes;
  }
  std::sort(ends.begin(), ends.end());
  floor.next = fresh_tree_[fresh_size_ + static_cast<std::size_t>(s + 1)] + live;
  int from = s + 1;
  for (std::size_t i = 0; i <= ends.size() && from < num_steps; ++i) {
    const int to = i < ends.size() ? ends[i].first : num_steps - 1;
    if (to >= from) {
      floor.future = std::max(floor.future, fresh_max(from, to) + live);
      from = to + 1;
    }
    if (i < ends.size()) live -= ends[i].second;
  }
  return floor;
}

}  // namespace npumap::search::join_internal
