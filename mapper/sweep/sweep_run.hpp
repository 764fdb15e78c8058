#pragma once
// The steps of a sweep run that the in-process driver (sweep.cpp: whole sweep, `--shard`, `--merge`)
// and the MPI driver (mpi_sweep.cpp) share: open the output folder and read its journal, append
// finished points to it, and render the final files from the records in point order.

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "mapper/sweep/sweep.hpp"
#include "mapper/sweep/sweep_spec.hpp"

namespace npumap::sweep {

/// The journal's file name inside the output folder.
inline constexpr const char* kJournalFile = "points.jsonl";

/// A sweep about to run: its checked spec, output folder, the records its journal already holds, and
/// the points still to compute (this shard's, most expensive first).
struct SweepRun {
  SweepSpec spec;
  std::filesystem::path folder;
  std::filesystem::path journal_path;
  std::map<std::size_t, nlohmann::ordered_json> records;  ///< by point index, as read back from text
  std::size_t resumed = 0;                                ///< records found in the journal
  std::vector<std::size_t> remaining;                     ///< point indices, in the order to hand out
  std::shared_ptr<common::FolderLock> lock;               ///< the folder, held against other sweeps while this run lives
};

/// Loads and checks the spec (every check before any work), creates the output folder (default
/// runs/sweep-<name>, or runs/sweep-<name>/shard-K-of-N for a shard), applies --restart, reads the
/// journal (refusing one of another spec) or starts it, and lists the remaining points of the shard.
SweepRun open_sweep_run(const SweepOptions& options);
/// The same with the spec of options.spec already loaded (and checked).
SweepRun open_sweep_run(const SweepOptions& options, SweepSpec spec);

/// The order in which the remaining points are handed out: by estimated cost, highest first (ties by
/// index), so that the long points do not start last and leave the other workers idle at the end.
/// The estimated cost is the point's MACs per cycle (see estimated_cost in sweep.cpp).
void order_biggest_first(const SweepSpec& spec, std::vector<std::size_t>& points);

/// The records of a journal, by point index. Refuses (UserError with `hint`) a journal of another
/// spec. A line that does not parse (the tail of a killed write) is dropped; with `repair`, the
/// journal is then rewritten without it.
std::map<std::size_t, nlohmann::ordered_json> read_journal(const std::filesystem::path& journal, const SweepSpec& spec,
                                                           bool repair, const std::string& hint);

/// The journal's first line: sweep name, spec path, fingerprint, number of points.
std::string journal_header_line(const SweepSpec& spec);

/// The journal line of a freshly computed record: the record plus its `elapsed_s` (the journal's own;
/// the final files leave it out).
std::string journal_line(const nlohmann::ordered_json& record, double seconds);

/// Appends whole lines to the journal and syncs each, so a finished point survives a kill.
class Journal {
 public:
  explicit Journal(const std::filesystem::path& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const std::string& line);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
};

/// What a finished run says about itself in the summary.
struct RunStats {
  std::size_t computed = 0;  ///< points computed by this run
  double seconds = 0.0;      ///< wall time of the computing part
  std::string workers;       ///< "2 threads", "2 worker ranks x 1 thread"
  std::string source;        ///< first summary line after the title; empty: "N points computed in this run, M resumed from <journal>"
  std::string coordinator;   ///< MPI: what the coordinator spent per point (empty: no line)
};

/// The end of a run whose remaining points are all done. A shard that does not hold every point
/// prints what it did and how to merge. Otherwise renders sweep.csv, sweep.json, pareto.csv and
/// pareto.svg from the records in point order, writes each atomically and prints the summary
/// (unless quiet).
void finish_sweep_run(SweepRun& run, const SweepOptions& options, const RunStats& stats, std::ostream& out);

}  // namespace npumap::sweep
