#pragma once
// The command line: `mapper --workload W ...` and the subcommands eval, list, show, sweep.

namespace npumap::cli {

/// Runs the whole command line; returns the process exit status: 0 ok, 1 no valid mapping or eval
/// mismatch, 2 bad input or usage (one line on stderr), 3 internal error (one line `internal error:
/// ...` on stderr), 4 out of memory (one line `out of memory: ...`), 130 interrupted. Never throws.
/// Exit status of a run that ran out of memory (std::bad_alloc): one line `out of memory: ...`.
inline constexpr int kExitOutOfMemory = 4;

int run_cli(int argc, char** argv);

}  // namespace npumap::cli
