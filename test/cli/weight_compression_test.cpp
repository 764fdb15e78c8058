// `mapper --weight-compression FILE` sets the weight compression of named layers: the passes the
// mapper reports carry exactly those ratios, a ratio above 1 is valid (encoded weights of small
// tensors are larger than raw ones), the file is recorded in provenance, and a bad file is a one-line
// error with exit 2 that names the file.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_harness.hpp"

namespace npumap::cli_test {
namespace {

using Json = nlohmann::ordered_json;

TEST(WeightCompressionFile, SetsTheRatioOfTheNamedLayers) {
  TempDir tmp;
  write_text(tmp / "wc.yaml", "conv_a: 2.5\nconv_c: 0.25\n");
  const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--weight-compression",
                                  (tmp / "wc.yaml").string(), "--out", (tmp / "out").string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json result = Json::parse(read_text(tmp / "out" / "result.json"));
  int seen = 0;
  for (const Json& layer : layers_of(result, result["front"][0])) {
    if (!layer["pass"].contains("weights")) continue;
    const double scale = layer["pass"]["weights"]["compression_scale"].get<double>();
    const std::string name = layer["layer"].get<std::string>();
    const double expected = name == "conv_a" ? 2.5 : name == "conv_c" ? 0.25 : 0.625;  // else the default
    EXPECT_EQ(scale, expected) << name;
    ++seen;
  }
  EXPECT_GE(seen, 2);
  EXPECT_EQ(result["provenance"]["inputs"]["weight_compression"]["path"], (tmp / "wc.yaml").string());
}

TEST(WeightCompressionFile, BadFilesAreOneLineErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"conv_aa: 0.5\n", "did you mean `conv_a`?"},
      {"conv_a: 0\n", "must be greater than 0"},
      {"conv_a: 100\n", "at most 64"},
      {"- conv_a\n", "expected a mapping"},
  };
  for (const auto& [text, expected] : cases) {
    TempDir tmp;
    write_text(tmp / "wc.yaml", text);
    const RunResult r = run_mapper({"--workload", "workloads/tiny_chain.yaml", "--weight-compression",
                                    (tmp / "wc.yaml").string(), "--out", (tmp / "out").string()});
    EXPECT_EQ(r.status, 2) << text << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("wc.yaml"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << text << " -> " << r.err;
  }
}

}  // namespace
}  // namespace npumap::cli_test
