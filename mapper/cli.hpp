#pragma once
// The command line: `mapper --workload W ...` and the subcommands eval, list, show, sweep.

namespace npumap::mapper {

/// Runs the whole command line; returns the process exit status (0 ok, 1 no valid mapping or
/// eval mismatch, 2 bad input or usage, 130 interrupted).
int run_cli(int argc, char** argv);

}  // namespace npumap::mapper
