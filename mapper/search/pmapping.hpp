#pragma once
// Pmapping groups: the per-layer stage's output and the join's input (docs/design/architecture.md §3).

#include <cstdint>
#include <vector>

#include "mapper/search/compat.hpp"
#include "mapper/search/objectives.hpp"
#include "mapper/search/shared_vector.hpp"

namespace npumap::search {

/// One Pareto-optimal pmapping of a layer, reduced to what the join needs. With its layer, the
/// (template_index, candidate) pair identifies the full decision set so the pass can be rebuilt; the
/// row names no layer, so identical layers share their rows.
struct PmappingRow {
  double cycles = 0.0;         ///< the pass's Total cycles
  double offchip_bytes = 0.0;  ///< unscaled bytes read and written in DRAM and off-chip flash
  double energy_pj = 0.0;      ///< from the arch's energy table
  double sram_bytes = 0.0;     ///< SRAM the pass itself reserves while it runs (weight and bias copies)
  std::uint32_t template_index = 0;  ///< the layer's template (its job) that produced it
  std::uint32_t candidate = 0;       ///< block-config index within that job

  /// The row's value in a stage column (CascadeSram is a join column: 0 here).
  double value(Column c) const {
    switch (c) {
      case Column::Cycles: return cycles;
      case Column::OffchipBytes: return offchip_bytes;
      case Column::Energy: return energy_pj;
      case Column::Sram: return sram_bytes;
      case Column::CascadeSram: return 0.0;
    }
    return 0.0;
  }
};

/// A compatibility and the Pareto-optimal pmappings that have it. compat[i] is the layer's i-th
/// input tensor's side; compat.back() is the output tensor's side. The compatibility is shared by
/// the group's copies (identical layers, the join problems); so are whole lists of groups
/// (LayerResult::groups, JoinStep::groups).
struct PmappingGroup {
  SharedVector<TensorCompat> compat;
  std::vector<PmappingRow> rows;
};

}  // namespace npumap::search
