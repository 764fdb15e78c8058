// The .tflite front end from the command line: `--workload model.tflite`, `mapper import`, and bad
// model files, which end in exit status 2 with one line naming the file and nothing written. Real
// models come from workloads/models/.

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"
#include "test/tflite/tflite_net.hpp"

namespace npumap::cli_test {
namespace {

const fs::path kPerson = fs::path("workloads") / "models" / "tflm__person_detect.tflite";

/// A bad model: exit 2, one stderr line that names the file (and `key` when given), nothing on
/// stdout, no output written.
void expect_rejected(const fs::path& model, const std::string& what, const std::string& key = {}) {
  SCOPED_TRACE(what);
  TempDir out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--workload", model.string(), "--out", (out / "run").string()},
        std::vector<std::string>{"import", model.string(), "-o", (out / "model.yaml").string()}}) {
    const RunResult r = run_mapper(args);
    EXPECT_EQ(r.status, 2) << command_text(args) << "\n" << r.err;
    const auto lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_NE(lines[0].find(model.string()), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(key), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].find("internal error"), std::string::npos) << lines[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(fs::exists(out / "run"));
  EXPECT_FALSE(fs::exists(out / "model.yaml"));
}

TEST(TfliteCli, BadModelFilesAreOneLineErrors) {
  TempDir dir;
  write_text(dir / "empty.tflite", "");
  expect_rejected(dir / "empty.tflite", "empty");
  write_text(dir / "identifier.tflite", std::string("\x10\0\0\0TFL2\0\0\0\0\0\0\0\0", 16));
  expect_rejected(dir / "identifier.tflite", "wrong identifier");
  write_text(dir / "offsets.tflite", std::string("\xff\xff\xff\x7fTFL3", 8) + std::string(64, '\x7f'));
  expect_rejected(dir / "offsets.tflite", "root offset out of range");
  ASSERT_TRUE(fs::exists(kPerson)) << kPerson << " is missing (run from the project root)";
  const std::string bytes = read_text(kPerson);
  write_text(dir / "truncated.tflite", bytes.substr(0, bytes.size() / 2));
  expect_rejected(dir / "truncated.tflite", "truncated real model");
}

TEST(TfliteCli, ModelsTheLoweringRefusesAreOneLineErrorsNamingTheOperatorAndField) {
  // Well-formed files the reader accepts but the lowering refuses as bad input (exit 2, not 3):
  // a resize that changes the channels, and a concatenation with a fused activation on the NPU.
  namespace tb = npumap::tflite::testing;
  using npumap::tflite::Net;
  const auto write_model = [](const fs::path& path, Net& n, std::vector<std::int32_t> in, std::vector<std::int32_t> out) {
    n.sg.inputs = std::move(in);
    n.sg.outputs = std::move(out);
    tb::ModelSpec m = n.spec;
    m.subgraphs = {n.sg};
    write_text(path, tb::build_model(m));
  };
  TempDir dir;
  {
    Net n;
    const int x = n.fm("x", {1, 4, 4, 8});
    const int y = n.fm("y", {1, 4, 4, 16});
    n.op(npumap::tflite::RESIZE_BILINEAR, {x, n.i32("size", {2}, {4, 4})}, {y},
         {15, {tb::boolean(2, false), tb::boolean(3, false)}});
    write_model(dir / "resize.tflite", n, {x}, {y});
    expect_rejected(dir / "resize.tflite", "resize changing the channels", "subgraphs[0].operators[0].outputs[0]: ");
  }
  {
    Net n;
    const int a = n.fm("a", {1, 4, 4, 8});
    const int b = n.fm("b", {1, 4, 4, 8});
    const int y = n.fm("y", {1, 4, 4, 16});
    n.op(npumap::tflite::CONCATENATION, {a, b}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 1)}});
    write_model(dir / "concat.tflite", n, {a, b}, {y});
    expect_rejected(dir / "concat.tflite", "concatenation with a fused activation",
                    "subgraphs[0].operators[0].builtin_options.fused_activation_function: ");
  }
}

TEST(TfliteCli, ImportWritesYamlThatMapsLikeTheModel) {
  ASSERT_TRUE(fs::exists(kPerson)) << kPerson << " is missing (run from the project root)";
  TempDir dir;
  const RunResult imp = run_mapper({"import", kPerson.string(), "-o", (dir / "person.yaml").string()});
  ASSERT_EQ(imp.status, 0) << imp.err;
  EXPECT_NE(imp.out.find("60 layers (60 NPU passes, 0 CPU operators)"), std::string::npos) << imp.out;
  const RunResult a = run_mapper({"--workload", kPerson.string(), "--keep-pareto", "-q", "--out", (dir / "a").string()});
  const RunResult b =
      run_mapper({"--workload", (dir / "person.yaml").string(), "--keep-pareto", "-q", "--out", (dir / "b").string()});
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(read_text(dir / "a" / "front.csv"), read_text(dir / "b" / "front.csv"));
  EXPECT_EQ(read_text(dir / "a" / "layers.csv"), read_text(dir / "b" / "layers.csv"));
}

TEST(TfliteCli, NoVelaRewritesKeepsTheGraphAsWritten) {
  const fs::path model = fs::path("workloads") / "models" / "tflm__mobilenet_v2_quantized_1x3x224x224.tflite";
  ASSERT_TRUE(fs::exists(model)) << model << " is missing (run from the project root)";
  TempDir dir;
  const RunResult on = run_mapper({"import", model.string(), "-o", (dir / "on.yaml").string()});
  const RunResult off = run_mapper({"import", model.string(), "-o", (dir / "off.yaml").string(), "--no-vela-rewrites"});
  ASSERT_EQ(on.status, 0) << on.err;
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_NE(off.out.find("without Vela's graph rewrites"), std::string::npos) << off.out;
  // This model's explicit PAD operators fuse into the next convolution with the rewrites; without
  // them each PAD is an AvgPool copy of its own, so the network has more layers.
  const auto layers = [](const std::string& report) {
    const auto at = report.find(": ");
    return std::stoi(report.substr(at + 2));
  };
  EXPECT_GT(layers(off.out), layers(on.out)) << on.out << off.out;
}

}  // namespace
}  // namespace npumap::cli_test
