// The complete example of docs/workload-format.md (its first ```yaml block) must load, so the
// documentation cannot drift from the loader.

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

std::string first_yaml_block(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string open = "```yaml\n";
  const auto begin = doc.find(open);
  if (begin == std::string::npos) return {};
  const auto end = doc.find("```", begin + open.size());
  return doc.substr(begin + open.size(), end - begin - open.size());
}

TEST(FormatDoc, CompleteExampleLoads) {
  const std::string yaml = first_yaml_block("docs/workload-format.md");
  ASSERT_FALSE(yaml.empty());
  const Workload w = load_workload_from_string(yaml, "docs/workload-format.md");
  EXPECT_EQ(w.name, "example");
  ASSERT_EQ(w.layers.size(), 11u);
  // stem 16*16*32*3*3*3 = 221,184; dw 16*16*32*3*3 = 73,728; project 16*16*32*32 = 262,144;
  // classifier 32*10 = 320; proj M=16, K=64, N=4*16=64: 65,536; scores 4 heads of 16*16*16 = 16,384.
  // Sum: 639,296.
  EXPECT_EQ(w.total_macs(), 639296);
  const Layer& stem = w.layers[0];
  EXPECT_DOUBLE_EQ(stem.weight_compression, 0.7);
  EXPECT_DOUBLE_EQ(w.layers[2].weight_compression, 0.6);  // the network default
  EXPECT_EQ(w.layers[static_cast<std::size_t>(w.layer_index("proj"))].kind, OpKind::FullyConnected);
  EXPECT_EQ(w.layers[static_cast<std::size_t>(w.layer_index("scores"))].kind, OpKind::MatMul);
  EXPECT_EQ(w.layers[static_cast<std::size_t>(w.layer_index("gate"))].kind, OpKind::Activation);
}

}  // namespace
}  // namespace npumap::workloads
