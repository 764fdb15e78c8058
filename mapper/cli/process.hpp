#pragma once
// The process contract: what is set up once per process, in main, and never inside library code.
//   - the "mapper" spdlog logger on stderr (commands only set its level);
//   - the SIGINT and SIGTERM handler, which sets one flag; commands hand it to the search as a
//     StopToken (a second signal ends the process at once);
//   - the oneTBB thread limit (tbb::global_control), scoped to one command's --threads.
// Library code (search, sweep, report, eval) never installs handlers, loggers or global limits, so a
// mapping can run twice in one process.

#include <atomic>

namespace npumap::cli {

/// Installs the logger and the SIGINT/SIGTERM handler; idempotent, so tests may call it too.
void set_up_process();
/// The flag the SIGINT/SIGTERM handler sets.
std::atomic<bool>& interrupt_flag();
/// Sets the log level of a command: -1 errors only, 0 `normal_level` (err or warn), 1 info, 2 debug.
void set_log_verbosity(int verbosity, bool warnings_by_default);

}  // namespace npumap::cli
