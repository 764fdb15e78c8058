#include "mapper/report/report.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <optional>
#include <vector>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>
#include <streambuf>
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
using detail::shape_str;

namespace {

/// Makes the JSON of a packed section from its CBOR events, as Json::from_cbor does (a packed section
/// inside stays packed), but with room for every object's and list's entries from the start (the
/// CBOR gives their counts): an ordered_json object grows by copying its entries, keys included.
/// Returns false, leaving `root` unspecified, on anything but counted containers.
class CountedBuilder {
 public:
  explicit CountedBuilder(Json& root) : root_(root) {}

  bool null() { return put(Json(nullptr)) != nullptr; }
  bool boolean(bool v) { return put(Json(v)) != nullptr; }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)) != nullptr; }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)) != nullptr; }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return put(Json(v)) != nullptr; }
  bool string(Json::string_t& v) { return put(Json(std::move(v))) != nullptr; }
  bool binary(Json::binary_t& v) {
    const bool sub = v.has_subtype();
    const auto subtype = sub ? v.subtype() : 0;
    std::vector<std::uint8_t>& bytes = v;
    return put(sub ? Json::binary(std::move(bytes), static_cast<std::uint8_t>(subtype)) : Json::binary(std::move(bytes))) != nullptr;
  }
  bool key(Json::string_t& k) {
    auto& object = stack_.back()->get_ref<Json::object_t&>();
    if (object.size() == object.capacity()) return false;  // more entries than counted
    object.emplace_back(std::move(k), Json());
    slot_ = &object.back().second;
    return true;
  }
  bool start_object(std::size_t n) { return open(Json::object(), n); }
  bool start_array(std::size_t n) { return open(Json::array(), n); }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  Json* put(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_object()) {
      *slot_ = std::move(v);
      return slot_;
    }
    auto& list = top.get_ref<Json::array_t&>();
    if (list.size() == list.capacity()) return nullptr;  // more elements than counted
    list.push_back(std::move(v));
    return &list.back();
  }
  bool open(Json&& container, std::size_t n) {
    if (n == static_cast<std::size_t>(-1)) return false;  // not counted
    Json* at = put(std::move(container));
    if (at == nullptr) return false;
    if (at->is_object()) {
      at->get_ref<Json::object_t&>().reserve(n);
    } else {
      at->get_ref<Json::array_t&>().reserve(n);
    }
    stack_.push_back(at);
    return true;
  }

  Json& root_;
  std::vector<Json*> stack_;
  Json* slot_ = nullptr;
};

}  // namespace

LayerRef::LayerRef(const Json& node) {
  if (!detail::is_packed(node)) {
    ref_ = &node;
    return;
  }
  const Json::binary_t& bytes = node.get_binary();
  CountedBuilder builder(owned_);
  auto input = nlohmann::detail::input_adapter(bytes.begin(), bytes.end());
  nlohmann::detail::binary_reader<Json, decltype(input), CountedBuilder> reader(std::move(input), nlohmann::detail::input_format_t::cbor);
  if (!reader.sax_parse(nlohmann::detail::input_format_t::cbor, &builder, true, Json::cbor_tag_handler_t::store)) {
    owned_ = detail::unpacked(node);
  }
}

PointLayers::PointLayers(const Json& r, const Json& p) {
  if (!p.contains("layers")) return;
  const Json* mappings = r.contains("layer_mappings") ? &r["layer_mappings"] : nullptr;
  for (const Json& ref : p["layers"]) {
    if (ref.is_number_unsigned() && mappings != nullptr && ref.get<std::size_t>() < mappings->size()) {
      nodes_.push_back(&(*mappings)[ref.get<std::size_t>()]);
      indices_.push_back(ref.get<std::size_t>());
    } else if (ref.is_object()) {
      nodes_.push_back(&ref);
      indices_.push_back(SIZE_MAX);
    }
  }
}

PointLayers::PointLayers(const Json& list) {
  if (!list.is_array()) return;
  for (const Json& l : list) {
    if (l.is_object() || detail::is_packed(l)) {
      nodes_.push_back(&l);
      indices_.push_back(SIZE_MAX);
    }
  }
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
  // Whether each of layer_mappings fuses with the next, read once (points share their mappings).
  std::vector<signed char> fused_next;
  const auto fuses = [&](const PointLayers& layers, std::size_t k) {
    const std::size_t m = layers.mapping_index(k);
    if (m == SIZE_MAX) return (*layers[k])["fused_with_next"].get<bool>();
    if (m >= fused_next.size()) fused_next.resize(r["layer_mappings"].size(), -1);
    if (fused_next[m] < 0) fused_next[m] = (*layers[k])["fused_with_next"].get<bool>() ? 1 : 0;
    return fused_next[m] == 1;
  };
  int i = 0;
  for (const auto& p : r["front"]) {
    int fused = 0;
    const PointLayers layers(r, p);
    for (std::size_t k = 0; k < layers.size(); ++k) fused += fuses(layers, k) ? 1 : 0;
    out += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{},{},{},{},{},{}\n", i, num(p, "cycles"),
                       num(p, "offchip_bytes"), num(p, "sram_bytes"), num(p, "energy_pj"), num(p, "edp"), fused,
                       static_cast<std::size_t>(i) == chosen_point(r) ? 1 : 0, num(p, "latency_ms"), num(p, "inferences_per_s"), num(p, "macs_per_cycle"),
                       num(p, "utilisation"));
    ++i;
  }
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

std::string layers_csv(const PointLayers& layers, const Json* live) {
  std::string out =
      "layer,op,ofm_shape,cycles,bound_by,npu_cycles,sram_cycles,dram_cycles,onchip_flash_cycles,offchip_flash_cycles,"
      "macs,macs_per_cycle,utilisation,latency_ms,sram_bytes,dram_bytes,onchip_flash_bytes,offchip_flash_bytes,"
      "reserved_sram_bytes,live_sram_bytes,block_config,traversal,weights,bias,tensors,fused_with_previous,fused_with_next,"
      "cpu_operator\n";
  const auto field = [](const std::string& v) { return common::csv_field(v); };
  const bool have_live = live != nullptr && live->is_array() && live->size() == layers.size();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerRef layer = layers[i];
    const Json& l = *layer;
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
  // Vela's layer of the chosen one's name (the first of that name). Both list the layers in
  // topological order, so it is mostly the one at the same place: Vela's layers are read in step with
  // the chosen ones, and all of them by name only when a name is not among those read so far.
  const PointLayers vela_layers(r["vela_baseline"]["layers"]);
  std::map<std::string, std::size_t> seen;  // the names of vela_layers[0..i]: their first place
  std::optional<std::map<std::string, std::size_t>> by_name;
  const PointLayers chosen_layers(r, r["front"][chosen_point(r)]);
  for (std::size_t i = 0; i < chosen_layers.size(); ++i) {
    const LayerRef chosen = chosen_layers[i];
    const Json& c = *chosen;
    const std::string& name = c["layer"].get_ref<const std::string&>();
    std::optional<LayerRef> here;
    if (i < vela_layers.size()) {
      here.emplace(vela_layers[i]);
      seen.emplace((**here)["layer"].get<std::string>(), i);
    }
    std::size_t at = 0;
    if (const auto found = seen.find(name); found != seen.end()) {
      at = found->second;
    } else {
      if (!by_name) {
        by_name.emplace();
        for (std::size_t k = 0; k < vela_layers.size(); ++k) by_name->emplace((*vela_layers[k])["layer"].get<std::string>(), k);
      }
      const auto found_later = by_name->find(name);
      if (found_later == by_name->end()) continue;
      at = found_later->second;
    }
    const LayerRef vela_layer = here && at == i ? std::move(*here) : vela_layers[at];
    const Json& v = *vela_layer;
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
  if (!r.contains("front") || point >= r["front"].size()) return layers_csv(PointLayers(Json::array()), nullptr);
  const Json& p = r["front"][point];
  return layers_csv(PointLayers(r, p), p.contains("sram_in_use_bytes") ? &p["sram_in_use_bytes"] : nullptr);
}

std::string render_vela_layers_csv(const Json& r) {
  if (!r.contains("vela_baseline")) return layers_csv(PointLayers(Json::array()), nullptr);
  const Json& v = r["vela_baseline"];
  return layers_csv(PointLayers(v["layers"]), v.contains("sram_in_use_bytes") ? &v["sram_in_use_bytes"] : nullptr);
}

namespace {

using Serializer = nlohmann::detail::serializer<Json>;

void write_packed(Serializer& serializer, std::ostream& out, const Json::binary_t& bytes, unsigned indent);

/// Writes a packed section's CBOR as Json::dump(1) writes the JSON it stands for, from its events:
/// no JSON tree of it is made. A packed section inside (a layer mapping's pass, tagged with its
/// subtype) is written the same way where it stands. Leaves go through the serializer, so numbers
/// and strings are written exactly as dump writes them.
class PackedWriter {
 public:
  PackedWriter(Serializer& serializer, std::ostream& out, unsigned indent) : serializer_(serializer), out_(out), indent_(indent) {}

  bool null() { return leaf(Json(nullptr)); }
  bool boolean(bool v) { return leaf(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return leaf(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return leaf(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return leaf(Json(v)); }
  bool string(Json::string_t& v) { return leaf(Json(std::move(v))); }
  bool binary(Json::binary_t& v) {
    before_value();
    if (v.has_subtype() && v.subtype() == detail::kPackedSubtype) {
      write_packed(serializer_, out_, v, depth_indent());
    } else {
      serializer_.dump(Json::binary(std::move(v)), true, false, 1, depth_indent());
    }
    return true;
  }
  bool key(Json::string_t& k) {
    separate();
    serializer_.dump(Json(std::move(k)), false, false, 0, 0);  // the key, quoted and escaped as dump does
    out_.write(": ", 2);
    return true;
  }
  bool start_object(std::size_t n) { return open(n, '{'); }
  bool end_object() { return close('}'); }
  bool start_array(std::size_t n) { return open(n, '['); }
  bool end_array() { return close(']'); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) { throw e; }

 private:
  struct Open {
    bool object;
    bool empty;
    bool first = true;
  };
  /// The indent of a container opened now (as dump_value's `indent`).
  unsigned depth_indent() const { return indent_ + static_cast<unsigned>(open_.size()); }
  /// Before an element of the innermost container: the separator and its indent.
  void separate() {
    Open& top = open_.back();
    if (!top.first) out_.write(",\n", 2);
    top.first = false;
    const std::string pad(depth_indent(), ' ');
    out_ << pad;
  }
  /// Before a value: in a list it is an element (in an object its key came first).
  void before_value() {
    if (!open_.empty() && !open_.back().object) separate();
  }
  bool leaf(const Json& v) {
    before_value();
    serializer_.dump(v, true, false, 1, depth_indent());
    return true;
  }
  bool open(std::size_t n, char bracket) {
    before_value();
    out_.put(bracket);
    if (n == 0) out_.put(static_cast<char>(bracket + 2));  // "{}" or "[]", as dump writes an empty one
    else out_.put('\n');
    open_.push_back({bracket == '{', n == 0});
    return true;
  }
  bool close(char bracket) {
    const Open top = open_.back();
    open_.pop_back();
    if (top.empty) return true;
    out_.put('\n');
    const std::string pad(depth_indent(), ' ');
    out_ << pad;
    out_.put(bracket);
    return true;
  }

  Serializer& serializer_;
  std::ostream& out_;
  unsigned indent_;
  std::vector<Open> open_;
};

void write_packed(Serializer& serializer, std::ostream& out, const Json::binary_t& bytes, unsigned indent) {
  PackedWriter writer(serializer, out, indent);
  auto input = nlohmann::detail::input_adapter(bytes.begin(), bytes.end());
  nlohmann::detail::binary_reader<Json, decltype(input), PackedWriter> reader(std::move(input), nlohmann::detail::input_format_t::cbor);
  reader.sax_parse(nlohmann::detail::input_format_t::cbor, &writer, true, Json::cbor_tag_handler_t::store);
}

/// `v` as Json::dump(1) writes it at `indent`, with every packed section (report_util.hpp)
/// written as the JSON it stands for. Only the containers holding packed sections are walked here.
void dump_value(Serializer& serializer, std::ostream& out, const Json& v, unsigned indent) {
  if (detail::is_packed(v)) {
    write_packed(serializer, out, v.get_binary(), indent);
    return;
  }
  if (!(v.is_object() || v.is_array()) || v.empty()) {
    serializer.dump(v, true, false, 1, indent);
    return;
  }
  const bool object = v.is_object();
  out.put(object ? '{' : '[');
  out.put('\n');
  const std::string pad(indent + 1, ' ');
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out.write(",\n", 2);
    first = false;
    out << pad;
    if (object) {
      serializer.dump(Json(it.key()), false, false, 0, 0);  // the key, quoted and escaped as dump does
      out.write(": ", 2);
    }
    dump_value(serializer, out, *it, indent + 1);
  }
  out.put('\n');
  out.write(pad.data(), static_cast<std::streamsize>(indent));
  out.put(object ? '}' : ']');
}

}  // namespace

std::string document_text(const Json& result) {
  std::ostringstream out;
  write_document(out, result);
  return out.str();
}

namespace {

/// An output buffer writing to a file descriptor in 64 KiB pieces and counting the bytes; past
/// `limit` it only counts (a document over its limit is refused, so its end need not be written).
class FdBuffer : public std::streambuf {
 public:
  FdBuffer(int fd, std::size_t limit) : fd_(fd), limit_(limit) {}
  /// Writes what is buffered; 0 or the first errno.
  int finish() {
    flush();
    return error_;
  }
  std::size_t size() const { return size_; }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      const char ch = traits_type::to_char_type(c);
      put(&ch, 1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    put(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  void put(const char* s, std::size_t n) {
    size_ += n;
    if (size_ > limit_ || error_ != 0) return;
    buffer_.append(s, n);
    if (buffer_.size() >= (std::size_t{1} << 16)) flush();
  }
  void flush() {
    if (error_ == 0 && size_ <= limit_) error_ = common::write_all(fd_, buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  int fd_;
  std::size_t limit_;
  std::size_t size_ = 0;
  int error_ = 0;
  std::string buffer_;
};

}  // namespace

void write_document(std::ostream& out, const Json& result) {
  // document_text's bytes, serialised straight into `out`: a long chain's result.json is hundreds of
  // MB of text, never held whole (nor its doubling buffer while it grows).
  Serializer serializer(nlohmann::detail::output_adapter<char>(out), ' ', Json::error_handler_t::replace);
  dump_value(serializer, out, result, 0);
  out.put('\n');
}

std::vector<std::string> write_outputs(const std::filesystem::path& folder, const Json& result, bool numbered,
                                       std::filesystem::path* written_to) {
  // One folder, renamed into place once; result.json first in case the folder already holds files.
  // A per-layer run (--per-layer) has no front: result.json holds the stage, and there is nothing
  // for front.csv, front.svg, layers.csv or Vela's CSV files to show.
  std::vector<common::OutputFile> files(1);
  files[0].name = "result.json";
  files[0].write = [&](int fd) {
    // Every result.json written is read back by `mapper show` and `mapper eval` (their limit).
    FdBuffer buffer(fd, common::kMaxResultDocumentBytes);
    std::ostream out(&buffer);
    write_document(out, result);
    const int err = buffer.finish();
    if (const std::size_t size = buffer.size(); size > common::kMaxResultDocumentBytes) {
      throw common::UserError({(folder / "result.json").string(), 0, 0}, "",
                              fmt::format("the result would be {} MiB, over the {} MiB a result document may be", size >> 20,
                                          common::kMaxResultDocumentBytes >> 20),
                              "map fewer layers at once, or leave out --keep-pareto");
    }
    return err;
  };
  if (!result["provenance"]["options"].value("per_layer", false)) {
    files.push_back({"front.csv", render_csv(result), {}});
    files.push_back({"front.svg", render_svg(result), {}});
    files.push_back({"layers.csv", render_layers_csv(result, chosen_point(result)), {}});
    if (result.contains("vela_baseline")) {
      files.push_back({"layers_vela.csv", render_vela_layers_csv(result), {}});
      files.push_back({"layers_vs_vela.csv", render_vela_comparison_csv(result), {}});
    }
    for (auto& [name, text] : render_vela_csvs(result)) files.push_back({name, std::move(text), {}});  // Vela's CSV files
  }
  const std::filesystem::path claimed = common::write_folder_atomic(folder, files, "--out", numbered);
  if (written_to != nullptr) *written_to = claimed;
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  return names;
}

}  // namespace npumap::report
