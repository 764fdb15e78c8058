#pragma once
// Reading a JSON input file (pass lists, block-config records, result.json): one reader, so every
// JSON input gets the same error for a missing file or a syntax error, located at line:col.

#include <string>

#include <nlohmann/json.hpp>

#include "common/user_error.hpp"

namespace npumap::common {

/// The bytes of an input file; a file that cannot be opened throws UserError naming it.
std::string read_input_file(const std::string& path);
/// The UserError for JSON text that failed to parse: file:line:col of the error, and `hint`.
UserError json_syntax_error(const std::string& path, const std::string& text, const nlohmann::json::parse_error& e,
                            const std::string& hint);

/// Parses the JSON file at `path` as `Json` (nlohmann::json or ordered_json, which keeps key order).
template <class Json = nlohmann::ordered_json>
Json read_json_file(const std::string& path, const std::string& hint) {
  const std::string text = read_input_file(path);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw json_syntax_error(path, text, e, hint);
  }
}

}  // namespace npumap::common
