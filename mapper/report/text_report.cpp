// The text report (`mapper` on stdout, `mapper show`), rendered from the result document alone.
//
// Every line fits kWidth (100) columns: long names (TFLite layer names, arch file paths) are
// shortened with "..." (the full text is in result.json, front.csv and layers.csv), and lists wrap.
// One function per block, in the order they print:
//
//   header_block        tool, workload, arch as resolved, search options
//   cpu_block           operators that run on the CPU (not costed in NPU cycles)
//   per_layer_time      the chosen point: per layer ms, % of the time, live SRAM, off-chip, bound
//   point_totals        its time, what bounds it, totals, energy and EDP
//   per_layer_mapping   how each layer runs: block config, traversal, placements, fusion
//   top_layers          the five layers that take the most time
//   front_block         the Pareto front (a summary of a large one)
//   no_fusion_block     the best mapping without fusion, and what fusion changes
//   outcome_block       no front: why (stopped, or no valid mapping)
//   keep_rates_block    one line by default; per layer and per filter with -v (or when nothing maps)

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/units.hpp"
#include "mapper/report/report.hpp"
#include "mapper/report/report_util.hpp"
#include "mapper/report/result_document.hpp"

namespace npumap::report {

using detail::display_width;
using detail::ellipsize;
using detail::Json;
using detail::num;
using detail::pad;
using detail::pad_left;
using detail::plural;
using detail::shape_str;

namespace {

constexpr std::size_t kWidth = 100;

// ------------------------------------------------------------------ text helpers

/// `items` joined by `sep` into lines of at most kWidth columns: the first starts with `first`,
/// the others with `indent`. An item too long for a line of its own is shortened.
std::string wrap(const std::string& first, const std::vector<std::string>& items, const std::string& sep,
                 const std::string& indent) {
  std::string out, line = first;
  bool line_empty = true;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string tail = i + 1 < items.size() ? sep : "";
    const std::string trimmed_tail = tail.substr(0, tail.find_last_not_of(' ') + 1);
    std::string item = items[i];
    if (!line_empty && display_width(line) + display_width(item) + display_width(trimmed_tail) > kWidth) {
      out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
      line = indent;
      line_empty = true;
    }
    const std::size_t room = kWidth - std::min(kWidth - 4, display_width(line)) - display_width(trimmed_tail);
    item = ellipsize(item, room);
    line += item + tail;
    line_empty = false;
  }
  return out + line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
}

/// The words of `text` (split at spaces).
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text) {
    if (c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

/// Running text wrapped at word boundaries into lines of at most kWidth columns.
std::string wrap_text(const std::string& first, const std::string& text, const std::string& indent) {
  return wrap(first, words(text), " ", indent);
}

/// A value with an SI prefix and a unit: 2.7e-5, "J·s" -> "27.0 µJ·s" (3 significant digits).
std::string si_unit(double v, const std::string& unit) {
  static const std::array<std::pair<double, const char*>, 9> prefixes = {{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1.0, ""},
                                                                          {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"}, {1e-12, "p"}}};
  if (v == 0.0) return "0 " + unit;
  for (const auto& [scale, prefix] : prefixes) {
    if (std::abs(v) >= scale * 0.9995) {
      const double x = v / scale;
      return fmt::format("{:.{}f} {}{}", x, x >= 99.95 ? 0 : x >= 9.995 ? 1 : 2, prefix, unit);
    }
  }
  return fmt::format("{:.2g} {}", v, unit);
}

/// A layer's latency in ms with four decimals (0.1 us: a few cycles), so a column lines up.
std::string ms_text(double ms) { return fmt::format("{:.4f}", ms); }

/// A network's latency in ms with 4 significant digits ("25.45", "0.00816"), whole above 10 s.
std::string total_ms_text(double ms) { return ms >= 10000.0 ? fmt::format("{:.0f}", ms) : fmt::format("{:.4g}", ms); }

/// A share of a whole as "12.3%" ("<0.1%" for a small non-zero share).
std::string percent(double part, double whole) {
  if (whole <= 0.0) return "-";
  const double p = 100.0 * part / whole;
  return p > 0.0 && p < 0.05 ? "<0.1%" : fmt::format("{:.1f}%", p);
}

/// "+12.3%" change from `base` to `value`.
std::string change(double base, double value) {
  if (base <= 0.0) return "n/a";
  return fmt::format("{:+.1f}%", 100.0 * (value - base) / base);
}

/// A column of a table: header, cells, alignment, and whether it may be shortened to fit.
struct Column {
  std::string header;
  bool right = false;
  bool flexible = false;  ///< shortened ("...") when the table is wider than kWidth
  std::vector<std::string> cells;
};

/// The table, two spaces in, one space between columns, at most kWidth wide (the flexible column
/// gives way, down to 12 columns).
std::string table(std::vector<Column> cols) {
  std::vector<std::size_t> width(cols.size(), 0);
  std::size_t total = 2 + (cols.empty() ? 0 : cols.size() - 1);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    width[c] = display_width(cols[c].header);
    for (const std::string& cell : cols[c].cells) width[c] = std::max(width[c], display_width(cell));
    total += width[c];
  }
  for (std::size_t c = 0; c < cols.size() && total > kWidth; ++c) {
    if (!cols[c].flexible) continue;
    const std::size_t shrink = std::min(total - kWidth, width[c] > 12 ? width[c] - 12 : 0);
    width[c] -= shrink;
    total -= shrink;
    for (std::string& cell : cols[c].cells) cell = detail::shorten_name(cell, width[c]);
    cols[c].header = ellipsize(cols[c].header, width[c]);
  }
  const std::size_t rows = cols.empty() ? 0 : cols[0].cells.size();
  std::string out;
  for (std::size_t r = 0; r <= rows; ++r) {
    std::string line = " ";
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::string& text = r == 0 ? cols[c].header : cols[c].cells[r - 1];
      line += ' ';
      line += cols[c].right ? pad_left(text, width[c]) : pad(text, width[c]);
    }
    out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
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

/// The same in words: "compute", "SRAM", "off-chip flash".
std::string bound_words(const std::string& component) {
  if (component == "Npu") return "compute";
  if (component == "SramAccess") return "SRAM";
  if (component == "DramAccess") return "DRAM";
  if (component == "OnChipFlashAccess") return "on-chip flash";
  if (component == "OffChipFlashAccess") return "off-chip flash";
  return "-";
}

double clock_hz(const Json& r) { return r.contains("arch") ? num(r["arch"], "core_clock_hz") : 0.0; }

/// A layer's latency in ms at the arch's clock.
double layer_ms(const Json& r, const Json& l) {
  const double clock = clock_hz(r);
  return clock > 0.0 ? num(l, "cycles") / clock * 1e3 : 0.0;
}

/// The point's layers with the common '/'-separated prefix of their names removed (TFLite names
/// such as "MobilenetV1/MobilenetV1/Conv2d_3_depthwise/Relu6"), and that prefix.
std::pair<std::vector<std::string>, std::string> short_names(const PointLayers& layers) {
  std::vector<std::string> names;
  for (const LayerRef l : layers) names.push_back((*l)["layer"].get<std::string>());
  std::string prefix;
  if (names.size() >= 2) {
    prefix = names[0].substr(0, names[0].rfind('/') == std::string::npos ? 0 : names[0].rfind('/') + 1);
    for (const std::string& n : names) {
      while (!prefix.empty() && (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0)) {
        const std::size_t cut = prefix.rfind('/', prefix.size() - 2);
        prefix = cut == std::string::npos ? std::string() : prefix.substr(0, cut + 1);
      }
    }
  }
  if (!prefix.empty()) {
    for (std::string& n : names) n = n.substr(prefix.size());
  }
  return {names, prefix};
}

// ------------------------------------------------------------------ blocks

std::string header_block(const Json& r) {
  const Json& a = r["arch"];
  std::string out = wrap(fmt::format("npu-mapper {}: ", r["tool"]["version"].get<std::string>()),
                         {fmt::format("{} ({}, {} MACs)", r["workload"]["name"].get<std::string>(),
                                      plural(r["workload"]["layers"].get<std::uint64_t>(), "layer"),
                                      common::format_si(num(r["workload"], "macs"))),
                          "on " + a["name"].get<std::string>()},
                         " ", "  ");
  // The arch as resolved (presets, arch file, overrides): what it is, its clock and peak, where
  // weights and feature maps live, and the memories used.
  std::vector<std::string> arch = {fmt::format("{}, system config {}, memory mode {}, SRAM {}", a["accelerator"].get<std::string>(),
                                               a["system_config"].get<std::string>(), a["memory_mode"].get<std::string>(),
                                               common::format_bytes(num(a, "sram_capacity_bytes")))};
  if (a.contains("core_clock_hz")) {
    arch.push_back(fmt::format("{:g} MHz, {} MACs/cycle peak, weights in {}, feature maps in {}", num(a, "core_clock_hz") / 1e6,
                               a.value("peak_macs_per_cycle", 0), a.value("weights_in", std::string("?")),
                               a.value("feature_maps_in", std::string("?"))));
    if (a.contains("memories")) {
      for (const auto& [area, m] : a["memories"].items()) {
        arch.push_back(fmt::format("{} {:g} B/cycle, latency {}/{}", area, num(m, "bytes_per_cycle"), m.value("read_latency", 0),
                                   m.value("write_latency", 0)));
      }
    }
  }
  out += wrap("arch: ", arch, "; ", "  ");
  const Json& opts = r["provenance"]["options"];
  std::string objectives;
  for (const auto& o : r["objectives"]) {
    if (!objectives.empty()) objectives += ',';
    objectives += o.get<std::string>();
  }
  std::vector<std::string> search = {"objectives " + objectives, std::string("fusion ") + (opts["no_fusion"].get<bool>() ? "off" : "on"),
                                     std::string("keep-pareto ") + (opts["keep_pareto"].get<bool>() ? "on" : "off")};
  if (opts.value("per_layer", false)) search.push_back("per-layer stage only");
  if (r["partial"].get<bool>()) search.push_back("STOPPED EARLY (--time-limit or Ctrl-C): a partial result");
  out += wrap("search: ", search, "; ", "  ");
  return out;
}

/// Operators the NPU does not run: listed up front, since their time is not in any cycle count.
std::string cpu_block(const Json& r) {
  std::string lines;
  int n = 0;
  for (const auto& entry : r["per_layer"]) {
    const Json l = detail::unpacked(entry);  // packed in a document built in memory
    if (!l.contains("cpu")) continue;
    ++n;
    const std::string reason = l["cpu"].value("reason", std::string());
    const std::string what = detail::shorten_name(l["layer"].get<std::string>(), 60) + " (" + l["cpu"].value("operator", std::string()) + ")";
    lines += reason.empty() ? "  " + what + "\n" : wrap_text("  " + what + ": ", reason, "      ");
  }
  if (n == 0) return {};
  return fmt::format("CPU operators ({}, not costed in NPU cycles; their tensors in the arena):\n", n) + lines;
}

/// The chosen point, per layer: its time (ms, share of the whole), the SRAM in use while it runs,
/// its off-chip bytes and the component that bounds it.
std::string per_layer_time(const Json& r, const Json& p) {
  const PointLayers layers(r, p);
  const auto [names, prefix] = short_names(layers);
  const double total = num(p, "cycles");
  const bool have_live = p.contains("sram_in_use_bytes") && p["sram_in_use_bytes"].size() == layers.size();
  std::vector<Column> cols = {{"layer", false, true, {}},  {"op", false, false, {}},   {"ofm", false, false, {}},
                              {"ms", true, false, {}},     {"time", true, false, {}}, {"live SRAM", true, false, {}},
                              {"off-chip", true, false, {}}, {"bound", false, false, {}}};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerRef layer = layers[i];
    const Json& l = *layer;
    const bool cpu = l.contains("cpu");
    cols[0].cells.push_back(names[i]);
    cols[1].cells.push_back(l["op"].get<std::string>());
    cols[2].cells.push_back(shape_str(l["ofm_shape"]));
    cols[3].cells.push_back(cpu ? "-" : ms_text(layer_ms(r, l)));
    cols[4].cells.push_back(cpu ? "-" : percent(num(l, "cycles"), total));
    cols[5].cells.push_back(have_live ? common::format_bytes(p["sram_in_use_bytes"][i].get<double>()) : "-");
    cols[6].cells.push_back(common::format_bytes(num(l, "offchip_bytes")));
    cols[7].cells.push_back(cpu ? "cpu" : bound_name(l.value("bound_by", std::string())));
  }
  std::string out = table(std::move(cols));
  if (!prefix.empty()) out += "  (layer names without their common prefix " + ellipsize(prefix, 60) + ")\n";
  return out;
}

/// "where the time goes": each bounding component's share of the point's cycles.
std::string time_share(const Json& r, const Json& p) {
  std::map<std::string, double> by;
  double total = 0.0;
  for (const LayerRef lp : PointLayers(r, p)) {
    const Json& l = *lp;
    if (!l.contains("bound_by")) continue;
    by[l["bound_by"].get<std::string>()] += num(l, "cycles");
    total += num(l, "cycles");
  }
  if (total <= 0.0) return {};
  std::vector<std::pair<double, std::string>> parts;
  for (const auto& [component, cycles] : by) parts.push_back({cycles, component});
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  std::vector<std::string> items;
  for (const auto& [cycles, component] : parts) {
    const double share = 100.0 * cycles / total;
    items.push_back(bound_words(component) + " " + (share < 0.5 ? std::string("<1%") : fmt::format("{:.0f}%", share)));
  }
  return wrap("  where the time goes (cycles of layers bound by): ", items, ", ", "    ");
}

/// The point's time and utilisation, what bounds it, and its totals with energy and EDP in units.
std::string point_totals(const Json& r, const Json& p) {
  std::string out;
  const double clock = clock_hz(r);
  if (p.contains("latency_ms")) {
    out += wrap("  time: ",
                {fmt::format("{} ms at {:g} MHz ({} inferences/s);", total_ms_text(num(p, "latency_ms")), clock / 1e6,
                             common::format_si(num(p, "inferences_per_s"), false)),
                 fmt::format("{:.1f} MACs/cycle, {:.1f}% of the {} peak", num(p, "macs_per_cycle"), 100.0 * num(p, "utilisation"),
                             r["arch"].value("peak_macs_per_cycle", 0))},
                " ", "    ");
  }
  out += time_share(r, p);
  // EDP: energy x delay. In J·s when the clock is known (energy in pJ x cycles / clock).
  const double energy_j = num(p, "energy_pj") * 1e-12;
  const std::string edp = clock > 0.0 ? si_unit(energy_j * num(p, "cycles") / clock, "J·s")
                                      : fmt::format("{:.3g} pJ·cycles", num(p, "edp"));
  out += wrap("  total: ",
              {fmt::format("{} cycles,", common::format_si(num(p, "cycles"))),
               fmt::format("{} off-chip,", common::format_bytes(num(p, "offchip_bytes"))),
               fmt::format("peak SRAM {};", common::format_bytes(num(p, "sram_bytes"))),
               fmt::format("energy {},", si_unit(energy_j, "J")), "EDP " + edp},
              " ", "    ");
  return out;
}

/// How each layer of the point runs: block config, weight traversal, where weights, bias and the
/// output live, and whether it fuses with the next layer through a rolling buffer.
std::string per_layer_mapping(const Json& r, const Json& p) {
  const PointLayers layers(r, p);
  const auto names = short_names(layers).first;
  std::vector<Column> cols = {{"layer", false, true, {}}, {"block h,w,ifd,d", false, false, {}}, {"trav", false, false, {}},
                              {"weights", false, false, {}}, {"bias", false, false, {}}, {"ofm lives", false, false, {}},
                              {"fused", false, false, {}}};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerRef layer = layers[i];
    const Json& l = *layer;
    const auto& bc = l["block_config"];
    std::string ofm_place;
    for (const auto& [name, where] : l["tensors"].items()) ofm_place = where.get<std::string>();
    std::string trav = l["traversal"].get<std::string>();
    trav = trav == "DepthFirst" ? "DF" : trav == "PartKernelFirst" ? "PKF" : trav == "DepthWise" ? "DW" : "-";
    cols[0].cells.push_back(names[i]);
    cols[1].cells.push_back(bc.is_array() ? fmt::format("{},{},{},{}", bc[0].get<int>(), bc[1].get<int>(), bc[2].get<int>(), bc[3].get<int>())
                                          : std::string("on the CPU"));
    cols[2].cells.push_back(trav);
    cols[3].cells.push_back(l.value("weights", std::string("-")));
    cols[4].cells.push_back(l.value("bias", std::string("-")));
    cols[5].cells.push_back(ofm_place);
    cols[6].cells.push_back(l.value("fused_with_next", false) ? "-> next" : "");
  }
  return table(std::move(cols));
}

/// The layers that take the most time (up to five), with their share.
std::string top_layers(const Json& r, const Json& p) {
  const PointLayers layers(r, p);
  if (layers.size() < 2) return {};
  const auto names = short_names(layers).first;
  std::vector<std::size_t> order(layers.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<double> cycles(layers.size());
  for (std::size_t i = 0; i < cycles.size(); ++i) cycles[i] = num(*layers[i], "cycles");
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cycles[a] > cycles[b]; });
  order.resize(std::min<std::size_t>(5, order.size()));
  const double total = num(p, "cycles");
  double top = 0.0;
  std::vector<Column> cols = {{"", true, false, {}},  {"layer", false, true, {}}, {"op", false, false, {}},
                              {"ms", true, false, {}}, {"time", true, false, {}}, {"bound by", false, false, {}}};
  for (std::size_t k = 0; k < order.size(); ++k) {
    const LayerRef layer = layers[order[k]];
    const Json& l = *layer;
    top += num(l, "cycles");
    cols[0].cells.push_back(std::to_string(k + 1));
    cols[1].cells.push_back(names[order[k]]);
    cols[2].cells.push_back(l["op"].get<std::string>());
    cols[3].cells.push_back(ms_text(layer_ms(r, l)));
    cols[4].cells.push_back(percent(num(l, "cycles"), total));
    cols[5].cells.push_back(l.contains("cpu") ? "the CPU" : bound_words(l.value("bound_by", std::string())));
  }
  return fmt::format("\nTop {} layers by time ({} of the total):\n", order.size(), percent(top, total)) + table(std::move(cols));
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
    out += wrap_text("  ", fmt::format("({} of {} shown: the best of each objective and an even spread in the front's order; every "
                                       "point is in front.csv and result.json)", count, plural(n, "point")), "   ");
  }
  return out;
}

std::string front_block(const Json& r) {
  const Json& s = r["front_summary"];
  const bool found_before_stop = r.value("front_is_partial", false);
  std::string out = "\n";
  out += wrap(found_before_stop ? "Mappings found: " : "Pareto front: ",
              {plural(r["front_size"].get<std::uint64_t>(), "point") + ";",
               fmt::format("best cycles {},", common::format_si(num(s, "best_cycles"))),
               fmt::format("best off-chip {},", common::format_bytes(num(s, "best_offchip_bytes"))),
               num(s, "sram_min_bytes") == num(s, "sram_max_bytes")
                   ? fmt::format("SRAM {}", common::format_bytes(num(s, "sram_min_bytes")))
                   : fmt::format("SRAM {} .. {}", common::format_bytes(num(s, "sram_min_bytes")), common::format_bytes(num(s, "sram_max_bytes")))},
              " ", "  ");
  if (s.contains("guarantee")) out += wrap_text("  ", s["guarantee"].get<std::string>() + ".", "  ");
  if (s.contains("sizing")) {
    const Json& z = s["sizing"];
    const auto figures = [](const Json& e) {
      return fmt::format("{} ({} cycles, {} off-chip)", common::format_bytes(num(e, "sram_bytes")), common::format_si(num(e, "cycles")),
                         common::format_bytes(num(e, "offchip_bytes")));
    };
    bool first = true;
    for (const Json& e : z["least_sram_within_latency"]) {
      out += fmt::format("{}least peak SRAM within {:g}% of the best latency: {}\n", first ? "Sizing: " : "  ",
                         100.0 * num(e, "latency_slack"), figures(e));
      first = false;
    }
    const Json& c = z["best_latency_at_sram_capacity"];
    out += fmt::format("  best latency at the SRAM capacity ({}): {}\n", common::format_bytes(num(c, "sram_capacity_bytes")), figures(c));
    // From a front without SRAM as an objective these are the front's points only, not the least
    // SRAM any mapping needs: say how to get the sizing front.
    bool sram_objective = false;
    if (r.contains("objectives") && r["objectives"].is_array()) {
      for (const Json& o : r["objectives"]) sram_objective = sram_objective || o == "sram";
    }
    if (!sram_objective) {
      out += "  (SRAM is not an objective of this front: --objectives cycles,offchip_bytes,sram --epsilon 0.01\n"
             "  gives the sizing front)\n";
    }
  }
  if (r["front"].size() > 1) out += front_table(r["front"]);
  return out;
}

/// The best mapping without fusion, and what fusion changes in cycles, off-chip bytes and SRAM.
std::string no_fusion_block(const Json& r, const Json& p) {
  if (!r.contains("no_fusion")) return {};
  const Json& u = r["no_fusion"];
  std::string out = wrap("Without fusion (best layer-by-layer mapping): ",
                         {fmt::format("{} cycles,", common::format_si(num(u, "cycles"))),
                          fmt::format("{} off-chip,", common::format_bytes(num(u, "offchip_bytes"))),
                          fmt::format("peak SRAM {}", common::format_bytes(num(u, "sram_bytes")))},
                         " ", "  ");
  out += fmt::format("  fusion changes cycles by {}, off-chip bytes by {}, peak SRAM by {}\n", change(num(u, "cycles"), num(p, "cycles")),
                     change(num(u, "offchip_bytes"), num(p, "offchip_bytes")), change(num(u, "sram_bytes"), num(p, "sram_bytes")));
  return out;
}

/// Vela's schedule and what the front gains over it (result.json's vela_baseline). It is called an
/// estimate: it is our model of Vela's scheduler (docs/design/vela-schedule.md says how close it comes).
std::string vela_block(const Json& r) {
  if (!r.contains("vela_baseline")) return {};
  const Json& v = r["vela_baseline"];
  const double clock = clock_hz(r), cycles = num(v, "cycles");
  const auto gain = [&](const char* key) {
    return v[key].is_null() ? std::string("n/a") : change(cycles, v[key].get<double>());
  };
  return wrap("Vela 2.1 estimate: ",
              {fmt::format("{} cycles,", common::format_si(cycles)),
               clock > 0.0 ? fmt::format("{} ms,", total_ms_text(cycles / clock * 1e3)) : std::string("n/a ms,"),
               fmt::format("{} SRAM,", common::format_bytes(num(v, "sram_bytes"))),
               fmt::format("{} off-chip;", common::format_bytes(num(v, "offchip_bytes"))),
               fmt::format("best here: {} latency;", gain("front_best_cycles")),
               // Null when no front point uses as little SRAM (the front's objectives may leave out SRAM).
               v["front_best_cycles_within_sram"].is_null()
                   ? std::string("at <= Vela's SRAM: no front point uses that little")
                   : fmt::format("at <= Vela's SRAM: {} latency", gain("front_best_cycles_within_sram"))},
              " ", "  ");
}

/// No front: why (the run was stopped, or nothing fits).
std::string outcome_block(const Json& r) {
  std::string out;
  const std::string status = r.value("status", std::string());
  if (status == "interrupted") {
    std::size_t with = 0;
    for (const auto& l : r["per_layer"]) with += detail::unpacked(l)["pmappings"].get<std::size_t>() > 0 ? 1 : 0;
    const std::string text =
        r.value("stopped_while_loading", false)
            ? std::string("Stopped (--time-limit or Ctrl-C) while loading the workload, before any layer was mapped: "
                          "there is no mapping to report. Allow more time.")
        : r.contains("join") ? "Stopped (--time-limit or Ctrl-C) during the join, before it had completed a mapping of the whole "
                             "network: there is no mapping to report. Allow more time, or see docs/troubleshooting.md for faster settings."
                           : fmt::format("Stopped (--time-limit or Ctrl-C) during the per-layer stage ({} of {} have mappings so far), "
                                         "before the join: there is no mapping of the whole network to report yet.",
                                         with, plural(r["per_layer"].size(), "layer"));
    out += "\n" + wrap_text("", text, "");
  } else if (r.contains("front")) {
    out += "\n" + wrap_text("", "No valid mapping of the whole network: the join found no combination of layer mappings that "
                                 "fits (see the keep rates below).", "");
  } else if (status == "no_valid_mapping") {
    std::vector<std::string> empty;
    for (const auto& entry : r["per_layer"]) {
    const Json l = detail::unpacked(entry);  // packed in a document built in memory
      if (l["pmappings"].get<int>() == 0) empty.push_back(detail::shorten_name(l["layer"].get<std::string>(), 40));
    }
    out += "\n" + wrap_text("No valid mapping: no pmapping of layer(s) ",
                            fmt::format("{} survives its filters (see the keep rates below).", fmt::join(empty, ", ")), "  ");
    for (const auto& entry : r["per_layer"]) {
    const Json l = detail::unpacked(entry);  // packed in a document built in memory
      if (!l.contains("min_sram_bytes")) continue;
      out += wrap_text("  " + detail::shorten_name(l["layer"].get<std::string>(), 40) + " ",
                       fmt::format("needs at least {} of SRAM (its smallest placement); the arch has {}",
                                   common::format_bytes(num(l, "min_sram_bytes")),
                                   common::format_bytes(num(r["arch"], "sram_capacity_bytes"))),
                       "    ");
    }
  }
  return out;
}

/// "4344 total, 4344 (1/1) valid, ..." of a keep-rates object.
std::string keep_line(const Json& k) {
  const double t = num(k, "total");
  const auto frac = [&](const char* key) {
    const double v = num(k, key);
    return v > 0 ? fmt::format("(1/{:.3g})", t / v) : std::string("(none)");
  };
  return fmt::format("{:.0f} total, {:.0f} {} valid, {:.0f} {} evaluated, {:.0f} {} Pareto-optimal", t, num(k, "valid"), frac("valid"),
                     num(k, "evaluated"), frac("evaluated"), num(k, "pareto_optimal"), frac("pareto_optimal"));
}

std::string cause_lines(const Json& k, const std::string& indent) {
  std::string out;
  for (const auto& [cause, rate] : k["keep_rate_by_cause"].items()) {
    const double v = rate.get<double>();
    if (v >= 1.0) continue;
    out += fmt::format("{}{}: kept {:.4f} {}\n", indent, cause, v, v > 0 ? fmt::format("(1/{:.3g})", 1.0 / v) : std::string("(none kept)"));
  }
  return out;
}

/// The join's counters summed over its steps: (merged rows, over SRAM capacity, dominated, look-ahead).
std::array<std::uint64_t, 4> join_counts(const Json& r) {
  std::array<std::uint64_t, 4> c{};
  if (!r.contains("join")) return c;
  for (const auto& entry : r["join"]["steps"]) {
    const Json s = detail::unpacked(entry);  // packed in a document built in memory
    c[0] += s["rows_paired"].get<std::uint64_t>();
    c[1] += s["dropped_sram_capacity_after_join"].get<std::uint64_t>();
    c[2] += s["dropped_dominated_after_join"].get<std::uint64_t>();
    c[3] += s["rows_dropped_incompatible"].get<std::uint64_t>();
  }
  return c;
}

/// Keep rates: why candidates were dropped. One line by default; per layer and per filter with -v
/// or when nothing maps (they are the explanation then); per layer without the filters with
/// --per-layer (the stage is the result then).
std::string keep_rates_block(const Json& r, const TextOptions& options) {
  const bool per_layer_only = r["provenance"]["options"].value("per_layer", false);
  const bool detailed = options.verbose || r.value("status", std::string()) == "no_valid_mapping";
  const Json& k = r["keep_rates"];
  const auto counts = join_counts(r);
  if (!detailed && !per_layer_only) {
    std::string line = fmt::format("{} candidates, {} valid, {} Pareto-optimal", common::format_si(num(k, "total")),
                                   common::format_si(num(k, "valid")), common::format_si(num(k, "pareto_optimal")));
    if (r.contains("join")) {
      line += fmt::format("; join kept {} of {} rows", common::format_si(static_cast<double>(counts[0] - counts[1] - counts[2] - counts[3])),
                          common::format_si(static_cast<double>(counts[0])));
    }
    std::vector<std::string> items = words(line);
    items.push_back("(-v: why)");
    return "\n" + wrap("Keep rates: ", items, " ", "  ");
  }
  std::string out = std::string("\nPer-layer stage (keep rates") + (detailed ? "" : "; -v: the keep rate of each filter") + "):\n";
  for (const auto& entry : r["per_layer"]) {
    const Json l = detail::unpacked(entry);  // packed in a document built in memory
    out += wrap("  ", {detail::shorten_name(l["layer"].get<std::string>(), 48),
                       fmt::format("({}, {}):", l["op"].get<std::string>(), shape_str(l["ofm_shape"])),
                       fmt::format("{},", plural(l["groups"].get<std::uint64_t>(), "group")),
                       fmt::format("{},", plural(l["pmappings"].get<std::uint64_t>(), "pmapping")),
                       fmt::format("best {} cycles", l["best_cycles"].is_null() ? "-" : common::format_si(num(l, "best_cycles")))},
                " ", "      ");
    out += wrap_text("    ", keep_line(l["keep_rates"]), "      ");
    if (!detailed) continue;
    out += cause_lines(l["keep_rates"], "      ");
    if (l.contains("unsupported")) out += wrap_text("      unsupported: ", l["unsupported"].get<std::string>(), "        ");
    if (l.contains("cpu")) {
      const std::string reason = l["cpu"].value("reason", std::string());
      out += wrap_text("      ", "runs on the CPU (" + l["cpu"].value("operator", std::string()) + "), not costed" +
                                     (reason.empty() ? std::string() : ": " + reason),
                       "        ");
    }
  }
  out += wrap_text("  overall: ", keep_line(k), "    ");
  if (detailed) out += cause_lines(k, "    ");
  if (r.contains("join")) {
    out += wrap_text("Join: ", fmt::format("{} merged rows; dropped {} over SRAM capacity, {} dominated, {} by look-ahead", counts[0],
                                           counts[1], counts[2], counts[3]),
                     "  ");
  }
  return out;
}

/// The tables and totals of one point.
std::string point_blocks(const Json& r, const Json& p) {
  return per_layer_time(r, p) + point_totals(r, p) + "\nHow each layer runs:\n" + per_layer_mapping(r, p) + top_layers(r, p);
}

}  // namespace

std::string render_written(const std::filesystem::path& folder, const std::vector<std::string>& files) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < files.size(); ++i) items.push_back(files[i]);
  return wrap("wrote " + folder.string() + ": ", items, ", ", "  ");
}

std::string render_text(const Json& r, const TextOptions& options) {
  std::string out = header_block(r);
  out += cpu_block(r);
  const bool has_front = r.contains("front") && !r["front"].empty();
  if (has_front) {
    const Json& p = r["front"][chosen_point(r)];
    const std::string chosen_by = r.value("chosen_by", "best by " + r["objectives"][0].get<std::string>());
    if (r.value("front_is_partial", false)) {
      out += "\n" + wrap_text("", "The run was stopped before the join had its exact front: what follows are the best complete "
                                  "mappings its first passes found (real mappings, not necessarily Pareto-optimal).",
                              "");
      out += "\nChosen mapping (" + chosen_by + " of those found before the stop): time and SRAM per layer\n";
    } else {
      out += "\nChosen mapping (" + chosen_by + "): time and SRAM per layer\n";
    }
    out += point_blocks(r, p);
    out += front_block(r);
    out += no_fusion_block(r, p);
    out += vela_block(r);
  } else {
    out += outcome_block(r);
  }
  out += keep_rates_block(r, options);
  return out;
}

std::string render_point_text(const Json& r, std::size_t point) {
  if (!r.contains("front") || point >= r["front"].size()) return {};
  return fmt::format("Front point {} of {}: time and SRAM per layer\n", point, r.value("front_size", 0)) + point_blocks(r, r["front"][point]);
}

}  // namespace npumap::report
