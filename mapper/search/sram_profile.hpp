#pragma once
// The SRAM in use while each layer of a complete mapping runs: the join's own accounting (join.cpp,
// "SRAM in use while layer L runs") replayed along one front point's choices. Its maximum is the
// point's peak SRAM (the join keeps only that maximum); the report prints it per layer.

#include <vector>

#include "mapper/search/join.hpp"

namespace npumap::search {

/// Per step of `problem` (layers in topological order): the SRAM bytes in use while that layer runs
/// in `point`'s mapping: the whole tensors live in SRAM (or in the arena when the arena is SRAM),
/// the layer's own reservation (weight and bias copies), and an open cascade's rolling buffers and
/// held tensors. The maximum over the steps equals point.peak_sram_bytes.
std::vector<double> sram_profile(const JoinProblem& problem, const FrontPoint& point);

}  // namespace npumap::search
