#pragma once
// The memory a front point uses while each of its layers runs, recomputed after the join for the
// reports (Vela's per-layer "SRAM Usage", its summary's memory used): the join keeps only each
// partial mapping's peak, so this walks one point's layer choices through the same accounting
// (join.cpp's header): the live tensors resident in SRAM, the open cascade's SRAM (rolling buffers,
// the members' own reservations and the tensors they finished, held until the cascade closes) and
// the layer's own reservation. Its maximum over the layers is the point's peak SRAM.

#include <vector>

#include "mapper/search/join/join.hpp"

namespace npumap::search {

struct PointMemory {
  std::vector<double> sram_bytes;   ///< per join step: SRAM in use while the layer runs
  std::vector<double> arena_bytes;  ///< per join step: live feature maps in the tensor arena (any memory)
};

/// The memory of `point` (a point of the front of `problem`) at each step.
PointMemory point_memory(const JoinProblem& problem, const FrontPoint& point);

}  // namespace npumap::search
