// A mapping run, end to end.
//
//   load_arch + load_workload -> search::map_network (per-layer stage, join with fusion, the join
//   without fusion for comparison, keep rates) -> report::result_document -> text/JSON/CSV report on
//   stdout, and result.json, front.csv, front.svg, layers.csv in the output folder.
//
// The result document is the single source of every report: `mapper show` re-renders it, so the
// text of a saved run and of a live run are the same function of the same data.

#include "mapper/cli/run_command.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "arch/arch_loader.hpp"
#include "common/stop_token.hpp"
#include "mapper/report/progress_line.hpp"
#include "mapper/report/report.hpp"
#include "mapper/report/result_document.hpp"
#include "mapper/search/map_network.hpp"
#include "workloads/loader.hpp"
#include "workloads/tflite/import.hpp"
#include "workloads/weight_compression.hpp"
#include "workloads/zoo.hpp"

namespace npumap::cli {
namespace {

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

/// The arch of the run: --arch, with --system-config / --memory-mode applied as the arch file's keys
/// of the same names would be (errors name the flag).
arch::Arch load_run_arch(const RunOptions& options) {
  if (options.system_config.empty() && options.memory_mode.empty()) return arch::load_arch(options.arch);
  std::string text;
  std::string name = options.arch;
  if (!options.system_config.empty()) {
    text += fmt::format("system_config: \"{}\"\n", options.system_config);
    name += " system_config=" + options.system_config;
  }
  if (!options.memory_mode.empty()) {
    text += fmt::format("memory_mode: \"{}\"\n", options.memory_mode);
    name += " memory_mode=" + options.memory_mode;
  }
  const common::YamlNode overrides = common::YamlNode::load_string(text, "(command line)");
  return arch::load_arch_with_overrides(options.arch, overrides, name, arch::default_presets_dir());
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
  const std::filesystem::path folder = output_folder(options.out_dir);
  report::check_output_folder(folder);
  const arch::Arch arch = load_run_arch(options);
  // A bare name ("resnet18") is a zoo workload, as in sweep specs.
  const std::string workload_path = workloads::is_zoo_name(options.workload) && !std::filesystem::exists(options.workload)
                                        ? workloads::zoo_file(options.workload, "--workload")
                                        : options.workload;
  tflite::ImportOptions import;
  import.accelerator_config = arch.accel.name;
  import.vela_rewrites = options.vela_rewrites;
  workloads::Workload workload = tflite::load_network(workload_path, import, stop);
  if (!options.weight_compression_file.empty()) {
    workloads::apply_weight_compression_file(workload, options.weight_compression_file);
  }
  std::string objectives;
  for (search::Objective o : options.objectives) {
    if (!objectives.empty()) objectives += ',';
    objectives += search::objective_name(o);
  }
  spdlog::info("workload {} ({} layers, {}), arch {} ({}, {}, {}, {:g} MHz, SRAM {} bytes)", workload.name,
               workload.layers.size(), workload_path, arch.name, arch.accel.name, arch.system_config, arch.memory_mode,
               arch.core_clock / 1e6, arch.sram_capacity_bytes);
  spdlog::info("objectives {}, fusion {}, tolerance {:g}, per-layer only {}, keep-pareto {}, threads {}, seed {}, "
               "time limit {}, output {}",
               objectives, options.no_fusion ? "off" : "on", options.tolerance, options.per_layer ? "yes" : "no",
               options.keep_pareto ? "on" : "off", options.threads, options.seed,
               options.time_limit_s ? fmt::format("{:g} s", *options.time_limit_s) : std::string("none"), folder.string());

  search::SearchOptions search_options;
  search_options.objectives = options.objectives;
  search_options.fusion = !options.no_fusion;
  search_options.tolerance = options.tolerance;
  search_options.per_layer_only = options.per_layer;
  search_options.threads = options.threads;

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
          return fmt::format("{} join: {:.0f}/{:.0f} layer steps, {} rows paired, {:.1f}s elapsed, {}",
                             report::progress_bar(done, total), done, total, progress.join.rows_paired.load(), elapsed, left);
        },
        options.verbosity >= 0 && isatty(STDERR_FILENO) != 0);
    result = search::map_network(arch, workload, search_options, stop, &progress);
  }
  spdlog::info("search: {} jobs, {} pmappings evaluated, front of {} points in {:.3f} s", result.stage.jobs.size(),
               result.evaluated, result.joined ? result.joined->front.size() : 0,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  report::RunProvenance run;
  run.workload_path = workload_path;
  run.arch_spec = options.arch;
  run.weight_compression_path = options.weight_compression_file;
  run.seed = options.seed;
  run.threads = options.threads;
  run.keep_pareto = options.keep_pareto;
  run.per_layer = options.per_layer;
  run.time_limit_s = options.time_limit_s;
  const nlohmann::ordered_json document = report::result_document(run, arch, workload, search_options, result);

  const std::vector<std::string> written = report::write_outputs(folder, document);
  if (options.verbosity >= 0) {
    report::TextOptions text;
    text.verbose = options.verbosity >= 1;
    switch (options.format) {
      case Format::Text: out << report::render_text(document, text); break;
      case Format::Json: out << report::document_text(document); break;
      case Format::Csv: out << report::render_csv(document); break;
    }
    if (options.format == Format::Text) {
      std::string files = (folder / written.front()).string();
      for (std::size_t i = 1; i < written.size(); ++i) files += ", " + written[i];
      out << "\nwrote " << files << "\n";
    }
  }
  return report::exit_status(result.status);
}

}  // namespace npumap::cli
