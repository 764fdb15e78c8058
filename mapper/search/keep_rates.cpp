#include "mapper/search/keep_rates.hpp"

#include <fmt/format.h>

namespace npumap::search {

const char* cause_name(Cause c) {
  switch (c) {
    case Cause::Unsupported: return "unsupported";
    case Cause::ShramCapacity: return "shram_capacity";
    case Cause::SramCapacity: return "sram_capacity";
    case Cause::Interrupted: return "interrupted";
    case Cause::Dominated: return "dominated";
    case Cause::Incompatible: return "incompatible";
    case Cause::SramCapacityAfterJoin: return "sram_capacity_after_join";
    case Cause::DominatedAfterJoin: return "dominated_after_join";
  }
  return "unknown";
}

void KeepCounters::apply(Cause c, std::uint64_t entering, std::uint64_t dropped) {
  entered[static_cast<int>(c)] += entering;
  removed[static_cast<int>(c)] += dropped;
}

double KeepCounters::rate(Cause c) const {
  const auto i = static_cast<int>(c);
  if (entered[i] == 0) return 1.0;
  return static_cast<double>(entered[i] - removed[i]) / static_cast<double>(entered[i]);
}

KeepRates combine(const std::vector<KeepCounters>& jobs) {
  KeepRatesSum sum;
  for (const auto& j : jobs) sum.add(j);
  return sum.rates();
}

void KeepRatesSum::add(const KeepCounters& j) {
  sum_.total += j.total;
  sum_.valid += static_cast<double>(j.valid);
  sum_.evaluated += static_cast<double>(j.evaluated);
  sum_.pareto += static_cast<double>(j.pareto);
  for (int c = 0; c < kNumCauses; ++c) weighted_[c] += static_cast<double>(j.total) * j.rate(static_cast<Cause>(c));
}

KeepRates KeepRatesSum::rates() const {
  KeepRates out = sum_;
  for (int c = 0; c < kNumCauses; ++c) {
    out.rate[c] = out.total == 0 ? 1.0 : weighted_[c] / static_cast<double>(out.total);
  }
  return out;
}

void add_join_causes(KeepRates& rates, const JoinCounts& j) {
  const auto kept = [](std::uint64_t entered, std::uint64_t removed) {
    return entered == 0 ? 1.0 : static_cast<double>(entered - removed) / static_cast<double>(entered);
  };
  rates.rate[static_cast<int>(Cause::SramCapacityAfterJoin)] = kept(j.rows_paired, j.over_capacity);
  rates.rate[static_cast<int>(Cause::DominatedAfterJoin)] = kept(j.rows_paired - j.over_capacity, j.dominated);
  rates.rate[static_cast<int>(Cause::Incompatible)] =
      kept(j.rows_paired - j.over_capacity - j.dominated, j.incompatible);
}

namespace {

std::string one_in(double part, double total) {
  if (part <= 0.0) return "(none)";
  return fmt::format("(1/{:.3g})", total / part);
}

}  // namespace

std::string summary_line(const KeepRates& r) {
  const double t = static_cast<double>(r.total);
  return fmt::format("{} total, {:.0f} {} valid, {:.0f} {} evaluated, {:.0f} {} Pareto-optimal", r.total, r.valid,
                     one_in(r.valid, t), r.evaluated, one_in(r.evaluated, t), r.pareto, one_in(r.pareto, t));
}

std::vector<std::string> cause_lines(const KeepRates& r, bool include_all) {
  std::vector<std::string> out;
  for (int c = 0; c < kNumCauses; ++c) {
    if (!include_all && r.rate[c] >= 1.0) continue;
    const double rate = r.rate[c];
    out.push_back(fmt::format("  {}: kept {:.4f} {}", cause_name(static_cast<Cause>(c)), rate,
                              rate > 0.0 ? fmt::format("(1/{:.3g})", 1.0 / rate) : std::string("(none kept)")));
  }
  return out;
}

}  // namespace npumap::search
