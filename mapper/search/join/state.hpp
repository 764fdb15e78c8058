#pragma once
// The join's state (docs/design/search.md "Join"). After step s it is a set of *left groups*. A left
// group is keyed by the compatibility of every tensor still live (produced or introduced, with a
// consumer still to come, or a network output) and holds rows of partial mappings of layers 0..s:
//   cycles, off-chip bytes, energy   sums over the layers so far
//   peak SRAM                        max over the steps so far of the SRAM in use
//   cascade SRAM                     while a cascade (a chain of layers fused through rolling buffers)
//                                    is open: what stays reserved until it closes (the transient SRAM
//                                    of its members, its resolved rolling buffers and the tensors its
//                                    members finished reading)
// Everything else that can affect later layers is a function of the key, so two rows with the same
// key compare on these columns alone and Pareto pruning per key is exact: later steps add to the
// sums and take maxima, both monotone.
//
// Each row carries a trace node: per step, (parent node of the step before, layer group, layer row),
// from which a front point's choice of mapping per layer is read back (TraceChain).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "mapper/search/compat.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/objectives.hpp"

namespace npumap::search::join_internal {

constexpr std::uint32_t kNoTrace = std::numeric_limits<std::uint32_t>::max();

/// One live tensor in a left group's key.
struct LiveEntry {
  int tensor = 0;
  TensorCompat compat;
  bool dead = false;  ///< finished; kept only when collapsing is off; reserves nothing, matches nothing
  friend auto operator<=>(const LiveEntry&, const LiveEntry&) = default;
  friend bool operator==(const LiveEntry&, const LiveEntry&) = default;
};
/// A left group's key: its live entries sorted by tensor.
using LiveKey = std::vector<LiveEntry>;

/// The live (not dead) entry of `tensor` in `key`, or null.
const LiveEntry* find_live(const LiveKey& key, int tensor);
/// Inserts `entry` at its place in tensor order.
void insert_live(LiveKey& key, const LiveEntry& entry);
/// The key holds a live rolling entry: a cascade is open.
bool has_open_cascade(const LiveKey& key);

/// A hash of a key, for grouping a step's pairs by the key they produce.
struct LiveKeyHash {
  std::size_t operator()(const LiveKey& key) const;
};

/// A row of a left group (a partial mapping).
struct JoinRow {
  double cycles = 0.0;
  double offchip = 0.0;
  double energy = 0.0;
  double peak = 0.0;
  double cascade = 0.0;
  std::uint32_t trace = kNoTrace;
  /// The ε-front only (JoinOptions::step_slack; epsilon_front.hpp): per column (cycles, off-chip
  /// bytes, energy, peak SRAM), how far this row may lie above the rows it stands in for (rows an
  /// ε-pruning dropped for it): every such row's value is at least value - err (low()). Rounded up to
  /// float (set_err), so the bound only loosens; 0 in the exact join. Merges carry the sums' errors
  /// unchanged and raise the peak's low to the SRAM in use (merged_row).
  float err[4] = {0.0f, 0.0f, 0.0f, 0.0f};

  /// The row's value in a join column.
  double value(Column c) const {
    switch (c) {
      case Column::Cycles: return cycles;
      case Column::OffchipBytes: return offchip;
      case Column::Sram: return peak;
      case Column::Energy: return energy;
      case Column::CascadeSram: return cascade;
    }
    return 0.0;
  }
  /// The least value a row it stands in for may have in column c (summed or peak) (its value less its err).
  double low(Column c) const { return value(c) - err_of(c); }
  double err_of(Column c) const {
    switch (c) {
      case Column::Cycles: return err[0];
      case Column::OffchipBytes: return err[1];
      case Column::Energy: return err[2];
      case Column::Sram: return err[3];
      default: return 0.0;
    }
  }
  /// Sets err of column c to at least `e` (float rounded up, so never below e).
  void set_err(Column c, double e) {
    float f = static_cast<float>(e);
    if (static_cast<double>(f) < e) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    switch (c) {
      case Column::Cycles: err[0] = f; break;
      case Column::OffchipBytes: err[1] = f; break;
      case Column::Energy: err[2] = f; break;
      case Column::Sram: err[3] = f; break;
      default: break;
    }
  }
};

/// A merged row before pruning: its columns and where it came from.
struct PendingRow {
  JoinRow row;
  std::uint32_t parent = kNoTrace;
  std::uint32_t group = 0;
  std::uint32_t member = 0;
  bool bound_checked = false;  ///< passed the incumbent bound of its step
};

/// A left group: a key and its rows.
struct LeftGroup {
  LiveKey key;
  std::vector<JoinRow> rows;
};

/// One row's step in the parent chain of a partial mapping.
struct TraceNode {
  std::uint32_t parent;  ///< index into the previous step's nodes
  std::uint32_t group;   ///< the layer group of this step
  std::uint32_t row;     ///< the row of that group
};

/// The parent chains of every row alive, one level of nodes per step. After each step the level before
/// keeps only the nodes the new rows descend from, so memory follows the rows alive rather than every
/// row ever kept.
class TraceChain {
 public:
  explicit TraceChain(int num_steps) : levels_(static_cast<std::size_t>(num_steps)) {}
  /// The nodes of step s (one per row out of the step), filled by the step.
  std::vector<TraceNode>& level(int s) { return levels_[static_cast<std::size_t>(s)]; }
  /// Once level s is complete: drops the nodes of level s - 1 that no node of s descends from.
  void keep_ancestors(int s);
  /// The (group, row) of every step of the row whose last node is `node` (of the last step).
  void trace_back(std::uint32_t node, FrontPoint& point) const;

 private:
  std::vector<std::vector<TraceNode>> levels_;
};

}  // namespace npumap::search::join_internal
