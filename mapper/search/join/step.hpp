#pragma once
// One join step (docs/design/search.md "Join", steps 1-9): the layer of step s is paired with the left
// groups (pairing.hpp), its keys' rows are merged in parallel (merge_kernel.hpp), and the surviving
// keys become the new left groups, with one trace node per row.
//
//   1. summaries of the layer's groups (least values, siblings)
//   2. pairs by new key; combined left tables
//   3. summaries of the sources the pairs read (least values, pilot samples)
//   4. per new key: the cascade clamp's limits, the future SRAM floor, the incumbent bound's regions
//   5. merge every key (in parallel over keys, and within a key over units of rows)
//   6. a quick pass keeps its best keys; the look-ahead drops keys no later layer accepts
//   7. the new left groups in key order, their trace nodes, the step's counters

#include <cstdint>
#include <vector>

#include "mapper/search/join/cascade_clamp.hpp"
#include "mapper/search/join/future_sram_bound.hpp"
#include "mapper/search/join/incumbent_bound.hpp"
#include "mapper/search/join/key_bound.hpp"
#include "mapper/search/join/least_value_skips.hpp"
#include "mapper/search/join/lookahead.hpp"
#include "mapper/search/join/pairing.hpp"
#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// The rules of one pass, built once per pass.
struct PassRules {
  PassRules(const PassContext& ctx, ClampCache& clamp_cache, const Incumbents* incumbents, const PassHistory& history)
      : lookahead(ctx.problem), future(ctx), clamp(ctx, clamp_cache), bound(ctx, incumbents), key_bound(ctx, bound, history) {}
  Lookahead lookahead;
  FutureSramBound future;
  CascadeClamp clamp;
  IncumbentBound bound;
  KeyBoundSets key_bound;
};

/// What a step's keys share while they are merged.
struct StepData {
  int s = 0;
  const JoinStep* step = nullptr;
  const std::vector<LeftGroup>* left = nullptr;
  std::vector<LeftGroup> combined;               ///< combined left tables: sources left.size() + j
  std::vector<LayerGroupLeast> group_least;      ///< per layer group
  std::vector<std::vector<std::uint32_t>> siblings;  ///< per layer group and row (sibling bound)
  std::vector<SourceLeast> source_least;         ///< per source the pairs read
  std::vector<std::vector<std::uint32_t>> samples;   ///< per source: the pilot's rows
  DropRegions regions;                           ///< the incumbent bound's regions of the step

  const std::vector<JoinRow>& rows_of(std::uint32_t source) const {
    return source < left->size() ? (*left)[source].rows : combined[source - left->size()].rows;
  }
};

/// A new key of a step and what its merge produced.
struct KeyWork {
  const LiveKey* key = nullptr;
  const std::vector<PairTask>* pairs = nullptr;
  std::vector<PendingRow> rows;
  std::uint64_t paired = 0;
  std::uint64_t stored = 0;
  std::uint64_t over_capacity = 0;
  std::uint64_t dominated = 0;  ///< by pruning or by the incumbent bound
  bool acceptable = true;       ///< the look-ahead keeps it
  bool thinned = false;         ///< a quick pass kept only some of the key's rows
  bool open_cascade = false;    ///< the key holds a live rolling entry
  CascadeLimits clamp;          ///< the cascade clamp's limits (known: the cascade column is clamped)
};

/// Runs step s: `left` becomes the new left groups, `trace.level(s)` their nodes; the step's counters
/// are appended to `result`. `introduced` marks the network inputs read before step s (updated).
/// Returns false when stopped (then `left` is not valid).
bool run_step(const PassContext& ctx, PassRules& rules, int s, std::vector<LeftGroup>& left, std::vector<char>& introduced,
              TraceChain& trace, JoinResult& result, bool& thinned);

}  // namespace npumap::search::join_internal
