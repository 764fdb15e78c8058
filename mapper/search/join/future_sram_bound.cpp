// Future SRAM bound (future_sram_bound.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/future_sram_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npumap::search::join_internal {

FutureSramBound::FutureSramBound(const PassContext& ctx)
    : ctx_(ctx),
      on_(ctx.speedups.future_sram_bound),
      least_own_sram_(static_cast<std::size_t>(ctx.num_steps)),
      fresh_cache_(static_cast<std::size_t>(ctx.num_steps)) {
  if (!on_) return;
  for (int s = 0; s < ctx.num_steps; ++s) {
    for (const PmappingGroup& g : ctx.step(s).groups) {
      double least = std::numeric_limits<double>::infinity();
      for (const PmappingRow& r : g.rows) least = std::min(least, r.sram_bytes);
      least_own_sram_[static_cast<std::size_t>(s)].push_back(least);
    }
  }
}

void FutureSramBound::begin_step(int s, const std::vector<char>& introduced) {
  s_ = s;
  if (!on_) return;
  const int num_steps = ctx_.num_steps;
  std::vector<double> fresh_min(static_cast<std::size_t>(num_steps), 0.0);
  for (int t = s + 1; t < num_steps; ++t) {
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
    if (cacheable && hit != cache.end()) {
      fresh_min[static_cast<std::size_t>(t)] = hit->second;
      continue;
    }
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
      best = std::min(best, bytes + least_own_sram_[static_cast<std::size_t>(t)][gi]);
    }
    fresh_min[static_cast<std::size_t>(t)] = std::isfinite(best) ? best : 0.0;
    if (cacheable) cache.emplace_back(mask, fresh_min[static_cast<std::size_t>(t)]);
  }
  // Sparse table over fresh_min: level j holds the maximum of 2^j consecutive steps.
  fresh_levels_.assign(1, std::move(fresh_min));
  for (std::size_t w = 1; 2 * w <= static_cast<std::size_t>(num_steps); w *= 2) {
    const std::vector<double>& prev = fresh_levels_.back();
    std::vector<double> next_level(prev.size() - w);
    for (std::size_t i = 0; i < next_level.size(); ++i) next_level[i] = std::max(prev[i], prev[i + w]);
    fresh_levels_.push_back(std::move(next_level));
  }
}

double FutureSramBound::fresh_max(int a, int b) const {
  std::size_t j = 0;
  while ((std::size_t{2} << j) <= static_cast<std::size_t>(b - a + 1)) ++j;
  const std::vector<double>& lv = fresh_levels_[j];
  return std::max(lv[static_cast<std::size_t>(a)], lv[static_cast<std::size_t>(b + 1) - (std::size_t{1} << j)]);
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
  floor.next = fresh_levels_[0][static_cast<std::size_t>(s + 1)] + live;
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
