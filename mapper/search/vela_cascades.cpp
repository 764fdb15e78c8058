// Vela's schedule where the arena is SRAM; see vela_cascades.hpp and docs/design/vela-schedule.md.

#include "mapper/search/vela_cascades.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
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
  double own = 0.0;     ///< the row's own SRAM as Vela's scheduler counts it (weights whole or double-buffered,
                        ///< scratch; not the bias copy, which Vela adds after scheduling)
  VelaRowCost cost;
  int out_rows = 0;     ///< producer side of a rolling output: OFM block height
  int in_rows = 0;      ///< consumer side of a rolling IFM: IFM block height
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
      const double own = rc.weight_bytes >= 0.0 ? rc.weight_bytes : row.sram_bytes - rc.bias_bytes;
      out.push_back({static_cast<std::uint32_t>(gi), static_cast<std::uint32_t>(r), own, rc,
                     out_roll ? c.back().rows : 0, in_roll ? c.front().rows : 0});
    }
  }
  // Vela counts an IFM-streamed pass's weights whole at one estimate of their size, whatever the
  // block config: the rows' weight_bytes where given (all equal), else the least of the rows' own.
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

/// Sizes as Vela's scheduler counts them before it schedules (every feature map whole and NHWC):
/// the live bytes per step (vela_scheduling_live) and each step's own.
struct VelaSramView {
  std::vector<double> live;    ///< per step: the live feature maps' bytes
  std::vector<double> local;   ///< per step: its own inputs' and output's bytes
  std::vector<double> inputs;  ///< per step: its inputs' bytes
  std::vector<double> output;  ///< per step: its output's bytes
};

double scheduling_bytes(const JoinProblem& problem, int t) {
  const JoinTensor& jt = problem.tensors[static_cast<std::size_t>(t)];
  return jt.constant ? 0.0 : static_cast<double>(jt.linear_bytes);
}

/// Where the arena is off-chip (`spills`) Vela's scheduler counts no feature map: it adds only tensors
/// in SRAM, and before scheduling those are the weights' copies alone (each its own pass's).
VelaSramView sram_view(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<int>& merged, bool spills) {
  const std::size_t n = problem.steps.size();
  VelaSramView v{spills ? std::vector<double>(n, 0.0) : vela_scheduling_live(problem, npu, merged), std::vector<double>(n, 0.0),
                 std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  if (spills) return v;
  for (std::size_t s = 0; s < n; ++s) {
    std::set<int> seen;
    for (const int t : problem.steps[s].inputs)
      if (seen.insert(t).second) v.inputs[s] += scheduling_bytes(problem, t);
    v.output[s] = scheduling_bytes(problem, problem.steps[s].output);
    v.local[s] = v.inputs[s] + (seen.count(problem.steps[s].output) != 0 ? 0.0 : v.output[s]);
  }
  return v;
}

/// Bytes of a rolling buffer as Vela's scheduler counts it (its storage_size_for_sub_purpose for
/// RollingBufferY): the rows our rolling_buffer_bytes keeps, whole rows of the tensor with the
/// channels rounded up to 16 (a rolling buffer is always NHCWB16), rounded up to 16 bytes.
double rolling_bytes(const JoinTensor& t, int producer_rows, int consumer_rows) {
  const std::int64_t height = (consumer_rows + producer_rows + producer_rows - 1) / producer_rows * producer_rows;
  const std::int64_t bytes = std::min<std::int64_t>(t.height, height) * t.width * ((t.channels + 15) / 16 * 16) * t.element_bytes;
  return static_cast<double>((bytes + 15) / 16 * 16);
}

/// A step's member row in a candidate's history, and the node of the step before (-1: none).
struct DpNode {
  int parent = -1;
  std::size_t step = 0;
  const CascadeMember* member = nullptr;
  bool aside = false;  ///< a concatenation's other writer, a cascaded pass of its own inside another's span
  int whole_from = -1;  ///< the step's IFM is a concatenation cascaded whole from this writer step
};

/// One of Vela's candidates at a step: a schedule of the subgraph's steps up to it, as finished
/// cascaded passes plus (in an IFM-streamed body) the open one.
struct DpCandidate {
  double metric = 0.0;  ///< the summed pass metric of every member so far
  double order = 0.0;   ///< the summed places of its members' rows in Vela's order (VelaRowCost::order)
  double done = 0.0;    ///< the finished cascaded passes' largest SRAM
  double open = 0.0;    ///< the open cascaded pass's SRAM so far
  int parent = -1;      ///< the node of the step before
  const CascadeMember* member = nullptr;  ///< this step's row
  std::size_t first = 0;  ///< the open cascaded pass's first step
  int node = -1;          ///< this step's node, once the candidate survives its step's filter
  int feed_rows = 0;      ///< a concatenation's writer open towards its reader: its OFM block height
  int whole_from = -1;    ///< see DpNode
};

/// Vela's candidate metric: `sram_weight` per byte of the largest SRAM plus the summed pass metric.
double candidate_metric(const DpCandidate& c, double sram_weight) {
  return sram_weight * std::max(c.done, c.open) + c.metric;
}

/// Vela's filter of a step's candidates (its filter_pareto_frontier): drops those over the SRAM
/// limit; in the order of (metric, finished SRAM, open SRAM), stable, keeps a candidate unless one kept
/// before it is no worse in all three (so the first of equal ones); more than 16 kept are cut to the
/// 16 of least candidate metric (a stable sort of the kept).
void vela_filter(std::vector<DpCandidate>& c, double limit, double sram_weight) {
  std::vector<DpCandidate> in;
  for (const DpCandidate& x : c)
    if (std::max(x.done, x.open) <= limit) in.push_back(x);
  std::stable_sort(in.begin(), in.end(), [](const DpCandidate& x, const DpCandidate& y) {
    return std::tie(x.metric, x.done, x.open, x.order) < std::tie(y.metric, y.done, y.open, y.order);
  });
  std::vector<DpCandidate> kept;
  std::vector<char> alive(in.size(), 1);
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (alive[i] == 0) continue;
    kept.push_back(in[i]);
    for (std::size_t j = i + 1; j < in.size(); ++j)
      alive[j] = alive[j] != 0 && (in[j].metric < in[i].metric || in[j].done < in[i].done || in[j].open < in[i].open) ? 1 : 0;
  }
  if (kept.size() > kVelaCandidates) {
    std::stable_sort(kept.begin(), kept.end(), [&](const DpCandidate& x, const DpCandidate& y) {
      return candidate_metric(x, sram_weight) < candidate_metric(y, sram_weight);
    });
    kept.resize(kVelaCandidates);
  }
  c = std::move(kept);
}

/// What the dynamic program over one NPU subgraph reads.
struct DpContext {
  const JoinProblem& problem;
  const RoleTable& roles;
  const VelaSramView& view;
  const std::vector<VelaPassRows>& shapes;
  const std::vector<bool>& edge;  ///< edge[s]: step s's output may roll into step s + 1's IFM
  double sram_weight = 0.0;
  double limit = 0.0;  ///< the SRAM limit of every cascaded pass
  bool overlap = true;  ///< an IFM-streamed pass's OFM may overwrite its IFM (only where the arena is SRAM)
  /// Per step: a concatenation's writer that may cascade with its reader (concat_writers), the
  /// reader's step; else -1.
  const std::vector<int>& whole_reader;
};

/// IFM-streamed bodies at step s that start there, one per IFM-streamed row of s (`out_roll`: its
/// output rolls) and finished candidate of the steps before (`done`).
std::vector<DpCandidate> starting_bodies(const DpContext& x, std::size_t s, bool out_roll, const std::vector<DpCandidate>& done) {
  std::vector<DpCandidate> body;
  for (const CascadeMember& m : rows_of(x.roles, s, false, out_roll))
    if (m.cost.ifm_stream)
      for (const DpCandidate& c : done)
        body.push_back({c.metric + m.cost.metric, c.order + m.cost.order, c.done, x.view.inputs[s] + m.own, c.node, &m, s, -1});
  return body;
}

/// Vela's IFM-streamed bodies at step s: the candidates whose open cascaded pass ends with a row of s
/// whose output rolls (`out_roll`) or is whole, each started at s from a finished candidate of the
/// steps before (`done`), continuing an open one whose output rolls into s's IFM (`open`) or one
/// whose concatenation writer is open towards s (`pend`: its rolling buffer as Vela's scheduler
/// counts it, rolling_bytes of the writer's OFM and s's IFM block heights).
std::vector<DpCandidate> ifm_bodies(const DpContext& x, std::size_t s, bool out_roll, const std::vector<DpCandidate>& done,
                                    const std::vector<DpCandidate>& open, const std::vector<DpCandidate>& pend) {
  std::vector<DpCandidate> body;
  // Vela lists a pass's continuing candidates before those starting there, so of equal ones its
  // filter keeps the cascade.
  const JoinTensor& rolled = x.problem.tensors[static_cast<std::size_t>(x.problem.steps[s].inputs.empty() ? 0 : x.problem.steps[s].inputs[0])];
  if (!pend.empty())
    for (const CascadeMember& m : rows_of(x.roles, s, false, out_roll))
      for (const DpCandidate& p : pend) {
        if (!m.cost.ifm_stream || m.cost.ifm_block_h <= 0 || p.feed_rows <= 0) continue;
        body.push_back({p.metric + m.cost.metric, p.order + m.cost.order, p.done,
                        p.open + rolling_bytes(rolled, p.feed_rows, m.cost.ifm_block_h) + m.own, p.node, &m, p.first, -1, 0,
                        static_cast<int>(p.first)});
      }
  if (!open.empty()) {
    for (const CascadeMember& m : rows_of(x.roles, s, true, out_roll))
      for (const DpCandidate& o : open) {
        if (o.member->out_rows <= 0 || m.in_rows <= 0) continue;
        body.push_back({o.metric + m.cost.metric, o.order + m.cost.order, o.done, o.open + rolling_bytes(rolled, o.member->out_rows, m.in_rows) + m.own,
                        o.node, &m, o.first, -1});
      }
  }
  for (DpCandidate& c : starting_bodies(x, s, out_roll, done)) body.push_back(c);
  vela_filter(body, x.limit, x.sram_weight);
  return body;
}

/// Vela's dynamic program over the NPU steps a..b of one subgraph, in step order (docs/design/vela-schedule.md).
class SubgraphDp {
 public:
  explicit SubgraphDp(const DpContext& x) : x_(x) {}

  /// Per step the finished candidates (each weight-streamed or ending an IFM-streamed cascaded pass
  /// there), the open ones, and those whose concatenation writer is open towards its reader (`pend`),
  /// each set filtered as Vela filters it; the finished candidate of least candidate metric at b gives
  /// every step's row. Leaves `point` as it is where no candidate fits.
  void run(std::size_t a, std::size_t b, FrontPoint& point, std::vector<std::pair<std::size_t, std::size_t>>* whole) {
    std::vector<DpCandidate> done{DpCandidate{}}, open, pend;
    for (std::size_t s = a; s <= b; ++s) {
      std::vector<DpCandidate> ws = weight_streamed(s, done);
      settle(ws, s);
      const std::vector<DpCandidate> none;
      const std::vector<DpCandidate>& feeding = s > a && x_.edge[s - 1] ? open : none;
      const bool reads_pend = !pend.empty() && x_.problem.steps[s].output != x_.problem.steps[s - 1].output;
      const std::vector<DpCandidate>& pending = reads_pend ? pend : none;
      std::vector<DpCandidate> ends = ifm_bodies(x_, s, false, done, feeding, pending);
      std::vector<DpCandidate> rolls = s < b && x_.edge[s] ? ifm_bodies(x_, s, true, done, feeding, pending) : std::vector<DpCandidate>{};
      settle(ends, s);
      settle(rolls, s);
      pend = reads_pend ? std::vector<DpCandidate>{} : next_pend(s, done, pend);
      std::vector<DpCandidate> next = finish(ws, s, false);
      for (DpCandidate& c : finish(ends, s, true)) next.push_back(std::move(c));
      vela_filter(next, x_.limit, x_.sram_weight);
      if (next.empty()) return;
      done = std::move(next);
      open = std::move(rolls);
    }
    const DpCandidate* best = &done.front();
    for (const DpCandidate& c : done)
      if (candidate_metric(c, x_.sram_weight) < candidate_metric(*best, x_.sram_weight)) best = &c;
    for (int n = best->node; n >= 0; n = nodes_[static_cast<std::size_t>(n)].parent) {
      const DpNode& d = nodes_[static_cast<std::size_t>(n)];
      point.group[d.step] = d.member->group;
      point.row[d.step] = d.member->row;
      if (d.whole_from >= 0 && whole != nullptr) whole->emplace_back(static_cast<std::size_t>(d.whole_from), d.step);
    }
  }

 private:
  std::vector<DpCandidate> weight_streamed(std::size_t s, const std::vector<DpCandidate>& done) const {
    std::vector<DpCandidate> ws;
    for (const CascadeMember& m : rows_of(x_.roles, s, false, false))
      if (!m.cost.ifm_stream)
        for (const DpCandidate& c : done)
          ws.push_back({c.metric + m.cost.metric, c.order + m.cost.order, c.done, x_.view.inputs[s] + m.own, c.node, &m, s, -1});
    vela_filter(ws, x_.limit, x_.sram_weight);
    return ws;
  }

  void settle(std::vector<DpCandidate>& v, std::size_t s, bool aside = false) {
    for (DpCandidate& c : v) nodes_.push_back({c.parent, s, c.member, aside, c.whole_from}), c.node = static_cast<int>(nodes_.size()) - 1;
  }

  /// The finished cascaded pass's SRAM, Vela's: the tensors live at its last step that are not the
  /// step's own, its output, then (IFM streaming) less the OFM-over-IFM overlap of its members (not
  /// a concatenation's other writers inside its span). Vela drops a candidate over the limit before
  /// subtracting the overlap.
  std::vector<DpCandidate> finish(std::vector<DpCandidate>& v, std::size_t s, bool ifm_stream) const {
    const double around = x_.view.live[s] - x_.view.local[s] + x_.view.output[s];
    std::vector<DpCandidate> out;
    for (DpCandidate c : v) {
      if (c.open + around > x_.limit) continue;
      c.open += around;
      if (ifm_stream && x_.overlap) {
        std::vector<const VelaPassRows*> sh;
        std::vector<int> bh;
        for (int n = c.node; n >= 0 && nodes_[static_cast<std::size_t>(n)].step >= c.first; n = nodes_[static_cast<std::size_t>(n)].parent) {
          const DpNode& d = nodes_[static_cast<std::size_t>(n)];
          if (!d.aside || d.step == c.first) sh.push_back(&x_.shapes[d.step]), bh.push_back(d.member->cost.block_h);
        }
        std::reverse(sh.begin(), sh.end());
        std::reverse(bh.begin(), bh.end());
        c.open -= vela_ifm_overlap(sh, bh);
      }
      c.done = std::max(c.done, c.open), c.open = 0.0;
      out.push_back(c);
    }
    vela_filter(out, x_.limit, x_.sram_weight);
    return out;
  }

  /// The candidates with a concatenation's writer open towards its reader after step s (one of the
  /// writers, every step from it to the reader): those open before it with s finished as a cascaded
  /// pass of its own (Vela schedules the other writers apart), and, where s may cascade with the
  /// reader, those opening at s, its IFM-streamed rows started from the finished candidates before it.
  std::vector<DpCandidate> next_pend(std::size_t s, const std::vector<DpCandidate>& done, const std::vector<DpCandidate>& pend) {
    std::vector<DpCandidate> out = pass_through(s, pend);
    if (x_.whole_reader[s] >= 0) {
      std::vector<DpCandidate> opening = starting_bodies(x_, s, false, done);
      for (DpCandidate& c : opening) c.feed_rows = c.member->cost.block_h;
      vela_filter(opening, x_.limit, x_.sram_weight);
      settle(opening, s);
      for (DpCandidate& c : opening) out.push_back(c);
    }
    vela_filter(out, x_.limit, x_.sram_weight);
    return out;
  }

  std::vector<DpCandidate> pass_through(std::size_t s, const std::vector<DpCandidate>& pend) {
    if (pend.empty()) return {};
    std::map<int, const DpCandidate*> by_node;
    std::vector<DpCandidate> base;
    for (const DpCandidate& p : pend) {
      by_node[p.node] = &p;
      base.push_back({p.metric, p.order, p.done, 0.0, -1, nullptr, 0, p.node});
    }
    std::vector<DpCandidate> alone = weight_streamed(s, base);
    std::vector<DpCandidate> ifm = starting_bodies(x_, s, false, base);
    vela_filter(ifm, x_.limit, x_.sram_weight);
    settle(alone, s, true);
    settle(ifm, s, true);
    std::vector<DpCandidate> out = finish(alone, s, false);
    for (DpCandidate& c : finish(ifm, s, true)) out.push_back(c);
    for (DpCandidate& c : out) {
      const DpCandidate& p = *by_node.at(c.parent);
      c.open = p.open, c.first = p.first, c.feed_rows = p.feed_rows;
    }
    return out;
  }

  const DpContext& x_;
  std::vector<DpNode> nodes_;
};
/// The writers of step r's IFM that Vela's scheduler may cascade with r where the arena is SRAM
/// (scheduler.py search_ifm_streaming_partial: a predecessor whose only output is the IFM and whose
/// only successor is r, on the NPU, a convolution, depthwise or pooling pass; the IFM NHCWB16) when
/// the IFM is a concatenation: written by two steps or more, each a slice, those steps the ones right
/// before r, read by r alone as its IFM, not a network output, whole in the arena in NHCWB16 in the
/// point. Empty for any other IFM (a tensor with one writer rolls through the rows' own variants).
std::vector<std::size_t> concat_writers(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<VelaPassRows>& shapes,
                                        const FrontPoint& point, std::size_t r) {
  const JoinStep& step = problem.steps[r];
  if (!npu[r] || !shapes[r].rows || step.inputs.empty()) return {};
  const int t = step.inputs[0];
  const JoinTensor& jt = problem.tensors[static_cast<std::size_t>(t)];
  const TensorCompat& c = problem.steps[r].groups[point.group[r]].compat.front();
  if (jt.constant || jt.network_output || jt.last_consumer_step != static_cast<int>(r) || c.residence != Residence::Arena ||
      c.layout != Layout::Nhcwb16)
    return {};
  std::size_t reads = 0, writes = 0;
  for (const JoinStep& other : problem.steps) {
    reads += static_cast<std::size_t>(std::count(other.inputs.begin(), other.inputs.end(), t));
    writes += other.output == t ? 1 : 0;
  }
  if (reads != 1 || writes < 2 || writes > r) return {};
  std::vector<std::size_t> out;
  for (std::size_t w = r - writes; w < r; ++w) {
    if (problem.steps[w].output != t || !npu[w]) return {};
    if (shapes[w].rows) out.push_back(w);
  }
  return out;
}

}  // namespace

std::vector<double> vela_scheduling_live(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<int>& merged) {
  const std::size_t n = problem.steps.size();
  std::vector<int> first(problem.tensors.size(), -1);
  for (std::size_t s = 0; s < n; ++s)
    for (const int t : problem.steps[s].inputs)
      if (first[static_cast<std::size_t>(t)] < 0) first[static_cast<std::size_t>(t)] = static_cast<int>(s);
  const auto start_of = [&](std::size_t t) { return problem.tensors[t].producer_step >= 0 ? problem.tensors[t].producer_step : first[t]; };
  const auto end_of = [&](std::size_t t) { return problem.tensors[t].network_output ? static_cast<int>(n) - 1 : problem.tensors[t].last_consumer_step; };
  std::vector<double> live(n + 1, 0.0);
  // Adds tensor t's bytes over the steps lo..hi.
  const auto add = [&](std::size_t t, int lo, int hi) {
    if (lo < 0 || hi < lo) return;
    live[static_cast<std::size_t>(lo)] += scheduling_bytes(problem, static_cast<int>(t));
    live[static_cast<std::size_t>(hi) + 1] -= scheduling_bytes(problem, static_cast<int>(t));
  };
  for (std::size_t t = 0; t < problem.tensors.size(); ++t) add(t, start_of(t), end_of(t));
  // Vela's shared ranges, per NPU subgraph a..b (a graph of its own there): the union of the merged
  // tensors' steps, each tensor counted where the union is live but it is not.
  for (std::size_t a = 0; a < n; ++a) {
    if (!npu[a]) continue;
    std::size_t b = a;
    while (b + 1 < n && npu[b + 1]) ++b;
    std::vector<std::size_t> members;
    std::map<std::size_t, std::size_t> parent;  // tensor -> a tensor of the same range
    const std::function<std::size_t(std::size_t)> root = [&](std::size_t t) {
      const std::size_t p = parent.at(t);
      return p == t ? t : root(p);
    };
    for (std::size_t s = a; s <= b; ++s) {
      if (merged.empty() || merged[s] < 0) continue;
      const auto in = static_cast<std::size_t>(problem.steps[s].inputs[static_cast<std::size_t>(merged[s])]);
      const auto out = static_cast<std::size_t>(problem.steps[s].output);
      for (const std::size_t t : {in, out})
        if (parent.emplace(t, t).second) members.push_back(t);
      parent[root(out)] = root(in);
    }
    std::map<std::size_t, std::pair<int, int>> span;  // a range's root -> its first and last step
    for (const std::size_t t : members) {
      auto [it, fresh] = span.emplace(root(t), std::make_pair(start_of(t), end_of(t)));
      if (!fresh) it->second = {std::min(it->second.first, start_of(t)), std::max(it->second.second, end_of(t))};
    }
    for (const std::size_t t : members) {
      const auto [lo, hi] = span.at(root(t));
      const int from = std::max(lo, static_cast<int>(a)), to = std::min(hi, static_cast<int>(b));
      add(t, from, std::min(to, start_of(t) - 1));
      add(t, std::max(from, end_of(t) + 1), to);
    }
    a = b;
  }
  for (std::size_t s = 1; s < n; ++s) live[s] += live[s - 1];
  live.resize(n);
  return live;
}

void add_vela_cascades(const JoinProblem& problem, const std::vector<bool>& npu, const std::vector<int>& merged,
                       const std::vector<VelaPassRows>& shapes, const VelaRowCostFn& cost, double sram_weight, bool spills,
                       FrontPoint& point, std::vector<std::pair<std::size_t, std::size_t>>* whole) {
  const std::size_t n = problem.steps.size();
  if (n == 0) return;
  const VelaSramView view = sram_view(problem, npu, merged, spills);
  RoleTable roles(n);
  for (std::size_t s = 0; s < n; ++s)
    for (unsigned r = 0; r < 4 && npu[s]; ++r) roles[s][r] = role_rows(problem, point, cost, s, (r & 2U) != 0, (r & 1U) != 0);
  // A step's output may roll into the next step's IFM where both are NPU steps with rows for it.
  std::vector<bool> edge(n, false);
  for (std::size_t s = 0; s + 1 < n; ++s)
    edge[s] = npu[s] && npu[s + 1] && !problem.steps[s + 1].inputs.empty() && problem.steps[s + 1].inputs[0] == problem.steps[s].output &&
              !rows_of(roles, s, false, true).empty() && !rows_of(roles, s + 1, true, false).empty();
  // A concatenation's writers that may cascade with its reader: none where the arch spills (Vela's
  // avoid_for_cascading).
  std::vector<int> whole_reader(n, -1);
  for (std::size_t r = 0; r < n && !spills; ++r)
    for (const std::size_t w : concat_writers(problem, npu, shapes, point, r)) whole_reader[w] = static_cast<int>(r);
  // Vela schedules each NPU subgraph (the NPU layers between two CPU layers) on its own, each with
  // its own largest cascaded pass.
  const DpContext x{problem, roles, view, shapes, edge, sram_weight, static_cast<double>(problem.sram_capacity), !spills, whole_reader};
  for (std::size_t a = 0; a < n;) {
    if (!npu[a]) {
      ++a;
      continue;
    }
    std::size_t b = a;
    while (b + 1 < n && npu[b + 1]) ++b;
    SubgraphDp(x).run(a, b, point, whole);
    a = b + 1;
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
