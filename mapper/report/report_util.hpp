#pragma once
// Small helpers the report's renderings share (report.cpp, text_report.cpp): reading numbers and
// shapes from the result document, and fitting text into columns. Internal to npumap::report.

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace npumap::report::detail {

using Json = nlohmann::ordered_json;

/// A per-layer section held packed in the document built in memory: a binary node with this subtype
/// holds the section's CBOR bytes (a layer's `pass`: about 100 values, some 10 KB as a JSON tree,
/// under 1 KB packed; a whole layer mapping, its pass packed inside). write_document writes it out
/// as the JSON it stands for, so result.json is the same; a result.json read back holds plain JSON,
/// which `unpacked` returns as it is.
inline constexpr std::uint8_t kPackedSubtype = 0x4a;

inline bool is_packed(const Json& v) {
  return v.is_binary() && v.get_binary().has_subtype() && v.get_binary().subtype() == kPackedSubtype;
}

/// `v` packed (see kPackedSubtype); its key order is kept. Written into a buffer kept per thread
/// (to_cbor writes byte by byte, growing its vector), then copied once into one of the exact size.
template <class J>
Json packed(const J& v) {
  thread_local std::vector<std::uint8_t> scratch;
  scratch.clear();
  J::to_cbor(v, scratch);
  return Json::binary(std::vector<std::uint8_t>(scratch.begin(), scratch.end()), kPackedSubtype);
}

/// The JSON a packed node stands for, or `v` itself. A packed section nested in it (a layer
/// mapping's pass) stays packed: its CBOR tag keeps the subtype.
inline Json unpacked(const Json& v) {
  return is_packed(v) ? Json::from_cbor(v.get_binary(), true, true, Json::cbor_tag_handler_t::store) : v;
}

/// The layer's `pass` (unpacked), or null when it has none.
inline Json layer_pass(const Json& layer) {
  const auto it = layer.find("pass");
  return it == layer.end() ? Json() : unpacked(*it);
}

/// The number at `key`, or 0 when it is absent or not a number.
inline double num(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

/// "[1,16,16,16]" from a shape written as a list (or as text, by older results).
inline std::string shape_str(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::vector<std::int64_t> dims;
  for (const auto& d : v) dims.push_back(d.get<std::int64_t>());
  return fmt::format("[{}]", fmt::join(dims, ","));
}

/// "1 point", "4 points".
inline std::string plural(std::uint64_t n, const std::string& word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

/// Columns `text` takes on a terminal: its UTF-8 code points (the report's text is left-to-right,
/// without wide characters).
inline std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

/// `text` in at most `width` columns: unchanged when it fits, else shortened with "..." in the
/// middle, keeping more of the end (a TFLite name's last parts say which layer it is). Cut at
/// UTF-8 character boundaries.
inline std::string ellipsize(const std::string& text, std::size_t width) {
  if (display_width(text) <= width) return text;
  if (width <= 3) return std::string(width, '.');
  const std::size_t keep = width - 3, head = keep / 3, tail = keep - head;
  // Byte offsets of the code points.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  const std::size_t n = starts.size();
  return text.substr(0, starts[head]) + "..." + text.substr(starts[n - tail]);
}

/// A name in at most `width` columns, keeping its end: a path-like name ("Model/Conv2d_3/Relu6")
/// loses leading components first (".../Conv2d_3/Relu6"), so the part that tells layers apart
/// stays; what is still too long is shortened in the middle (ellipsize).
inline std::string shorten_name(const std::string& name, std::size_t width) {
  if (display_width(name) <= width) return name;
  for (std::size_t cut = name.find('/'); cut != std::string::npos; cut = name.find('/', cut + 1)) {
    const std::string tail = "..." + name.substr(cut);
    if (display_width(tail) <= width) return tail;
  }
  return ellipsize(name, width);
}

/// `text` left-aligned in `width` columns (longer text is not cut: callers ellipsize first).
inline std::string pad(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

/// `text` right-aligned in `width` columns.
inline std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

}  // namespace npumap::report::detail
