#include "mapper/report/progress_line.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace npumap::report {

ProgressLine::ProgressLine(std::function<std::string(double)> render, bool enabled) : render_(std::move(render)) {
  if (enabled) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() { stop(); }

void ProgressLine::stop() {
  if (!thread_.joinable()) return;
  done_.store(true);
  thread_.join();
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressLine::loop() {
  const auto start = std::chrono::steady_clock::now();
  while (!done_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed < 1.0) continue;
    std::fprintf(stderr, "\r%s", render_(elapsed).c_str());
    std::fflush(stderr);
    shown_ = true;
  }
}

std::string progress_bar(double done, double total, int width) {
  const double fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(width * fraction);
  std::string bar(static_cast<std::size_t>(width) + 2, '.');
  bar.front() = '[';
  bar.back() = ']';
  std::fill_n(bar.begin() + 1, filled, '#');
  return bar;
}

}  // namespace npumap::report
