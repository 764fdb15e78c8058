// Vela's summary and per-layer CSV files, rendered from the result document (see vela_csv.hpp).
//
// Each NPU layer of the chosen point is re-evaluated from its saved pass (the cycle model is pure, so
// this gives the pass's metrics bit for bit) for what the document does not hold per layer: bytes by
// memory, purpose (weights, feature maps) and direction, and the weight, bias and LUT sizes stored in
// the constants' memory.

#include "mapper/report/vela_csv.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "arch/arch.hpp"
#include "common/text_escape.hpp"
#include "mapper/report/report.hpp"
#include "mapper/report/report_util.hpp"
#include "mapper/report/result_document.hpp"
#include "model/evaluate.hpp"
#include "model/pass_json.hpp"

namespace npumap::report {
namespace {

using Json = nlohmann::ordered_json;

/// The memories Vela's summary reports, in its order (MemArea.all() without Shram).
constexpr std::array<arch::MemArea, 4> kVelaAreas = {arch::MemArea::Sram, arch::MemArea::Dram, arch::MemArea::OnChipFlash,
                                                 arch::MemArea::OffChipFlash};
/// Vela's MemArea.identifier_name() and display_name() of those.
constexpr std::array<const char*, 4> kVelaIdentifiers = {"sram", "dram", "on_chip_flash", "off_chip_flash"};
constexpr std::array<const char*, 4> kVelaDisplay = {"SRAM", "DRAM", "On-chip Flash", "Off-chip Flash"};
/// Vela's PassCycles.identifier_name() and the document's cycles_by_component keys, without Total.
constexpr std::array<const char*, 5> kVelaCycleIds = {"npu", "sram_access", "dram_access", "on_chip_flash_access",
                                                  "off_chip_flash_access"};
constexpr std::array<const char*, 5> kVelaCycleKeys = {"Npu", "SramAccess", "DramAccess", "OnChipFlashAccess",
                                                   "OffChipFlashAccess"};

double vnum(const Json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

std::string vela_display_area(const std::string& area) {
  for (std::size_t i = 0; i < kVelaAreas.size(); ++i)
    if (arch::mem_area_name(kVelaAreas[i]) == area) return kVelaDisplay[i];
  return area;
}

/// A CSV field as Python's csv.writer writes it: quoted when it holds a comma, a quote or a line end.
using common::csv_field;

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  return out + "\r\n";  // csv.writer's default line terminator
}

/// Vela's _percentage: part / whole * 100, or 100 when whole is 0.
double vela_percentage(double part, double whole) { return whole == 0.0 ? 100.0 : part / whole * 100.0; }

/// The TFLite operator a layer comes from, as Vela names the source operator of a pass.
std::string vela_tflite_operator(const std::string& op) {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"conv2d", "CONV_2D"},
      {"depthwise_conv2d", "DEPTHWISE_CONV_2D"},
      {"transpose_conv2d", "TRANSPOSE_CONV"},
      {"fully_connected", "FULLY_CONNECTED"},
      {"matmul", "BATCH_MATMUL"},
      {"max_pool", "MAX_POOL_2D"},
      {"avg_pool", "AVERAGE_POOL_2D"},
      {"resize_bilinear", "RESIZE_BILINEAR"},
      {"reduce_sum", "SUM"},
      {"add", "ADD"},
      {"sub", "SUB"},
      {"mul", "MUL"},
      {"maximum", "MAXIMUM"},
      {"minimum", "MINIMUM"},
      {"abs", "ABS"},
      {"leaky_relu", "LEAKY_RELU"},
      {"softmax", "SOFTMAX"},
      {"relu", "RELU"},
      {"relu6", "RELU6"},
      {"relu_n1_to_1", "RELU_N1_TO_1"},
      {"sigmoid", "LOGISTIC"},
      {"tanh", "TANH"},
  };
  for (const auto& [ours, theirs] : names)
    if (ours == op) return theirs;
  return "UNKNOWN";  // Vela's name for an operator it created (shl, shr, rescale_add, clz, a lut)
}

/// What one NPU layer's pass moves and stores, re-evaluated from its saved pass.
struct VelaLayerTraffic {
  model::BandwidthArray bandwidth{};  ///< unscaled bytes, times the layer's repeat
  double original_weights = 0.0;      ///< weight elements x element size
  double encoded_weights = 0.0;       ///< encoded weight bytes
  double constants = 0.0;             ///< encoded weights + bias/scale + LUT bytes in the constants' memory
};

VelaLayerTraffic vela_layer_traffic(const Json& layer) {
  VelaLayerTraffic t;
  // The pass as read_pass_input takes it: a packed pass decoded straight into it (no ordered copy).
  const auto it = layer.find("pass");
  if (it == layer.end()) return t;
  const nlohmann::json pass_json =
      detail::is_packed(*it) ? nlohmann::json::from_cbor(it->get_binary()) : nlohmann::json(*it);
  if (!pass_json.is_object()) return t;
  const model::PassInput in = model::read_pass_input(pass_json, "result.json", "pass");
  const model::PassMetrics m = model::evaluate(in.arch, in.pass);
  const double repeat = vnum(layer, "repeat") > 0 ? vnum(layer, "repeat") : 1.0;
  for (std::size_t a = 0; a < t.bandwidth.size(); ++a)
    for (std::size_t p = 0; p < t.bandwidth[a].size(); ++p)
      for (std::size_t d = 0; d < t.bandwidth[a][p].size(); ++d) t.bandwidth[a][p][d] = m.bandwidth[a][p][d] * repeat;
  const model::Pass& pass = in.pass;
  if (pass.weights) {
    t.original_weights = static_cast<double>(pass.weights->shape.elements() * model::size_in_bytes(pass.weights->dtype));
    t.encoded_weights = static_cast<double>(pass.weights->storage_shape.elements());
    t.constants += t.encoded_weights;
  }
  if (pass.bias) {
    const int elem = pass.bias->element_size_bytes > 0 ? pass.bias->element_size_bytes : 4;
    const model::Shape& s = pass.bias->storage_shape.rank > 0 ? pass.bias->storage_shape : pass.bias->shape;
    t.constants += static_cast<double>(s.elements() * elem);
  }
  if (pass.lut) t.constants += static_cast<double>(pass.lut->shape.elements() * model::size_in_bytes(pass.lut->dtype));
  return t;
}

/// Reads a packed pass's `op.type` from its CBOR events, stopping there: none of the pass's other
/// values (about a hundred) is made into JSON.
class OpTypeReader {
 public:
  std::string type;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const Json::string_t&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  bool string(Json::string_t& value) {
    if (!in_op_.empty() && in_op_.back() && key_ == "type") {
      type = value;
      return false;  // found: stop reading
    }
    return true;
  }
  bool key(Json::string_t& value) {
    key_ = value;
    return true;
  }
  bool start_object(std::size_t) {
    // The pass is the outermost object; its `op` the object under that key.
    in_op_.push_back(in_op_.size() == 1 && key_ == "op");
    return true;
  }
  bool end_object() {
    in_op_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    in_op_.push_back(false);
    return true;
  }
  bool end_array() {
    in_op_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  std::vector<bool> in_op_;  // per open container: whether it is the pass's op
  std::string key_;
};

/// The type of the layer's pass's op ("" without one).
std::string pass_op_type(const Json& layer) {
  const auto it = layer.find("pass");
  if (it != layer.end() && detail::is_packed(*it)) {
    OpTypeReader reader;
    Json::sax_parse(it->get_binary(), &reader, Json::input_format_t::cbor);
    return reader.type;
  }
  const Json pass = detail::layer_pass(layer);
  return pass.is_object() && pass.contains("op") ? pass["op"].value("type", std::string()) : std::string();
}

std::string file_name_part(std::string s) {
  for (char& c : s)
    if (c == '/' || c == '\0') c = '_';
  return s.empty() ? std::string("network") : s;
}

}  // namespace

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);  // "-1.2345e+06", shortest round-trip digits
  const std::size_t e = sci.find('e');
  const bool negative = sci[0] == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int exp = std::stoi(sci.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const std::size_t int_len = static_cast<std::size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out;
}

const std::vector<std::string>& vela_summary_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"experiment", "network", "accelerator_configuration", "system_config", "memory_mode",
                                  "core_clock", "sram_size"};
    for (const char* a : kVelaIdentifiers) c.push_back(std::string(a) + "_bandwidth");
    c.insert(c.end(), {"weights_storage_area", "feature_map_storage_area", "inferences_per_second", "batch_size",
                       "inference_time", "passes_before_fusing", "passes_after_fusing"});
    for (const char* a : kVelaIdentifiers) c.push_back(std::string(a) + "_memory_used");
    c.insert(c.end(), {"total_original_weights", "total_npu_weights", "total_npu_encoded_weights"});
    for (const char* a : kVelaIdentifiers) {
      for (const char* what : {"_feature_map_read_bytes", "_feature_map_write_bytes", "_weight_read_bytes",
                               "_weight_write_bytes", "_total_bytes"})
        c.push_back(std::string(a) + what);
    }
    c.insert(c.end(), {"nn_macs", "nn_tops"});
    for (const char* k : kVelaCycleIds) c.push_back(std::string("cycles_") + k);
    c.push_back("cycles_total");
    return c;
  }();
  return columns;
}

const std::vector<std::string>& vela_per_layer_columns() {
  static const std::vector<std::string> columns = {"TFLite_operator", "NNG Operator", "SRAM Usage", "Peak%", "Op Cycles",
                                                   "Network%",        "NPU",          "SRAM AC",    "DRAM AC", "OnFlash AC",
                                                   "OffFlash AC",     "MAC Count",    "Network%",   "Util%",   "Name"};
  return columns;
}

std::string render_vela_summary_csv(const Json& r) {
  std::string out = csv_row(vela_summary_columns());
  if (!r.contains("front") || r["front"].empty()) return out;
  const Json& point = r["front"][chosen_point(r)];
  const Json& a = r["arch"];
  const Json& vela = a.contains("vela") ? a["vela"] : Json::object();
  const double clock = vnum(a, "core_clock_hz");
  const PointLayers layers(r, point);

  std::vector<std::string> f = {"default", csv_field(r["workload"].value("name", std::string())),
                                csv_field(vela.value("accelerator_configuration", std::string())),
                                csv_field(a.value("system_config", std::string())), csv_field(a.value("memory_mode", std::string())),
                                python_float(clock), python_float(vnum(vela, "sram_size_bytes") / 1024.0)};
  const Json& bw = vela.contains("memory_bandwidth_bytes_per_cycle") ? vela["memory_bandwidth_bytes_per_cycle"] : Json::object();
  for (const arch::MemArea area : kVelaAreas) {
    double per_second = vnum(bw, std::string(arch::mem_area_name(area)).c_str()) * clock;
    per_second = per_second / 1000.0 / 1000 / 1000;  // Vela's GB/s, divided as Vela divides
    f.push_back(python_float(per_second));
  }
  const std::string weights_in = a.value("weights_in", std::string());
  const std::string feature_maps_in = a.value("feature_maps_in", std::string());
  f.push_back(csv_field(vela_display_area(weights_in)));
  f.push_back(csv_field(vela_display_area(feature_maps_in)));

  const double cycles = vnum(point, "cycles");
  const double inference_time = clock > 0 ? cycles / clock : 0.0;
  const double fps = inference_time > 0 ? 1.0 / inference_time : std::nan("");
  int fused = 0;
  for (const LayerRef l : layers) fused += l->value("fused_with_next", false) ? 1 : 0;
  f.insert(f.end(), {python_float(fps), "1", python_float(inference_time), std::to_string(layers.size()),
                     std::to_string(layers.size() - static_cast<std::size_t>(fused))});

  model::BandwidthArray total{};
  double original = 0.0, encoded = 0.0, constants = 0.0;
  std::int64_t macs = 0;
  std::array<double, kVelaCycleKeys.size()> component{};
  for (const LayerRef lp : layers) {
    const Json& l = *lp;
    if (l.contains("cpu")) continue;
    const VelaLayerTraffic t = vela_layer_traffic(l);
    for (std::size_t i = 0; i < total.size(); ++i)
      for (std::size_t p = 0; p < total[i].size(); ++p)
        for (std::size_t d = 0; d < total[i][p].size(); ++d) total[i][p][d] += t.bandwidth[i][p][d];
    original += t.original_weights;
    encoded += t.encoded_weights;
    constants += t.constants;
    macs += l.value("macs", std::int64_t{0});
    if (l.contains("cycles_by_component")) {
      for (std::size_t c = 0; c < kVelaCycleKeys.size(); ++c) component[c] += vnum(l["cycles_by_component"], kVelaCycleKeys[c]);
    }
  }
  // Memory used: the SRAM at its peak; the constants in their memory; the arena in its memory when
  // that is not the SRAM (the peak of the live feature maps there).
  for (const arch::MemArea area : kVelaAreas) {
    const std::string name(arch::mem_area_name(area));
    double bytes = 0.0;
    if (area == arch::MemArea::Sram) bytes += vnum(point, "sram_bytes");
    if (name == weights_in) bytes += constants;
    if (name == feature_maps_in && area != arch::MemArea::Sram) bytes += vnum(point, "arena_peak_bytes");
    f.push_back(python_float(bytes / 1024.0));
  }
  f.push_back(fmt::format("{:.0f}", original));
  f.push_back(fmt::format("{:.0f}", original));  // the raw weights: the model has no padded, unencoded NPU stream
  f.push_back(fmt::format("{:.0f}", encoded));
  const auto fm = static_cast<std::size_t>(model::TensorPurpose::FeatureMap);
  const auto wt = static_cast<std::size_t>(model::TensorPurpose::Weights);
  const auto rd = static_cast<std::size_t>(model::Direction::Read);
  const auto wr = static_cast<std::size_t>(model::Direction::Write);
  for (const arch::MemArea area : kVelaAreas) {
    const auto& b = total[static_cast<std::size_t>(area)];
    double sum = 0.0;
    for (const auto& purpose : b)
      for (const double v : purpose) sum += v;
    f.insert(f.end(), {python_float(b[fm][rd]), python_float(b[fm][wr]), python_float(b[wt][rd]), python_float(b[wt][wr]),
                       python_float(sum)});
  }
  f.push_back(std::to_string(macs));
  f.push_back(python_float(static_cast<double>(macs) * 2 * fps / 1e12));
  for (const double c : component) f.push_back(python_float(c));
  f.push_back(python_float(cycles));
  out += csv_row(f);
  return out;
}

std::string render_vela_per_layer_csv(const Json& r) {
  std::string out = csv_row(vela_per_layer_columns());
  if (!r.contains("front") || r["front"].empty()) return out;
  const Json& point = r["front"][chosen_point(r)];
  const PointLayers layers(r, point);
  const Json& sram = point.contains("sram_in_use_bytes") ? point["sram_in_use_bytes"] : Json::array();
  const double peak_sram = vnum(point, "sram_bytes");
  const double total_cycles = vnum(point, "cycles");
  const double peak_macs = vnum(r["arch"], "peak_macs_per_cycle");
  // Each layer read once: its row's fields, but the MACs' share of the total, which is known only
  // once every layer has been read (left empty at `share_at`).
  std::size_t share_at = 0;
  std::vector<std::vector<std::string>> rows;
  std::vector<double> row_macs;
  double total_macs = 0.0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerRef layer = layers[i];
    const Json& l = *layer;
    if (l.contains("cpu")) continue;  // Vela's table covers the NPU subgraphs only
    const double usage = i < sram.size() && sram[i].is_number() ? sram[i].get<double>() : 0.0;
    const double cycles = vnum(l, "cycles");
    const double macs = vnum(l, "macs");
    total_macs += macs;
    const Json& cyc = l.contains("cycles_by_component") ? l["cycles_by_component"] : Json::object();
    std::vector<std::string> f = {
        vela_tflite_operator(l.value("op", std::string())),
        csv_field(pass_op_type(l)),
        fmt::format("{:.0f}", usage),
        python_float(vela_percentage(usage, peak_sram)),
        python_float(cycles),
        python_float(vela_percentage(cycles, total_cycles))};
    for (const char* k : kVelaCycleKeys) f.push_back(python_float(vnum(cyc, k)));
    f.push_back(fmt::format("{:.0f}", macs));
    share_at = f.size();
    f.emplace_back();
    f.push_back(python_float(vela_percentage(macs, cycles * peak_macs)));
    f.push_back(csv_field(l.value("layer", std::string())));
    rows.push_back(std::move(f));
    row_macs.push_back(macs);
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    rows[k][share_at] = python_float(vela_percentage(row_macs[k], total_macs));
    out += csv_row(rows[k]);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> render_vela_csvs(const Json& r) {
  if (!r.contains("front") || r["front"].empty()) return {};
  const std::string net = file_name_part(r["workload"].value("name", std::string()));
  const std::string sys = file_name_part(r["arch"].value("system_config", std::string()));
  return {{net + "_summary_" + sys + ".csv", render_vela_summary_csv(r)},
          {net + "_per-layer.csv", render_vela_per_layer_csv(r)}};
}

}  // namespace npumap::report
