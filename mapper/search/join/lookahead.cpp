// Look-ahead (lookahead.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/lookahead.hpp"

#include "common/user_error.hpp"

namespace npumap::search::join_internal {
namespace {

/// Bit (residence, layout) of the look-ahead's masks.
unsigned compat_bit(const TensorCompat& c) {
  return 1u << (static_cast<unsigned>(c.residence) * 2 + static_cast<unsigned>(c.layout));
}

}  // namespace

Lookahead::Lookahead(const JoinProblem& problem)
    : consumers_(problem.tensors.size()), accepted_(problem.steps.size()) {
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const JoinStep& step = problem.steps[s];
    accepted_[s].assign(step.inputs.size(), 0u);
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      consumers_[static_cast<std::size_t>(step.inputs[i])].push_back({static_cast<int>(s), static_cast<int>(i)});
    }
    for (const auto& g : step.groups) {
      NPUMAP_ASSERT(g.compat.size() == step.inputs.size() + 1);
      for (std::size_t i = 0; i < step.inputs.size(); ++i) accepted_[s][i] |= compat_bit(g.compat[i]);
    }
  }
}

bool Lookahead::acceptable(const LiveKey& key, int s) const {
  for (const LiveEntry& e : key) {
    if (e.dead) continue;
    for (const auto& [c_step, slot] : consumers_[static_cast<std::size_t>(e.tensor)]) {
      if (c_step > s && (accepted_[static_cast<std::size_t>(c_step)][static_cast<std::size_t>(slot)] & compat_bit(e.compat)) == 0) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace npumap::search::join_internal
