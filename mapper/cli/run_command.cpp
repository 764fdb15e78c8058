// A mapping run, end to end.
//
//   load_arch + load_workload -> search::map_network (per-layer stage, join with fusion, the join
//   without fusion for comparison, keep rates) -> report::result_document -> text/JSON/CSV report on
//   stdout, and result.json, front.csv, front.svg, layers.csv in the output folder.
//
// The result document is the single source of every report: `mapper show` re-renders it, so the
// text of a saved run and of a live run are the same function of the same data.

#include "mapper/cli/run_command.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <ctime>
#include <filesystem>
#include <optional>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arch/arch_loader.hpp"
#include "arch/vela_config.hpp"
#include "common/files.hpp"
#include "common/stop_token.hpp"
#include "mapper/report/progress_line.hpp"
#include "mapper/report/report.hpp"
#include "mapper/report/result_document.hpp"
#include "mapper/report/vela_csv.hpp"
#include "mapper/search/map_network.hpp"
#include "workloads/loader.hpp"
#include "workloads/tflite/import.hpp"
#include "workloads/weight_compression.hpp"
#include "workloads/zoo.hpp"

namespace npumap::cli {
namespace {

/// Folder for this run's files: the given one (without trailing slashes), or runs/<timestamp> (the
/// first of runs/<timestamp>[-n] free now; the name is claimed only when the files are written, and
/// a run that finds it taken then takes the next free one).
std::filesystem::path output_folder(const std::string& requested) {
  namespace fs = std::filesystem;
  if (!requested.empty()) return common::without_trailing_slash(fs::path(requested));
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  fs::path base = fs::path("runs") / stamp;
  fs::path candidate = base;
  std::error_code ec;
  for (int n = 2; fs::exists(candidate, ec); ++n) candidate = fs::path(base.string() + fmt::format("-{}", n));
  return candidate;
}

/// The arch of the run: --arch (or Vela's --accelerator-config alone), with --system-config,
/// --memory-mode and --arena-cache-size applied last and Vela's --config sections available by name
/// (errors name the flag, or the ini line). Keys of the selected sections the model does not use are
/// logged (-v).
arch::Arch load_run_arch(const RunOptions& options, const arch::VelaConfig& vela) {
  arch::ArchRequest request;
  request.spec = options.arch;
  request.accelerator = options.accelerator_config;
  request.system_config = options.system_config;
  request.memory_mode = options.memory_mode;
  request.arena_cache_size = options.arena_cache_size;
  request.vela = &vela;
  request.system_config_key = "--system-config";
  request.memory_mode_key = "--memory-mode";
  request.arena_cache_size_key = "--arena-cache-size";
  request.accelerator_key = "--accelerator-config";
  std::vector<std::string> notes;
  arch::Arch arch = arch::load_arch(request, arch::default_presets_dir(), &notes);
  for (const std::string& note : notes) spdlog::info("--config: {}", note);
  std::string name = options.arch.empty() ? options.accelerator_config : options.arch;
  if (!options.system_config.empty()) name += " system_config=" + options.system_config;
  if (!options.memory_mode.empty()) name += " memory_mode=" + options.memory_mode;
  if (options.arena_cache_size) name += fmt::format(" arena_cache_size={}", *options.arena_cache_size);
  arch.name = name;
  return arch;
}

/// A network no operator of which runs on the NPU: one line saying so and why (the CPU operators'
/// reasons, as Vela gives them, counted), or nothing.
std::optional<std::string> cpu_only_message(const workloads::Workload& w, const std::string& path) {
  if (std::any_of(w.layers.begin(), w.layers.end(), [](const workloads::Layer& l) { return l.kind != workloads::OpKind::Cpu; }))
    return std::nullopt;
  // Reasons by their first line (Vela's constraint), with the operators that hit each and the data
  // types Vela's detail lines name ("Tensor 'x' has data type: float32").
  struct Reason {
    std::string text;
    std::vector<std::string> operators;
    std::vector<std::string> types;
  };
  std::vector<Reason> reasons;
  bool data_types = false;
  for (const workloads::Layer& l : w.layers) {
    // The workload holds Vela's lines joined with "; " (a .tflite) or as written (YAML).
    std::string first = l.cpu_reason.substr(0, std::min(l.cpu_reason.find('\n'), l.cpu_reason.find("; ")));
    if (first.rfind("- ", 0) == 0) first = first.substr(2);
    if (first.empty()) first = "no NPU form";
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& r) { return r.text == first; });
    if (it == reasons.end()) it = reasons.insert(reasons.end(), Reason{first, {}, {}});
    if (std::find(it->operators.begin(), it->operators.end(), l.cpu_operator) == it->operators.end())
      it->operators.push_back(l.cpu_operator);
    const std::string marker = "data type: ";
    for (std::size_t at = l.cpu_reason.find(marker); at != std::string::npos; at = l.cpu_reason.find(marker, at + 1)) {
      const std::size_t b = at + marker.size();
      const std::string type = l.cpu_reason.substr(b, l.cpu_reason.find_first_of(" \n,", b) - b);
      if (!type.empty() && std::find(it->types.begin(), it->types.end(), type) == it->types.end()) it->types.push_back(type);
      data_types = true;
    }
  }
  std::string why;
  for (const Reason& r : reasons) {
    std::string ops;
    for (const auto& op : r.operators) ops += (ops.empty() ? "" : ", ") + op;
    std::string types;
    for (const auto& t : r.types) types += (types.empty() ? "" : ", ") + t;
    why += fmt::format("{}{} ({}{})", why.empty() ? "" : "; ", r.text, ops, types.empty() ? "" : ": " + types + " tensors");
  }
  const std::string hint = data_types ? "the NPU runs int8 and int16 quantised operators: quantise the model, or pass "
                                        "--allow-cpu-only to map it anyway"
                                      : "pass --allow-cpu-only to map it anyway";
  return fmt::format("{}: no operator runs on the NPU: all {} fall back to the CPU: {} ({})", path,
                     w.layers.size() == 1 ? std::string("1 operator") : fmt::format("{} operators", w.layers.size()), why, hint);
}

/// The search's options as the run's command line sets them (the time limit and stop token are the
/// run's to add).
search::SearchOptions search_options_of(const RunOptions& options) {
  search::SearchOptions search_options;
  search_options.objectives = options.objectives;
  search_options.fusion = !options.no_fusion;
  search_options.epsilon = options.epsilon;
  search_options.per_layer_only = options.per_layer;
  search_options.baseline_only = options.baseline_only;
  search_options.vela_block_config_limit = options.block_config_limit;
  search_options.threads = options.threads;
  // report::result_document makes the join problem again after Vela's layer mappings, not the search.
  search_options.keep_join_problem = false;
  return search_options;
}

/// What every run records of its options (result.json's provenance).
report::RunProvenance provenance_of(const RunOptions& options, const std::string& workload_path, const std::string& hash) {
  report::RunProvenance run;
  run.workload_path = workload_path;
  run.workload_hash = hash;
  run.arch_spec = options.arch.empty() ? options.accelerator_config : options.arch;
  run.config_files = options.config_files;
  run.optimise = options.optimise;
  run.weight_compression_path = options.weight_compression_file;
  run.seed = options.seed;
  run.threads = options.threads;
  run.keep_pareto = options.keep_pareto;
  run.per_layer = options.per_layer;
  run.time_limit_s = options.time_limit_s;
  return run;
}

/// Writes the run folder of `document` and prints its report, as every run does.
void write_and_render(const RunOptions& options, const nlohmann::ordered_json& document, const std::filesystem::path& folder,
                      bool numbered, std::ostream& out) {
  std::filesystem::path written_folder;
  const std::vector<std::string> written = report::write_outputs(folder, document, numbered, &written_folder);
  if (options.verbosity < 0) return;
  report::TextOptions text;
  text.verbose = options.verbosity >= 1;
  switch (options.format) {
    case Format::Text: out << report::render_text(document, text); break;
    case Format::Json: report::write_document(out, document); break;
    case Format::Csv: out << report::render_csv(document); break;
  }
  if (options.format == Format::Text) out << "\n" << report::render_written(written_folder, written);
}

/// A run stopped while its workload loaded: the run folder, marked partial (status "interrupted",
/// stopped_while_loading), with no layers; exit status 130 as for any stop.
int write_stopped_while_loading(const RunOptions& options, const arch::Arch& arch, const workloads::Workload& none,
                                const std::string& hash, const std::filesystem::path& folder, bool numbered,
                                std::ostream& out) {
  search::SearchOptions search_options = search_options_of(options);
  search::SearchResult result;
  result.partial = true;
  result.status = search::SearchStatus::Interrupted;
  report::RunProvenance run = provenance_of(options, none.source_file, hash);
  run.stopped_while_loading = true;
  write_and_render(options, report::result_document(run, arch, none, search_options, result), folder, numbered, out);
  return report::exit_status(result.status);
}

}  // namespace

int run_mapping(const RunOptions& options, const std::atomic<bool>* interrupt, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  // The time limit counts from the start and is honoured while the inputs load, too.
  std::optional<common::StopToken::Clock::time_point> deadline;
  if (options.time_limit_s) {
    deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(*options.time_limit_s));
  }
  const common::StopToken stop(interrupt, deadline);
  const bool numbered = options.out_dir.empty();
  const std::filesystem::path folder = output_folder(options.out_dir);
  report::check_output_folder(folder, numbered);
  const arch::VelaConfig vela(options.config_files);
  const arch::Arch arch = load_run_arch(options, vela);
  // A bare name ("resnet18") is a zoo workload, as in sweep specs.
  const std::string workload_path = workloads::is_zoo_name(options.workload) && !std::filesystem::exists(options.workload)
                                        ? workloads::zoo_file(options.workload, "--workload")
                                        : options.workload;
  tflite::ImportOptions import;
  import.accelerator_config = arch.accel.name;
  import.vela_rewrites = options.vela_rewrites;
  // A stop while the workload loads (--time-limit, Ctrl-C: polled while a pipe waits, while a large
  // YAML is parsed and every 256 layers) still writes the run folder, marked partial, with no layers.
  std::optional<tflite::NetworkInput> input;
  workloads::Workload workload;
  try {
    input = tflite::read_network(workload_path, stop);
    workload = tflite::load_network(*input, import, stop);
  } catch (const common::Interrupted& e) {
    spdlog::info("interrupted while {} after {:.3f} s", e.what(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    workloads::Workload none;
    none.name = std::filesystem::path(workload_path).stem().string();
    none.source_file = workload_path;
    return write_stopped_while_loading(options, arch, none, input ? input->hash : std::string(), folder, numbered, out);
  }
  if (!options.weight_compression_file.empty()) {
    workloads::apply_weight_compression_file(workload, options.weight_compression_file);
  }
  if (const std::optional<std::string> cpu_only = cpu_only_message(workload, workload_path)) {
    // Nothing for the NPU to do: say so rather than report 0 cycles (Vela places every operator on the CPU).
    if (!options.allow_cpu_only) {
      std::cerr << *cpu_only << "\n";
      return report::exit_status(search::SearchStatus::NoValidMapping);
    }
    spdlog::info("{}; mapping it as --allow-cpu-only asks", *cpu_only);
  }
  std::string objectives;
  for (search::Objective o : options.objectives) {
    if (!objectives.empty()) objectives += ',';
    objectives += search::objective_name(o);
  }
  spdlog::info("workload {} ({} layers, {}), arch {} ({}, {}, {}, {:g} MHz, SRAM {} bytes)", workload.name,
               workload.layers.size(), workload_path, arch.name, arch.accel.name, arch.system_config, arch.memory_mode,
               arch.core_clock / 1e6, arch.sram_capacity_bytes);
  spdlog::info("objectives {}, fusion {}, epsilon {:g}, per-layer only {}, keep-pareto {}, threads {}, seed {}, "
               "time limit {}, output {}",
               objectives, options.no_fusion ? "off" : "on", options.epsilon, options.per_layer ? "yes" : "no",
               options.keep_pareto ? "on" : "off", options.threads, options.seed,
               options.time_limit_s ? fmt::format("{:g} s", *options.time_limit_s) : std::string("none"), folder.string());

  search::SearchOptions search_options = search_options_of(options);

  search::SearchProgress progress;
  search::SearchResult result;
  {
    double join_started = -1.0;  // elapsed seconds when the join's first step finished
    report::ProgressLine line(
        [&progress, &join_started](double elapsed) {
          const search::StageProgress& st = progress.stage;
          const std::uint64_t join_total = progress.join.steps_total.load();
          if (join_total == 0) {
            const double done = static_cast<double>(st.jobs_done.load());
            const double total = static_cast<double>(std::max<std::uint64_t>(1, st.jobs_total.load()));
            const double eta = done > 0 ? elapsed * (total - done) / done : 0.0;
            return fmt::format("{} {:.0f}/{:.0f} jobs, {} pmappings evaluated, {:.1f}s elapsed, ~{:.1f}s left",
                               report::progress_bar(done, total), done, total, st.evaluated.load(), elapsed, eta);
          }
          // The joins: the one with fusion and the comparison without, their steps planned up front
          // (a fixed denominator); the estimate extrapolates the time per step so far.
          const double total = static_cast<double>(std::max(progress.join.steps_planned.load(), join_total));
          const double done = std::min(total, static_cast<double>(progress.join.steps_done.load()));
          if (done > 0 && join_started < 0) join_started = elapsed;
          const std::string left = done > 0 && join_started >= 0 && elapsed > join_started
                                       ? fmt::format("~{:.0f}s left", (elapsed - join_started) * (total - done) / done)
                                       : std::string("estimating");
          const std::string to_come =
              progress.join.rows_estimated.load() ? fmt::format(", ~{} to come", progress.join.rows_to_come.load()) : std::string();
          return fmt::format("{} join: {:.0f}/{:.0f} layer steps, {} rows paired{}, {:.1f}s elapsed, {}",
                             report::progress_bar(done, total), done, total, progress.join.rows_paired.load(), to_come, elapsed, left);
        },
        options.verbosity >= 0 && isatty(STDERR_FILENO) != 0);
    result = search::map_network(arch, workload, search_options, stop, &progress);
  }
  spdlog::info("search: {} jobs, {} pmappings evaluated, front of {} points in {:.3f} s", result.stage.num_jobs,
               result.evaluated, result.joined ? result.joined->front.size() : 0,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  const report::RunProvenance run = provenance_of(options, workload_path, input->hash);
  const nlohmann::ordered_json document = report::result_document(run, arch, workload, search_options, result);
  // The document holds everything the outputs show: the search (its per-layer stage is the larger
  // part of the run's memory, tens of KB per layer) and the workload go before the outputs' texts
  // are made, so their memory is not needed at once.
  const int status = report::exit_status(result.status);
  result = search::SearchResult();
  workload = workloads::Workload();
  input.reset();
  write_and_render(options, document, folder, numbered, out);
  return status;
}

}  // namespace npumap::cli
