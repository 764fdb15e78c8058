// A mapping run, end to end.
//
//   load_arch + load_workload -> run_per_layer (jobs.cpp) -> join (join.cpp), with fusion and, for
//   the comparison in the report, once more without rolling buffers -> result.json document ->
//   text/JSON/CSV report on stdout, and result.json, front.csv, front.svg in the output folder.
//
// The result document is the single source of every report: `mapper show` re-renders it, so the
// text of a saved run and of a live run are the same function of the same data.

#include "mapper/run.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "arch/arch_loader.hpp"
#include "arch/user_error.hpp"
#include "mapper/jobs.hpp"
#include "mapper/join.hpp"
#include "mapper/progress_line.hpp"
#include "mapper/report.hpp"
#include "model/evaluate.hpp"
#include "model/pass_json.hpp"
#include "npumap_version.hpp"
#include "workloads/loader.hpp"

namespace npumap::mapper {
namespace {

using Json = nlohmann::ordered_json;

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) { g_interrupted.store(true); }

/// FNV-1a 64-bit hash of a file's bytes, for provenance.
std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = 14695981039346656037ull;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

/// Folder for this run's files: the given one, or runs/<timestamp>[-n] that does not exist yet.
std::filesystem::path output_folder(const std::string& requested) {
  namespace fs = std::filesystem;
  if (!requested.empty()) return fs::path(requested);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  fs::path base = fs::path("runs") / stamp;
  fs::path candidate = base;
  for (int n = 2; fs::exists(candidate); ++n) candidate = fs::path(base.string() + fmt::format("-{}", n));
  return candidate;
}

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

std::string shape_text(const workloads::Shape& s) { return workloads::shape_string(s); }

Json tensor_compat_json(const TensorCompat& c) { return describe(c); }

/// One front point with its per-layer passes.
Json point_json(const arch::Arch& arch, const workloads::Workload& w, const StageResult& stage,
                const std::vector<std::vector<PmappingGroup>>& groups, const FrontPoint& point) {
  Json j;
  j["cycles"] = point.cycles;
  j["offchip_bytes"] = point.offchip_bytes;
  j["sram_bytes"] = point.peak_sram_bytes;
  j["energy_pj"] = point.energy_pj;
  j["edp"] = point.cycles * point.energy_pj;
  Json layers = Json::array();
  for (std::size_t s = 0; s < w.topological_order.size(); ++s) {
    const int layer = w.topological_order[s];
    const auto& l = w.layers[static_cast<std::size_t>(layer)];
    const PmappingGroup& g = groups[static_cast<std::size_t>(layer)][point.group[s]];
    const PmappingRow& row = g.rows[point.row[s]];
    const Job& job = stage.jobs[row.job];
    const LayerSpace& space = stage.layers[static_cast<std::size_t>(layer)].space;
    const Template& tpl = space.templates[job.template_index];
    const model::BlockConfig& bc = space.block_configs[row.candidate];
    const model::Pass pass = make_pass(arch, space, tpl, bc);
    Json lj;
    lj["layer"] = l.name;
    lj["op"] = workloads::op_name(l);
    lj["ifm_shape"] = shape_text(l.ifm_shape);
    lj["ofm_shape"] = shape_text(l.ofm_shape);
    lj["block_config"] = {bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d};
    lj["traversal"] = std::string(model::traversal_name(tpl.traversal));
    if (pass.weights) lj["weights"] = weight_placement_name(tpl.weights);
    if (pass.bias) lj["bias"] = bias_placement_name(tpl.bias);
    Json tensors = Json::object();
    for (std::size_t i = 0; i < l.inputs.size(); ++i) {
      tensors[w.tensors[static_cast<std::size_t>(l.inputs[i])].name] = tensor_compat_json(g.compat[i]);
    }
    tensors[w.tensors[static_cast<std::size_t>(l.output)].name] = tensor_compat_json(g.compat.back());
    lj["tensors"] = tensors;
    lj["fused_with_previous"] = g.compat[0].residence == Residence::Rolling;
    lj["fused_with_next"] = g.compat.back().residence == Residence::Rolling;
    lj["cycles"] = row.cycles;
    lj["offchip_bytes"] = row.offchip_bytes;
    lj["energy_pj"] = row.energy_pj;
    lj["sram_bytes"] = row.sram_bytes;
    lj["repeat"] = space.batch_repeat;
    model::PassLabels labels;
    labels.layer_name = l.name;
    labels.placement_name = "npu-mapper";
    labels.num_valid_block_configs = static_cast<int>(space.block_configs.size());
    lj["pass"] = model::write_pass_input(pass, arch, labels);
    layers.push_back(lj);
  }
  j["layers"] = layers;
  return j;
}

}  // namespace

int run_mapping(const RunOptions& options, std::ostream& out, std::ostream& err) {
  auto logger = spdlog::stderr_color_mt("mapper");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%l] %v");
  spdlog::set_level(options.verbosity > 1 ? spdlog::level::debug
                    : options.verbosity > 0 ? spdlog::level::info
                                            : spdlog::level::err);
  (void)err;

  const auto t0 = std::chrono::steady_clock::now();
  const std::filesystem::path folder = output_folder(options.out_dir);
  check_output_folder(folder);
  const arch::Arch arch = arch::load_arch(options.arch);
  const workloads::Workload workload = workloads::load_workload(options.workload);
  spdlog::info("workload {} ({} layers), arch {}, threads {}, seed {}", workload.name, workload.layers.size(),
               arch.name, options.threads, options.seed);

  g_interrupted.store(false);
  const auto previous_handler = std::signal(SIGINT, on_sigint);
  StageOptions stage_options;
  stage_options.threads = options.threads;
  stage_options.objectives = options.objectives;
  stage_options.space.fusion = !options.no_fusion;
  stage_options.interrupt = &g_interrupted;
  if (options.time_limit_s) {
    stage_options.deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(*options.time_limit_s));
  }
  StageProgress progress;
  StageResult stage;
  {
    ProgressLine line(
        [&progress](double elapsed) {
          const double done = static_cast<double>(progress.jobs_done.load());
          const double total = static_cast<double>(std::max<std::uint64_t>(1, progress.jobs_total.load()));
          const double eta = done > 0 ? elapsed * (total - done) / done : 0.0;
          return fmt::format("{} {:.0f}/{:.0f} jobs, {} pmappings evaluated, {:.1f}s elapsed, ~{:.1f}s left",
                             progress_bar(done, total), done, total, progress.evaluated.load(), elapsed, eta);
        },
        options.verbosity >= 0 && isatty(STDERR_FILENO) != 0);
    stage = run_per_layer(arch, workload, stage_options, &progress);
  }
  const auto t1 = std::chrono::steady_clock::now();
  spdlog::info("per-layer stage: {} jobs, {} pmappings evaluated in {:.3f} s", stage.jobs.size(),
               progress.evaluated.load(), std::chrono::duration<double>(t1 - t0).count());

  Json result;
  result["tool"] = {{"name", "npu-mapper"}, {"version", kVersion}};
  Json provenance;
  provenance["git_revision"] = kGitRevision;
  provenance["seed"] = options.seed;
  provenance["threads"] = options.threads;
  provenance["inputs"] = {{"workload", {{"path", options.workload}, {"hash", file_hash(options.workload)}}},
                          {"arch", {{"spec", options.arch},
                                    {"hash", std::filesystem::exists(options.arch) ? file_hash(options.arch)
                                                                                    : std::string("preset")}}}};
  Json objectives = Json::array();
  for (Objective o : options.objectives) objectives.push_back(objective_name(o));
  provenance["options"] = {{"keep_pareto", options.keep_pareto}, {"objectives", objectives},
                           {"no_fusion", options.no_fusion}, {"tolerance", options.tolerance}, {"per_layer", options.per_layer},
                           {"time_limit_s", options.time_limit_s ? Json(*options.time_limit_s) : Json(nullptr)}};
  result["provenance"] = provenance;
  result["workload"] = {{"name", workload.name}, {"layers", workload.layers.size()}, {"macs", workload.total_macs()}};
  result["arch"] = {{"name", arch.name},
                    {"accelerator", arch.accel.name},
                    {"system_config", arch.system_config},
                    {"memory_mode", arch.memory_mode},
                    {"sram_capacity_bytes", arch.sram_capacity_bytes}};
  result["objectives"] = objectives;
  result["partial"] = stage.partial;

  Json per_layer = Json::array();
  bool some_layer_empty = false;
  for (int layer : workload.topological_order) {
    const auto& lr = stage.layers[static_cast<std::size_t>(layer)];
    const auto& l = workload.layers[static_cast<std::size_t>(layer)];
    std::size_t rows = 0;
    double best = -1.0;
    for (const auto& g : lr.groups) {
      rows += g.rows.size();
      for (const auto& r : g.rows) best = best < 0 || r.cycles < best ? r.cycles : best;
    }
    some_layer_empty = some_layer_empty || rows == 0;
    Json lj;
    lj["layer"] = l.name;
    lj["op"] = workloads::op_name(l);
    lj["ofm_shape"] = shape_text(l.ofm_shape);
    lj["templates"] = lr.space.templates.size();
    lj["groups"] = lr.groups.size();
    lj["pmappings"] = rows;
    lj["best_cycles"] = rows > 0 ? Json(best) : Json(nullptr);
    if (!lr.space.unsupported.empty()) lj["unsupported"] = lr.space.unsupported;
    lj["keep_rates"] = keep_rates_json(lr.rates);
    per_layer.push_back(lj);
  }
  result["per_layer"] = per_layer;
  result["keep_rates"] = keep_rates_json(stage.overall);

  int status = 0;
  if (!options.per_layer && !some_layer_empty) {
    std::vector<std::vector<PmappingGroup>> groups;
    JoinProblem problem = make_join_problem(arch, workload, stage, options.objectives, groups, !options.no_fusion);
    problem.threads = options.threads;
    problem.tolerance = options.tolerance;
    problem.interrupt = &g_interrupted;
    problem.deadline = stage_options.deadline;
    const JoinResult joined = join(problem);
    const auto t2 = std::chrono::steady_clock::now();
    spdlog::info("join: {} steps, front of {} points in {:.3f} s", joined.steps.size(), joined.front.size(),
                 std::chrono::duration<double>(t2 - t1).count());
    Json steps = Json::array();
    for (std::size_t s = 0; s < joined.steps.size(); ++s) {
      const JoinStepStats& st = joined.steps[s];
      steps.push_back({{"layer", workload.layers[static_cast<std::size_t>(workload.topological_order[s])].name},
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
    result["join"] = {{"steps", steps}};
    // The join's causes, over all steps: each rate is the fraction of the rows that reached the filter.
    std::uint64_t paired = 0, over = 0, dominated = 0, lookahead = 0;
    for (const JoinStepStats& st : joined.steps) {
      paired += st.rows_paired;
      over += st.dropped_sram_capacity;
      dominated += st.dropped_dominated;
      lookahead += st.rows_dropped_incompatible;
    }
    const auto kept = [](std::uint64_t entered, std::uint64_t removed) {
      return entered == 0 ? 1.0 : static_cast<double>(entered - removed) / static_cast<double>(entered);
    };
    Json& causes = result["keep_rates"]["keep_rate_by_cause"];
    causes["sram_capacity_after_join"] = kept(paired, over);
    causes["dominated_after_join"] = kept(paired - over, dominated);
    causes["incompatible"] = kept(paired - over - dominated, lookahead);
    Json front = Json::array();
    const std::size_t keep = options.keep_pareto ? joined.front.size() : std::min<std::size_t>(1, joined.front.size());
    for (std::size_t i = 0; i < keep; ++i) front.push_back(point_json(arch, workload, stage, groups, joined.front[i]));
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
    result["chosen"] = joined.front.empty() ? Json(nullptr) : Json(0);
    if (!options.no_fusion && !joined.front.empty()) {
      std::vector<std::vector<PmappingGroup>> plain;
      JoinProblem unfused_problem = make_join_problem(arch, workload, stage, options.objectives, plain, false);
      unfused_problem.threads = options.threads;
      unfused_problem.tolerance = options.tolerance;
      unfused_problem.interrupt = &g_interrupted;
      unfused_problem.deadline = stage_options.deadline;
      const JoinResult unfused = join(unfused_problem);
      if (!unfused.front.empty()) {
        const FrontPoint& u = unfused.front[0];
        result["no_fusion"] = {{"cycles", u.cycles}, {"offchip_bytes", u.offchip_bytes},
                               {"sram_bytes", u.peak_sram_bytes}, {"energy_pj", u.energy_pj},
                               {"front_size", unfused.front.size()}};
      }
    }
    if (joined.partial) stage.partial = true;
    if (joined.front.empty()) status = 1;
  } else if (some_layer_empty) {
    status = 1;
  }
  std::signal(SIGINT, previous_handler);
  if (stage.partial) status = 130;
  result["partial"] = stage.partial;
  result["status"] = status == 0 ? "ok" : status == 1 ? "no_valid_mapping" : "interrupted";

  write_outputs(folder, result);
  if (options.verbosity >= 0) {
    switch (options.format) {
      case Format::Text: out << render_text(result); break;
      case Format::Json: out << result.dump(1) << "\n"; break;
      case Format::Csv: out << render_csv(result); break;
    }
    if (options.format == Format::Text) out << "\nwrote " << (folder / "result.json").string() << ", front.csv, front.svg\n";
  }
  return status;
}

}  // namespace npumap::mapper
