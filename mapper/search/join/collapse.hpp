#pragma once
// Release of finished tensors, and collapse (JoinSpeedups::collapse).
//
// Release (SRAM accounting, always on): after a layer runs, every entry of the new key that is not a
// network output and whose last consumer is this step or earlier is finished (marked dead: it reserves
// nothing and matches nothing from now on). While the layer's output is rolling (the cascade stays
// open), a finished tensor's bytes stay reserved until the cascade closes: they move into the
// cascade column as the pair's `held` bytes (docs/design/search.md "Join", step 6).
//
// Collapse drops: the dead entries from the key, so that groups differing only in finished tensors
// become one key and their rows are pruned together.
//
// Safe: a dead entry can affect no later step. Pairing reads only live entries, the SRAM in use and
// every bound read only live entries, and its bytes (when held) are already in the rows' cascade
// column. So two keys equal but for dead entries have the same completions with the same additions,
// and pruning their rows together is the per-key pruning of state.hpp, exact.

#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// Marks the entries of `key` that step `st` finishes dead and returns the bytes of those that stay
/// reserved until the open cascade closes (0 unless `output_rolling`); with collapse on, removes them.
double release_finished(const PassContext& ctx, LiveKey& key, int st, bool output_rolling);

}  // namespace npumap::search::join_internal
