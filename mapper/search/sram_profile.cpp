// The join's SRAM accounting along one complete mapping. The rules are join.cpp's (its header
// comment, and match_pairs and `merged` for the exact arithmetic), applied to one row per step
// instead of to groups of rows:
//
//   key      the tensors live after the step, each with the compatibility it was placed with
//   full     reserved bytes of every tensor in the key once the layer's inputs and output are in
//            it, less the output's when it overwrites an input in place (counted once)
//   cascade  while a chain of layers fused through rolling buffers is open: the rolling buffers, the
//            members' own reservations and the tensors they finished reading
//   usage    full + (the cascade coming in + the rolling buffer this layer reads) + own reservation

#include "mapper/search/sram_profile.hpp"

#include <algorithm>
#include <map>

#include "common/user_error.hpp"

namespace npumap::search {

std::vector<double> sram_profile(const JoinProblem& problem, const FrontPoint& point) {
  const std::vector<JoinTensor>& tensors = problem.tensors;
  NPUMAP_ASSERT(point.group.size() == problem.steps.size() && point.row.size() == problem.steps.size());
  std::vector<double> usage_of(problem.steps.size(), 0.0);
  std::map<int, TensorCompat> key;        // live tensor -> its placement
  std::vector<char> introduced(tensors.size(), 0);  // network inputs read by an earlier step
  double cascade = 0.0;
  for (std::size_t st = 0; st < problem.steps.size(); ++st) {
    const JoinStep& step = problem.steps[st];
    const PmappingGroup& g = step.groups.at(point.group[st]);
    const PmappingRow& row = g.rows.at(point.row[st]);
    const auto live_before = [&](int t) {
      const JoinTensor& jt = tensors[static_cast<std::size_t>(t)];
      return (jt.producer_step >= 0 && jt.producer_step < static_cast<int>(st)) || introduced[static_cast<std::size_t>(t)] != 0;
    };
    bool input_rolling = false;
    double rolling = 0.0;
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const int t = step.inputs[i];
      if (live_before(t)) {
        const auto it = key.find(t);
        NPUMAP_ASSERT(it != key.end());
        if (g.compat[i].residence == Residence::Rolling && !input_rolling) {
          input_rolling = true;
          rolling = static_cast<double>(rolling_buffer_bytes(tensors[static_cast<std::size_t>(t)], it->second.rows, g.compat[i].rows));
        }
      } else {
        key.emplace(t, g.compat[i]);  // a network input (or constant) first read here
      }
    }
    TensorCompat out = g.compat.back();
    const bool output_rolling = out.residence == Residence::Rolling;
    const int over = out.over_input;
    out.over_input = -1;
    double full = 0.0;
    if (over >= 0) full -= static_cast<double>(reserved_bytes(tensors[static_cast<std::size_t>(step.output)], out, problem.arena_is_sram));
    if (!live_before(step.output)) key.emplace(step.output, out);
    for (const auto& [t, c] : key) full += static_cast<double>(reserved_bytes(tensors[static_cast<std::size_t>(t)], c, problem.arena_is_sram));
    // Release what no later layer reads; inside a cascade its bytes stay reserved until it closes.
    double held = 0.0;
    for (auto it = key.begin(); it != key.end();) {
      const JoinTensor& jt = tensors[static_cast<std::size_t>(it->first)];
      if (!jt.network_output && jt.last_consumer_step <= static_cast<int>(st)) {
        if (output_rolling) held += static_cast<double>(reserved_bytes(jt, it->second, problem.arena_is_sram));
        it = key.erase(it);
      } else {
        ++it;
      }
    }
    const double cascade_in = input_rolling ? cascade + rolling : 0.0;
    usage_of[st] = full + cascade_in + row.sram_bytes;
    cascade = output_rolling ? cascade_in + row.sram_bytes + held : 0.0;
    for (const int t : step.inputs) {
      if (tensors[static_cast<std::size_t>(t)].producer_step < 0) introduced[static_cast<std::size_t>(t)] = 1;
    }
  }
  return usage_of;
}

}  // namespace npumap::search
