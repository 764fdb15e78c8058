#pragma once
// Cascade clamp (JoinSpeedups::cascade_clamp; docs/design/search.md "Join", "Cascade clamp"). Only when
// peak SRAM is not an objective.
//
// Drops: rows that differ from another row of their key only in the SRAM of the open cascade, when no
// completion can tell the two values apart. While a key's rows are pruned, the cascade column x is
// compared as the least of the key's *limits* at or above x (+inf above all of them), so such rows
// compare as equal and the pruning keeps one (the least raw cascade, then the least bounded peak: the
// choice comparing the raw value made).
//
// Safe: x matters to a key's completions only through which of them fit, and each completion fits
// exactly when x <= some limit of its own. The step that reads the rolling buffer with layer row r of
// pair p needs x <= capacity - full(p) - buffer(p) - own(r); when it keeps the cascade open its row's
// cascade is x + buffer(p) + own(r) + held(p), which must meet the limits of the key it goes to, so
// x <= limit' - (buffer(p) + own(r) + held(p)) for each of those. Two values with the same least limit
// at or above them admit the same completions, whose sums do not depend on x: a row dominated under
// the clamp has only completions that are dominated or equal in the objectives, so the front is
// unchanged. Rows keep their values.
//
// The limits are found by looking ahead through the cascade to the step that closes it (at most
// kMaxAhead steps, and only when the layers after this one cannot keep a cascade open longer: a chain
// of fusable layers would make every look-ahead fail); a key with more than 2,048 limits is not
// clamped. A key's limits depend only on the key and the steps after its own, so every key whose
// limits are found, at any depth, is cached (ClampCache) for the later steps of the pass and for the
// later passes of the join.

#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mapper/search/join/pairing.hpp"
#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"
#include "mapper/search/sorted_search.hpp"

namespace npumap::search::join_internal {

/// Steps the cascade clamp looks ahead through an open cascade.
constexpr int kMaxAhead = 4;

/// A key's limits: the cascade values at which some completion stops fitting, ascending.
struct CascadeLimits {
  bool known = false;  ///< found: the key's cascade column is clamped
  std::vector<double> limits;
  GridIndex grid;      ///< over `limits`

  void set(std::vector<double> values);
  /// The least limit at or above x, +inf above every limit.
  double clamp(double x) const {
    const std::size_t at = grid.count<false>([this](std::size_t i) { return limits[i]; }, x);
    return at == limits.size() ? std::numeric_limits<double>::infinity() : limits[at];
  }
};

/// The limits of the keys found so far, per step that produces the key (only keys whose limits are
/// known). Shared by the passes of one join.
struct ClampCache {
  std::vector<std::unordered_map<LiveKey, std::vector<double>, LiveKeyHash>> by_step;
};

class CascadeClamp {
 public:
  CascadeClamp(const PassContext& ctx, ClampCache& cache);
  /// Sets the limits of the keys after step s that hold an open cascade: keys[i] gets out[i] (known or
  /// not). `introduced` marks the network inputs read up to step s.
  void find_limits(int s, const std::vector<const LiveKey*>& keys, const std::vector<char>& introduced,
                   const std::vector<CascadeLimits*>& out);
  /// Whether the keys after step s can be clamped at all.
  bool applies(int s) const;

 private:
  struct AheadKey;
  struct Lookahead;
  void explore(int s, Lookahead& la, const std::vector<char>& introduced) const;
  void resolve(int s, Lookahead& la, std::size_t d) const;
  void limits_of(int st, const std::vector<std::pair<const PairTask*, std::uint32_t>>& pairs,
                 const std::vector<AheadKey>& deeper, AheadKey& k) const;

  const PassContext& ctx_;
  ClampCache& cache_;
  /// cascade_run_[s]: how many consecutive steps from s on have a group that reads a rolling buffer and
  /// writes one (could keep a cascade open).
  std::vector<int> cascade_run_;
  /// Per step, per group: its rows' distinct own SRAM, ascending. A function of the step's groups
  /// alone, so steps that share their list of groups (identical layers) share one table, held in
  /// own_sram_by_groups_ (keyed by the list's buffer).
  std::vector<const std::vector<std::vector<double>>*> distinct_own_sram_;
  std::map<const void*, std::vector<std::vector<double>>> own_sram_by_groups_;
};

/// The pruning's tie-break of a clamped key: among rows equal under the clamp, the least raw cascade
/// SRAM first, then the least bounded peak (`tie`, replaced by the combined order): exactly as
/// cascade * 2^26 + peak when both are whole numbers of bytes below 2^26 (64 MiB), else as ranks.
void clamp_tiebreak(std::vector<double>& tie, const std::vector<PendingRow>& rows, std::vector<double>& scratch_a,
                    std::vector<double>& scratch_b);

}  // namespace npumap::search::join_internal
