#pragma once
// The sizing answer (issue 36): from a front, how much SRAM buys which latency. For each latency slack
// s in {1%, 5%, 10%}: the point of least peak SRAM whose cycles are at most (1 + s) times the front's
// best (ties: fewer cycles, then fewer off-chip bytes, then the earlier point); and the best latency
// at the arch's SRAM capacity (every point fits it, so the point of least cycles; ties: less SRAM, then
// fewer off-chip bytes). Read from the reported front: with an ε-front each figure is within the
// front's guarantee of the exact front's.

#include <cstddef>
#include <optional>
#include <vector>

#include "mapper/search/map_network.hpp"  // search::FrontPoint

namespace npumap::report {

/// The latency slacks of the sizing answer.
inline constexpr double kSizingSlacks[] = {0.01, 0.05, 0.10};

struct SizingAnswer {
  /// Per slack of kSizingSlacks, the index of the chosen point in the front.
  std::vector<std::size_t> least_sram_within;
  std::size_t best_at_capacity = 0;
};

/// The sizing answer of `front`; nothing for an empty front.
std::optional<SizingAnswer> sizing_answer(const std::vector<search::FrontPoint>& front);

}  // namespace npumap::report
