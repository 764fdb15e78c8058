#include "workloads/writer.hpp"

#include <fmt/format.h>

#include "common/text_escape.hpp"

namespace npumap::workloads {
namespace {

std::string quote(const std::string& s) { return yaml_quote(s); }

/// Shortest decimal that reads back as the same double.
std::string number(double v) { return fmt::format("{}", v); }

std::string list(const std::vector<std::int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string pair(std::int64_t a, std::int64_t b) { return fmt::format("[{}, {}]", a, b); }

std::string padding_text(const Layer& l) {
  switch (l.padding_mode) {
    case PaddingMode::Same: return "SAME";
    case PaddingMode::Valid: return "VALID";
    case PaddingMode::Explicit: break;
  }
  return fmt::format("[{}, {}, {}, {}]", l.padding.top, l.padding.left, l.padding.bottom, l.padding.right);
}

bool spatial(OpKind k) {
  return k == OpKind::Conv2D || k == OpKind::DepthwiseConv2D || k == OpKind::MaxPool || k == OpKind::AvgPool ||
         k == OpKind::TransposeConv2D;
}

bool fused_activation(OpKind k) {
  return spatial(k) || k == OpKind::FullyConnected || k == OpKind::MatMul || k == OpKind::ResizeBilinear ||
         k == OpKind::Abs || k == OpKind::LeakyRelu || k == OpKind::Clz || k == OpKind::ReduceSum ||
         is_binary_elementwise(k);
}

/// `{name: .., shape: .., dtype: .., quant_scale: ..}` of a declared tensor.
std::string declared_line(const TensorInfo& t) {
  return fmt::format("  - {{name: {}, shape: {}, dtype: {}, quant_scale: {}}}\n", quote(t.name), list(t.dims),
                     data_type_name(t.dtype), number(t.quant_scale));
}

std::string layer_line(const Workload& w, const Layer& l) {
  const TensorInfo& out = w.tensors[static_cast<std::size_t>(l.output)];
  std::vector<std::string> kv;
  kv.push_back("name: " + quote(l.name));
  kv.push_back("op: " + op_name(l));
  if (!l.einsum.empty()) {
    kv.push_back("einsum: " + quote(l.einsum));
    std::vector<std::string> ranks;
    for (const auto& [rank, size] : l.ranks) ranks.push_back(fmt::format("{}: {}", rank, size));
    kv.push_back(fmt::format("ranks: {{{}}}", fmt::join(ranks, ", ")));
  } else {
    std::vector<std::string> inputs;
    for (int t : l.inputs) inputs.push_back(quote(w.tensors[static_cast<std::size_t>(t)].name));
    kv.push_back(fmt::format("inputs: [{}]", fmt::join(inputs, ", ")));
    if (!l.input_views.empty()) {
      std::vector<std::string> views;
      for (const auto& v : l.input_views) views.push_back(list(v));
      kv.push_back(fmt::format("input_shapes: [{}]", fmt::join(views, ", ")));
    }
    kv.push_back("output: " + quote(out.name));
    kv.push_back("output_shape: " + list(l.output_dims));
  }
  kv.push_back(fmt::format("dtype: {}", data_type_name(out.dtype)));
  kv.push_back("quant_scale: " + number(out.quant_scale));
  if (l.kind == OpKind::Cpu) {
    kv.push_back("operator: " + quote(l.cpu_operator));
    kv.push_back("reason: " + quote(l.cpu_reason));
  }
  if (spatial(l.kind)) {
    kv.push_back("kernel: " + pair(l.kernel_h, l.kernel_w));
    if (l.kind != OpKind::TransposeConv2D) kv.push_back("stride: " + pair(l.stride_y, l.stride_x));
    if (l.kind == OpKind::Conv2D || l.kind == OpKind::DepthwiseConv2D) kv.push_back("dilation: " + pair(l.dilation_y, l.dilation_x));
    kv.push_back("padding: " + padding_text(l));
  }
  if (fused_activation(l.kind)) kv.push_back(fmt::format("activation: {}", activation_name(l.activation)));
  if (has_weights(l.kind)) {
    kv.push_back(fmt::format("bias: {}", l.has_bias ? "true" : "false"));
    if (l.einsum.empty()) kv.push_back(fmt::format("weight_dtype: {}", data_type_name(l.weight_dtype)));
    kv.push_back("weight_compression: " + number(l.weight_compression));
    if (!l.weight_encodings.empty()) kv.push_back("weight_encodings: " + weight_encodings_yaml(l.weight_encodings));
  }
  if (l.lut && l.einsum.empty()) kv.push_back("lut: " + lut_yaml(*l.lut));
  if (l.primary_ofm_input_copy) kv.push_back("primary_ofm: input_copy");
  if (l.operands_swapped) kv.push_back("operands_swapped: true");
  if (l.kind == OpKind::MatMul && l.einsum.empty()) kv.push_back(fmt::format("transpose_b: {}", l.transpose_b ? "true" : "false"));
  return fmt::format("  - {{{}}}\n", fmt::join(kv, ", "));
}

}  // namespace

std::string weight_encodings_yaml(const std::vector<WeightEncodingEntry>& entries) {
  std::vector<std::string> items;
  for (const WeightEncodingEntry& e : entries) {
    items.push_back(fmt::format("{{traversal: {}, streamed: {}, block_depths: {}, bytes: {}, scale: {}, worst_scale: {}}}",
                                weight_traversal_name(e.traversal), e.streamed ? "true" : "false", list(e.block_depths),
                                e.bytes, number(e.scale), number(e.worst_scale)));
  }
  return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string lut_yaml(const LutTable& table) {
  return fmt::format("{{entries: {}, dtype: {}}}", table.entries, data_type_name(table.dtype));
}

std::string yaml_quote(const std::string& s) { return common::yaml_quote(s); }

std::string to_yaml(const Workload& w, const std::string& header) {
  std::string out;
  if (!header.empty()) {
    std::size_t start = 0;
    while (start <= header.size()) {
      const std::size_t nl = header.find('\n', start);
      out += "# " + common::yaml_comment_text(header.substr(start, nl == std::string::npos ? std::string::npos : nl - start)) + "\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
  out += "name: " + quote(w.name) + "\n";
  out += "inputs:\n";
  for (const TensorInfo& t : w.tensors) {
    if (t.is_network_input) out += declared_line(t);
  }
  const auto section = [&](const char* key, bool TensorInfo::*flag) {
    bool any = false;
    for (const TensorInfo& t : w.tensors) {
      if (!(t.*flag)) continue;
      if (!any) out += fmt::format("{}:\n", key);
      any = true;
      out += declared_line(t);
    }
  };
  section("constants", &TensorInfo::is_constant);
  section("tensors", &TensorInfo::is_declared);
  out += "layers:\n";
  for (const Layer& l : w.layers) out += layer_line(w, l);
  return out;
}

}  // namespace npumap::workloads
