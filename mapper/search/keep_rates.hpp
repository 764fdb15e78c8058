#pragma once
// Keep-rate statistics: how many candidates each filter removed and why.
//
// Per job, candidates pass the filters in a fixed order; the keep rate of a cause is the fraction of
// the candidates that reached that filter and survived it (so rates multiply within a job). A cause a
// job never applied keeps everything (rate 1). The Pareto rate is survivors / candidates that entered
// the filter, measured before filtering. Per layer and overall, rates are averages weighted by each
// job's total.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace npumap::search {

/// Named, stable causes of removal (the strings appear in reports and JSON).
enum class Cause : std::uint8_t {
  Unsupported,            ///< a combination the NPU or the cycle model does not support
  ShramCapacity,          ///< the block config does not fit the SHRAM (docs/design/npu-model.md §8)
  SramCapacity,           ///< the pmapping's own SRAM reservation exceeds the SRAM capacity
  Interrupted,            ///< not evaluated because the run hit its time limit or was interrupted
  Dominated,              ///< Pareto-dominated within its compatibility group
  Incompatible,           ///< join: no partner with a matching compatibility
  SramCapacityAfterJoin,  ///< join: concurrently live SRAM reservations exceed the capacity
  DominatedAfterJoin,     ///< join: dominated after merging
};
inline constexpr int kNumCauses = 8;

/// The stable name of a cause, e.g. "shram_capacity".
const char* cause_name(Cause c);

/// Counters of one job (or a sum of jobs): candidates entering and leaving each filter.
struct KeepCounters {
  std::uint64_t total = 0;      ///< size of the job's mapspace
  std::uint64_t valid = 0;      ///< after the validity filters (unsupported, SHRAM, SRAM)
  std::uint64_t evaluated = 0;  ///< actually scored by the cycle model
  std::uint64_t pareto = 0;     ///< left at the end of the per-layer stage
  std::array<std::uint64_t, kNumCauses> entered{};  ///< candidates that reached each filter
  std::array<std::uint64_t, kNumCauses> removed{};  ///< candidates that filter removed

  /// Records that `entering` candidates reached filter `c` and `dropped` of them were removed.
  void apply(Cause c, std::uint64_t entering, std::uint64_t dropped);
  /// Keep rate of one cause: 1 if the filter never saw a candidate.
  double rate(Cause c) const;
};

/// Rates of a set of jobs, weighted by each job's total.
struct KeepRates {
  std::uint64_t total = 0;
  double valid = 0.0;      ///< weighted count
  double evaluated = 0.0;  ///< weighted count
  double pareto = 0.0;     ///< weighted count
  std::array<double, kNumCauses> rate{};  ///< weighted keep rate per cause (1 where never applied)
};

/// Combines jobs: counts add, rates are averaged with weight = each job's total.
KeepRates combine(const std::vector<KeepCounters>& jobs);

/// combine(), one job at a time: the same jobs added in the same order give the same rates, with no
/// list of them (a workload's jobs share the counters of identical layers).
class KeepRatesSum {
 public:
  void add(const KeepCounters& job);
  KeepRates rates() const;

 private:
  KeepRates sum_;
  std::array<double, kNumCauses> weighted_{};
};

/// What the join's filters saw over all its steps.
struct JoinCounts {
  std::uint64_t rows_paired = 0;        ///< merged rows that reached the SRAM check
  std::uint64_t over_capacity = 0;      ///< removed by sram_capacity_after_join
  std::uint64_t dominated = 0;          ///< removed by dominated_after_join
  std::uint64_t incompatible = 0;       ///< removed by incompatible (look-ahead)
};

/// Sets the join's causes in `rates`: each is the fraction of the rows that reached that filter and
/// survived it (the filters run in the order SRAM capacity, dominance, look-ahead).
void add_join_causes(KeepRates& rates, const JoinCounts& join);

/// `T total, V (1/x) valid, E (1/y) evaluated, P (1/z) Pareto-optimal` (ratios relative to total).
std::string summary_line(const KeepRates& rates);
/// One line per cause that removed anything: `  shram_capacity: kept 0.4123 (1/2.43)`.
std::vector<std::string> cause_lines(const KeepRates& rates, bool include_all = false);

}  // namespace npumap::search
