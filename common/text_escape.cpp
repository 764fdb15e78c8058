#include "common/text_escape.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace npumap::common {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

/// The length (1-4) of the well-formed UTF-8 sequence at s[i] and its code point, or 0 when the
/// bytes there are not one (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
std::size_t sequence_at(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1Fu, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0Fu, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (b(k) & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/// Calls f(code point, bytes) for each character of valid_utf8(s) (U+FFFD for each bad byte).
template <typename F>
void for_each_char(std::string_view s, F&& f) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = sequence_at(s, i, cp);
    if (n == 0) {
      f(0xFFFDu, kReplacement);
      ++i;
    } else {
      f(cp, s.substr(i, n));
      i += n;
    }
  }
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_char(s, [&](std::uint32_t, std::string_view bytes) { out += bytes; });
  return out;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = sequence_at(s, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string yaml_quote(std::string_view s) {
  std::string out = "\"";
  for_each_char(s, [&](std::uint32_t cp, std::string_view bytes) {
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += bytes;
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", cp);
    } else if ((cp >= 0x80 && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) {
      out += fmt::format("\\u{:04x}", cp);  // YAML's c-printable leaves these out
    } else {
      out += bytes;
    }
  });
  return out + "\"";
}

std::string yaml_comment_text(std::string_view s) {
  std::string out;
  for_each_char(s, [&](std::uint32_t cp, std::string_view bytes) {
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", cp);
    } else if ((cp >= 0x80 && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) {
      out += fmt::format("\\u{:04x}", cp);
    } else {
      out += bytes;
    }
  });
  return out;
}

std::string csv_field(std::string_view s) {
  std::string v;
  bool quote = false;
  for_each_char(s, [&](std::uint32_t cp, std::string_view bytes) {
    if (cp == 0) {
      v += kReplacement;
      return;
    }
    if (cp == ',' || cp == '"' || cp == '\r' || cp == '\n') quote = true;
    if (cp == '"') v += '"';
    v += bytes;
  });
  return quote ? "\"" + v + "\"" : v;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_char(s, [&](std::uint32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>': out += "&gt;"; return;
      case '"': out += "&quot;"; return;
      case '\'': out += "&apos;"; return;
      default: break;
    }
    const bool allowed = cp == '\t' || cp == '\n' || cp == '\r' || (cp >= 0x20 && cp != 0xFFFE && cp != 0xFFFF);
    out += allowed ? bytes : kReplacement;
  });
  return out;
}

}  // namespace npumap::common
