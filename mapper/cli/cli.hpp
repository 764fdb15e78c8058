#pragma once
// The command line: `mapper --workload W ...` and the subcommands eval, list, show, sweep.

namespace npumap::cli {

/// Runs the whole command line; returns the process exit status: 0 ok, 1 no valid mapping or eval
/// mismatch, 2 bad input or usage (one line on stderr), 3 internal error (one line `internal error:
/// ...` on stderr), 130 interrupted. Never throws.
int run_cli(int argc, char** argv);

}  // namespace npumap::cli
