#include "mapper/report/report.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <optional>
#include <vector>
#include <cmath>
#include <fstream>
#include <unistd.h>

#include <fmt/format.h>

#include "common/files.hpp"
#include "common/units.hpp"
#include "common/user_error.hpp"
#include "mapper/report/result_document.hpp"
#include "mapper/report/vela_csv.hpp"

namespace npumap::report {
namespace {

using Json = nlohmann::ordered_json;

/// "[1,16,16,16]" from a shape written as a list (or as text, by older results).
std::string shape_str(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::vector<std::int64_t> dims;
  for (const auto& d : v) dims.push_back(d.get<std::int64_t>());
  return fmt::format("[{}]", fmt::join(dims, ","));
}

double num(const Json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

std::string pct_saved(double base, double value) {
  if (base <= 0.0) return "n/a";
  return fmt::format("{:+.1f}%", 100.0 * (value - base) / base);
}

std::string keep_line(const Json& k) {
  const double t = num(k, "total");
  const auto frac = [&](const char* key) {
    const double v = num(k, key);
    return v > 0 ? fmt::format("(1/{:.3g})", t / v) : std::string("(none)");
  };
  return fmt::format("{:.0f} total, {:.0f} {} valid, {:.0f} {} evaluated, {:.0f} {} Pareto-optimal", t,
                     num(k, "valid"), frac("valid"), num(k, "evaluated"), frac("evaluated"), num(k, "pareto_optimal"),
                     frac("pareto_optimal"));
}

std::string cause_lines(const Json& k, const std::string& indent) {
  std::string out;
  for (const auto& [cause, rate] : k["keep_rate_by_cause"].items()) {
    const double r = rate.get<double>();
    if (r >= 1.0) continue;
    out += fmt::format("{}{}: kept {:.4f} {}\n", indent, cause, r,
                       r > 0 ? fmt::format("(1/{:.3g})", 1.0 / r) : std::string("(none kept)"));
  }
  return out;
}

/// Short name of the component that bounds a layer: "npu" (compute), "sram", "dram", "flash".
std::string bound_name(const std::string& component) {
  if (component == "Npu") return "npu";
  if (component == "SramAccess") return "sram";
  if (component == "DramAccess") return "dram";
  if (component == "OnChipFlashAccess") return "oflash";
  if (component == "OffChipFlashAccess") return "flash";
  return "-";
}

/// "where the time goes": each bounding component's share of the point's cycles.
std::string time_share(const Json& r, const Json& p) {
  std::map<std::string, double> by;
  double total = 0.0;
  for (const Json* lp : point_layers(r, p)) {
    const Json& l = *lp;
    if (!l.contains("bound_by")) continue;
    by[l["bound_by"].get<std::string>()] += num(l, "cycles");
    total += num(l, "cycles");
  }
  if (total <= 0.0) return {};
  std::vector<std::pair<double, std::string>> parts;
  for (const auto& [component, cycles] : by) parts.push_back({cycles, component});
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  std::string text;
  for (const auto& [cycles, component] : parts) {
    const std::string what = component == "Npu" ? "compute" : component == "SramAccess" ? "SRAM" : component == "DramAccess" ? "DRAM"
                             : component == "OnChipFlashAccess" ? "on-chip flash" : "off-chip flash";
    const double share = 100.0 * cycles / total;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", what, share < 0.5 ? std::string("<1%") : fmt::format("{:.0f}%", share));
  }
  return "  where the time goes (cycles of layers bound by): " + text + "\n";
}

/// The per-layer table of one front point, its time and its totals.
std::string point_table(const Json& r, const Json& p) {
  std::string out;
  out += fmt::format("  {:<24} {:<15} {:<16} {:<16} {:<5} {:<13} {:<8} {:<18} {:>12} {:>10} {:>10} bound\n", "layer", "op",
                     "ofm", "block h,w,ifd,d", "trav", "weights", "bias", "ofm lives", "cycles", "offchip", "sram");
  for (const Json* lp : point_layers(r, p)) {
    const Json& l = *lp;
    const auto& bc = l["block_config"];
    const std::string block = bc.is_array() ? fmt::format("{},{},{},{}", bc[0].get<int>(), bc[1].get<int>(),
                                                           bc[2].get<int>(), bc[3].get<int>())
                                            : std::string("on the CPU");
    std::string ofm_place;
    for (const auto& [name, where] : l["tensors"].items()) ofm_place = where.get<std::string>();
    std::string trav = l["traversal"].get<std::string>();
    trav = trav == "DepthFirst" ? "DF" : trav == "PartKernelFirst" ? "PKF" : trav == "DepthWise" ? "DW" : "-";
    out += fmt::format("  {:<24} {:<15} {:<16} {:<16} {:<5} {:<13} {:<8} {:<18} {:>12} {:>10} {:>10} {}{}\n",
                       l["layer"].get<std::string>(), l["op"].get<std::string>(), shape_str(l["ofm_shape"]),
                       block, trav, l.value("weights", std::string("-")), l.value("bias", std::string("-")), ofm_place,
                       common::format_si(num(l, "cycles")), common::format_bytes(num(l, "offchip_bytes")), common::format_bytes(num(l, "sram_bytes")),
                       bound_name(l.value("bound_by", std::string())), l["fused_with_next"].get<bool>() ? "  fused ->" : "");
  }
  if (p.contains("latency_ms")) {
    out += fmt::format("  time: {:.4g} ms at {:g} MHz ({} inferences/s); {:.1f} MACs/cycle, {:.1f}% of the {} peak\n",
                       num(p, "latency_ms"), num(r["arch"], "core_clock_hz") / 1e6,
                       common::format_si(num(p, "inferences_per_s"), false),
                       num(p, "macs_per_cycle"), 100.0 * num(p, "utilisation"), r["arch"].value("peak_macs_per_cycle", 0));
  }
  out += time_share(r, p);
  out += fmt::format("  total: {} cycles, {} off-chip, peak SRAM {}, {} pJ, EDP {}\n", common::format_si(num(p, "cycles")),
                     common::format_bytes(num(p, "offchip_bytes")), common::format_bytes(num(p, "sram_bytes")), common::format_si(num(p, "energy_pj")),
                     common::format_si(num(p, "edp")));
  return out;
}


/// Fronts up to this size are printed whole; larger ones as a summary.
constexpr std::size_t kFullFrontRows = 24;
/// Points of the even spread in a summarised front (its first and last point included).
constexpr std::size_t kSpreadRows = 12;

/// The front as a table: every point of a small front; of a large one, the best point of each
/// objective and an even spread in the front's order (the whole front stays in front.csv and
/// result.json, and the # column is the point's index there).
std::string front_table(const Json& front) {
  const std::size_t n = front.size();
  std::vector<std::string> note(n);
  std::vector<char> shown(n, n <= kFullFrontRows ? 1 : 0);
  const std::pair<const char*, const char*> extremes[] = {
      {"cycles", "best cycles"}, {"offchip_bytes", "least off-chip"}, {"sram_bytes", "least SRAM"}, {"energy_pj", "least energy"}};
  for (const auto& [key, label] : extremes) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (num(front[i], key) < num(front[best], key)) best = i;  // strict: the first of equal minima
    }
    shown[best] = 1;
    note[best] += std::string(note[best].empty() ? "" : ", ") + label;
  }
  if (n > kFullFrontRows) {
    for (std::size_t k = 0; k < kSpreadRows; ++k) shown[k * (n - 1) / (kSpreadRows - 1)] = 1;
  }
  // The # column is as wide as the largest index (a 3-objective front on an ethos-u65 preset can
  // hold 10^5 points or more), at least 4.
  const std::size_t index_width = std::max<std::size_t>(4, fmt::formatted_size("{}", n == 0 ? 0 : n - 1));
  std::string out = fmt::format("  {:>{}} {:>14} {:>10} {:>12} {:>12} {:>12}\n", "#", index_width, "cycles", "ms", "offchip",
                                "sram", "energy pJ");
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!shown[i]) continue;
    ++count;
    const Json& q = front[i];
    std::string line = fmt::format("  {:>{}} {:>14.0f} {:>10.4g} {:>12} {:>12} {:>12}", i, index_width, num(q, "cycles"), num(q, "latency_ms"),
                                   common::format_bytes(num(q, "offchip_bytes")), common::format_bytes(num(q, "sram_bytes")),
                                   common::format_si(num(q, "energy_pj")));
    if (n > kFullFrontRows && !note[i].empty()) line += "  " + note[i];
    out += line + "\n";
  }
  if (count < n) {
    out += fmt::format("  ({} of {} points shown: the best of each objective and an even spread in the front's order; every "
                       "point is in front.csv and result.json)\n",
                       count, n);
  }
  return out;
}

}  // namespace

std::vector<const Json*> point_layers(const Json& r, const Json& p) {
  std::vector<const Json*> out;
  if (!p.contains("layers")) return out;
  for (const Json& ref : p["layers"]) {
    if (ref.is_number_unsigned() && r.contains("layer_mappings") && ref.get<std::size_t>() < r["layer_mappings"].size()) {
      out.push_back(&r["layer_mappings"][ref.get<std::size_t>()]);
    } else if (ref.is_object()) {
      out.push_back(&ref);
    }
  }
  return out;
}

std::string render_text(const Json& r) {
  std::string out;
  out += fmt::format("npu-mapper {}  workload {} ({} layers, {} MACs)  arch {} ({}, {}, {}; SRAM {})\n",
                     r["tool"]["version"].get<std::string>(), r["workload"]["name"].get<std::string>(),
                     r["workload"]["layers"].get<int>(), common::format_si(num(r["workload"], "macs")),
                     r["arch"]["name"].get<std::string>(), r["arch"]["accelerator"].get<std::string>(),
                     r["arch"]["system_config"].get<std::string>(), r["arch"]["memory_mode"].get<std::string>(),
                     common::format_bytes(num(r["arch"], "sram_capacity_bytes")));
  if (r["arch"].contains("core_clock_hz")) {
    // The arch as resolved (presets, arch file, overrides): clock, peak, SRAM and the memories used.
    const Json& a = r["arch"];
    std::string mems;
    if (a.contains("memories")) {
      for (const auto& [area, m] : a["memories"].items()) {
        mems += fmt::format("; {} {:g} B/cycle, latency {}/{}", area, num(m, "bytes_per_cycle"),
                            m.value("read_latency", 0), m.value("write_latency", 0));
      }
    }
    out += fmt::format("arch: {:g} MHz, {} MACs/cycle peak, SRAM {}, weights in {}, feature maps in {}{}\n",
                       num(a, "core_clock_hz") / 1e6, a.value("peak_macs_per_cycle", 0),
                       common::format_bytes(num(a, "sram_capacity_bytes")), a.value("weights_in", std::string("?")),
                       a.value("feature_maps_in", std::string("?")), mems);
  }
  const Json& opts = r["provenance"]["options"];
  std::string objectives;
  for (const auto& o : r["objectives"]) {
    if (!objectives.empty()) objectives.push_back(',');
    objectives.append(o.get<std::string>());
  }
  out += fmt::format("objectives {}  fusion {}  keep-pareto {}{}\n", objectives,
                     opts["no_fusion"].get<bool>() ? "off" : "on", opts["keep_pareto"].get<bool>() ? "on" : "off",
                     r["partial"].get<bool>() ? "  PARTIAL (stopped early)" : "");
  // Operators the NPU does not run: listed up front, since their time is not in any cycle count.
  std::string cpu_ops;
  int num_cpu = 0;
  for (const auto& l : r["per_layer"]) {
    if (!l.contains("cpu")) continue;
    ++num_cpu;
    const std::string reason = l["cpu"].value("reason", std::string());
    cpu_ops += fmt::format("  {} ({}){}\n", l["layer"].get<std::string>(), l["cpu"].value("operator", std::string()),
                           reason.empty() ? std::string() : ": " + reason);
  }
  if (num_cpu > 0) out += fmt::format("CPU operators ({}, not costed in NPU cycles; tensors in the arena):\n{}", num_cpu, cpu_ops);

  const bool has_front = r.contains("front") && !r["front"].empty();
  if (has_front) {
    const Json& p = r["front"][chosen_point(r)];
    out += "\nChosen mapping (" + r.value("chosen_by", "best by " + r["objectives"][0].get<std::string>()) + "):\n";
    out += point_table(r, p);
    const Json& s = r["front_summary"];
    out += fmt::format("\nPareto front: {} points; best cycles {}, best off-chip {}, SRAM {} .. {}\n",
                       r["front_size"].get<int>(), common::format_si(num(s, "best_cycles")), common::format_bytes(num(s, "best_offchip_bytes")),
                       common::format_bytes(num(s, "sram_min_bytes")), common::format_bytes(num(s, "sram_max_bytes")));
    if (r["front"].size() > 1) {
      out += front_table(r["front"]);
    }
    if (r.contains("no_fusion")) {
      const Json& u = r["no_fusion"];
      out += fmt::format("Without fusion (best layer-by-layer mapping): {} cycles, {} off-chip; fusion changes "
                         "cycles by {} and off-chip bytes by {}\n",
                         common::format_si(num(u, "cycles")), common::format_bytes(num(u, "offchip_bytes")),
                         pct_saved(num(u, "cycles"), num(p, "cycles")),
                         pct_saved(num(u, "offchip_bytes"), num(p, "offchip_bytes")));
    }
  } else if (r.contains("front")) {
    out += "\nNo valid mapping of the whole network: the join found no combination of layer mappings that fits "
           "(see the keep rates below).\n";
  } else if (r.value("status", std::string()) == "no_valid_mapping") {
    std::string empty;
    for (const auto& l : r["per_layer"]) {
      if (l["pmappings"].get<int>() == 0) empty += (empty.empty() ? "" : ", ") + l["layer"].get<std::string>();
    }
    out += "\nNo valid mapping: no pmapping of layer(s) " + empty + " survives its filters (see the keep rates below).\n";
    for (const auto& l : r["per_layer"]) {
      if (!l.contains("min_sram_bytes")) continue;
      out += fmt::format("  {} needs at least {} of SRAM (its smallest placement); the arch has {}\n",
                         l["layer"].get<std::string>(), common::format_bytes(num(l, "min_sram_bytes")),
                         common::format_bytes(num(r["arch"], "sram_capacity_bytes")));
    }
  }

  out += "\nPer-layer stage (keep rates):\n";
  for (const auto& l : r["per_layer"]) {
    out += fmt::format("  {} ({}, {}): {} groups, {} pmappings, best {} cycles\n", l["layer"].get<std::string>(),
                       l["op"].get<std::string>(), shape_str(l["ofm_shape"]), l["groups"].get<int>(),
                       l["pmappings"].get<int>(), l["best_cycles"].is_null() ? "-" : common::format_si(num(l, "best_cycles")));
    out += "    " + keep_line(l["keep_rates"]) + "\n";
    out += cause_lines(l["keep_rates"], "      ");
    if (l.contains("unsupported")) out += "      unsupported: " + l["unsupported"].get<std::string>() + "\n";
    if (l.contains("cpu")) {
      const std::string reason = l["cpu"].value("reason", std::string());
      out += "      runs on the CPU (" + l["cpu"].value("operator", std::string()) + "), not costed" +
             (reason.empty() ? std::string() : ": " + reason) + "\n";
    }
  }
  out += "  overall: " + keep_line(r["keep_rates"]) + "\n";
  out += cause_lines(r["keep_rates"], "    ");
  if (r.contains("join")) {
    std::uint64_t paired = 0, sram = 0, dominated = 0, incompatible = 0;
    for (const auto& s : r["join"]["steps"]) {
      paired += s["rows_paired"].get<std::uint64_t>();
      sram += s["dropped_sram_capacity_after_join"].get<std::uint64_t>();
      dominated += s["dropped_dominated_after_join"].get<std::uint64_t>();
      incompatible += s["rows_dropped_incompatible"].get<std::uint64_t>();
    }
    out += fmt::format("Join: {} merged rows; dropped {} over SRAM capacity, {} dominated, {} by look-ahead\n", paired,
                       sram, dominated, incompatible);
  }
  return out;
}

std::string render_csv(const Json& r) {
  std::string out =
      "point,cycles,offchip_bytes,sram_bytes,energy_pj,edp,fused_layers,chosen,latency_ms,inferences_per_s,"
      "macs_per_cycle,utilisation\n";
  if (!r.contains("front")) return out;
  int i = 0;
  for (const auto& p : r["front"]) {
    int fused = 0;
    for (const Json* l : point_layers(r, p)) fused += (*l)["fused_with_next"].get<bool>() ? 1 : 0;
    out += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{},{},{},{},{},{}\n", i, num(p, "cycles"),
                       num(p, "offchip_bytes"), num(p, "sram_bytes"), num(p, "energy_pj"), num(p, "edp"), fused,
                       static_cast<std::size_t>(i) == chosen_point(r) ? 1 : 0, num(p, "latency_ms"), num(p, "inferences_per_s"), num(p, "macs_per_cycle"),
                       num(p, "utilisation"));
    ++i;
  }
  return out;
}

namespace {

/// About `target` "nice" tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target, double& step) {
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  step = (r < 1.5 ? 1.0 : r < 3.5 ? 2.0 : r < 7.5 ? 5.0 : 10.0) * mag;
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

/// The byte unit for values up to `max`: ("MiB", 2^20), ("KiB", 2^10) or ("B", 1).
std::pair<const char*, double> byte_unit(double max) {
  if (max >= 1024.0 * 1024.0) return {"MiB", 1024.0 * 1024.0};
  if (max >= 1024.0) return {"KiB", 1024.0};
  return {"B", 1.0};
}

}  // namespace

std::string render_svg(const Json& r) {
  const double W = 760, H = 500, L = 100, R = 170, T = 48, B = 76;
  const double clock = r.contains("arch") ? num(r["arch"], "core_clock_hz") : 0.0;
  const bool in_ms = clock > 0.0;
  // Points: (x = latency in ms, or cycles without a clock; y = off-chip bytes; SRAM bytes).
  std::vector<std::array<double, 3>> pts;
  if (r.contains("front")) {
    for (const auto& p : r["front"]) {
      const double x = in_ms ? num(p, "cycles") / clock * 1e3 : num(p, "cycles");
      pts.push_back({x, num(p, "offchip_bytes"), num(p, "sram_bytes")});
    }
  }
  std::optional<std::array<double, 3>> unfused;
  if (r.contains("no_fusion") && !pts.empty()) {
    const Json& u = r["no_fusion"];
    unfused = std::array<double, 3>{in_ms ? num(u, "cycles") / clock * 1e3 : num(u, "cycles"), num(u, "offchip_bytes"),
                                    num(u, "sram_bytes")};
  }
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      W, H, W, H);
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", W, H);
  out += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">Pareto front: {} on {}</text>\n", L,
                     r["workload"]["name"].get<std::string>(), r["arch"]["name"].get<std::string>());
  if (pts.empty()) {
    // No axes to misread: say why there is nothing to plot.
    const std::string why = r.value("status", std::string()) == "interrupted" ? "the run was stopped before the join finished"
                                                                              : "no valid mapping of the whole network";
    out += fmt::format("<text class=\"message\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"16\">Nothing to plot: {}"
                       "</text>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">(see the keep rates in the report)</text>\n</svg>\n",
                       W / 2, H / 2, why, W / 2, H / 2 + 22);
    return out;
  }
  double x0 = pts[0][0], x1 = x0, y0 = pts[0][1], y1 = y0, s0 = pts[0][2], s1 = s0;
  const auto extend = [&](const std::array<double, 3>& p) {
    x0 = std::min(x0, p[0]), x1 = std::max(x1, p[0]), y0 = std::min(y0, p[1]), y1 = std::max(y1, p[1]);
    s0 = std::min(s0, p[2]), s1 = std::max(s1, p[2]);
  };
  for (const auto& p : pts) extend(p);
  if (unfused) {  // on the axes, but not in the colour scale (its marker is not coloured)
    x0 = std::min(x0, (*unfused)[0]), x1 = std::max(x1, (*unfused)[0]);
    y0 = std::min(y0, (*unfused)[1]), y1 = std::max(y1, (*unfused)[1]);
  }
  // Named, not a structured binding: clang 14 (the fuzz build) cannot capture bindings in lambdas.
  const auto y_unit_scale = byte_unit(y1);
  const auto& yunit = y_unit_scale.first;
  const double yscale = y_unit_scale.second;
  // Honest axes: the relative spread of each axis, stated when the plot zooms into a tiny one.
  const double x_spread = x1 > 0 ? (x1 - x0) / x1 : 0.0;
  const double y_spread = y1 > 0 ? (y1 - y0) / y1 : 0.0;
  const auto pad = [](double& lo, double& hi) {
    const double span = hi - lo > 0 ? hi - lo : std::max(std::fabs(hi) * 0.01, 1e-9);
    lo -= span * 0.08;
    hi += span * 0.08;
  };
  double xl = x0, xh = x1, yl = y0 / yscale, yh = y1 / yscale;
  pad(xl, xh);
  pad(yl, yh);
  double xstep = 1.0, ystep = 1.0;
  const std::vector<double> xt = nice_ticks(xl, xh, 5, xstep);
  const std::vector<double> yt = nice_ticks(yl, yh, 5, ystep);
  const auto px = [&](double x) { return L + (x - xl) / (xh - xl) * (W - L - R); };
  const auto py = [&](double ybytes) { return H - B - (ybytes / yscale - yl) / (yh - yl) * (H - T - B); };
  const auto colour = [&](double sv) {
    const double t = s1 > s0 ? (sv - s0) / (s1 - s0) : 0.0;
    return fmt::format("rgb({},{},{})", static_cast<int>(40 + 200 * t), static_cast<int>(90 + 60 * (1 - t)),
                       static_cast<int>(220 - 180 * t));
  };
  // Gridlines and tick labels.
  for (double v : xt) {
    const double x = L + (v - xl) / (xh - xl) * (W - L - R);
    out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", x, T, H - B);
    out += fmt::format("<text class=\"xtick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, H - B + 18,
                       tick_label(v, xstep));
  }
  for (double v : yt) {
    const double y = H - B - (v - yl) / (yh - yl) * (H - T - B);
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n", L, y, W - R);
    out += fmt::format("<text class=\"ytick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", L - 6, y + 4,
                       tick_label(v, ystep));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", L, T, W - L - R, H - T - B);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2, H - B + 40,
                     in_ms ? fmt::format("latency (ms at {:g} MHz)", clock / 1e6) : std::string("total cycles"));
  out += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">off-chip traffic ({1})</text>\n",
                     (T + H - B) / 2, yunit);
  std::string zoom;
  if (x_spread < 0.01) zoom += fmt::format("latency spread {:.2g}%", 100.0 * x_spread);
  if (y_spread < 0.01) zoom += fmt::format("{}off-chip spread {:.2g}%", zoom.empty() ? "" : ", ", 100.0 * y_spread);
  if (!zoom.empty()) {
    out += fmt::format("<text class=\"zoom\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#a03000\">zoomed in: {} "
                       "(the points are closer than they look)</text>\n",
                       (L + W - R) / 2, H - 14, zoom);
  }
  for (std::size_t i = 0; i < pts.size(); ++i) {
    out += fmt::format("<circle class=\"point\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"5\" fill=\"{}\" stroke=\"black\" "
                       "stroke-width=\"{}\"><title>#{}: {:.6g} {}, {} off-chip, {} SRAM</title></circle>\n",
                       px(pts[i][0]), py(pts[i][1]), colour(pts[i][2]), i == chosen_point(r) ? 2.5 : 0.5, i, pts[i][0], in_ms ? "ms" : "cycles",
                       common::format_bytes(pts[i][1]), common::format_bytes(pts[i][2]));
  }
  if (unfused) {
    const double ux = px((*unfused)[0]), uy = py((*unfused)[1]);
    out += fmt::format("<path class=\"no-fusion\" d=\"M {:.2f} {:.2f} l 6 6 m -12 0 l 6 -6 l 6 -6 m -12 0 l 6 6\" "
                       "stroke=\"black\" stroke-width=\"2\" fill=\"none\"/>\n",
                       ux, uy);
  }
  // Colour legend for SRAM: one swatch when every point needs the same, else five distinct levels.
  const double lx = W - R + 24;
  out += fmt::format("<text x=\"{}\" y=\"{}\">peak SRAM</text>\n", lx, T + 4);
  std::vector<double> levels;
  if (s1 - s0 < 1.0) {
    levels = {s0};
  } else {
    for (int i = 0; i <= 4; ++i) levels.push_back(s0 + (s1 - s0) * i / 4.0);
  }
  std::vector<std::string> labels;
  for (double v : levels) labels.push_back(common::format_bytes(v));
  for (int kib = 1; kib <= 3 && std::set<std::string>(labels.begin(), labels.end()).size() < labels.size(); ++kib) {
    labels.clear();
    for (double v : levels) labels.push_back(fmt::format("{:.{}f} KiB", v / 1024.0, kib + 1));
  }
  for (std::size_t i = 0; i < levels.size(); ++i) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"black\" stroke-width=\"0.5\"/>\n", lx,
                       T + 14 + static_cast<double>(i) * 20, colour(levels[i]));
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">{}{}</text>\n", lx + 20, T + 25 + static_cast<double>(i) * 20,
                       levels.size() == 1 ? "all points: " : "", labels[i]);
  }
  // Marker legend (labels here, not next to the points, so they never cover them).
  const double my = T + 24 + static_cast<double>(levels.size()) * 20 + 20;
  out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"white\" stroke=\"black\" stroke-width=\"2.5\"/>\n", lx + 7, my);
  out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">chosen point</text>\n", lx + 20, my + 4);
  if (unfused) {
    out += fmt::format("<path d=\"M {:.1f} {:.1f} l 6 6 m -12 0 l 6 -6 l 6 -6 m -12 0 l 6 6\" stroke=\"black\" "
                       "stroke-width=\"2\" fill=\"none\"/>\n",
                       lx + 7, my + 20);
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">best without fusion</text>\n", lx + 20, my + 24);
  }
  out += "</svg>\n";
  return out;
}

void check_output_folder(const std::filesystem::path& folder) {
  // A name too long, a symlink loop, a read-only folder: found before the mapping runs, not after.
  common::check_output_folder_path(folder, "--out");
  std::error_code ec;
  if (std::filesystem::exists(folder / "result.json", ec)) {
    throw common::UserError({folder.string(), 0, 0}, "--out", "the folder already holds a result",
                    "runs never overwrite each other: choose another --out or leave it out for a new timestamped folder");
  }
}

std::string render_layers_csv(const Json& r, std::size_t point) {
  std::string out =
      "layer,op,ofm_shape,cycles,bound_by,npu_cycles,sram_cycles,dram_cycles,onchip_flash_cycles,offchip_flash_cycles,"
      "macs,macs_per_cycle,utilisation,latency_ms,sram_bytes,dram_bytes,onchip_flash_bytes,offchip_flash_bytes,"
      "reserved_sram_bytes,block_config,traversal,weights,bias,tensors,fused_with_previous,fused_with_next,cpu_operator\n";
  if (!r.contains("front") || point >= r["front"].size()) return out;
  const auto field = [](const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const Json* lp : point_layers(r, r["front"][point])) {
    const Json& l = *lp;
    const Json none = Json::object();
    const Json& cyc = l.contains("cycles_by_component") ? l["cycles_by_component"] : none;
    const Json& bytes = l.contains("bytes_by_area") ? l["bytes_by_area"] : none;
    std::string block;
    if (l["block_config"].is_array()) {
      for (const auto& v : l["block_config"]) block += (block.empty() ? "" : "x") + std::to_string(v.get<int>());
    }
    std::string tensors;
    for (const auto& [name, where] : l["tensors"].items()) tensors += (tensors.empty() ? "" : " ") + name + "=" + where.get<std::string>();
    // Shortest exact decimals ({}), so 0.00416 stays 0.00416.
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       field(l["layer"].get<std::string>()), l["op"].get<std::string>(), field(shape_str(l["ofm_shape"])),
                       num(l, "cycles"), l.value("bound_by", std::string()), num(cyc, "Npu"), num(cyc, "SramAccess"),
                       num(cyc, "DramAccess"), num(cyc, "OnChipFlashAccess"), num(cyc, "OffChipFlashAccess"),
                       l.value("macs", std::int64_t{0}), num(l, "macs_per_cycle"), num(l, "utilisation"), num(l, "latency_ms"),
                       num(bytes, "Sram"), num(bytes, "Dram"), num(bytes, "OnChipFlash"), num(bytes, "OffChipFlash"),
                       num(l, "sram_bytes"), block, l.value("traversal", std::string()), l.value("weights", std::string()),
                       l.value("bias", std::string()), field(tensors), l.value("fused_with_previous", false) ? 1 : 0,
                       l.value("fused_with_next", false) ? 1 : 0,
                       l.contains("cpu") ? field(l["cpu"].value("operator", std::string())) : std::string());
  }
  return out;
}

std::string render_point_text(const Json& r, std::size_t point) {
  if (!r.contains("front") || point >= r["front"].size()) return {};
  return fmt::format("Front point {} of {}:\n", point, r.value("front_size", 0)) + point_table(r, r["front"][point]);
}

std::string document_text(const Json& result) {
  return result.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void write_outputs(const std::filesystem::path& folder, const Json& result) {
  // One folder, renamed into place once; result.json first in case the folder already holds files.
  std::vector<std::pair<std::string, std::string>> files = {{"result.json", document_text(result)},
                                                            {"front.csv", render_csv(result)},
                                                            {"front.svg", render_svg(result)},
                                                            {"layers.csv", render_layers_csv(result, chosen_point(result))}};
  for (auto& vela_file : render_vela_csvs(result)) files.push_back(std::move(vela_file));  // Vela's CSV files
  common::write_folder_atomic(folder, files, "--out");
}

}  // namespace npumap::report
