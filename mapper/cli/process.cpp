#include "mapper/cli/process.hpp"

#include <csignal>
#include <mutex>

#include <signal.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace npumap::cli {
namespace {

std::atomic<bool> g_interrupted{false};

/// First SIGINT or SIGTERM: ask the run to stop (it writes its partial result). Second: the default
/// action, so a user can always end the process. Only async-signal-safe calls.
extern "C" void on_stop_signal(int sig) {
  if (g_interrupted.exchange(true)) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
  }
}

}  // namespace

std::atomic<bool>& interrupt_flag() { return g_interrupted; }

void set_up_process() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("mapper");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("[%l] %v");
    spdlog::set_level(spdlog::level::err);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // as std::signal: interrupted reads and writes resume
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
  });
}

void set_log_verbosity(int verbosity, bool warnings_by_default) {
  spdlog::set_level(verbosity > 1   ? spdlog::level::debug
                    : verbosity > 0 ? spdlog::level::info
                    : verbosity < 0 ? spdlog::level::err
                    : warnings_by_default ? spdlog::level::warn
                                          : spdlog::level::err);
}

}  // namespace npumap::cli
