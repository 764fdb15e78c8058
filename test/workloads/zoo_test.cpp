// The workload zoo loads, and its MAC counts match the published figures (and, where the sum is
// short enough to do by hand, the exact count derived in the comments).

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/user_error.hpp"
#include "workloads/loader.hpp"
#include "workloads/zoo.hpp"

namespace npumap::workloads {
namespace {

double relative_error(double got, double want) { return std::abs(got - want) / want; }

TEST(Zoo, NameTheOsRefusesIsAnUnknownName) {
  // 300 bytes: the file name is over the OS's 255, so asking whether it exists fails (ENAMETOOLONG);
  // that used to escape as std::filesystem::filesystem_error (found by fuzz_sweep_spec).
  const std::string name(300, 'x');
  try {
    zoo_file(name, "workloads[0]");
    FAIL() << "no error for a 300-byte zoo name";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown zoo workload `" + name + "`"), std::string::npos) << e.what();
  }
  EXPECT_EQ(zoo_file("tiny_chain", "workloads[0]"), (zoo_folder() / "tiny_chain.yaml").string());
}

TEST(Zoo, NamesTheYamlWorkloadsAndTheRealModels) {
  // The data folder is found from the executable (common/data_dir.hpp): the build tree's
  // share/npu-mapper links to the source tree, so the zoo is the repository's workloads/.
  const std::vector<std::string> names = zoo_names();
  const auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_TRUE(has("resnet18"));
  EXPECT_TRUE(has("tiny_chain"));
  EXPECT_TRUE(has("tflm__person_detect"));  // workloads/models/tflm__person_detect.tflite
  EXPECT_FALSE(has("mlzoo__ds_cnn_s_quantized_int16")) << "other_precision/ models are not zoo names";
  // 6 YAML workloads and the 35 int8 models of workloads/models (its README lists them).
  EXPECT_EQ(names.size(), 6u + 35u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.begin() + 6));
  EXPECT_EQ(zoo_file("tflm__person_detect", "--workload"), (zoo_folder() / "models" / "tflm__person_detect.tflite").string());
  EXPECT_TRUE(std::filesystem::equivalent(zoo_folder(), "workloads")) << zoo_folder();
  try {
    zoo_file("resnet19", "--workload");
    FAIL() << "no error for resnet19";
  } catch (const common::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean `resnet18`?"), std::string::npos) << e.what();
  }
}

TEST(Zoo, TinyChain) {
  const Workload w = load_workload("workloads/tiny_chain.yaml");
  ASSERT_EQ(w.layers.size(), 3u);
  // conv_a 16*16*16*(3*3*8) = 294,912; conv_b (stride 2, SAME: 8x8) 8*8*16*(3*3*16) = 147,456;
  // conv_c 8*8*8*(1*1*16) = 8,192.
  EXPECT_EQ(w.layers[0].macs, 294912);
  EXPECT_EQ(w.layers[1].macs, 147456);
  EXPECT_EQ(w.layers[2].macs, 8192);
  EXPECT_EQ(w.total_macs(), 450560);
}

TEST(Zoo, TinyResidual) {
  const Workload w = load_workload("workloads/tiny_residual.yaml");
  // Two convs of 8*8*16*(3*3*16) = 147,456 each; the add has none.
  EXPECT_EQ(w.total_macs(), 2 * 147456);
}

TEST(Zoo, ResNet18) {
  const Workload w = load_workload("workloads/resnet18.yaml");
  // 20 convolutions (1 stem + 16 in blocks + 3 projections), 8 adds, 2 pools, 1 fc.
  EXPECT_EQ(w.layers.size(), 31u);
  // By hand, per stage (MACs = OH*OW*OC*KH*KW*IC):
  //   conv1   112*112*64*7*7*3                                         = 118,013,952
  //   layer1  4 x 56*56*64*3*3*64 = 4 x 115,605,504                    = 462,422,016
  //   layer2  28*28*128*9*64 (57,802,752) + 3 x 28*28*128*9*128 (3 x 115,605,504)
  //           + projection 28*28*128*64 (6,422,528)                    = 411,041,792
  //   layer3, layer4: the same pattern at half the size and twice the width = 411,041,792 each
  //   fc      512*1000                                                 =     512,000
  //   total                                                            = 1,814,073,344
  EXPECT_EQ(w.total_macs(), 1814073344);
  // Published: about 1.8 G multiply-accumulates at 224x224.
  EXPECT_LT(relative_error(static_cast<double>(w.total_macs()), 1.8e9), 0.03);
  // torchvision lists 11,689,512 parameters; without the 9,600 batch-norm parameters
  // (2 x 4,800 channels) and the 1,000 fc biases, 11,678,912 int8 weight bytes remain.
  std::int64_t weights = 0;
  for (const auto& l : w.layers) weights += weight_bytes(w, l);
  EXPECT_EQ(weights, 11678912);
}

TEST(Zoo, ResNet50) {
  const Workload w = load_workload("workloads/resnet50.yaml");
  // 53 convolutions (1 + 16 blocks x 3 + 4 projections), 16 adds, 2 pools, 1 fc.
  EXPECT_EQ(w.layers.size(), 72u);
  int projections = 0;
  for (const auto& l : w.layers) projections += l.name.find("downsample") != std::string::npos;
  EXPECT_EQ(projections, 4);
  // Published: about 4.1 G multiply-accumulates (torchvision: 4.09 GFLOPS counted as MACs).
  EXPECT_LT(relative_error(static_cast<double>(w.total_macs()), 4.1e9), 0.03);
}

TEST(Zoo, MobileNetV2) {
  const Workload w = load_workload("workloads/mobilenet_v2.yaml");
  // Published: 300 M multiply-adds (Sandler et al., Table 4).
  EXPECT_LT(relative_error(static_cast<double>(w.total_macs()), 300e6), 0.03);
  int depthwise = 0;
  int adds = 0;
  for (const auto& l : w.layers) {
    depthwise += l.kind == OpKind::DepthwiseConv2D;
    adds += l.kind == OpKind::Add;
  }
  EXPECT_EQ(depthwise, 17);  // one per bottleneck block: 1+2+3+4+3+3+1
  EXPECT_EQ(adds, 10);       // repeats after the first of each group: 0+1+2+3+2+2+0
}

TEST(Zoo, BertBaseLayer) {
  const Workload w = load_workload("workloads/bert_base_layer.yaml");
  //   Q, K, V projections  3 x 128*768*768  = 226,492,416
  //   scores, context      2 x 12*128*128*64 =  25,165,824
  //   output projection    128*768*768      =  75,497,472
  //   FFN up and down      2 x 128*768*3072 = 603,979,776
  //   total                                 = 931,135,488
  EXPECT_EQ(w.total_macs(), 931135488);
  int fc = 0;
  int matmul = 0;
  int softmax = 0;
  int add = 0;
  for (const auto& l : w.layers) {
    fc += l.kind == OpKind::FullyConnected;
    matmul += l.kind == OpKind::MatMul;
    softmax += l.kind == OpKind::Softmax;
    add += l.kind == OpKind::Add;
  }
  EXPECT_EQ(fc, 6);
  EXPECT_EQ(matmul, 2);
  EXPECT_EQ(softmax, 1);
  EXPECT_EQ(add, 2);
}

TEST(Zoo, EveryFileNamesItsSource) {
  for (const char* f : {"resnet18", "resnet50", "mobilenet_v2", "bert_base_layer", "tiny_chain", "tiny_residual"}) {
    const std::string path = std::string("workloads/") + f + ".yaml";
    const Workload w = load_workload(path);
    EXPECT_EQ(w.name, f);
    EXPECT_EQ(w.topological_order.size(), w.layers.size());
    // The opening comment cites a paper (arXiv id) or says the network was written for the project.
    std::ifstream in(path);
    std::string head;
    for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;) head += line + "\n";
    EXPECT_TRUE(head.find("arXiv:") != std::string::npos || head.find("no external source") != std::string::npos) << path;
  }
}

}  // namespace
}  // namespace npumap::workloads
