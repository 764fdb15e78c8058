#pragma once
// Test helper: a small fluent builder of one-subgraph .tflite models (tensors, constants, operators,
// inputs and outputs by index) over tflite_builder.hpp, and the builtin codes and option tables the
// tests use. Shared by the lowering and import tests.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tflite_builder.hpp"
#include "workloads/tflite/reader.hpp"

namespace npumap::tflite {
namespace tb = testing;

constexpr std::int8_t kF32 = 0, kI32 = 2, kU8 = 3, kI16 = 7, kI8 = 9;

/// Small fluent builder of one-subgraph models: tensors, constants, operators; inputs/outputs by name.
struct Net {
  tb::ModelSpec spec;
  tb::SubgraphSpec sg;
  std::map<std::int32_t, std::uint32_t> codes;

  int fm(const std::string& name, std::vector<std::int32_t> shape, std::int8_t type = kI8, float scale = 0.5f,
         std::int64_t zp = 0) {
    tb::TensorSpec t;
    t.name = name;
    t.shape = std::move(shape);
    t.type = type;
    if (scale > 0) t.quant = tb::QuantSpec{{scale}, {zp}, 0, {}, {}};
    sg.tensors.push_back(std::move(t));
    return static_cast<int>(sg.tensors.size() - 1);
  }
  int cst_bytes(const std::string& name, std::vector<std::int32_t> shape, std::int8_t type, std::vector<std::uint8_t> bytes,
                float scale = 0.0f, std::int64_t zp = 0) {
    spec.buffers.push_back(tb::BufferSpec{std::move(bytes), {}, {}});
    const int t = fm(name, std::move(shape), type, scale, zp);
    sg.tensors.back().buffer = static_cast<std::uint32_t>(spec.buffers.size() - 1);
    return t;
  }
  int i32(const std::string& name, std::vector<std::int32_t> shape, const std::vector<std::int32_t>& v) {
    std::vector<std::uint8_t> b(v.size() * 4);
    for (std::size_t i = 0; i < v.size(); ++i)
      for (int k = 0; k < 4; ++k) b[i * 4 + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>((static_cast<std::uint32_t>(v[i]) >> (8 * k)) & 0xff);
    return cst_bytes(name, std::move(shape), kI32, std::move(b));
  }
  int bias(const std::string& name, std::int32_t n) {
    const int t = i32(name, {n}, std::vector<std::int32_t>(static_cast<std::size_t>(n), 1));
    sg.tensors.back().quant = tb::QuantSpec{{0.25f}, {0}, 0, {}, {}};
    return t;
  }
  int weights(const std::string& name, std::vector<std::int32_t> shape, std::int8_t value = 1) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return cst_bytes(name, std::move(shape), kI8, std::vector<std::uint8_t>(n, static_cast<std::uint8_t>(value)), 0.5f, 0);
  }
  void op(std::int32_t builtin, std::vector<std::int32_t> in, std::vector<std::int32_t> out, tb::OptionsSpec o = {}) {
    auto it = codes.find(builtin);
    if (it == codes.end()) {
      spec.operator_codes.push_back(tb::OpCodeSpec{builtin, {}, {}, 1});
      it = codes.emplace(builtin, static_cast<std::uint32_t>(spec.operator_codes.size() - 1)).first;
    }
    sg.operators.push_back(tb::OperatorSpec{it->second, std::move(in), std::move(out), {}, std::move(o), {}, {}});
  }
  Model build(std::vector<std::int32_t> inputs, std::vector<std::int32_t> outputs) {
    sg.inputs = std::move(inputs);
    sg.outputs = std::move(outputs);
    tb::ModelSpec m = spec;
    m.subgraphs = {sg};
    return read_model_bytes(tb::build_model(m), "test.tflite");
  }
};

// Builtin codes and options of the schema.
constexpr std::int32_t ADD = 0, AVERAGE_POOL_2D = 1, CONCATENATION = 2, CONV_2D = 3, DEPTHWISE_CONV_2D = 4,
                       DEQUANTIZE = 6, FULLY_CONNECTED = 9, LOGISTIC = 14, MAX_POOL_2D = 17, MUL = 18, RELU = 19,
                       RELU6 = 21, RESHAPE = 22, RESIZE_BILINEAR = 23, SOFTMAX = 25, TANH = 28, PAD = 34, TRANSPOSE = 39,
                       MEAN = 40, SPLIT = 49, MAXIMUM = 55, STRIDED_SLICE = 45, TRANSPOSE_CONV = 67, ABS = 101,
                       LEAKY_RELU = 98, QUANTIZE = 114, HARD_SWISH = 117, GELU = 150;

inline tb::OptionsSpec conv_opts(int stride_w, int stride_h, bool same = true, int act = 0, int dil = 1) {
  return {1, {tb::i8(0, same ? 0 : 1), tb::i32(1, stride_w), tb::i32(2, stride_h), tb::i8(3, act), tb::i32(4, dil), tb::i32(5, dil)}};
}
inline tb::OptionsSpec dw_opts(int stride, int mult, bool same = true, int act = 0) {
  return {2, {tb::i8(0, same ? 0 : 1), tb::i32(1, stride), tb::i32(2, stride), tb::i32(3, mult), tb::i8(4, act), tb::i32(5, 1), tb::i32(6, 1)}};
}
inline tb::OptionsSpec pool_opts(int stride, int filter, bool same = false, int act = 0) {
  return {5, {tb::i8(0, same ? 0 : 1), tb::i32(1, stride), tb::i32(2, stride), tb::i32(3, filter), tb::i32(4, filter), tb::i8(5, act)}};
}
inline tb::OptionsSpec add_opts(int act = 0) { return {11, {tb::i8(0, act)}}; }
inline tb::OptionsSpec mul_opts(int act = 0) { return {21, {tb::i8(0, act)}}; }
inline tb::OptionsSpec fc_opts(int act = 0) { return {8, {tb::i8(0, act), tb::i8(1, 0), tb::boolean(2, false)}}; }


}  // namespace npumap::tflite
