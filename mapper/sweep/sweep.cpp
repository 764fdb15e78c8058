// A design-space sweep, end to end.
//
//   open_sweep_run: load_sweep_spec (every check, every arch point built) -> <out>/points.jsonl read
//   back (points a killed run finished are skipped) -> the remaining points of this shard (all of them
//   without --shard), most expensive first -> run_sweep: a oneTBB parallel loop; each point runs
//   search::map_networks over all workloads (a shared per-layer stage, identical layers computed once,
//   and one join per workload), all in the same arena -> each finished point appended to points.jsonl at once
//   -> finish_sweep_run: when every point is done, sweep.csv, sweep.json, pareto.csv and pareto.svg
//   rendered from the records in point order and written atomically (a shard that lacks points
//   stops before, and says how to merge).
//
// merge_sweep (--merge) reads several folders' journals of the same spec, and writes their union as
// the output folder's journal and final files. The MPI driver (mpi_sweep.cpp) uses the same
// open_sweep_run / Journal / finish_sweep_run (sweep_run.hpp), with the loop spread over ranks.
//
// A point stopped by Ctrl-C is not recorded; the run exits 130 and the same command resumes it.

#include "mapper/sweep/sweep.hpp"

#include <fcntl.h>
#include <iostream>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "common/files.hpp"
#include "common/units.hpp"
#include "common/user_error.hpp"
#include "mapper/search/map_network.hpp"
#include "mapper/report/progress_line.hpp"
#include "mapper/report/report.hpp"
#include "mapper/sweep/sweep_run.hpp"

namespace npumap::sweep {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const std::vector<std::string> kFinalFiles = {"sweep.csv", "sweep.json", "pareto.csv", "pareto.svg"};

/// The text report: what ran, what the cache saved, and each workload's cross-arch front.
std::string summary_text(const SweepSpec& spec, const std::vector<Json>& records, const Json& sweep_json,
                         const RunStats& stats, const fs::path& folder) {
  std::string out = fmt::format("sweep {}: {} arch points x {} workloads (spec {}, base {})\n", spec.name,
                                spec.points.size(), spec.workloads.size(), spec.file, spec.base);
  if (stats.source.empty()) {
    out += fmt::format("  {} points computed in this run, {} resumed from {}\n", stats.computed,
                       spec.points.size() - stats.computed, (folder / kJournalFile).string());
  } else {
    out += fmt::format("  {}\n", stats.source);
  }
  std::uint64_t total = 0, distinct = 0;
  for (const Json& r : records) {
    total += r["layers"]["total"].get<std::uint64_t>();
    distinct += r["layers"]["distinct"].get<std::uint64_t>();
  }
  if (total > 0) {
    out += fmt::format("  layers: {} (arch point, layer) pairs, {} distinct; the shared-layer cache reused {:.0f}%\n",
                       total, distinct, 100.0 * static_cast<double>(total - distinct) / static_cast<double>(total));
  }
  if (stats.computed > 0 && stats.seconds > 0) {
    out += fmt::format("  time {:.1f} s, {:.1f} points/min, {}\n", stats.seconds,
                       60.0 * static_cast<double>(stats.computed) / stats.seconds, stats.workers);
  }
  if (!stats.coordinator.empty()) out += fmt::format("  {}\n", stats.coordinator);
  out += "cross-arch Pareto front (minimise MACs/cycle and SRAM bytes, against latency and off-chip bytes);\n"
         "per arch point on the front: its best latency (ms at the point's clock, which may differ between\n"
         "points: compare ms, not cycles), its cycles, and its best off-chip bytes among its front mappings\n";
  std::map<std::string, double> clock_of;  // arch point -> core clock in Hz
  for (const Json& r : records) clock_of[r["id"].get<std::string>()] = r["arch"]["core_clock_hz"].get<double>();
  for (const auto& w : spec.workloads) {
    const Json& front = sweep_json["pareto"][w.id];
    std::size_t rows = 0;
    for (const Json& r : records) {
      for (const Json& wr : r["workloads"]) {
        if (wr["workload"] == w.id) rows += wr["front"].size();
      }
    }
    // Group the front's mappings by arch point, in point order.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const Json*>> by_point;
    for (const Json& p : front) {
      const std::string id = p["point"].get<std::string>();
      if (by_point.count(id) == 0) order.push_back(id);
      by_point[id].push_back(&p);
    }
    out += fmt::format("  {}: {} of {} mappings, on {} arch points\n", w.id, front.size(), rows, order.size());
    // Points where this workload has no valid mapping at all: easy to miss in a front.
    std::vector<std::string> failed;
    for (const Json& r : records) {
      for (const Json& wr : r["workloads"]) {
        if (wr["workload"] == w.id && wr["status"] != "ok") failed.push_back(r["id"].get<std::string>());
      }
    }
    if (!failed.empty()) {
      out += fmt::format("    no valid mapping on {} point{}: {}\n", failed.size(), failed.size() == 1 ? "" : "s",
                         fmt::join(failed, ", "));
    }
    if (order.empty()) continue;
    out += fmt::format("    {:<6} {:>9} {:>10} {:>10} {:>8} {:>12} {:>11} {:>9}  {}\n", "point", "MACs/cyc", "SRAM", "best ms",
                       "MHz", "its cycles", "best offchip", "mappings", "parameters");
    for (const std::string& id : order) {
      const auto& list = by_point[id];
      double cycles = (*list[0])["cycles"].get<double>(), offchip = (*list[0])["offchip_bytes"].get<double>();
      for (const Json* p : list) {
        cycles = std::min(cycles, (*p)["cycles"].get<double>());
        offchip = std::min(offchip, (*p)["offchip_bytes"].get<double>());
      }
      const Json& p0 = *list[0];
      std::string params;
      for (const auto& [k, v] : p0["params"].items()) params += fmt::format("{}{}={}", params.empty() ? "" : " ", k, v.get<std::string>());
      const double clock = clock_of.count(id) != 0 ? clock_of[id] : 0.0;
      out += fmt::format("    {:<6} {:>9} {:>10} {:>10} {:>8} {:>12.0f} {:>11} {:>9}  {}\n", id, p0["macs_per_cycle"].get<int>(),
                         common::format_bytes(p0["sram_capacity_bytes"].get<double>(), 0),
                         clock > 0.0 ? fmt::format("{:.4g}", cycles / clock * 1e3) : std::string("-"),
                         clock > 0.0 ? fmt::format("{:g}", clock / 1e6) : std::string("-"), cycles,
                         common::format_bytes(offchip, 0), list.size(), params.empty() ? "(base)" : params);
    }
  }
  return out;
}

/// `--dry-run`: the checked spec's arch points, one line each, with what the arch makes of them.
std::string list_points(const SweepSpec& spec) {
  std::string out = fmt::format("sweep {}: {} arch points x {} workloads (base {}); spec checked, nothing mapped\n",
                                spec.name, spec.points.size(), spec.workloads.size(), spec.base);
  for (const auto& w : spec.workloads) out += fmt::format("  workload {}: {} ({} layers)\n", w.id, w.path, w.workload.layers.size());
  std::vector<std::string> texts;
  std::size_t width = 0;
  for (const SweepPoint& p : spec.points) {
    std::string params;
    for (const auto& [k, v] : p.params) params += fmt::format("{}{}={}", params.empty() ? "" : " ", k, v);
    texts.push_back(params.empty() ? "(base)" : params);
    width = std::max(width, texts.back().size());
  }
  for (const SweepPoint& p : spec.points) {
    const arch::Arch& a = p.arch;
    out += fmt::format("  {:<6} {:<{}}  {} MACs/cycle, {} SRAM, {:g} MHz, weights in {}, feature maps in {}\n", p.id,
                       texts[p.index], width, a.accel.macs * a.accel.cores,
                       common::format_bytes(static_cast<double>(a.sram_capacity_bytes), 0), a.core_clock / 1e6,
                       arch::mem_area_name(a.permanent_storage), arch::mem_area_name(a.feature_map_storage));
  }
  return out;
}

/// A point's relative cost, for handing out the expensive points first: its MACs per cycle. A bigger
/// accelerator has more SHRAM, so more valid block configs per layer, and its fronts are deeper (on
/// the example, the 512-MAC point takes 2-7x as long as a 64- or 128-MAC one). A proxy known before
/// any work; a point's real cost also depends on the memory system, which it does not see.
double estimated_cost(const SweepPoint& point) {
  return static_cast<double>(point.arch.accel.macs) * static_cast<double>(point.arch.accel.cores);
}

}  // namespace

Json compute_sweep_point(const SweepSpec& spec, const SweepPoint& point, bool share_layers,
                         const common::StopToken& stop, bool& complete) {
  std::vector<const workloads::Workload*> workloads;
  for (const auto& w : spec.workloads) workloads.push_back(&w.for_accelerator(point.arch.accel.name));
  search::SearchOptions options;
  options.objectives = spec.objectives;
  options.fusion = spec.fusion;
  options.epsilon = spec.epsilon;
  options.compare_without_fusion = false;
  options.threads = 0;  // the sweep's arena
  options.share_layers = share_layers;
  const search::MultiSearchResult searched = search::map_networks(point.arch, workloads, options, stop);

  std::vector<Json> fronts(spec.workloads.size());
  for (std::size_t wi = 0; wi < spec.workloads.size(); ++wi) {
    const search::SearchResult& r = searched.networks[wi];
    Json front = Json::array();
    if (r.joined) {
      for (const search::FrontPoint& p : r.joined->front) {
        front.push_back(Json{{"cycles", p.cycles}, {"offchip_bytes", p.offchip_bytes},
                             {"sram_bytes", p.peak_sram_bytes}, {"energy_pj", p.energy_pj}});
      }
    }
    fronts[wi] = Json{{"workload", spec.workloads[wi].id}, {"status", front.empty() ? "no_valid_mapping" : "ok"},
                      {"front", front}};
    // Vela's schedule on this point (vela_schedule.hpp), sweep.csv's vela_* columns.
    if (r.vela) {
      const search::FrontPoint& v = r.vela->point;
      fronts[wi]["vela"] = Json{{"cycles", v.cycles}, {"offchip_bytes", v.offchip_bytes},
                                {"sram_bytes", v.peak_sram_bytes}, {"energy_pj", v.energy_pj}};
    }
  }
  complete = !searched.partial;

  const arch::Arch& a = point.arch;
  Json params = Json::object();
  for (const auto& [k, v] : point.params) params[k] = v;
  Json record;
  record["point"] = point.index;
  record["id"] = point.id;
  record["params"] = params;
  record["arch"] = {{"accelerator", a.accel.name},
                    {"macs_per_cycle", a.accel.macs * a.accel.cores},
                    {"sram_capacity_bytes", a.sram_capacity_bytes},
                    {"core_clock_hz", a.core_clock},
                    {"system_config", a.system_config},
                    {"memory_mode", a.memory_mode}};
  record["layers"] = {{"total", searched.layers_total}, {"distinct", searched.layers_distinct}};
  record["evaluated"] = searched.evaluated;
  record["workloads"] = fronts;
  return record;
}

void parse_shard(const std::string& text, SweepOptions& options) {
  const auto bad = [&] {
    return common::UserError({}, "--shard", fmt::format("expected K/N with whole numbers 0 <= K < N, got `{}`", text),
                             "e.g. --shard 0/4 .. --shard 3/4 for four shards");
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  const auto whole = [&](const std::string& part, int& value) {
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) throw bad();
    value = std::stoi(part);
  };
  int k = 0, n = 0;
  whole(text.substr(0, slash), k);
  whole(text.substr(slash + 1), n);
  if (n < 1 || k >= n) throw bad();
  options.shard_index = k;
  options.shard_count = n;
}

std::string journal_header_line(const SweepSpec& spec) {
  return Json{{"sweep", spec.name}, {"spec", spec.file}, {"fingerprint", spec.fingerprint}, {"points", spec.points.size()}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string journal_line(const Json& record, double seconds) {
  Json line = record;
  line["elapsed_s"] = seconds;
  return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::map<std::size_t, Json> read_journal(const fs::path& journal, const SweepSpec& spec, bool repair, const std::string& hint) {
  std::ifstream in(journal);
  std::string line;
  std::map<std::size_t, Json> records;
  if (!std::getline(in, line)) return records;  // empty journal: start afresh
  Json header;
  try {
    header = Json::parse(line);
  } catch (const nlohmann::json::exception&) {
    throw common::UserError({journal.string(), 1, 1}, "", "not a sweep journal", "remove the folder or choose another --out");
  }
  if (!header.is_object() || header.value("fingerprint", "") != spec.fingerprint) {
    throw common::UserError({journal.string(), 1, 1}, "",
                            "the folder holds points of a different sweep (the spec, a workload, the base arch or the "
                            "tool version changed)",
                            hint);
  }
  std::size_t dropped = 0;
  std::string kept = line + "\n";
  while (std::getline(in, line)) {
    const bool complete_line = !in.eof();  // the last line of a killed write has no newline
    try {
      Json r = Json::parse(line);
      const std::size_t i = r.at("point").get<std::size_t>();
      if (!complete_line || i >= spec.points.size() || r.at("id").get<std::string>() != spec.points[i].id) {
        ++dropped;
        continue;
      }
      kept += line + "\n";
      records[i] = std::move(r);
    } catch (const nlohmann::json::exception&) {
      ++dropped;
    }
  }
  if (dropped > 0) {
    spdlog::warn("{}: dropped {} unreadable line(s) (a write cut short); those points run again", journal.string(), dropped);
    if (repair) common::write_file_atomic(journal, kept);
  }
  return records;
}

Journal::Journal(const fs::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw common::UserError({path.string(), 0, 0}, "--out", fmt::format("cannot open the sweep journal: {}", std::strerror(err)),
                            common::errno_hint(err));
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw common::UserError({path_.string(), 0, 0}, "", fmt::format("writing the sweep journal failed: {}", std::strerror(err)),
                              common::errno_hint(err));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fdatasync(fd_);
}

void order_biggest_first(const SweepSpec& spec, std::vector<std::size_t>& points) {
  std::vector<double> cost(spec.points.size(), 0.0);
  for (const std::size_t i : points) cost[i] = estimated_cost(spec.points[i]);
  std::stable_sort(points.begin(), points.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
}

SweepRun open_sweep_run(const SweepOptions& options) { return open_sweep_run(options, load_sweep_spec(options.spec)); }

SweepRun open_sweep_run(const SweepOptions& options, SweepSpec spec_loaded) {
  SweepRun run;
  run.spec = std::move(spec_loaded);
  const SweepSpec& spec = run.spec;
  fs::path folder = options.out_dir.empty() ? fs::path("runs") / ("sweep-" + spec.name) : fs::path(options.out_dir);
  if (options.out_dir.empty() && options.shard_count > 1) {
    folder /= fmt::format("shard-{}-of-{}", options.shard_index, options.shard_count);
  }
  run.folder = folder;
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) {
    throw common::UserError({folder.string(), 0, 0}, "--out", "cannot create the output folder: " + ec.message(),
                            common::errno_hint(ec.value()));
  }
  // Two sweeps on one folder would interleave their journals and final files: the second one stops.
  run.lock = std::make_shared<common::FolderLock>(common::lock_folder(
      folder, "--out", "another mapper sweep is writing into this folder",
      "wait for it to finish (a rerun then resumes), or choose another --out"));
  // Temporaries of the final files or the journal a killed run was writing (its pid is gone).
  std::vector<std::string> ours(kFinalFiles.begin(), kFinalFiles.end());
  ours.push_back(kJournalFile);
  common::remove_stale_temporaries(folder, ours);
  run.journal_path = folder / kJournalFile;
  if (options.restart) {
    fs::remove(run.journal_path, ec);
    for (const auto& f : kFinalFiles) fs::remove(folder / f, ec);
  }
  if (fs::exists(run.journal_path) && fs::file_size(run.journal_path, ec) > 0) {
    run.records = read_journal(run.journal_path, spec, true, "rerun with --restart to discard them, or choose another --out");
  } else {
    for (const auto& f : kFinalFiles) {
      if (fs::exists(folder / f))
        throw common::UserError({(folder / f).string(), 0, 0}, "--out", "the folder holds a sweep's results but no points.jsonl",
                                "choose another --out, or --restart to replace them");
    }
    common::write_file_atomic(run.journal_path, journal_header_line(spec) + "\n");
  }
  run.resumed = run.records.size();
  for (const auto& p : spec.points) {
    const bool in_shard = p.index % static_cast<std::size_t>(options.shard_count) == static_cast<std::size_t>(options.shard_index);
    if (in_shard && run.records.count(p.index) == 0) run.remaining.push_back(p.index);
  }
  order_biggest_first(spec, run.remaining);
  spdlog::info("sweep {}: {} arch points x {} workloads, {} already done in {}", spec.name, spec.points.size(),
               spec.workloads.size(), run.resumed, run.journal_path.string());
  return run;
}

void finish_sweep_run(SweepRun& run, const SweepOptions& options, const RunStats& stats, std::ostream& out) {
  const SweepSpec& spec = run.spec;
  if (options.shard_count > 1 && run.records.size() < spec.points.size()) {
    // A shard writes no final files: they need every point. (A shard whose folder already holds every
    // point, e.g. the last of several shards run into one folder, falls through and writes them.)
    if (options.verbosity >= 0) {
      out << fmt::format("sweep {} shard {}/{}: {} points computed in this run, {} resumed; {} of {} arch points in {}\n",
                         spec.name, options.shard_index, options.shard_count, stats.computed, run.resumed,
                         run.records.size(), spec.points.size(), run.journal_path.string());
      if (stats.computed > 0 && stats.seconds > 0) {
        out << fmt::format("  time {:.1f} s, {:.1f} points/min, {}\n", stats.seconds,
                           60.0 * static_cast<double>(stats.computed) / stats.seconds, stats.workers);
      }
      out << fmt::format("when every shard is done: mapper sweep {} --merge <the {} shard folders>\n", spec.file,
                         options.shard_count);
    }
    return;
  }
  std::vector<Json> ordered;
  for (auto& [index, record] : run.records) {
    record.erase("elapsed_s");
    ordered.push_back(record);
  }
  const SweepFiles files = render_sweep(run.spec, ordered);
  common::write_file_atomic(run.folder / "sweep.csv", files.csv);
  common::write_file_atomic(run.folder / "pareto.csv", files.pareto_csv);
  common::write_file_atomic(run.folder / "pareto.svg", files.svg);
  common::write_file_atomic(run.folder / "sweep.json", files.json);
  if (options.verbosity >= 0) {
    out << summary_text(run.spec, ordered, Json::parse(files.json), stats, run.folder);
    out << fmt::format("wrote {}: sweep.csv, sweep.json, pareto.csv, pareto.svg (journal: {})\n", run.folder.string(), kJournalFile);
  }
}

int run_sweep(const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  if (options.dry_run) {
    out << list_points(load_sweep_spec(options.spec));
    return 0;
  }
  SweepRun run = open_sweep_run(options);
  const SweepSpec& spec = run.spec;
  const std::size_t resumed = run.resumed;
  const std::size_t target = resumed + run.remaining.size();  // the records this run ends with
  const common::StopToken stop(interrupt);
  std::mutex records_mutex;
  const auto t1 = std::chrono::steady_clock::now();
  {
    Journal journal(run.journal_path);
    std::atomic<std::size_t> done{resumed};
    report::ProgressLine progress(
        [&](double elapsed) {
          const std::size_t now = done.load();
          const double rate = static_cast<double>(now - resumed) / elapsed;
          const double eta = rate > 0 ? static_cast<double>(target - now) / rate : 0.0;
          return fmt::format("{} {}/{} arch points, {:.1f}s elapsed, ~{:.0f}s left",
                             report::progress_bar(static_cast<double>(now), static_cast<double>(target)), now, target,
                             elapsed, eta);
        },
        options.verbosity >= 0 && isatty(STDERR_FILENO) != 0);
    tbb::task_arena arena(std::max(1, options.threads));
    arena.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, run.remaining.size(), 1),
          [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t k = range.begin(); k != range.end(); ++k) {
              if (stop.stop_requested()) return;
              const SweepPoint& point = spec.points[run.remaining[k]];
              const auto start = std::chrono::steady_clock::now();
              bool complete = false;
              Json record;
              // Isolated: while this point waits for its own jobs, its thread must not pick up
              // another point (which would hold both points' stages in memory at once).
              tbb::this_task_arena::isolate([&] {
                record = compute_sweep_point(spec, point, options.share_layers, stop, complete);
              });
              if (!complete) return;
              const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
              const std::string line = journal_line(record, seconds);
              journal.append(line);
              spdlog::info("{} done in {:.2f} s ({} layers, {} distinct)", point.id, seconds,
                           record["layers"]["total"].get<std::uint64_t>(), record["layers"]["distinct"].get<std::uint64_t>());
              done.fetch_add(1);
              std::lock_guard<std::mutex> lock(records_mutex);
              // Kept as read back from text, exactly as a resumed run would hold it.
              run.records[point.index] = Json::parse(line);
            }
          },
          tbb::simple_partitioner());
    });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  RunStats stats;
  stats.computed = run.records.size() - resumed;
  stats.seconds = seconds;
  stats.workers = fmt::format("{} thread{}", options.threads, options.threads == 1 ? "" : "s");
  if (run.records.size() < target) {
    std::cerr << fmt::format("sweep interrupted: {} of {} arch points done, kept in {}; run the same command to resume\n",
                             run.records.size(), spec.points.size(), run.journal_path.string());
    return 130;
  }
  finish_sweep_run(run, options, stats, out);
  spdlog::info("sweep finished in {:.2f} s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

int merge_sweep(const SweepOptions& options, std::ostream& out) {
  SweepOptions whole = options;
  whole.shard_index = 0;
  whole.shard_count = 1;
  whole.restart = false;
  // Read every shard journal before touching the output folder, so a refused merge writes nothing.
  SweepSpec spec = load_sweep_spec(options.spec);
  std::map<std::size_t, Json> merged;
  std::map<std::size_t, std::string> from;  // point -> journal it came from, for messages
  for (const std::string& dir : options.merge) {
    const fs::path journal = fs::is_directory(dir) ? fs::path(dir) / kJournalFile : fs::path(dir);
    if (!fs::is_regular_file(journal)) {
      throw common::UserError({journal.string(), 0, 0}, "--merge", "no sweep journal here",
                              "pass the output folders of `mapper sweep SPEC --shard K/N` (each holds points.jsonl)");
    }
    const std::map<std::size_t, Json> records =
        read_journal(journal, spec, false, "merge only the shards of this spec, or rerun the shard with --restart");
    for (const auto& [index, record] : records) {
      Json bare = record;
      bare.erase("elapsed_s");
      const auto it = merged.find(index);
      if (it == merged.end()) {
        merged.emplace(index, record);
        from.emplace(index, journal.string());
        continue;
      }
      Json other = it->second;
      other.erase("elapsed_s");
      if (other != bare) {
        throw std::runtime_error(fmt::format("arch point {} differs between {} and {} although both journals are of this spec",
                                             spec.points[index].id, from[index], journal.string()));
      }
    }
  }
  std::vector<std::string> missing;
  for (const auto& p : spec.points) {
    if (merged.count(p.index) == 0) missing.push_back(p.id);
  }
  if (!missing.empty()) {
    const std::size_t shown = std::min<std::size_t>(missing.size(), 8);
    throw common::UserError(
        {}, "--merge",
        fmt::format("{} of {} arch points are in none of the {} journals: {}{}", missing.size(), spec.points.size(),
                    options.merge.size(), fmt::join(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                    missing.size() > shown ? ", ..." : ""),
        "finish the missing shards (rerunning a shard resumes it) and merge again");
  }
  const std::size_t points = spec.points.size();
  SweepRun run = open_sweep_run(whole, std::move(spec));  // the output folder: its journal must be of this spec too
  std::string journal_text = journal_header_line(run.spec) + "\n";
  for (auto& [index, record] : merged) {
    journal_text += record.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    run.records[index] = std::move(record);
  }
  common::write_file_atomic(run.journal_path, journal_text);
  RunStats stats;
  stats.source = fmt::format("{} points merged from {} journal{} into {}", points, options.merge.size(),
                             options.merge.size() == 1 ? "" : "s", run.journal_path.string());
  finish_sweep_run(run, whole, stats, out);
  return 0;
}

}  // namespace npumap::sweep
