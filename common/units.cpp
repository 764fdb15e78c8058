#include "common/units.hpp"

#include <cmath>

#include <fmt/format.h>

namespace npumap::common {

std::string format_bytes(double v, int kib_decimals) {
  if (v >= 1024.0 * 1024.0) return fmt::format("{:.2f} MiB", v / (1024.0 * 1024.0));
  if (v >= 1024.0) return fmt::format("{:.{}f} KiB", v / 1024.0, kib_decimals);
  return fmt::format("{:.0f} B", v);
}

std::string format_bytes_short(double v) {
  if (v >= 1024.0 * 1024.0) return fmt::format("{:g} MiB", v / (1024.0 * 1024.0));
  if (v >= 1024.0) return fmt::format("{:g} KiB", v / 1024.0);
  return fmt::format("{:g} B", v);
}

std::string format_si(double v, bool whole_below_1000) {
  const char* units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (std::fabs(v) >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  if (u == 0 && whole_below_1000) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}{}", v, units[u]);
}

}  // namespace npumap::common
