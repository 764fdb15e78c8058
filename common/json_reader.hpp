#pragma once
// Checked reading of JSON values (pass lists, block-config records, result.json): every accessor that
// can fail throws UserError naming the file and the key path (JSON carries no line numbers once
// parsed, so a path such as `records[3].input.weights.shape` is the location), with a hint.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace npumap::common {

/// Where a JSON value sits: its file and key path.
struct JsonPath {
  std::string file;
  std::string path;

  /// The path of a member: `path.key`.
  JsonPath at(std::string_view key) const;
  /// The path of a list element: `path[i]`.
  JsonPath index(std::size_t i) const;
  /// Throws UserError at this path.
  [[noreturn]] void fail(const std::string& message, const std::string& hint = {}) const;
};

/// Rejects a non-object and any key not in `allowed` (hint: the closest allowed key, else all of them).
void check_keys(const nlohmann::json& obj, const JsonPath& where, const std::vector<std::string>& allowed);
/// The member `key`, or nullptr.
const nlohmann::json* find(const nlohmann::json& obj, std::string_view key);
/// The member `key`; a missing one throws "missing required key" with `hint`.
const nlohmann::json& require(const nlohmann::json& obj, std::string_view key, const JsonPath& where,
                              const std::string& hint = {});
/// An integer in [min_value, max_value].
std::int64_t as_int(const nlohmann::json& v, const JsonPath& where, std::int64_t min_value, std::int64_t max_value);
/// A finite number.
double as_double(const nlohmann::json& v, const JsonPath& where);
bool as_bool(const nlohmann::json& v, const JsonPath& where);
std::string as_string(const nlohmann::json& v, const JsonPath& where);
/// "a, b, c".
std::string joined(const std::vector<std::string>& names);

}  // namespace npumap::common
