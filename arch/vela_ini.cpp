// configparser's ini dialect (see vela_ini.hpp for the rules). The reader follows
// RawConfigParser._read line by line: strip full-line comments, keep blank lines inside a value,
// decide between a continuation (indented deeper than the option line) and a new header or option,
// then join each option's lines and drop trailing blank ones.

#include "arch/vela_ini.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "common/files.hpp"
#include "common/user_error.hpp"
#include "common/yaml_reader.hpp"

namespace npumap::arch {
namespace {

bool ini_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

/// Python's str.ini_strip() for ASCII whitespace (a line has no '\n' or '\r' left).
std::string_view ini_strip(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && ini_blank(s[b])) ++b;
  while (e > b && ini_blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

/// The lines of `text`, split at \n, \r\n or \r (Python's universal newlines).
std::vector<std::string_view> ini_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      lines.push_back(text.substr(start, i - start));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

/// An option being read: its lines (continuations appended) until the file ends.
struct PendingOption {
  IniOption option;
  std::vector<std::string> lines;
};

struct PendingSection {
  IniSection section;
  std::vector<PendingOption> options;
  std::vector<int> header_lines;  ///< lines of its headers in this file ([DEFAULT] may repeat)
};

}  // namespace

std::string ini_key(std::string_view key) {
  std::string out(key);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const IniOption* IniSection::find(std::string_view key) const {
  const std::string k = ini_key(key);
  for (const IniOption& o : options)
    if (ini_key(o.key) == k) return &o;
  return nullptr;
}

const IniSection* IniFile::find(std::string_view name) const {
  for (const IniSection& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

IniFile parse_ini(const std::string& text_in, const std::string& file) {
  common::check_utf8(text_in, file);
  std::string_view text(text_in);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

  std::vector<PendingSection> sections;
  std::optional<std::size_t> current;    // index into `sections`
  std::optional<std::size_t> option;     // index into the current section's options, while one is open
  std::size_t indent_level = 0;

  const std::vector<std::string_view> lines = ini_lines(text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const int lineno = static_cast<int>(n) + 1;
    const std::string_view line = lines[n];
    const std::string_view value = ini_strip(line);
    const bool comment = !value.empty() && (value.front() == ';' || value.front() == '#');
    if (value.empty() || comment) {
      // A blank line inside a value stays in it (configparser's empty_lines_in_values); a comment
      // line adds nothing and does not end the value.
      if (!comment && current && option) sections[*current].options[*option].lines.emplace_back();
      continue;
    }
    const std::size_t indent = static_cast<std::size_t>(std::find_if_not(line.begin(), line.end(), ini_blank) - line.begin());
    if (current && option && indent > indent_level) {
      sections[*current].options[*option].lines.emplace_back(value);
      continue;
    }
    indent_level = indent;
    // A header: `[` ... `]`, the name running to the last `]` (configparser's `\[(?P<header>.+)\]`).
    const std::size_t close = value.rfind(']');
    if (value.front() == '[' && close != std::string_view::npos && close >= 2) {
      const std::string name(value.substr(1, close - 1));
      option.reset();
      auto it = std::find_if(sections.begin(), sections.end(), [&](const PendingSection& s) { return s.section.name == name; });
      if (it != sections.end() && name != kIniDefaultSection) {
        throw common::UserError({file, lineno, static_cast<int>(indent) + 1}, "",
                                fmt::format("section [{}] appears twice in this file (first at line {})", name,
                                            it->header_lines.front()),
                                "merge the two sections, or rename one; configparser (and Vela) refuse a repeated section");
      }
      if (it == sections.end()) {
        PendingSection s;
        s.section.name = name;
        s.section.line = lineno;
        sections.push_back(std::move(s));
        it = sections.end() - 1;
      }
      it->header_lines.push_back(lineno);
      current = static_cast<std::size_t>(it - sections.begin());
      continue;
    }
    if (!current) {
      throw common::UserError({file, lineno, static_cast<int>(indent) + 1}, "",
                              fmt::format("`{}` comes before any section header", std::string(value)),
                              "start the file with a section such as [System_Config.My_System] or [Memory_Mode.My_Mode]");
    }
    // An option: the key runs to the first `=` or `:`.
    const std::size_t delim = value.find_first_of("=:");
    if (delim == std::string_view::npos) {
      throw common::UserError({file, lineno, static_cast<int>(indent) + 1}, "",
                              fmt::format("`{}` is not an option: expected `key = value`", std::string(value)),
                              "write key = value (or key: value); a line starting with ; or # is a comment");
    }
    const std::string key(ini_strip(value.substr(0, delim)));
    if (key.empty()) {
      throw common::UserError({file, lineno, static_cast<int>(indent) + 1}, "",
                              fmt::format("`{}` has no key before `{}`", std::string(value), value[delim]),
                              "write key = value");
    }
    PendingSection& sec = sections[*current];
    for (const PendingOption& o : sec.options) {
      if (ini_key(o.option.key) == ini_key(key)) {
        throw common::UserError({file, lineno, static_cast<int>(indent) + 1}, sec.section.name + "." + key,
                                fmt::format("set twice in [{}] (first at line {}; keys ignore case)", sec.section.name,
                                            o.option.line),
                                "keep one of the two lines; configparser (and Vela) refuse a repeated key");
      }
    }
    const std::string_view rest = value.substr(delim + 1);
    const std::string_view val = ini_strip(rest);
    PendingOption po;
    po.option.key = key;
    po.option.line = lineno;
    po.option.key_column = static_cast<int>(indent) + 1;
    const std::size_t value_offset = static_cast<std::size_t>(value.data() - line.data()) + delim + 1 +
                                     static_cast<std::size_t>(std::find_if_not(rest.begin(), rest.end(), ini_blank) - rest.begin());
    po.option.value_column = static_cast<int>(value_offset) + 1;
    po.lines.emplace_back(val);
    sec.options.push_back(std::move(po));
    option = sec.options.size() - 1;
  }

  IniFile out;
  out.path = file;
  for (PendingSection& s : sections) {
    for (PendingOption& o : s.options) {
      std::string joined;
      for (std::size_t i = 0; i < o.lines.size(); ++i) joined += (i ? "\n" : "") + o.lines[i];
      while (!joined.empty() && (joined.back() == '\n' || ini_blank(joined.back()))) joined.pop_back();
      o.option.value = std::move(joined);
      s.section.options.push_back(std::move(o.option));
    }
    out.sections.push_back(std::move(s.section));
  }
  return out;
}

IniFile read_ini_file(const std::string& path) { return parse_ini(common::read_input_file(path), path); }

namespace {

constexpr int kMaxInterpolationDepth = 10;

/// The raw value of `name` in the section, else in the defaults.
const IniOption* lookup(std::string_view name, const IniSection& section, const IniSection* defaults) {
  if (const IniOption* o = section.find(name)) return o;
  return defaults != nullptr ? defaults->find(name) : nullptr;
}

void interpolate_into(std::string& out, const IniOption& option, std::string_view rest, const IniSection& section,
                      const IniSection* defaults, const std::string& file, int depth) {
  const auto fail = [&](const std::string& message, const std::string& hint) {
    throw common::UserError({file, option.line, option.value_column}, section.name + "." + option.key, message, hint);
  };
  if (depth > kMaxInterpolationDepth)
    fail("`%(...)s` references nest more than 10 deep", "a value refers to itself through %(name)s; break the loop");
  while (!rest.empty()) {
    const std::size_t p = rest.find('%');
    if (p == std::string_view::npos) {
      out += rest;
      return;
    }
    out += rest.substr(0, p);
    rest.remove_prefix(p);
    if (rest.size() >= 2 && rest[1] == '%') {
      out += '%';
      rest.remove_prefix(2);
    } else if (rest.size() >= 2 && rest[1] == '(') {
      const std::size_t close = rest.find(')');
      if (close == std::string_view::npos || close == 2 || close + 1 >= rest.size() || rest[close + 1] != 's')
        fail(fmt::format("bad `%(name)s` reference in `{}`", std::string(rest)), "write %(key)s, or %% for a literal %");
      const std::string name(rest.substr(2, close - 2));
      rest.remove_prefix(close + 2);
      const IniOption* ref = lookup(name, section, defaults);
      if (ref == nullptr)
        fail(fmt::format("`%({})s` names no key of [{}]", name, section.name), "configparser's %(key)s reads a key of the same section or [DEFAULT]");
      if (ref->value.find('%') != std::string::npos) {
        interpolate_into(out, option, ref->value, section, defaults, file, depth + 1);
      } else {
        out += ref->value;
      }
    } else {
      fail(fmt::format("`%` must be followed by `%` or `(`, found `{}`", std::string(rest)),
           "configparser (and so Vela) reads %(key)s references in values; write %% for a literal %");
    }
  }
}

}  // namespace

std::string interpolate(const IniOption& option, const IniSection& section, const IniSection* defaults,
                        const std::string& file) {
  if (option.value.find('%') == std::string::npos) return option.value;
  std::string out;
  interpolate_into(out, option, option.value, section, defaults, file, 1);
  return out;
}

}  // namespace npumap::arch
