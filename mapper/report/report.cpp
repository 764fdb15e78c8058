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
#include "common/text_escape.hpp"
#include "common/units.hpp"
#include "common/user_error.hpp"
#include "mapper/report/report_util.hpp"
#include "mapper/report/result_document.hpp"
#include "mapper/report/vela_csv.hpp"

namespace npumap::report {

using detail::Json;
using detail::num;
using detail::plural;
using detail::shape_str;

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

std::string render_csv(const Json& r) {
  // An approximate front's promise first, as a comment line (readers: skip lines starting with '#');
  // an exact front's file is plain CSV.
  std::string out;
  const auto approximate = [&r] {
    if (!r.contains("front_summary") || !r["front_summary"].contains("guarantee")) return false;
    const Json& e = r["front_summary"].contains("epsilon") ? r["front_summary"]["epsilon"] : Json();
    return e.is_number() && e.get<double>() > 0.0;
  };
  if (approximate()) {
    out += "# " + r["front_summary"]["guarantee"].get<std::string>() + "\n";
  }
  out +=
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
  out += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">{}: {} on {}</text>\n", L,
                     r.value("front_is_partial", false) ? "Mappings found" : "Pareto front",
                     common::xml_escape(r["workload"]["name"].get<std::string>()),
                     common::xml_escape(r["arch"]["name"].get<std::string>()));
  if (r.value("front_is_partial", false) && !pts.empty()) {
    // A stopped run's best mappings so far: real, but not the exact front.
    out += fmt::format("<text class=\"partial\" x=\"{}\" y=\"40\" fill=\"#a03000\">stopped early: {} found before the "
                       "stop, not the exact front</text>\n",
                       L, plural(pts.size(), "complete mapping"));
  }
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
  // (A single point has no spread to misread.)
  if (x_spread < 0.01 && pts.size() > 1) zoom += fmt::format("latency spread {:.2g}%", 100.0 * x_spread);
  if (y_spread < 0.01 && pts.size() > 1) zoom += fmt::format("{}off-chip spread {:.2g}%", zoom.empty() ? "" : ", ", 100.0 * y_spread);
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

void check_output_folder(const std::filesystem::path& folder, bool numbered) {
  // A name too long, a symlink loop, a read-only folder: found before the mapping runs, not after.
  common::check_output_folder_path(folder, "--out");
  if (numbered) return;  // a default folder taken meanwhile just gets the next number
  std::error_code ec;
  if (std::filesystem::exists(folder / "result.json", ec)) {
    throw common::UserError({folder.string(), 0, 0}, "--out", "the folder already holds a result",
                    "runs never overwrite each other: choose another --out or leave it out for a new timestamped folder");
  }
}

namespace {

/// layers.csv of these layer mappings, with `live` (if not null) the SRAM in use per layer.
std::string block_config_text(const Json& l) {
  std::string block;
  if (l.contains("block_config") && l["block_config"].is_array()) {
    for (const auto& v : l["block_config"]) block += (block.empty() ? "" : "x") + std::to_string(v.get<int>());
  }
  return block;
}

std::string layers_csv(const std::vector<const Json*>& layers, const Json* live) {
  std::string out =
      "layer,op,ofm_shape,cycles,bound_by,npu_cycles,sram_cycles,dram_cycles,onchip_flash_cycles,offchip_flash_cycles,"
      "macs,macs_per_cycle,utilisation,latency_ms,sram_bytes,dram_bytes,onchip_flash_bytes,offchip_flash_bytes,"
      "reserved_sram_bytes,live_sram_bytes,block_config,traversal,weights,bias,tensors,fused_with_previous,fused_with_next,"
      "cpu_operator\n";
  const auto field = [](const std::string& v) { return common::csv_field(v); };
  const bool have_live = live != nullptr && live->is_array() && live->size() == layers.size();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Json& l = *layers[i];
    const Json none = Json::object();
    const Json& cyc = l.contains("cycles_by_component") ? l["cycles_by_component"] : none;
    const Json& bytes = l.contains("bytes_by_area") ? l["bytes_by_area"] : none;
    const std::string block = block_config_text(l);
    std::string tensors;
    for (const auto& [name, where] : l["tensors"].items()) tensors += (tensors.empty() ? "" : " ") + name + "=" + where.get<std::string>();
    // Shortest exact decimals ({}), so 0.00416 stays 0.00416.
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       field(l["layer"].get<std::string>()), field(l["op"].get<std::string>()), field(shape_str(l["ofm_shape"])),
                       num(l, "cycles"), field(l.value("bound_by", std::string())), num(cyc, "Npu"), num(cyc, "SramAccess"),
                       num(cyc, "DramAccess"), num(cyc, "OnChipFlashAccess"), num(cyc, "OffChipFlashAccess"),
                       l.value("macs", std::int64_t{0}), num(l, "macs_per_cycle"), num(l, "utilisation"), num(l, "latency_ms"),
                       num(bytes, "Sram"), num(bytes, "Dram"), num(bytes, "OnChipFlash"), num(bytes, "OffChipFlash"),
                       num(l, "sram_bytes"), have_live ? fmt::format("{}", (*live)[i].get<double>()) : std::string(),
                       field(block), field(l.value("traversal", std::string())), field(l.value("weights", std::string())),
                       field(l.value("bias", std::string())), field(tensors), l.value("fused_with_previous", false) ? 1 : 0,
                       l.value("fused_with_next", false) ? 1 : 0,
                       l.contains("cpu") ? field(l["cpu"].value("operator", std::string())) : std::string());
  }
  return out;
}

/// A layer's fusion as one word: none, previous, next or both.
std::string fusion_text(const Json& l) {
  const bool prev = l.value("fused_with_previous", false), next = l.value("fused_with_next", false);
  return prev && next ? "both" : prev ? "previous" : next ? "next" : "none";
}

/// Off-chip bytes of one layer mapping: DRAM and off-chip flash.
double layer_offchip(const Json& l) {
  if (!l.contains("bytes_by_area")) return 0.0;
  return num(l["bytes_by_area"], "Dram") + num(l["bytes_by_area"], "OffChipFlash");
}

}  // namespace

std::string render_vela_comparison_csv(const Json& r) {
  std::string out =
      "layer,op,cycles_vela,cycles_chosen,cycles_change_pct,reserved_sram_bytes_vela,reserved_sram_bytes_chosen,"
      "offchip_bytes_vela,offchip_bytes_chosen,block_config_vela,block_config_chosen,traversal_vela,traversal_chosen,"
      "weights_vela,weights_chosen,fusion_vela,fusion_chosen,changed\n";
  if (!r.contains("vela_baseline") || !r.contains("front") || r["front"].empty()) return out;
  std::map<std::string, const Json*> vela;
  for (const Json& l : r["vela_baseline"]["layers"]) vela.emplace(l["layer"].get<std::string>(), &l);
  for (const Json* chosen : point_layers(r, r["front"][chosen_point(r)])) {
    const Json& c = *chosen;
    const auto found = vela.find(c["layer"].get<std::string>());
    if (found == vela.end()) continue;
    const Json& v = *found->second;
    const double vc = num(v, "cycles"), cc = num(c, "cycles");
    // What differs between the two mappings of the layer, in the order a reader checks them.
    std::string changed;
    const auto differs = [&](const char* what, const std::string& a, const std::string& b) {
      if (a != b) changed += (changed.empty() ? "" : " ") + std::string(what);
    };
    differs("block_config", block_config_text(v), block_config_text(c));
    differs("traversal", v.value("traversal", std::string()), c.value("traversal", std::string()));
    differs("weights", v.value("weights", std::string()), c.value("weights", std::string()));
    differs("fusion", fusion_text(v), fusion_text(c));
    differs("tensors", v.contains("tensors") ? v["tensors"].dump() : "", c.contains("tensors") ? c["tensors"].dump() : "");
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", common::csv_field(c["layer"].get<std::string>()),
                       c["op"].get<std::string>(), vc, cc, vc > 0.0 ? fmt::format("{:.2f}", 100.0 * (cc - vc) / vc) : "",
                       num(v, "sram_bytes"), num(c, "sram_bytes"), layer_offchip(v), layer_offchip(c),
                       block_config_text(v), block_config_text(c), v.value("traversal", std::string()),
                       c.value("traversal", std::string()), v.value("weights", std::string()),
                       c.value("weights", std::string()), fusion_text(v), fusion_text(c), changed);
  }
  return out;
}

std::string render_layers_csv(const Json& r, std::size_t point) {
  if (!r.contains("front") || point >= r["front"].size()) return layers_csv({}, nullptr);
  const Json& p = r["front"][point];
  return layers_csv(point_layers(r, p), p.contains("sram_in_use_bytes") ? &p["sram_in_use_bytes"] : nullptr);
}

std::string render_vela_layers_csv(const Json& r) {
  if (!r.contains("vela_baseline")) return layers_csv({}, nullptr);
  const Json& v = r["vela_baseline"];
  std::vector<const Json*> layers;
  for (const Json& l : v["layers"]) layers.push_back(&l);
  return layers_csv(layers, v.contains("sram_in_use_bytes") ? &v["sram_in_use_bytes"] : nullptr);
}

std::string document_text(const Json& result) {
  return result.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::vector<std::string> write_outputs(const std::filesystem::path& folder, const Json& result, bool numbered,
                                       std::filesystem::path* written_to) {
  // One folder, renamed into place once; result.json first in case the folder already holds files.
  // A per-layer run (--per-layer) has no front: result.json holds the stage, and there is nothing
  // for front.csv, front.svg, layers.csv or Vela's CSV files to show.
  std::vector<std::pair<std::string, std::string>> files = {{"result.json", document_text(result)}};
  // Every result.json written is read back by `mapper show` and `mapper eval` (their limit).
  if (const std::size_t size = files.front().second.size(); size > common::kMaxResultDocumentBytes) {
    throw common::UserError({(folder / "result.json").string(), 0, 0}, "",
                            fmt::format("the result would be {} MiB, over the {} MiB a result document may be", size >> 20,
                                        common::kMaxResultDocumentBytes >> 20),
                            "map fewer layers at once, or leave out --keep-pareto");
  }
  if (!result["provenance"]["options"].value("per_layer", false)) {
    files.push_back({"front.csv", render_csv(result)});
    files.push_back({"front.svg", render_svg(result)});
    files.push_back({"layers.csv", render_layers_csv(result, chosen_point(result))});
    if (result.contains("vela_baseline")) {
      files.push_back({"layers_vela.csv", render_vela_layers_csv(result)});
      files.push_back({"layers_vs_vela.csv", render_vela_comparison_csv(result)});
    }
    for (auto& vela_file : render_vela_csvs(result)) files.push_back(std::move(vela_file));  // Vela's CSV files
  }
  const std::filesystem::path claimed = common::write_folder_atomic(folder, files, "--out", numbered);
  if (written_to != nullptr) *written_to = claimed;
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.first);
  return names;
}

}  // namespace npumap::report
