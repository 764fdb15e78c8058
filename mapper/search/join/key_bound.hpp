#pragma once
// Key bound (JoinSpeedups::key_bound; docs/design/search.md "Join", "Key bound"): the incumbent bound
// (incumbent_bound.hpp) with rest sets of each key's own completions instead of the step's.
//
// Drops: what the incumbent bound drops, tested against a tighter lower bound: the step's rest sets
// bound what the later layers add whatever the key, but a key fixes much of its completions (which
// groups of the next layer can follow it, which tensors stay resident and what they reserve).
//
// Safe: the keys every step can produce are enumerated first (the pairing of pairing.hpp without rows:
// a superset of the keys the pass meets, with the pairs between them), and backwards over that key
// graph the set of a key after step s is, per SRAM interval, the thinned Pareto front of the union over
// its pairs at step s + 1 of (that layer group's rows that fit the interval and the SRAM capacity,
// counting the whole tensors the pair keeps resident) + (the set of the key the pair leads to). Every
// completion of a row of the key goes through one of those pairs and adds at least one point of the
// set, so it is a lower-bound set as the step's is, and the incumbent bound's argument holds.
//
// Cost: building it costs 10-20 µs per (key, interval) set, so it is used when the quick pass before
// paired at least kKeyBoundRowsPerSet rows per such set (KeyBound::Automatic), only while the sets
// number at most kMaxBoundSets (memory), and only for keys with at least kKeyBoundMinRows candidate
// rows (the others use the step's regions).

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "mapper/search/join/incumbent_bound.hpp"
#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// What the quick pass before an exact or quick pass paired: whether the key bound repays its cost.
struct PassHistory {
  std::uint64_t rows_paired = 0;
  std::uint64_t keys = 0;  ///< groups out, summed over the steps
  std::vector<std::uint64_t> step_rows;  ///< rows paired per step (the progress line's estimate)
};

class KeyBoundSets {
 public:
  /// Builds the sets when the key bound is on for this pass (two summed objectives, an incumbent bound).
  KeyBoundSets(const PassContext& ctx, const IncumbentBound& bound, const PassHistory& history);
  /// The drop regions of `key` after step s, whose pairs have `candidates` candidate rows; empty: use
  /// the step's regions.
  DropRegions regions(int s, const LiveKey& key, std::size_t candidates) const;

 private:
  struct Edge {
    std::uint32_t from;
    std::uint32_t right;
    std::uint32_t to;
    double full_bytes;
  };
  struct StepSets {
    std::unordered_map<LiveKey, std::uint32_t, LiveKeyHash> index;  ///< key after the step -> its sets
    std::vector<std::vector<std::vector<Point>>> sets;               ///< [key][interval]
  };
  /// The keys of every step and the edges between them; false when they are too many.
  bool enumerate(std::vector<std::vector<LiveKey>>& keys, std::vector<std::vector<Edge>>& edges) const;
  /// The sets of the keys after step s - 1 from those after step s.
  void build_step(int s, const std::vector<Edge>& edges);

  const PassContext& ctx_;
  const IncumbentBound& bound_;
  std::vector<StepSets> steps_;  ///< per step; empty: not used
};

}  // namespace npumap::search::join_internal
