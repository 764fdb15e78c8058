// A minimal XML well-formedness checker for the SVG files the mapper writes (balanced tags, one root
// element, quoted and unique attributes, valid entity and character references), so the tests need
// no external tool. outputs_test.cpp checks that it can say no.

#pragma once

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace npumap::cli_test {

inline bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
inline bool is_name_char(char c) {
  return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}

/// "" if every '&' in `text` starts a valid entity or character reference, else an error.
inline std::string check_references(const std::string& text) {
  for (std::size_t i = text.find('&'); i != std::string::npos; i = text.find('&', i + 1)) {
    const std::size_t semi = text.find(';', i);
    if (semi == std::string::npos) return "bare `&`";
    const std::string ref = text.substr(i + 1, semi - i - 1);
    static const std::set<std::string> named = {"lt", "gt", "amp", "quot", "apos"};
    bool ok = named.count(ref) > 0;
    if (!ok && ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string digits = ref.substr(hex ? 2 : 1);
      ok = !digits.empty() && std::all_of(digits.begin(), digits.end(), [&](char c) {
        return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : std::isdigit(static_cast<unsigned char>(c)) != 0;
      });
    }
    if (!ok) return "bad reference `&" + ref + ";`";
  }
  return {};
}

/// "" if `xml` is a well-formed document whose single root element is `root`, else the first problem.
inline std::string check_xml(const std::string& xml, const std::string& root) {
  std::size_t i = 0;
  const auto at = [&](const std::string& s) { return xml.compare(i, s.size(), s) == 0; };
  const auto skip_ws = [&] {
    while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
  };
  const auto read_name = [&]() -> std::string {
    if (i >= xml.size() || !is_name_start(xml[i])) return {};
    const std::size_t start = i;
    while (i < xml.size() && is_name_char(xml[i])) ++i;
    return xml.substr(start, i - start);
  };
  const auto where = [&] { return " at byte " + std::to_string(i); };

  if (at("<?xml")) {
    const std::size_t end = xml.find("?>", i);
    if (end == std::string::npos) return "unterminated XML declaration";
    i = end + 2;
  }
  std::vector<std::string> open;
  int roots = 0;
  while (i < xml.size()) {
    if (at("<!--")) {
      const std::size_t end = xml.find("-->", i);
      if (end == std::string::npos) return "unterminated comment" + where();
      i = end + 3;
    } else if (at("</")) {
      i += 2;
      const std::string name = read_name();
      skip_ws();
      if (i >= xml.size() || xml[i] != '>') return "malformed end tag" + where();
      ++i;
      if (open.empty()) return "end tag </" + name + "> without a start tag" + where();
      if (open.back() != name) return "</" + name + "> closes <" + open.back() + ">" + where();
      open.pop_back();
    } else if (at("<")) {
      ++i;
      const std::string name = read_name();
      if (name.empty()) return "bad tag name" + where();
      if (open.empty()) {
        ++roots;
        if (roots > 1) return "more than one root element (<" + name + ">)" + where();
        if (name != root) return "root element is <" + name + ">, expected <" + root + ">";
      }
      std::set<std::string> attributes;
      while (true) {
        const std::size_t before = i;
        skip_ws();
        if (at("/>")) {
          i += 2;
          break;
        }
        if (at(">")) {
          ++i;
          open.push_back(name);
          break;
        }
        if (i == before) return "no space before attribute in <" + name + ">" + where();
        const std::string attr = read_name();
        if (attr.empty()) return "bad attribute name in <" + name + ">" + where();
        if (!attributes.insert(attr).second) return "duplicate attribute " + attr + where();
        skip_ws();
        if (i >= xml.size() || xml[i] != '=') return "attribute " + attr + " has no value" + where();
        ++i;
        skip_ws();
        if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\'')) return "attribute " + attr + " is not quoted" + where();
        const char quote = xml[i++];
        const std::size_t end = xml.find(quote, i);
        if (end == std::string::npos) return "unterminated attribute " + attr + where();
        const std::string value = xml.substr(i, end - i);
        if (value.find('<') != std::string::npos) return "`<` in attribute " + attr + where();
        const std::string ref = check_references(value);
        if (!ref.empty()) return ref + " in attribute " + attr + where();
        i = end + 1;
      }
    } else {
      const std::size_t end = std::min(xml.find('<', i), xml.size());
      const std::string text = xml.substr(i, end - i);
      if (open.empty() && !std::all_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
        return "text outside the root element" + where();
      }
      const std::string ref = check_references(text);
      if (!ref.empty()) return ref + " in text" + where();
      i = end;
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (roots == 0) return "no root element";
  return {};
}

}  // namespace npumap::cli_test
