// result.json, built from a SearchResult. Key order is fixed (nlohmann::ordered_json), so documents
// diff cleanly and goldens compare byte for byte.

#include "mapper/report/result_document.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "common/hash.hpp"
#include "model/evaluate.hpp"
#include "model/pass_json.hpp"
#include "npumap_version.hpp"

namespace npumap::report {
namespace {

using Json = nlohmann::ordered_json;
using namespace search;  // NOLINT: this file renders search's types (a .cpp, not a header)

/// A shape as a JSON list [N, H, W, C], like block configs.
Json shape_json(const workloads::Shape& s) { return Json::array({s.n, s.h, s.w, s.c}); }

/// Time and utilisation of `cycles` that do `macs` multiply-accumulates on `arch`: latency at the
/// core clock (to the nanosecond, so no float noise), inferences per second, achieved MACs per
/// cycle and its fraction of the accelerator's peak (MACs x cores per cycle).
void add_timing(Json& j, double cycles, double macs, const arch::Arch& arch) {
  const double peak = static_cast<double>(arch.accel.macs * arch.accel.cores);
  j["latency_ms"] = std::round(cycles / arch.core_clock * 1e9) / 1e6;
  j["inferences_per_s"] = cycles > 0 ? arch.core_clock / cycles : 0.0;
  j["macs_per_cycle"] = cycles > 0 ? macs / cycles : 0.0;
  j["utilisation"] = cycles > 0 && peak > 0 ? macs / cycles / peak : 0.0;
}

/// The distinct layer mappings of the front: a front point lists, per layer in topological order, an
/// index into this table, so a mapping that many points share (most layers of a large front) is
/// written once. A mapping is identified by (step, group, row) of the join problem.
struct LayerMappings {
  Json list = Json::array();
  std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, std::size_t> index;
  /// The index of the mapping `key`, or -1 if it is not in the table yet.
  std::int64_t find(const std::tuple<std::size_t, std::uint32_t, std::uint32_t>& key) const {
    const auto it = index.find(key);
    return it == index.end() ? -1 : static_cast<std::int64_t>(it->second);
  }
  std::size_t add(const std::tuple<std::size_t, std::uint32_t, std::uint32_t>& key, Json entry) {
    index.emplace(key, list.size());
    list.push_back(std::move(entry));
    return list.size() - 1;
  }
};

/// One front point: its totals and, per layer, the index of its mapping in `table`.
Json point_json(const arch::Arch& arch, const workloads::Workload& w, const StageResult& stage,
                const JoinProblem& problem, const FrontPoint& point, LayerMappings& table) {
  Json j;
  j["cycles"] = point.cycles;
  j["offchip_bytes"] = point.offchip_bytes;
  j["sram_bytes"] = point.peak_sram_bytes;
  j["energy_pj"] = point.energy_pj;
  j["edp"] = point.cycles * point.energy_pj;
  add_timing(j, point.cycles, static_cast<double>(w.total_macs()), arch);
  Json layers = Json::array();
  for (std::size_t s = 0; s < w.topological_order.size(); ++s) {
    const auto key = std::make_tuple(s, point.group[s], point.row[s]);
    if (const std::int64_t known = table.find(key); known >= 0) {
      layers.push_back(known);
      continue;
    }
    const int layer = w.topological_order[s];
    const auto& l = w.layers[static_cast<std::size_t>(layer)];
    const PmappingGroup& g = problem.steps[s].groups[point.group[s]];
    const PmappingRow& row = g.rows[point.row[s]];
    const Job& job = stage.jobs[row.job];
    const LayerSpace& space = stage.layers[static_cast<std::size_t>(layer)].space;
    const Template& tpl = space.templates[job.template_index];
    Json lj;
    lj["layer"] = l.name;
    lj["op"] = workloads::op_name(l);
    lj["ifm_shape"] = shape_json(l.ifm_shape);
    lj["ofm_shape"] = shape_json(l.ofm_shape);
    if (space.cpu) {
      // Runs on the CPU: no NPU pass, nothing to re-evaluate; its tensors stay in the arena.
      lj["cpu"] = {{"operator", l.cpu_operator}, {"reason", l.cpu_reason}};
      lj["block_config"] = nullptr;
      lj["traversal"] = "-";
      Json tensors = Json::object();
      for (std::size_t i = 0; i < l.inputs.size(); ++i) {
        tensors[w.tensors[static_cast<std::size_t>(l.inputs[i])].name] = describe(g.compat[i]);
      }
      tensors[w.tensors[static_cast<std::size_t>(l.output)].name] = describe(g.compat.back());
      lj["tensors"] = tensors;
      lj["fused_with_previous"] = false;
      lj["fused_with_next"] = false;
      lj["cycles"] = row.cycles;
      lj["offchip_bytes"] = row.offchip_bytes;
      lj["energy_pj"] = row.energy_pj;
      lj["sram_bytes"] = row.sram_bytes;
      lj["repeat"] = space.batch_repeat;
      layers.push_back(table.add(key, std::move(lj)));
      continue;
    }
    const model::BlockConfig& bc = space.block_configs[row.candidate];
    const model::Pass pass = make_pass(arch, space, tpl, bc);
    lj["block_config"] = {bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d};
    lj["traversal"] = std::string(model::traversal_name(tpl.traversal));
    if (pass.weights) lj["weights"] = weight_placement_name(tpl.weights);
    if (pass.bias) lj["bias"] = bias_placement_name(tpl.bias);
    Json tensors = Json::object();
    for (std::size_t i = 0; i < l.inputs.size(); ++i) {
      tensors[w.tensors[static_cast<std::size_t>(l.inputs[i])].name] = describe(g.compat[i]);
    }
    tensors[w.tensors[static_cast<std::size_t>(l.output)].name] = describe(g.compat.back());
    lj["tensors"] = tensors;
    lj["fused_with_previous"] = g.compat[0].residence == Residence::Rolling;
    lj["fused_with_next"] = g.compat.back().residence == Residence::Rolling;
    lj["cycles"] = row.cycles;
    lj["offchip_bytes"] = row.offchip_bytes;
    lj["energy_pj"] = row.energy_pj;
    lj["sram_bytes"] = row.sram_bytes;
    lj["repeat"] = space.batch_repeat;
    lj["macs"] = l.macs;
    add_timing(lj, row.cycles, static_cast<double>(l.macs), arch);
    // Where the layer's time goes: each component's cycles (the pass's total is their maximum, so the
    // largest bounds it) and the bytes each memory moves; a batched matmul repeats the pass.
    const model::PassMetrics metrics = model::evaluate(arch, pass);
    const double repeat = space.batch_repeat;
    Json components = Json::object();
    model::PassCycles bound = model::PassCycles::Npu;
    for (int c = 0; c < static_cast<int>(model::PassCycles::Total); ++c) {
      const auto pc = static_cast<model::PassCycles>(c);
      components[std::string(model::pass_cycles_name(pc))] = metrics.cycle(pc) * repeat;
      if (metrics.cycle(pc) > metrics.cycle(bound)) bound = pc;
    }
    lj["cycles_by_component"] = components;
    lj["bound_by"] = std::string(model::pass_cycles_name(bound));
    Json bytes = Json::object();
    for (int a = 0; a < arch::kNumMemAreas; ++a) {
      const auto area = static_cast<arch::MemArea>(a);
      const double b = model::area_bytes(metrics, area) * repeat;
      if (b > 0) bytes[std::string(arch::mem_area_name(area))] = b;
    }
    lj["bytes_by_area"] = bytes;
    model::PassLabels labels;
    labels.layer_name = l.name;
    labels.placement_name = "npu-mapper";
    labels.num_valid_block_configs = static_cast<int>(space.block_configs.size());
    lj["pass"] = model::write_pass_input(pass, arch, labels);
    layers.push_back(table.add(key, std::move(lj)));
  }
  j["layers"] = layers;
  return j;
}

Json join_steps_json(const workloads::Workload& w, const JoinResult& joined) {
  Json steps = Json::array();
  for (std::size_t s = 0; s < joined.steps.size(); ++s) {
    const JoinStepStats& st = joined.steps[s];
    steps.push_back({{"layer", w.layers[static_cast<std::size_t>(w.topological_order[s])].name},
                     {"left_groups", st.left_groups},
                     {"layer_groups", st.right_groups},
                     {"group_pairs_matched", st.group_pairs_matched},
                     {"rows_paired", st.rows_paired},
                     {"dropped_sram_capacity_after_join", st.dropped_sram_capacity},
                     {"dropped_dominated_after_join", st.dropped_dominated},
                     {"groups_dropped_incompatible", st.groups_dropped_incompatible},
                     {"rows_dropped_incompatible", st.rows_dropped_incompatible},
                     {"groups_out", st.groups_out},
                     {"rows_out", st.rows_out}});
  }
  return steps;
}

}  // namespace

Json keep_rates_json(const KeepRates& r) {
  Json j;
  j["total"] = r.total;
  j["valid"] = r.valid;
  j["evaluated"] = r.evaluated;
  j["pareto_optimal"] = r.pareto;
  Json causes = Json::object();
  for (int c = 0; c < kNumCauses; ++c) causes[cause_name(static_cast<Cause>(c))] = r.rate[c];
  j["keep_rate_by_cause"] = causes;
  return j;
}

int exit_status(SearchStatus status) {
  switch (status) {
    case SearchStatus::Ok: return 0;
    case SearchStatus::NoValidMapping: return 1;
    case SearchStatus::Interrupted: return 130;
  }
  return 0;
}

Json result_document(const RunProvenance& run, const arch::Arch& arch, const workloads::Workload& workload,
                     const SearchOptions& options, const SearchResult& r) {
  Json result;
  result["tool"] = {{"name", "npu-mapper"}, {"version", kVersion}};
  Json provenance;
  provenance["git_revision"] = kGitRevision;
  provenance["seed"] = run.seed;
  provenance["threads"] = run.threads;
  provenance["inputs"] = {
      {"workload", {{"path", run.workload_path}, {"hash", common::file_fnv1a_hex(run.workload_path)}}},
      {"arch", {{"spec", run.arch_spec},
                {"hash", std::filesystem::exists(run.arch_spec) ? common::file_fnv1a_hex(run.arch_spec)
                                                                : std::string("preset")}}}};
  if (!run.weight_compression_path.empty()) {
    provenance["inputs"]["weight_compression"] = {{"path", run.weight_compression_path},
                                                  {"hash", common::file_fnv1a_hex(run.weight_compression_path)}};
  }
  Json objectives = Json::array();
  for (Objective o : options.objectives) objectives.push_back(objective_name(o));
  provenance["options"] = {{"keep_pareto", run.keep_pareto}, {"objectives", objectives},
                           {"no_fusion", !options.fusion}, {"tolerance", options.tolerance},
                           {"per_layer", run.per_layer},
                           {"time_limit_s", run.time_limit_s ? Json(*run.time_limit_s) : Json(nullptr)}};
  result["provenance"] = provenance;
  result["workload"] = {{"name", workload.name}, {"layers", workload.layers.size()}, {"macs", workload.total_macs()}};
  result["arch"] = {{"name", arch.name},
                    {"accelerator", arch.accel.name},
                    {"system_config", arch.system_config},
                    {"memory_mode", arch.memory_mode},
                    {"sram_capacity_bytes", arch.sram_capacity_bytes},
                    {"core_clock_hz", arch.core_clock},
                    {"peak_macs_per_cycle", arch.accel.macs * arch.accel.cores},
                    {"weights_in", arch::mem_area_name(arch.permanent_storage)},
                    {"feature_maps_in", arch::mem_area_name(arch.feature_map_storage)}};
  // The memories the mapping uses, as the cycle model sees them (so an override can be checked).
  Json memories = Json::object();
  for (arch::MemArea a : {arch.fast_storage, arch.feature_map_storage, arch.permanent_storage}) {
    const std::string name(arch::mem_area_name(a));
    if (memories.contains(name)) continue;
    const arch::MemoryParams& m = arch.mem(a);
    memories[name] = {{"bytes_per_cycle", m.bandwidth_per_cycle}, {"burst_length", m.burst_length},
                      {"read_latency", m.latency_read}, {"write_latency", m.latency_write}};
  }
  result["arch"]["memories"] = memories;
  result["objectives"] = objectives;
  result["partial"] = r.partial;

  Json per_layer = Json::array();
  for (int layer : workload.topological_order) {
    const auto& lr = r.stage.layers[static_cast<std::size_t>(layer)];
    const auto& l = workload.layers[static_cast<std::size_t>(layer)];
    std::size_t rows = 0;
    double best = -1.0;
    for (const auto& g : lr.groups) {
      rows += g.rows.size();
      for (const auto& row : g.rows) best = best < 0 || row.cycles < best ? row.cycles : best;
    }
    Json lj;
    lj["layer"] = l.name;
    lj["op"] = workloads::op_name(l);
    lj["ofm_shape"] = shape_json(l.ofm_shape);
    lj["templates"] = lr.space.templates.size();
    lj["groups"] = lr.groups.size();
    lj["pmappings"] = rows;
    lj["best_cycles"] = rows > 0 ? Json(best) : Json(nullptr);
    if (!lr.space.unsupported.empty()) lj["unsupported"] = lr.space.unsupported;
    // A layer left without pmappings says what it would need, next to what the arch has.
    if (rows == 0 && lr.min_sram_bytes > arch.sram_capacity_bytes) lj["min_sram_bytes"] = lr.min_sram_bytes;
    if (lr.space.cpu) lj["cpu"] = {{"operator", l.cpu_operator}, {"reason", l.cpu_reason}};
    lj["keep_rates"] = keep_rates_json(lr.rates);
    per_layer.push_back(lj);
  }
  result["per_layer"] = per_layer;
  result["keep_rates"] = keep_rates_json(r.keep_rates);

  if (r.joined) {
    const JoinResult& joined = *r.joined;
    result["join"] = {{"steps", join_steps_json(workload, joined)}};
    Json front = Json::array();
    LayerMappings mappings;
    const std::size_t keep = run.keep_pareto ? joined.front.size() : std::min<std::size_t>(1, joined.front.size());
    for (std::size_t i = 0; i < keep; ++i) {
      front.push_back(point_json(arch, workload, r.stage, *r.problem, joined.front[i], mappings));
    }
    result["front_size"] = joined.front.size();
    Json summary;
    if (!joined.front.empty()) {
      double best_cycles = joined.front[0].cycles, best_offchip = joined.front[0].offchip_bytes;
      double sram_min = joined.front[0].peak_sram_bytes, sram_max = sram_min;
      for (const auto& p : joined.front) {
        best_cycles = std::min(best_cycles, p.cycles);
        best_offchip = std::min(best_offchip, p.offchip_bytes);
        sram_min = std::min(sram_min, p.peak_sram_bytes);
        sram_max = std::max(sram_max, p.peak_sram_bytes);
      }
      summary = {{"best_cycles", best_cycles}, {"best_offchip_bytes", best_offchip},
                 {"sram_min_bytes", sram_min}, {"sram_max_bytes", sram_max}};
    }
    result["front_summary"] = summary;
    result["front"] = front;
    result["layer_mappings"] = std::move(mappings.list);
    result["chosen"] = joined.front.empty() ? Json(nullptr) : Json(0);
    if (r.unfused) {
      const FrontPoint& u = r.unfused->best;
      result["no_fusion"] = {{"cycles", u.cycles}, {"offchip_bytes", u.offchip_bytes},
                             {"sram_bytes", u.peak_sram_bytes}, {"energy_pj", u.energy_pj},
                             {"front_size", r.unfused->front_size}};
    }
  }
  const int status = exit_status(r.status);
  result["partial"] = r.partial;
  result["status"] = status == 0 ? "ok" : status == 1 ? "no_valid_mapping" : "interrupted";
  return result;
}

}  // namespace npumap::report
