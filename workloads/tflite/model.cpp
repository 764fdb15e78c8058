// Names and sizes of the TFLite enums declared in model.hpp.
// Entry points: operator_name(), operator_from_name(), tensor_type_name(), tensor_type_bits(),
// Tensor::element_count().

#include "workloads/tflite/model.hpp"

#include <array>
#include <utility>

namespace npumap::tflite {
namespace {

constexpr std::array<std::pair<std::int32_t, std::string_view>, kMaxBuiltinOperator + 1> kOperatorNames{{
#define NPUMAP_TFLITE_NAME(name, value) {value, #name},
    NPUMAP_TFLITE_BUILTIN_OPERATORS(NPUMAP_TFLITE_NAME)
#undef NPUMAP_TFLITE_NAME
}};

constexpr bool operator_names_are_dense() {
  for (std::size_t i = 0; i < kOperatorNames.size(); ++i) {
    if (kOperatorNames[i].first != static_cast<std::int32_t>(i)) return false;
  }
  return true;
}
static_assert(operator_names_are_dense(), "BuiltinOperator list must hold 0..kMaxBuiltinOperator in order");

struct TypeInfo {
  std::string_view name;
  int bits;
};
constexpr std::array<TypeInfo, kMaxTensorType + 1> kTypes{{
    {"float32", 32}, {"float16", 16}, {"int32", 32}, {"uint8", 8}, {"int64", 64}, {"string", 0},
    {"bool", 8}, {"int16", 16}, {"complex64", 64}, {"int8", 8}, {"float64", 64}, {"complex128", 128},
    {"uint64", 64}, {"resource", 0}, {"variant", 0}, {"uint32", 32}, {"uint16", 16}, {"int4", 4},
    {"bfloat16", 16}, {"int2", 2}, {"uint4", 4}, {"float8_e4m3fn", 8}, {"float8_e5m2", 8},
}};

}  // namespace

std::string_view operator_name(std::int32_t code) {
  if (code < 0 || code > kMaxBuiltinOperator) return "UNKNOWN";
  return kOperatorNames[static_cast<std::size_t>(code)].second;
}

std::string_view operator_name(BuiltinOperator op) { return operator_name(static_cast<std::int32_t>(op)); }

std::optional<BuiltinOperator> operator_from_name(std::string_view name) {
  for (const auto& [value, n] : kOperatorNames) {
    if (n == name) return static_cast<BuiltinOperator>(value);
  }
  return std::nullopt;
}

std::string_view tensor_type_name(TensorType type) {
  const auto i = static_cast<int>(type);
  if (i < 0 || i > kMaxTensorType) return "unknown";
  return kTypes[static_cast<std::size_t>(i)].name;
}

int tensor_type_bits(TensorType type) {
  const auto i = static_cast<int>(type);
  if (i < 0 || i > kMaxTensorType) return 0;
  return kTypes[static_cast<std::size_t>(i)].bits;
}

std::int64_t Tensor::element_count() const {
  std::int64_t n = 1;
  for (const std::int32_t d : shape) n *= d;  // the reader bounds the product (ReadLimits::max_elements)
  return n;
}

}  // namespace npumap::tflite
