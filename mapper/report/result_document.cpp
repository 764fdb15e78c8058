// result.json, built from a SearchResult. Key order is fixed (nlohmann::ordered_json), so documents
// diff cleanly and goldens compare byte for byte.

#include "mapper/report/result_document.hpp"
#include "mapper/report/sizing.hpp"
#include "mapper/report/report_util.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "common/hash.hpp"
#include "common/user_error.hpp"
#include "mapper/search/mapping.hpp"
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

/// `j` with every object and list in it holding no more room than its entries (a document built
/// key by key leaves up to half of each vector unused: a chain's layer mappings).
void shrink_to_fit(Json& j) {
  if (j.is_object()) {
    j.get_ref<Json::object_t&>().shrink_to_fit();
    for (auto& [key, value] : j.items()) shrink_to_fit(value);
  } else if (j.is_array()) {
    j.get_ref<Json::array_t&>().shrink_to_fit();
    for (Json& value : j) shrink_to_fit(value);
  }
}

/// One layer mapping of the front as result.json's `layer_mappings` lists it: the layer, its choices,
/// its costs and (NPU layers) where its time goes and its pass, to re-evaluate with `mapper eval`.
Json layer_mapping_tree(const arch::Arch& arch, const workloads::Workload& w, const LayerMapping& m) {
  const auto& l = w.layers[static_cast<std::size_t>(m.layer)];
  Json lj;
  lj["layer"] = l.name;
  lj["op"] = workloads::op_name(l);
  lj["ifm_shape"] = shape_json(l.ifm_shape);
  lj["ofm_shape"] = shape_json(l.ofm_shape);
  const auto tensors = [&] {
    Json t = Json::object();
    for (std::size_t i = 0; i < l.inputs.size(); ++i) t[w.tensors[static_cast<std::size_t>(l.inputs[i])].name] = describe(m.tensors[i]);
    t[w.tensors[static_cast<std::size_t>(l.output)].name] = describe(m.tensors.back());
    return t;
  };
  const auto costs = [&] {
    lj["cycles"] = m.cycles;
    lj["offchip_bytes"] = m.offchip_bytes;
    lj["energy_pj"] = m.energy_pj;
    lj["sram_bytes"] = m.sram_bytes;
    lj["repeat"] = m.repeat;
  };
  if (m.cpu) {
    // Runs on the CPU: no NPU pass; its tensors stay in the arena.
    lj["cpu"] = {{"operator", l.cpu_operator}, {"reason", l.cpu_reason}};
    lj["block_config"] = nullptr;
    lj["traversal"] = "-";
    lj["tensors"] = tensors();
    lj["fused_with_previous"] = false;
    lj["fused_with_next"] = false;
    costs();
    return lj;
  }
  const model::BlockConfig& bc = m.block_config;
  lj["block_config"] = {bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d};
  lj["traversal"] = std::string(model::traversal_name(m.traversal));
  if (m.pass.weights) lj["weights"] = weight_placement_name(m.weights);
  if (m.pass.bias) lj["bias"] = bias_placement_name(m.bias);
  lj["tensors"] = tensors();
  lj["fused_with_previous"] = m.fused_with_previous;
  lj["fused_with_next"] = m.fused_with_next;
  costs();
  lj["macs"] = l.macs;
  add_timing(lj, m.cycles, static_cast<double>(l.macs), arch);
  // Where the layer's time goes: each component's cycles (the pass's total is their maximum, so the
  // largest bounds it) and the bytes each memory moves; a batched matmul repeats the pass.
  const double repeat = m.repeat;
  const model::PassMetrics metrics = search::layer_metrics(arch, m);
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
  labels.num_valid_block_configs = m.num_block_configs;
  // Packed: on a long chain the passes (here and in vela_baseline) were most of the document's memory.
  lj["pass"] = detail::packed(model::write_pass_input(m.pass, arch, labels));
  return lj;
}

/// A layer mapping of the front, shrunk to fit: the renderers read these trees many times over.
Json layer_mapping_json(const arch::Arch& arch, const workloads::Workload& w, const LayerMapping& m) {
  Json lj = layer_mapping_tree(arch, w, m);
  shrink_to_fit(lj);
  return lj;
}

/// A layer mapping of Vela's schedule, packed (report_util.hpp): some 1.3 KB of CBOR a layer instead
/// of some 4 KB of JSON tree, made into its tree again only while one renderer reads it (two do,
/// layers_vela.csv and layers_vs_vela.csv, through LayerRef; result.json is written from the CBOR).
/// The front's layers stay trees: six renderers read each of them, and making them again each time
/// cost more CPU (about a fifth of a long chain's run) for some 2 KB a layer at the run's peak
/// (docs/design/architecture.md, memory).
Json packed_layer_mapping(const arch::Arch& arch, const workloads::Workload& w, const LayerMapping& m) {
  return detail::packed(layer_mapping_tree(arch, w, m));
}

/// One front point: its totals and, per layer, the index of its mapping in `layer_mappings`.
Json point_json(const arch::Arch& arch, const workloads::Workload& w, const FrontPoint& point, const PointMapping& mapping) {
  Json j;
  j["cycles"] = point.cycles;
  j["offchip_bytes"] = point.offchip_bytes;
  j["sram_bytes"] = point.peak_sram_bytes;
  j["energy_pj"] = point.energy_pj;
  j["edp"] = point.cycles * point.energy_pj;
  add_timing(j, point.cycles, static_cast<double>(w.total_macs()), arch);
  j["layers"] = mapping.layers;
  return j;
}

Json join_steps_json(const workloads::Workload& w, const JoinResult& joined) {
  Json steps = Json::array();
  for (std::size_t s = 0; s < joined.steps.size(); ++s) {
    const JoinStepStats& st = joined.steps[s];
    steps.push_back(detail::packed(Json{{"layer", w.layers[static_cast<std::size_t>(w.topological_order[s])].name},
                     {"left_groups", st.left_groups},
                     {"layer_groups", st.right_groups},
                     {"group_pairs_matched", st.group_pairs_matched},
                     {"rows_paired", st.rows_paired},
                     {"dropped_sram_capacity_after_join", st.dropped_sram_capacity},
                     {"dropped_dominated_after_join", st.dropped_dominated},
                     {"groups_dropped_incompatible", st.groups_dropped_incompatible},
                     {"rows_dropped_incompatible", st.rows_dropped_incompatible},
                     {"groups_out", st.groups_out},
                     {"rows_out", st.rows_out}}));  // packed: one per layer (report_util.hpp)
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

std::size_t chosen_point(const Json& result) {
  if (!result.contains("chosen") || !result["chosen"].is_number_unsigned() || !result.contains("front")) return 0;
  const auto i = result["chosen"].get<std::size_t>();
  return i < result["front"].size() ? i : 0;
}

int exit_status(SearchStatus status) {
  switch (status) {
    case SearchStatus::Ok: return 0;
    case SearchStatus::NoValidMapping: return 1;
    case SearchStatus::Interrupted: return 130;
  }
  return 0;
}

namespace {

/// Objective names, in the order given.
Json objectives_json(const SearchOptions& options) {
  Json objectives = Json::array();
  for (Objective o : options.objectives) objectives.push_back(objective_name(o));
  return objectives;
}

/// How the run was made: revision, seed, threads, the inputs with their hashes, the options.
Json provenance_json(const RunProvenance& run, const SearchOptions& options) {
  const Json objectives = objectives_json(options);
  Json provenance;
  provenance["git_revision"] = kGitRevision;
  provenance["seed"] = run.seed;
  provenance["threads"] = run.threads;
  provenance["inputs"] = {
      {"workload", {{"path", run.workload_path},
                    {"hash", !run.workload_hash.empty() ? run.workload_hash
                             // Stopped before anything was read (a FIFO without a writer): never opened again.
                             : run.stopped_while_loading ? std::string("not read")
                                                         : common::file_fnv1a_hex(run.workload_path)}}},
      {"arch", {{"spec", run.arch_spec},
                {"hash", std::filesystem::exists(run.arch_spec) ? common::file_fnv1a_hex(run.arch_spec)
                                                                : std::string("preset")}}}};
  if (!run.weight_compression_path.empty()) {
    provenance["inputs"]["weight_compression"] = {{"path", run.weight_compression_path},
                                                  {"hash", common::file_fnv1a_hex(run.weight_compression_path)}};
  }
  if (!run.config_files.empty()) {
    Json files = Json::array();
    for (const std::string& f : run.config_files) files.push_back({{"path", f}, {"hash", common::file_fnv1a_hex(f)}});
    provenance["inputs"]["config"] = files;
  }
  provenance["options"] = {{"keep_pareto", run.keep_pareto}, {"objectives", objectives},
                           {"no_fusion", !options.fusion}, {"epsilon", options.epsilon},
                           {"per_layer", run.per_layer},
                           {"baseline_only", options.baseline_only},
                           {"block_config_limit", options.vela_block_config_limit},
                           {"time_limit_s", run.time_limit_s ? Json(*run.time_limit_s) : Json(nullptr)}};
  if (!run.optimise.empty()) provenance["options"]["optimise"] = run.optimise;
  return provenance;
}

/// The arch as resolved: the memories the mapping uses as the cycle model sees them (so an override
/// can be checked), and what Vela's summary CSV states about it.
Json arch_json(const arch::Arch& arch) {
  Json j = {{"name", arch.name},
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
  j["memories"] = memories;
  // What Vela's summary CSV states about the arch (mapper/report/vela_csv.hpp).
  Json bandwidth = Json::object();
  for (const arch::MemArea a : {arch::MemArea::Sram, arch::MemArea::Dram, arch::MemArea::OnChipFlash, arch::MemArea::OffChipFlash})
    bandwidth[std::string(arch::mem_area_name(a))] = arch.mem(a).bandwidth_per_cycle;
  j["vela"] = {{"accelerator_configuration", arch::vela_accelerator_name(arch.accel)},
                            {"sram_size_bytes", arch.vela_sram_size},
                            {"memory_bandwidth_bytes_per_cycle", bandwidth}};
  return j;
}

/// Per layer (topological order): the per-layer stage's outcome and keep rates.
Json per_layer_json(const arch::Arch& arch, const workloads::Workload& workload, const SearchResult& r) {
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
    per_layer.push_back(detail::packed(lj));  // packed: a long chain's many entries (report_util.hpp)
  }
  return per_layer;
}

/// Vela's schedule (vela_schedule.hpp): its costs, its layers (`mappings`: its point's, from
/// front_mappings), and the best front point overall and among those using no more SRAM than it
/// (null if none does).
void add_vela_baseline(Json& result, const arch::Arch& arch, const workloads::Workload& workload, const SearchResult& r,
                       const FrontMappings& mappings, const std::vector<FrontPoint>& points) {
  const FrontPoint& v = r.vela->point;
  Json layers = Json::array();
  layers.get_ref<Json::array_t&>().reserve(mappings.points[0].layers.size());
  for (const std::uint32_t i : mappings.points[0].layers) layers.push_back(packed_layer_mapping(arch, workload, mappings.layers[i]));
  Json best = nullptr, best_at_sram = nullptr;
  for (const FrontPoint& p : points) {
    if (best.is_null() || p.cycles < best.get<double>()) best = p.cycles;
    if (p.peak_sram_bytes <= v.peak_sram_bytes && (best_at_sram.is_null() || p.cycles < best_at_sram.get<double>()))
      best_at_sram = p.cycles;
  }
  Json live = nullptr;
  if (const auto& memory = mappings.points[0].memory) live = memory->sram_bytes;
  result["vela_baseline"] = {{"scheduler", "Vela 2.1 default (pass-level; see docs/design/vela-schedule.md)"},
                             {"cycles", v.cycles},
                             {"offchip_bytes", v.offchip_bytes},
                             {"sram_bytes", v.peak_sram_bytes},
                             {"vela_sram_used_bytes", r.vela->sram_used_bytes},
                             {"energy_pj", v.energy_pj},
                             {"front_best_cycles", best},
                             {"front_best_cycles_within_sram", best_at_sram},
                             {"sram_in_use_bytes", std::move(live)},
                             {"layers", std::move(layers)}};
}

/// The join's part of the document: its steps, the kept front points with their layer mappings, the
/// chosen point and the best mapping without fusion.
void add_join_results(Json& result, const RunProvenance& run, const arch::Arch& arch, const workloads::Workload& workload,
                      SearchResult& r, bool fusion, double epsilon /* < 0: no join (Vela's schedule) */) {
  // Without SearchOptions::keep_join_problem the search made Vela's mappings and left the join
  // problem out: it is made again from the stage's rows (the same copy the join read), with Vela's
  // problem gone, so no two problems are held together.
  std::optional<FrontMappings> vela_mappings = std::move(r.vela_mappings);
  r.vela_mappings.reset();
  if (!r.problem) {
    if (r.vela && !vela_mappings) vela_mappings = vela_point_mappings(arch, workload, r.stage_of_vela(), *r.vela);
    if (r.vela) r.vela->problem = JoinProblem();
    r.vela_stage.reset();
    r.problem = make_join_problem(arch, workload, r.stage, fusion);
  }
  // The stage's rows were read by per_layer_json; from here on only its layer spaces and jobs are
  // (front_mappings reads the rows through the join problem, whose steps share the stage's lists:
  // dropping the stage's references leaves them to the problem alone).
  for (LayerResult& lr : r.stage.layers) lr.groups = SharedVector<PmappingGroup>();
  const JoinResult& joined = *r.joined;
  result["join"] = {{"steps", join_steps_json(workload, joined)}};
  // A run stopped during the join reports the best complete mappings its first passes found, if
  // any, marked as such (front_is_partial): real mappings, not the exact front.
  const bool found_before_stop = joined.front.empty() && !joined.found_before_stop.empty();
  const std::vector<FrontPoint>& points = found_before_stop ? joined.found_before_stop : joined.front;
  if (found_before_stop) result["front_is_partial"] = true;
  Json front = Json::array();
  // The chosen point: the front's first (the best by the first objective), or Vela's --optimise:
  // Performance the least cycles, Size the least peak SRAM (ties: the other, then off-chip bytes).
  std::size_t chosen = 0;
  const auto better = [&](const FrontPoint& a, const FrontPoint& b) {
    if (run.optimise == "Size") {
      return std::tie(a.peak_sram_bytes, a.cycles, a.offchip_bytes) < std::tie(b.peak_sram_bytes, b.cycles, b.offchip_bytes);
    }
    return std::tie(a.cycles, a.peak_sram_bytes, a.offchip_bytes) < std::tie(b.cycles, b.peak_sram_bytes, b.offchip_bytes);
  };
  if (!run.optimise.empty()) {
    for (std::size_t i = 1; i < points.size(); ++i)
      if (better(points[i], points[chosen])) chosen = i;
  }
  std::vector<std::size_t> kept;
  if (run.keep_pareto) {
    for (std::size_t i = 0; i < points.size(); ++i) kept.push_back(i);
  } else if (!points.empty()) {
    kept.push_back(chosen);
  }
  std::vector<const FrontPoint*> asked;
  std::size_t memory_of = kept.size();
  for (const std::size_t i : kept) {
    if (i == chosen) memory_of = asked.size();
    asked.push_back(&points[i]);
  }
  FrontMappings mappings = front_mappings(arch, workload, r.stage, *r.problem, asked, memory_of);
  if (epsilon < 0.0 && r.vela && !asked.empty()) mark_whole_cascades(mappings, 0, *r.vela);  // the point is Vela's
  // The join problem is read by that call only: it goes before Vela's mappings are made (on a long
  // chain the stage, the problem and both mappings would otherwise be the run's peak together).
  r.problem.reset();
  // So is the search's stage when Vela's point reads a stage of its own.
  if (r.vela_stage) r.stage = StageResult();
  if (r.vela && !vela_mappings) vela_mappings = vela_point_mappings(arch, workload, r.stage_of_vela(), *r.vela);
  // Everything below reads the mappings, the front and Vela's point: the stages and problems go.
  r.stage = StageResult();
  r.vela_stage.reset();
  if (r.vela) r.vela->problem = JoinProblem();
  for (std::size_t k = 0; k < kept.size(); ++k) {
    Json p = point_json(arch, workload, *asked[k], mappings.points[k]);
    if (const auto& memory = mappings.points[k].memory) {
      // Per layer, the SRAM in use while it runs, and the arena's peak: Vela's per-layer SRAM usage
      // and memory used.
      p["sram_in_use_bytes"] = memory->sram_bytes;
      p["arena_peak_bytes"] =
          memory->arena_bytes.empty() ? 0.0 : *std::max_element(memory->arena_bytes.begin(), memory->arena_bytes.end());
    }
    front.push_back(std::move(p));
  }
  result["front_size"] = points.size();
  // Every front point's objective values, in front order, whatever --keep-pareto says: what front.svg
  // plots. Values only (four numbers a point), so a front of thousands of points stays small.
  result["front_values_columns"] = Json::array({"cycles", "offchip_bytes", "sram_bytes", "energy_pj"});
  Json values = Json::array();
  for (const FrontPoint& p : points) values.push_back(Json::array({p.cycles, p.offchip_bytes, p.peak_sram_bytes, p.energy_pj}));
  result["front_values"] = std::move(values);
  Json summary;
  if (!points.empty()) {
    double best_cycles = points[0].cycles, best_offchip = points[0].offchip_bytes;
    double sram_min = points[0].peak_sram_bytes, sram_max = sram_min;
    for (const auto& p : points) {
      best_cycles = std::min(best_cycles, p.cycles);
      best_offchip = std::min(best_offchip, p.offchip_bytes);
      sram_min = std::min(sram_min, p.peak_sram_bytes);
      sram_max = std::max(sram_max, p.peak_sram_bytes);
    }
    summary = {{"best_cycles", best_cycles}, {"best_offchip_bytes", best_offchip},
               {"sram_min_bytes", sram_min}, {"sram_max_bytes", sram_max}};
    // What the front promises, and the sizing answer read from it (sizing.hpp).
    const bool promise = !found_before_stop && epsilon >= 0.0;
    summary["epsilon"] = promise ? Json(epsilon) : Json(nullptr);
    summary["guarantee"] = found_before_stop ? std::string("none: the run was stopped before the join finished")
                           : epsilon < 0.0   ? std::string("none: Vela's schedule alone (--baseline-only)")
                                             : search::epsilon_guarantee(epsilon);
    if (const auto sizing = sizing_answer(points)) {
      const auto entry = [&](std::size_t i) {
        return Json{{"point", i},
                    {"cycles", points[i].cycles},
                    {"offchip_bytes", points[i].offchip_bytes},
                    {"sram_bytes", points[i].peak_sram_bytes}};
      };
      Json within = Json::array();
      for (std::size_t k = 0; k < sizing->least_sram_within.size(); ++k) {
        Json e = entry(sizing->least_sram_within[k]);
        e["latency_slack"] = kSizingSlacks[k];
        within.push_back(std::move(e));
      }
      Json at_capacity = entry(sizing->best_at_capacity);
      at_capacity["sram_capacity_bytes"] = arch.sram_capacity_bytes;
      summary["sizing"] = {{"least_sram_within_latency", std::move(within)}, {"best_latency_at_sram_capacity", std::move(at_capacity)}};
    }
  }
  result["front_summary"] = summary;
  result["front"] = std::move(front);
  Json layer_mappings = Json::array();
  layer_mappings.get_ref<Json::array_t&>().reserve(mappings.layers.size());
  for (const LayerMapping& m : mappings.layers) layer_mappings.push_back(layer_mapping_json(arch, workload, m));
  result["layer_mappings"] = std::move(layer_mappings);
  mappings = FrontMappings();  // written out: only Vela's mappings are read below
  result["chosen"] = points.empty() ? Json(nullptr) : Json(run.keep_pareto ? chosen : 0);
  if (!run.optimise.empty() && !points.empty()) {
    result["chosen_by"] = run.optimise == "Size" ? "least SRAM, --optimise Size" : "least cycles, --optimise Performance";
  }
  if (r.vela) add_vela_baseline(result, arch, workload, r, *vela_mappings, points);
  if (r.unfused) {
    const FrontPoint& u = r.unfused->best;
    result["no_fusion"] = {{"cycles", u.cycles}, {"offchip_bytes", u.offchip_bytes},
                           {"sram_bytes", u.peak_sram_bytes}, {"energy_pj", u.energy_pj}};
  }
}

}  // namespace

Json result_document(const RunProvenance& run, const arch::Arch& arch, const workloads::Workload& workload,
                     const SearchOptions& options, SearchResult& r) {
  // Room for every top-level key up front: ordered_json keeps its keys in a vector whose entries
  // (pair<const string, json>) are copied, not moved, when it grows, and a growth after
  // layer_mappings would copy all of them (on a long chain a transient copy of some 4 KB per layer,
  // the run's peak).
  Json result = Json::object();
  result.get_ref<Json::object_t&>().reserve(32);
  result["tool"] = {{"name", "npu-mapper"}, {"version", kVersion}};
  result["provenance"] = provenance_json(run, options);
  result["workload"] = {{"name", workload.name}, {"layers", workload.layers.size()}, {"macs", workload.total_macs()}};
  result["arch"] = arch_json(arch);
  result["objectives"] = objectives_json(options);
  result["partial"] = r.partial;
  result["per_layer"] = per_layer_json(arch, workload, r);
  result["keep_rates"] = keep_rates_json(r.keep_rates);
  if (r.joined) add_join_results(result, run, arch, workload, r, options.fusion, options.baseline_only ? -1.0 : options.epsilon);
  const int status = exit_status(r.status);
  result["partial"] = r.partial;
  result["status"] = status == 0 ? "ok" : status == 1 ? "no_valid_mapping" : "interrupted";
  if (run.stopped_while_loading) result["stopped_while_loading"] = true;
  return result;
}

namespace {

using Json = nlohmann::ordered_json;

/// A position in the document being checked: the file and the key path.
struct At {
  const std::string& file;
  std::string path;

  At key(std::string_view k) const { return {file, path.empty() ? std::string(k) : path + "." + std::string(k)}; }
  At index(std::size_t i) const { return {file, path + "[" + std::to_string(i) + "]"}; }
  [[noreturn]] void fail(const std::string& message) const {
    throw common::UserError({file, 0, 0}, path, message, "not a result.json written by this version, or edited by hand?");
  }
};

const Json& member(const Json& obj, std::string_view k, const At& at) {
  const auto it = obj.find(k);
  if (it == obj.end()) at.key(k).fail("missing");
  return *it;
}

const Json& object(const Json& v, const At& at) {
  if (!v.is_object()) at.fail("expected an object");
  return v;
}
const Json& array(const Json& v, const At& at) {
  if (!v.is_array()) at.fail("expected a list");
  return v;
}
void string(const Json& v, const At& at) {
  if (!v.is_string()) at.fail("expected a string");
}
void boolean(const Json& v, const At& at) {
  if (!v.is_boolean()) at.fail("expected true or false");
}
void number(const Json& v, const At& at) {
  if (!v.is_number()) at.fail("expected a number");
}
/// An integer in [0, max] (counts read as int or uint64 by the renderers).
void count(const Json& v, const At& at, std::uint64_t max) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) || v.get<std::uint64_t>() > max) {
    at.fail(fmt::format("expected a whole number from 0 to {}", max));
  }
}
constexpr std::uint64_t kInt = 2147483647;
constexpr std::uint64_t kInt64 = 9223372036854775807ull;

void string_if(const Json& obj, std::string_view k, const At& at) {
  if (obj.contains(k)) string(obj[std::string(k)], at.key(k));
}
void count_if(const Json& obj, std::string_view k, const At& at, std::uint64_t max) {
  if (obj.contains(k)) count(obj[std::string(k)], at.key(k), max);
}
void shape(const Json& v, const At& at) {
  if (v.is_string()) return;
  array(v, at);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer()) at.index(i).fail("expected an integer");
  }
}
void keep_rates(const Json& v, const At& at) {
  object(v, at);
  if (v.contains("keep_rate_by_cause")) {
    const At c = at.key("keep_rate_by_cause");
    for (const auto& [cause, rate] : object(v["keep_rate_by_cause"], c).items()) number(rate, c.key(cause));
  }
}
void cpu(const Json& l, const At& at) {
  if (!l.contains("cpu")) return;
  const At c = at.key("cpu");
  object(l["cpu"], c);
  string_if(l["cpu"], "reason", c);
  string_if(l["cpu"], "operator", c);
}

/// One layer of a front point (in layer_mappings, or inline in older results).
void layer_entry(const Json& l, const At& at) {
  object(l, at);
  string(member(l, "layer", at), at.key("layer"));
  string(member(l, "op", at), at.key("op"));
  shape(member(l, "ofm_shape", at), at.key("ofm_shape"));
  const Json& bc = member(l, "block_config", at);
  if (bc.is_array()) {
    if (bc.size() != 4) at.key("block_config").fail("expected 4 values (height, width, ifm depth, depth)");
    for (std::size_t i = 0; i < 4; ++i) count(bc[i], at.key("block_config").index(i), kInt);
  }
  const At t = at.key("tensors");
  for (const auto& [name, where] : object(member(l, "tensors", at), t).items()) string(where, t.key(name));
  string(member(l, "traversal", at), at.key("traversal"));
  boolean(member(l, "fused_with_next", at), at.key("fused_with_next"));
  if (l.contains("fused_with_previous")) boolean(l["fused_with_previous"], at.key("fused_with_previous"));
  for (const char* k : {"weights", "bias", "bound_by"}) string_if(l, k, at);
  count_if(l, "macs", at, kInt64);
  for (const char* k : {"cycles_by_component", "bytes_by_area"}) {
    if (l.contains(k)) object(l[k], at.key(k));
  }
  if (l.contains("pass")) object(l["pass"], at.key("pass"));
  cpu(l, at);
}

}  // namespace

void check_result_document(const Json& r, const std::string& file) {
  const At root{file, ""};
  object(r, root);
  string(member(object(member(r, "tool", root), root.key("tool")), "version", root.key("tool")), root.key("tool.version"));
  const At w = root.key("workload");
  const Json& workload = object(member(r, "workload", root), w);
  string(member(workload, "name", w), w.key("name"));
  count(member(workload, "layers", w), w.key("layers"), kInt);
  const At a = root.key("arch");
  const Json& arch = object(member(r, "arch", root), a);
  for (const char* k : {"name", "accelerator", "system_config", "memory_mode"}) string(member(arch, k, a), a.key(k));
  count_if(arch, "peak_macs_per_cycle", a, kInt);
  string_if(arch, "weights_in", a);
  string_if(arch, "feature_maps_in", a);
  if (arch.contains("memories")) {
    const At m = a.key("memories");
    for (const auto& [area, mem] : object(arch["memories"], m).items()) {
      object(mem, m.key(area));
      count_if(mem, "read_latency", m.key(area), kInt);
      count_if(mem, "write_latency", m.key(area), kInt);
    }
  }
  const At o = root.key("provenance.options");
  const Json& options = object(member(object(member(r, "provenance", root), root.key("provenance")), "options", root.key("provenance")), o);
  boolean(member(options, "no_fusion", o), o.key("no_fusion"));
  boolean(member(options, "keep_pareto", o), o.key("keep_pareto"));
  const Json& objectives = array(member(r, "objectives", root), root.key("objectives"));
  for (std::size_t i = 0; i < objectives.size(); ++i) string(objectives[i], root.key("objectives").index(i));
  boolean(member(r, "partial", root), root.key("partial"));
  string_if(r, "status", root);
  if (r.contains("stopped_while_loading")) boolean(r["stopped_while_loading"], root.key("stopped_while_loading"));
  keep_rates(member(r, "keep_rates", root), root.key("keep_rates"));

  const At pl = root.key("per_layer");
  const Json& per_layer = array(member(r, "per_layer", root), pl);
  for (std::size_t i = 0; i < per_layer.size(); ++i) {
    const At at = pl.index(i);
    const Json& l = object(per_layer[i], at);
    string(member(l, "layer", at), at.key("layer"));
    string(member(l, "op", at), at.key("op"));
    shape(member(l, "ofm_shape", at), at.key("ofm_shape"));
    count(member(l, "groups", at), at.key("groups"), kInt);
    count(member(l, "pmappings", at), at.key("pmappings"), kInt);
    const Json& best = member(l, "best_cycles", at);
    if (!best.is_null()) number(best, at.key("best_cycles"));
    keep_rates(member(l, "keep_rates", at), at.key("keep_rates"));
    string_if(l, "unsupported", at);
    cpu(l, at);
  }

  std::size_t mappings = 0;
  if (r.contains("layer_mappings")) {
    const At lm = root.key("layer_mappings");
    const Json& list = array(r["layer_mappings"], lm);
    for (std::size_t i = 0; i < list.size(); ++i) layer_entry(list[i], lm.index(i));
    mappings = list.size();
  }
  if (r.contains("front")) {
    const At f = root.key("front");
    const Json& front = array(r["front"], f);
    for (std::size_t p = 0; p < front.size(); ++p) {
      const At at = f.index(p);
      const Json& point = object(front[p], at);
      if (point.contains("sram_in_use_bytes")) {
        const Json& live = array(point["sram_in_use_bytes"], at.key("sram_in_use_bytes"));
        for (std::size_t i = 0; i < live.size(); ++i) number(live[i], at.key("sram_in_use_bytes").index(i));
      }
      if (!point.contains("layers")) continue;
      const Json& layers = array(point["layers"], at.key("layers"));
      for (std::size_t i = 0; i < layers.size(); ++i) {
        const At li = at.key("layers").index(i);
        if (layers[i].is_object()) {
          layer_entry(layers[i], li);
        } else if (!layers[i].is_number_unsigned() || layers[i].get<std::uint64_t>() >= mappings) {
          li.fail(fmt::format("expected an index into layer_mappings (0 to {}) or a layer object", mappings == 0 ? 0 : mappings - 1));
        }
      }
    }
    count(member(r, "front_size", root), root.key("front_size"), kInt);
    if (r["front_size"].get<std::uint64_t>() < front.size()) {
      root.key("front_size").fail(fmt::format("is smaller than the {} points listed under `front`", front.size()));
    }
    if (r.contains("front_values")) {
      // Optional (older documents lack it); when present, one row of four numbers per front point.
      const At fv = root.key("front_values");
      const Json& values = array(r["front_values"], fv);
      if (values.size() != r["front_size"].get<std::uint64_t>()) {
        fv.fail(fmt::format("has {} rows, expected front_size = {}", values.size(), r["front_size"].get<std::uint64_t>()));
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        const Json& row = array(values[i], fv.index(i));
        if (row.size() != 4) fv.index(i).fail("expected [cycles, offchip_bytes, sram_bytes, energy_pj]");
        for (std::size_t k = 0; k < row.size(); ++k) number(row[k], fv.index(i).index(k));
      }
    }
    if (!front.empty()) {
      object(member(r, "front_summary", root), root.key("front_summary"));
      if (objectives.empty()) root.key("objectives").fail("a front needs at least one objective");
    }
  } else {
    count_if(r, "front_size", root, kInt);
  }
  if (r.contains("no_fusion")) object(r["no_fusion"], root.key("no_fusion"));
  if (r.contains("vela_baseline")) object(r["vela_baseline"], root.key("vela_baseline"));
  if (r.contains("front_is_partial")) boolean(r["front_is_partial"], root.key("front_is_partial"));
  if (r.contains("join")) {
    const At j = root.key("join");
    const At st = j.key("steps");
    const Json& steps = array(member(object(r["join"], j), "steps", j), st);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Json& s = object(steps[i], st.index(i));
      for (const char* k : {"rows_paired", "dropped_sram_capacity_after_join", "dropped_dominated_after_join", "rows_dropped_incompatible"}) {
        count(member(s, k, st.index(i)), st.index(i).key(k), kInt64);
      }
    }
  }
}

}  // namespace npumap::report
