#include "common/json_reader.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::common {

JsonPath JsonPath::at(std::string_view key) const {
  return JsonPath{file, path.empty() ? std::string(key) : path + "." + std::string(key)};
}

JsonPath JsonPath::index(std::size_t i) const { return JsonPath{file, fmt::format("{}[{}]", path, i)}; }

void JsonPath::fail(const std::string& message, const std::string& hint) const {
  throw UserError(SourceLocation{file, 0, 0}, path, message, hint);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void check_keys(const nlohmann::json& obj, const JsonPath& where, const std::vector<std::string>& allowed) {
  if (!obj.is_object()) where.fail("expected an object");
  for (const auto& item : obj.items()) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == item.key();
    if (!ok) {
      const std::string near = closest_match(item.key(), allowed);
      where.at(item.key()).fail("unknown key", near.empty() ? "valid keys: " + joined(allowed)
                                                             : "did you mean '" + near + "'?");
    }
  }
}

const nlohmann::json* find(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const nlohmann::json& require(const nlohmann::json& obj, std::string_view key, const JsonPath& where,
                              const std::string& hint) {
  const nlohmann::json* v = find(obj, key);
  if (v == nullptr) where.at(key).fail("missing required key", hint);
  return *v;
}

std::int64_t as_int(const nlohmann::json& v, const JsonPath& where, std::int64_t min_value, std::int64_t max_value) {
  if (!v.is_number_integer()) where.fail("expected an integer, got " + v.dump());
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max_value)) {
    where.fail(fmt::format("{} is out of range", v.get<std::uint64_t>()),
               fmt::format("expected an integer from {} to {}", min_value, max_value));
  }
  const auto x = v.get<std::int64_t>();
  if (x < min_value || x > max_value) {
    where.fail(fmt::format("{} is out of range", x), fmt::format("expected an integer from {} to {}", min_value, max_value));
  }
  return x;
}

double as_double(const nlohmann::json& v, const JsonPath& where) {
  if (!v.is_number()) where.fail("expected a number, got " + v.dump());
  const double x = v.get<double>();
  if (!std::isfinite(x)) where.fail("expected a finite number");
  return x;
}

bool as_bool(const nlohmann::json& v, const JsonPath& where) {
  if (!v.is_boolean()) where.fail("expected true or false, got " + v.dump());
  return v.get<bool>();
}

std::string as_string(const nlohmann::json& v, const JsonPath& where) {
  if (!v.is_string()) where.fail("expected a string, got " + v.dump());
  return v.get<std::string>();
}

}  // namespace npumap::common
