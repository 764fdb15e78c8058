// The text summary: one aligned row per layer in topological order, and the totals.

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Summary, TinyChain) {
  const Workload w = load_workload("workloads/tiny_chain.yaml");
  const auto lines = lines_of(summary(w));
  // Title, header, three layers, totals.
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "workload tiny_chain (workloads/tiny_chain.yaml)");
  // Every table row is padded to the same width, so the right-aligned columns line up.
  for (std::size_t i = 2; i < 5; ++i) EXPECT_EQ(lines[i].size(), lines[1].size()) << lines[i];
  EXPECT_NE(lines[1].find("MACs"), std::string::npos);
  // conv_b: [1,16,16,16] -> [1,8,8,16], 3x3 stride 2, 147,456 MACs, OFM 8*8*16 = 1,024 bytes,
  // weights 3*3*16*16 = 2,304 bytes.
  EXPECT_NE(lines[3].find("conv_b"), std::string::npos);
  EXPECT_NE(lines[3].find("[1,16,16,16] -> [1,8,8,16]"), std::string::npos);
  EXPECT_NE(lines[3].find("3x3/2"), std::string::npos);
  EXPECT_NE(lines[3].find("147,456"), std::string::npos);
  EXPECT_NE(lines[3].find("1,024"), std::string::npos);
  EXPECT_NE(lines[3].find("2,304"), std::string::npos);
  // Weights 3*3*8*16 + 2,304 + 1*1*16*8 = 1,152 + 2,304 + 128 = 3,584; compressed at 0.625:
  // 720 + 1,440 + 80 = 2,240. Activations: input 2,048 + a 4,096 + b 1,024 + c 512 = 7,680.
  EXPECT_EQ(lines[5], "total: 3 layers, 450,560 MACs, 3,584 weight bytes (2,240 compressed estimate), 7,680 activation bytes");
}

TEST(Summary, ListsLayersInTopologicalOrder) {
  const Workload w = load_workload_from_string(R"(
name: order
inputs: [{name: x, shape: [1, 2, 2, 4], dtype: int8}]
layers:
  - {name: second, op: relu, inputs: [ta], output: tb, output_shape: [1, 2, 2, 4]}
  - {name: first, op: sigmoid, inputs: [x], output: ta, output_shape: [1, 2, 2, 4]}
)",
                                               "order.yaml");
  const auto lines = lines_of(summary(w));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_NE(lines[2].find("first"), std::string::npos);
  EXPECT_NE(lines[2].find("sigmoid"), std::string::npos);
  EXPECT_NE(lines[3].find("second"), std::string::npos);
}

}  // namespace
}  // namespace npumap::workloads
