// Block traversal heuristic (docs/design/npu-model.md §7.2): hand-derived cases for both outcomes and the I <= 8
// rule, then the traversal recorded with every convolution of the reference passes.

#include "model/traversal.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace npumap::model {
namespace {

using arch::NpuBlockType;

TEST(Traversal, NonConvBlockTypes) {
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionDepthWise, 1, 9, 8), BlockTraversal::DepthWise);
  EXPECT_EQ(choose_block_traversal(NpuBlockType::VectorProduct, 1024, 1, 8), BlockTraversal::Default);
  EXPECT_EQ(choose_block_traversal(NpuBlockType::Pooling, 64, 9, 8), BlockTraversal::Default);
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ElementWise, 64, 1, 16), BlockTraversal::Default);
}

TEST(Traversal, PartKernelFirstWins) {
  // 8-bit, I = 40, 3x3: depth = 40 / round_up(40, 32) = 40/64 = 0.625;
  //  pkf = (40 / round_up(40, 8)) * (9 / round_up(9, 4)) = 1 * 9/12 = 0.75 >= 0.625.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 40, 9, 8), BlockTraversal::PartKernelFirst);
  // 8-bit, I = 16, 5x5: depth = 16/32 = 0.5; pkf = 1 * 25/28 = 0.89.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 16, 25, 8), BlockTraversal::PartKernelFirst);
  // 16-bit, I = 24, 3x3: depth = 24 / round_up(24, 16) = 0.75; pkf = 1 * 9 / round_up(9, 2) = 0.9.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 24, 9, 16), BlockTraversal::PartKernelFirst);
}

TEST(Traversal, DepthFirstWins) {
  // 8-bit, I = 64, 3x3: depth = 64/64 = 1; pkf = 1 * 9/12 = 0.75 < 1.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 64, 9, 8), BlockTraversal::DepthFirst);
  // 8-bit, I = 20, 1x1: depth = 20/32 = 0.625; pkf = (20/24) * (1/4) = 0.208.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 20, 1, 8), BlockTraversal::DepthFirst);
  // 16-bit, I = 16, 5x5: depth = 16/16 = 1; pkf = 1 * 25/26 = 0.96 < 1 (8-bit would pick PKF).
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 16, 25, 16), BlockTraversal::DepthFirst);
}

TEST(Traversal, ShallowInputsArePartKernelFirst) {
  // 1x1, 8-bit: I = 8: depth = 8/32 = 0.25, pkf = (8/8) * (1/4) = 0.25 -> a tie, and I <= 8 anyway.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 8, 1, 8), BlockTraversal::PartKernelFirst);
  // I = 3: depth = 3/32 = 0.09375, pkf = (3/8) * (1/4) = 0.09375 (equal) -> PKF.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 3, 1, 8), BlockTraversal::PartKernelFirst);
  // One channel more: I = 9: depth = 9/32 = 0.28125, pkf = (9/16) * (1/4) = 0.140625 -> DepthFirst.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 9, 1, 8), BlockTraversal::DepthFirst);
  // 16-bit, I = 8, 1x1: depth = 8/16 = 0.5, pkf = 1 * (1/2) = 0.5 -> PKF; I = 9: 9/16 = 0.5625 vs
  //  (9/16) * (1/2) = 0.28125 -> DepthFirst.
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 8, 1, 16), BlockTraversal::PartKernelFirst);
  EXPECT_EQ(choose_block_traversal(NpuBlockType::ConvolutionMxN, 9, 1, 16), BlockTraversal::DepthFirst);
}

TEST(Traversal, MatchesReferencePasses) {
  // Every Conv/DW/FC pass of the reference data records the traversal Vela's compressor chose.
  std::ifstream in("test/data/npu_reference_passes.json");
  ASSERT_TRUE(in) << "test/data/npu_reference_passes.json not found (run from the project root)";
  const nlohmann::json passes = nlohmann::json::parse(in);
  int checked = 0;
  for (const auto& p : passes) {
    const auto& input = p.at("input");
    if (!input.contains("weights")) continue;
    const std::string op = input.at("op").at("type");
    const auto& w = input.at("weights");
    const auto shape = w.at("shape").get<std::vector<int>>();
    NpuBlockType type = NpuBlockType::ConvolutionMxN;
    int depth = 0;
    int k = 1;
    if (op == "FullyConnected") {
      type = NpuBlockType::VectorProduct;
      depth = shape.at(0);  // IO
    } else {
      type = op == "DepthwiseConv2DBias" ? NpuBlockType::ConvolutionDepthWise : NpuBlockType::ConvolutionMxN;
      depth = shape.at(2);  // HWIO
      k = shape.at(0) * shape.at(1);
    }
    const std::string dtype = input.at("ifm").at("dtype");
    const int bits = dtype == "int8" ? 8 : dtype == "int16" ? 16 : 32;
    const std::string want = w.at("block_traversal");
    const BlockTraversal got = choose_block_traversal(type, depth, k, bits);
    const char* names[] = {"Default", "DepthFirst", "PartKernelFirst", "DepthWise"};
    EXPECT_EQ(names[static_cast<int>(got)], want) << p.at("id") << " " << op << " I=" << depth << " k=" << k;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace npumap::model
