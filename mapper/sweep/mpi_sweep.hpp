#pragma once
// `mpirun -np N mapper sweep SPEC.yaml`: the same sweep on N MPI ranks (Open MPI, C API), with the
// same files and the same resume guarantees as one process. See docs/distributed-sweeps.md.
//
// Rank 0 is the coordinator: it reads and checks the spec (every check before any work), owns the
// output folder and the journal, and hands out the remaining arch points one at a time, most
// expensive first, to whichever rank is free. Ranks 1..N-1 compute a point at a time on their own
// oneTBB arena and send its record back as the journal line; rank 0 appends each line to the journal
// as it arrives and, when every point is done, renders the final files exactly as run_sweep does.
// A rank that dies ends the run (mpirun aborts the job); rerunning the same command resumes.

#include <atomic>
#include <ostream>

#include "mapper/sweep/sweep.hpp"

namespace npumap::sweep {

/// True when an MPI launcher started this process: Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE, PMIx
/// launchers (srun --mpi=pmix, prterun) set PMIX_RANK. MPI is initialised only then, so the plain
/// `mapper` runs where no MPI runtime is set up.
bool launched_by_mpi();

/// Initialises MPI, runs this rank's part of the sweep (or, on one rank, run_sweep; `--merge` and
/// `--dry-run` run on rank 0 alone), finalises MPI and returns this rank's exit status. Rank 0 reports
/// bad input by throwing UserError (the other ranks then return 0 without a word: rank 0's status is
/// mpirun's, and mpirun does not end rank 0 before it has printed); an error once the points are
/// handed out is printed and aborts every rank with MPI_Abort.
int run_sweep_mpi(const SweepOptions& options, const std::atomic<bool>* interrupt, std::ostream& out);

}  // namespace npumap::sweep
