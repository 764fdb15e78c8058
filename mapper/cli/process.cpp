#include "mapper/cli/process.hpp"

#include <csignal>
#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace npumap::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) { g_interrupted.store(true); }

}  // namespace

std::atomic<bool>& interrupt_flag() { return g_interrupted; }

void set_up_process() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("mapper");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("[%l] %v");
    spdlog::set_level(spdlog::level::err);
    std::signal(SIGINT, on_sigint);
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
