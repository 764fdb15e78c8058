// Incumbent bound (incumbent_bound.hpp): what it drops and why that is safe is said there.

#include "mapper/search/join/incumbent_bound.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/user_error.hpp"

namespace npumap::search::join_internal {

double above_cap(double cap) { return std::nextafter(cap * (1.0 + 1e-12), std::numeric_limits<double>::infinity()); }

IncumbentIndex::IncumbentIndex(const Incumbents& inc, const std::vector<Objective>& objectives, const std::vector<double>& levels) {
  std::vector<std::size_t> other;
  std::size_t sram = objectives.size();
  for (std::size_t j = 0; j < objectives.size(); ++j) {
    if (objectives[j] == Objective::Sram) {
      sram = j;
    } else {
      other.push_back(j);
    }
  }
  m = other.size();
  std::vector<std::uint32_t> order(inc.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto at = [&](std::uint32_t i, std::size_t j) { return inc.values[i * inc.k + j]; };
  if (m > 0) {
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return at(a, other[0]) < at(b, other[0]) || (!(at(b, other[0]) < at(a, other[0])) && a < b);
    });
  }
  for (double level : levels) {
    std::vector<double> set;
    for (std::uint32_t i : order) {
      if (sram < objectives.size() && at(i, sram) > level) continue;
      for (std::size_t j : other) set.push_back(at(i, j));
    }
    if (m == 2) {
      for (std::size_t x = 3; x < set.size(); x += 2) set[x] = std::min(set[x], set[x - 2]);
    }
    std::vector<Staircase> tree;
    if (m == 3) {
      const std::size_t n = set.size() / 3;
      tree.resize(n + 1);
      for (std::size_t i = 1; i <= n; ++i) {
        Staircase points;
        for (std::size_t p = i - (i & (~i + 1)); p < i; ++p) points.emplace_back(set[p * 3 + 1], set[p * 3 + 2]);
        std::sort(points.begin(), points.end());
        for (const auto& pt : points) {
          if (tree[i].empty() || pt.second < tree[i].back().second) tree[i].push_back(pt);
        }
      }
    }
    sets.push_back(std::move(set));
    trees.push_back(std::move(tree));
  }
}

bool IncumbentIndex::dominates(std::size_t l, const double* b) const {
  const std::vector<double>& set = sets[l];
  if (m == 0) return false;
  const std::size_t n = set.size() / m;
  // The incumbents with a first value below b[0] are a prefix.
  std::size_t lo = 0;
  std::size_t hi = n;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (set[mid * m] < b[0]) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return false;
  if (m == 1) return true;
  if (m == 2) return set[(lo - 1) * 2 + 1] <= b[1];
  if (m == 3) {
    // The prefix [0, lo) is the union of O(log n) tree nodes; in each, the last staircase entry with
    // second value <= b[1] has the least third value among them.
    const std::vector<Staircase>& tree = trees[l];
    for (std::size_t i = lo; i > 0; i -= i & (~i + 1)) {
      const Staircase& st = tree[i];
      const auto it = std::upper_bound(st.begin(), st.end(), b[1],
                                       [](double v, const std::pair<double, double>& e) { return v < e.first; });
      if (it != st.begin() && std::prev(it)->second <= b[2]) return true;
    }
    return false;
  }
  for (std::size_t i = 0; i < lo; ++i) {
    bool all = true;
    for (std::size_t j = 1; j < m; ++j) all &= set[i * m + j] <= b[j];
    if (all) return true;
  }
  return false;
}

IncumbentBound::IncumbentBound(const PassContext& ctx, const Incumbents* incumbents) : ctx_(ctx), inc_(incumbents) {
  const std::size_t k = ctx.obj.objectives.size();
  rest_min_.assign(static_cast<std::size_t>(ctx.num_steps + 1) * k, 0.0);
  if (inc_ == nullptr) return;
  // Levels: a sample of the incumbents' SRAM values (one interval when SRAM is no objective: then only
  // the last, unconstrained interval matters).
  if (ctx.obj.sram_objective) {
    std::vector<double> values;
    const std::size_t j_sram = static_cast<std::size_t>(
        std::find(ctx.obj.objectives.begin(), ctx.obj.objectives.end(), Objective::Sram) - ctx.obj.objectives.begin());
    for (std::size_t i = 0; i < inc_->size(); ++i) values.push_back(inc_->values[i * k + j_sram]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    constexpr std::size_t kLevels = 64;
    for (std::size_t i = 0; i < std::min(kLevels, values.size()); ++i) {
      const double v = values[i * values.size() / std::min(kLevels, values.size())];
      if (v > levels_.back()) levels_.push_back(v);
    }
  }
  index_.emplace(*inc_, ctx.obj.objectives, levels_);
  // The cap bounds the first objective, a summed one (join_best never caps peak SRAM).
  capped_ = inc_->cap < std::numeric_limits<double>::infinity();
  NPUMAP_ASSERT(!capped_ || (!ctx.obj.summed.empty() && ctx.obj.summed[0] == 0));
  build_rest_minima();
  if (ctx.obj.summed.size() == 2) {
    summed0_ = ctx.obj.summed_columns[0];
    summed1_ = ctx.obj.summed_columns[1];
    build_rest_sets();
    build_dominance_regions();
  }
}

template <typename Visit>
void IncumbentBound::for_each_row_interval(const JoinStep& st, const Visit& visit) const {
  const std::size_t num_levels = levels_.size();
  for (const PmappingGroup& g : st.groups) {
    // The bytes the group reserves for its inputs and output while the layer runs (a tensor read
    // twice, or an output written in place over its input, counted once).
    double usage = 0.0;
    for (std::size_t i = 0; i <= st.inputs.size(); ++i) {
      const int tensor = i < st.inputs.size() ? st.inputs[i] : st.output;
      bool repeated = false;
      for (std::size_t j = 0; j < i && j < st.inputs.size(); ++j) repeated = repeated || st.inputs[j] == tensor;
      if (i == st.inputs.size() && g.compat[i].over_input >= 0) repeated = true;  // in place: shared storage
      if (!repeated) usage += ctx_.reserved(tensor, g.compat[i]);
    }
    for (const PmappingRow& r : g.rows) {
      const double u = usage + r.sram_bytes;
      for (std::size_t l = 0; l < num_levels; ++l) {
        if (l + 1 < num_levels && !(u < levels_[l + 1])) continue;
        visit(l, r);
      }
    }
  }
}

void IncumbentBound::build_rest_minima() {
  const std::size_t k = ctx_.obj.objectives.size();
  const std::size_t num_levels = levels_.size();
  rest_min_.assign(static_cast<std::size_t>(ctx_.num_steps + 1) * num_levels * k, 0.0);
  std::vector<double> least(num_levels * k);
  for (int s = ctx_.num_steps - 1; s >= 0; --s) {
    std::fill(least.begin(), least.end(), std::numeric_limits<double>::infinity());
    for_each_row_interval(ctx_.step(s), [&](std::size_t l, const PmappingRow& r) {
      for (std::size_t j = 0; j < k; ++j) {
        const Objective o = ctx_.obj.objectives[j];
        double& m = least[l * k + j];
        m = std::min(m, o == Objective::Sram ? 0.0 : r.value(column_of(o)));
      }
    });
    for (std::size_t x = 0; x < least.size(); ++x) {
      rest_min_[static_cast<std::size_t>(s) * least.size() + x] = rest_min_[static_cast<std::size_t>(s + 1) * least.size() + x] + least[x];
    }
  }
}

void IncumbentBound::build_rest_sets() {
  const std::size_t num_levels = levels_.size();
  rest_sets_.resize(static_cast<std::size_t>(ctx_.num_steps + 1) * num_levels);
  for (std::size_t l = 0; l < num_levels; ++l) rest_sets_[static_cast<std::size_t>(ctx_.num_steps) * num_levels + l] = {{0.0, 0.0}};
  for (int s = ctx_.num_steps - 1; s >= 0; --s) {
    std::vector<std::vector<Point>> step_points(num_levels);
    for_each_row_interval(ctx_.step(s), [&](std::size_t l, const PmappingRow& r) {
      step_points[l].emplace_back(r.value(summed0_), r.value(summed1_));
    });
    for (std::size_t l = 0; l < num_levels; ++l) {
      rest_sets_[static_cast<std::size_t>(s) * num_levels + l] =
          sum_bound(step_points[l], rest_sets_[static_cast<std::size_t>(s + 1) * num_levels + l]);
    }
  }
}

// The dominance regions, per SRAM interval l, in the plane of the summed objectives (b0, b1) of a lower
// bound b of a completion whose peak SRAM is at least levels[l]. An incumbent I of the interval (peak
// SRAM <= levels[l]) dominates every such completion when I <= b in both and I < b in one of the three
// objectives: so the region is the union of the up-sets of I's with I0 < b0 (strict in 0), with
// I1 < b1, and, for the incumbents whose peak is below levels[l] (those of interval l - 1), with I <= b.
// When the completion's peak is known to be above levels[l] every incumbent of the interval is below it
// in SRAM (`above_regions_`). "<" and "<=" carry the relative margin of 1e-12.
void IncumbentBound::build_dominance_regions() {
  constexpr double kStrict = 1.0 - 1e-12;
  constexpr double kWeak = 1.0 + 1e-12;
  const auto region = [&](std::initializer_list<std::tuple<std::size_t, double, double>> parts) {
    std::vector<std::pair<double, double>> gens;
    for (const auto& [l, f0, f1] : parts) {
      const std::vector<double>& inc = index_->sets[l];  // (first, running minimum of second) pairs
      // A strict margin on 0 is the least positive double: 0 < b, not 0 <= b.
      const auto lift = [](double v, double f) { return v > 0.0 || f > 1.0 ? v / f : std::nextafter(v, 1.0); };
      for (std::size_t i = 0; i + 1 < inc.size(); i += 2) gens.emplace_back(lift(inc[i], f0), lift(inc[i + 1], f1));
    }
    // The cap of the first objective (join_best): every b above it, whatever its second.
    if (capped_) gens.emplace_back(above_cap(inc_->cap), -std::numeric_limits<double>::infinity());
    std::sort(gens.begin(), gens.end());
    UpSet out;
    for (const auto& [x, y] : gens) out.push(x, y);
    return out;
  };
  const bool sram_objective = ctx_.obj.sram_objective;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    if (sram_objective && l > 0) {
      tie_regions_.push_back(region({{l, kStrict, kWeak}, {l, kWeak, kStrict}, {l - 1, kWeak, kWeak}}));
    } else {
      tie_regions_.push_back(region({{l, kStrict, kWeak}, {l, kWeak, kStrict}}));
    }
    above_regions_.push_back(sram_objective ? region({{l, kWeak, kWeak}}) : tie_regions_.back());
  }
}

DropRegions IncumbentBound::step_regions(int s) const {
  if (!index_ || rest_sets_.empty()) return {};
  const std::size_t num_levels = levels_.size();
  return regions_for([&](std::size_t l) -> const std::vector<Point>& { return rest_sets_[static_cast<std::size_t>(s + 1) * num_levels + l]; });
}

// Per interval, as the regions do: an incumbent at most the bound everywhere and below it in one
// objective: in one summed objective (IncumbentIndex::dominates takes "below" in the first coordinate
// and "at most" in the others, so each choice is one query with the margins moved), or in SRAM (the
// incumbents of the interval before, or all when the row's peak is above the interval's start).
bool IncumbentBound::dominated_per_interval(const JoinRow& row, double peak, std::size_t first, const double* rest) const {
  const std::vector<std::size_t>& summed = ctx_.obj.summed;
  const std::vector<Objective>& objectives = ctx_.obj.objectives;
  const bool sram_objective = ctx_.obj.sram_objective;
  const std::size_t k = objectives.size();
  double sum[8];
  double b[8];
  const std::size_t m = summed.size();
  const auto query = [&](std::size_t l, std::size_t strict) {  // strict == m: none (ties in SRAM)
    for (std::size_t x = 0; x < m; ++x) b[x] = sum[x] * (x == strict ? 1.0 - 1e-12 : 1.0 + 1e-12);
    return index_->dominates(l, b);
  };
  for (std::size_t l = first; l < levels_.size(); ++l) {
    const double* add = rest + l * k;
    bool reachable = true;
    for (std::size_t x = 0; x < m; ++x) {
      reachable = reachable && std::isfinite(add[summed[x]]);
      sum[x] = row.value(column_of(objectives[summed[x]])) + add[summed[x]];
    }
    if (!reachable) continue;
    bool dominated = capped_ && sum[0] >= above_cap(inc_->cap);  // above join_best's cap
    if (!dominated && sram_objective && l == first && peak > levels_[first]) {
      dominated = query(l, m);
    } else if (!dominated) {
      for (std::size_t strict = 0; strict < m && !dominated; ++strict) dominated = query(l, strict);
      if (!dominated && sram_objective && l > 0) dominated = query(l - 1, m);
    }
    if (!dominated) return false;
  }
  return true;
}

}  // namespace npumap::search::join_internal
