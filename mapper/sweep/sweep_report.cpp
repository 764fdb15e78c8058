// The final files of a sweep, rendered from the point records in point order (nothing here depends
// on timing or on which run computed a point, so a resumed sweep writes the same bytes).
//
// The cross-arch Pareto front of a workload is taken over every (arch point, front point) row with
// four objectives, all minimised: hardware cost as MACs per cycle and SRAM capacity bytes, against
// the mapping's cycles and off-chip bytes.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/files.hpp"
#include "common/text_escape.hpp"
#include "common/units.hpp"
#include "mapper/search/pareto.hpp"
#include "mapper/sweep/sweep.hpp"
#include "npumap_version.hpp"

namespace npumap::sweep {
namespace {

using Json = nlohmann::ordered_json;

using common::csv_field;
using common::xml_escape;

/// ",v1,v2,..": the record's value of each parameter key of the sweep (empty where it sets none).
std::string param_columns(const SweepSpec& spec, const Json& rec) {
  std::string s;
  for (const auto& k : spec.param_keys) {
    s += fmt::format(",{}", rec["params"].contains(k) ? csv_field(rec["params"][k].get<std::string>()) : std::string());
  }
  return s;
}

std::string number(double v) { return fmt::format("{}", v); }

/// One mapping of one workload on one arch point.
/// Milliseconds of `cycles` at `clock_hz`, to the nanosecond, so the shortest decimal that reads back
/// is short (0.499961, not 0.49996100000000004).
double latency_ms(double cycles, double clock_hz) { return std::round(cycles / clock_hz * 1e9) / 1e6; }

struct Row {
  std::size_t record = 0;       ///< index into the records
  std::size_t front_index = 0;  ///< position in that point's front of the workload
  double macs = 0, sram_capacity = 0, cycles = 0, offchip = 0, peak_sram = 0, energy = 0, clock = 0;
  bool pareto = false;
};

std::string params_text(const Json& params) {
  std::string s;
  for (const auto& [k, v] : params.items()) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v.get<std::string>());
  return s.empty() ? "base" : s;
}

/// A log axis when every value is positive, else linear; maps [lo, hi] onto [a, b].
struct Axis {
  double lo = 0, hi = 1, a = 0, b = 1;
  bool log = false;
  void fit(const std::vector<double>& values) {
    log = !values.empty() && std::all_of(values.begin(), values.end(), [](double v) { return v > 0; });
    lo = hi = values.empty() ? 0.0 : f(values[0]);
    for (double v : values) lo = std::min(lo, f(v)), hi = std::max(hi, f(v));
    const double span = hi - lo > 0 ? hi - lo : std::max(log ? 0.1 : 1.0, std::fabs(hi) * 0.1);
    lo -= span * 0.06;
    hi += span * 0.06;
  }
  double f(double v) const { return log ? std::log10(v) : v; }
  double map(double v) const { return a + (f(v) - lo) / (hi - lo) * (b - a); }
  double value_at(double t) const {
    const double x = lo + (hi - lo) * t;
    return log ? std::pow(10.0, x) : x;
  }
};

const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

/// Tick values for an axis over [lo, hi] (raw values, not logs): 1, 2, 5 x 10^k on a log axis, else
/// 1, 2, 5 x 10^k steps; at least two ticks whenever the range is not a single value.
std::vector<double> axis_ticks(const Axis& axis, double scale) {
  // Nice values in the display unit (e.g. KiB), returned in raw units.
  const double lo = axis.value_at(0.0) / scale, hi = axis.value_at(1.0) / scale;
  std::vector<double> ticks;
  if (axis.log && hi / lo > 3.0) {
    for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10.0) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (m * decade >= lo && m * decade <= hi) ticks.push_back(m * decade * scale);
      }
    }
    if (ticks.size() >= 2) return ticks;
    ticks.clear();
  }
  const double raw = (hi - lo) / 5.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double step = (r < 1.5 ? 1.0 : r < 3.5 ? 2.0 : r < 7.5 ? 5.0 : 10.0) * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push_back(v * scale);
  return ticks;
}

/// Labels for ticks that read differently: the fewest significant digits (up to 6) that tell them apart.
std::vector<std::string> tick_labels(const std::vector<double>& ticks, double scale, const char* unit) {
  std::vector<std::string> labels;
  for (int digits = 2; digits <= 6; ++digits) {
    labels.clear();
    for (double v : ticks) labels.push_back(fmt::format("{:.{}g}{}", v / scale, digits, unit));
    if (std::set<std::string>(labels.begin(), labels.end()).size() == labels.size()) break;
  }
  return labels;
}

std::string render_svg(const std::vector<std::string>& workload_ids, const std::vector<std::vector<Row>>& rows,
                       const std::vector<Json>& records, const std::string& title) {
  const double W = 860, L = 90, R = 210, T = 58, B = 62;
  std::set<double> macs_values, sram_values;
  for (const auto& wr : rows) {
    for (const Row& r : wr) macs_values.insert(r.macs), sram_values.insert(r.sram_capacity);
  }
  const std::vector<double> macs(macs_values.begin(), macs_values.end());
  const std::vector<double> srams(sram_values.begin(), sram_values.end());
  // The size legend lists at most 8 SRAM capacities (the smallest, the largest and an even spread
  // between: marker sizes interpolate), and each panel is tall enough for its legends, so they never
  // run past their panel however many values a sweep has.
  std::vector<double> sram_legend;
  for (std::size_t k = 0, n = std::min<std::size_t>(8, srams.size()); k < n; ++k) {
    const double v = srams[n == 1 ? 0 : k * (srams.size() - 1) / (n - 1)];
    if (sram_legend.empty() || sram_legend.back() != v) sram_legend.push_back(v);
  }
  const double legend_bottom = T + 4 + 18.0 * static_cast<double>(macs.size()) + 26 + 20.0 * static_cast<double>(sram_legend.size()) +
                               26 + 18 + 26 + 16;
  const double PH = std::max(450.0, legend_bottom + 14);
  const auto colour = [&](double m) {
    const auto i = static_cast<std::size_t>(std::lower_bound(macs.begin(), macs.end(), m) - macs.begin());
    return kPalette[i % 8];
  };
  const auto radius = [&](double s) {
    const auto i = static_cast<double>(std::lower_bound(srams.begin(), srams.end(), s) - srams.begin());
    return srams.size() > 1 ? 3.0 + 6.0 * i / static_cast<double>(srams.size() - 1) : 5.0;
  };
  // Marker shape per accelerator family: circles for Ethos-U55, squares for Ethos-U65.
  const auto is_u65 = [&](const Row& r) {
    return records[r.record]["arch"]["accelerator"].get<std::string>().rfind("ethos-u65", 0) == 0;
  };
  const double H = 30 + PH * static_cast<double>(std::max<std::size_t>(1, workload_ids.size()));
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect x=\"0\" y=\"0\" width=\"{0}\" "
      "height=\"{1}\" fill=\"white\"/>\n",
      W, H);
  out += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\">{}</text>\n", L, xml_escape(title));
  for (std::size_t wi = 0; wi < workload_ids.size(); ++wi) {
    const double top = 30 + PH * static_cast<double>(wi);
    std::size_t on_front = 0;
    for (const Row& r : rows[wi]) on_front += r.pareto ? 1 : 0;
    // Points where this workload has no valid mapping: named, since they have no marker to show.
    std::vector<std::string> failed;
    for (const Json& rec : records) {
      if (rec["workloads"][wi]["status"] != "ok") failed.push_back(rec["id"].get<std::string>());
    }
    out += fmt::format("<g class=\"panel\" id=\"{}\">\n", xml_escape(workload_ids[wi]));
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\">{}: {} cross-arch Pareto-optimal of {} mappings</text>\n",
                       L, top + 24, xml_escape(workload_ids[wi]), on_front, rows[wi].size());
    if (!failed.empty()) {
      std::string list;
      for (std::size_t k = 0; k < failed.size() && k < 12; ++k) list += (k == 0 ? "" : ", ") + failed[k];
      if (failed.size() > 12) list += fmt::format(", ... ({} more)", failed.size() - 12);
      out += fmt::format("<text class=\"failed\" x=\"{}\" y=\"{}\" fill=\"#b00020\">no valid mapping on {} point{}: {}</text>\n",
                         L, top + 42, failed.size(), failed.size() == 1 ? "" : "s", xml_escape(list));
    }
    if (rows[wi].empty()) {
      out += fmt::format("<text class=\"message\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"15\">Nothing to plot: "
                         "no valid mapping on any point</text>\n</g>\n",
                         (L + W - R) / 2, top + PH / 2);
      continue;
    }
    std::vector<double> xs, ys;
    for (const Row& r : rows[wi]) xs.push_back(r.cycles / r.clock * 1e3), ys.push_back(r.offchip);
    Axis x, y;
    x.fit(xs);
    y.fit(ys);
    x.a = L, x.b = W - R;
    y.a = top + PH - B, y.b = top + T;
    // Gridlines and human-unit tick labels (ms; B, KiB or MiB).
    const double ymax = y.value_at(1.0);
    const double yscale = ymax >= 1024.0 * 1024.0 ? 1024.0 * 1024.0 : ymax >= 1024.0 ? 1024.0 : 1.0;
    const char* yunit = yscale > 1024.0 ? " MiB" : yscale > 1.0 ? " KiB" : " B";
    const std::vector<double> xt = axis_ticks(x, 1.0), yt = axis_ticks(y, yscale);
    const std::vector<std::string> xl = tick_labels(xt, 1.0, ""), yl = tick_labels(yt, yscale, yunit);
    for (std::size_t k = 0; k < xt.size(); ++k) {
      out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n",
                         x.map(xt[k]), y.a, y.b);
      out += fmt::format("<text class=\"xtick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x.map(xt[k]), y.a + 16, xl[k]);
    }
    for (std::size_t k = 0; k < yt.size(); ++k) {
      out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n",
                         L, y.map(yt[k]), x.b);
      out += fmt::format("<text class=\"ytick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", L - 6, y.map(yt[k]) + 4, yl[k]);
    }
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", L, y.b, x.b - L, y.a - y.b);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">latency, ms{}</text>\n", (L + x.b) / 2, y.a + 36,
                       x.log ? " (log scale)" : "");
    out += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">off-chip traffic{1}</text>\n",
                       (y.a + y.b) / 2, y.log ? " (log scale)" : "");
    // Dominated rows first (faint, hollow), then the front on top.
    for (int pass = 0; pass < 2; ++pass) {
      for (const Row& r : rows[wi]) {
        if (r.pareto != (pass == 1)) continue;
        const Json& rec = records[r.record];
        const double cx = x.map(r.cycles / r.clock * 1e3), cy = y.map(r.offchip), rad = radius(r.sram_capacity);
        const std::string style = fmt::format(
            "class=\"{}\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"{}\" stroke-width=\"{}\"", r.pareto ? "pareto" : "dominated",
            colour(r.macs), r.pareto ? "0.9" : "0.0", r.pareto ? "black" : colour(r.macs), r.pareto ? "1" : "0.8");
        const std::string tip = fmt::format("<title>{} ({}): {} MACs/cycle, {} SRAM, {:.6g} ms, {} off-chip</title>",
                                            xml_escape(rec["id"].get<std::string>()), xml_escape(params_text(rec["params"])), r.macs,
                                            common::format_bytes_short(r.sram_capacity), r.cycles / r.clock * 1e3,
                                            common::format_bytes(r.offchip));
        if (is_u65(r)) {
          out += fmt::format("<rect {} x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.1f}\" height=\"{:.1f}\">{}</rect>\n", style, cx - rad,
                             cy - rad, 2 * rad, 2 * rad, tip);
        } else {
          out += fmt::format("<circle {} cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"{:.1f}\">{}</circle>\n", style, cx, cy, rad, tip);
        }
      }
    }
    // Legends: colour = MACs per cycle, size = SRAM capacity, shape = accelerator family.
    const double lx = W - R + 24;
    double ly = top + T + 4;
    out += fmt::format("<text x=\"{}\" y=\"{}\">MACs/cycle</text>\n", lx - 8, ly);
    for (double m : macs) {
      ly += 18;
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\" stroke=\"black\"/><text class=\"legend\" x=\"{}\" y=\"{}\">{:g}</text>\n",
                         lx, ly - 4, colour(m), lx + 12, ly, m);
    }
    ly += 26;
    out += fmt::format("<text x=\"{}\" y=\"{}\">SRAM capacity{}</text>\n", lx - 8, ly,
                       sram_legend.size() < srams.size() ? fmt::format(" ({} of {})", sram_legend.size(), srams.size()) : std::string());
    for (double sv : sram_legend) {
      ly += 20;
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{:.1f}\" fill=\"#999\" stroke=\"black\"/><text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>\n",
                         lx, ly - 4, radius(sv), lx + 14, ly, common::format_bytes_short(sv));
    }
    ly += 26;
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"white\" stroke=\"black\"/><text x=\"{}\" y=\"{}\">Ethos-U55</text>\n",
                       lx, ly - 4, lx + 12, ly);
    ly += 18;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"white\" stroke=\"black\"/><text x=\"{}\" y=\"{}\">Ethos-U65</text>\n",
                       lx - 5, ly - 9, lx + 12, ly);
    ly += 26;
    out += fmt::format("<text x=\"{}\" y=\"{}\">filled: on the front</text>\n", lx - 8, ly);
    out += fmt::format("<text x=\"{}\" y=\"{}\">hollow: dominated</text>\n", lx - 8, ly + 16);
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace

std::vector<std::uint32_t> cross_arch_front(const std::vector<std::array<double, 4>>& rows) {
  if (rows.empty()) return {};
  return search::pareto_front(rows.front().data(), rows.size(), 4);
}

SweepFiles render_sweep(const SweepSpec& spec, const std::vector<Json>& records) {
  // Rows per workload, in (point, front index) order, and their cross-arch front.
  std::vector<std::vector<Row>> rows(spec.workloads.size());
  for (std::size_t ri = 0; ri < records.size(); ++ri) {
    const Json& rec = records[ri];
    for (std::size_t wi = 0; wi < spec.workloads.size(); ++wi) {
      const Json& front = rec["workloads"][wi]["front"];
      for (std::size_t f = 0; f < front.size(); ++f) {
        Row r;
        r.record = ri;
        r.front_index = f;
        r.macs = rec["arch"]["macs_per_cycle"].get<double>();
        r.sram_capacity = rec["arch"]["sram_capacity_bytes"].get<double>();
        r.clock = rec["arch"]["core_clock_hz"].get<double>();
        r.cycles = front[f]["cycles"].get<double>();
        r.offchip = front[f]["offchip_bytes"].get<double>();
        r.peak_sram = front[f]["sram_bytes"].get<double>();
        r.energy = front[f]["energy_pj"].get<double>();
        rows[wi].push_back(r);
      }
    }
  }
  for (auto& wr : rows) {
    std::vector<std::array<double, 4>> table;
    // Time, not cycles: points may differ in clock, and a 250 MHz point must not beat an otherwise
    // equal 1 GHz one.
    for (const Row& r : wr) table.push_back({r.macs, r.sram_capacity, r.cycles / r.clock, r.offchip});
    for (std::uint32_t i : cross_arch_front(table)) wr[i].pareto = true;
  }

  SweepFiles files;
  // sweep.csv
  std::string header = "point";
  for (const auto& k : spec.param_keys) header += fmt::format(",{}", csv_field("param." + k));
  header += ",accelerator,macs_per_cycle,sram_capacity_bytes,core_clock_hz,system_config,memory_mode,workload,status,"
            "front_index,cycles,latency_ms,inferences_per_s,utilisation,offchip_bytes,peak_sram_bytes,energy_pj,"
            "cross_arch_pareto,vela_cycles,vela_latency_ms,vela_offchip_bytes,vela_peak_sram_bytes,vela_energy_pj\n";
  files.csv = header;
  const auto point_columns = [&](const Json& rec) {
    std::string s = csv_field(rec["id"].get<std::string>());
    s += param_columns(spec, rec);
    const Json& a = rec["arch"];
    s += fmt::format(",{},{},{},{},{},{}", csv_field(a["accelerator"].get<std::string>()), a["macs_per_cycle"].get<int>(),
                     a["sram_capacity_bytes"].get<std::int64_t>(), number(a["core_clock_hz"].get<double>()),
                     csv_field(a["system_config"].get<std::string>()), csv_field(a["memory_mode"].get<std::string>()));
    return s;
  };
  // The columns of one front point, front_index .. cross_arch_pareto. Utilisation: the workload's
  // MACs per cycle as a fraction of the point's peak (MACs x cores per cycle).
  const auto front_columns = [&](const Row& r, std::size_t wi) {
    const double macs = static_cast<double>(spec.workloads[wi].workload.total_macs());
    return fmt::format("{},{},{},{},{},{},{},{},{}", r.front_index, number(r.cycles), number(latency_ms(r.cycles, r.clock)),
                       number(r.cycles > 0 ? r.clock / r.cycles : 0.0),
                       number(r.cycles > 0 && r.macs > 0 ? macs / r.cycles / r.macs : 0.0), number(r.offchip),
                       number(r.peak_sram), number(r.energy), r.pareto ? 1 : 0);
  };
  // Vela's schedule of the workload on the record's point (empty when it has none): the same five
  // values on each of the workload's rows, so every row compares with Vela on its own.
  const auto vela_columns = [&](const Json& rec, std::size_t wi) -> std::string {
    const Json& wr = rec["workloads"][wi];
    if (!wr.contains("vela")) return ",,,,";
    const Json& v = wr["vela"];
    const double cycles = v["cycles"].get<double>();
    return fmt::format("{},{},{},{},{}", number(cycles), number(latency_ms(cycles, rec["arch"]["core_clock_hz"].get<double>())),
                       number(v["offchip_bytes"].get<double>()), number(v["sram_bytes"].get<double>()),
                       number(v["energy_pj"].get<double>()));
  };
  std::vector<std::size_t> next_row(spec.workloads.size(), 0);
  for (std::size_t ri = 0; ri < records.size(); ++ri) {
    const Json& rec = records[ri];
    const std::string pc = point_columns(rec);
    for (std::size_t wi = 0; wi < spec.workloads.size(); ++wi) {
      const Json& wr = rec["workloads"][wi];
      const std::string status = wr["status"].get<std::string>();
      if (wr["front"].empty()) {
        // The nine front columns stay empty: front_index .. cross_arch_pareto.
        files.csv += fmt::format("{},{},{},,,,,,,,,,{}\n", pc, csv_field(spec.workloads[wi].id), status,
                                 vela_columns(rec, wi));
        continue;
      }
      for (std::size_t f = 0; f < wr["front"].size(); ++f) {
        const Row& r = rows[wi][next_row[wi]++];
        files.csv += fmt::format("{},{},{},{},{}\n", pc, csv_field(spec.workloads[wi].id), status, front_columns(r, wi),
                                 vela_columns(rec, wi));
      }
    }
  }

  // pareto.csv (sweep.csv's columns, the rows on each workload's cross-arch front, workload by
  // workload) and the JSON fronts.
  files.pareto_csv = header;
  Json pareto = Json::object();
  for (std::size_t wi = 0; wi < spec.workloads.size(); ++wi) {
    Json list = Json::array();
    for (const Row& r : rows[wi]) {
      if (!r.pareto) continue;
      const Json& rec = records[r.record];
      files.pareto_csv += fmt::format("{},{},ok,{},{}\n", point_columns(rec), csv_field(spec.workloads[wi].id),
                                      front_columns(r, wi), vela_columns(rec, wi));
      list.push_back(Json{{"point", rec["id"]}, {"params", rec["params"]}, {"front_index", r.front_index},
                          {"macs_per_cycle", rec["arch"]["macs_per_cycle"]}, {"sram_capacity_bytes", rec["arch"]["sram_capacity_bytes"]},
                          {"cycles", r.cycles}, {"offchip_bytes", r.offchip}, {"sram_bytes", r.peak_sram}, {"energy_pj", r.energy}});
    }
    pareto[spec.workloads[wi].id] = list;
  }

  // sweep.json
  Json doc;
  doc["tool"] = {{"name", "npu-mapper"}, {"version", kVersion}};
  Json objectives = Json::array();
  for (search::Objective o : spec.objectives) objectives.push_back(search::objective_name(o));
  Json workloads = Json::array();
  for (const auto& w : spec.workloads) workloads.push_back(Json{{"id", w.id}, {"path", w.path}, {"layers", w.workload.layers.size()}});
  doc["sweep"] = {{"name", spec.name},           {"spec", spec.file},          {"fingerprint", spec.fingerprint},
                  {"base", spec.base},           {"parameters", spec.param_keys}, {"objectives", objectives},
                  {"fusion", spec.fusion},       {"epsilon", spec.epsilon}, {"workloads", workloads},
                  {"points", spec.points.size()}};
  Json points = Json::array();
  for (const Json& rec : records) {
    Json p;
    p["id"] = rec["id"];
    p["params"] = rec["params"];
    p["arch"] = rec["arch"];
    p["workloads"] = rec["workloads"];
    points.push_back(p);
  }
  doc["points"] = points;
  doc["pareto"] = pareto;
  files.json = doc.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";

  std::vector<std::string> ids;
  for (const auto& w : spec.workloads) ids.push_back(w.id);
  files.svg = render_svg(ids, rows, records,
                         fmt::format("sweep {}: {} arch points; colour = MACs/cycle, size = SRAM capacity", spec.name,
                                     records.size()));
  return files;
}

}  // namespace npumap::sweep
