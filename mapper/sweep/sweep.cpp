// A design-space sweep, end to end.
//
//   load_sweep_spec (every check, every arch point built) -> <out>/points.jsonl read back (points a
//   killed run finished are skipped) -> the remaining points in a oneTBB parallel loop; each point runs
//   search::map_networks over all workloads (a shared per-layer stage, identical layers computed once,
//   and one join per workload), all in the same arena -> each finished point appended to points.jsonl at once
//   -> when every point is done, sweep.csv, sweep.json, pareto.csv and pareto.svg rendered from the
//   records in point order and written atomically.
//
// A point stopped by Ctrl-C is not recorded; the run exits 130 and the same command resumes it.

#include "mapper/sweep/sweep.hpp"

#include <fcntl.h>
#include <iostream>
#include <unistd.h>

#include <chrono>
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

namespace npumap::sweep {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kJournal = "points.jsonl";
const std::vector<std::string> kFinalFiles = {"sweep.csv", "sweep.json", "pareto.csv", "pareto.svg"};

Json journal_header(const SweepSpec& spec) {
  return Json{{"sweep", spec.name}, {"spec", spec.file}, {"fingerprint", spec.fingerprint}, {"points", spec.points.size()}};
}

/// The records of an earlier run of the same sweep, by point index. A line that does not parse (the
/// tail of a killed write) is dropped, and the journal is rewritten without it.
std::map<std::size_t, Json> read_journal(const fs::path& journal, const SweepSpec& spec) {
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
                    "the folder holds points of a different sweep (the spec, a workload, the base arch or the tool "
                    "version changed)",
                    "rerun with --restart to discard them, or choose another --out");
  }
  std::size_t dropped = 0;
  std::string kept = header.dump() + "\n";
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
    common::write_file_atomic(journal, kept);
  }
  return records;
}

/// Appends whole lines to the journal and syncs each, so a finished point survives a kill.
class Journal {
 public:
  explicit Journal(const fs::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw common::UserError({path.string(), 0, 0}, "--out", "cannot open the sweep journal", "check the folder's permissions");
  }
  ~Journal() {
    if (fd_ >= 0) ::close(fd_);
  }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string text = line + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw common::UserError({path_.string(), 0, 0}, "", "writing the sweep journal failed", "check free disk space");
      }
      done += static_cast<std::size_t>(n);
    }
    ::fdatasync(fd_);
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::mutex mutex_;
};

/// The text report: what ran, what the cache saved, and each workload's cross-arch front.
std::string summary_text(const SweepSpec& spec, const std::vector<Json>& records, const Json& sweep_json,
                         std::size_t computed, double seconds, int threads, const fs::path& folder) {
  std::string out = fmt::format("sweep {}: {} arch points x {} workloads (spec {}, base {})\n", spec.name,
                                spec.points.size(), spec.workloads.size(), spec.file, spec.base);
  out += fmt::format("  {} points computed in this run, {} resumed from {}\n", computed, spec.points.size() - computed,
                     (folder / kJournal).string());
  std::uint64_t total = 0, distinct = 0;
  for (const Json& r : records) {
    total += r["layers"]["total"].get<std::uint64_t>();
    distinct += r["layers"]["distinct"].get<std::uint64_t>();
  }
  if (total > 0) {
    out += fmt::format("  layers: {} (arch point, layer) pairs, {} distinct; the shared-layer cache reused {:.0f}%\n",
                       total, distinct, 100.0 * static_cast<double>(total - distinct) / static_cast<double>(total));
  }
  if (computed > 0 && seconds > 0) {
    out += fmt::format("  time {:.1f} s, {:.1f} points/min, {} threads\n", seconds, 60.0 * static_cast<double>(computed) / seconds, threads);
  }
  out += "cross-arch Pareto front (minimise MACs/cycle and SRAM bytes, against cycles and off-chip bytes);\n"
         "per arch point on the front: its best cycles and best off-chip bytes among its front mappings\n";
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
    out += fmt::format("    {:<6} {:>9} {:>10} {:>14} {:>11} {:>9}  {}\n", "point", "MACs/cyc", "SRAM", "best cycles",
                       "best offchip", "mappings", "parameters");
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
      out += fmt::format("    {:<6} {:>9} {:>10} {:>14.0f} {:>11} {:>9}  {}\n", id, p0["macs_per_cycle"].get<int>(),
                         common::format_bytes(p0["sram_capacity_bytes"].get<double>(), 0), cycles, common::format_bytes(offchip, 0), list.size(),
                         params.empty() ? "(base)" : params);
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

}  // namespace

Json compute_sweep_point(const SweepSpec& spec, const SweepPoint& point, bool share_layers,
                         const common::StopToken& stop, bool& complete) {
  std::vector<const workloads::Workload*> workloads;
  for (const auto& w : spec.workloads) workloads.push_back(&w.for_accelerator(point.arch.accel.name));
  search::SearchOptions options;
  options.objectives = spec.objectives;
  options.fusion = spec.fusion;
  options.tolerance = spec.tolerance;
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

int run_sweep(const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const SweepSpec spec = load_sweep_spec(options.spec);
  if (options.dry_run) {
    out << list_points(spec);
    return 0;
  }
  const fs::path folder = options.out_dir.empty() ? fs::path("runs") / ("sweep-" + spec.name) : fs::path(options.out_dir);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw common::UserError({folder.string(), 0, 0}, "--out", "cannot create the output folder: " + ec.message(), "check the path");
  const fs::path journal_path = folder / kJournal;
  if (options.restart) {
    fs::remove(journal_path, ec);
    for (const auto& f : kFinalFiles) fs::remove(folder / f, ec);
  }
  std::map<std::size_t, Json> records;
  if (fs::exists(journal_path) && fs::file_size(journal_path, ec) > 0) {
    records = read_journal(journal_path, spec);
  } else {
    for (const auto& f : kFinalFiles) {
      if (fs::exists(folder / f))
        throw common::UserError({(folder / f).string(), 0, 0}, "--out", "the folder holds a sweep's results but no points.jsonl",
                        "choose another --out, or --restart to replace them");
    }
    common::write_file_atomic(journal_path, journal_header(spec).dump() + "\n");
  }
  const std::size_t resumed = records.size();
  spdlog::info("sweep {}: {} arch points x {} workloads, {} already done in {}", spec.name, spec.points.size(),
               spec.workloads.size(), resumed, journal_path.string());

  std::vector<std::size_t> remaining;
  for (const auto& p : spec.points) {
    if (records.count(p.index) == 0) remaining.push_back(p.index);
  }
  const common::StopToken stop(interrupt);
  std::mutex records_mutex;
  const auto t1 = std::chrono::steady_clock::now();
  {
    Journal journal(journal_path);
    std::atomic<std::size_t> done{resumed};
    report::ProgressLine progress(
        [&](double elapsed) {
          const std::size_t now = done.load();
          const double rate = static_cast<double>(now - resumed) / elapsed;
          const double eta = rate > 0 ? static_cast<double>(spec.points.size() - now) / rate : 0.0;
          return fmt::format("{} {}/{} arch points, {:.1f}s elapsed, ~{:.0f}s left",
                             report::progress_bar(static_cast<double>(now), static_cast<double>(spec.points.size())), now,
                             spec.points.size(), elapsed, eta);
        },
        options.verbosity >= 0 && isatty(STDERR_FILENO) != 0);
    tbb::task_arena arena(std::max(1, options.threads));
    arena.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, remaining.size(), 1),
          [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t k = range.begin(); k != range.end(); ++k) {
              if (stop.stop_requested()) return;
              const SweepPoint& point = spec.points[remaining[k]];
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
              Json journal_line = record;
              journal_line["elapsed_s"] = seconds;  // the journal's own; the final files leave it out
              journal.append(journal_line.dump());
              spdlog::info("{} done in {:.2f} s ({} layers, {} distinct)", point.id, seconds,
                           record["layers"]["total"].get<std::uint64_t>(), record["layers"]["distinct"].get<std::uint64_t>());
              done.fetch_add(1);
              std::lock_guard<std::mutex> lock(records_mutex);
              // Kept as read back from text, exactly as a resumed run would hold it.
              records[point.index] = Json::parse(record.dump());
            }
          },
          tbb::simple_partitioner());
    });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const std::size_t computed = records.size() - resumed;
  if (records.size() < spec.points.size()) {
    std::cerr << fmt::format("sweep interrupted: {} of {} arch points done, kept in {}; run the same command to resume\n",
                             records.size(), spec.points.size(), journal_path.string());
    return 130;
  }

  std::vector<Json> ordered;
  for (auto& [index, record] : records) {
    record.erase("elapsed_s");
    ordered.push_back(record);
  }
  const SweepFiles files = render_sweep(spec, ordered);
  common::write_file_atomic(folder / "sweep.csv", files.csv);
  common::write_file_atomic(folder / "pareto.csv", files.pareto_csv);
  common::write_file_atomic(folder / "pareto.svg", files.svg);
  common::write_file_atomic(folder / "sweep.json", files.json);
  if (options.verbosity >= 0) {
    out << summary_text(spec, ordered, Json::parse(files.json), computed, seconds, options.threads, folder);
    out << fmt::format("wrote {}: sweep.csv, sweep.json, pareto.csv, pareto.svg (journal: {})\n", folder.string(), kJournal);
  }
  spdlog::info("sweep finished in {:.2f} s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

}  // namespace npumap::sweep
