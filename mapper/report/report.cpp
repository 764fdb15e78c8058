#include "mapper/report/report.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <vector>
#include <cmath>
#include <fstream>
#include <unistd.h>

#include <fmt/format.h>

#include "common/files.hpp"
#include "common/units.hpp"
#include "common/user_error.hpp"

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
    text += fmt::format("{}{} {:.0f}%", text.empty() ? "" : ", ", what, 100.0 * cycles / total);
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
    const Json& p = r["front"][0];
    out += "\nChosen mapping (best by " + r["objectives"][0].get<std::string>() + "):\n";
    out += point_table(r, p);
    const Json& s = r["front_summary"];
    out += fmt::format("\nPareto front: {} points; best cycles {}, best off-chip {}, SRAM {} .. {}\n",
                       r["front_size"].get<int>(), common::format_si(num(s, "best_cycles")), common::format_bytes(num(s, "best_offchip_bytes")),
                       common::format_bytes(num(s, "sram_min_bytes")), common::format_bytes(num(s, "sram_max_bytes")));
    if (r["front"].size() > 1) {
      out += fmt::format("  {:>4} {:>14} {:>10} {:>12} {:>12} {:>12}\n", "#", "cycles", "ms", "offchip", "sram", "energy pJ");
      int i = 0;
      for (const auto& q : r["front"]) {
        out += fmt::format("  {:>4} {:>14.0f} {:>10.4g} {:>12} {:>12} {:>12}\n", i++, num(q, "cycles"), num(q, "latency_ms"),
                           common::format_bytes(num(q, "offchip_bytes")), common::format_bytes(num(q, "sram_bytes")), common::format_si(num(q, "energy_pj")));
      }
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
                       i == 0 ? 1 : 0, num(p, "latency_ms"), num(p, "inferences_per_s"), num(p, "macs_per_cycle"),
                       num(p, "utilisation"));
    ++i;
  }
  return out;
}

std::string render_svg(const Json& r) {
  const double W = 740, H = 480, L = 110, R = 150, T = 40, B = 60;
  std::vector<std::array<double, 3>> pts;
  if (r.contains("front")) {
    for (const auto& p : r["front"]) pts.push_back({num(p, "cycles"), num(p, "offchip_bytes"), num(p, "sram_bytes")});
  }
  std::optional<std::array<double, 3>> unfused;
  if (r.contains("no_fusion")) {
    const Json& u = r["no_fusion"];
    unfused = std::array<double, 3>{num(u, "cycles"), num(u, "offchip_bytes"), num(u, "sram_bytes")};
  }
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1, s0 = 0, s1 = 1;
  bool first = true;
  const auto extend = [&](const std::array<double, 3>& p) {
    if (first) {
      x0 = x1 = p[0];
      y0 = y1 = p[1];
      s0 = s1 = p[2];
      first = false;
    }
    x0 = std::min(x0, p[0]), x1 = std::max(x1, p[0]), y0 = std::min(y0, p[1]), y1 = std::max(y1, p[1]);
    s0 = std::min(s0, p[2]), s1 = std::max(s1, p[2]);
  };
  for (const auto& p : pts) extend(p);
  if (unfused) extend(*unfused);
  const auto pad = [](double& lo, double& hi) {
    const double span = hi - lo > 0 ? hi - lo : std::max(1.0, std::fabs(hi) * 0.1);
    lo -= span * 0.05;
    hi += span * 0.05;
  };
  pad(x0, x1);
  pad(y0, y1);
  const auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  const auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  const auto colour = [&](double s) {
    const double t = s1 > s0 ? (s - s0) / (s1 - s0) : 0.0;
    return fmt::format("rgb({},{},{})", static_cast<int>(40 + 200 * t), static_cast<int>(90 + 60 * (1 - t)),
                       static_cast<int>(220 - 180 * t));
  };
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      W, H, W, H);
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", W, H);
  out += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\">Pareto front: {} on {}</text>\n", L,
                     r["workload"]["name"].get<std::string>(), r["arch"]["name"].get<std::string>());
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", L, H - B, W - R);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", L, H - B, T);
  for (int i = 0; i <= 4; ++i) {
    const double xv = x0 + (x1 - x0) * i / 4.0, yv = y0 + (y1 - y0) * i / 4.0;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.4g}</text>\n", px(xv), H - B + 18, xv);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n", L - 6, py(yv) + 4, yv);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">total cycles (NPU clock cycles)</text>\n",
                     (L + W - R) / 2, H - 18);
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">off-chip "
                     "traffic (bytes)</text>\n",
                     (T + H - B) / 2);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    out += fmt::format("<circle class=\"point\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"5\" fill=\"{}\" stroke=\"black\" "
                       "stroke-width=\"{}\"><title>#{}: {:.0f} cycles, {:.0f} B off-chip, {:.0f} B SRAM</title></circle>\n",
                       px(pts[i][0]), py(pts[i][1]), colour(pts[i][2]), i == 0 ? 2.5 : 0.5, i, pts[i][0], pts[i][1],
                       pts[i][2]);
  }
  if (!pts.empty()) {
    out += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\">chosen</text>\n", px(pts[0][0]) + 8, py(pts[0][1]) - 8);
  }
  if (unfused) {
    const double ux = px((*unfused)[0]), uy = py((*unfused)[1]);
    out += fmt::format("<path class=\"no-fusion\" d=\"M {:.2f} {:.2f} l 6 6 m -12 0 l 6 -6 l 6 -6 m -12 0 l 6 6\" "
                       "stroke=\"black\" stroke-width=\"2\" fill=\"none\"/>\n",
                       ux, uy, ux, uy);
    out += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\">best without fusion</text>\n", ux + 8, uy + 14);
  }
  // Colour legend for SRAM.
  const double lx = W - R + 30;
  out += fmt::format("<text x=\"{}\" y=\"{}\">peak SRAM (bytes)</text>\n", lx - 10, T + 4);
  for (int i = 0; i <= 4; ++i) {
    const double s = s0 + (s1 - s0) * i / 4.0;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n", lx, T + 14 + i * 20,
                       colour(s));
    out += fmt::format("<text x=\"{}\" y=\"{}\">{:.4g}</text>\n", lx + 20, T + 25 + i * 20, s);
  }
  out += "</svg>\n";
  return out;
}

void check_output_folder(const std::filesystem::path& folder) {
  if (std::filesystem::exists(folder / "result.json")) {
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

void write_outputs(const std::filesystem::path& folder, const Json& result) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw common::UserError({folder.string(), 0, 0}, "--out", "cannot create the output folder: " + ec.message(), "check the path");
  common::write_file_atomic(folder / "front.csv", render_csv(result));
  common::write_file_atomic(folder / "front.svg", render_svg(result));
  common::write_file_atomic(folder / "layers.csv", render_layers_csv(result, 0));
  common::write_file_atomic(folder / "result.json", result.dump(1) + "\n");
}

}  // namespace npumap::report
