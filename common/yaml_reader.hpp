#pragma once
// A thin, error-reporting view of a yaml-cpp node shared by the arch and workload loaders.
// Every accessor that can fail throws UserError with file:line:col (1-based; yaml-cpp's marks are
// 0-based and carry no file name, so this adds both), the dotted key path, and a hint.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/stop_token.hpp"
#include "common/user_error.hpp"

namespace npumap::common {

/// Text inputs must be UTF-8 (YAML 1.2, and every name read ends up in result.json, which is UTF-8 too):
/// throws UserError at the line:col of the first invalid byte sequence (stray continuation bytes,
/// truncated or overlong forms, surrogates, code points past U+10FFFF) in `text`, read from `file`.
void check_utf8(const std::string& text, const std::string& file);

/// A YAML node together with the file it came from and its key path (e.g. `layers[3].kernel`).
class YamlNode {
 public:
  YamlNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path);

  /// Parse a file; a missing file or a syntax error becomes a UserError.
  static YamlNode load_file(const std::string& file);
  /// Parse text (for tests and embedded presets); `file` is the name used in messages.
  static YamlNode load_string(const std::string& text, const std::string& file);
  /// As load_string(text, file), polling `stop` while it parses (every 64 KiB of text after the first
  /// MiB, which is parsed whole): throws
  /// Interrupted("loading the workload") once it asks to stop.
  static YamlNode load_string(const std::string& text, const std::string& file, const StopToken& stop);

  const YAML::Node& raw() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  SourceLocation location() const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_ || node_.IsNull(); }

  /// Throws unless this node is a map / a sequence.
  void expect_map() const;
  void expect_sequence() const;

  bool has(std::string_view key) const;
  /// Required child: a missing key is an error that names it.
  YamlNode at(std::string_view key) const;
  std::optional<YamlNode> find(std::string_view key) const;
  /// Sequence elements.
  std::vector<YamlNode> items() const;
  /// Map entries in file order.
  std::vector<std::pair<std::string, YamlNode>> entries() const;
  /// Rejects any key not in `allowed`, pointing at the key and suggesting the closest allowed one.
  void check_keys(std::initializer_list<std::string_view> allowed) const;
  void check_keys(const std::vector<std::string>& allowed) const;

  std::string as_string() const;
  bool as_bool() const;
  double as_double() const;
  std::int64_t as_int() const;
  /// An integer > 0 (sizes, counts).
  std::int64_t as_positive_int() const;
  std::vector<std::int64_t> as_int_list() const;
  /// One of `choices`, else an error listing them (with the closest as hint).
  std::string as_choice(const std::vector<std::string>& choices) const;

  /// A UserError located at this node.
  UserError error(const std::string& message, const std::string& hint = {}) const;

 private:
  YamlNode child(const YAML::Node& node, std::string path) const;

  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
};

}  // namespace npumap::common
