// The YAML reader (common/yaml_reader.hpp) builds its own compact tree from yaml-cpp's parser
// events. Its oracle is yaml-cpp's own tree (YAML::Load of the same text): every node has the
// same kind, position, text and entries, aliases included (an alias is its anchor's node, at the
// anchor's position). Hostile inputs give the one-line errors the reader gave when it kept
// yaml-cpp's tree; each expected line is worked out by hand in its comment.

#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/yaml_reader.hpp"

namespace npumap::common {
namespace {

/// Compares the reader's node with yaml-cpp's, recursively; `where` names the node in failures.
void expect_same(const YamlNode& ours, const YAML::Node& theirs, const std::string& where) {
  const YAML::Mark m = theirs.Mark();
  EXPECT_EQ(ours.location().line, m.line < 0 ? 0 : m.line + 1) << where;
  EXPECT_EQ(ours.location().column, m.line < 0 ? 0 : m.column + 1) << where;
  ASSERT_EQ(ours.is_null(), theirs.IsNull()) << where;
  ASSERT_EQ(ours.is_scalar(), theirs.IsScalar()) << where;
  ASSERT_EQ(ours.is_sequence(), theirs.IsSequence()) << where;
  ASSERT_EQ(ours.is_map(), theirs.IsMap()) << where;
  if (theirs.IsScalar()) {
    EXPECT_EQ(ours.as_string(), theirs.Scalar()) << where;
  }
  if (theirs.IsSequence()) {
    const auto items = ours.items();
    ASSERT_EQ(items.size(), theirs.size()) << where;
    for (std::size_t i = 0; i < items.size(); ++i) expect_same(items[i], theirs[i], items[i].path());
  }
  if (theirs.IsMap()) {
    const auto entries = ours.entries();
    ASSERT_EQ(entries.size(), theirs.size()) << where;
    std::size_t i = 0;
    for (const auto& kv : theirs) {
      EXPECT_EQ(entries[i].first, kv.first.Scalar()) << where;
      expect_same(entries[i].second, kv.second, entries[i].second.path());
      ++i;
    }
  }
}

TEST(YamlReader, TreeIsYamlCppsTree) {
  const char* texts[] = {
      // Block and flow styles, nulls (empty, `~`, `null`) and a quoted "null" (a string).
      "name: tiny\ninputs:\n  - {name: x, shape: [1, 8, 8, 16], dtype: int8}\nlayers:\n"
      "  - name: a\n    op: conv2d\n    inputs: [x]\n    empty:\n    tilde: ~\n    word: null\n    quoted: 'null'\n",
      // Anchors and aliases of scalars, lists and maps; an anchor defined twice (the later wins).
      "shape: &s [1, 2, 2, 4]\nmap: &m {a: 1, b: [2, 3]}\nuse: [*s, *m, *s]\nn: &n 5\nn2: &n 6\nk: *n\n",
      // Block scalars, multi-line plain scalars, tags, a merge key (a plain key to yaml-cpp).
      "lit: |\n  two\n  lines\nfold: >\n  one\n  line\nplain: a\n  b\ntagged: !!str 12\nbase: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n",
      // A document marker, nested block lists, a top-level list.
      "---\n- - 1\n  - 2\n- [3, [4, [5]]]\n- {}\n- []\n",
      // A scalar document, and one with nothing but a comment (no document: a null root with no position).
      "just text\n",
      "# nothing here\n",
      "",
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    expect_same(YamlNode::load_string(text, "t.yaml"), YAML::Load(text), "root");
  }
}

std::string error_of(const std::string& text) {
  try {
    YamlNode::load_string(text, "h.yaml");
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(YamlReader, HostileInputsGiveTheirLine) {
  // The second `name` is on line 3, column 1.
  EXPECT_EQ(error_of("name: a\nlayers: []\nname: b\n"), "h.yaml:3:1: name: duplicate key (keep one of the two entries)");
  // A tab before `- x` (line 3, column 1): yaml-cpp reports a parse error further on; the reader
  // finds the tab.
  EXPECT_EQ(error_of("name: a\nlayers:\n\t- x\n"),
            "h.yaml:3:1: a tab character in the indentation (YAML indents with spaces only) (replace the tab with spaces)");
  // A list that holds itself: the walk goes 257 levels down the same list, whose position is its
  // anchor's `&` (line 1, column 4).
  EXPECT_EQ(error_of("a: &a [*a]\n"),
            "h.yaml:1:4: nesting is deeper than 256 levels (an alias that refers to itself, or aliases nested many times over?)");
  // An alias of an anchor not defined yet: the parser's error at the alias (column 4).
  EXPECT_EQ(error_of("a: *b\nb: &b 1\n"),
            "h.yaml:1:4: malformed YAML: the referenced anchor is not defined (check indentation, colons and brackets near "
            "this position)");
  // A list as a key, and an empty key (both at column 1 of their lines).
  EXPECT_EQ(error_of("[a, b]: 1\n"), "h.yaml:1:1: a key must be a single value, not a list or mapping (write `name: value`)");
  EXPECT_EQ(error_of("a: 1\n: 2\n"), "h.yaml:2:1: a key cannot be empty or null (write `name: value`)");
  // A second document starts at the `---` of line 2.
  EXPECT_EQ(error_of("a: 1\n---\nb: 2\n"),
            "h.yaml:2:1: a second YAML document (after `---`) would be ignored (keep one document per file)");
  // Seven levels of ten aliases: 10^7 nodes once expanded, refused when the walk passes 4 million.
  std::string bomb = "l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  // The walk passes the limit at one of the ten scalars of l0, all on line 1.
  const std::string bombed = error_of(bomb);
  EXPECT_EQ(bombed.rfind("h.yaml:1:", 0), 0u) << bombed;
  EXPECT_NE(bombed.find(": the document expands to over 4 million nodes (an alias that refers to itself, or aliases "
                        "nested many times over?)"),
            std::string::npos)
      << bombed;
}

TEST(YamlReader, ScalarsAliasesAndBadValues) {
  const YamlNode root = YamlNode::load_string("a: &x 12x\nb: *x\nc: 1e999\nd: ~\ne: 'null'\nf: maybe\n", "v.yaml");
  // An alias is its anchor's node, at the anchor's position (line 1, column 4).
  EXPECT_EQ(root.at("b").location().line, 1);
  EXPECT_EQ(root.at("b").location().column, 4);
  EXPECT_EQ(root.at("b").as_string(), "12x");
  auto error_of_call = [](auto call) -> std::string {
    try {
      call();
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  // The error names the alias's key path but the anchor's position.
  EXPECT_EQ(error_of_call([&] { (void)root.at("b").as_int(); }), "v.yaml:1:4: b: expected an integer, got `12x` (write a whole number)");
  EXPECT_EQ(error_of_call([&] { (void)root.at("c").as_double(); }),
            "v.yaml:3:4: c: expected a number, got `1e999` (write a decimal number such as 1.5 or 2e6)");
  EXPECT_EQ(error_of_call([&] { (void)root.at("d").as_string(); }), "v.yaml:4:4: d: expected a single value (write a plain string)");
  EXPECT_EQ(root.at("e").as_string(), "null");
  EXPECT_EQ(error_of_call([&] { (void)root.at("f").as_bool(); }), "v.yaml:6:4: f: expected true or false, got `maybe` (write true or false)");
  EXPECT_EQ(error_of_call([&] { (void)root.at("g"); }), "v.yaml:1:1: g: missing required key (add `g:` here)");
  EXPECT_EQ(error_of_call([&] { root.check_keys({"a", "b", "c", "d", "e"}); }), "v.yaml:6:1: f: unknown key (did you mean `a`?)");
}

TEST(YamlReader, TreeBuiltInCodeHasNoPosition) {
  YAML::Node built(YAML::NodeType::Map);
  built["memory"]["Sram"]["size"] = "1x";
  built["macs"] = "256";
  const YamlNode n = YamlNode::from_yaml(built, "spec.yaml");
  expect_same(n, built, "root");
  EXPECT_EQ(n.at("macs").as_int(), 256);
  try {
    (void)n.at("memory").at("Sram").at("size").as_int();
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    // No line: the file alone (the sweep puts the setting's own position back).
    EXPECT_EQ(e.where().line, 0);
    EXPECT_EQ(std::string(e.what()), "spec.yaml: memory.Sram.size: expected an integer, got `1x` (write a whole number)");
  }
}

}  // namespace
}  // namespace npumap::common
