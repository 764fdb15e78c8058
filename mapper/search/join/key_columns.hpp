#pragma once
// How the rows of one key compare while they are pruned (docs/design/search.md "Join", step 8): the
// pruning columns (the objectives, plus the open cascade's SRAM while the key holds a rolling buffer)
// and the values the exact bounds put in them: peak SRAM raised to the key's future SRAM floor
// (future_sram_bound.hpp), the cascade column clamped to the key's limits (cascade_clamp.hpp). Rows
// keep their true values; only the comparison reads these.

#include <algorithm>
#include <vector>

#include "mapper/search/join/cascade_clamp.hpp"
#include "mapper/search/join/future_sram_bound.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

struct KeyColumns {
  std::vector<Column> cols;
  bool open_cascade = false;
  SramFloor floor;
  const CascadeLimits* clamp = nullptr;  ///< the key's limits when known (the cascade column is clamped)

  /// The value row has in column c while pruning.
  double value(const JoinRow& row, Column c) const {
    if (c == Column::CascadeSram && clamp != nullptr) return clamp->clamp(row.cascade);
    if (c != Column::Sram) return row.value(c);
    return std::max({row.peak, floor.future, open_cascade ? row.cascade + floor.next : 0.0});
  }
  /// The SRAM floor of a row without cascade SRAM.
  double sram_floor() const { return std::max(floor.future, open_cascade ? floor.next : 0.0); }
};

}  // namespace npumap::search::join_internal
