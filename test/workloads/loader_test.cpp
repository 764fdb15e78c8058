// Every key of the workload format (docs/workload-format.md), read from small inline documents.
// Expected values follow from the format's rules, worked out in the comments.

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

Workload load(const std::string& text) { return load_workload_from_string(text, "inline.yaml"); }

// One layer reading a network input `x` of `in_shape`; `layer` is the body of the layer entry.
Workload one_layer(const std::string& in_shape, const std::string& layer, const std::string& in_dtype = "int8") {
  return load("name: t\ninputs:\n  - {name: x, shape: " + in_shape + ", dtype: " + in_dtype +
              "}\nlayers:\n  - {name: l, " + layer + "}\n");
}

std::string error_of(const std::string& text) {
  try {
    load(text);
  } catch (const common::UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Loader, TopLevelKeysAndDeclaredTensors) {
  const Workload w = load(R"(
name: net
weight_compression: 0.5
inputs:
  - {name: x, shape: [1, 4, 4, 8], dtype: uint8, quant_scale: 0.25}
  - {name: y, shape: [2, 8], dtype: int16}
constants:
  - {name: c, shape: [8, 3], dtype: int8}
layers:
  - {name: conv, op: conv2d, inputs: [x], output: o, output_shape: [1, 4, 4, 2], kernel: 1, padding: VALID}
  - {name: fc, einsum: "z[m,n] = y[m,k] * c[k,n]", ranks: {m: 2, k: 8, n: 3}}
)");
  EXPECT_EQ(w.name, "net");
  EXPECT_EQ(w.source_file, "inline.yaml");
  ASSERT_EQ(w.tensors.size(), 5u);  // x, y, c, then the outputs o and z
  const TensorInfo& x = w.tensors[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dims, (std::vector<std::int64_t>{1, 4, 4, 8}));
  EXPECT_EQ(x.shape, (Shape{1, 4, 4, 8}));
  EXPECT_EQ(x.dtype, DataType::UInt8);
  EXPECT_DOUBLE_EQ(x.quant_scale, 0.25);
  EXPECT_TRUE(x.is_network_input);
  EXPECT_FALSE(x.is_constant);
  EXPECT_EQ(x.producer, -1);
  const TensorInfo& y = w.tensors[1];
  EXPECT_EQ(y.shape, (Shape{2, 1, 1, 8}));  // [N, C] is viewed as (N, 1, 1, C)
  EXPECT_EQ(y.dtype, DataType::Int16);
  EXPECT_DOUBLE_EQ(y.quant_scale, 1.0);  // the documented default
  const TensorInfo& c = w.tensors[2];
  EXPECT_TRUE(c.is_constant);
  EXPECT_FALSE(c.is_network_input);
  // The network default compression reaches the layer; the uint8 input gives the output its dtype.
  EXPECT_DOUBLE_EQ(w.layers[0].weight_compression, 0.5);
  EXPECT_EQ(w.tensors[3].dtype, DataType::UInt8);
  EXPECT_EQ(w.layers[1].weight_tensor, 2);
  EXPECT_EQ(w.tensors[4].dtype, DataType::Int16);
}

TEST(Loader, DefaultWeightCompressionIsVelasFiveEighths) {
  const Workload w = one_layer("[1, 4, 4, 8]", "op: conv2d, inputs: [x], output: o, output_shape: [1, 4, 4, 8], kernel: 1, padding: VALID");
  EXPECT_DOUBLE_EQ(w.layers[0].weight_compression, 0.625);
  EXPECT_DOUBLE_EQ(kDefaultWeightCompression, 0.625);
}

TEST(Loader, ConvolutionKeys) {
  const Workload w = one_layer("[1, 20, 30, 8]",
                               "op: conv2d, inputs: [x], output: o, output_shape: [1, 6, 14, 16], kernel: [3, 5], "
                               "stride: [3, 2], dilation: [2, 1], padding: [1, 2, 0, 0], activation: relu6, dtype: int16, "
                               "quant_scale: 0.5, bias: false, weight_dtype: uint8, weight_compression: 0.75, "
                               "weight_shape: [3, 5, 8, 16]");
  const Layer& l = w.layers[0];
  EXPECT_EQ(l.kind, OpKind::Conv2D);
  EXPECT_EQ(l.kernel_h, 3);
  EXPECT_EQ(l.kernel_w, 5);
  EXPECT_EQ(l.stride_y, 3);
  EXPECT_EQ(l.stride_x, 2);
  EXPECT_EQ(l.dilation_y, 2);
  EXPECT_EQ(l.dilation_x, 1);
  EXPECT_EQ(l.padding_mode, PaddingMode::Explicit);
  EXPECT_EQ(l.padding, (Padding{1, 2, 0, 0}));
  EXPECT_EQ(l.activation, Activation::Relu6);
  EXPECT_FALSE(l.has_bias);
  EXPECT_EQ(l.weight_dtype, DataType::UInt8);
  EXPECT_DOUBLE_EQ(l.weight_compression, 0.75);
  EXPECT_EQ(l.weight_shape, (std::vector<std::int64_t>{3, 5, 8, 16}));
  EXPECT_EQ(w.tensors[1].dtype, DataType::Int16);
  EXPECT_DOUBLE_EQ(w.tensors[1].quant_scale, 0.5);
  // Height: dilated kernel (3-1)*2+1 = 5, padded 20+1+0 = 21, (21-5)//3+1 = 6.
  // Width: dilated kernel 5, padded 30+2+0 = 32, (32-5)//2+1 = 14. So [1,6,14,16] loads.
  EXPECT_EQ(l.ofm_shape, (Shape{1, 6, 14, 16}));
  EXPECT_EQ(l.ifm_shape, (Shape{1, 20, 30, 8}));
  // MACs = N*OH*OW*OC*KH*KW*IC = 1*6*14*16*3*5*8 = 161,280.
  EXPECT_EQ(l.macs, 161280);
  // Raw weights 3*5*8*16 = 1920 bytes; compressed ceil(1920*0.75) = 1440.
  EXPECT_EQ(weight_bytes(w, l), 1920);
  EXPECT_EQ(compressed_weight_bytes(w, l), 1440);
}

TEST(Loader, ConvolutionDefaults) {
  // stride and dilation default to 1, bias to true, weight dtype to int8, activation to none.
  const Workload w = one_layer("[1, 8, 8, 4]", "op: conv2d, inputs: [x], output: o, output_shape: [1, 8, 8, 4], kernel: 3, padding: SAME");
  const Layer& l = w.layers[0];
  EXPECT_EQ(l.stride_y, 1);
  EXPECT_EQ(l.stride_x, 1);
  EXPECT_EQ(l.dilation_y, 1);
  EXPECT_TRUE(l.has_bias);
  EXPECT_EQ(l.weight_dtype, DataType::Int8);
  EXPECT_EQ(l.activation, Activation::None);
  EXPECT_EQ(l.kernel_h, 3);
  EXPECT_EQ(l.kernel_w, 3);
}

TEST(Loader, SamePaddingValuesFollowVela) {
  // docs/design/npu-model.md §3.5 for H = W = 7, stride 2, kernel 4: OH = ceil(7/2) = 4,
  // total = max(0, (4-1)*2 + 4 - 7) = 3, so top/left = 3//2 = 1 and bottom/right = 4//2 = 2.
  const Workload w = one_layer("[1, 7, 7, 2]", "op: max_pool, inputs: [x], output: o, output_shape: [1, 4, 4, 2], kernel: 4, stride: 2, padding: SAME");
  EXPECT_EQ(w.layers[0].padding_mode, PaddingMode::Same);
  EXPECT_EQ(w.layers[0].padding, (Padding{1, 1, 2, 2}));
  EXPECT_EQ(w.layers[0].macs, 0);
}

TEST(Loader, ValidPadding) {
  // (10 - 3)//2 + 1 = 4.
  const Workload w = one_layer("[1, 10, 10, 2]", "op: avg_pool, inputs: [x], output: o, output_shape: [1, 4, 4, 2], kernel: 3, stride: 2, padding: VALID, activation: relu");
  EXPECT_EQ(w.layers[0].kind, OpKind::AvgPool);
  EXPECT_EQ(w.layers[0].padding_mode, PaddingMode::Valid);
  EXPECT_EQ(w.layers[0].padding, (Padding{0, 0, 0, 0}));
  EXPECT_EQ(w.layers[0].activation, Activation::Relu);
}

TEST(Loader, DepthwiseWeightsAndMacs) {
  // Weights [kh, kw, 1, C] = [3,3,1,32]; MACs = OH*OW*C*KH*KW = 4*4*32*9 = 4608.
  const Workload w = one_layer("[1, 8, 8, 32]", "op: depthwise_conv2d, inputs: [x], output: o, output_shape: [1, 4, 4, 32], kernel: 3, stride: 2, padding: SAME, weight_shape: [3, 3, 1, 32]");
  EXPECT_EQ(w.layers[0].weight_shape, (std::vector<std::int64_t>{3, 3, 1, 32}));
  EXPECT_EQ(w.layers[0].macs, 4608);
  EXPECT_EQ(npu_block_type(w.layers[0].kind), arch::NpuBlockType::ConvolutionDepthWise);
}

TEST(Loader, WeightCompressionAboveOneIsAccepted) {
  // Vela's encoding inflates small weight tensors (32 values -> 80 bytes: a ratio of 2.5), so a ratio
  // above 1 is a real measurement, not a typo.
  const Workload w = one_layer("[1, 1, 1, 32]", "op: fully_connected, inputs: [x], output: o, output_shape: [1, 1], bias: false, weight_shape: [32, 1], weight_compression: 2.5");
  EXPECT_DOUBLE_EQ(w.layers[0].weight_compression, 2.5);
}

TEST(Loader, FullyConnectedFlattensAndViewsAsNHWC) {
  // Input [2,3,3,4]: N = 2 rows of 3*3*4 = 36 features; output [2, 10]; weights [36, 10];
  // MACs 2*36*10 = 720; NPU view IFM (2,1,1,36), OFM (2,1,1,10).
  const Workload w = one_layer("[2, 3, 3, 4]", "op: fully_connected, inputs: [x], output: o, output_shape: [2, 10], activation: sigmoid, bias: false, weight_shape: [36, 10], weight_dtype: int8, weight_compression: 1");
  const Layer& l = w.layers[0];
  EXPECT_EQ(l.weight_shape, (std::vector<std::int64_t>{36, 10}));
  EXPECT_EQ(l.ifm_shape, (Shape{2, 1, 1, 36}));
  EXPECT_EQ(l.ofm_shape, (Shape{2, 1, 1, 10}));
  EXPECT_EQ(l.macs, 720);
  ASSERT_TRUE(l.matmul.has_value());
  EXPECT_EQ(l.matmul->m, 2);
  EXPECT_EQ(l.matmul->k, 36);
  EXPECT_EQ(l.matmul->n, 10);
  EXPECT_TRUE(uses_lut(l));
  EXPECT_FALSE(l.has_bias);
}

TEST(Loader, MatmulOpWithAndWithoutTranspose) {
  // A [2,3,5,8]: batch 2*3 = 6, M = 5, K = 8. B [2,3,8,4] gives N = 4; with transpose_b B is
  // [2,3,4,8] (N = 4, K = 8). MACs 6*5*4*8 = 960 either way.
  for (const bool transposed : {false, true}) {
    const std::string b_shape = transposed ? "[2, 3, 4, 8]" : "[2, 3, 8, 4]";
    const Workload w = load("name: t\ninputs:\n  - {name: a, shape: [2, 3, 5, 8], dtype: int8}\n  - {name: b, shape: " +
                            b_shape + ", dtype: int8}\nlayers:\n  - {name: mm, op: matmul, inputs: [a, b], output: z, "
                            "output_shape: [2, 3, 5, 4], activation: relu_n1_to_1, transpose_b: " +
                            (transposed ? "true" : "false") + "}\n");
    const Layer& l = w.layers[0];
    EXPECT_EQ(l.kind, OpKind::MatMul);
    EXPECT_EQ(l.transpose_b, transposed);
    EXPECT_EQ(l.macs, 960);
    EXPECT_EQ(l.ifm_shape, (Shape{1, 6, 5, 8}));
    ASSERT_TRUE(l.ifm2_shape.has_value());
    EXPECT_EQ(*l.ifm2_shape, (Shape{1, 6, 8, 4}));
    EXPECT_EQ(l.ofm_shape, (Shape{1, 6, 5, 4}));
    EXPECT_EQ(l.activation, Activation::ReluN1To1);
    EXPECT_EQ(npu_block_type(l.kind), arch::NpuBlockType::VectorProduct);
  }
}

TEST(Loader, ElementwiseOps) {
  for (const auto& [op, kind] : std::vector<std::pair<std::string, OpKind>>{
           {"add", OpKind::Add}, {"sub", OpKind::Sub}, {"mul", OpKind::Mul}, {"maximum", OpKind::Maximum}, {"minimum", OpKind::Minimum}}) {
    const Workload w = one_layer("[1, 4, 4, 8]", "op: " + op + ", inputs: [x, x], output: o, output_shape: [1, 4, 4, 8], activation: tanh");
    const Layer& l = w.layers[0];
    EXPECT_EQ(l.kind, kind) << op;
    EXPECT_EQ(l.inputs, (std::vector<int>{0, 0}));
    EXPECT_EQ(l.macs, 0);
    EXPECT_EQ(l.activation, Activation::Tanh);
    EXPECT_EQ(npu_block_type(l.kind), arch::NpuBlockType::ElementWise);
    EXPECT_EQ(w.tensors[0].consumers, (std::vector<int>{0}));  // read twice, listed once
  }
  for (const auto& [op, kind] : std::vector<std::pair<std::string, OpKind>>{
           {"abs", OpKind::Abs}, {"leaky_relu", OpKind::LeakyRelu}, {"softmax", OpKind::Softmax}}) {
    const Workload w = one_layer("[1, 4, 4, 8]", "op: " + op + ", inputs: [x], output: o, output_shape: [1, 4, 4, 8]", "int16");
    EXPECT_EQ(w.layers[0].kind, kind) << op;
    EXPECT_EQ(w.tensors[1].dtype, DataType::Int16);
    EXPECT_EQ(npu_block_type(kind), arch::NpuBlockType::ElementWise);
  }
}

TEST(Loader, ReduceSumSumsTheChannels) {
  const Workload w = one_layer("[1, 4, 4, 8]", "op: reduce_sum, inputs: [x], output: o, output_shape: [1, 4, 4, 1], dtype: int32");
  EXPECT_EQ(w.layers[0].kind, OpKind::ReduceSum);
  EXPECT_EQ(w.tensors[1].dtype, DataType::Int32);
  EXPECT_EQ(npu_block_type(OpKind::ReduceSum), arch::NpuBlockType::ReduceSum);
}

TEST(Loader, StandaloneActivationsRunAsPooling) {
  for (const auto& [op, act] : std::vector<std::pair<std::string, Activation>>{
           {"relu", Activation::Relu}, {"relu6", Activation::Relu6}, {"relu_n1_to_1", Activation::ReluN1To1},
           {"sigmoid", Activation::Sigmoid}, {"tanh", Activation::Tanh}, {"lut", Activation::Lut}}) {
    const Workload w = one_layer("[1, 4, 4, 8]", "op: " + op + ", inputs: [x], output: o, output_shape: [1, 4, 4, 8]");
    const Layer& l = w.layers[0];
    EXPECT_EQ(l.kind, OpKind::Activation) << op;
    EXPECT_EQ(l.activation, act) << op;
    EXPECT_EQ(op_name(l), op);
    EXPECT_EQ(npu_block_type(l.kind), arch::NpuBlockType::Pooling);
    EXPECT_EQ(l.kernel_h, 1);
    EXPECT_EQ(l.stride_y, 1);
  }
}

TEST(Loader, FusedActivationNames) {
  for (const auto& [name, act] : std::vector<std::pair<std::string, Activation>>{
           {"none", Activation::None}, {"relu", Activation::Relu}, {"relu6", Activation::Relu6},
           {"relu_n1_to_1", Activation::ReluN1To1}, {"sigmoid", Activation::Sigmoid}, {"tanh", Activation::Tanh},
           {"lut", Activation::Lut}}) {
    const Workload w = one_layer("[1, 4, 4, 8]", "op: add, inputs: [x, x], output: o, output_shape: [1, 4, 4, 8], activation: " + name);
    EXPECT_EQ(w.layers[0].activation, act) << name;
    EXPECT_EQ(activation_name(act), name);
  }
}

TEST(Loader, DataTypes) {
  for (const auto& [name, dt, bits] : std::vector<std::tuple<std::string, DataType, int>>{
           {"int8", DataType::Int8, 8}, {"uint8", DataType::UInt8, 8}, {"int16", DataType::Int16, 16}, {"int32", DataType::Int32, 32}}) {
    const Workload w = one_layer("[1, 2, 2, 3]", "op: abs, inputs: [x], output: o, output_shape: [1, 2, 2, 3]", name);
    EXPECT_EQ(w.tensors[0].dtype, dt);
    EXPECT_EQ(data_type_bits(dt), bits);
    EXPECT_EQ(data_type_name(dt), name);
    // 1*2*2*3 = 12 elements at bits/8 bytes each.
    EXPECT_EQ(tensor_bytes(w.tensors[0]), 12 * bits / 8);
  }
}

TEST(Loader, EinsumLowersToFullyConnectedWithConstantWeights) {
  // m = 4 rows, k = 6, n = 2*3 = 6 output features; MACs 4*6*6 = 144.
  const Workload w = load(R"(
name: e
inputs: [{name: x, shape: [4, 6], dtype: int8}]
constants: [{name: wt, shape: [6, 2, 3], dtype: uint8}]
layers:
  - {name: proj, op: fully_connected, einsum: "y[m,h,d] = x[m,k] * wt[k,h,d]", ranks: {m: 4, k: 6, h: 2, d: 3},
     activation: relu, dtype: int16, quant_scale: 2.0, bias: false, weight_compression: 0.5}
)");
  const Layer& l = w.layers[0];
  EXPECT_EQ(l.kind, OpKind::FullyConnected);
  EXPECT_EQ(l.einsum, "y[m,h,d] = x[m,k] * wt[k,h,d]");
  ASSERT_EQ(l.ranks.size(), 4u);
  EXPECT_EQ(l.ranks[2], (std::pair<std::string, std::int64_t>{"h", 2}));
  EXPECT_EQ(l.inputs, (std::vector<int>{0}));
  EXPECT_EQ(l.weight_tensor, 1);
  EXPECT_EQ(l.weight_shape, (std::vector<std::int64_t>{6, 6}));
  EXPECT_EQ(l.weight_dtype, DataType::UInt8);
  EXPECT_EQ(l.ifm_shape, (Shape{4, 1, 1, 6}));
  EXPECT_EQ(l.ofm_shape, (Shape{4, 1, 1, 6}));
  EXPECT_EQ(l.macs, 144);
  EXPECT_FALSE(l.has_bias);
  EXPECT_DOUBLE_EQ(l.weight_compression, 0.5);
  EXPECT_EQ(l.activation, Activation::Relu);
  const TensorInfo& y = w.tensors[2];
  EXPECT_EQ(y.dims, (std::vector<std::int64_t>{4, 2, 3}));
  EXPECT_EQ(y.dtype, DataType::Int16);
  EXPECT_DOUBLE_EQ(y.quant_scale, 2.0);
  EXPECT_EQ(w.tensors[1].consumers, (std::vector<int>{0}));
  // Weight bytes come from the constant: 6*2*3 = 36.
  EXPECT_EQ(weight_bytes(w, l), 36);
}

TEST(Loader, MissingOrWrongKeysPerOp) {
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [1,4,4,8], dtype: int8}]\nlayers:\n"
                     "  - {name: l, op: conv2d, inputs: [x], output: o, output_shape: [1,4,4,8], padding: SAME}\n")
                .find("layers[0].kernel: missing required key"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [1,4,4,8], dtype: int8}]\nlayers:\n"
                     "  - {name: l, op: conv2d, inputs: [x], output: o, output_shape: [1,4,4,8], kernel: 1}\n")
                .find("layers[0].padding: missing required key"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [1,4,4,8], dtype: int8}]\nlayers:\n"
                     "  - {name: l, op: relu, inputs: [x], output: o, output_shape: [1,4,4,8], activation: relu}\n")
                .find("layers[0].activation: does not apply to op `relu`"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [1,4,4,8], dtype: int8}]\nlayers:\n"
                     "  - {name: l, op: conv2d, inputs: [x], output: o, output_shape: [1,4,4,8], kernel: 1, "
                     "padding: VALID, weight_dtype: int16}\n")
                .find("layers[0].weight_dtype: weights must be 8-bit, got int16"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [2,4], dtype: int8}, {name: y, shape: [4,3], dtype: int8}]\n"
                     "layers:\n  - {name: l, einsum: \"z[m,n] = x[m,k] * y[k,n]\", ranks: {m: 2, k: 4, n: 3}, bias: true}\n")
                .find("layers[0].bias: applies only to an einsum that runs as fully_connected"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [2,4], dtype: int8}, {name: y, shape: [4,3], dtype: int8}]\n"
                     "layers:\n  - {name: l, op: fully_connected, einsum: \"z[m,n] = x[m,k] * y[k,n]\", ranks: {m: 2, k: 4, n: 3}}\n")
                .find("layers[0].op: this einsum runs as matmul, not fully_connected"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\ninputs: [{name: x, shape: [2,4], dtype: int8}, {name: y, shape: [4,3], dtype: int8}]\n"
                     "layers:\n  - {name: l, einsum: \"z[m,n] = x[m,k] * y[k,n]\", ranks: {m: 2, k: 4, n: 3}, output: z}\n")
                .find("layers[0].output: does not apply to an einsum layer"),
            std::string::npos);
}

TEST(Loader, KernelAsScalarOrPairAndLocationsAreRecorded) {
  const Workload w = load("name: t\ninputs:\n  - {name: x, shape: [1, 8, 8, 2], dtype: int8}\nlayers:\n"
                          "  - {name: p, op: max_pool, inputs: [x], output: o, output_shape: [1, 8, 4, 2], kernel: [1, 2], stride: [1, 2], padding: VALID}\n");
  EXPECT_EQ(w.layers[0].kernel_h, 1);
  EXPECT_EQ(w.layers[0].kernel_w, 2);
  EXPECT_EQ(w.layers[0].location.file, "inline.yaml");
  EXPECT_EQ(w.layers[0].location.line, 5);
  EXPECT_EQ(w.layers[0].location.column, 5);
  EXPECT_EQ(w.tensors[0].location.line, 3);
}

}  // namespace
}  // namespace npumap::workloads
