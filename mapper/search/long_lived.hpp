#pragma once
// Long-lived feature maps where the arena is not the SRAM (docs/design/search.md "Long-lived feature
// maps"). A feature map live across more than kLongLivedSteps layers (lowering.hpp) is offered both
// the arena and SRAM by its layers, but a per-mapping choice would double the join's keys for every
// such map live at a step (an unrolled LSTM keeps dozens live at once). So the join runs two variants
// of the problem instead and merges their fronts:
//
//   arena   every long-lived map in the arena (the mapspace before long-lived maps had SRAM);
//   pinned  every long-lived map that all its layers may place in SRAM held there for its whole life
//           (its bytes in the SRAM in use at every step it spans; the others in the arena).
//
// Where at most kFreeLongLived pinnable maps are live at once, the join instead chooses per mapping
// (the problem as it is: few keys more, one join). Otherwise the pinned variant is joined first; its front's values bound the arena join (JoinOptions::
// known_mappings), which then drops the partial mappings every completion of which a pinned mapping
// strictly dominates. The merged front is the Pareto front of the two fronts' union, pinned points
// first among equal ones: the same with and without the bound. A mapping with some long-lived maps in
// SRAM and others in the arena is in neither variant (the Vela schedule's fill may build one: it is a
// mapping of the same layer mapspaces, and is checked never to beat the front).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mapper/search/join/join.hpp"

namespace npumap::search {

/// One variant of a problem: its steps keep only the groups that place every long-lived tensor as the
/// variant does; group_of[s][g] is the index in the original problem of the variant's group g of step s.
struct LongLivedVariant {
  JoinProblem problem;
  std::vector<std::vector<std::uint32_t>> group_of;
};

/// Per tensor of `problem`: a long-lived tensor that every step writing or reading it offers in SRAM
/// (in some group), so the pinned variant can hold it there.
std::vector<bool> pinnable_tensors(const JoinProblem& problem);

/// The variant of `problem` with every long-lived tensor in the arena (`pinned` false) or every
/// pinnable one in SRAM and the other long-lived ones in the arena (`pinned` true).
LongLivedVariant long_lived_variant(const JoinProblem& problem, bool pinned);

/// At most this many pinnable tensors live at once: the join lets each choose the arena or SRAM per
/// mapping (the problem as it is; its keys twice as many along the tensor's life), which costs less
/// than two joins where the pinned front bounds the arena join only late (a long skip connection:
/// yolo-fastest u65-256, 8.3 s of CPU against 12.5 with the variants, main 6.0). With two (a
/// softmax's lowering keeps two intermediates live across 25 of its steps) the keys quadruple and the
/// variants cost less (person_detect u65-256: 1.2 s of CPU against 2.0 with the choice, main 0.85).
inline constexpr int kFreeLongLived = 1;

/// How join_long_lived joins a problem.
enum class LongLivedJoin {
  Free,       ///< the problem as it is: nothing long-lived, or at most kFreeLongLived pinnable maps live at once
  ArenaOnly,  ///< long-lived maps, none pinnable: the arena variant alone
  Variants,   ///< the two variants, merged
};
LongLivedJoin long_lived_join_kind(const JoinProblem& problem);

/// How many joins join_long_lived runs: 2 for LongLivedJoin::Variants, else 1.
std::size_t long_lived_joins(const JoinProblem& problem);

/// join(problem, ...) for LongLivedJoin::Free; the arena variant's join for ArenaOnly; for Variants
/// the merged front of the two (the pinned one first, bounding the arena one). The points' groups are
/// those of `problem`. Deterministic, as join is.
JoinResult join_long_lived(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& context = {});

/// join_best as join_long_lived joins: for Variants, the points of least first objective of the merged front.
JoinResult join_best_long_lived(const JoinProblem& problem, const JoinOptions& options, const JoinRunContext& context = {});

}  // namespace npumap::search
