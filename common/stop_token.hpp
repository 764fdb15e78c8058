#pragma once
// The one way a long computation learns that it should stop: a flag someone else sets (the CLI's
// SIGINT handler) and/or a deadline (--time-limit). Library code only polls it, at chunk boundaries;
// it never installs signal handlers itself.

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace npumap::common {

/// A cheap, copyable view of "should we stop now?". The default token never stops.
class StopToken {
 public:
  using Clock = std::chrono::steady_clock;

  StopToken() = default;
  /// Stops when `*flag` is set (may be null) or, if given, once `deadline` has passed.
  explicit StopToken(const std::atomic<bool>* flag, std::optional<Clock::time_point> deadline = std::nullopt)
      : flag_(flag), deadline_(deadline) {}

  /// True once the flag is set or the deadline has passed.
  bool stop_requested() const {
    if (flag_ != nullptr && flag_->load(std::memory_order_relaxed)) return true;
    return deadline_ && Clock::now() >= *deadline_;
  }
  const std::optional<Clock::time_point>& deadline() const { return deadline_; }

 private:
  const std::atomic<bool>* flag_ = nullptr;
  std::optional<Clock::time_point> deadline_;
};

/// Thrown by a phase that cannot produce a partial result (loading an input) when a stop was
/// requested during it; `main` prints one line and exits 130. what() names the phase.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(const std::string& phase) : std::runtime_error(phase) {}
};

/// Throws Interrupted(phase) if `stop` asks to stop.
inline void throw_if_stopped(const StopToken& stop, const std::string& phase) {
  if (stop.stop_requested()) throw Interrupted(phase);
}

}  // namespace npumap::common
