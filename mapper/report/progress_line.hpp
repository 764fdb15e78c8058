#pragma once
// A live progress line on stderr (mapping runs and sweeps): redrawn every 200 ms by a thread of its
// own, from the first second on, and erased when stopped. The caller says what the line reads.

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace npumap::report {

class ProgressLine {
 public:
  /// `render(elapsed_seconds)` returns the line's text; nothing is drawn unless `enabled`.
  ProgressLine(std::function<std::string(double)> render, bool enabled);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  /// Stops the thread and erases the line (idempotent).
  void stop();

 private:
  void loop();
  std::function<std::string(double)> render_;
  std::atomic<bool> done_{false};
  bool shown_ = false;
  std::thread thread_;
};

/// "[#########.....................]" for `done` of `total`, `width` characters inside the brackets.
std::string progress_bar(double done, double total, int width = 30);

}  // namespace npumap::report
