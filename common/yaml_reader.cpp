#include "common/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <yaml-cpp/eventhandler.h>

#include "common/files.hpp"

namespace npumap::common {
namespace {

std::string join_path(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

void check_utf8(const std::string& text, const std::string& file) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if (c < 0x80) {
      n = 1, cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      n = 2, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 4, cp = c & 0x07u, min = 0x10000;
    }
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!ok) {
      throw UserError({file, line, column}, "", fmt::format("not UTF-8 text (byte 0x{:02x})", c),
                      "save the file as UTF-8");
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
}

YamlNode::YamlNode(std::shared_ptr<const YamlDocument> doc, std::uint32_t node, std::string path)
    : doc_(std::move(doc)), node_(node), path_(std::move(path)) {}

namespace {

/// yaml-cpp keeps the first of two equal keys and drops the second silently; a repeated key is
/// almost always an editing mistake, so it is an error in every input. The walk is iterative and
/// bounded (depth and node count, aliases counted where they are used), so a self-referencing alias
/// or an alias bomb ends in an error, not a stack overflow or minutes of work.
void check_no_duplicate_keys(const YamlDocument& doc, const StopToken& stop) {
  constexpr std::uint32_t kMaxDepth = 256;
  constexpr std::size_t kMaxNodes = 4'000'000;
  using Kind = YamlDocument::Kind;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{doc.root, 0}};  // node, depth: 8 bytes an entry
  std::size_t visited = 0;
  while (!stack.empty()) {
    auto [index, depth] = stack.back();
    stack.pop_back();
    const YamlDocument::Node& node = doc.nodes[index];
    // Polled as the parse is (a 50,000-layer workload has a million nodes: most of a second).
    if (visited % 4096 == 4095) throw_if_stopped(stop, "loading the workload");
    if (++visited > kMaxNodes || depth > kMaxDepth) {
      throw UserError({doc.file, node.line + 1, node.column + 1}, "",
                      depth > kMaxDepth ? "nesting is deeper than 256 levels" : "the document expands to over 4 million nodes",
                      "an alias that refers to itself, or aliases nested many times over?");
    }
    if (node.kind == Kind::Map) {
      std::set<std::string_view> seen;
      for (std::uint32_t i = 0; i < node.size; i += 2) {
        const std::uint32_t key = doc.children[node.begin + i];
        const YamlDocument::Node& k = doc.nodes[key];
        if (k.kind != Kind::Scalar) {
          // `[a, b]: 1` or `? {x: 1}`: every reader matches keys as text, so a list or map as a key
          // could only be misread.
          throw UserError({doc.file, k.line + 1, k.column + 1}, "",
                          k.kind == Kind::Null ? "a key cannot be empty or null" : "a key must be a single value, not a list or mapping",
                          "write `name: value`");
        }
        if (!seen.insert(doc.scalar(key)).second) {
          throw UserError({doc.file, k.line + 1, k.column + 1}, std::string(doc.scalar(key)), "duplicate key",
                          "keep one of the two entries");
        }
        stack.emplace_back(doc.children[node.begin + i + 1], depth + 1U);
      }
    } else if (node.kind == Kind::Sequence) {
      for (std::uint32_t i = 0; i < node.size; ++i) stack.emplace_back(doc.children[node.begin + i], depth + 1U);
    }
  }
}

/// Sees the start of each document and nothing else.
class DocumentStarts : public YAML::EventHandler {
 public:
  YAML::Mark last;
  void OnDocumentStart(const YAML::Mark& mark) override { last = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

/// The text as a stream that polls `stop` every 64 KiB it hands to the parser after the first MiB, and throws
/// Interrupted when asked to stop: yaml-cpp parses a document in one call, and a 50,000-layer
/// workload takes seconds, so this is how --time-limit and Ctrl-C reach into a parse.
class StoppableText : public std::streambuf {
 public:
  StoppableText(const std::string& text, const StopToken& stop) : text_(text), stop_(stop) {}

 protected:
  int_type underflow() override {
    if (pos_ >= text_.size()) return traits_type::eof();
    // The first MiB is parsed whole (a fraction of a second): a network that small loads and then
    // stops at the mapper's first chunk, with a partial result, as a stop during the search does.
    if (pos_ >= kWhole) throw_if_stopped(stop_, "loading the workload");
    char* begin = const_cast<char*>(text_.data()) + pos_;  // read only: the get area is never written
    const std::size_t n = std::min<std::size_t>(kChunk, text_.size() - pos_);
    pos_ += n;
    setg(begin, begin, begin + n);
    return traits_type::to_int_type(*begin);
  }

 private:
  static constexpr std::size_t kChunk = 64 * 1024;
  static constexpr std::size_t kWhole = 1024 * 1024;
  const std::string& text_;
  const StopToken& stop_;
  std::size_t pos_ = 0;
};

/// Builds a YamlDocument from the parser's events as yaml-cpp's NodeBuilder builds its tree: an
/// anchor names its node from the node's start (so `&a [*a]` holds itself) and an alias is that
/// node. Nodes are counted as they arrive, aliases once each, and a document of over 4 million is
/// refused at the node that passes the limit; a text over 1 MiB also has its nesting limited here
/// (256 levels: check_no_duplicate_keys limits a smaller one's, with its own hint).
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(YamlDocument& doc, bool limit_depth) : doc_(doc), limit_depth_(limit_depth) {}
  YAML::Mark start;  ///< where the document starts

  void OnDocumentStart(const YAML::Mark& m) override { start = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override { add(m, anchor, Kind::Null); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    count(m);
    NPUMAP_ASSERT(anchor > 0 && anchor < anchors_.size());  // the parser refuses an undefined anchor
    attach(anchors_[anchor]);
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (doc_.text.size() + value.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw UserError({doc_.file, m.line + 1, m.column + 1}, "", "the document holds over 4 GiB of text",
                      "split the input, or generate a smaller one");
    }
    YamlDocument::Node& node = doc_.nodes[add(m, anchor, Kind::Scalar)];
    node.begin = static_cast<std::uint32_t>(doc_.text.size());
    node.size = static_cast<std::uint32_t>(value.size());
    doc_.text += value;
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(m, anchor, Kind::Sequence);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(m, anchor, Kind::Map);
  }
  void OnMapEnd() override { close(); }

 private:
  using Kind = YamlDocument::Kind;

  void count(const YAML::Mark& m) {
    if (++nodes_ > kMaxNodes) {
      throw UserError({doc_.file, m.line + 1, m.column + 1}, "", "the document has over 4 million nodes",
                      "split the input, or generate a smaller one");
    }
  }
  /// A new node, entered in its parent (or as the root) and under its anchor.
  std::uint32_t add(const YAML::Mark& m, YAML::anchor_t anchor, Kind kind) {
    count(m);
    const auto index = static_cast<std::uint32_t>(doc_.nodes.size());
    YamlDocument::Node node;
    node.line = m.line;
    node.column = m.column;
    node.kind = kind;
    doc_.nodes.push_back(node);
    if (anchor > 0) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, 0);
      anchors_[anchor] = index;
    }
    attach(index);
    return index;
  }
  void attach(std::uint32_t index) {
    if (open_.empty()) {
      doc_.root = index;
    } else {
      entries_.push_back(index);
    }
  }
  void open(const YAML::Mark& m, YAML::anchor_t anchor, Kind kind) {
    const std::uint32_t index = add(m, anchor, kind);
    if (limit_depth_ && ++depth_ > kMaxDepth) {
      throw UserError({doc_.file, m.line + 1, m.column + 1}, "", "nesting is deeper than 256 levels",
                      "flatten the document");
    }
    open_.emplace_back(index, entries_.size());
  }
  /// The collection's entries, gathered while it was open, become its range of `children`.
  void close() {
    const auto [index, from] = open_.back();
    open_.pop_back();
    if (limit_depth_) --depth_;
    YamlDocument::Node& node = doc_.nodes[index];
    node.begin = static_cast<std::uint32_t>(doc_.children.size());
    node.size = static_cast<std::uint32_t>(entries_.size() - from);
    doc_.children.insert(doc_.children.end(), entries_.begin() + static_cast<std::ptrdiff_t>(from), entries_.end());
    entries_.resize(from);
  }

  static constexpr std::size_t kMaxNodes = 4'000'000, kMaxDepth = 256;
  YamlDocument& doc_;
  bool limit_depth_;
  std::size_t nodes_ = 0, depth_ = 0;
  std::vector<std::uint32_t> anchors_{0};  ///< node index by anchor id (ids count from 1)
  std::vector<std::pair<std::uint32_t, std::size_t>> open_;  ///< open collections: node, first entry in entries_
  std::vector<std::uint32_t> entries_;  ///< the entries of the open collections, innermost last
};

/// Parses the first document of `text` into `doc`. A second document (after `---`) would be ignored
/// silently, so it is an error; the parser is asked for at most two documents: YAML::LoadAll loops
/// forever on some malformed text (a stray `,` at the start of a line yields endless empty
/// documents; found by fuzz/fuzz_arch), so it is not used.
void parse_document(const std::string& text, YamlDocument& doc, const StopToken& stop) {
  StoppableText buffer(text, stop);
  std::istream in(&buffer);
  YAML::Parser parser(in);
  // Under 1 MiB of text cannot hold 4 million nodes; its nesting is checked after the parse.
  TreeBuilder builder(doc, text.size() > (std::size_t{1} << 20));
  if (!parser.HandleNextDocument(builder)) {
    doc.nodes.emplace_back();  // no document: a null root without a position, as YAML::Load gives
    return;
  }
  DocumentStarts starts;
  if (!parser.HandleNextDocument(starts)) return;
  const YAML::Mark m = starts.last;
  if (m.pos == builder.start.pos) {
    throw UserError({doc.file, m.line + 1, m.column + 1}, "", "malformed YAML: the parser cannot get past this position",
                    "a `,` or other flow indicator outside brackets? quote the value");
  }
  throw UserError({doc.file, m.line + 1, m.column + 1}, "", "a second YAML document (after `---`) would be ignored",
                  "keep one document per file");
}

/// A tab in the indentation of the 0-based line `line` of `text` or of the three lines before it
/// (nearest first): its 1-based line and column, or {0, 0}. YAML indents with spaces only, and
/// yaml-cpp reports a tab there as some other parse error further on.
std::pair<int, int> indentation_tab(const std::string& text, int line) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  for (int i = 0; i <= line && from <= text.size(); ++i) {
    const std::size_t nl = text.find('\n', from);
    lines.push_back(text.substr(from, nl == std::string::npos ? std::string::npos : nl - from));
    if (nl == std::string::npos) break;
    from = nl + 1;
  }
  for (int i = static_cast<int>(lines.size()) - 1; i >= 0 && i >= line - 3; --i) {
    const std::string& l = lines[static_cast<std::size_t>(i)];
    for (std::size_t c = 0; c < l.size() && (l[c] == ' ' || l[c] == '\t' || l[c] == '-'); ++c) {
      if (l[c] == '\t') return {i + 1, static_cast<int>(c) + 1};
    }
  }
  return {0, 0};
}

}  // namespace

YamlNode YamlNode::load_string(const std::string& text, const std::string& file) { return load_string(text, file, StopToken()); }

YamlNode YamlNode::load_string(const std::string& text, const std::string& file, const StopToken& stop) {
  check_utf8(text, file);
  auto doc = std::make_shared<YamlDocument>();
  doc->file = file;
  try {
    parse_document(text, *doc, stop);
    check_no_duplicate_keys(*doc, stop);
  } catch (const YAML::Exception& e) {
    if (const auto [line, column] = indentation_tab(text, e.mark.line); line > 0) {
      throw UserError({file, line, column}, "", "a tab character in the indentation (YAML indents with spaces only)",
                      "replace the tab with spaces");
    }
    throw UserError({file, e.mark.line + 1, e.mark.column + 1}, "", "malformed YAML: " + e.msg,
                    "check indentation, colons and brackets near this position");
  }
  const std::uint32_t root = doc->root;
  return YamlNode(std::move(doc), root, "");
}

YamlNode YamlNode::load_file(const std::string& file) { return load_string(read_input_file(file), file); }

namespace {

/// Appends a copy of `node` (and of what it holds) to `doc`; returns its index. Recursive: the trees
/// copied are built in code and a few levels deep.
std::uint32_t copy_node(const YAML::Node& node, YamlDocument& doc) {
  using Kind = YamlDocument::Kind;
  const auto index = static_cast<std::uint32_t>(doc.nodes.size());
  doc.nodes.emplace_back();
  const YAML::Mark mark = node.Mark();
  doc.nodes[index].line = mark.line;
  doc.nodes[index].column = mark.column;
  std::vector<std::uint32_t> entries;
  if (node.IsScalar()) {
    doc.nodes[index].kind = Kind::Scalar;
    doc.nodes[index].begin = static_cast<std::uint32_t>(doc.text.size());
    doc.nodes[index].size = static_cast<std::uint32_t>(node.Scalar().size());
    doc.text += node.Scalar();
    return index;
  }
  if (node.IsSequence()) {
    doc.nodes[index].kind = Kind::Sequence;
    for (const auto& item : node) entries.push_back(copy_node(item, doc));
  } else if (node.IsMap()) {
    doc.nodes[index].kind = Kind::Map;
    for (const auto& kv : node) {
      NPUMAP_ASSERT(kv.first.IsScalar());
      entries.push_back(copy_node(kv.first, doc));
      entries.push_back(copy_node(kv.second, doc));
    }
  }
  doc.nodes[index].begin = static_cast<std::uint32_t>(doc.children.size());
  doc.nodes[index].size = static_cast<std::uint32_t>(entries.size());
  doc.children.insert(doc.children.end(), entries.begin(), entries.end());
  return index;
}

}  // namespace

YamlNode YamlNode::from_yaml(const YAML::Node& node, const std::string& file) {
  auto doc = std::make_shared<YamlDocument>();
  doc->file = file;
  doc->root = copy_node(node, *doc);
  const std::uint32_t root = doc->root;
  return YamlNode(std::move(doc), root, "");
}

SourceLocation YamlNode::location() const {
  const YamlDocument::Node& n = node();
  if (n.line < 0) return {doc_->file, 0, 0};
  return {doc_->file, n.line + 1, n.column + 1};
}

UserError YamlNode::error(const std::string& message, const std::string& hint) const {
  return UserError(location(), path_, message, hint);
}

void YamlNode::expect_map() const {
  if (!is_map()) throw error("expected a mapping of keys to values", "write `key: value` lines");
}

void YamlNode::expect_sequence() const {
  if (!is_sequence()) throw error("expected a list", "write `- item` lines or [a, b, c]");
}

bool YamlNode::has(std::string_view key) const {
  if (!is_map()) return false;
  for (std::uint32_t i = 0; i < node().size; i += 2) {
    if (doc_->scalar(entry(i)) == key) return true;
  }
  return false;
}

std::optional<YamlNode> YamlNode::find(std::string_view key) const {
  expect_map();
  for (std::uint32_t i = 0; i < node().size; i += 2) {
    if (doc_->scalar(entry(i)) == key) return child(entry(i + 1), join_path(path_, key));
  }
  return std::nullopt;
}

YamlNode YamlNode::at(std::string_view key) const {
  auto found = find(key);
  if (!found) {
    throw UserError(location(), join_path(path_, key), "missing required key",
                    fmt::format("add `{}:` here", key));
  }
  return *found;
}

std::vector<YamlNode> YamlNode::items() const {
  expect_sequence();
  std::vector<YamlNode> out;
  out.reserve(node().size);
  for (std::uint32_t i = 0; i < node().size; ++i) out.push_back(child(entry(i), fmt::format("{}[{}]", path_, i)));
  return out;
}

std::vector<std::pair<std::string, YamlNode>> YamlNode::entries() const {
  expect_map();
  std::vector<std::pair<std::string, YamlNode>> out;
  for (std::uint32_t i = 0; i < node().size; i += 2) {
    std::string key(doc_->scalar(entry(i)));
    YamlNode value = child(entry(i + 1), join_path(path_, key));
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

void YamlNode::check_keys(std::initializer_list<std::string_view> allowed) const {
  check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void YamlNode::check_keys(const std::vector<std::string>& allowed) const {
  expect_map();
  for (std::uint32_t i = 0; i < node().size; i += 2) {
    const std::string key(doc_->scalar(entry(i)));
    bool ok = false;
    for (const auto& a : allowed) ok = ok || (a == key);
    if (ok) continue;
    const std::string near = closest_match(key, allowed);
    const YamlDocument::Node& k = doc_->nodes[entry(i)];
    throw UserError({doc_->file, k.line + 1, k.column + 1}, join_path(path_, key), "unknown key",
                    near.empty() ? "allowed keys: " + join_list(allowed) : "did you mean `" + near + "`?");
  }
}

std::string YamlNode::as_string() const {
  if (!is_scalar()) throw error("expected a single value", "write a plain string");
  return std::string(doc_->scalar(node_));
}

bool YamlNode::as_bool() const {
  const std::string s = as_string();
  if (s == "true" || s == "True" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "no") return false;
  throw error(fmt::format("expected true or false, got `{}`", s), "write true or false");
}

double YamlNode::as_double() const {
  const std::string s = as_string();
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw error(fmt::format("expected a number, got `{}`", s), "write a decimal number such as 1.5 or 2e6");
}

std::int64_t YamlNode::as_int() const {
  const std::string s = as_string();
  std::int64_t v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc::result_out_of_range) throw error(fmt::format("integer `{}` does not fit in 64 bits", s), "use a smaller value");
  if (ec != std::errc() || ptr != end) throw error(fmt::format("expected an integer, got `{}`", s), "write a whole number");
  return v;
}

std::int64_t YamlNode::as_positive_int() const {
  const std::int64_t v = as_int();
  if (v <= 0) throw error(fmt::format("must be a positive integer, got {}", v), "sizes and counts are at least 1");
  return v;
}

std::vector<std::int64_t> YamlNode::as_int_list() const {
  std::vector<std::int64_t> out;
  for (const auto& item : items()) out.push_back(item.as_int());
  return out;
}

std::string YamlNode::as_choice(const std::vector<std::string>& choices) const {
  const std::string s = as_string();
  for (const auto& c : choices) {
    if (c == s) return s;
  }
  const std::string near = closest_match(s, choices);
  throw error(fmt::format("unknown value `{}`", s),
              near.empty() ? "one of: " + join_list(choices) : "did you mean `" + near + "`? one of: " + join_list(choices));
}

}  // namespace npumap::common
