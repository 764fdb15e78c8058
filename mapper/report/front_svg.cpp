// front.svg, the sizing view (front_svg.hpp). Everything is read from the result document, so
// `mapper show` redraws a saved run, and written in a fixed order with fixed decimals, so the file is
// byte-identical for any thread count.

#include "mapper/report/front_svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/text_escape.hpp"
#include "common/units.hpp"
#include "mapper/report/report.hpp"
#include "mapper/report/report_util.hpp"
#include "mapper/report/result_document.hpp"
#include "mapper/report/sizing.hpp"

namespace npumap::report {

std::vector<StairStep> sizing_staircase(const std::vector<PlotPoint>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&points](std::size_t a, std::size_t b) {
    const PlotPoint& p = points[a];
    const PlotPoint& q = points[b];
    return std::tie(p.sram_bytes, p.cycles, p.offchip_bytes, a) < std::tie(q.sram_bytes, q.cycles, q.offchip_bytes, b);
  });
  // In increasing SRAM, a point is a step when it beats every point of less (or equal) SRAM.
  std::vector<StairStep> steps;
  for (const std::size_t i : order) {
    if (!steps.empty() && !(points[i].cycles < steps.back().cycles)) continue;
    steps.push_back({points[i].sram_bytes, points[i].cycles, i});
  }
  return steps;
}

// Named, not anonymous: the report's sources are built as one unity file.
namespace front_svg_detail {

using detail::Json;
using detail::num;
using detail::plural;

enum class Quantity { Bytes, Cycles, Ms };

/// One axis: its range, scale, ticks and their labels.
struct Axis {
  double lo = 0.0, hi = 1.0;
  bool log = false;     ///< log10 scale: the values are positive and span more than two decades
  std::string unit;     ///< the linear labels' unit ("KiB", "million cycles", "ms"); log labels carry their own
  std::vector<double> ticks;
  std::vector<std::string> labels;
  /// Where `v` falls, 0 at lo and 1 at hi.
  double frac(double v) const {
    if (log) return (std::log10(std::max(v, lo * 1e-3)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

/// About `target` "nice" tick values (1, 2 or 5 times a power of ten apart, at least `min_step`)
/// covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target, double min_step, double& step) {
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  step = std::max(min_step, (r < 1.5 ? 1.0 : r < 3.5 ? 2.0 : r < 7.5 ? 5.0 : 10.0) * mag);
  std::vector<double> ticks;
  // Counted, not stepped: a step below the values' precision (an edited result.json) cannot loop forever.
  const double first = std::ceil(lo / step) * step;
  for (int k = 0; k <= 4 * target + 4; ++k) {
    const double v = first + k * step;
    if (!(v <= hi + step * 1e-9)) break;
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

/// A tick label with just enough decimals for ticks `step` apart to read differently.
std::string tick_label(double v, double step) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  return fmt::format("{:.{}f}", v, decimals);
}

/// The unit a linear axis of `q` up to `max` is labelled in, and its size in the data's units.
std::pair<std::string, double> display_unit(Quantity q, double max) {
  if (q == Quantity::Bytes) {
    if (max >= 1024.0 * 1024.0) return {"MiB", 1024.0 * 1024.0};
    if (max >= 1024.0) return {"KiB", 1024.0};
    return {"B", 1.0};
  }
  if (q == Quantity::Cycles) {
    if (max >= 1e6) return {"million cycles", 1e6};
    if (max >= 1e4) return {"thousand cycles", 1e3};
    return {"cycles", 1.0};
  }
  return {"ms", 1.0};
}

void linear_ticks(Axis& a, Quantity q, int target, bool non_negative) {
  const auto unit = display_unit(q, std::max(std::fabs(a.lo), std::fabs(a.hi)));
  a.unit = unit.first;
  // Bytes and cycles are whole: no tick between two of them.
  const double min_step = q == Quantity::Ms ? 0.0 : 1.0 / unit.second;
  double step = 1.0;
  for (const double v : nice_ticks(a.lo / unit.second, a.hi / unit.second, target, min_step, step)) {
    if (non_negative && v < 0.0) continue;
    a.ticks.push_back(v * unit.second);
    a.labels.push_back(tick_label(v, step));
  }
}

void log_ticks(Axis& a, Quantity q, int target) {
  const std::size_t most = static_cast<std::size_t>(target) + 2;
  if (q == Quantity::Bytes) {
    // Powers of two, every `stride`-th one so that at most `most` show: 16 KiB, 64 KiB, 256 KiB, ...
    const int e0 = static_cast<int>(std::ceil(std::log2(a.lo))), e1 = static_cast<int>(std::floor(std::log2(a.hi)));
    int stride = 1;
    while ((e1 - e0) / stride + 1 > static_cast<int>(most)) ++stride;
    for (int e = e0; e <= e1; ++e) {
      if (((e % stride) + stride) % stride != 0) continue;
      a.ticks.push_back(std::ldexp(1.0, e));
      a.labels.push_back(common::format_bytes_short(std::ldexp(1.0, e)));
    }
    return;
  }
  // 1, 2 and 5 times the powers of ten, or only the powers, or every few of them: at most `most`.
  const int k0 = static_cast<int>(std::floor(std::log10(a.lo))), k1 = static_cast<int>(std::ceil(std::log10(a.hi)));
  const std::vector<std::vector<double>> mantissas = {{1.0, 2.0, 5.0}, {1.0}};
  for (int stride = 1; stride <= 64; ++stride) {
    for (const auto& ms : mantissas) {
      if (stride > 1 && ms.size() > 1) continue;
      std::vector<double> ticks;
      for (int k = k0; k <= k1; ++k) {
        if (((k % stride) + stride) % stride != 0) continue;
        for (const double m : ms) {
          const double v = m * std::pow(10.0, k);
          if (v >= a.lo * (1 - 1e-9) && v <= a.hi * (1 + 1e-9)) ticks.push_back(v);
        }
      }
      if (ticks.size() > most) continue;
      for (const double v : ticks) {
        a.ticks.push_back(v);
        a.labels.push_back(q == Quantity::Cycles ? common::format_si(v) : fmt::format("{:g}", v));
      }
      a.unit = q == Quantity::Cycles ? "cycles" : "ms";
      return;
    }
  }
}

/// An axis over [dmin, dmax], padded by a few percent when `padded`; log-scaled when the values are
/// positive and span more than two decades.
Axis make_axis(double dmin, double dmax, Quantity q, bool padded, int target) {
  Axis a;
  a.log = dmin > 0.0 && dmax > dmin * 100.0;
  if (a.log) {
    const double l0 = std::log10(dmin), l1 = std::log10(dmax), pad = padded ? 0.05 * (l1 - l0) : 0.0;
    a.lo = std::pow(10.0, l0 - pad);
    a.hi = std::pow(10.0, l1 + pad);
    log_ticks(a, q, target);
    return a;
  }
  a.lo = dmin;
  a.hi = dmax;
  if (padded || !(dmax > dmin)) {
    const double span = dmax > dmin ? dmax - dmin : std::max(std::fabs(dmax) * 0.02, 1.0);
    a.lo -= span * 0.06;
    a.hi += span * 0.06;
  }
  linear_ticks(a, q, target, dmin >= 0.0);
  return a;
}

/// "#rrggbb" at `t` in [0, 1] of a viridis-like scale (dark purple to yellow-green), readable on white.
std::string colour(double t) {
  static const std::array<std::array<double, 3>, 5> stops = {
      {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {200, 220, 40}}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4.0;
  const std::size_t i = std::min<std::size_t>(3, static_cast<std::size_t>(t));
  const double f = t - static_cast<double>(i);
  std::array<int, 3> c{};
  for (std::size_t k = 0; k < 3; ++k) c[k] = static_cast<int>(std::lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f));
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

/// What the plot draws, read from the result document.
struct Plot {
  std::vector<PlotPoint> points;
  std::size_t chosen = 0;  ///< the chosen point's index in `points`; points.size(): not plotted
  PlotPoint chosen_point;
  std::optional<PlotPoint> no_fusion, vela;
  double clock_hz = 0.0;        ///< 0: unknown, latency in cycles only
  double capacity_bytes = 0.0;  ///< the arch's SRAM capacity; 0: unknown
};

PlotPoint plot_point(const Json& j) { return {num(j, "cycles"), num(j, "offchip_bytes"), num(j, "sram_bytes")}; }

/// The plotted points: every front point from `front_values` ([cycles, offchip_bytes, sram_bytes,
/// energy_pj] per point, written whatever --keep-pareto says) when present and well formed, else the
/// points kept in `front` (a document from before front_values).
std::vector<PlotPoint> front_points(const Json& r) {
  std::vector<PlotPoint> points;
  if (r.contains("front_values") && r["front_values"].is_array()) {
    const Json& values = r["front_values"];
    points.reserve(values.size());
    for (const Json& v : values) {
      if (!v.is_array() || v.size() < 3 || !v[0].is_number() || !v[1].is_number() || !v[2].is_number()) {
        points.clear();
        break;
      }
      points.push_back({v[0].get<double>(), v[1].get<double>(), v[2].get<double>()});
    }
    if (!points.empty()) return points;
  }
  if (r.contains("front") && r["front"].is_array()) {
    for (const Json& f : r["front"]) points.push_back(plot_point(f));
  }
  return points;
}

Plot read_plot(const Json& r) {
  Plot p;
  p.points = front_points(r);
  // The chosen point is `front[chosen]`; without --keep-pareto `front` holds it alone, so its index
  // among the plotted points is that of the first point with its values.
  p.chosen = p.points.size();
  if (r.contains("front") && r["front"].is_array() && !r["front"].empty()) {
    p.chosen_point = plot_point(r["front"][chosen_point(r)]);
    const auto same = [&p](const PlotPoint& q) {
      return q.cycles == p.chosen_point.cycles && q.offchip_bytes == p.chosen_point.offchip_bytes &&
             q.sram_bytes == p.chosen_point.sram_bytes;
    };
    const std::size_t k = chosen_point(r);
    if (k < p.points.size() && same(p.points[k])) {
      p.chosen = k;
    } else {
      p.chosen = static_cast<std::size_t>(std::find_if(p.points.begin(), p.points.end(), same) - p.points.begin());
    }
  }
  if (r.contains("no_fusion") && r["no_fusion"].is_object()) p.no_fusion = plot_point(r["no_fusion"]);
  if (r.contains("vela_baseline") && r["vela_baseline"].is_object()) p.vela = plot_point(r["vela_baseline"]);
  if (r.contains("arch")) {
    p.clock_hz = num(r["arch"], "core_clock_hz");
    p.capacity_bytes = num(r["arch"], "sram_capacity_bytes");
  }
  return p;
}

/// A panel's plot area in pixels.
struct Frame {
  double left, top, width, height;
  double x(const Axis& a, double v) const { return left + a.frac(v) * width; }
  double y(const Axis& a, double v) const { return top + height - a.frac(v) * height; }
};

// The page: two panels side by side, the latency axis shared, the legend on the right.
constexpr double kWidth = 1260, kHeight = 540;
constexpr Frame kSizing{100, 78, 400, 390};
constexpr Frame kOffchip{560, 78, 400, 390};
constexpr double kLegendX = 1072;
constexpr const char* kStairColour = "#f07f00";  // orange: apart from the points' colours and the red Vela mark

/// The three axes and the colour scale, over the points and the markers (the markers are not coloured).
struct Axes {
  Axis latency, ms, sram, offchip, colour;
  bool capacity_on_scale = false;
};

Axes make_axes(const Plot& p) {
  std::array<double, 2> c{p.points[0].cycles, p.points[0].cycles}, s{p.points[0].sram_bytes, p.points[0].sram_bytes},
      o{p.points[0].offchip_bytes, p.points[0].offchip_bytes};
  const auto extend = [](std::array<double, 2>& range, double v) {
    range[0] = std::min(range[0], v);
    range[1] = std::max(range[1], v);
  };
  for (const PlotPoint& q : p.points) extend(c, q.cycles), extend(s, q.sram_bytes), extend(o, q.offchip_bytes);
  Axes a;
  a.colour = make_axis(o[0], o[1], Quantity::Bytes, false, 4);
  for (const auto& m : {p.no_fusion, p.vela}) {
    if (m) extend(c, m->cycles), extend(s, m->sram_bytes), extend(o, m->offchip_bytes);
  }
  // The capacity on the SRAM axis when it does not squeeze the points into a corner.
  a.capacity_on_scale = p.capacity_bytes > 0.0 && p.capacity_bytes <= 3.0 * s[1] && p.capacity_bytes >= s[0] / 3.0;
  if (a.capacity_on_scale) extend(s, p.capacity_bytes);
  a.latency = make_axis(c[0], c[1], Quantity::Cycles, true, 6);
  a.sram = make_axis(s[0], s[1], Quantity::Bytes, true, 5);
  a.offchip = make_axis(o[0], o[1], Quantity::Bytes, true, 5);
  if (p.clock_hz > 0.0) {
    // The same positions in ms: a constant factor, so the same fractions (linear or log).
    const double k = 1e3 / p.clock_hz;
    a.ms.lo = a.latency.lo * k;
    a.ms.hi = a.latency.hi * k;
    a.ms.log = a.latency.log;
    if (a.ms.log) {
      log_ticks(a.ms, Quantity::Ms, 6);
    } else {
      linear_ticks(a.ms, Quantity::Ms, 6, true);
    }
  }
  return a;
}

std::string x_axis_svg(const Axis& a, const Frame& f, const std::string& title) {
  std::string out;
  for (std::size_t i = 0; i < a.ticks.size(); ++i) {
    const double x = f.x(a, a.ticks[i]);
    out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", x, f.top,
                       f.top + f.height);
    out += fmt::format("<text class=\"xtick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, f.top + f.height + 18,
                       a.labels[i]);
  }
  out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", f.left + f.width / 2,
                     f.top + f.height + 42, title);
  return out;
}

/// Horizontal gridlines at `a`'s ticks, labelled on the left (or right) of the frame, and the title.
std::string y_axis_svg(const Axis& a, const Frame& f, bool right, const std::string& title) {
  std::string out;
  const double lx = right ? f.left + f.width + 6 : f.left - 6;
  for (std::size_t i = 0; i < a.ticks.size(); ++i) {
    const double y = f.y(a, a.ticks[i]);
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n", f.left, y,
                       f.left + f.width);
    out += fmt::format("<text class=\"ytick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n", lx, y + 4,
                       right ? "start" : "end", a.labels[i]);
  }
  const double tx = right ? f.left + f.width + 74 : f.left - 74, ty = f.top + f.height / 2;
  out += fmt::format("<text class=\"axis\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate({2} {0} {1})\">{3}</text>\n",
                     tx, ty, right ? 90 : -90, title);
  return out;
}

/// An axis title: "peak SRAM (KiB)", "peak SRAM (log scale)".
std::string axis_title(const std::string& what, const Axis& a) {
  if (a.log) return what + (a.unit.empty() ? "" : ", " + a.unit) + " (log scale)";
  return fmt::format("{} ({})", what, a.unit);
}

enum class Mark { Chosen, NoFusion, Vela };

/// A marker at (x, y): the chosen point a black ring, no fusion a black cross, Vela a red diamond.
std::string marker_svg(Mark m, double x, double y, const std::string& cls, const std::string& title) {
  const std::string attrs = cls.empty() ? std::string() : fmt::format(" class=\"{}\"", cls);
  const std::string body = title.empty() ? "/>" : fmt::format("><title>{}</title></{}>", title, m == Mark::Chosen ? "circle" : "path");
  switch (m) {
    case Mark::Chosen:
      return fmt::format("<circle{} cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"9\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"{}\n", attrs, x, y, body);
    case Mark::NoFusion:
      return fmt::format("<path{} d=\"M {:.2f} {:.2f} l 12 12 m -12 0 l 12 -12\" fill=\"none\" stroke=\"black\" stroke-width=\"2.2\"{}\n",
                         attrs, x - 6, y - 6, body);
    case Mark::Vela:
      return fmt::format("<path{} d=\"M {:.2f} {:.2f} l 9 9 l -9 9 l -9 -9 z\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2.4\"{}\n",
                         attrs, x, y - 9, body);
  }
  return {};
}

/// "1.234 ms" at the clock, else "1234567 cycles".
std::string latency_text(const Plot& p, double cycles) {
  if (p.clock_hz > 0.0) return fmt::format("{:.4g} ms", cycles / p.clock_hz * 1e3);
  return fmt::format("{:.0f} cycles", cycles);
}

std::string point_text(const Plot& p, const PlotPoint& q) {
  return fmt::format("{}, {} SRAM, {} off-chip", latency_text(p, q.cycles), common::format_bytes(q.sram_bytes),
                     common::format_bytes(q.offchip_bytes));
}

/// A panel's points, small, outlined, coloured by off-chip bytes, in the front's order. Up to 500 points
/// each has a tooltip; above 2000 points, points falling on the same pixel are drawn once (the last,
/// the one that would show), so the file stays small however large the front.
std::string points_svg(const Plot& p, const Axes& a, const Frame& f, const Axis& xa, bool sizing) {
  const std::size_t n = p.points.size();
  const bool dense = n > 2000;
  const double radius = n <= 200 ? 4.5 : dense ? 2.0 : 3.0;
  const auto at = [&](std::size_t i) {
    const PlotPoint& q = p.points[i];
    return std::array<double, 2>{f.x(xa, sizing ? q.sram_bytes : q.offchip_bytes), f.y(a.latency, q.cycles)};
  };
  std::map<std::pair<long, long>, std::size_t> last;
  if (dense) {
    for (std::size_t i = 0; i < n; ++i) last[{std::lround(at(i)[0]), std::lround(at(i)[1])}] = i;
  }
  std::string out = fmt::format("<g stroke=\"#222\" stroke-width=\"{}\">\n", dense ? 0.25 : 0.5);
  for (std::size_t i = 0; i < n; ++i) {
    const std::array<double, 2> xy = at(i);
    const std::string fill = colour(a.colour.frac(p.points[i].offchip_bytes));
    if (dense) {
      if (last[{std::lround(xy[0]), std::lround(xy[1])}] != i) continue;
      out += fmt::format("<circle class=\"point\" cx=\"{:.0f}\" cy=\"{:.0f}\" r=\"{}\" fill=\"{}\"/>\n", xy[0], xy[1], radius, fill);
      continue;
    }
    out += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"", xy[0], xy[1], radius, fill);
    out += n <= 500 ? fmt::format("><title>#{}: {}</title></circle>\n", i, point_text(p, p.points[i])) : std::string("/>\n");
  }
  out += "</g>\n";
  return out;
}

/// Panel 1's staircase and the arch's SRAM capacity (a dashed line, or a note when off the scale).
std::string staircase_svg(const Plot& p, const Axes& a, const Frame& f) {
  const Axis& xa = a.sram;
  std::string out;
  // Its corners in pixels; a step less than half a pixel right of the previous corner drops there
  // instead (invisible, and a front of thousands of steps stays a short path).
  std::vector<std::array<double, 2>> corners;
  for (const StairStep& st : sizing_staircase(p.points)) {
    const double x = f.x(xa, st.sram_bytes), y = f.y(a.latency, st.cycles);
    if (!corners.empty() && x - corners.back()[0] < 0.5) {
      corners.back()[1] = y;
    } else {
      corners.push_back({x, y});
    }
  }
  std::string d = fmt::format("M {:.1f} {:.1f}", corners[0][0], corners[0][1]);
  for (std::size_t k = 1; k < corners.size(); ++k) d += fmt::format(" H {:.1f} V {:.1f}", corners[k][0], corners[k][1]);
  d += fmt::format(" H {:.1f}", f.left + f.width);
  out += fmt::format("<path class=\"staircase\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.2\"/>\n", d, kStairColour);
  const std::string cap = common::format_bytes_short(p.capacity_bytes);
  if (a.capacity_on_scale) {
    const double x = f.x(xa, p.capacity_bytes);
    out += fmt::format("<line class=\"capacity\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#555\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>\n",
                       x, f.top, f.top + f.height);
    out += fmt::format("<text class=\"capacity-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">"
                       "SRAM capacity {}</text>\n",
                       x - 4, f.top + 14, cap);
  } else if (p.capacity_bytes > 0.0) {
    out += fmt::format("<text class=\"capacity-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">"
                       "SRAM capacity {} ({} the scale)</text>\n",
                       f.left + f.width - 6, f.top + 14, cap, p.capacity_bytes > xa.hi ? "beyond" : "below");
  }
  return out;
}

/// Panel 1's dotted lines at the best latency plus 1%, 5% and 10% (the sizing answer's slacks, sizing.hpp):
/// where each meets the staircase is the least SRAM within that slack.
std::string slack_lines_svg(const Plot& p, const Axes& a, const Frame& f) {
  double best = p.points[0].cycles;
  for (const PlotPoint& q : p.points) best = std::min(best, q.cycles);
  std::string out;
  for (const double slack : kSizingSlacks) {
    const double c = best * (1.0 + slack);
    if (c > a.latency.hi) break;
    const double y = f.y(a.latency, c);
    out += fmt::format("<line class=\"slack\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#888\" "
                       "stroke-dasharray=\"2 2\"/>\n",
                       f.left, y, f.left + f.width);
    // Labelled in the gap between the panels, where no point or mark can be.
    out += fmt::format("<text class=\"slack-label\" x=\"{}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#666\">+{:g}%</text>\n",
                       f.left + f.width + 4, y + 3, 100.0 * slack);
  }
  return out;
}

/// One panel: gridlines and ticks, the points coloured by off-chip bytes, then (panel 1) the
/// staircase and the SRAM capacity, then the markers.
std::string panel_svg(const Plot& p, const Axes& a, bool sizing) {
  const Frame& f = sizing ? kSizing : kOffchip;
  const Axis& xa = sizing ? a.sram : a.offchip;
  std::string out = fmt::format("<g class=\"panel\" id=\"{}\">\n", sizing ? "sizing" : "offchip");
  out += fmt::format("<text class=\"panel-title\" x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", f.left,
                     f.top - 10, sizing ? "Sizing: latency against peak SRAM" : "Latency against off-chip traffic");
  out += x_axis_svg(xa, f, axis_title(sizing ? "peak SRAM" : "off-chip traffic per inference", xa));
  if (sizing) {
    out += y_axis_svg(a.latency, f, false, axis_title("latency", a.latency));
  } else if (p.clock_hz > 0.0) {
    out += y_axis_svg(a.ms, f, true, axis_title(fmt::format("latency at {:g} MHz", p.clock_hz / 1e6), a.ms));
  } else {
    out += y_axis_svg(a.latency, f, true, axis_title("latency", a.latency));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", f.left, f.top, f.width,
                     f.height);
  if (sizing) out += slack_lines_svg(p, a, f);
  out += points_svg(p, a, f, xa, sizing);
  if (sizing) out += staircase_svg(p, a, f);
  const auto mark = [&](Mark m, const PlotPoint& q, const char* cls, const std::string& what) {
    out += marker_svg(m, f.x(xa, sizing ? q.sram_bytes : q.offchip_bytes), f.y(a.latency, q.cycles), cls, what + ": " + point_text(p, q));
  };
  if (p.no_fusion) mark(Mark::NoFusion, *p.no_fusion, "no-fusion", "best without fusion");
  if (p.vela) mark(Mark::Vela, *p.vela, "vela", "Vela 2.1's schedule");
  if (p.chosen < p.points.size()) mark(Mark::Chosen, p.points[p.chosen], "chosen", fmt::format("chosen point #{}", p.chosen));
  out += "</g>\n";
  return out;
}

/// The colour bar of off-chip bytes: a gradient with its ticks, or one swatch when every point
/// moves the same bytes. Returns the height used.
double colour_bar_svg(std::string& out, const Plot& p, const Axes& a, double top) {
  const double lx = kLegendX;
  out += fmt::format("<text class=\"legend-title\" x=\"{}\" y=\"{}\" font-weight=\"bold\">off-chip traffic{}</text>\n", lx, top,
                     a.colour.log ? " (log)" : "");
  const double lo = std::min_element(p.points.begin(), p.points.end(), [](const PlotPoint& x, const PlotPoint& y) {
                      return x.offchip_bytes < y.offchip_bytes;
                    })->offchip_bytes;
  const double hi = std::max_element(p.points.begin(), p.points.end(), [](const PlotPoint& x, const PlotPoint& y) {
                      return x.offchip_bytes < y.offchip_bytes;
                    })->offchip_bytes;
  if (!(hi > lo)) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"16\" fill=\"{}\" stroke=\"black\" stroke-width=\"0.5\"/>\n", lx,
                       top + 10, colour(a.colour.frac(lo)));
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">all points: {}</text>\n", lx + 24, top + 23,
                       common::format_bytes(lo));
    return 40;
  }
  const double bar_top = top + 14, bar_h = 150;
  out += "<defs><linearGradient id=\"offchip-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int k = 0; k <= 8; ++k) out += fmt::format("<stop offset=\"{:.3f}\" stop-color=\"{}\"/>", k / 8.0, colour(k / 8.0));
  out += "</linearGradient></defs>\n";
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"{}\" fill=\"url(#offchip-scale)\" stroke=\"black\" "
                     "stroke-width=\"0.5\"/>\n",
                     lx, bar_top, bar_h);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a.colour.ticks.size(); ++i) {
    const double t = a.colour.frac(a.colour.ticks[i]);
    if (t < -1e-9 || t > 1 + 1e-9) continue;
    const double y = bar_top + bar_h - t * bar_h;
    const std::string label = a.colour.log ? a.colour.labels[i] : a.colour.labels[i] + " " + a.colour.unit;
    if (!seen.insert(label).second) continue;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"black\"/>\n", lx + 16, y, lx + 20);
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{:.1f}\">{}</text>\n", lx + 24, y + 4, label);
  }
  return bar_h + 30;
}

/// The legend: the colour bar, then one entry per kind of mark, each with a second line of values.
std::string legend_svg(const Plot& p, const Axes& a) {
  std::string out;
  double y = kSizing.top + 4;
  y += colour_bar_svg(out, p, a, y);
  const double lx = kLegendX;
  const auto entry = [&](const std::string& sample, const std::string& label, const std::string& detail) {
    out += sample;
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>\n", lx + 26, y + 4, label);
    if (!detail.empty())
      out += fmt::format("<text class=\"legend-detail\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#444\">{}</text>\n", lx + 26, y + 18,
                         detail);
    y += detail.empty() ? 24 : 36;
  };
  entry(fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#222\" stroke-width=\"0.5\"/>\n", lx + 9, y, colour(0.5)),
        plural(p.points.size(), "front point"), "");
  entry(fmt::format("<path d=\"M {} {} h 8 v 8 h 10\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.2\"/>\n", lx, y - 4, kStairColour),
        "staircase", "best latency within SRAM");
  double best = p.points[0].cycles;
  for (const PlotPoint& q : p.points) best = std::min(best, q.cycles);
  if (best * (1.0 + kSizingSlacks[0]) <= a.latency.hi) {
    entry(fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\" stroke-dasharray=\"2 2\"/>\n", lx, y, lx + 18, y),
          "best latency +1, 5, 10%", "");
  }
  const auto detail = [&p](const PlotPoint& q) {
    return fmt::format("{}, {}", latency_text(p, q.cycles), common::format_bytes(q.sram_bytes));
  };
  if (p.chosen < p.points.size()) entry(marker_svg(Mark::Chosen, lx + 9, y, "", ""), "chosen point", detail(p.points[p.chosen]));
  if (p.no_fusion) entry(marker_svg(Mark::NoFusion, lx + 9, y, "", ""), "best without fusion", detail(*p.no_fusion));
  if (p.vela) entry(marker_svg(Mark::Vela, lx + 9, y, "", ""), "Vela 2.1's schedule", detail(*p.vela));
  if (p.capacity_bytes > 0.0) {
    entry(fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#555\" stroke-width=\"1.5\" "
                      "stroke-dasharray=\"4 3\"/>\n",
                      lx + 9, y - 9, y + 9),
          "arch's SRAM capacity", common::format_bytes_short(p.capacity_bytes));
  }
  return out;
}

/// The line under the title: what the points are (the front, its guarantee, or only the chosen point).
std::string subtitle_svg(const Json& r, const Plot& p) {
  const std::size_t n = p.points.size();
  if (r.value("front_is_partial", false)) {
    // A stopped run's best mappings so far: real, but not the exact front.
    return fmt::format("<text class=\"partial\" x=\"{}\" y=\"48\" fill=\"#a03000\">stopped early: {} found before the stop, not the "
                       "exact front</text>\n",
                       kSizing.left, plural(n, "complete mapping"));
  }
  std::string what;
  const std::size_t front_size = r.contains("front_size") && r["front_size"].is_number_unsigned() ? r["front_size"].get<std::size_t>() : n;
  if (front_size > n) {
    what = fmt::format("only the chosen point of a front of {}: rerun with --keep-pareto to plot them all", plural(front_size, "point"));
  } else {
    const Json none;
    const Json& summary = r.contains("front_summary") ? r["front_summary"] : none;
    const Json& eps = summary.is_object() && summary.contains("epsilon") ? summary["epsilon"] : none;
    what = plural(n, "point");
    if (eps.is_number() && eps.get<double>() > 0.0) {
      what += fmt::format(", an ε-front (ε = {:g}: within {:g}% of every Pareto-optimal mapping in each objective)", eps.get<double>(),
                          100.0 * eps.get<double>());
    } else if (eps.is_number()) {
      what += ", the exact Pareto front";
    }
  }
  std::string objectives;
  if (r.contains("objectives") && r["objectives"].is_array()) {
    for (const Json& o : r["objectives"]) objectives += (objectives.empty() ? "" : ", ") + (o.is_string() ? o.get<std::string>() : o.dump());
  }
  if (!objectives.empty()) what = "objectives " + common::xml_escape(objectives) + "; " + what;
  return fmt::format("<text class=\"subtitle\" x=\"{}\" y=\"48\" fill=\"#333\">{}</text>\n", kSizing.left, what);
}

/// "zoomed in" when an axis spans under 1% of its values: the points are closer than they look.
std::string zoom_svg(const Plot& p) {
  if (p.points.size() < 2) return {};
  double c0 = p.points[0].cycles, c1 = c0, s0 = p.points[0].sram_bytes, s1 = s0, o0 = p.points[0].offchip_bytes, o1 = o0;
  for (const PlotPoint& q : p.points) {
    c0 = std::min(c0, q.cycles), c1 = std::max(c1, q.cycles), s0 = std::min(s0, q.sram_bytes), s1 = std::max(s1, q.sram_bytes);
    o0 = std::min(o0, q.offchip_bytes), o1 = std::max(o1, q.offchip_bytes);
  }
  std::string zoom;
  const auto check = [&zoom](const char* what, double lo, double hi) {
    const double spread = hi > 0.0 ? (hi - lo) / hi : 0.0;
    if (spread < 0.01) zoom += fmt::format("{}{} spread {:.2g}%", zoom.empty() ? "" : ", ", what, 100.0 * spread);
  };
  check("latency", c0, c1);
  check("SRAM", s0, s1);
  check("off-chip", o0, o1);
  if (zoom.empty()) return {};
  return fmt::format("<text class=\"zoom\" x=\"{}\" y=\"{}\" fill=\"#a03000\">zoomed in: {} (the points are closer than they "
                     "look)</text>\n",
                     kSizing.left, kHeight - 14, zoom);
}

}  // namespace front_svg_detail

std::string render_svg(const nlohmann::ordered_json& r) {
  using namespace front_svg_detail;
  const Plot p = read_plot(r);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      kWidth, kHeight);
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", kWidth, kHeight);
  const std::string name = r.contains("workload") ? r["workload"].value("name", std::string()) : std::string();
  const std::string arch = r.contains("arch") ? r["arch"].value("name", std::string()) : std::string();
  out += fmt::format("<text class=\"title\" x=\"{}\" y=\"26\" font-size=\"16\" font-weight=\"bold\">{}: {} on {}</text>\n", kSizing.left,
                     r.value("front_is_partial", false) ? "Mappings found" : "Pareto front", common::xml_escape(name),
                     common::xml_escape(arch));
  if (p.points.empty()) {
    // No axes to misread: say why there is nothing to plot.
    const std::string why = r.value("status", std::string()) == "interrupted" ? "the run was stopped before the join finished"
                                                                              : "no valid mapping of the whole network";
    out += fmt::format("<text class=\"message\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"16\">Nothing to plot: {}"
                       "</text>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">(see the keep rates in the report)</text>\n</svg>\n",
                       kWidth / 2, kHeight / 2, why, kWidth / 2, kHeight / 2 + 22);
    return out;
  }
  out += subtitle_svg(r, p);
  const Axes a = make_axes(p);
  out += panel_svg(p, a, true);
  out += panel_svg(p, a, false);
  out += legend_svg(p, a);
  out += zoom_svg(p);
  out += "</svg>\n";
  return out;
}

}  // namespace npumap::report
