#pragma once
// Dominance filter: snapshot and pilot (JoinSpeedups::dominance_filter; docs/design/search.md "Join",
// "Dominance filter"). The data structure is mapper/search/dominance_filter.hpp.
//
// Drops: a merged row, before it is stored (counted as `dominated_after_join`), when a row of a
// snapshot of rows already merged into the same key strictly dominates it in the key's pruning
// columns (key_columns.hpp). The snapshot is rebuilt at every pruning from the surviving rows plus a
// *pilot*: before a key is merged, each of its pairs whose source has at least kPilotMinRows rows
// merges a few of them (evenly spaced in cycles order, plus the least in each column) with all its
// layer rows, and the front of those merges seeds the snapshot, so the filter works from the first
// row on. Used while the key has at most kFilterColumns pruning columns (with more, the level grid
// misses most dominators and its upkeep costs more than it saves), and not with a tolerance.
//
// Safe: every snapshot row is a real merge of the key (pilot rows too), so a row one of them strictly
// dominates would be dropped by the next pruning, either by that row or by the row that dominates it
// then (dominance is transitive), or, if that row is dropped by the incumbent bound first, by the
// bound, which drops every row a dropped row dominates. So the front, every choice of the pruning and
// every counter are unchanged (a skipped row counts as dominated, as the pruning would count it).

#include <cstdint>
#include <vector>

#include "mapper/search/dominance_filter.hpp"
#include "mapper/search/join/key_columns.hpp"
#include "mapper/search/join/pairing.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// Rows merged into an empty table before its first pruning, which builds the first snapshot
/// (JoinSpeedups::first_prune_rows replaces it in tests).
constexpr std::size_t kFirstPrune = 1024;
/// Pruning columns up to which the dominance filter is used. With 4 or more (three objectives and an
/// open cascade, four objectives) its level grid misses most dominating rows and its upkeep costs more
/// than it saves (measured: MobileNet-V2, cycles/offchip/sram, 3.5 s without it there, 4.5 s with).
constexpr std::size_t kFilterColumns = 3;
/// Left rows per source sampled (evenly in cycles order) for the pilot.
constexpr std::size_t kPilotRows = 16;
/// Sources with fewer rows than this are not sampled (merging them all costs what sampling would);
/// JoinSpeedups::pilot_min_rows replaces it in tests.
constexpr std::size_t kPilotMinRows = 4 * kPilotRows;

/// The rows of a source sampled for the pilot: at evenly spaced positions of (cycles, index) order,
/// plus the least in each other column; ascending. Empty for a source of fewer than `min_rows` rows.
std::vector<std::uint32_t> pilot_samples(const std::vector<JoinRow>& rows, std::size_t min_rows);

/// What the pilot of a key reads: per pair, its source's rows and samples, and its layer group.
struct PilotSource {
  const PairTask* task;
  const std::vector<JoinRow>* rows;
  const std::vector<std::uint32_t>* samples;
  const PmappingGroup* group;
};

/// The pilot of a key: the Pareto front, in the key's pruning columns (row-major), of the merges of the
/// sampled rows of every pair whose source has at least `min_rows` rows with all its layer rows that
/// fit `capacity`.
std::vector<double> build_pilot(const std::vector<PilotSource>& sources, const KeyColumns& key, double capacity,
                                std::size_t min_rows);

/// Rebuilds `filter` from the pilot and `rows` (the table just pruned).
void refresh_snapshot(DominanceFilter& filter, const std::vector<double>& pilot, const std::vector<PendingRow>& rows,
                      const KeyColumns& key);

}  // namespace npumap::search::join_internal
