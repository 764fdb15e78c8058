#pragma once
// The schedule Vela 2.1 would choose, as a point of our mapspace (docs/design/vela-schedule.md).
//
// Vela's default scheduler (optimisation strategy Performance) picks, per pass, the fastest block
// config and weight buffering that fit the SRAM, with every feature map in the tensor arena, and then
// tries cascades. This first version reproduces the pass-level schedule: the join without rolling
// buffers, restricted to groups whose feature maps all live in the arena (no whole-tensor SRAM copy,
// which Vela never makes), keeping its fastest point (least SRAM among equally fast ones). Cascades,
// Vela's block-config shortlist and its 16-candidate Pareto cut are not modelled yet (the design note
// lists the differences this leaves).

#include <optional>

#include "arch/arch.hpp"
#include "common/stop_token.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/stage.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// Vela's schedule of one workload: the problem its point indexes (it owns the groups) and the point.
struct VelaBaseline {
  JoinProblem problem;
  FrontPoint point;
};

/// Vela's default --block-config-limit: the scheduler tries the first and last 16 configs of its sort.
inline constexpr int kVelaBlockConfigLimit = 16;

/// The join problem of Vela's mapspace: make_join_problem without fusion, each step keeping only the
/// groups whose feature maps are all in the arena and, in them, the rows whose block config is on
/// Vela's shortlist of `block_config_limit` (0: every config); a filter that would leave a step
/// without groups is not applied to it.
JoinProblem vela_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                         int block_config_limit = kVelaBlockConfigLimit);

/// Vela's schedule from a finished per-layer stage; none if no mapping fits or the stop fired.
std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload,
                                          const StageResult& stage, const common::StopToken& stop = {},
                                          int block_config_limit = kVelaBlockConfigLimit);

/// Vela's schedule of `workload`, running the per-layer stage itself (one thread).
std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload);

}  // namespace npumap::search
