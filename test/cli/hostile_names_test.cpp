// Issue 41 point 6: names from the user's files cannot break the files the mapper writes. Each writer
// (workload YAML from `mapper import`, result.json, the CSV files, the SVG plots, a sweep's files)
// gets names holding a newline, NUL, quotes, `<`, `&`, `>` , a comma and bytes that are not UTF-8;
// every written file is then read back by a strict reader (test/cli/check_written.py: Python's json,
// csv with strict=True and the header's column count, expat for XML, PyYAML), and the YAML is
// imported again by the mapper itself.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "common/text_escape.hpp"
#include "workloads/loader.hpp"
#include "workloads/writer.hpp"

namespace npumap::cli_test {
namespace {

// In a YAML input (a double-quoted scalar): newline, NUL, quote, apostrophe, `<`, `&`, `>`, a comma
// and a backslash. (The YAML reader refuses a file that is not UTF-8, so bytes that are not UTF-8
// come from a .tflite model's path or names: kBadUtf8.)
const std::string kHostileYaml = R"(\n\x00\"'<&>,\\)";
const std::string kHostile = std::string("\n") + std::string(1, '\0') + "\"'<&>,\\";
// A stray 0xFF and a truncated 0xC3, and what a writer makes of them (U+FFFD each).
const std::string kBadUtf8 = "\xff" "x\xc3";
const std::string kBadUtf8Written = "\xEF\xBF\xBD" "x\xEF\xBF\xBD";

/// Runs the strict readers over `files`; "" when they all read back, else the reader's complaint.
std::string strict_read_failure(const std::vector<fs::path>& files) {
  std::string cmd = std::string("'") + NPUMAP_PYTHON3 + "' test/cli/check_written.py";
  for (const fs::path& f : files) {
    std::string quoted = "'";
    for (char c : f.string()) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " " + quoted + "'";
  }
  const TempDir tmp;
  const int status = std::system((cmd + " > '" + (tmp / "out").string() + "' 2>&1").c_str());
  return status == 0 ? std::string() : "exit " + std::to_string(status) + ": " + read_text(tmp / "out");
}

std::vector<fs::path> files_in(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".json" || ext == ".csv" || ext == ".svg" || ext == ".yaml") out.push_back(e.path());
  }
  return out;
}

/// An arch file whose path (the arch's name in the outputs) holds a newline, quotes, `<`, `&`, `>`.
const std::string kArchFile = "arch\n\"<&>,'.yaml";

/// tiny_chain with hostile names for the workload, the layers, the tensors and the arch.
void write_hostile_inputs(const TempDir& tmp) {
  const std::string h = kHostileYaml;
  write_text(tmp / "w.yaml",
             "name: \"net" + h + "\"\ninputs:\n  - {name: \"in" + h + "\", shape: [1, 16, 16, 8], dtype: int8}\n"
             "layers:\n"
             "  - {name: \"conv_a" + h + "\", op: conv2d, inputs: [\"in" + h + "\"], output: \"a" + h +
                 "\", output_shape: [1, 16, 16, 16], kernel: 3, padding: SAME}\n"
             "  - {name: \"conv_b" + h + "\", op: conv2d, inputs: [\"a" + h + "\"], output: \"b" + h +
                 "\", output_shape: [1, 16, 16, 8], kernel: 1, padding: VALID}\n");
  write_text(tmp / kArchFile, "preset: ethos-u55-256\nname: \"arch" + h + "\"\n");
}

TEST(HostileNames, RunOutputsReadBackStrictly) {
  TempDir tmp;
  write_hostile_inputs(tmp);
  const RunResult r = run_mapper({"--workload", (tmp / "w.yaml").string(), "--arch", (tmp / kArchFile).string(),
                                  "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<fs::path> files = files_in(tmp / "out");
  ASSERT_GE(files.size(), 4u) << "result.json, front.csv, front.svg, layers.csv at least";
  EXPECT_EQ(strict_read_failure(files), "");
  // The names survive (as valid UTF-8): the strict JSON reader sees them unchanged.
  const nlohmann::json result = nlohmann::json::parse(read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(result["workload"]["name"].get<std::string>(), "net" + kHostile);
  EXPECT_EQ(result["arch"]["name"].get<std::string>(), (tmp / kArchFile).string());
  // layers.csv: the layer column holds the name, quoted and with its quote doubled.
  EXPECT_NE(read_text(tmp / "out" / "layers.csv").find(common::csv_field("conv_a" + kHostile)), std::string::npos);
  // front.svg: the title names the workload as XML text.
  EXPECT_NE(read_text(tmp / "out" / "front.svg").find(common::xml_escape("net" + kHostile)), std::string::npos);
}

TEST(HostileNames, SweepOutputsReadBackStrictly) {
  TempDir tmp;
  write_hostile_inputs(tmp);
  // The workload's id in the sweep's files is its file's name.
  fs::copy_file(tmp / "w.yaml", tmp / "w,\"<&>'.yaml");
  write_text(tmp / "spec.yaml", "name: \"sweep" + kHostileYaml + "\"\nworkloads: [\"" + tmp.path().string() +
                                    "/w,\\\"<&>'.yaml\"]\nbase: ethos-u55-256\ngrid:\n  sram_capacity: [1MiB, 2MiB]\n");
  const RunResult r = run_mapper({"sweep", (tmp / "spec.yaml").string(), "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<fs::path> files = files_in(tmp / "out");
  ASSERT_EQ(files.size(), 4u) << "sweep.csv, sweep.json, pareto.csv, pareto.svg";
  EXPECT_EQ(strict_read_failure(files), "");
}

TEST(HostileNames, RunOfATfliteWithAHostilePathReadsBackStrictly) {
  // The workload is named after the model's file: newline, quotes, `<`, `&` and bytes that are not UTF-8.
  TempDir tmp;
  const fs::path model = tmp / ("m\n\"<&>,'" + kBadUtf8 + ".tflite");
  fs::copy_file("workloads/models/tflm__hello_world_int8.tflite", model);
  const RunResult r = run_mapper({"--workload", model.string(), "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<fs::path> files = files_in(tmp / "out");
  ASSERT_GE(files.size(), 6u) << "result.json, front.csv, front.svg, layers.csv and Vela's two CSV files";
  EXPECT_EQ(strict_read_failure(files), "");
  const nlohmann::json result = nlohmann::json::parse(read_text(tmp / "out" / "result.json"));
  EXPECT_EQ(result["workload"]["name"].get<std::string>(), "m\n\"<&>,'" + kBadUtf8Written);
}

TEST(HostileNames, WrittenWorkloadYamlReadsBack) {
  // The YAML writer (used by `mapper import`): the header comment and every name.
  TempDir tmp;
  write_hostile_inputs(tmp);
  const workloads::Workload w = workloads::load_workload((tmp / "w.yaml").string());
  const std::string text = workloads::to_yaml(w, "header line" + kHostile + kBadUtf8 + "\nkey: value");
  write_text(tmp / "back.yaml", text);
  EXPECT_EQ(strict_read_failure({tmp / "back.yaml"}), "");
  const workloads::Workload back = workloads::load_workload((tmp / "back.yaml").string());
  EXPECT_EQ(back.name, "net" + kHostile);
  ASSERT_EQ(back.layers.size(), 2u);
  EXPECT_EQ(back.layers[1].name, "conv_b" + kHostile);
  EXPECT_EQ(text.find("\nkey: value"), std::string::npos) << "the header's second line stays a comment";
}

TEST(HostileNames, ImportOfAPathWithANewlineReimports) {
  // The header comment names the model's path: a newline in it ended the comment (issue 41 point 6).
  TempDir tmp;
  const fs::path model = tmp / ("we\nird \"<&>" + kBadUtf8 + ".tflite");
  fs::copy_file("workloads/models/tflm__hello_world_int8.tflite", model);
  const RunResult r = run_mapper({"import", model.string(), "-o", (tmp / "out.yaml").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(strict_read_failure({tmp / "out.yaml"}), "");
  const RunResult again = run_mapper({"--workload", (tmp / "out.yaml").string(), "--out", (tmp / "run").string(), "-q"});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(strict_read_failure(files_in(tmp / "run")), "");
}

TEST(TextEscape, ValidUtf8ReplacesOnlyBadBytes) {
  // Hand-checked against RFC 3629: U+00E9 (C3 A9) and U+1F600 (F0 9F 98 80) stay; a stray
  // continuation byte (80), an overlong '/' (C0 AF), a surrogate (ED A0 80) and a truncated
  // sequence (E2 82) each become U+FFFD, one per bad byte.
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(common::valid_utf8("a\xC3\xA9" "b\xF0\x9F\x98\x80"), "a\xC3\xA9" "b\xF0\x9F\x98\x80");
  EXPECT_EQ(common::valid_utf8("\x80"), fffd);
  EXPECT_EQ(common::valid_utf8("\xC0\xAF"), fffd + fffd);
  EXPECT_EQ(common::valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);
  EXPECT_EQ(common::valid_utf8("x\xE2\x82"), "x" + fffd + fffd);
  EXPECT_TRUE(common::is_valid_utf8("a\xC3\xA9"));
  EXPECT_FALSE(common::is_valid_utf8("a\xC3"));
}

TEST(TextEscape, EachFormatsRules) {
  using std::string;
  EXPECT_EQ(common::yaml_quote(string("a\"b\\c\n") + string(1, '\0') + "\x7f\xC2\x85"), R"("a\"b\\c\x0a\x00\x7f\u0085")");
  EXPECT_EQ(common::yaml_comment_text(string("x\ny\tz") + string(1, '\0')), R"(x\ny\tz\x00)");
  EXPECT_EQ(common::csv_field("plain"), "plain");
  EXPECT_EQ(common::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(common::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(common::csv_field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(common::csv_field(string(1, '\0')), "\xEF\xBF\xBD");
  EXPECT_EQ(common::xml_escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  EXPECT_EQ(common::xml_escape(string("t\tn\n") + string(1, '\0') + "\x1b"), "t\tn\n\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace npumap::cli_test
