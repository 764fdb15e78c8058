// The must-fail inputs of test/errors/workload_*.yaml: each file's first line is
// `# expect: <text>`, and loading the file must throw a common::UserError whose one-line message is the
// file name followed by exactly that text. The CLI test runs the same files through `mapper`.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/loader.hpp"

#include "test/support/error_files.hpp"

namespace npumap::workloads {
namespace {

TEST(WorkloadErrors, EveryCaseHasAFile) {
  // One file per must-fail case of the acceptance text (and a few more).
  const std::vector<std::string> files = npumap::testing::error_files("workload_");
  for (const char* name : {"malformed_yaml", "unknown_key", "unknown_top_key", "missing_field", "zero_size",
                           "negative_size", "output_size", "shapes_do_not_chain", "einsum_does_not_chain",
                           "weight_channels", "depthwise_channels", "cycle", "two_producers", "undeclared_input",
                           "unknown_op", "overflow", "macs_overflow"}) {
    const std::string path = std::string("test/errors/workload_") + name + ".yaml";
    EXPECT_NE(std::find(files.begin(), files.end(), path), files.end()) << path;
  }
}

TEST(WorkloadErrors, EachFileFailsWithItsExpectedMessage) {
  const std::vector<std::string> files = npumap::testing::error_files("workload_");
  ASSERT_GE(files.size(), 17u);
  for (const auto& file : files) {
    const std::string expect = npumap::testing::expected_message(file);
    ASSERT_FALSE(expect.empty()) << file << " has no `# expect:` first line";
    try {
      load_workload(file);
      ADD_FAILURE() << file << " loaded without an error";
    } catch (const common::UserError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what, file + expect) << file;
      EXPECT_EQ(what.find('\n'), std::string::npos) << file << ": the message must be one line";
      EXPECT_EQ(e.where().file, file);
      EXPECT_GT(e.where().line, 0) << file;
      EXPECT_FALSE(e.hint().empty()) << file;
    }
  }
}

TEST(WorkloadErrors, MissingFileIsAUserError) {
  EXPECT_THROW(load_workload("test/errors/no_such_workload.yaml"), common::UserError);
}

TEST(WorkloadErrors, SelfLoopIsACycle) {
  try {
    load_workload_from_string(
        "name: t\ninputs: [{name: x, shape: [1,2,2,2], dtype: int8}]\nlayers:\n"
        "  - {name: me, op: add, inputs: [x, y], output: y, output_shape: [1,2,2,2]}\n",
        "self.yaml");
    FAIL() << "no error";
  } catch (const common::UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "self.yaml:4:37: layers[0].inputs[1]: layer `me` is part of a cycle: `me` -> `me` (a workload is a DAG; "
              "one of these layers must read an earlier tensor)");
  }
}

TEST(WorkloadErrors, EmptyDocumentAndOddKeysAreUserErrors) {
  auto message = [](const std::string& text) -> std::string {
    try {
      load_workload_from_string(text, "odd.yaml");
    } catch (const common::UserError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message(""), "odd.yaml:1:1: the file holds no workload (write a mapping with name, inputs and layers "
                         "(docs/workload-format.md))");
  // A rank name that is itself a list: reported by the YAML reader (every key must be a single
  // value), not thrown as a yaml-cpp conversion error.
  EXPECT_EQ(message("name: x\ninputs: [{name: a, shape: [4,8], dtype: int8}, {name: b, shape: [8,4], dtype: int8}]\n"
                    "layers:\n  - {name: mm, einsum: \"z[m,n] = a[m,k] * b[k,n]\", ranks: {[m]: 4, n: 4, k: 8}}\n"),
            "odd.yaml:4:60: a key must be a single value, not a list or mapping (write `name: value`)");
  EXPECT_EQ(message("name: x\ninputs: [{name: a, shape: [1,2,2,2], dtype: int8}]\nlayers: [foo]\n"),
            "odd.yaml:3:10: layers[0]: expected a mapping of keys to values (write `key: value` lines)");
}

}  // namespace
}  // namespace npumap::workloads
