// The MPI sweep (mpi_sweep.hpp): one coordinator (rank 0), N-1 workers, point-to-point messages.
//
//   rank 0: open_sweep_run (spec checked, journal read) -> kTagStart to every worker (the spec's
//           fingerprint, or empty when the spec was refused) -> kTagWork (a point index) to each worker
//           -> for every kTagRecord that arrives: journal it, then send that worker the next point or
//           kTagStop -> finish_sweep_run.
//   rank k: load the spec itself (the same files), meanwhile -> wait for kTagStart (its fingerprint
//           must match rank 0's) -> loop: kTagWork -> compute_sweep_point on its own arena -> kTagRecord (the
//           journal line) -> until kTagStop.
//
// Rank 0 replies to a record before journaling it, and journals the records that arrived together
// with one fdatasync. One point is in flight per worker: a point takes a tenth of a second to seconds, a message
// round trip microseconds, so prefetching would only make the order less "biggest first".
// Waits poll with MPI_Iprobe and sleep in between, because Open MPI's blocking receive busy-waits and
// would take a core from a computing rank on an oversubscribed node (and from the workers while rank
// 0 checks the spec).
//
// The records are the same JSON as in one process (compute_sweep_point is deterministic and runs
// whole on one rank), so the final files are byte-identical for any number of ranks and threads.

#include "mapper/sweep/mpi_sweep.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <tbb/task_arena.h>

#include "common/stop_token.hpp"
#include "common/user_error.hpp"
#include "mapper/sweep/sweep_run.hpp"

namespace npumap::sweep {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr int kTagStart = 1;   ///< rank 0 -> worker: the spec's fingerprint ("" = the spec was refused, stop)
constexpr int kTagWork = 2;    ///< rank 0 -> worker: one std::uint64_t, the point index
constexpr int kTagStop = 3;    ///< rank 0 -> worker: no more points
constexpr int kTagRecord = 4;  ///< worker -> rank 0: the point's journal line

/// MPI_Init_thread / MPI_Finalize around one command. Only the thread that initialised MPI calls it.
class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

/// Waits until a message from `source` (or MPI_ANY_SOURCE) is there, without spinning. Returns its
/// envelope. `interrupt` (may be null) set: returns false.
bool wait_message(int source, const std::atomic<bool>* interrupt, MPI_Status& status) {
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int flag = 0;
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag != 0) return true;
    if (interrupt != nullptr && interrupt->load()) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

void send_text(const std::string& text, int dest, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

/// Receives the message `status` announced as text.
std::string receive_text(const MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

void send_point(std::size_t index, int dest) {
  const std::uint64_t value = index;
  MPI_Send(&value, 1, MPI_UINT64_T, dest, kTagWork, MPI_COMM_WORLD);
}

void send_stop(int dest) { MPI_Send(nullptr, 0, MPI_CHAR, dest, kTagStop, MPI_COMM_WORLD); }

/// Once points are out, an error cannot unwind through the other ranks: print it as the CLI would and
/// end every rank.
[[noreturn]] void abort_all(const std::string& line, int status) {
  std::cerr << line << "\n" << std::flush;
  MPI_Abort(MPI_COMM_WORLD, status);
  std::abort();  // not reached: MPI_Abort does not return
}

int coordinate(const MpiSession& mpi, const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out) {
  const int workers = mpi.size() - 1;
  SweepRun run;
  try {
    run = open_sweep_run(options);
  } catch (...) {
    for (int r = 1; r <= workers; ++r) send_text("", r, kTagStart);  // every worker returns 0, silently
    throw;
  }
  for (int r = 1; r <= workers; ++r) send_text(run.spec.fingerprint, r, kTagStart);
  const SweepSpec& spec = run.spec;
  const std::size_t resumed = run.resumed;
  spdlog::info("sweep {}: {} points to compute on {} worker ranks", spec.name, run.remaining.size(), workers);

  double handling_s = 0.0;  // receive + parse + reply + journal (with fdatasync), summed over points
  double sync_s = 0.0;      // of which the journal's write and fdatasync
  std::size_t batches = 0;  // journal appends (one per group of records that arrived together)
  std::uint64_t bytes_in = 0, bytes_out = 0;
  const auto t1 = Clock::now();
  try {
    Journal journal(run.journal_path);
    std::vector<std::size_t> assigned(static_cast<std::size_t>(mpi.size()), 0);
    std::size_t next = 0;
    int in_flight = 0;
    for (int r = 1; r <= workers; ++r) {
      if (next < run.remaining.size()) {
        assigned[static_cast<std::size_t>(r)] = run.remaining[next++];
        send_point(assigned[static_cast<std::size_t>(r)], r);
        bytes_out += sizeof(std::uint64_t);
        ++in_flight;
      } else {
        send_stop(r);
      }
    }
    while (in_flight > 0) {
      MPI_Status status;
      if (!wait_message(MPI_ANY_SOURCE, interrupt, status)) {
        abort_all(fmt::format("sweep interrupted: {} of {} arch points done, kept in {}; run the same command to resume",
                              run.records.size(), spec.points.size(), run.journal_path.string()),
                  130);
      }
      // Every record that is already here: each worker gets its next point at once, then the batch
      // goes to the journal with one write and one fdatasync (group commit: the sync, ~5 ms on a VM
      // disk, is most of the coordinator's time per point and would cap the rate at ~200 points/s).
      const auto t = Clock::now();
      std::string batch;
      // The first message is the one wait_message saw; then whatever else has arrived meanwhile.
      for (int flag = 1; flag != 0;) {
        const int source = status.MPI_SOURCE;
        if (status.MPI_TAG != kTagRecord) {
          throw std::runtime_error(fmt::format("rank {} sent tag {} instead of a point record", source, status.MPI_TAG));
        }
        const std::string line = receive_text(status);
        bytes_in += line.size();
        Json record = Json::parse(line);
        const std::size_t index = record.at("point").get<std::size_t>();
        if (index != assigned[static_cast<std::size_t>(source)] || run.records.count(index) != 0) {
          throw std::runtime_error(fmt::format("rank {} returned point {} instead of {}", source, index,
                                               assigned[static_cast<std::size_t>(source)]));
        }
        if (next < run.remaining.size()) {
          assigned[static_cast<std::size_t>(source)] = run.remaining[next++];
          send_point(assigned[static_cast<std::size_t>(source)], source);
          bytes_out += sizeof(std::uint64_t);
        } else {
          send_stop(source);
          --in_flight;
        }
        batch += (batch.empty() ? "" : "\n") + line;
        run.records[index] = std::move(record);
        spdlog::info("{} done on rank {} in {:.2f} s ({}/{})", spec.points[index].id, source,
                     run.records[index]["elapsed_s"].get<double>(), run.records.size(), spec.points.size());
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      }
      const auto synced = Clock::now();
      journal.append(batch);
      sync_s += std::chrono::duration<double>(Clock::now() - synced).count();
      handling_s += std::chrono::duration<double>(Clock::now() - t).count();
      ++batches;
    }
  } catch (const common::UserError& e) {
    abort_all(e.what(), 2);
  } catch (const std::bad_alloc&) {
    abort_all("out of memory: the sweep's coordinator needed more memory than is available", 4);  // cli::kExitOutOfMemory
  } catch (const std::exception& e) {
    abort_all(fmt::format("internal error: {} (please report it with the command line and input files)", e.what()), 3);
  }
  RunStats stats;
  stats.computed = run.records.size() - resumed;
  stats.seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  stats.workers = fmt::format("{} worker rank{} x {} thread{}", workers, workers == 1 ? "" : "s", options.threads,
                              options.threads == 1 ? "" : "s");
  if (stats.computed > 0) {
    const double n = static_cast<double>(stats.computed);
    stats.coordinator = fmt::format("coordinator (rank 0): {:.3f} ms per point to receive, journal and reply ({:.3f} ms of it "
                                    "the journal's write and sync, {} syncs); {:.0f} B per point received, {:.0f} B sent",
                                    1e3 * handling_s / n, 1e3 * sync_s / n, batches, static_cast<double>(bytes_in) / n,
                                    static_cast<double>(bytes_out) / n);
  }
  finish_sweep_run(run, options, stats, out);
  return 0;
}

int work(const MpiSession& mpi, const SweepOptions& options, const std::atomic<bool>* interrupt) {
  // Loaded while rank 0 loads it too (building every arch point takes ~2 ms per point); an error is
  // reported only if rank 0 accepted the spec, so a bad spec gives one message, rank 0's.
  SweepSpec spec;
  std::string load_error;
  try {
    spec = load_sweep_spec(options.spec);
  } catch (const common::UserError& e) {
    load_error = e.what();
  }
  MPI_Status status;
  wait_message(0, nullptr, status);
  const std::string fingerprint = receive_text(status);
  // Rank 0 refused the spec: it says why and its status 2 becomes mpirun's. A worker's own 2 here
  // would let mpirun kill the job, rank 0 included, before rank 0 has printed the message (seen
  // under load: the error was missing from the output).
  if (fingerprint.empty()) return 0;
  if (!load_error.empty()) abort_all(fmt::format("rank {}: {}", mpi.rank(), load_error), 2);
  if (spec.fingerprint != fingerprint) {
    abort_all(fmt::format("{}: rank {} reads other files than rank 0 (the spec, a workload or the base arch differs "
                          "between the nodes) (give every rank the same files)",
                          options.spec, mpi.rank()),
              2);
  }
  const common::StopToken stop(interrupt);
  tbb::task_arena arena(std::max(1, options.threads));
  for (;;) {
    wait_message(0, nullptr, status);
    if (status.MPI_TAG == kTagStop) {
      MPI_Recv(nullptr, 0, MPI_CHAR, 0, kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return 0;
    }
    std::uint64_t index = 0;
    MPI_Recv(&index, 1, MPI_UINT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index >= spec.points.size()) abort_all(fmt::format("internal error: rank 0 sent point {} of {}", index, spec.points.size()), 3);
    const auto start = Clock::now();
    bool complete = false;
    Json record;
    arena.execute([&] { record = compute_sweep_point(spec, spec.points[index], options.share_layers, stop, complete); });
    if (!complete) {
      abort_all(fmt::format("sweep interrupted on rank {}; run the same command to resume", mpi.rank()), 130);
    }
    send_text(journal_line(record, std::chrono::duration<double>(Clock::now() - start).count()), 0, kTagRecord);
  }
}

}  // namespace

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

int run_sweep_mpi(const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out) {
  const MpiSession mpi;
  if (mpi.size() == 1) return options.merge.empty() ? run_sweep(options, interrupt, out) : merge_sweep(options, out);
  if (!options.merge.empty() || options.dry_run) {
    if (mpi.rank() != 0) return 0;
    return options.dry_run ? run_sweep(options, interrupt, out) : merge_sweep(options, out);
  }
  return mpi.rank() == 0 ? coordinate(mpi, options, interrupt, out) : work(mpi, options, interrupt);
}

}  // namespace npumap::sweep
