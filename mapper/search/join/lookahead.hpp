#pragma once
// Look-ahead (JoinSpeedups::lookahead).
//
// Drops: a new key of a step, with all its rows (counted under `incompatible`), when one of its live
// tensors has a later consumer none of whose groups accepts that tensor's (residence, layout) at that
// input position.
//
// Safe: a complete mapping through that key must pair, at that consumer's step, with a group that
// agrees with the key on the tensor (pairing.hpp matches live inputs on residence and layout), and
// the consumer has none, so the key has no complete mapping and dropping it removes no point of the
// front. It only saves the work of carrying the key to the step where it would find no partner.

#include <utility>
#include <vector>

#include "mapper/search/join/join.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

class Lookahead {
 public:
  explicit Lookahead(const JoinProblem& problem);
  /// Every live tensor of `key` (a key after step s) is accepted by each of its later consumers.
  bool acceptable(const LiveKey& key, int s) const;

 private:
  std::vector<std::vector<std::pair<int, int>>> consumers_;  ///< per tensor: (step, input slot)
  std::vector<std::vector<unsigned>> accepted_;              ///< per (step, slot): (residence, layout) bits
};

}  // namespace npumap::search::join_internal
