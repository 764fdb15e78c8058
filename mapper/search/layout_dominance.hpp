#pragma once
// Feature-map layouts that never pay (docs/design/search.md "Layouts that never pay"). A feature map
// the NPU may store linear or NHCWB16 doubles the join's keys for as long as it is live: an unrolled
// LSTM's 49 input projections, computed first and read one per cell, would make 2^49 of them. Where
// every layer that writes or reads the map does no worse with it linear (each row of a group storing
// it NHCWB16 weakly dominated, in every column a row carries, by a row of the group with the same
// compatibilities but the map linear) the NHCWB16 groups are dropped: a mapping storing the map NHCWB16
// becomes, layer by layer, one storing it linear that is no worse in any objective (a linear map never
// holds more bytes). The front is unchanged; of equal mappings the linear one is kept.

#include "mapper/search/join/join.hpp"

namespace npumap::search {

/// Drops from `problem`'s steps, per feature map and residence, the groups storing the map NHCWB16
/// where linear is never worse (above). Rolling buffers are left alone. Deterministic.
void drop_dominated_layouts(JoinProblem& problem);

}  // namespace npumap::search
