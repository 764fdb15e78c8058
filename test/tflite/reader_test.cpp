// Tests of the TFLite reader (workloads/tflite/reader.hpp):
//  (a) hand-built one-operator models (tflite_builder.hpp), one per parsed operator kind, with the
//      expected values worked out from what the test writes;
//  (b) must-fail inputs, each expecting a UserError whose one-line message names the problem;
//  (c) every real model in workloads/models (and other_precision/) loads, and agrees with the shapes,
//      operator counts and MACs its README.md states (skipped when the folder is absent);
//  (d) a fixed-seed byte-mutation fuzz over a hand-built and two real models: success or UserError only;
//  plus a rough timing of the largest real model.
// Tests run with the working directory at the project root.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "common/user_error.hpp"
#include "tflite_builder.hpp"
#include "workloads/tflite/reader.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
namespace tb = npumap::tflite::testing;
using B = BuiltinOperator;

// ---------------------------------------------------------------------------------------------
// Helpers

Model read(const std::string& bytes) { return read_model_bytes(bytes, "test.tflite"); }

::testing::AssertionResult fails_with(const std::string& bytes, const std::string& part, const ReadLimits& limits = {}) {
  try {
    read_model_bytes(bytes, "m.tflite", limits);
  } catch (const common::UserError& e) {
    const std::string what = e.what();
    if (what.find(part) != std::string::npos && what.find('\n') == std::string::npos) {
      return ::testing::AssertionSuccess() << what;
    }
    return ::testing::AssertionFailure() << "error \"" << what << "\" does not contain \"" << part << "\"";
  }
  return ::testing::AssertionFailure() << "no error; expected one containing \"" << part << "\"";
}

::testing::AssertionResult file_fails_with(const std::string& path, const std::string& part, const ReadLimits& limits = {}) {
  try {
    read_model(path, limits);
  } catch (const common::UserError& e) {
    const std::string what = e.what();
    if (what.find(part) != std::string::npos && what.find(path) == 0) return ::testing::AssertionSuccess() << what;
    return ::testing::AssertionFailure() << "error \"" << what << "\" does not start with the path or lacks \"" << part << "\"";
  }
  return ::testing::AssertionFailure() << "no error; expected one containing \"" << part << "\"";
}

std::vector<std::uint8_t> ramp(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i);
  return v;
}

tb::TensorSpec act(std::string name, std::vector<std::int32_t> shape, float scale = 0.5f, std::int64_t zp = -1) {
  tb::TensorSpec t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.quant = tb::QuantSpec{{scale}, {zp}, 0, {}, {}};
  return t;
}

tb::TensorSpec constant(std::string name, std::vector<std::int32_t> shape, std::int8_t type, std::uint32_t buffer) {
  tb::TensorSpec t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.type = type;
  t.buffer = buffer;
  return t;
}

constexpr std::int8_t kInt32 = 2, kUInt8 = 3, kInt8 = 9;

/// A model with one operator `code`; graph inputs are the operator's non-constant inputs.
tb::ModelSpec one_op(std::int32_t code, tb::OptionsSpec options, std::vector<tb::TensorSpec> tensors,
                     std::vector<std::int32_t> inputs, std::vector<std::int32_t> outputs,
                     std::vector<std::vector<std::uint8_t>> buffers = {}) {
  tb::ModelSpec m;
  m.operator_codes = {tb::OpCodeSpec{code, {}, {}, 1}};
  for (auto& b : buffers) m.buffers.push_back(tb::BufferSpec{std::move(b), {}, {}});
  tb::SubgraphSpec sg;
  for (const std::int32_t i : inputs) {
    if (i >= 0 && tensors[static_cast<std::size_t>(i)].buffer == 0) sg.inputs.push_back(i);
  }
  sg.outputs = outputs;
  sg.operators = {tb::OperatorSpec{0, std::move(inputs), std::move(outputs), {}, std::move(options), {}, {}}};
  sg.tensors = std::move(tensors);
  m.subgraphs = {std::move(sg)};
  return m;
}

/// An elementwise model (two inputs of `shape`, one output) for operator `code`.
tb::ModelSpec binary(std::int32_t code, tb::OptionsSpec options, std::vector<std::int32_t> shape = {1, 4, 4, 8}) {
  return one_op(code, std::move(options), {act("a", shape), act("b", shape), act("y", shape)}, {0, 1}, {2});
}

/// A unary model x -> y for operator `code`.
tb::ModelSpec unary(std::int32_t code, tb::OptionsSpec options, std::vector<std::int32_t> in_shape,
                    std::vector<std::int32_t> out_shape) {
  return one_op(code, std::move(options), {act("x", std::move(in_shape)), act("y", std::move(out_shape))}, {0}, {1});
}

const Operator& only_op(const Model& m) { return m.subgraphs.at(0).operators.at(0); }

template <class T>
const T& options_of(const Model& m) {
  const auto* o = std::get_if<T>(&only_op(m).options);
  if (o == nullptr) throw std::logic_error("unexpected options type");
  return *o;
}

// The CONV_2D model of the first test; the must-fail tests corrupt it.
tb::ModelSpec conv_spec() {
  tb::TensorSpec filter = constant("filter", {4, 3, 3, 3}, kInt8, 1);
  filter.quant = tb::QuantSpec{{0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0, {}, {}};
  return one_op(3,
                {1, {tb::i8(0, 1), tb::i32(1, 2), tb::i32(2, 3), tb::i8(3, 3), tb::i32(4, 1), tb::i32(5, 2)}},
                {act("input", {1, 8, 8, 3}), filter, constant("bias", {4}, kInt32, 2), act("output", {1, 3, 3, 4}, 0.25f, 3)},
                {0, 1, 2}, {3}, {ramp(108), ramp(16)});
}

fs::path models_dir() { return fs::path("workloads") / "models"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// (a) One model per operator kind

TEST(TfliteRead, Conv2D) {
  const Model m = read(tb::build_model(conv_spec()));
  EXPECT_EQ(m.name, "test.tflite");
  EXPECT_EQ(m.version, 3u);
  EXPECT_EQ(m.description, "hand-built test model");
  ASSERT_EQ(m.operator_codes.size(), 1u);
  EXPECT_EQ(m.operator_codes[0].builtin_code, B::CONV_2D);
  EXPECT_EQ(m.operator_codes[0].version, 1);
  ASSERT_EQ(m.buffers.size(), 3u);
  EXPECT_TRUE(m.buffers[0].data.empty());

  ASSERT_EQ(m.subgraphs.size(), 1u);
  const Subgraph& sg = m.subgraphs[0];
  EXPECT_EQ(sg.name, "main");
  EXPECT_EQ(sg.inputs, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(sg.outputs, (std::vector<std::int32_t>{3}));
  ASSERT_EQ(sg.tensors.size(), 4u);

  const Tensor& in = sg.tensors[0];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.shape, (std::vector<std::int32_t>{1, 8, 8, 3}));
  EXPECT_EQ(in.type, TensorType::INT8);
  EXPECT_EQ(in.buffer, 0u);
  EXPECT_TRUE(m.tensor_data(in).empty());
  EXPECT_EQ(in.quantization.scale, (std::vector<float>{0.5f}));
  EXPECT_EQ(in.quantization.zero_point, (std::vector<std::int64_t>{-1}));
  EXPECT_FALSE(in.quantization.per_channel());
  EXPECT_EQ(in.element_count(), 192);

  const Tensor& filter = sg.tensors[1];
  EXPECT_EQ(filter.element_count(), 108);
  EXPECT_TRUE(filter.quantization.per_channel());
  EXPECT_EQ(filter.quantization.quantized_dimension, 0);
  EXPECT_FLOAT_EQ(filter.quantization.scale[2], 0.3f);
  const auto data = m.tensor_data(filter);
  ASSERT_EQ(data.size(), 108u);
  EXPECT_EQ(data[5], 5);
  EXPECT_EQ(data[107], 107);
  EXPECT_EQ(sg.tensors[2].type, TensorType::INT32);
  EXPECT_EQ(m.tensor_data(sg.tensors[2]).size(), 16u);
  EXPECT_EQ(sg.tensors[3].quantization.zero_point, (std::vector<std::int64_t>{3}));

  const Operator& op = only_op(m);
  EXPECT_EQ(op.code, B::CONV_2D);
  EXPECT_EQ(operator_name(op.code), "CONV_2D");
  EXPECT_EQ(op.inputs, (std::vector<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(op.outputs, (std::vector<std::int32_t>{3}));
  EXPECT_EQ(op.builtin_options_type, 1);
  const auto& o = options_of<Conv2DOptions>(m);
  EXPECT_EQ(o.padding, Padding::VALID);
  EXPECT_EQ(o.stride_w, 2);
  EXPECT_EQ(o.stride_h, 3);
  EXPECT_EQ(o.activation, Activation::RELU6);
  EXPECT_EQ(o.dilation_w, 1);
  EXPECT_EQ(o.dilation_h, 2);
}

TEST(TfliteRead, DepthwiseConv2D) {
  const Model m = read(tb::build_model(one_op(
      4, {2, {tb::i8(0, 0), tb::i32(1, 1), tb::i32(2, 1), tb::i32(3, 2), tb::i8(4, 1), tb::i32(5, 2), tb::i32(6, 3)}},
      {act("x", {1, 5, 5, 2}), constant("w", {1, 3, 3, 4}, kInt8, 1), constant("b", {4}, kInt32, 2), act("y", {1, 5, 5, 4})},
      {0, 1, 2}, {3}, {ramp(36), ramp(16)})));
  const auto& o = options_of<DepthwiseConv2DOptions>(m);
  EXPECT_EQ(o.padding, Padding::SAME);
  EXPECT_EQ(o.stride_w, 1);
  EXPECT_EQ(o.stride_h, 1);
  EXPECT_EQ(o.depth_multiplier, 2);
  EXPECT_EQ(o.activation, Activation::RELU);
  EXPECT_EQ(o.dilation_w, 2);
  EXPECT_EQ(o.dilation_h, 3);
  EXPECT_EQ(only_op(m).code, B::DEPTHWISE_CONV_2D);
}

TEST(TfliteRead, Pool2D) {
  for (const std::int32_t code : {1, 17}) {  // AVERAGE_POOL_2D, MAX_POOL_2D
    const Model m = read(tb::build_model(unary(
        code, {5, {tb::i8(0, 1), tb::i32(1, 2), tb::i32(2, 2), tb::i32(3, 3), tb::i32(4, 2), tb::i8(5, 2)}},
        {1, 4, 4, 8}, {1, 2, 2, 8})));
    EXPECT_EQ(only_op(m).code, static_cast<B>(code));
    const auto& o = options_of<Pool2DOptions>(m);
    EXPECT_EQ(o.padding, Padding::VALID);
    EXPECT_EQ(o.stride_w, 2);
    EXPECT_EQ(o.stride_h, 2);
    EXPECT_EQ(o.filter_w, 3);
    EXPECT_EQ(o.filter_h, 2);
    EXPECT_EQ(o.activation, Activation::RELU_N1_TO_1);
  }
}

TEST(TfliteRead, FullyConnectedWithAbsentBias) {
  const Model m = read(tb::build_model(one_op(
      9, {8, {tb::i8(0, 1), tb::i8(1, 1), tb::boolean(2, true), tb::boolean(3, false)}},
      {act("x", {1, 16}), constant("w", {10, 16}, kInt8, 1), act("y", {1, 10})}, {0, 1, -1}, {2}, {ramp(160)})));
  EXPECT_EQ(only_op(m).inputs, (std::vector<std::int32_t>{0, 1, -1}));
  const auto& o = options_of<FullyConnectedOptions>(m);
  EXPECT_EQ(o.activation, Activation::RELU);
  EXPECT_EQ(o.weights_format, WeightsFormat::SHUFFLED4x16INT8);
  EXPECT_TRUE(o.keep_num_dims);
  EXPECT_FALSE(o.asymmetric_quantize_inputs);
}

TEST(TfliteRead, AddSubMul) {
  const Model add = read(tb::build_model(binary(0, {11, {tb::i8(0, 1), tb::boolean(1, false)}})));
  EXPECT_EQ(only_op(add).code, B::ADD);
  EXPECT_EQ(options_of<ElementwiseOptions>(add).activation, Activation::RELU);
  EXPECT_FALSE(options_of<ElementwiseOptions>(add).pot_scale_int16);

  const Model sub = read(tb::build_model(binary(41, {28, {tb::i8(0, 3)}})));
  EXPECT_EQ(only_op(sub).code, B::SUB);
  EXPECT_EQ(options_of<ElementwiseOptions>(sub).activation, Activation::RELU6);
  EXPECT_TRUE(options_of<ElementwiseOptions>(sub).pot_scale_int16);  // schema default

  const Model mul = read(tb::build_model(binary(18, {21, {tb::i8(0, 4)}})));
  EXPECT_EQ(only_op(mul).code, B::MUL);
  EXPECT_EQ(options_of<ElementwiseOptions>(mul).activation, Activation::TANH);

  // Options absent: schema defaults.
  const Model bare = read(tb::build_model(binary(0, {})));
  EXPECT_EQ(options_of<ElementwiseOptions>(bare).activation, Activation::NONE);
}

TEST(TfliteRead, Concatenation) {
  const Model m = read(tb::build_model(one_op(2, {10, {tb::i32(0, -1), tb::i8(1, 0)}},
                                              {act("a", {1, 2, 2, 3}), act("b", {1, 2, 2, 5}), act("y", {1, 2, 2, 8})},
                                              {0, 1}, {2})));
  EXPECT_EQ(options_of<ConcatenationOptions>(m).axis, -1);
  EXPECT_EQ(options_of<ConcatenationOptions>(m).activation, Activation::NONE);
}

TEST(TfliteRead, ReshapeWithAndWithoutNewShape) {
  const Model with = read(tb::build_model(unary(22, {17, {tb::vec_i32(0, {1, 16})}}, {1, 4, 4}, {1, 16})));
  ASSERT_TRUE(options_of<ReshapeOptions>(with).new_shape.has_value());
  EXPECT_EQ(*options_of<ReshapeOptions>(with).new_shape, (std::vector<std::int32_t>{1, 16}));

  const Model without = read(tb::build_model(one_op(
      22, {}, {act("x", {1, 4, 4}), constant("shape", {2}, kInt32, 1), act("y", {1, 16})}, {0, 1}, {2}, {ramp(8)})));
  EXPECT_FALSE(options_of<ReshapeOptions>(without).new_shape.has_value());
  EXPECT_EQ(without.subgraphs[0].inputs, (std::vector<std::int32_t>{0}));
}

TEST(TfliteRead, Softmax) {
  const Model m = read(tb::build_model(unary(25, {9, {tb::f32(0, 1.0f)}}, {1, 10}, {1, 10})));
  EXPECT_FLOAT_EQ(options_of<SoftmaxOptions>(m).beta, 1.0f);
}

TEST(TfliteRead, PadAndPadV2) {
  const Model pad = read(tb::build_model(one_op(
      34, {22, {}}, {act("x", {1, 4, 4, 3}), constant("paddings", {4, 2}, kInt32, 1), act("y", {1, 6, 6, 3})},
      {0, 1}, {2}, {ramp(32)})));
  EXPECT_TRUE(std::holds_alternative<PadOptions>(only_op(pad).options));
  EXPECT_EQ(only_op(pad).builtin_options_type, 22);

  const Model padv2 = read(tb::build_model(one_op(
      60, {43, {}},
      {act("x", {1, 4, 4, 3}), constant("paddings", {4, 2}, kInt32, 1), constant("value", {}, kInt8, 2), act("y", {1, 6, 6, 3})},
      {0, 1, 2}, {3}, {ramp(32), ramp(1)})));
  EXPECT_TRUE(std::holds_alternative<PadOptions>(only_op(padv2).options));
  EXPECT_EQ(padv2.subgraphs[0].tensors[2].element_count(), 1);  // a scalar constant
}

TEST(TfliteRead, StridedSlice) {
  const Model m = read(tb::build_model(one_op(
      45, {32, {tb::i32(0, 1), tb::i32(1, 2), tb::i32(2, 0), tb::i32(3, 0), tb::i32(4, 8), tb::boolean(5, true)}},
      {act("x", {1, 8, 8, 4}), constant("begin", {4}, kInt32, 1), constant("end", {4}, kInt32, 1),
       constant("strides", {4}, kInt32, 1), act("y", {1, 4, 4, 4})},
      {0, 1, 2, 3}, {4}, {ramp(16)})));
  const auto& o = options_of<StridedSliceOptions>(m);
  EXPECT_EQ(o.begin_mask, 1);
  EXPECT_EQ(o.end_mask, 2);
  EXPECT_EQ(o.ellipsis_mask, 0);
  EXPECT_EQ(o.new_axis_mask, 0);
  EXPECT_EQ(o.shrink_axis_mask, 8);
  EXPECT_TRUE(o.offset);
}

TEST(TfliteRead, MeanKeepDims) {
  const Model m = read(tb::build_model(one_op(
      40, {27, {tb::boolean(0, true)}}, {act("x", {1, 7, 7, 16}), constant("axis", {2}, kInt32, 1), act("y", {1, 1, 1, 16})},
      {0, 1}, {2}, {ramp(8)})));
  EXPECT_TRUE(options_of<ReducerOptions>(m).keep_dims);
  EXPECT_EQ(only_op(m).code, B::MEAN);
}

TEST(TfliteRead, ResizeBilinearAndNearestNeighbor) {
  // ResizeBilinearOptions fields 0 and 1 are the deprecated new_height/new_width: set, but ignored.
  const Model bl = read(tb::build_model(one_op(
      23, {15, {tb::i32(0, 99), tb::i32(1, 98), tb::boolean(2, false), tb::boolean(3, true)}},
      {act("x", {1, 4, 4, 2}), constant("size", {2}, kInt32, 1), act("y", {1, 8, 8, 2})}, {0, 1}, {2}, {ramp(8)})));
  EXPECT_FALSE(options_of<ResizeOptions>(bl).align_corners);
  EXPECT_TRUE(options_of<ResizeOptions>(bl).half_pixel_centers);

  const Model nn = read(tb::build_model(one_op(
      97, {74, {tb::boolean(0, true), tb::boolean(1, false)}},
      {act("x", {1, 4, 4, 2}), constant("size", {2}, kInt32, 1), act("y", {1, 8, 8, 2})}, {0, 1}, {2}, {ramp(8)})));
  EXPECT_TRUE(options_of<ResizeOptions>(nn).align_corners);
  EXPECT_FALSE(options_of<ResizeOptions>(nn).half_pixel_centers);
}

TEST(TfliteRead, SplitIntoTwo) {
  const Model m = read(tb::build_model(one_op(
      49, {35, {tb::i32(0, 2)}},
      {constant("axis", {}, kInt32, 1), act("x", {1, 4, 4, 8}), act("y0", {1, 4, 4, 4}), act("y1", {1, 4, 4, 4})},
      {0, 1}, {2, 3}, {ramp(4)})));
  EXPECT_EQ(options_of<SplitOptions>(m).num_splits, 2);
  EXPECT_EQ(only_op(m).outputs, (std::vector<std::int32_t>{2, 3}));
  EXPECT_EQ(m.subgraphs[0].inputs, (std::vector<std::int32_t>{1}));
}

TEST(TfliteRead, LeakyRelu) {
  const Model m = read(tb::build_model(unary(98, {75, {tb::f32(0, 0.2f)}}, {1, 4, 4, 8}, {1, 4, 4, 8})));
  EXPECT_FLOAT_EQ(options_of<LeakyReluOptions>(m).alpha, 0.2f);
}

TEST(TfliteRead, TransposeConv) {
  const Model m = read(tb::build_model(one_op(
      67, {49, {tb::i8(0, 0), tb::i32(1, 2), tb::i32(2, 2), tb::i8(3, 0)}},
      {constant("output_shape", {4}, kInt32, 1), constant("w", {8, 3, 3, 4}, kInt8, 2), act("x", {1, 4, 4, 4}),
       act("y", {1, 8, 8, 8})},
      {0, 1, 2, -1}, {3}, {ramp(16), ramp(288)})));
  const auto& o = options_of<TransposeConvOptions>(m);
  EXPECT_EQ(o.padding, Padding::SAME);
  EXPECT_EQ(o.stride_w, 2);
  EXPECT_EQ(o.stride_h, 2);
  EXPECT_EQ(o.activation, Activation::NONE);
  EXPECT_EQ(m.subgraphs[0].inputs, (std::vector<std::int32_t>{2}));
}

TEST(TfliteRead, Squeeze) {
  const Model m = read(tb::build_model(unary(43, {30, {tb::vec_i32(0, {1, 2})}}, {1, 1, 1, 10}, {1, 10})));
  EXPECT_EQ(options_of<SqueezeOptions>(m).squeeze_dims, (std::vector<std::int32_t>{1, 2}));
}

TEST(TfliteRead, UnparsedOptionsKeepTheirUnionType) {
  const Model hs = read(tb::build_model(unary(117, {91, {}}, {1, 4}, {1, 4})));  // HARD_SWISH, HardSwishOptions
  ASSERT_TRUE(std::holds_alternative<UnparsedOptions>(only_op(hs).options));
  EXPECT_EQ(std::get<UnparsedOptions>(only_op(hs).options).options_type, 91);
  const Model tanh = read(tb::build_model(unary(28, {}, {1, 4}, {1, 4})));
  EXPECT_EQ(std::get<UnparsedOptions>(only_op(tanh).options).options_type, 0);
  EXPECT_EQ(operator_name(only_op(tanh).code), "TANH");
}

TEST(TfliteRead, OperatorCodeIsTheMaxOfBothFields) {
  tb::ModelSpec spec = unary(150, {}, {1, 4}, {1, 4});  // GELU: deprecated_builtin_code 127
  EXPECT_EQ(only_op(read(tb::build_model(spec))).code, B::GELU);
  spec.operator_codes[0] = tb::OpCodeSpec{0, std::int8_t{28}, {}, 1};  // an old file: only the byte field
  EXPECT_EQ(only_op(read(tb::build_model(spec))).code, B::TANH);
  spec.operator_codes[0] = tb::OpCodeSpec{19, std::int8_t{0}, {}, 3};
  const Model m = read(tb::build_model(spec));
  EXPECT_EQ(only_op(m).code, B::RELU);
  EXPECT_EQ(m.opcode(only_op(m)).version, 3);
}

TEST(TfliteRead, CustomOperatorWithOptions) {
  tb::ModelSpec spec = one_op(32, {}, {constant("cmd", {12}, kUInt8, 1), act("x", {1, 8}), act("y", {1, 8})}, {0, 1}, {2},
                              {ramp(12)});
  spec.operator_codes[0].custom_code = "ethos-u";
  spec.subgraphs[0].operators[0].custom_options = {7, 8, 9};
  spec.metadata = {{"OfflineMemoryAllocation", 1}};
  const Model m = read(tb::build_model(spec));
  EXPECT_EQ(m.opcode(only_op(m)).builtin_code, B::CUSTOM);
  EXPECT_EQ(m.opcode(only_op(m)).custom_code, "ethos-u");
  ASSERT_EQ(only_op(m).custom_options.size(), 3u);
  EXPECT_EQ(only_op(m).custom_options[2], 9);
  ASSERT_EQ(m.metadata.size(), 1u);
  EXPECT_EQ(m.metadata[0].name, "OfflineMemoryAllocation");
  EXPECT_EQ(m.metadata[0].buffer, 1u);
}

TEST(TfliteRead, ExternalBufferData) {
  const std::vector<std::uint8_t> data = ramp(108);
  const std::string bytes = tb::build_with_external_buffer(conv_spec(), 1, data);
  const Model m = read(bytes);
  ASSERT_TRUE(m.buffers[1].external());
  EXPECT_EQ(m.buffers[1].offset % 16, 0u);
  EXPECT_EQ(m.buffers[1].size, 108u);
  const auto got = m.tensor_data(m.subgraphs[0].tensors[1]);
  ASSERT_EQ(got.size(), 108u);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
  EXPECT_EQ(got.data(), reinterpret_cast<const std::uint8_t*>(m.bytes->data()) + m.buffers[1].offset);
}

TEST(TfliteRead, ShapeSignatureSubByteTypesAndCopies) {
  tb::ModelSpec spec = unary(28, {}, {1, 4}, {1, 4});
  spec.subgraphs[0].tensors[0].shape_signature = std::vector<std::int32_t>{-1, 4};
  spec.subgraphs[0].tensors.push_back(constant("w4", {2, 3}, 17, 1));  // INT4, 6 elements: 3 bytes packed
  spec.buffers.push_back({ramp(3), {}, {}});
  Model copy;
  {
    const Model m = read(tb::build_model(spec));
    EXPECT_EQ(m.subgraphs[0].tensors[0].shape_signature, (std::vector<std::int32_t>{-1, 4}));
    EXPECT_EQ(tensor_type_name(m.subgraphs[0].tensors[2].type), "int4");
    copy = m;
  }
  // The copy shares the bytes: its spans stay valid after the original is gone.
  EXPECT_EQ(copy.tensor_data(copy.subgraphs[0].tensors[2])[2], 2);
  spec.buffers[1].data = ramp(6);  // one element per byte is accepted too
  EXPECT_NO_THROW(read(tb::build_model(spec)));
  spec.buffers[1].data = ramp(4);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "int4 tensor 'w4' of shape [2, 3] needs 3 bytes but buffers[1] holds 4 bytes"));
}

TEST(TfliteRead, QuirksOfRealConvertersAreAccepted) {
  // A zero-size tensor used only as an operator intermediate (as UNIDIRECTIONAL_SEQUENCE_LSTM has).
  tb::ModelSpec spec = unary(44, {}, {1, 4}, {1, 4});
  spec.subgraphs[0].tensors.push_back(act("intermediate", {0}));
  spec.subgraphs[0].operators[0].intermediates = {2};
  const Model lstm = read(tb::build_model(spec));
  EXPECT_EQ(only_op(lstm).intermediates, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(lstm.subgraphs[0].tensors[2].element_count(), 0);
  // A rank-1 per-channel bias that kept the filter's quantized_dimension 3 (tflm__person_detect).
  spec = conv_spec();
  spec.subgraphs[0].tensors[2].quant = tb::QuantSpec{{0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 3, {}, {}};
  EXPECT_EQ(read(tb::build_model(spec)).subgraphs[0].tensors[2].quantization.quantized_dimension, 3);
  spec.subgraphs[0].tensors[2].quant->scale.push_back(0.5f);
  spec.subgraphs[0].tensors[2].quant->zero_point.push_back(0);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "quantized_dimension 3 is outside the shape [4] of tensor 'bias'"));
}

TEST(TfliteNames, OperatorAndTypeNames) {
  EXPECT_EQ(operator_name(3), "CONV_2D");
  EXPECT_EQ(operator_name(B::DEPTHWISE_CONV_2D), "DEPTHWISE_CONV_2D");
  EXPECT_EQ(operator_name(127), "PLACEHOLDER_FOR_GREATER_OP_CODES");
  EXPECT_EQ(operator_name(150), "GELU");
  EXPECT_EQ(operator_name(209), "STABLEHLO_CASE");
  EXPECT_EQ(operator_name(210), "UNKNOWN");
  EXPECT_EQ(operator_name(-1), "UNKNOWN");
  EXPECT_EQ(operator_from_name("RESIZE_NEAREST_NEIGHBOR"), B::RESIZE_NEAREST_NEIGHBOR);
  EXPECT_EQ(operator_from_name("NOPE"), std::nullopt);
  for (std::int32_t c = 0; c <= kMaxBuiltinOperator; ++c) {
    EXPECT_EQ(operator_from_name(operator_name(c)), static_cast<B>(c)) << c;
  }
  EXPECT_EQ(tensor_type_name(TensorType::FLOAT32), "float32");
  EXPECT_EQ(tensor_type_name(TensorType::UINT8), "uint8");
  EXPECT_EQ(tensor_type_bits(TensorType::INT16), 16);
  EXPECT_EQ(tensor_type_bits(TensorType::COMPLEX128), 128);
  EXPECT_EQ(tensor_type_bits(TensorType::STRING), 0);
}

// ---------------------------------------------------------------------------------------------
// (b) Must-fail inputs

TEST(TfliteReject, EmptyShortAndWrongIdentifier) {
  EXPECT_TRUE(fails_with("", "m.tflite: the file is empty"));
  EXPECT_TRUE(fails_with("abc", "too short"));
  std::string bytes = tb::build_model(conv_spec());
  bytes.replace(4, 4, "TFL2");
  EXPECT_TRUE(fails_with(bytes, "file identifier (bytes 4..7) is \"TFL2\", expected \"TFL3\""));
  EXPECT_TRUE(fails_with(tb::build_model(conv_spec(), "ABCD"), "is \"ABCD\""));
  bytes.replace(4, 4, std::string("\0\xff\x01Z", 4));
  EXPECT_TRUE(fails_with(bytes, "is \"\\x00\\xff\\x01Z\""));
}

TEST(TfliteReject, TruncatedFiles) {
  const std::string bytes = tb::build_model(conv_spec());
  EXPECT_TRUE(fails_with(bytes.substr(0, bytes.size() / 2), "the file ("));
  // Every shorter prefix fails cleanly (or, rarely, still holds a valid model: never a crash).
  std::size_t rejected = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    try {
      read(bytes.substr(0, n));
    } catch (const common::UserError&) {
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, bytes.size());
}

TEST(TfliteReject, OffsetsOutOfRange) {
  const std::string good = tb::build_model(conv_spec());
  std::string bytes = good;
  tb::put_u32(bytes, 0, static_cast<std::uint32_t>(good.size() + 100));
  EXPECT_TRUE(fails_with(bytes, "the offset " + std::to_string(good.size() + 100) + " to the root Model table at byte 0 points outside the file"));

  // The root table's vtable offset (soffset32 at the table) sends the vtable far outside.
  bytes = good;
  const std::uint32_t root = static_cast<std::uint8_t>(good[0]) | static_cast<std::uint8_t>(good[1]) << 8;
  tb::put_u32(bytes, root, 0x80000004u);
  EXPECT_TRUE(fails_with(bytes, "the vtable of the Model table at byte " + std::to_string(root) + " lies outside the file"));
  // A vtable at an odd position (misaligned): rejected, and the message reads it without a misaligned load.
  tb::put_u32(bytes, root, 1u);
  EXPECT_TRUE(fails_with(bytes, "the Model table at byte " + std::to_string(root) + " has a bad vtable at byte " + std::to_string(root - 1)));

  // The offset to the tensor name string of a tensor points far away: find the name, then its referrer.
  bytes = tb::build_model(conv_spec());
  const std::size_t name_at = tb::find_bytes(bytes, tb::le32(6) + "filter");
  bool patched = false;
  for (std::size_t p = 0; p + 4 <= bytes.size(); p += 4) {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[p + static_cast<std::size_t>(k)])) << (8 * k);
    if (p + v == name_at) {
      tb::put_u32(bytes, p, 0x7ffffff0u);
      patched = true;
      break;
    }
  }
  ASSERT_TRUE(patched);
  EXPECT_TRUE(fails_with(bytes, "subgraphs[0].tensors[1].name: the offset 2147483632 to the string"));
}

TEST(TfliteReject, HugeVectorLength) {
  tb::ModelSpec spec = conv_spec();
  spec.subgraphs[0].tensors[0].shape = {7777, 1};
  std::string bytes = tb::build_model(spec);
  const std::size_t at = tb::find_bytes(bytes, tb::le32(2) + tb::le32(7777) + tb::le32(1));
  tb::put_u32(bytes, at, 0x7ffffff0u);
  EXPECT_TRUE(fails_with(bytes, "subgraphs[0].tensors[0].shape: vector length 2147483632"));
  tb::put_u32(bytes, at, 0xffffffffu);
  EXPECT_TRUE(fails_with(bytes, "vector length 4294967295"));

  // Within the file but over the configured limit.
  ReadLimits limits;
  limits.max_vector_length = 30;
  spec = conv_spec();
  spec.subgraphs[0].operators[0].inputs.resize(40, 0);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "operators[0].inputs: vector length 40 exceeds the limit of 30", limits));
  // Ranks are limited separately.
  spec = conv_spec();
  spec.subgraphs[0].tensors[0].shape = std::vector<std::int32_t>(17, 1);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[0].shape: vector length 17 exceeds the limit of 16"));
}

TEST(TfliteReject, IndicesOutOfRange) {
  tb::ModelSpec spec = conv_spec();
  spec.subgraphs[0].operators[0].inputs[1] = 977;
  EXPECT_TRUE(fails_with(tb::build_model(spec),
                         "m.tflite: subgraphs[0].operators[0].inputs[1]: tensor index 977 out of range (the subgraph has 4 tensors)"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].inputs[1] = -2;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "inputs[1]: tensor index -2 out of range"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].outputs[0] = 4;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "operators[0].outputs[0]: tensor index 4 out of range"));
  spec = conv_spec();
  spec.subgraphs[0].inputs = {-1};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "subgraphs[0].inputs[0]: tensor index -1 out of range"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].opcode_index = 5;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "opcode_index: operator code index 5 out of range (the model has 1 operator codes)"));
  spec = conv_spec();
  spec.subgraphs[0].tensors[1].buffer = 9;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[1].buffer: buffer index 9 out of range (the model has 3 buffers)"));
  spec = conv_spec();
  spec.metadata = {{"x", 3}};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "metadata[0].buffer: buffer index 3 out of range"));
}

TEST(TfliteReject, OperatorReadingItsOwnOutput) {
  const tb::ModelSpec spec = one_op(28, {}, {act("x", {1, 4}), act("y", {1, 4})}, {0, 1}, {1});
  EXPECT_TRUE(fails_with(tb::build_model(spec), "operators[0].outputs[0]: the TANH operator reads its own output tensor 1 ('y')"));
}

TEST(TfliteReject, CycleThroughTwoOperators) {
  // op0: ADD(x, t2) -> t1; op1: TANH(t1) -> t2: t1 and t2 depend on each other.
  tb::ModelSpec spec;
  spec.operator_codes = {{0, {}, {}, 1}, {28, {}, {}, 1}};
  tb::SubgraphSpec sg;
  sg.tensors = {act("x", {1, 4}), act("t1", {1, 4}), act("t2", {1, 4}), act("out", {1, 4})};
  sg.inputs = {0};
  sg.outputs = {3};
  sg.operators = {tb::OperatorSpec{0, {0, 2}, {1}, {}, {}, {}, {}}, tb::OperatorSpec{1, {1}, {2}, {}, {}, {}, {}},
                  tb::OperatorSpec{1, {0}, {3}, {}, {}, {}, {}}};
  spec.subgraphs = {sg};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "subgraphs[0]: the operators form a cycle: operators[0] -> operators[1] -> operators[0] (through tensors 1, 2)"));

  // A tensor with two producers.
  spec.subgraphs[0].operators[2].outputs = {2};
  spec.subgraphs[0].operators[1].inputs = {0};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "operators[2].outputs[0]: tensor 2 ('t2') is already written by operators[1]"));
}

TEST(TfliteReject, NonPositiveDimensions) {
  tb::ModelSpec spec = conv_spec();
  spec.subgraphs[0].tensors[0].shape = {1, 0, 8, 3};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[0].shape[1]: dimension 0 of tensor 'input' is not positive (shape [1, 0, 8, 3])"));
  spec = conv_spec();
  spec.subgraphs[0].tensors[3].shape = {1, 3, 0, 4};  // an output
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[3].shape[2]: dimension 0 of tensor 'output' is not positive (shape [1, 3, 0, 4]) (zero-size tensors are accepted only as operator intermediates)"));
  spec.subgraphs[0].tensors[0].shape = {-1, 8, 8, 3};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "shape[0]: dimension -1 of tensor 'input' is not positive"));
  spec = conv_spec();
  spec.subgraphs[0].tensors[0].shape_signature = std::vector<std::int32_t>{1, 8, -2, 3};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "shape_signature[2]: -2 is neither -1 (dynamic) nor the shape's 8"));
  // Names from the file are escaped: the message stays on one line.
  spec = conv_spec();
  spec.subgraphs[0].tensors[0].shape = {1, -8, 8, 3};
  spec.subgraphs[0].tensors[0].name = "in\nput\x01";
  EXPECT_TRUE(fails_with(tb::build_model(spec), "dimension -8 of tensor 'in\\x0aput\\x01' is not positive"));
  spec.subgraphs[0].tensors[0].shape = {65536, 65536, 65536, 3};
  spec.subgraphs[0].tensors[0].shape_signature.reset();
  EXPECT_TRUE(fails_with(tb::build_model(spec), "has more than 1099511627776 elements"));
}

TEST(TfliteReject, UnknownCodesTypesAndEnums) {
  tb::ModelSpec spec = unary(250, {}, {1, 4}, {1, 4});
  EXPECT_TRUE(fails_with(tb::build_model(spec), "operator_codes[0]: unknown builtin operator code 250 (this reader knows 0..209)"));
  spec.operator_codes[0] = {127, std::int8_t{127}, {}, 1};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "PLACEHOLDER_FOR_GREATER_OP_CODES) is not an operator"));
  spec.operator_codes[0] = {32, {}, {}, 1};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "a CUSTOM operator code without custom_code"));

  spec = conv_spec();
  spec.subgraphs[0].tensors[0].type = 99;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[0].type: unknown tensor type 99"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].options.fields[0] = tb::i8(0, 5);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "builtin_options.padding: unknown padding 5"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].options.fields[3] = tb::i8(3, 9);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "fused_activation_function: unknown fused activation 9"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].options.fields[1] = tb::i32(1, 0);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "builtin_options.stride_w: stride_w is 0; it must be at least 1"));
  spec = conv_spec();
  spec.subgraphs[0].operators[0].options.type = 5;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "builtin options type 5 (Pool2DOptions) does not fit a CONV_2D operator (expects Conv2DOptions = 1)"));
  spec.subgraphs[0].operators[0].options = {};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "a CONV_2D operator without Conv2DOptions"));
  spec.subgraphs[0].operators[0].options = {200, {}};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "unknown builtin options type 200"));
  spec = conv_spec();
  spec.version = 2;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "version: unsupported schema version 2"));
  spec = conv_spec();
  spec.subgraphs.clear();
  EXPECT_TRUE(fails_with(tb::build_model(spec), "subgraphs: the model has no subgraphs"));
}

TEST(TfliteReject, ConstantBufferSizeMismatch) {
  tb::ModelSpec spec = conv_spec();
  spec.buffers[1].data = ramp(107);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "subgraphs[0].tensors[1].buffer: int8 tensor 'filter' of shape [4, 3, 3, 3] needs 108 bytes but buffers[1] holds 107 bytes"));
  spec = conv_spec();
  spec.buffers[2].data = ramp(4);
  EXPECT_TRUE(fails_with(tb::build_model(spec), "int32 tensor 'bias' of shape [4] needs 16 bytes but buffers[2] holds 4 bytes"));
}

TEST(TfliteReject, QuantizationMismatch) {
  tb::ModelSpec spec = conv_spec();
  spec.subgraphs[0].tensors[1].quant->scale.pop_back();
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[1].quantization: 3 scales but 4 zero points"));
  spec.subgraphs[0].tensors[1].quant->zero_point.pop_back();
  EXPECT_TRUE(fails_with(tb::build_model(spec), "quantization.scale: 3 per-channel scales, but dimension 0 of tensor 'filter' [4, 3, 3, 3] has 4 channels"));
  spec = conv_spec();
  spec.subgraphs[0].tensors[1].quant->quantized_dimension = 4;
  EXPECT_TRUE(fails_with(tb::build_model(spec), "quantization.quantized_dimension: quantized_dimension 4 is outside the shape"));
}

TEST(TfliteReject, ExternalBufferOutsideTheFile) {
  std::string bytes = tb::build_with_external_buffer(conv_spec(), 1, ramp(108));
  bytes.resize(bytes.size() - 1);
  EXPECT_TRUE(fails_with(bytes, "buffers[1]: external buffer data at offset"));
  EXPECT_TRUE(fails_with(bytes, "lies outside the file"));
}

TEST(TfliteReject, TableAndExpansionLimits) {
  ReadLimits limits;
  limits.max_tables = 3;
  EXPECT_TRUE(fails_with(tb::build_model(conv_spec()), "more than 3 tables", limits));

  // 12000 tensors copy to far more than 1 MiB of Tensor values: over budget with expansion_factor 0.
  tb::ModelSpec spec = unary(28, {}, {1, 4}, {1, 4});
  for (int i = 0; i < 12000; ++i) spec.subgraphs[0].tensors.push_back(act("t", {1}));
  const std::string bytes = tb::build_model(spec);
  EXPECT_NO_THROW(read(bytes));
  limits = ReadLimits{};
  limits.expansion_factor = 0;
  EXPECT_TRUE(fails_with(bytes, "subgraphs[0].tensors: the model expands to more than 1048576 bytes", limits));
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("npumap_tflite_test_" + std::to_string(std::random_device{}()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(TfliteReject, FilesOnDisk) {
  TempDir dir;
  const std::string empty = (dir.path() / "empty.tflite").string();
  std::ofstream(empty).close();
  EXPECT_TRUE(file_fails_with(empty, ": the file is empty"));
  EXPECT_TRUE(file_fails_with(dir.path().string(), ": is a folder, not a file"));
  EXPECT_TRUE(file_fails_with((dir.path() / "missing.tflite").string(), ": cannot open the file: No such file or directory"));

  const std::string big = (dir.path() / "big.tflite").string();
  {
    std::ofstream out(big, std::ios::binary);
    out << tb::build_model(conv_spec());
  }
  EXPECT_NO_THROW(read_model(big));
  ReadLimits limits;
  limits.max_file_bytes = 100;
  EXPECT_TRUE(file_fails_with(big, "bytes) (.tflite models are limited to 100 bytes)", limits));

  // A device is refused before any read (an endless one would otherwise be read up to the limit).
  if (fs::exists("/dev/zero")) {
    EXPECT_TRUE(file_fails_with("/dev/zero", "/dev/zero: is a character device, not a file or pipe", limits));
  }
}

// ---------------------------------------------------------------------------------------------
// (c) Real models, checked against workloads/models/README.md

struct ReadmeRow {
  std::string file;  // relative to the models folder
  std::uint64_t bytes = 0;
  std::string inputs, outputs;
  int ops = 0, conv = 0, dw = 0, fc = 0, add = 0, pool = 0, reshape = 0, softmax = 0;
  std::string other;
  std::uint64_t macs = 0;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// The rows of the "Shapes and operator mix" tables (15 columns) of the models README.
std::vector<ReadmeRow> parse_readme(const fs::path& readme) {
  std::vector<ReadmeRow> rows;
  std::ifstream in(readme);
  std::string line, folder;
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) == 0) folder = line.find("other_precision") != std::string::npos ? "other_precision/" : "";
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(trim(cell));
    if (cells.size() != 15 || cells[0].find(".tflite") == std::string::npos) continue;
    ReadmeRow r;
    r.file = folder + cells[0];
    r.bytes = std::stoull(cells[1]);
    r.inputs = cells[3];
    r.outputs = cells[4];
    int* counts[] = {&r.ops, &r.conv, &r.dw, &r.fc, &r.add, &r.pool, &r.reshape, &r.softmax};
    for (int k = 0; k < 8; ++k) *counts[k] = std::stoi(cells[static_cast<std::size_t>(5 + k)]);
    r.other = cells[13];
    r.macs = std::stoull(cells[14]);
    rows.push_back(r);
  }
  return rows;
}

/// "1x49x10x1 int8, 1x12 int8": the non-constant tensors `ids`.
std::string io_text(const Model& m, const Subgraph& sg, const std::vector<std::int32_t>& ids) {
  std::vector<std::string> parts;
  for (const std::int32_t i : ids) {
    const Tensor& t = sg.tensors[static_cast<std::size_t>(i)];
    if (!m.tensor_data(t).empty()) continue;
    std::string dims;
    for (const std::int32_t d : t.shape) {
      if (!dims.empty()) dims += 'x';
      dims += std::to_string(d);
    }
    parts.push_back(dims + " " + std::string(tensor_type_name(t.type)));
  }
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ", ";
    out += p;
  }
  return out;
}

/// MACs as the README counts them: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED.
std::uint64_t macs_of(const Subgraph& sg) {
  std::uint64_t macs = 0;
  const auto tensor = [&](std::int32_t i) -> const Tensor& { return sg.tensors.at(static_cast<std::size_t>(i)); };
  for (const Operator& op : sg.operators) {
    const auto out = static_cast<std::uint64_t>(tensor(op.outputs.at(0)).element_count());
    switch (op.code) {
      case B::CONV_2D: {
        const Tensor& f = tensor(op.inputs.at(1));  // [OC, KH, KW, IC]
        macs += out * static_cast<std::uint64_t>(f.element_count() / f.shape.at(0));
        break;
      }
      case B::DEPTHWISE_CONV_2D: {
        const Tensor& f = tensor(op.inputs.at(1));  // [1, KH, KW, C*m]
        macs += out * static_cast<std::uint64_t>(f.shape.at(1) * f.shape.at(2));
        break;
      }
      case B::FULLY_CONNECTED: {
        const Tensor& w = tensor(op.inputs.at(1));  // [OC, IC]
        macs += out / static_cast<std::uint64_t>(w.shape.at(0)) * static_cast<std::uint64_t>(w.element_count());
        break;
      }
      case B::TRANSPOSE_CONV: {
        const Tensor& f = tensor(op.inputs.at(1));  // [OC, KH, KW, IC], input 2
        macs += static_cast<std::uint64_t>(tensor(op.inputs.at(2)).element_count()) *
                static_cast<std::uint64_t>(f.element_count() / f.shape.at(3));
        break;
      }
      default:
        break;
    }
  }
  return macs;
}

std::vector<fs::path> real_models() {
  std::vector<fs::path> files;
  for (const fs::path& dir : {models_dir(), models_dir() / "other_precision"}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".tflite") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TfliteRealModels, EveryModelLoadsAndMatchesTheReadme) {
  ASSERT_TRUE(fs::is_directory(models_dir())) << models_dir() << " is missing (run from the project root)";
  const std::vector<fs::path> files = real_models();
  const std::vector<ReadmeRow> rows = parse_readme(models_dir() / "README.md");
  ASSERT_GE(files.size(), 40u);
  ASSERT_GE(rows.size(), 40u) << "README.md tables not found";
  std::map<std::string, ReadmeRow> by_file;
  for (const auto& r : rows) by_file[r.file] = r;

  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    Model m;
    ASSERT_NO_THROW(m = read_model(path.string()));
    const std::string rel = fs::relative(path, models_dir()).generic_string();
    const auto it = by_file.find(rel);
    ASSERT_NE(it, by_file.end()) << rel << " has no README row";
    const ReadmeRow& r = it->second;
    ASSERT_EQ(m.subgraphs.size(), 1u);
    const Subgraph& sg = m.subgraphs[0];
    EXPECT_EQ(m.bytes->size(), r.bytes);
    EXPECT_EQ(io_text(m, sg, sg.inputs), r.inputs);
    EXPECT_EQ(io_text(m, sg, sg.outputs), r.outputs);
    EXPECT_EQ(static_cast<int>(sg.operators.size()), r.ops);
    std::map<std::string, int> count;
    for (const Operator& op : sg.operators) ++count[std::string(operator_name(op.code))];
    EXPECT_EQ(count["CONV_2D"], r.conv);
    EXPECT_EQ(count["DEPTHWISE_CONV_2D"], r.dw);
    EXPECT_EQ(count["FULLY_CONNECTED"], r.fc);
    EXPECT_EQ(count["ADD"], r.add);
    EXPECT_EQ(count["AVERAGE_POOL_2D"] + count["MAX_POOL_2D"], r.pool);
    EXPECT_EQ(count["RESHAPE"], r.reshape);
    EXPECT_EQ(count["SOFTMAX"], r.softmax);
    std::string other;
    for (const auto& [name, n] : count) {
      if (n == 0 || name == "CONV_2D" || name == "DEPTHWISE_CONV_2D" || name == "FULLY_CONNECTED" || name == "ADD" ||
          name == "AVERAGE_POOL_2D" || name == "MAX_POOL_2D" || name == "RESHAPE" || name == "SOFTMAX") {
        continue;
      }
      if (!other.empty()) other += ", ";
      other += name;
      other += ' ';
      other += std::to_string(n);
    }
    EXPECT_EQ(other.empty() ? "-" : other, r.other);
    EXPECT_EQ(macs_of(sg), r.macs);
  }
}

TEST(TfliteRealModels, AFewFactsByHand) {
  ASSERT_TRUE(fs::is_directory(models_dir())) << models_dir() << " is missing (run from the project root)";
  // README: "sine regressor, 3 FC", 1x1 int8 in and out, 288 MACs (1x16 + 16x16 + 16x1).
  const Model hello = read_model((models_dir() / "tflm__hello_world_int8.tflite").string());
  const Subgraph& sg = hello.subgraphs[0];
  ASSERT_EQ(sg.operators.size(), 3u);
  for (const Operator& op : sg.operators) {
    EXPECT_EQ(op.code, B::FULLY_CONNECTED);
    EXPECT_TRUE(std::holds_alternative<FullyConnectedOptions>(op.options));
  }
  EXPECT_EQ(sg.tensors[static_cast<std::size_t>(sg.inputs[0])].shape, (std::vector<std::int32_t>{1, 1}));
  EXPECT_EQ(std::get<FullyConnectedOptions>(sg.operators[0].options).activation, Activation::RELU);

  // README: person_detect, MobileNetV1-style, output tensor "MobilenetV1/Predictions/Reshape_1", 96x96 gray.
  const Model pd = read_model((models_dir() / "tflm__person_detect.tflite").string());
  const Subgraph& p = pd.subgraphs[0];
  EXPECT_EQ(p.tensors[static_cast<std::size_t>(p.outputs[0])].name, "MobilenetV1/Predictions/Reshape_1");
  EXPECT_EQ(p.tensors[static_cast<std::size_t>(p.inputs[0])].shape, (std::vector<std::int32_t>{1, 96, 96, 1}));
  // README: 14 conv + 14 dw; the first layer is a depthwise conv 1 -> 8 channels (depth_multiplier 8),
  // stride 2, SAME, RELU6, with per-channel weights along dimension 3.
  ASSERT_EQ(p.operators[0].code, B::DEPTHWISE_CONV_2D);
  const auto& first = std::get<DepthwiseConv2DOptions>(p.operators[0].options);
  EXPECT_EQ(first.stride_w, 2);
  EXPECT_EQ(first.stride_h, 2);
  EXPECT_EQ(first.depth_multiplier, 8);
  EXPECT_EQ(first.padding, Padding::SAME);
  EXPECT_EQ(first.activation, Activation::RELU6);
  const Tensor& w = p.tensors[static_cast<std::size_t>(p.operators[0].inputs[1])];
  EXPECT_EQ(w.shape, (std::vector<std::int32_t>{1, 3, 3, 8}));
  EXPECT_EQ(w.quantization.quantized_dimension, 3);
  EXPECT_EQ(w.quantization.scale.size(), 8u);
  // Its bias keeps the filter's quantized_dimension 3 although it has rank 1 (accepted quirk).
  const Tensor& bias = p.tensors[static_cast<std::size_t>(p.operators[0].inputs[2])];
  EXPECT_EQ(bias.shape, (std::vector<std::int32_t>{8}));
  EXPECT_EQ(bias.quantization.quantized_dimension, 3);
}

// ---------------------------------------------------------------------------------------------
// (d) Fuzz: mutated bytes either read or throw UserError

/// A model using every parsed operator kind in one chain (shapes need not agree for the reader).
tb::ModelSpec rich_spec() {
  tb::ModelSpec m;
  const std::vector<std::pair<std::int32_t, tb::OptionsSpec>> ops = {
      {3, {1, {tb::i8(0, 1), tb::i32(1, 2), tb::i32(2, 2), tb::i8(3, 3)}}},
      {4, {2, {tb::i8(0, 0), tb::i32(1, 1), tb::i32(2, 1), tb::i32(3, 1), tb::i8(4, 1)}}},
      {1, {5, {tb::i8(0, 1), tb::i32(1, 2), tb::i32(2, 2), tb::i32(3, 2), tb::i32(4, 2)}}},
      {17, {5, {tb::i8(0, 1), tb::i32(1, 1), tb::i32(2, 1), tb::i32(3, 1), tb::i32(4, 1)}}},
      {9, {8, {tb::i8(0, 1), tb::boolean(2, true)}}},
      {0, {11, {tb::i8(0, 1)}}},
      {41, {28, {tb::i8(0, 1)}}},
      {18, {21, {tb::i8(0, 1)}}},
      {2, {10, {tb::i32(0, 3)}}},
      {22, {17, {tb::vec_i32(0, {1, -1})}}},
      {25, {9, {tb::f32(0, 1.0f)}}},
      {34, {22, {}}},
      {45, {32, {tb::i32(0, 1), tb::i32(1, 1)}}},
      {40, {27, {tb::boolean(0, true)}}},
      {23, {15, {tb::boolean(3, true)}}},
      {97, {74, {tb::boolean(0, true)}}},
      {49, {35, {tb::i32(0, 1)}}},
      {98, {75, {tb::f32(0, 0.1f)}}},
      {67, {49, {tb::i8(0, 1), tb::i32(1, 2), tb::i32(2, 2)}}},
      {43, {30, {tb::vec_i32(0, {0})}}},
      {117, {91, {}}},
  };
  m.buffers.push_back({ramp(27), {}, {}});  // weights shared by every operator: int8 [3, 3, 3]
  tb::SubgraphSpec sg;
  tb::TensorSpec w = constant("w", {3, 3, 3}, kInt8, 1);
  w.quant = tb::QuantSpec{{0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0, {-1.0f}, {1.0f}};
  sg.tensors.push_back(w);
  sg.tensors.push_back(act("x0", {1, 8, 8, 3}));
  sg.inputs = {1};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    m.operator_codes.push_back(tb::OpCodeSpec{ops[i].first, {}, {}, static_cast<std::int32_t>(i % 3 + 1)});
    sg.tensors.push_back(act("x" + std::to_string(i + 1), {1, 8, 8, 3}, 0.1f * static_cast<float>(i + 1)));
    const auto in = static_cast<std::int32_t>(i + 1), out = static_cast<std::int32_t>(i + 2);
    sg.operators.push_back(tb::OperatorSpec{static_cast<std::uint32_t>(i), {in, 0, -1}, {out}, {}, ops[i].second, {}, {}});
  }
  sg.outputs = {static_cast<std::int32_t>(ops.size() + 1)};
  m.subgraphs = {sg};
  m.metadata = {{"min_runtime_version", 1}};
  return m;
}

struct FuzzCounts {
  int read = 0;
  int rejected = 0;
};

/// Mutates `original` `iterations` times (1-4 edits each) and reads every result.
FuzzCounts fuzz(const std::string& original, std::uint64_t seed, int iterations, const std::string& label) {
  // Prefer positions outside large constant buffers: that is where the structure lives.
  const Model parsed = read(original);
  std::vector<std::pair<std::size_t, std::size_t>> blobs;
  for (const Buffer& b : parsed.buffers) {
    if (b.data.size() >= 64) {
      const auto begin = static_cast<std::size_t>(b.data.data() - reinterpret_cast<const std::uint8_t*>(parsed.bytes->data()));
      blobs.emplace_back(begin, begin + b.data.size());
    }
  }
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::size_t size) -> std::size_t {
    for (int attempt = 0; attempt < 8; ++attempt) {
      const std::size_t p = static_cast<std::size_t>(rng() % size);
      const bool in_blob = std::any_of(blobs.begin(), blobs.end(), [&](const auto& r) { return p >= r.first && p < r.second; });
      if (!in_blob || rng() % 16 == 0) return p;
    }
    return static_cast<std::size_t>(rng() % size);
  };
  FuzzCounts counts;
  for (int it = 0; it < iterations; ++it) {
    std::string bytes = original;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && bytes.size() > 8; ++e) {
      switch (rng() % 6) {
        case 0: {  // flip one bit
          bytes[pick(bytes.size())] ^= static_cast<char>(1u << (rng() % 8));
          break;
        }
        case 1: {  // one random byte
          bytes[pick(bytes.size())] = static_cast<char>(rng());
          break;
        }
        case 2: {  // an interesting 32-bit value (often aligned)
          const std::uint32_t values[] = {0u, 1u, 2u, 0xffffffffu, 0x7fffffffu, 0x80000000u,
                                          static_cast<std::uint32_t>(bytes.size()), static_cast<std::uint32_t>(rng())};
          std::size_t p = pick(bytes.size() - 4);
          if (rng() % 2 == 0) p &= ~std::size_t{3};
          tb::put_u32(bytes, p, values[rng() % 8]);
          break;
        }
        case 3: {  // a random 16-bit value (vtable entries)
          const std::size_t p = pick(bytes.size() - 2) & ~std::size_t{1};
          const auto v = static_cast<std::uint16_t>(rng());
          bytes[p] = static_cast<char>(v & 0xff);
          bytes[p + 1] = static_cast<char>(v >> 8);
          break;
        }
        case 4: {  // truncate
          bytes.resize(static_cast<std::size_t>(rng() % bytes.size()));
          break;
        }
        default: {  // delete a short run (shifts everything after it)
          const std::size_t p = pick(bytes.size());
          bytes.erase(p, std::min<std::size_t>(1 + rng() % 16, bytes.size() - p));
          break;
        }
      }
    }
    try {
      read_model_bytes(std::move(bytes), label);
      ++counts.read;
    } catch (const common::UserError& e) {
      ++counts.rejected;
      if (std::string(e.what()).find('\n') != std::string::npos) ADD_FAILURE() << "multi-line error: " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << ": iteration " << it << " (seed " << seed << ") threw a non-UserError: " << e.what();
    }
  }
  std::cout << "[ fuzz ] " << label << ": seed " << seed << ", " << iterations << " mutants: " << counts.read
            << " read, " << counts.rejected << " rejected\n";
  return counts;
}

std::uint64_t fuzz_seed() {
  if (const char* s = std::getenv("NPUMAP_FUZZ_SEED")) return std::stoull(s);  // to reproduce or explore
  return 0x7f1173a5eedull;
}

TEST(TfliteFuzz, HandBuiltModel) {
  const std::string bytes = tb::build_model(rich_spec());
  const Model m = read(bytes);
  ASSERT_EQ(m.subgraphs[0].operators.size(), 21u);
  const FuzzCounts c = fuzz(bytes, fuzz_seed(), 3000, "rich.tflite");
  EXPECT_GT(c.rejected, 0);
  EXPECT_GT(c.read, 0);
}

TEST(TfliteFuzz, RealModels) {
  const fs::path hello = models_dir() / "tflm__hello_world_int8.tflite";
  const fs::path kws = models_dir() / "mlperftiny__kws_ref_model.tflite";
  ASSERT_TRUE(fs::exists(hello) && fs::exists(kws)) << models_dir() << " is missing (run from the project root)";
  const FuzzCounts a = fuzz(slurp(hello), fuzz_seed() + 1, 2000, hello.filename().string());
  const FuzzCounts b = fuzz(slurp(kws), fuzz_seed() + 2, 1000, kws.filename().string());
  EXPECT_GT(a.rejected + b.rejected, 0);
}

// Values nothing sensible maps with (issue 41 point 7): refused with the field's path.
TEST(TfliteReadErrors, ZeroPointOutsideTheTypesRange) {
  // act() is int8: its range is [-128, 127].
  tb::ModelSpec spec = one_op(19, {}, {act("x", {1, 4}, 0.5f, 128), act("y", {1, 4})}, {0}, {1});
  EXPECT_TRUE(fails_with(tb::build_model(spec), "subgraphs[0].tensors[0].quantization.zero_point[0]: zero point 128 of int8 "
                                                "tensor 'x' is outside [-128, 127]"));
  spec = one_op(19, {}, {act("x", {1, 4}), act("y", {1, 4}, 0.5f, -40000)}, {0}, {1});
  spec.subgraphs[0].tensors[1].type = 7;  // int16: [-32768, 32767]
  EXPECT_TRUE(fails_with(tb::build_model(spec), "tensors[1].quantization.zero_point[0]: zero point -40000 of int16"));
}

TEST(TfliteReadErrors, NonFiniteSoftmaxBetaAndLeakyReluAlpha) {
  EXPECT_TRUE(fails_with(tb::build_model(unary(25, {9, {tb::f32(0, std::nanf(""))}}, {1, 10}, {1, 10})),
                         "subgraphs[0].operators[0].builtin_options.beta: beta is nan; it must be a finite number"));
  EXPECT_TRUE(fails_with(tb::build_model(unary(98, {75, {tb::f32(0, INFINITY)}}, {1, 10}, {1, 10})),
                         "operators[0].builtin_options.alpha: alpha is inf"));
}

TEST(TfliteReadErrors, ReshapeThatChangesTheElementCount) {
  // [1, 4, 4] holds 16 elements, [1, 15] 15.
  EXPECT_TRUE(fails_with(tb::build_model(unary(22, {17, {tb::vec_i32(0, {1, 15})}}, {1, 4, 4}, {1, 15})),
                         "subgraphs[0].operators[0].outputs[0]: the RESHAPE operator turns tensor 'x' of shape [1, 4, 4] "
                         "(16 elements) into tensor 'y' of shape [1, 15] (15 elements)"));
  EXPECT_TRUE(fails_with(tb::build_model(unary(43, {30, {}}, {1, 1, 8}, {4})), "the SQUEEZE operator turns"));
  // new_shape must describe the output's 16 elements: [1, 15] does not, [-1, 16] and [2, -1] do
  // (16 / 16 = 1 and 16 / 2 = 8), [-1, 5] does not (16 is no multiple of 5).
  EXPECT_TRUE(fails_with(tb::build_model(unary(22, {17, {tb::vec_i32(0, {1, 15})}}, {1, 4, 4}, {1, 16})),
                         "operators[0].builtin_options.new_shape: new_shape [1, 15] does not describe the 16 elements of "
                         "output tensor 'y' [1, 16]"));
  EXPECT_NO_THROW(read(tb::build_model(unary(22, {17, {tb::vec_i32(0, {-1, 16})}}, {1, 4, 4}, {1, 16}))));
  EXPECT_NO_THROW(read(tb::build_model(unary(22, {17, {tb::vec_i32(0, {2, -1})}}, {1, 4, 4}, {2, 8}))));
  EXPECT_TRUE(fails_with(tb::build_model(unary(22, {17, {tb::vec_i32(0, {-1, 5})}}, {1, 4, 4}, {1, 16})), "new_shape [-1, 5]"));
}

TEST(TfliteReadErrors, OperatorWithoutOutput) {
  tb::ModelSpec spec = one_op(19, {}, {act("x", {1, 4}), act("y", {1, 4})}, {0}, {});
  spec.subgraphs[0].outputs = {0};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "subgraphs[0].operators[0].outputs: the RELU operator has no output tensor"));
  spec = one_op(19, {}, {act("x", {1, 4}), act("y", {1, 4})}, {0}, {-1});
  spec.subgraphs[0].outputs = {0};
  EXPECT_TRUE(fails_with(tb::build_model(spec), "the RELU operator has no output tensor"));
}


}  // namespace
}  // namespace npumap::tflite
