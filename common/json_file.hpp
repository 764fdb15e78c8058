#pragma once
// Reading a JSON input file (pass lists, block-config records, result.json): one reader, so every
// JSON input gets the same limits and the same one-line errors: a missing file, a folder, a file over
// the input size limit (common/files.hpp), nesting deeper than kMaxJsonDepth, a syntax error or a
// number out of range (`1e400`), each located at line:col where the text gives one.

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "common/files.hpp"
#include "common/user_error.hpp"

namespace npumap::common {

/// The deepest nesting of lists and objects a JSON input may have (result.json needs 8).
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Throws UserError at the first bracket that opens a level deeper than kMaxJsonDepth; the parser
/// and every recursive walk of the value (dump(), error messages) then stay shallow.
void check_json_depth(const std::string& path, const std::string& text);
/// The UserError for JSON text that failed to parse: file:line:col of the error, and `hint`.
UserError json_syntax_error(const std::string& path, const std::string& text, const nlohmann::json::exception& e,
                            std::size_t byte, const std::string& hint);

/// Parses JSON text read from `path` as `Json` (nlohmann::json or ordered_json, which keeps key order).
template <class Json = nlohmann::ordered_json>
Json parse_json_text(const std::string& path, const std::string& text, const std::string& hint) {
  check_json_depth(path, text);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw json_syntax_error(path, text, e, e.byte, hint);
  } catch (const nlohmann::json::exception& e) {  // out_of_range.406: a number that overflows
    throw json_syntax_error(path, text, e, 0, hint);
  }
}

/// As parse_json_text, passing `callback` (nlohmann's parser callback: return false to drop a value)
/// to the parser, so sections a reader does not need are never built.
template <class Json>
Json parse_json_text(const std::string& path, const std::string& text, const std::string& hint,
                     const typename Json::parser_callback_t& callback) {
  check_json_depth(path, text);
  try {
    return Json::parse(text, callback);
  } catch (const nlohmann::json::parse_error& e) {
    throw json_syntax_error(path, text, e, e.byte, hint);
  } catch (const nlohmann::json::exception& e) {
    throw json_syntax_error(path, text, e, 0, hint);
  }
}

/// Parses the JSON file at `path` as `Json`.
template <class Json = nlohmann::ordered_json>
Json read_json_file(const std::string& path, const std::string& hint) {
  return parse_json_text<Json>(path, read_input_file(path), hint);
}

/// Parses the JSON file at `path`, which may be a result document (a JSON object, up to
/// result_document_limit(); anything else has the text limit: read_result_or_text_file).
template <class Json = nlohmann::ordered_json>
Json read_result_json_file(const std::string& path, const std::string& hint) {
  return parse_json_text<Json>(path, read_result_or_text_file(path), hint);
}

}  // namespace npumap::common
