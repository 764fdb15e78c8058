#pragma once
// A thin, error-reporting view of a parsed YAML document shared by the arch, sweep and workload
// loaders. Every accessor that can fail throws UserError with file:line:col (1-based; yaml-cpp's
// marks are 0-based and carry no file name, so this adds both), the dotted key path, and a hint.
// The document is built from yaml-cpp's parser events into a compact tree of our own (YamlDocument):
// yaml-cpp's node tree costs about 0.5 KB per node, so a 50,000-layer workload's million nodes took
// over 600 MB while loading; the compact tree holds each node in 20 bytes and its text once.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/stop_token.hpp"
#include "common/user_error.hpp"

namespace YAML {
class Node;
}

namespace npumap::common {

/// Text inputs must be UTF-8 (YAML 1.2, and every name read ends up in result.json, which is UTF-8 too):
/// throws UserError at the line:col of the first invalid byte sequence (stray continuation bytes,
/// truncated or overlong forms, surrogates, code points past U+10FFFF) in `text`, read from `file`.
void check_utf8(const std::string& text, const std::string& file);

/// One YAML document as yaml-cpp's parser reads it, held compactly: the nodes in one vector, each
/// collection's children as a range of a second one, every scalar's text in one string. An alias is
/// the node its anchor names (shared, as in yaml-cpp's tree; a node may so contain itself). Every key
/// of a map is a scalar (YamlNode::load_string refuses others).
struct YamlDocument {
  enum class Kind : std::uint8_t { Null, Scalar, Sequence, Map };
  struct Node {
    std::int32_t line = -1;    ///< 0-based, as yaml-cpp's Mark; -1 for a node with no position
    std::int32_t column = -1;
    std::uint32_t begin = 0;   ///< a scalar's offset in `text`; a collection's first entry in `children`
    std::uint32_t size = 0;    ///< a scalar's length; a collection's entry count (a map's keys and values alternate)
    Kind kind = Kind::Null;
  };
  std::string file;                     ///< the name used in messages
  std::vector<Node> nodes;              ///< nodes[root] is the document
  std::vector<std::uint32_t> children;  ///< node indices
  std::string text;                     ///< the scalars' text, end to end
  std::uint32_t root = 0;

  std::string_view scalar(std::uint32_t n) const { return std::string_view(text).substr(nodes[n].begin, nodes[n].size); }
};

/// A node of a YamlDocument together with its key path (e.g. `layers[3].kernel`).
class YamlNode {
 public:
  YamlNode(std::shared_ptr<const YamlDocument> doc, std::uint32_t node, std::string path);

  /// Parse a file; a missing file or a syntax error becomes a UserError.
  static YamlNode load_file(const std::string& file);
  /// Parse text (for tests and embedded presets); `file` is the name used in messages.
  static YamlNode load_string(const std::string& text, const std::string& file);
  /// As load_string(text, file), polling `stop` while it parses (every 64 KiB of text after the first
  /// MiB, which is parsed whole): throws
  /// Interrupted("loading the workload") once it asks to stop.
  static YamlNode load_string(const std::string& text, const std::string& file, const StopToken& stop);
  /// A copy of a tree built in code (a sweep point's overrides): its nodes have no position, so
  /// their errors point at line 0; every key must be a scalar.
  static YamlNode from_yaml(const YAML::Node& node, const std::string& file);

  const std::string& path() const { return path_; }
  const std::string& file() const { return doc_->file; }
  SourceLocation location() const;

  bool is_map() const { return kind() == YamlDocument::Kind::Map; }
  bool is_sequence() const { return kind() == YamlDocument::Kind::Sequence; }
  bool is_scalar() const { return kind() == YamlDocument::Kind::Scalar; }
  bool is_null() const { return kind() == YamlDocument::Kind::Null; }

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
  const YamlDocument::Node& node() const { return doc_->nodes[node_]; }
  YamlDocument::Kind kind() const { return node().kind; }
  /// The node index of entry `i` of this collection.
  std::uint32_t entry(std::uint32_t i) const { return doc_->children[node().begin + i]; }
  YamlNode child(std::uint32_t node, std::string path) const { return YamlNode(doc_, node, std::move(path)); }

  std::shared_ptr<const YamlDocument> doc_;
  std::uint32_t node_ = 0;
  std::string path_;
};

}  // namespace npumap::common
