// The join's public helpers (join.hpp); the join itself starts in strategy.cpp.

#include "mapper/search/join/join.hpp"

#include <algorithm>

#include "common/user_error.hpp"
#include "model/geometry.hpp"

namespace npumap::search {

std::int64_t rolling_buffer_bytes(const JoinTensor& t, int producer_rows, int consumer_rows) {
  NPUMAP_ASSERT(producer_rows > 0 && consumer_rows > 0);
  const std::int64_t height = (consumer_rows + producer_rows + producer_rows - 1) / producer_rows * producer_rows;
  const std::int64_t rows = std::min<std::int64_t>(t.height, height);
  const std::int64_t channels = (t.channels + 15) / 16 * 16;
  return model::round_up(rows * t.width * channels * t.element_bytes, 16);
}

std::int64_t reserved_bytes(const JoinTensor& t, const TensorCompat& c, bool arena_is_sram) {
  if (t.constant) return 0;
  switch (c.residence) {
    case Residence::Arena:
      if (!arena_is_sram) return 0;
      [[fallthrough]];
    case Residence::Sram:
      return c.layout == Layout::Nhcwb16 ? t.nhcwb16_bytes : t.linear_bytes;
    case Residence::Rolling:
      return 0;  // counted through the cascade column once both block heights are known
  }
  return 0;
}

JoinCounts JoinResult::totals() const {
  JoinCounts t;
  for (const JoinStepStats& st : steps) {
    t.rows_paired += st.rows_paired;
    t.over_capacity += st.dropped_sram_capacity;
    t.dominated += st.dropped_dominated;
    t.incompatible += st.rows_dropped_incompatible;
  }
  return t;
}

double FrontPoint::objective(Objective o) const {
  switch (o) {
    case Objective::Cycles: return cycles;
    case Objective::OffchipBytes: return offchip_bytes;
    case Objective::Sram: return peak_sram_bytes;
    case Objective::Energy: return energy_pj;
  }
  return 0.0;
}

const char* speedup_name(Speedup s) {
  switch (s) {
    case Speedup::Lookahead: return "lookahead";
    case Speedup::Collapse: return "collapse";
    case Speedup::FutureSramBound: return "future_sram_bound";
    case Speedup::IncumbentBound: return "incumbent_bound";
    case Speedup::KeyBound: return "key_bound";
    case Speedup::DominanceFilter: return "dominance_filter";
    case Speedup::LeastValueSkips: return "least_value_skips";
    case Speedup::SiblingBound: return "sibling_bound";
    case Speedup::CascadeClamp: return "cascade_clamp";
    case Speedup::CombineLeft: return "combine_left";
  }
  return "?";
}

namespace {

/// The switch of a speed-up (null for the key bound, which has three states).
bool* switch_of(JoinSpeedups& s, Speedup which) {
  switch (which) {
    case Speedup::Lookahead: return &s.lookahead;
    case Speedup::Collapse: return &s.collapse;
    case Speedup::FutureSramBound: return &s.future_sram_bound;
    case Speedup::IncumbentBound: return &s.incumbent_bound;
    case Speedup::DominanceFilter: return &s.dominance_filter;
    case Speedup::LeastValueSkips: return &s.least_value_skips;
    case Speedup::SiblingBound: return &s.sibling_bound;
    case Speedup::CascadeClamp: return &s.cascade_clamp;
    case Speedup::CombineLeft: return &s.combine_left;
    case Speedup::KeyBound: return nullptr;
  }
  return nullptr;
}

}  // namespace

void JoinSpeedups::set(Speedup s, bool on) {
  if (s == Speedup::KeyBound) {
    key_bound = on ? KeyBound::Automatic : KeyBound::Off;
    return;
  }
  *switch_of(*this, s) = on;
}

JoinSpeedups JoinSpeedups::none() {
  JoinSpeedups s;
  for (int i = 0; i < kNumSpeedups; ++i) s.set(static_cast<Speedup>(i), false);
  return s;
}

}  // namespace npumap::search
