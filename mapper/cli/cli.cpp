// The command line of `mapper` (CLI11; the only folder that uses it).
//
//   mapper --workload W [--arch A] [--keep-pareto] ...     map a workload (run_command.cpp)
//   mapper MODEL.tflite --accelerator-config C --config vela.ini --system-config S --memory-mode M ...
//                                                            the same with Vela's option names
//   mapper eval FILE.json [--check] [--block-configs]        re-evaluate passes or a result.json (mapper/eval/)
//   mapper list presets|workloads|objectives|system-configs|memory-modes|sweep-parameters   what can be named
//   mapper show RESULT.json                                  re-print a saved run's report
//   mapper sweep SPEC.yaml [--out DIR] [--restart]           map workloads over a grid of arch points (mapper/sweep/)
//   mapper sweep SPEC.yaml --shard K/N | --merge DIR...      one shard of a sweep / combine the shards' journals
//   mpirun -np N mapper sweep SPEC.yaml                      the same sweep on N MPI ranks (mapper/sweep/mpi_sweep.hpp)
//   mapper import MODEL.tflite -o MODEL.yaml [--arch A]      write a .tflite model's lowering as workload YAML
//
// Every option binds to a field of RunOptions (run_command.hpp), which holds the defaults. Bad input of
// any kind surfaces as UserError and becomes one line on stderr and exit status 2; any other exception
// is an internal error: one line `internal error: ...` and exit status 3. The thread limit of a command
// (tbb::global_control) is set here, never in library code.

#include "mapper/cli/cli.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <tbb/global_control.h>

#include "arch/arch.hpp"
#include "arch/arch_loader.hpp"
#include "arch/vela_config.hpp"
#include "common/user_error.hpp"
#include "common/files.hpp"
#include "common/json_file.hpp"
#include "common/stop_token.hpp"
#include "mapper/cli/process.hpp"
#include "mapper/cli/run_command.hpp"
#include "mapper/eval/eval_block_configs.hpp"
#include "mapper/eval/eval_command.hpp"
#include "mapper/report/report.hpp"
#include "mapper/report/result_document.hpp"
#include "mapper/search/objectives.hpp"
#include "mapper/sweep/mpi_sweep.hpp"
#include "mapper/sweep/sweep.hpp"
#include "npumap_version.hpp"
#include "workloads/tflite/import.hpp"
#include "workloads/zoo.hpp"

namespace npumap::cli {
namespace {

constexpr const char* kExamples = R"(
Examples:
  mapper --workload workloads/resnet18.yaml --keep-pareto
  mapper --workload workloads/resnet50.yaml --arch ethos-u65-256 --objectives cycles,offchip_bytes
  mapper --workload workloads/mobilenet_v2.yaml --per-layer --format json
  mapper model.tflite --accelerator-config ethos-u55-128 --config vela.ini --system-config X --memory-mode Y
  mapper eval test/data/npu_reference_passes.json --check
  mapper eval --block-configs test/data/npu_reference_block_configs.json --check
  mapper list presets
  mapper show runs/<timestamp>/result.json
  mapper sweep sweeps/example.yaml
)";

/// A Vela option (2.1 or later) that npu-mapper has no counterpart for: accepted with a one-line note
/// when it only changes what Vela prints or how it allocates, refused when it changes what Vela
/// compiles or asks for an output npu-mapper does not make (docs/user-guide.md "Vela's options").
struct VelaOption {
  const char* name;
  bool takes_value;
  bool refused;
  const char* why;
};

std::vector<VelaOption> vela_only_options() {
  const char* const printing = "it changes only what Vela prints";
  return {
      {"--verbose-all", false, false, "-v logs the resolved configuration and per-stage timings"},
      {"--verbose-config", false, false, "-v logs the resolved system config and memory mode, and the --config keys not used"},
      {"--verbose-graph", false, false, printing},
      {"--verbose-quantization", false, false, printing},
      {"--verbose-packing", false, false, printing},
      {"--verbose-tensor-purpose", false, false, printing},
      {"--verbose-tensor-format", false, false, printing},
      {"--verbose-schedule", false, false, "the report's per-layer table shows each layer's block config and placements"},
      {"--verbose-pareto-frontier-schedules", false, false, printing},
      {"--verbose-allocation", false, false, printing},
      {"--verbose-high-level-command-stream", false, false, printing},
      {"--verbose-register-command-stream", false, false, printing},
      {"--verbose-operators", false, false, printing},
      {"--verbose-weights", false, false, "the <net>_summary_<sys>.csv file states the weight sizes"},
      {"--verbose-performance", false, false, "the <net>_per-layer.csv file, its table, is always written"},
      {"--verbose-progress", false, false, "a progress bar shows on a terminal"},
      {"--show-cpu-operations", false, false, "the report always lists the operators that run on the CPU"},
      {"--show-subgraph-io-summary", false, false, printing},
      {"--timing", false, false, "-v logs per-stage timings"},
      {"--enable-debug-db", false, false, "no debug database is written"},
      {"--recursion-limit", true, false, "a Python setting; npu-mapper does not recurse over the graph"},
      {"--cpu-tensor-alignment", true, false, "the arena is sized by the live feature maps, without alignment"},
      {"--hillclimb-max-iterations", true, false, "the arena is sized by the live feature maps, with no allocator search"},
      {"--tensor-allocator", true, false, "the arena is sized by the live feature maps, with no allocator"},
      {"--max-block-dependency", true, false, "it changes Vela's command stream, not its performance estimate"},
      {"--force-block-config", true, true, "npu-mapper explores every block config; the report shows each layer's"},
      {"--pareto-metric", true, true, "npu-mapper keeps the whole Pareto front; choose its objectives with --objectives"},
      {"--ifm-streaming", true, true, "npu-mapper explores every placement of every feature map"},
      {"--cascading", true, true, "npu-mapper explores fusion (cascades); --no-fusion turns it off"},
      {"--cache-bias-scale-tensor", true, true, "npu-mapper explores bias copies to SRAM"},
      {"--nhcwb16-between-cascaded-passes", true, true, "npu-mapper explores the layout of every feature map"},
      {"--weight-estimation-scaling", true, true, "npu-mapper encodes the real weights (or uses the workload's ratios)"},
      {"--force-symmetric-int-weights", false, true, "npu-mapper encodes the weights with their own zero points"},
      {"--supported-ops-report", false, true, "npu-mapper writes no operator report; `mapper import` shows how a model is lowered"},
      {"--list-config-files", false, true, "`mapper list system-configs` and `mapper list memory-modes` print the built-in sections"},
      {"--api-version", false, true, "npu-mapper has no Python API; see `mapper --version`"},
  };
}

int run_list(const std::string& what, std::ostream& out) {
  if (what == "presets") {
    for (const auto& name : arch::preset_names()) out << name << "\n";
  } else if (what == "workloads") {
    // Names `--workload` and sweep specs accept: the zoo's YAML workloads, then its real models.
    for (const auto& name : workloads::zoo_names()) out << name << "\n";
  } else if (what == "objectives") {
    for (search::Objective o : search::all_objectives()) out << search::objective_name(o) << "\n";
  } else if (what == "system-configs") {
    out << arch::builtin_system_configs_ini();  // ini text that --config reads back
  } else if (what == "memory-modes") {
    out << arch::builtin_memory_modes_ini();
  } else if (what == "sweep-parameters") {
    for (const auto& name : sweep::sweep_parameter_keys()) out << name << "\n";
  } else {
    throw common::UserError({}, "list", fmt::format("unknown list `{}`", what),
                    "one of: presets, workloads, objectives, system-configs, memory-modes, sweep-parameters");
  }
  return 0;
}

/// `mapper import`: the model lowered for the arch's accelerator, written as workload YAML (atomically).
int run_import(const std::string& model, const std::string& out_path, const std::string& arch_spec, bool rewrites,
               bool force, std::ostream& out) {
  if (out_path.empty()) throw common::UserError({}, "--out", "empty output file name", "give the workload YAML file to write");
  std::error_code ec;
  if (!force && std::filesystem::exists(out_path, ec)) {
    throw common::UserError({out_path, 0, 0}, "--out", "the file already exists", "pass --force to replace it, or choose another name");
  }
  const arch::Arch arch = arch::load_arch(arch_spec);
  tflite::ImportOptions options;
  options.accelerator_config = arch.accel.name;
  options.vela_rewrites = rewrites;
  const tflite::ImportedModel imported = tflite::import_tflite(model, options);
  try {
    // Without --force, never over a file another process created meanwhile either.
    common::write_file_atomic(out_path, imported.yaml, force);
  } catch (const common::UserError& e) {
    if (e.message() == "the file already exists") {
      throw common::UserError({out_path, 0, 0}, "--out", e.message(), "pass --force to replace it, or choose another name");
    }
    throw common::UserError({out_path, 0, 0}, "--out", fmt::format("cannot write the workload: {}", e.message()), e.hint());
  }
  const workloads::Workload& w = imported.workload;
  int cpu = 0;
  for (const auto& l : w.layers) cpu += l.kind == workloads::OpKind::Cpu ? 1 : 0;
  out << fmt::format("wrote {}: {} layers ({} NPU passes, {} CPU operators), {} MACs, lowered for {}{}\n", out_path,
                     w.layers.size(), w.layers.size() - static_cast<std::size_t>(cpu), cpu, w.total_macs(),
                     arch.accel.name, rewrites ? "" : " without Vela's graph rewrites");
  return 0;
}

int run_show(const std::string& path, const std::string& format, int point, bool verbose, std::ostream& out) {
  // A run folder stands for its result.json.
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec) ? (std::filesystem::path(path) / "result.json").string() : path;
  const nlohmann::ordered_json result = common::read_result_json_file(file, "give the result.json of an earlier run, or its folder");
  if (!result.is_object() || !result.contains("tool")) {
    throw common::UserError({path, 0, 0}, "", "not a npu-mapper result", "give the result.json of an earlier run");
  }
  report::check_result_document(result, file);
  try {
    if (point >= 0) {
      // One front point: its per-layer breakdown.
      const std::size_t kept = result.contains("front") ? result["front"].size() : 0;
      const std::size_t size = result.value("front_size", std::size_t{0});
      if (static_cast<std::size_t>(point) >= std::max(size, kept)) {
        // Beyond the front: say how many points there are.
        throw common::UserError({file, 0, 0}, "--point",
                                size == 0 ? fmt::format("no front point {}: the run found no mapping of the whole network (status {})",
                                                        point, result.value("status", std::string("?")))
                                          : fmt::format("no front point {}: the front has {} point{}, numbered 0 to {}", point, size,
                                                        size == 1 ? "" : "s", size - 1),
                                size == 0 ? "see the keep rates of `mapper show` for why" : "points count from 0; 0 is the chosen one");
      }
      if (static_cast<std::size_t>(point) >= kept) {
        throw common::UserError({file, 0, 0}, "--point",
                                fmt::format("front point {} is not in this result: it keeps {} of the front's {} points", point,
                                            kept, size),
                                "rerun with --keep-pareto to keep every point of the front");
      }
      const auto n = static_cast<std::size_t>(point);
      if (format == "json") {
        out << report::document_text(result["front"][n]);
      } else if (format == "csv") {
        out << report::render_layers_csv(result, n);
      } else {
        out << report::render_point_text(result, n);
      }
    } else if (format == "json") {
      out << report::document_text(result);
    } else if (format == "csv") {
      out << report::render_csv(result);
    } else {
      report::TextOptions text;
      text.verbose = verbose;
      out << report::render_text(result, text);
    }
  } catch (const nlohmann::json::exception& e) {
    throw common::UserError({path, 0, 0}, "", std::string("malformed result: ") + e.what(), "was it written by this version?");
  }
  return 0;
}

/// For an unknown flag or subcommand on the command line: "; did you mean `--keep-pareto`?" naming
/// the closest known one, or nothing. Flags are matched against the options of the (sub)command they
/// follow, words against the subcommands.
std::string did_you_mean(const CLI::App& app, int argc, char** argv) {
  const CLI::App* scope = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) == 0) {
      const std::string flag = word.substr(0, word.find('='));
      std::vector<std::string> names;
      for (const CLI::Option* o : scope->get_options()) {
        for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
      }
      if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
      const std::string near = common::closest_match(flag, names);
      if (!near.empty()) return fmt::format("; did you mean `{}`?", near);
    } else if (scope == &app && !word.empty() && word[0] != '-') {
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
      if (std::find(names.begin(), names.end(), word) != names.end()) {
        scope = app.get_subcommand(word);
        continue;
      }
      // A value of the option before it is not a mistyped subcommand.
      if (i > 1 && std::string(argv[i - 1]).rfind("-", 0) == 0) continue;
      const std::string near = common::closest_match(word, names);
      if (!near.empty()) return fmt::format("; did you mean `mapper {}`?", near);
    }
  }
  return {};
}

}  // namespace

/// Rejects NaN and infinities, which every range check would let through.
const CLI::Validator kFinite(
    [](std::string& text) {
      try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        if (used != text.size() || !std::isfinite(v)) return std::string("must be a finite number, got ") + text;
      } catch (const std::exception&) {
        return std::string("must be a number, got ") + text;
      }
      return std::string();
    },
    "FINITE");

/// Accepts only plain non-negative integers (an unsigned parse would wrap "-5").
const CLI::Validator kUnsigned(
    [](std::string& text) {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
        return std::string("must be a non-negative integer, got ") + text;
      }
      if (text.size() > 20 || (text.size() == 20 && text > "18446744073709551615")) {
        return std::string("must be below 2^64, got ") + text;
      }
      return std::string();
    },
    "UINT");

namespace {

/// What the top-level command (map a workload) parses into.
struct MappingArgs {
  RunOptions run;
  std::string objectives_text;
  double tolerance = -1.0;  // deprecated alias of --epsilon (-1: not given)
  bool exact = false;
  std::string format_text = "text";
  std::string positional_model;  // Vela's way: the network as the first positional argument
  std::string arena_cache_size_text;
  int threads = 0;
  double time_limit = 0.0;
  int verbose = 0;
  bool quiet = false;
  bool no_vela_rewrites = false;
  bool internal_error_test = false;  // a test hook: proves that an internal error exits 3 with one line
  std::vector<VelaOption> vela_options = vela_only_options();
  std::vector<std::string> vela_values = std::vector<std::string>(vela_options.size());
  std::vector<bool> vela_flags = std::vector<bool>(vela_options.size(), false);
  std::vector<CLI::Option*> vela_registered;
};

/// The subcommands' arguments.
struct EvalArgs {
  CLI::App* command = nullptr;
  eval::EvalOptions options;
  bool block_configs = false;
};
struct ListArgs {
  CLI::App* command = nullptr;
  std::string what;
};
struct ShowArgs {
  CLI::App* command = nullptr;
  std::string path;
  std::string format = "text";
  int point = -1;
  bool verbose = false;
};
struct ImportArgs {
  CLI::App* command = nullptr;
  std::string model;
  std::string out;
  std::string arch = "ethos-u55-256";
  bool no_rewrites = false;
  bool force = false;
};
struct SweepArgs {
  CLI::App* command = nullptr;
  sweep::SweepOptions options;
  int threads = 0;
  int verbose = 0;
  bool quiet = false;
  bool no_sharing = false;
  std::string shard;
};

/// Vela's own option names (the network, --accelerator-config, --config, ...), and the Vela options
/// npu-mapper has no counterpart for (hidden from --help).
void add_vela_options(CLI::App& app, MappingArgs& a, CLI::Option* arch_option) {
  app.add_option("model", a.positional_model, "The network, as Vela takes it: the same as --workload");
  app.add_option("--accelerator-config", a.run.accelerator_config,
                 "Vela's option: the accelerator alone (ethos-u55-32 ... ethos-u65-512), its SRAM from the memory mode")
      ->excludes(arch_option)
      ->capture_default_str();
  app.add_option("--config", a.run.config_files,
                 "Vela's option: a vela.ini whose [System_Config.*] and [Memory_Mode.*] sections --system-config and "
                 "--memory-mode (and arch files) may name; repeatable")
      ->expected(1)
      ->allow_extra_args(false)  // one file per --config: `--config a.ini model.tflite` leaves the model alone
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--system-config", a.run.system_config,
                 "Override the arch's system config (Vela's names: --config sections, then `mapper list system-configs`)");
  app.add_option("--memory-mode", a.run.memory_mode,
                 "Override the arch's memory mode (Vela's names: --config sections, then `mapper list memory-modes`)");
  app.add_option("--arena-cache-size", a.arena_cache_size_text,
                 "Vela's option: the arena's SRAM, or the cache's when the memory mode spills, in bytes (also 512KiB)");
  app.add_option("--optimise", a.run.optimise,
                 "Vela's option: the chosen point of the front: Performance (least cycles) or Size (least SRAM)")
      ->check(CLI::IsMember({"Performance", "Size"}));
  app.add_flag("--allow-cpu-only", a.run.allow_cpu_only,
               "Map a network no operator of which runs on the NPU (a float model, say) instead of exiting with status 1");
  for (std::size_t i = 0; i < a.vela_options.size(); ++i) {
    const VelaOption& v = a.vela_options[i];
    CLI::Option* o = nullptr;
    if (v.takes_value) {
      o = app.add_option(v.name, a.vela_values[i]);
    } else {
      o = app.add_flag_callback(v.name, [&flags = a.vela_flags, i] { flags[i] = true; });
    }
    o->group("");  // not in --help: docs/user-guide.md lists them
    a.vela_registered.push_back(o);
  }
}

/// The options of the top-level command: mapping a workload.
void add_mapping_options(CLI::App& app, MappingArgs& a) {
  for (search::Objective o : search::default_objectives()) {
    a.objectives_text += (a.objectives_text.empty() ? "" : ",") + std::string(search::objective_name(o));
  }
  app.add_option("--workload,-w", a.run.workload,
                 "Workload YAML file (docs/workload-format.md), .tflite model (docs/tflite-import.md) or zoo name");
  app.add_flag("--no-vela-rewrites", a.no_vela_rewrites,
               "A .tflite workload keeps its graph as written (no first-layer stride-2 rewrite, PAD fusion, ...)");
  auto* arch_option = app.add_option("--arch,-a", a.run.arch,
                                     "Arch preset name or arch YAML file (see `mapper list presets`); default: the "
                                     "accelerator of --accelerator-config");
  add_vela_options(app, a, arch_option);
  app.add_option("--weight-compression", a.run.weight_compression_file,
                 "YAML file of per-layer weight compression ratios (layer: encoded/raw bytes), overriding the workload's");
  app.add_flag("--keep-pareto", a.run.keep_pareto, "Keep and write the whole Pareto front (default: report the best point)");
  app.add_option("--objectives", a.objectives_text, "Comma-separated objectives of the front")->capture_default_str();
  auto* epsilon = app.add_option("--epsilon", a.run.epsilon,
                                 "ε of the front: every Pareto-optimal mapping is within a factor 1 + ε in every objective "
                                 "of a reported one, each objective's least value exact; 0 is the exact front")
                      ->check(kFinite & CLI::Range(0.0, 1.0))
                      ->capture_default_str();
  app.add_option("--tolerance", a.tolerance, "Deprecated alias of --epsilon")->check(kFinite & CLI::Range(0.0, 1.0))->excludes(epsilon);
  app.add_flag("--exact", a.exact, "The exact Pareto front (ε = 0; may take minutes on large networks)")->excludes(epsilon);
  app.add_option("--threads,-j", a.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  app.add_option("--seed", a.run.seed, "Seed recorded in provenance (the search is exhaustive: nothing is sampled)")
      ->check(kUnsigned)
      ->capture_default_str();
  app.add_option("--time-limit", a.time_limit, "Stop at chunk boundaries after this many seconds (result marked partial)")
      ->check(kFinite & CLI::Range(1e-9, 1e9));
  app.add_option("--out,-o,--output-dir", a.run.out_dir,
                 "Output folder (default: a new folder runs/<timestamp>); --output-dir is Vela's name for it");
  app.add_option("--format", a.format_text, "Report format on stdout")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->capture_default_str();
  app.add_flag("--no-fusion", a.run.no_fusion, "Forbid layer fusion through SRAM rolling buffers");
  app.add_flag("--per-layer", a.run.per_layer, "Stop after the per-layer stage; report each layer's front size, best cycles and keep rates");
  app.add_flag("--baseline-only", a.run.baseline_only,
               "Only Vela 2.1's schedule (docs/design/vela-schedule.md): a fast estimate, reported as a one-point front");
  app.add_option("--block-config-limit", a.run.block_config_limit,
                 "Block configs Vela's schedule tries per pass (Vela's option of that name; 0: all, as Arm's "
                 "evaluation kit compiles)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_flag("-v,--verbose", a.verbose,
               "Log the effective configuration and per-stage timings, and report every layer's keep rates by "
               "filter (-vv: also each join step)");
  app.add_flag("-q,--quiet", a.quiet, "Only print errors");
  app.add_flag("--internal-error-test", a.internal_error_test)->group("");
}

/// `mapper eval`, `list`, `show` and `import`.
void add_small_commands(CLI::App& app, EvalArgs& e, ListArgs& l, ShowArgs& s, ImportArgs& i) {
  e.command = app.add_subcommand("eval", "Evaluate passes (docs/pass-format.md) with the cycle model");
  e.command->add_option("file", e.options.input_path, "JSON list of passes or {id, input, expected} records")->required();
  e.command->add_flag("--check", e.options.check, "Compare with `expected`; exit 1 on any mismatch");
  e.command->add_flag("--block-configs", e.block_configs, "The file holds block-config records instead of passes");
  e.command->add_option("--out,-o", e.options.output_path, "Write results to this file (default: stdout)");

  l.command = app.add_subcommand("list", "List presets, workloads, objectives, system-configs, memory-modes or sweep-parameters");
  l.command->add_option("what", l.what, "presets|workloads|objectives|system-configs|memory-modes|sweep-parameters")->required();

  s.command = app.add_subcommand("show", "Re-print the report of a saved result.json");
  s.command->add_option("result", s.path, "result.json written by an earlier run")->required();
  s.command->add_option("--point", s.point, "Only this front point's per-layer breakdown (0 = the chosen point; csv: layers.csv)")
      ->check(CLI::Range(0, 1 << 30));
  s.command->add_option("--format", s.format, "Report format")->check(CLI::IsMember({"text", "json", "csv"}))->capture_default_str();
  s.command->add_flag("-v,--verbose", s.verbose, "Also every layer's keep rates by filter and the join's counters");

  i.command = app.add_subcommand("import", "Lower a .tflite model as Vela does and write it as workload YAML");
  i.command->add_option("model", i.model, ".tflite model")->required();
  i.command->add_option("--out,-o", i.out, "Workload YAML file to write")->required();
  i.command->add_option("--arch,-a", i.arch, "Arch preset or file whose accelerator the lowering targets")->capture_default_str();
  i.command->add_flag("--no-vela-rewrites", i.no_rewrites, "Keep the graph as written (no Vela graph rewrites)");
  i.command->add_flag("--force,-f", i.force, "Replace the --out file if it exists");
}

/// `mapper sweep`.
void add_sweep_command(CLI::App& app, SweepArgs& a) {
  CLI::App* sweep = a.command = app.add_subcommand("sweep", "Map workloads on every arch point of a sweep spec (docs/sweep-format.md)");
  sweep->add_option("spec", a.options.spec, "Sweep spec YAML file")->required();
  sweep->add_option("--out,-o", a.options.out_dir, "Output folder (default: runs/sweep-<name>); a rerun resumes it");
  sweep->add_option("--threads,-j", a.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  sweep->add_flag("--restart", a.options.restart, "Discard the points an earlier run of this sweep finished");
  sweep->add_flag("--dry-run", a.options.dry_run, "Check the spec and list its arch points; map nothing");
  sweep->add_flag("--no-layer-sharing", a.no_sharing,
                  "Compute every layer on its own instead of once per distinct layer (to measure the saving)");
  sweep->add_flag("-v,--verbose", a.verbose, "Log each finished arch point");
  sweep->add_flag("-q,--quiet", a.quiet, "Only print errors");
  auto* shard_option = sweep->add_option("--shard", a.shard,
                                         "Compute only every N-th arch point, K in 0..N-1, into its own journal (K/N)");
  sweep->add_option("--merge", a.options.merge, "Combine the journals of these shard folders into the final files; compute nothing")
      ->excludes(shard_option)
      ->expected(1, -1);
}

int run_sweep_command(SweepArgs& a, int worker_threads, const std::atomic<bool>& interrupted) {
  set_log_verbosity(a.quiet ? -1 : a.verbose, true);
  a.options.threads = worker_threads;
  a.options.share_layers = !a.no_sharing;
  a.options.verbosity = a.quiet ? -1 : a.verbose;
  if (!a.shard.empty()) sweep::parse_shard(a.shard, a.options);
  if (!a.options.merge.empty() && (a.options.dry_run || a.options.restart)) {
    throw common::UserError({}, "--merge", "--merge computes nothing, so it takes neither --dry-run nor --restart", "leave them out");
  }
  if (sweep::launched_by_mpi()) return sweep::run_sweep_mpi(a.options, &interrupted, std::cout);
  if (!a.options.merge.empty()) return sweep::merge_sweep(a.options, std::cout);
  return sweep::run_sweep(a.options, &interrupted, std::cout);
}

/// The network, from --workload or as Vela takes it (the first argument); a mistyped command is
/// named as one.
void resolve_workload(MappingArgs& a) {
  if (!a.positional_model.empty()) {
    if (!a.run.workload.empty())
      throw common::UserError({}, "--workload", "the network is given twice (--workload and as an argument)", "give it once");
    // A mistyped command (`mapper evl x.json` parses as a network named `evl`).
    std::error_code ec;
    const std::vector<std::string> zoo = workloads::zoo_names();
    if (!std::filesystem::exists(a.positional_model, ec) && std::find(zoo.begin(), zoo.end(), a.positional_model) == zoo.end()) {
      const std::string near = common::closest_match(a.positional_model, {"eval", "list", "show", "import", "sweep"});
      if (!near.empty())
        throw common::UserError({}, "", fmt::format("unknown command `{}`", a.positional_model), fmt::format("did you mean `mapper {}`?", near));
    }
    a.run.workload = a.positional_model;
  }
  if (a.run.workload.empty()) {
    throw common::UserError({}, "--workload", "no workload given",
                            "e.g. --workload workloads/resnet18.yaml, or the model as Vela takes it: mapper model.tflite");
  }
}

int run_mapping_command(MappingArgs& a, int worker_threads, const std::atomic<bool>& interrupted) {
  // Vela's options npu-mapper has no use for: a one-line note each, or a refusal.
  for (std::size_t i = 0; i < a.vela_options.size(); ++i) {
    if (a.vela_registered[i]->count() == 0) continue;
    const VelaOption& v = a.vela_options[i];
    if (v.refused) throw common::UserError({}, v.name, "is a Vela option npu-mapper does not take", v.why);
    if (!a.quiet) std::cerr << "note: " << v.name << " is a Vela option npu-mapper ignores: " << v.why << "\n";
  }
  resolve_workload(a);
  RunOptions& run = a.run;
  if (!a.arena_cache_size_text.empty()) {
    std::int64_t bytes = 0;
    if (!arch::parse_byte_size(a.arena_cache_size_text, bytes) || bytes <= 0)
      throw common::UserError({}, "--arena-cache-size", fmt::format("expected a positive number of bytes, got `{}`", a.arena_cache_size_text),
                              "e.g. 393216 or 384KiB");
    run.arena_cache_size = bytes;
  }
  // Vela lower-cases the accelerator config it is given.
  for (char& c : run.accelerator_config) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  run.objectives = search::parse_objectives(a.objectives_text);
  if (a.tolerance >= 0.0) {
    std::cerr << "warning: --tolerance is deprecated; it is now --epsilon, the ε of a front with a stated guarantee\n";
    run.epsilon = a.tolerance;
  }
  if (a.exact) run.epsilon = 0.0;
  run.format = a.format_text == "json" ? Format::Json : a.format_text == "csv" ? Format::Csv : Format::Text;
  run.threads = worker_threads;
  run.vela_rewrites = !a.no_vela_rewrites;
  if (a.time_limit > 0.0) run.time_limit_s = a.time_limit;
  run.verbosity = a.quiet ? -1 : a.verbose;
  set_log_verbosity(run.verbosity, false);
  return run_mapping(run, &interrupted, std::cout);
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"npu-mapper: Pareto-optimal mappings of neural networks onto Ethos-U-class NPUs", "mapper"};
  app.footer(kExamples);
  app.set_version_flag("--version", fmt::format("mapper {} (git {})", kVersion, kGitRevision));
  app.require_subcommand(0, 1);
  MappingArgs mapping;
  EvalArgs eval;
  ListArgs list;
  ShowArgs show;
  ImportArgs import;
  SweepArgs sweep;
  add_mapping_options(app, mapping);
  add_small_commands(app, eval, list, show, import);
  add_sweep_command(app, sweep);

  // `mapper` alone: what it can do (the same as --help).
  if (argc <= 1) {
    std::cout << app.help();
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "usage: " << e.what() << did_you_mean(app, argc, argv) << " (see mapper --help)\n";
    return 2;
  }

  // One command's thread limit; the arenas below it never exceed it.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int requested = sweep.command->parsed() ? sweep.threads : mapping.threads;
  const int worker_threads = requested > 0 ? requested : static_cast<int>(cores);
  std::optional<tbb::global_control> parallelism;
  if (!eval.command->parsed() && !list.command->parsed() && !show.command->parsed() && !import.command->parsed()) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(worker_threads));
  }
  // Not reset here: a Ctrl-C that arrives while the inputs load must still stop the run.
  const std::atomic<bool>& interrupted = interrupt_flag();
  try {
    if (mapping.internal_error_test) throw std::logic_error("test hook: --internal-error-test");
    // `--out ''` is a mistake (an unset shell variable), not a request for the default folder.
    for (const CLI::App* command : {static_cast<const CLI::App*>(&app), static_cast<const CLI::App*>(sweep.command)}) {
      const CLI::Option* out = command->get_option_no_throw("--out");
      if (out != nullptr && out->count() > 0 && out->as<std::string>().empty()) {
        throw common::UserError({}, "--out", "empty output folder name",
                                "give a folder name, or leave --out out for a new folder under runs/");
      }
    }
    if (eval.command->parsed()) {
      if (eval.block_configs) {
        return eval::run_eval_block_configs(eval.options.input_path, eval.options.check, eval.options.output_path, std::cout,
                                            std::cerr);
      }
      return eval::run_eval(eval.options, std::cout, std::cerr);
    }
    if (list.command->parsed()) return run_list(list.what, std::cout);
    if (show.command->parsed()) return run_show(show.path, show.format, show.point, show.verbose, std::cout);
    if (import.command->parsed()) return run_import(import.model, import.out, import.arch, !import.no_rewrites, import.force, std::cout);
    if (sweep.command->parsed()) return run_sweep_command(sweep, worker_threads, interrupted);
    return run_mapping_command(mapping, worker_threads, interrupted);
  } catch (const common::UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const common::Interrupted& e) {
    // Stopped (--time-limit, Ctrl-C) before there was anything to map: no partial result to write.
    std::cerr << "interrupted while " << e.what() << " (--time-limit or Ctrl-C); nothing was mapped or written\n";
    return 130;
  } catch (const std::bad_alloc&) {
    // Not bad input and not a bug: the run needed more memory than the machine or `ulimit -v` gives.
    std::cerr << "out of memory: the run needed more memory than is available (check `ulimit -v`, or map a "
                 "smaller workload or fewer threads)\n";
    return kExitOutOfMemory;
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    if (what.rfind("internal error: ", 0) == 0) what = what.substr(16);
    std::cerr << "internal error: " << what << " (please report it with the command line and input files)\n";
    return 3;
  } catch (...) {
    std::cerr << "internal error: unknown exception (please report it with the command line and input files)\n";
    return 3;
  }
}

}  // namespace npumap::cli
