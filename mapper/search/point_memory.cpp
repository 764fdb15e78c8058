// One front point's memory per step, by the join's own rules (see point_memory.hpp and the header of
// join.cpp): the pairing of match_pairs and the row update of the merge, for one row of one group per
// step instead of every row of every group.

#include "mapper/search/point_memory.hpp"

#include <algorithm>

#include "common/user_error.hpp"

namespace npumap::search {
namespace {

struct Live {
  int tensor = -1;
  TensorCompat compat;
};

/// Bytes a live tensor takes in the arena: whole tensors resident there (constants are not).
double arena_bytes_of(const JoinTensor& t, const TensorCompat& c) {
  if (t.constant || c.residence != Residence::Arena) return 0.0;
  return static_cast<double>(c.layout == Layout::Nhcwb16 ? t.nhcwb16_bytes : t.linear_bytes);
}

}  // namespace

PointMemory point_memory(const JoinProblem& problem, const FrontPoint& point) {
  const std::vector<JoinTensor>& tensors = problem.tensors;
  const std::size_t num_steps = problem.steps.size();
  NPUMAP_ASSERT(point.group.size() == num_steps && point.row.size() == num_steps);
  PointMemory out;
  out.sram_bytes.resize(num_steps, 0.0);
  out.arena_bytes.resize(num_steps, 0.0);
  std::vector<char> introduced(tensors.size(), 0);  // network inputs already live before a step
  std::vector<Live> live;
  double cascade = 0.0;  // the open cascade's SRAM (the join's cascade column)
  const auto find = [&](int t) -> Live* {
    for (Live& e : live)
      if (e.tensor == t) return &e;
    return nullptr;
  };
  for (std::size_t s = 0; s < num_steps; ++s) {
    const int st = static_cast<int>(s);
    const JoinStep& step = problem.steps[s];
    const PmappingGroup& g = step.groups[point.group[s]];
    const PmappingRow& row = g.rows[point.row[s]];
    bool input_rolling = false;
    double rolling = 0.0;
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const int t = step.inputs[i];
      const bool is_live = (tensors[t].producer_step >= 0 && tensors[t].producer_step < st) || introduced[t];
      if (is_live) {
        const Live* e = find(t);
        NPUMAP_ASSERT(e != nullptr);
        if (g.compat[i].residence == Residence::Rolling && !input_rolling) {
          input_rolling = true;
          rolling = static_cast<double>(rolling_buffer_bytes(tensors[t], e->compat.rows, g.compat[i].rows));
        }
      } else if (find(t) == nullptr) {
        live.push_back({t, g.compat[i]});
      }
    }
    TensorCompat out_compat = g.compat.back();
    const bool output_rolling = out_compat.residence == Residence::Rolling;
    const int over = out_compat.over_input;
    out_compat.over_input = -1;
    const JoinTensor& output = tensors[step.output];
    const bool live_output = output.producer_step >= 0 && output.producer_step < st;
    double full = 0.0;
    double arena = 0.0;
    if (over >= 0) {
      // In place: the output shares the storage of the input it overwrites, counted once.
      full -= static_cast<double>(reserved_bytes(output, out_compat, problem.arena_is_sram));
      arena -= arena_bytes_of(output, out_compat);
    }
    if (!live_output) live.push_back({step.output, out_compat});
    for (const Live& e : live) {
      full += static_cast<double>(reserved_bytes(tensors[e.tensor], e.compat, problem.arena_is_sram));
      arena += arena_bytes_of(tensors[e.tensor], e.compat);
    }
    // Release what no later layer reads; inside an open cascade it stays reserved until it closes.
    double held = 0.0;
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](const Live& e) {
                                const JoinTensor& t = tensors[e.tensor];
                                if (t.network_output || t.last_consumer_step > st) return false;
                                if (output_rolling) held += static_cast<double>(reserved_bytes(t, e.compat, problem.arena_is_sram));
                                return true;
                              }),
               live.end());
    const double cascade_in = input_rolling ? cascade + rolling : 0.0;
    out.sram_bytes[s] = full + cascade_in + row.sram_bytes;
    out.arena_bytes[s] = arena;
    cascade = output_rolling ? cascade_in + row.sram_bytes + held : 0.0;
    for (const int t : step.inputs) {
      if (tensors[t].producer_step < 0) introduced[t] = 1;
    }
  }
  return out;
}

}  // namespace npumap::search
