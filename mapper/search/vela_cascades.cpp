// Vela's schedule where the arena is SRAM; see vela_cascades.hpp and docs/design/vela-schedule.md.

#include "mapper/search/vela_cascades.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

namespace npumap::search {
namespace {

constexpr double kNoSchedule = std::numeric_limits<double>::infinity();

/// A member's row in a cascaded pass: where it is in the problem and what it costs.
struct CascadeMember {
  std::uint32_t group = 0;
  std::uint32_t row = 0;
  double own = 0.0;     ///< the row's own SRAM (weights whole or double-buffered, bias, scratch)
  VelaRowCost cost;
  int out_rows = 0;     ///< producer side of a rolling output: OFM block height
  int in_rows = 0;      ///< consumer side of a rolling IFM: IFM block height
};

/// One way to run a cascaded pass: its SRAM in Vela's accounting, its summed pass metric, the members.
struct CascadeOption {
  double sram = 0.0;
  double metric = 0.0;
  std::vector<CascadeMember> members;
};

/// A step's rows in a role: those of the groups whose placements are the point's group's (a rolling
/// buffer of the point's counted as the tensor whole in the arena) but for a rolling IFM (`in_roll`)
/// and/or output (`out_roll`).
std::vector<CascadeMember> role_rows(const JoinProblem& problem, const FrontPoint& point, const VelaRowCostFn& cost,
                                     std::size_t s, bool in_roll, bool out_roll) {
  std::vector<CascadeMember> out;
  const std::vector<PmappingGroup>& groups = problem.steps[s].groups;
  const std::vector<TensorCompat>& chosen = groups[point.group[s]].compat;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const std::vector<TensorCompat>& c = groups[gi].compat;
    if (c.size() != chosen.size() || c.back().over_input != chosen.back().over_input) continue;
    bool same = true;
    for (std::size_t i = 0; i < c.size() && same; ++i) {
      const bool rolls = (i == 0 && in_roll && i + 1 < c.size()) || (i + 1 == c.size() && out_roll);
      // A tensor the point rolls is, unrolled, whole in the arena in NHCWB16 (Vela's layout between
      // NPU passes).
      const bool was_rolled = chosen[i].residence == Residence::Rolling;
      const Residence base = was_rolled ? Residence::Arena : chosen[i].residence;
      const Layout layout = was_rolled ? Layout::Nhcwb16 : chosen[i].layout;
      same = rolls ? c[i].residence == Residence::Rolling : c[i].residence == base && c[i].layout == layout;
    }
    if (!same) continue;
    for (std::size_t r = 0; r < groups[gi].rows.size(); ++r) {
      const PmappingRow& row = groups[gi].rows[r];
      const VelaRowCost rc = cost(s, row);
      if ((in_roll || out_roll) && !rc.ifm_stream) continue;
      out.push_back({static_cast<std::uint32_t>(gi), static_cast<std::uint32_t>(r), row.sram_bytes, rc,
                     out_roll ? c.back().rows : 0, in_roll ? c.front().rows : 0});
    }
  }
  // Vela counts an IFM-streamed pass's weights whole at one estimate of their size, whatever the
  // block config (ours differ per config by their encoding): the least of the rows'.
  double whole = kNoSchedule;
  for (const CascadeMember& m : out)
    if (m.cost.ifm_stream) whole = std::min(whole, m.own);
  for (CascadeMember& m : out)
    if (m.cost.ifm_stream) m.own = whole;
  return out;
}

/// Every step's rows per role (index: 2 for a rolling IFM plus 1 for a rolling output).
using RoleTable = std::vector<std::array<std::vector<CascadeMember>, 4>>;

const std::vector<CascadeMember>& rows_of(const RoleTable& roles, std::size_t s, bool in_roll, bool out_roll) {
  return roles[s][(in_roll ? 2U : 0U) + (out_roll ? 1U : 0U)];
}

/// Keeps the options no other beats in both SRAM and metric (the first of equal ones), at most `cap`,
/// those with the least candidate metric (Vela's cut of its candidates to 16).
void prune_options(std::vector<CascadeOption>& opts, double sram_weight, std::size_t cap) {
  std::vector<std::size_t> order(opts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::tie(opts[x].sram, opts[x].metric, x) < std::tie(opts[y].sram, opts[y].metric, y);
  });
  std::vector<CascadeOption> kept;
  double least = kNoSchedule;  // the least metric of the options with less or equal SRAM
  for (const std::size_t i : order)
    if (opts[i].metric < least) least = opts[i].metric, kept.push_back(std::move(opts[i]));
  std::stable_sort(kept.begin(), kept.end(), [&](const CascadeOption& x, const CascadeOption& y) {
    return sram_weight * x.sram + x.metric < sram_weight * y.sram + y.metric;
  });
  if (kept.size() > cap) kept.resize(cap);
  opts = std::move(kept);
}

/// Sizes as Vela's scheduler counts them before it schedules: every feature map whole and NHWC, live
/// from its first use to its last (to the end for a network output).
struct VelaSramView {
  std::vector<double> live;    ///< per step: the live feature maps' bytes
  std::vector<double> local;   ///< per step: its own inputs' and output's bytes
  std::vector<double> inputs;  ///< per step: its inputs' bytes
  std::vector<double> output;  ///< per step: its output's bytes
};

VelaSramView sram_view(const JoinProblem& problem) {
  const std::size_t n = problem.steps.size();
  std::vector<int> first(problem.tensors.size(), -1);
  for (std::size_t s = 0; s < n; ++s)
    for (const int t : problem.steps[s].inputs)
      if (first[static_cast<std::size_t>(t)] < 0) first[static_cast<std::size_t>(t)] = static_cast<int>(s);
  const auto bytes = [&](int t) {
    const JoinTensor& jt = problem.tensors[static_cast<std::size_t>(t)];
    return jt.constant ? 0.0 : static_cast<double>(jt.linear_bytes);
  };
  VelaSramView v{std::vector<double>(n + 1, 0.0), std::vector<double>(n, 0.0), std::vector<double>(n, 0.0),
                 std::vector<double>(n, 0.0)};
  for (std::size_t t = 0; t < problem.tensors.size(); ++t) {
    const JoinTensor& jt = problem.tensors[t];
    const int start = jt.producer_step >= 0 ? jt.producer_step : first[t];
    const int end = jt.network_output ? static_cast<int>(n) - 1 : jt.last_consumer_step;
    if (start < 0 || end < start) continue;
    v.live[static_cast<std::size_t>(start)] += bytes(static_cast<int>(t));
    v.live[static_cast<std::size_t>(end) + 1] -= bytes(static_cast<int>(t));
  }
  for (std::size_t s = 1; s < n; ++s) v.live[s] += v.live[s - 1];
  v.live.resize(n);
  for (std::size_t s = 0; s < n; ++s) {
    std::set<int> seen;
    for (const int t : problem.steps[s].inputs)
      if (seen.insert(t).second) v.inputs[s] += bytes(t);
    v.output[s] = bytes(problem.steps[s].output);
    v.local[s] = v.inputs[s] + (seen.count(problem.steps[s].output) != 0 ? 0.0 : v.output[s]);
  }
  return v;
}

/// Bytes of a rolling buffer in NHWC (Vela sizes it before choosing NHCWB16): the rows our
/// rolling_buffer_bytes keeps, whole rows of the tensor.
double linear_rolling_bytes(const JoinTensor& t, int producer_rows, int consumer_rows) {
  const std::int64_t height = (consumer_rows + producer_rows + producer_rows - 1) / producer_rows * producer_rows;
  return static_cast<double>(std::min<std::int64_t>(t.height, height) * t.width * t.channels * t.element_bytes);
}

/// Ways to run the steps i..j as one cascaded pass (j > i), per j (index j - i - 1), each with the
/// Pareto set of (Vela's cascaded-pass SRAM, metric) over its members' rows. The SRAM is Vela's: the
/// tensors live at the last pass that are not its own, its output, the first pass's inputs, every
/// member's own SRAM and the rolling buffers, less the OFM-over-IFM overlap.
std::vector<std::vector<CascadeOption>> cascades_from(const JoinProblem& problem, const RoleTable& roles, const VelaSramView& view,
                                                      const std::vector<VelaPassRows>& shapes, double sram_weight,
                                                      std::size_t i, std::size_t chain_end) {
  std::vector<std::vector<CascadeOption>> out;
  std::vector<CascadeOption> open;
  for (const CascadeMember& m : rows_of(roles, i, false, true))
    open.push_back({view.inputs[i] + m.own, m.cost.metric, {m}});
  prune_options(open, sram_weight, 16);
  for (std::size_t j = i + 1; j <= chain_end && j - i < kVelaMaxCascade && !open.empty(); ++j) {
    const JoinTensor& rolled = problem.tensors[static_cast<std::size_t>(problem.steps[j].inputs[0])];
    const auto extend = [&](bool last) {
      std::vector<CascadeOption> next;
      for (const CascadeMember& m : rows_of(roles, j, true, !last))
        for (const CascadeOption& o : open) {
          const int out_rows = o.members.back().out_rows;
          if (out_rows <= 0 || m.in_rows <= 0) continue;
          CascadeOption x = o;
          x.sram += linear_rolling_bytes(rolled, out_rows, m.in_rows) + m.own;
          x.metric += m.cost.metric;
          x.members.push_back(m);
          next.push_back(std::move(x));
        }
      // Vela filters a pass's candidates before it knows whether a later pass continues the cascade
      // (so before the overlap and the tensors at the cascade's end count), then again once it ends.
      prune_options(next, sram_weight, 16);
      if (!last) return next;
      for (CascadeOption& x : next) {
        std::vector<const VelaPassRows*> sh;
        std::vector<int> bh;
        for (std::size_t q = 0; q < x.members.size(); ++q) sh.push_back(&shapes[i + q]), bh.push_back(x.members[q].cost.block_h);
        x.sram += view.live[j] - view.local[j] + view.output[j] - vela_ifm_overlap(sh, bh);
      }
      prune_options(next, sram_weight, 16);
      return next;
    };
    out.push_back(extend(true));
    open = extend(false);
  }
  return out;
}

/// Per step, the ways to run it as a cascaded pass of its own: its group's rows, IFM-streamed
/// (weights whole, OFM over IFM) or weight-streamed, each with Vela's SRAM (the live feature maps and
/// the row's own, less the overlap) and metric, Pareto-pruned. A CPU step counts nothing (Vela
/// schedules the NPU subgraph alone).
std::vector<CascadeOption> alone_options(const JoinProblem& problem, const FrontPoint& point, const RoleTable& roles,
                                         const VelaSramView& view, const std::vector<VelaPassRows>& shapes, bool npu,
                                         double sram_weight, std::size_t s) {
  std::vector<CascadeOption> out;
  if (!npu) {
    const PmappingRow& row = problem.steps[s].groups[point.group[s]].rows[point.row[s]];
    out.push_back({0.0, 0.0, {{point.group[s], point.row[s], row.sram_bytes, {}, 0, 0}}});
    return out;
  }
  // Vela filters each strategy's candidates by their SRAM before it adds the tensors around the pass
  // and, for IFM streaming, subtracts the overlap; weights held whole cost the same SRAM at every
  // block config, so IFM streaming keeps the configs of least metric.
  std::vector<CascadeOption> ws, ifs;
  for (const CascadeMember& m : rows_of(roles, s, false, false))
    (m.cost.ifm_stream ? ifs : ws).push_back({m.own, m.cost.metric, {m}});
  prune_options(ws, sram_weight, 16);
  prune_options(ifs, sram_weight, 16);
  for (CascadeOption& o : ws) o.sram += view.live[s], out.push_back(std::move(o));
  for (CascadeOption& o : ifs) {
    o.sram += view.live[s] - vela_ifm_overlap({&shapes[s]}, {o.members[0].cost.block_h});
    out.push_back(std::move(o));
  }
  prune_options(out, sram_weight, 16);
  return out;
}

/// The least total metric of the steps a..b with every cascaded pass's SRAM within `limit`: each step
/// alone or in a cascade of `cascades`; fills `pick` per step: (0, option) alone, (members, option)
/// where a cascade starts, (-1, -1) inside one. Infinite if none fits.
double best_run(std::size_t a, std::size_t b, double limit, const std::vector<std::vector<CascadeOption>>& alone,
                const std::vector<std::vector<std::vector<CascadeOption>>>& cascades, std::vector<std::pair<int, int>>& pick) {
  const std::size_t n = b - a + 1;
  std::vector<double> f(n + 1, kNoSchedule);
  std::vector<std::pair<int, int>> from(n + 1, {-1, -1});  // (start offset, option) of the last cascaded pass
  f[0] = 0.0;
  for (std::size_t e = 1; e <= n; ++e) {
    const std::vector<CascadeOption>& own = alone[a + e - 1];
    for (std::size_t k = 0; k < own.size() && f[e - 1] != kNoSchedule; ++k)
      if (own[k].sram <= limit && f[e - 1] + own[k].metric < f[e]) f[e] = f[e - 1] + own[k].metric, from[e] = {static_cast<int>(e - 1), static_cast<int>(k)};
    for (std::size_t st = 0; st + 1 < e; ++st) {
      const std::vector<std::vector<CascadeOption>>& c = cascades[a + st];
      const std::size_t len = e - 1 - st;  // members after the first
      if (len > c.size() || f[st] == kNoSchedule) continue;
      const std::vector<CascadeOption>& opts = c[len - 1];
      for (std::size_t k = 0; k < opts.size(); ++k)
        if (opts[k].sram <= limit && f[st] + opts[k].metric < f[e]) f[e] = f[st] + opts[k].metric, from[e] = {static_cast<int>(st), static_cast<int>(k)};
    }
  }
  for (std::size_t e = n; e > 0 && f[n] != kNoSchedule;) {
    const auto [st, k] = from[e];
    const auto start = static_cast<std::size_t>(st);
    for (std::size_t x = start; x < e; ++x) pick[a + x] = {-1, -1};
    pick[a + start] = {e - start == 1 ? 0 : static_cast<int>(e - start), k};
    e = start;
  }
  return f[n];
}

/// A schedule's choices: per step the way it runs (best_run's picks) and what was considered.
struct VelaChoices {
  std::vector<std::vector<CascadeOption>> alone;                 ///< per step
  std::vector<std::vector<std::vector<CascadeOption>>> cascades;  ///< per first step, per last step
  std::vector<std::pair<std::size_t, std::size_t>> runs;         ///< steps that may cascade, first..last
};

/// Vela's choice for one NPU subgraph, the runs [r0, r1) of `c`: the least candidate metric over the
/// limits on its largest cascaded pass's SRAM. The metric only falls as the limit rises, so the search
/// stops once the SRAM alone costs more than the best. Writes the picks of its steps into `pick`.
void choose_subgraph(const VelaChoices& c, std::size_t r0, std::size_t r1, double sram_weight, double capacity,
                     std::vector<std::pair<int, int>>& pick) {
  std::vector<double> limits;
  for (std::size_t r = r0; r < r1; ++r)
    for (std::size_t s = c.runs[r].first; s <= c.runs[r].second; ++s) {
      for (const CascadeOption& o : c.alone[s]) limits.push_back(o.sram);
      for (const std::vector<CascadeOption>& opts : c.cascades[s])
        for (const CascadeOption& o : opts) limits.push_back(o.sram);
    }
  std::sort(limits.begin(), limits.end());
  limits.erase(std::unique(limits.begin(), limits.end()), limits.end());
  std::vector<std::pair<int, int>> scratch = pick;
  double lowest = 0.0;
  for (std::size_t r = r0; r < r1; ++r) lowest += best_run(c.runs[r].first, c.runs[r].second, kNoSchedule, c.alone, c.cascades, scratch);
  double best = kNoSchedule;
  for (const double limit : limits) {
    if (limit > capacity || sram_weight * limit + lowest >= best) break;
    double total = 0.0;
    for (std::size_t r = r0; r < r1; ++r) total += best_run(c.runs[r].first, c.runs[r].second, limit, c.alone, c.cascades, scratch);
    if (total == kNoSchedule || !(sram_weight * limit + total < best)) continue;
    best = sram_weight * limit + total;
    for (std::size_t r = r0; r < r1; ++r)
      for (std::size_t s = c.runs[r].first; s <= c.runs[r].second; ++s) pick[s] = scratch[s];
  }
}

}  // namespace

void add_vela_cascades(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<VelaPassRows>& shapes,
                       const VelaRowCostFn& cost, double sram_weight, FrontPoint& point) {
  const std::size_t n = problem.steps.size();
  if (n == 0) return;
  const VelaSramView view = sram_view(problem);
  VelaChoices c{std::vector<std::vector<CascadeOption>>(n), std::vector<std::vector<std::vector<CascadeOption>>>(n), {}};
  RoleTable roles(n);
  for (std::size_t s = 0; s < n; ++s)
    for (unsigned r = 0; r < 4 && npu[s]; ++r) roles[s][r] = role_rows(problem, point, cost, s, (r & 2U) != 0, (r & 1U) != 0);
  for (std::size_t s = 0; s < n; ++s) {
    c.alone[s] = alone_options(problem, point, roles, view, shapes, npu[s], sram_weight, s);
    if (c.alone[s].empty()) return;  // keep the point as it is
  }
  // Runs: maximal stretches of steps each of whose output may be rolled into the next step's IFM.
  std::vector<bool> edge(n, false);
  for (std::size_t s = 0; s + 1 < n; ++s)
    edge[s] = npu[s] && npu[s + 1] && !problem.steps[s + 1].inputs.empty() && problem.steps[s + 1].inputs[0] == problem.steps[s].output &&
              !rows_of(roles, s, false, true).empty() && !rows_of(roles, s + 1, true, false).empty();
  for (std::size_t s = 0; s < n;) {
    std::size_t e = s;
    while (e + 1 < n && edge[e]) ++e;
    c.runs.emplace_back(s, e);
    for (std::size_t i = s; i < e; ++i) c.cascades[i] = cascades_from(problem, roles, view, shapes, sram_weight, i, e);
    s = e + 1;
  }
  // Vela schedules each NPU subgraph (the NPU layers between two CPU layers) on its own, each with
  // its own largest cascaded pass.
  std::vector<std::pair<int, int>> pick(n, {-1, -1});
  for (std::size_t r0 = 0; r0 < c.runs.size();) {
    std::size_t r1 = r0;
    while (r1 < c.runs.size() && npu[c.runs[r1].first]) ++r1;
    if (r1 > r0) choose_subgraph(c, r0, r1, sram_weight, static_cast<double>(problem.sram_capacity), pick);
    r0 = r1 == r0 ? r0 + 1 : r1;
  }
  for (std::size_t s = 0; s < n; ++s) {
    const auto [len, k] = pick[s];
    if (len < 0) continue;
    const CascadeOption& o = len == 0 ? c.alone[s][static_cast<std::size_t>(k)]
                                      : c.cascades[s][static_cast<std::size_t>(len - 2)][static_cast<std::size_t>(k)];
    for (std::size_t m = 0; m < o.members.size(); ++m) {
      point.group[s + m] = o.members[m].group;
      point.row[s + m] = o.members[m].row;
    }
  }
}

// The walk of vela_ifm_overlap (see the header).
double vela_ifm_overlap(const std::vector<const VelaPassRows*>& shapes, const std::vector<int>& block_h) {
  const std::size_t k = shapes.size();
  for (std::size_t i = 0; i < k; ++i)
    if (!shapes[i]->rows || block_h[i] <= 0) return 0.0;
  const double ofm_size = shapes.back()->ofm_row_bytes * shapes.back()->ofm_h;
  double ifm_read = shapes.front()->ifm_row_bytes * shapes.front()->ifm_h, highest = 0.0, least = kNoSchedule;
  std::vector<int> produced(k, 0);
  // Issues pass i's stripes until it has produced `rows` OFM rows, or all it has (an explicit stack of
  // the recursion). Every stripe raises a pass's produced rows, so the walk ends.
  std::vector<std::pair<std::size_t, int>> stack{{k - 1, shapes.back()->ofm_h}};
  while (!stack.empty()) {
    const auto [i, rows] = stack.back();
    if (produced[i] >= std::min(rows, shapes[i]->ofm_h)) {
      stack.pop_back();
      continue;
    }
    const VelaPassRows& p = *shapes[i];
    const int start = produced[i], end = std::min(start + block_h[i], p.ofm_h);
    const int in_start = std::max(0, start * p.stride - p.pad_top);
    const int in_end = std::min(p.ifm_h, (end - 1) * p.stride - p.pad_top + p.kernel_h);
    if (i > 0 && produced[i - 1] < std::min(in_end, shapes[i - 1]->ofm_h)) {
      stack.emplace_back(i - 1, in_end);
      continue;
    }
    produced[i] = end;
    if (i == 0) ifm_read = in_start * p.ifm_row_bytes;
    if (i + 1 == k) highest = std::max(highest, end * p.ofm_row_bytes);
    if (i == 0 || i + 1 == k) least = std::min(least, ofm_size - std::max(0.0, highest - std::min(ifm_read, ofm_size)));
    if (i == 0) ifm_read = std::max(0, in_end) * p.ifm_row_bytes;
  }
  return least == kNoSchedule ? 0.0 : std::max(0.0, least);
}

}  // namespace npumap::search
