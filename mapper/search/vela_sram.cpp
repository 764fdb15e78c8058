// Vela's "SRAM used" of a schedule: its live ranges and its hill-climb allocator (vela_sram.hpp).

#include "mapper/search/vela_sram.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "workloads/vela_order.hpp"

namespace npumap::search {
namespace {

std::int64_t round_up_16(std::int64_t v) { return (v + 15) / 16 * 16; }

/// Python's random module after random.seed(1): the Mersenne Twister MT19937 seeded by init_by_array
/// with the key {1}, and randint(a, b) = a + randbelow(b - a + 1), randbelow(n) drawing the top
/// bit_length(n) bits of a 32-bit output until one is below n.
class PythonRandom {
 public:
  PythonRandom() {
    init(19650218U);
    const std::uint32_t key = 1;
    std::size_t i = 1;
    for (std::size_t k = kN; k > 0; --k) {
      state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1664525U)) + key;
      if (++i >= kN) state_[0] = state_[kN - 1], i = 1;
    }
    for (std::size_t k = kN - 1; k > 0; --k) {
      state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1566083941U)) - static_cast<std::uint32_t>(i);
      if (++i >= kN) state_[0] = state_[kN - 1], i = 1;
    }
    state_[0] = 0x80000000U;
    next_ = kN;
  }
  int randint(int a, int b) {
    const auto n = static_cast<std::uint32_t>(b - a + 1);
    if (b < a) return a;  // Python raises here; Vela's calls never reach it
    int bits = 0;
    while ((n >> bits) != 0 && bits < 32) ++bits;
    std::uint32_t r = next() >> (32 - bits);
    while (r >= n) r = next() >> (32 - bits);
    return a + static_cast<int>(r);
  }

 private:
  static constexpr std::size_t kN = 624;
  void init(std::uint32_t seed) {
    state_[0] = seed;
    for (std::size_t i = 1; i < kN; ++i)
      state_[i] = 1812433253U * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  }
  std::uint32_t next() {
    if (next_ >= kN) {
      for (std::size_t k = 0; k < kN; ++k) {
        const std::uint32_t y = (state_[k] & 0x80000000U) | (state_[(k + 1) % kN] & 0x7fffffffU);
        state_[k] = state_[(k + 397) % kN] ^ (y >> 1) ^ ((y & 1U) != 0 ? 0x9908b0dfU : 0U);
      }
      next_ = 0;
    }
    std::uint32_t y = state_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
  }
  std::array<std::uint32_t, kN> state_{};
  std::size_t next_ = kN;
};

/// Vela's hill-climb allocator, step for step (its allocator keeps the fields of ranges left
/// unplaced by an allocation it cut short, and the next swap reads them; so does this).
class HillClimb {
 public:
  explicit HillClimb(const std::vector<VelaLiveRange>& ranges) : lrs_(ranges.size()) {
    int slots = 0;
    for (const VelaLiveRange& r : ranges) slots = std::max(slots, r.end + 1);
    std::vector<std::vector<int>> at_time(static_cast<std::size_t>(slots));
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      lrs_[i].range = ranges[i];
      for (int t = ranges[i].start; t <= ranges[i].end; ++t) at_time[static_cast<std::size_t>(t)].push_back(static_cast<int>(i));
    }
    std::vector<std::int64_t> size_at(at_time.size(), 0);
    for (std::size_t t = 0; t < at_time.size(); ++t)
      for (const int i : at_time[t]) size_at[t] += lrs_[static_cast<std::size_t>(i)].range.size;
    min_required_ = size_at.empty() ? 0 : *std::max_element(size_at.begin(), size_at.end());
    for (std::size_t i = 0; i < lrs_.size(); ++i) {
      Lr& lr = lrs_[i];
      std::vector<char> seen(lrs_.size(), 0);
      for (int t = lr.range.start; t <= lr.range.end; ++t) {
        lr.urgency = std::max(lr.urgency, size_at[static_cast<std::size_t>(t)]);
        for (const int j : at_time[static_cast<std::size_t>(t)])
          if (!seen[static_cast<std::size_t>(j)] && j != static_cast<int>(i)) seen[static_cast<std::size_t>(j)] = 1, lr.neighbours.push_back(j);
      }
    }
  }

  std::vector<std::int64_t> allocate() {
    std::vector<int> indices(lrs_.size());
    std::iota(indices.begin(), indices.end(), 0);
    std::sort(indices.begin(), indices.end(), [&](int a, int b) { return before(a, b); });
    best_size_ = allocate_indices(indices);
    best_addresses_ = addresses();
    if (best_size_ > min_required_) search(indices, kMaxIterations);
    return best_addresses_;
  }

 private:
  static constexpr int kMaxIterations = 500;
  static constexpr std::int64_t kNotAllocated = -1;
  static constexpr int kNoPredecessor = -1;
  struct Lr {
    VelaLiveRange range;
    std::int64_t address = 0, end_address = 0, urgency = 0;
    int predecessor = 0, turn = 0;
    std::vector<int> neighbours;
  };

  bool before(int a, int b) const {  // Vela's priority: urgency, duration, start, size, creation
    const Lr& x = lrs_[static_cast<std::size_t>(a)];
    const Lr& y = lrs_[static_cast<std::size_t>(b)];
    if (x.urgency != y.urgency) return x.urgency > y.urgency;
    const int dx = x.range.end - x.range.start, dy = y.range.end - y.range.start;
    if (dx != dy) return dx > dy;
    if (x.range.start != y.range.start) return x.range.start < y.range.start;
    if (x.range.size != y.range.size) return x.range.size > y.range.size;
    return a < b;
  }
  bool neighbour(const Lr& a, const Lr& b) const { return a.range.start <= b.range.end && b.range.start <= a.range.end; }
  std::vector<std::int64_t> addresses() const {
    std::vector<std::int64_t> out(lrs_.size());
    for (std::size_t i = 0; i < lrs_.size(); ++i) out[i] = lrs_[i].address;
    return out;
  }

  void allocate_lr(Lr& lr) {  // the lowest address its placed neighbours leave, as Vela scans them
    std::int64_t address = 0;
    int predecessor = kNoPredecessor;
    bool fits = false;
    while (!fits) {
      fits = true;
      for (const int j : lr.neighbours) {
        const Lr& o = lrs_[static_cast<std::size_t>(j)];
        if (o.address == kNotAllocated || o.end_address <= address) continue;
        if (o.address < address + lr.range.size && address < o.end_address) {
          fits = false;
          address = round_up_16(o.end_address);
          predecessor = j;
        }
      }
    }
    lr.address = address;
    lr.end_address = address + lr.range.size;
    lr.predecessor = predecessor;
  }

  std::int64_t allocate_indices(const std::vector<int>& indices) {
    for (Lr& lr : lrs_) lr.address = kNotAllocated;
    std::int64_t size = 0;
    for (std::size_t turn = 0; turn < indices.size(); ++turn) {
      Lr& lr = lrs_[static_cast<std::size_t>(indices[turn])];
      allocate_lr(lr);
      lr.turn = static_cast<int>(turn);
      size = std::max(size, lr.end_address);
      if (size > best_size_) break;  // worse than the best known: Vela stops here
    }
    return size;
  }

  void add_predecessor_turns(std::set<int>& seen, std::vector<int>& turns, int id) const {
    if (seen.insert(lrs_[static_cast<std::size_t>(id)].turn).second) turns.push_back(lrs_[static_cast<std::size_t>(id)].turn);
    while (lrs_[static_cast<std::size_t>(id)].predecessor != kNoPredecessor) {
      id = lrs_[static_cast<std::size_t>(id)].predecessor;
      const int turn = lrs_[static_cast<std::size_t>(id)].turn;
      if (seen.insert(turn).second) turns.push_back(turn);
    }
  }

  void attempt_bottleneck_fix(std::vector<int>& indices) {
    std::size_t top = 0;
    for (std::size_t i = 1; i < lrs_.size(); ++i)
      if (lrs_[i].end_address > lrs_[top].end_address) top = i;
    std::set<int> seen;
    std::vector<int> turns;
    add_predecessor_turns(seen, turns, static_cast<int>(top));
    for (const int j : lrs_[top].neighbours) add_predecessor_turns(seen, turns, j);
    std::vector<int> non_neighbours;
    for (const int turn : turns)
      if (!neighbour(lrs_[top], lrs_[static_cast<std::size_t>(indices[static_cast<std::size_t>(turn)])])) non_neighbours.push_back(turn);
    const int n = static_cast<int>(turns.size());
    int ix1 = 0;
    if (random_.randint(0, 100) < 30 && !non_neighbours.empty())
      ix1 = non_neighbours[static_cast<std::size_t>(random_.randint(0, static_cast<int>(non_neighbours.size()) - 1))];
    else
      ix1 = turns[static_cast<std::size_t>(random_.randint(0, n - 1))];
    int ix2 = turns[static_cast<std::size_t>(random_.randint(0, n - 2))];
    if (ix1 == ix2) ix2 = turns.back();
    std::swap(indices[static_cast<std::size_t>(ix1)], indices[static_cast<std::size_t>(ix2)]);
  }

  void search(std::vector<int> indices, int iterations) {
    std::vector<int> best = indices;
    for (int it = 0; it < iterations; ++it) {
      attempt_bottleneck_fix(indices);
      const std::int64_t size = allocate_indices(indices);
      if (size <= best_size_) {
        best_size_ = size;
        best = indices;
        best_addresses_ = addresses();
        if (best_size_ <= min_required_) return;
      } else {
        indices = best;
      }
    }
  }

  std::vector<Lr> lrs_;
  std::int64_t min_required_ = 0;
  std::int64_t best_size_ = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> best_addresses_;
  PythonRandom random_;
};

}  // namespace

std::vector<std::int64_t> vela_hillclimb_addresses(const std::vector<VelaLiveRange>& ranges) {
  if (ranges.empty()) return {};
  return HillClimb(ranges).allocate();
}

std::int64_t vela_hillclimb_size(const std::vector<VelaLiveRange>& ranges) {
  const std::vector<std::int64_t> addresses = vela_hillclimb_addresses(ranges);
  std::int64_t size = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) size = std::max(size, addresses[i] + ranges[i].size);
  return size;
}

namespace {

/// A step's inputs in Vela's graph operand order (our input 1 first where operands_swapped).
std::vector<int> vela_operands(const JoinProblem& problem, const std::vector<VelaSramStep>& steps, std::size_t s) {
  std::vector<int> in = problem.steps[s].inputs;
  if (s < steps.size() && steps[s].operands_swapped && in.size() == 2) std::swap(in[0], in[1]);
  return in;
}

/// Vela's pass packing order of the steps (workloads::vela_pack_order).
std::vector<std::size_t> vela_pack_order(const JoinProblem& problem, const std::vector<VelaSramStep>& steps) {
  workloads::PackingGraph g;
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    g.inputs.push_back(vela_operands(problem, steps, s));
    g.output.push_back(problem.steps[s].output);
  }
  for (const JoinTensor& t : problem.tensors) g.network_output.push_back(t.network_output ? 1 : 0);
  return workloads::vela_pack_order(g);
}

/// Vela's scheduler re-orders an NPU subgraph's cascaded passes (scheduler.py, after its search): from
/// each pass without a successor in the subgraph (in pass order), depth first, a cascaded pass after
/// the cascaded passes of its passes' predecessors (in the order of each pass's inputs).
void vela_resort_subgraph(const JoinProblem& problem, const std::vector<VelaSramStep>& steps,
                          const std::vector<int>& cascade, std::vector<std::size_t>& run) {
  std::vector<std::vector<std::size_t>> writers(problem.tensors.size());
  std::vector<char> in_run(problem.steps.size(), 0), has_successor(problem.steps.size(), 0);
  for (const std::size_t s : run) in_run[s] = 1, writers[static_cast<std::size_t>(problem.steps[s].output)].push_back(s);
  for (const std::size_t s : run)
    for (const int t : problem.steps[s].inputs)
      for (const std::size_t w : writers[static_cast<std::size_t>(t)]) has_successor[w] = 1;
  std::vector<char> done(problem.steps.size(), 0);
  std::vector<std::size_t> out;
  const auto visit = [&](const auto& self, std::size_t s) -> void {
    const int c = cascade[s];
    if (done[static_cast<std::size_t>(c)]) return;
    done[static_cast<std::size_t>(c)] = 1;
    for (const std::size_t p : run) {
      if (cascade[p] != c) continue;
      for (const int t : vela_operands(problem, steps, p))
        for (const std::size_t w : writers[static_cast<std::size_t>(t)])
          if (cascade[w] != c) self(self, w);
    }
    for (const std::size_t p : run)
      if (cascade[p] == c) out.push_back(p);
  };
  for (const std::size_t s : run)
    if (!has_successor[s]) visit(visit, s);
  run = out;
}

}  // namespace

std::vector<std::size_t> vela_pass_order(const JoinProblem& problem, const std::vector<VelaSramStep>& steps,
                                         const std::vector<int>& cascade) {
  const std::vector<std::size_t> pack = vela_pack_order(problem, steps);
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < pack.size();) {
    const bool npu = pack[k] < steps.size() && steps[pack[k]].npu;
    std::size_t end = k + 1;
    while (npu && end < pack.size() && pack[end] < steps.size() && steps[pack[end]].npu) ++end;
    std::vector<std::size_t> run(pack.begin() + static_cast<std::ptrdiff_t>(k), pack.begin() + static_cast<std::ptrdiff_t>(end));
    if (npu) vela_resort_subgraph(problem, steps, cascade, run);
    order.insert(order.end(), run.begin(), run.end());
    k = end;
  }
  return order;
}

std::vector<int> vela_scheduling_merges(const JoinProblem& problem, const std::vector<VelaSramStep>& steps) {
  const std::size_t n = problem.steps.size();
  std::vector<int> readers(problem.tensors.size(), 0), merged(n, -1);
  for (const JoinStep& step : problem.steps)
    for (const int t : step.inputs) ++readers[static_cast<std::size_t>(t)];
  for (std::size_t t = 0; t < problem.tensors.size(); ++t) readers[t] += problem.tensors[t].network_output ? 1 : 0;
  const auto feature_map = [&](int t) { return !problem.tensors[static_cast<std::size_t>(t)].constant; };
  for (std::size_t s = 0; s < n && s < steps.size(); ++s) {
    const JoinStep& step = problem.steps[s];
    if (!steps[s].npu || step.inputs.empty() || !feature_map(step.output)) continue;
    const bool swapped = steps[s].operands_swapped && step.inputs.size() == 2;
    if (!feature_map(step.inputs[swapped ? 1 : 0])) continue;
    for (std::size_t k = 0; k < step.inputs.size() && k < 2; ++k) {
      const std::size_t i = swapped ? 1 - k : k;
      const int t = step.inputs[i];
      if (!steps[s].merge_input[i] || !feature_map(t) || readers[static_cast<std::size_t>(t)] != 1) continue;
      merged[s] = static_cast<int>(i);
      break;
    }
  }
  return merged;
}

std::vector<VelaLiveRange> vela_sram_ranges(const JoinProblem& problem, const FrontPoint& point,
                                            const std::vector<VelaSramStep>& steps) {
  const std::vector<JoinTensor>& tensors = problem.tensors;
  const std::size_t n = problem.steps.size();
  const auto compat_of = [&](std::size_t s) -> const std::vector<TensorCompat>& {
    return problem.steps[s].groups[point.group[s]].compat;
  };
  // Each step's cascade (its first step): a step whose input arrives in a rolling buffer joins its
  // producer's; steps are in topological order.
  std::vector<int> cascade(n, 0);
  for (std::size_t s = 0; s < n; ++s) {
    cascade[s] = static_cast<int>(s);
    for (std::size_t i = 0; i < problem.steps[s].inputs.size(); ++i) {
      const int producer = tensors[static_cast<std::size_t>(problem.steps[s].inputs[i])].producer_step;
      if (compat_of(s)[i].residence == Residence::Rolling && producer >= 0) cascade[s] = cascade[static_cast<std::size_t>(producer)];
    }
    if (s < steps.size() && steps[s].cascade_writer >= 0) cascade[s] = cascade[static_cast<std::size_t>(steps[s].cascade_writer)];
  }
  const std::vector<std::size_t> order = vela_pass_order(problem, steps, cascade);
  std::vector<std::size_t> pos(n);
  for (std::size_t k = 0; k < n; ++k) pos[order[k]] = k;
  // Where each tensor lives: as its producer writes it (a network input: as its first reader reads it).
  std::vector<TensorCompat> home(tensors.size());
  std::vector<int> consumers(tensors.size(), 0), rolling_rows(tensors.size(), 0);
  std::vector<std::size_t> last_read(tensors.size(), 0);
  std::vector<char> homed(tensors.size(), 0);
  for (std::size_t s = 0; s < n; ++s) {
    const JoinStep& step = problem.steps[s];
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const auto t = static_cast<std::size_t>(step.inputs[i]);
      ++consumers[t];
      last_read[t] = std::max(last_read[t], pos[s]);
      if (compat_of(s)[i].residence == Residence::Rolling) rolling_rows[t] = compat_of(s)[i].rows;
      if (!homed[t] && tensors[t].producer_step < 0) home[t] = compat_of(s)[i], homed[t] = 1;
    }
    const auto o = static_cast<std::size_t>(step.output);
    if (!homed[o]) home[o] = compat_of(s).back(), homed[o] = 1;
  }
  const auto bytes_of = [&](std::size_t t) -> std::int64_t {
    if (tensors[t].constant || home[t].residence == Residence::Rolling) return 0;
    TensorCompat c = home[t];
    c.over_input = -1;
    return round_up_16(reserved_bytes(tensors[t], c, problem.arena_is_sram));
  };
  // The cascaded pass of each step: a step whose input arrives in a rolling buffer joins its producer's.
  std::vector<int> cps(n, 0);
  for (std::size_t k = 0, next = 0; k < n; ++k) {
    const std::size_t s = order[k];
    int joined = -1;
    for (std::size_t i = 0; i < problem.steps[s].inputs.size(); ++i) {
      const int producer = tensors[static_cast<std::size_t>(problem.steps[s].inputs[i])].producer_step;
      if (compat_of(s)[i].residence == Residence::Rolling && producer >= 0) joined = cps[static_cast<std::size_t>(producer)];
    }
    // A concatenation's reader cascaded with one of its writers, the tensor whole (it stays an input
    // of the cascaded pass, written before it by the other writers).
    if (s < steps.size() && steps[s].cascade_writer >= 0) joined = cps[static_cast<std::size_t>(steps[s].cascade_writer)];
    cps[s] = joined >= 0 ? joined : static_cast<int>(next++);
  }
  std::vector<VelaLiveRange> ranges;
  std::vector<int> range_of(tensors.size(), -1);
  const auto mark = [&](std::size_t t, int time) {
    const std::int64_t bytes = bytes_of(t);
    if (bytes == 0) return;
    if (range_of[t] < 0) range_of[t] = static_cast<int>(ranges.size()), ranges.push_back({time, time + 1, bytes});
    VelaLiveRange& r = ranges[static_cast<std::size_t>(range_of[t])];
    r.start = std::min(r.start, time), r.end = std::max(r.end, time + 1);
  };
  // Vela's elementwise merge: the OFM takes the range of an IFM that only this pass reads, in the same
  // memory and layout (the first such input in Vela's graph order). Vela looks at its second operand
  // only when its first is in the memory being allocated too (it tests the first operand's memory
  // type for both), so a pass whose graph has a constant first (Vela's softmax: 43 - clz, F0_one + x,
  // F2_one - x; our input 1, operands_swapped) merges nothing.
  for (const std::size_t s : order) {
    const JoinStep& step = problem.steps[s];
    const auto o = static_cast<std::size_t>(step.output);
    if (!steps[s].npu || bytes_of(o) == 0 || range_of[o] >= 0 || step.inputs.empty()) continue;
    const bool swapped = steps[s].operands_swapped && step.inputs.size() == 2;
    if (bytes_of(static_cast<std::size_t>(step.inputs[swapped ? 1 : 0])) == 0) continue;
    for (std::size_t k = 0; k < step.inputs.size() && k < 2; ++k) {
      const std::size_t i = swapped ? 1 - k : k;
      const auto t = static_cast<std::size_t>(step.inputs[i]);
      if (!steps[s].merge_input[i] || bytes_of(t) == 0 || consumers[t] != 1 || home[t].layout != home[o].layout) continue;
      if (range_of[t] < 0) range_of[t] = static_cast<int>(ranges.size()), ranges.push_back({std::numeric_limits<int>::max(), -1, bytes_of(t)});
      range_of[o] = range_of[t];
      ranges[static_cast<std::size_t>(range_of[t])].size = std::max(bytes_of(t), bytes_of(o));
      break;
    }
  }
  // Vela's root graph starts with a pass that holds the network's inputs.
  for (std::size_t t = 0; t < tensors.size(); ++t)
    if (tensors[t].producer_step < 0 && consumers[t] > 0) mark(t, 0);
  const auto produced_before = [&](std::size_t t, std::size_t k) {
    return tensors[t].producer_step < 0 || pos[static_cast<std::size_t>(tensors[t].producer_step)] < k;
  };
  int now = 2;
  for (std::size_t k = 0; k < n;) {
    if (!steps[order[k]].npu) {  // a CPU pass of the root graph
      for (const int t : problem.steps[order[k]].inputs) mark(static_cast<std::size_t>(t), now);
      mark(static_cast<std::size_t>(problem.steps[order[k]].output), now);
      now += 2, ++k;
      continue;
    }
    // An NPU subgraph: its call and start-up pass hold its inputs one slot before its first pass, and
    // the call its outputs one slot after its last.
    std::size_t end = k;
    while (end < n && steps[order[end]].npu) ++end;
    const int call = now;
    now += 2;
    for (std::size_t first = k; first < end;) {
      std::size_t last = first;
      while (last + 1 < end && cps[order[last + 1]] == cps[order[first]]) ++last;
      for (std::size_t m = first; m <= last; ++m)
        for (const int ti : problem.steps[order[m]].inputs) {
          const auto t = static_cast<std::size_t>(ti);
          if (!produced_before(t, first)) continue;  // a rolling buffer inside the cascade
          mark(t, now);
          if (produced_before(t, k)) mark(t, call);
        }
      for (std::size_t m = first; m <= last; ++m) {
        const std::size_t s = order[m];
        const PmappingRow& row = problem.steps[s].groups[point.group[s]].rows[point.row[s]];
        if (row.sram_bytes > 0) ranges.push_back({now, now + 1, round_up_16(static_cast<std::int64_t>(row.sram_bytes))});
        if (steps[s].bias_copy_bytes > 0) ranges.push_back({now, now + 1, round_up_16(steps[s].bias_copy_bytes)});
        const auto o = static_cast<std::size_t>(problem.steps[s].output);
        const TensorCompat& oc = compat_of(s).back();
        if (oc.residence == Residence::Rolling && rolling_rows[o] > 0)
          ranges.push_back({now, now + 1, round_up_16(rolling_buffer_bytes(tensors[o], oc.rows, rolling_rows[o]))});
      }
      for (std::size_t m = first; m <= last; ++m) mark(static_cast<std::size_t>(problem.steps[order[m]].output), now);
      now += 2;
      first = last + 1;
    }
    for (std::size_t m = k; m < end; ++m) {
      const auto o = static_cast<std::size_t>(problem.steps[order[m]].output);
      if (tensors[o].network_output || (consumers[o] > 0 && last_read[o] >= end)) mark(o, now);
    }
    now += 2;
    k = end;
  }
  int last_end = 0;
  for (const VelaLiveRange& r : ranges) last_end = std::max(last_end, r.end);
  for (std::size_t t = 0; t < tensors.size(); ++t)
    if (tensors[t].network_output) mark(t, last_end);
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [](const VelaLiveRange& r) { return r.end < 0; }), ranges.end());
  return ranges;
}

std::int64_t vela_sram_used(const JoinProblem& problem, const FrontPoint& point, const std::vector<VelaSramStep>& steps) {
  return vela_hillclimb_size(vela_sram_ranges(problem, point, steps));
}

}  // namespace npumap::search
