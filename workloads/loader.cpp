// The workload loader. It reads a file in four passes, so that each kind of mistake is caught at
// the stage that can explain it best:
//   1. syntax: top-level keys, network inputs, constants, and each layer on its own (known keys,
//      keys that apply to the op, sizes positive and below kMaxDimension, shapes whose element and
//      byte counts fit in 64 bits, the Einsum text and its ranks). Output tensors are registered
//      here, so a second producer of a tensor is reported at its `output`.
//   2. wiring: every input names a tensor that a layer produces or the file declares; an Einsum
//      layer is lowered to fully_connected or matmul once it is known which operand is a constant.
//   3. graph: the Boost.Graph DAG (one edge per shared tensor and consumer) and a topological
//      order by Kahn's algorithm with the smallest file index first, so the order is stable; a
//      leftover vertex means a cycle, which is traced and reported with every layer on it.
//   4. shapes, in topological order: output sizes from kernel, stride, dilation and padding,
//      channel counts against weights, operands of the same shape, Einsum operands against their
//      producers, then MACs with overflow checks.
// All file access goes through common::YamlNode so every error carries file:line:col and a key path.

#include "workloads/loader.hpp"

#include "common/files.hpp"
#include "common/stop_token.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "workloads/dag.hpp"
#include "workloads/einsum.hpp"

namespace npumap::workloads {
namespace {

// ---- spellings ---------------------------------------------------------------------------------

struct OpSpelling {
  const char* name;
  OpKind kind;
  Activation activation;
};

constexpr OpSpelling kOps[] = {
    {"conv2d", OpKind::Conv2D, Activation::None},
    {"depthwise_conv2d", OpKind::DepthwiseConv2D, Activation::None},
    {"max_pool", OpKind::MaxPool, Activation::None},
    {"avg_pool", OpKind::AvgPool, Activation::None},
    {"fully_connected", OpKind::FullyConnected, Activation::None},
    {"matmul", OpKind::MatMul, Activation::None},
    {"add", OpKind::Add, Activation::None},
    {"sub", OpKind::Sub, Activation::None},
    {"mul", OpKind::Mul, Activation::None},
    {"maximum", OpKind::Maximum, Activation::None},
    {"minimum", OpKind::Minimum, Activation::None},
    {"abs", OpKind::Abs, Activation::None},
    {"leaky_relu", OpKind::LeakyRelu, Activation::None},
    {"softmax", OpKind::Softmax, Activation::None},
    {"reduce_sum", OpKind::ReduceSum, Activation::None},
    {"transpose_conv2d", OpKind::TransposeConv2D, Activation::None},
    {"resize_bilinear", OpKind::ResizeBilinear, Activation::None},
    {"shl", OpKind::Shl, Activation::None},
    {"shr", OpKind::Shr, Activation::None},
    {"rescale_add", OpKind::RescaleAdd, Activation::None},
    {"clz", OpKind::Clz, Activation::None},
    {"relu", OpKind::Activation, Activation::Relu},
    {"relu6", OpKind::Activation, Activation::Relu6},
    {"relu_n1_to_1", OpKind::Activation, Activation::ReluN1To1},
    {"sigmoid", OpKind::Activation, Activation::Sigmoid},
    {"tanh", OpKind::Activation, Activation::Tanh},
    {"lut", OpKind::Activation, Activation::Lut},
    {"cpu", OpKind::Cpu, Activation::None},
};

std::vector<std::string> op_names() {
  std::vector<std::string> out;
  for (const auto& op : kOps) out.emplace_back(op.name);
  return out;
}

const OpSpelling& op_spelling(const std::string& name) {
  for (const auto& op : kOps) {
    if (name == op.name) return op;
  }
  NPUMAP_ASSERT(false);
  return kOps[0];
}

const std::vector<std::string> kActivationNames = {"none", "relu", "relu6", "relu_n1_to_1", "sigmoid", "tanh", "lut"};
const std::vector<std::string> kDataTypeNames = {"int8", "uint8", "int16", "int32"};

Activation parse_activation(const common::YamlNode& n) {
  const std::string s = n.as_choice(kActivationNames);
  for (std::size_t i = 0; i < kActivationNames.size(); ++i) {
    if (kActivationNames[i] == s) return static_cast<Activation>(i);
  }
  return Activation::None;
}

DataType parse_dtype(const common::YamlNode& n) {
  const std::string s = n.as_choice(kDataTypeNames);
  for (std::size_t i = 0; i < kDataTypeNames.size(); ++i) {
    if (kDataTypeNames[i] == s) return static_cast<DataType>(i);
  }
  return DataType::Int8;
}

// ---- keys --------------------------------------------------------------------------------------

const std::vector<std::string> kTopKeys = {"name", "inputs", "constants", "tensors", "weight_compression", "layers"};
const std::vector<std::string> kDeclaredKeys = {"name", "shape", "dtype", "quant_scale"};
const std::vector<std::string> kLayerKeys = {"name",       "op",          "inputs",      "output",      "output_shape",
                                             "kernel",     "stride",      "dilation",    "padding",     "activation",
                                             "dtype",      "quant_scale", "bias",        "weight_dtype", "weight_compression",
                                             "weight_shape", "transpose_b", "einsum",    "ranks",       "operator",
                                             "reason",     "input_shapes", "weight_encodings", "lut",
                                             "primary_ofm", "operands_swapped"};
const std::vector<std::string> kEinsumKeys = {"name",  "op",         "einsum", "ranks", "activation",
                                              "dtype", "quant_scale", "bias",  "weight_compression"};

// The keys that mean something for an op kind; any other known key is rejected rather than ignored.
std::vector<std::string> keys_for(OpKind kind) {
  std::vector<std::string> keys = {"name", "op", "inputs", "output", "output_shape", "dtype", "quant_scale"};
  if (kind != OpKind::Cpu) keys.emplace_back("input_shapes");
  if (kind != OpKind::Cpu && kind != OpKind::MatMul) keys.emplace_back("lut");
  if (has_weights(kind)) keys.emplace_back("weight_encodings");
  if (kind == OpKind::AvgPool) keys.emplace_back("primary_ofm");
  auto add = [&keys](std::initializer_list<const char*> more) {
    for (const char* k : more) keys.emplace_back(k);
  };
  switch (kind) {
    case OpKind::Conv2D:
    case OpKind::DepthwiseConv2D:
      add({"kernel", "stride", "dilation", "padding", "activation", "bias", "weight_dtype", "weight_compression",
           "weight_shape"});
      break;
    case OpKind::TransposeConv2D:
      add({"kernel", "padding", "activation", "bias", "weight_dtype", "weight_compression", "weight_shape"});
      break;
    case OpKind::MaxPool:
    case OpKind::AvgPool: add({"kernel", "stride", "padding", "activation"}); break;
    case OpKind::ResizeBilinear: add({"activation"}); break;
    case OpKind::FullyConnected: add({"activation", "bias", "weight_dtype", "weight_compression", "weight_shape"}); break;
    case OpKind::MatMul: add({"activation", "transpose_b"}); break;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Shl:
    case OpKind::Shr:
    case OpKind::RescaleAdd: add({"activation", "operands_swapped"}); break;
    case OpKind::Clz:
    case OpKind::Abs:
    case OpKind::LeakyRelu:
    case OpKind::ReduceSum: add({"activation"}); break;
    case OpKind::Softmax:
    case OpKind::Activation: break;
    case OpKind::Cpu: add({"operator", "reason"}); break;
  }
  return keys;
}

int input_count(OpKind kind) { return (is_binary_elementwise(kind) || kind == OpKind::MatMul) ? 2 : 1; }

// ---- sizes -------------------------------------------------------------------------------------

bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool checked_add(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_add_overflow(a, b, &out); }

std::int64_t bounded(const common::YamlNode& n, std::int64_t v) {
  if (v > kMaxDimension) {
    throw n.error(fmt::format("must be at most {}, got {}", kMaxDimension, v),
                  "sizes are counted in 32-bit integers by the NPU model");
  }
  return v;
}

std::int64_t dimension(const common::YamlNode& n) { return bounded(n, n.as_positive_int()); }

std::int64_t non_negative(const common::YamlNode& n) {
  const std::int64_t v = n.as_int();
  if (v < 0) throw n.error(fmt::format("must not be negative, got {}", v), "padding is 0 or more");
  return bounded(n, v);
}

// A product of sizes that must fit in 64 bits (element counts, MACs).
std::int64_t product(std::initializer_list<std::int64_t> factors, const common::YamlNode& where, const char* what) {
  std::int64_t p = 1;
  for (std::int64_t f : factors) {
    if (!checked_mul(p, f, p)) throw where.error(fmt::format("{} overflows 64 bits", what), "use smaller sizes");
  }
  return p;
}

// Dimensions as written; the element count and the byte count at 32 bits per element must fit.
std::vector<std::int64_t> read_shape(const common::YamlNode& n) {
  n.expect_sequence();
  const auto items = n.items();
  if (items.empty() || items.size() > 4) {
    throw n.error(fmt::format("a shape has 1 to 4 dimensions, got {}", items.size()),
                  "write NHWC as [N, H, W, C], or [N, C] for fully-connected tensors");
  }
  std::vector<std::int64_t> dims;
  for (const auto& item : items) dims.push_back(dimension(item));
  std::int64_t elems = 1;
  for (std::int64_t d : dims) {
    if (!checked_mul(elems, d, elems)) {
      throw n.error(fmt::format("the product of the dimensions {} overflows 64 bits", dims_string(dims)),
                    "use smaller sizes");
    }
  }
  std::int64_t bytes = 0;
  if (!checked_mul(elems, 4, bytes)) {
    throw n.error(fmt::format("the size in bytes of {} overflows 64 bits", dims_string(dims)), "use smaller sizes");
  }
  return dims;
}

// `kernel: 3` or `kernel: [3, 5]` (height, width).
std::pair<std::int64_t, std::int64_t> read_pair(const common::YamlNode& n) {
  if (n.is_scalar()) {
    const std::int64_t v = dimension(n);
    return {v, v};
  }
  if (!n.is_sequence() || n.items().size() != 2) {
    throw n.error("expected an integer or a list [height, width]", "for example 3 or [3, 1]");
  }
  const auto items = n.items();
  return {dimension(items[0]), dimension(items[1])};
}

double read_positive_double(const common::YamlNode& n) {
  const double v = n.as_double();
  if (!(v > 0.0)) throw n.error(fmt::format("must be greater than 0, got {}", n.as_string()), "write a positive number");
  return v;
}

/// The largest accepted ratio of encoded to raw weight bytes: far above any real encoding (Vela's
/// tiny tensors reach about 3), low enough to catch a typo such as a byte count written as a ratio.
constexpr double kMaxWeightCompression = 64.0;

double read_compression(const common::YamlNode& n) {
  const double v = n.as_double();
  // Encoded weights can be larger than the raw ones (stream headers, brick padding and the 16-byte
  // alignment inflate small tensors: docs/design/npu-model.md §4.2), so ratios above 1 are valid.
  if (!(v > 0.0 && v <= kMaxWeightCompression)) {
    throw n.error(fmt::format("must be greater than 0 and at most {}, got {}", kMaxWeightCompression, n.as_string()),
                  "the ratio of encoded to raw weight bytes, 0.625 by default");
  }
  return v;
}

std::int64_t out_size(PaddingMode mode, std::int64_t in, std::int64_t stride, std::int64_t dilated_kernel,
                      std::int64_t pad_before, std::int64_t pad_after) {
  switch (mode) {
    case PaddingMode::Same: return (in + stride - 1) / stride;
    case PaddingMode::Valid: return in < dilated_kernel ? 0 : (in - dilated_kernel) / stride + 1;
    case PaddingMode::Explicit: {
      const std::int64_t padded = in + pad_before + pad_after;
      return padded < dilated_kernel ? 0 : (padded - dilated_kernel) / stride + 1;
    }
  }
  return 0;
}

// needed_total_padding of docs/design/npu-model.md §3.5.
std::int64_t needed_total_padding(std::int64_t in, std::int64_t stride, std::int64_t dilated_kernel) {
  return std::max<std::int64_t>(0, ((in + stride - 1) / stride - 1) * stride + dilated_kernel - in);
}

// ---- loader state ------------------------------------------------------------------------------

// What pass 1 learned about a layer that later passes still need. The nodes to blame are found
// again from the layer's own node when there is an error: holding them took about 0.7 KiB a layer.
struct Pending {
  explicit Pending(common::YamlNode n) : node(std::move(n)) {}
  common::YamlNode node;
  std::vector<std::string> input_names;
  bool weight_shape_written = false;
  std::optional<DataType> dtype;
  std::optional<double> quant_scale;
  std::optional<EinsumExpr> expr;
  EinsumRoles roles;
  std::unordered_map<std::string, std::int64_t> rank_size;
  std::optional<OpKind> einsum_op;    // `op:` written next to an einsum

  common::YamlNode key(std::string_view name) const { return node.at(name); }
  /// Where input `i` is named: its entry of `inputs`, or an Einsum layer's einsum.
  common::YamlNode input_node(std::size_t i) const { return expr ? node.at("einsum") : node.at("inputs").items()[i]; }
  /// Entry `i` of `input_shapes`.
  common::YamlNode input_view_node(std::size_t i) const { return node.at("input_shapes").items()[i]; }
};

class Loader {
 public:
  Loader(const common::YamlNode& root, const common::StopToken& stop) : root_(root), stop_(stop) {}

  Workload run() {
    read_top();
    wire();
    build_graph();
    w_.npu_subgraph = vela_npu_subgraphs(w_);
    for (std::size_t i = 0; i < w_.topological_order.size(); ++i) {
      if (i % 256 == 255) common::throw_if_stopped(stop_, "loading the workload");
      check_layer(w_.topological_order[i]);
    }
    check_totals();
    return std::move(w_);
  }

 private:
  // ---- pass 1 ----

  void read_top() {
    if (root_.is_null()) {
      throw common::UserError({root_.file(), 1, 1}, "", "the file holds no workload",
                      "write a mapping with name, inputs and layers (docs/workload-format.md)");
    }
    root_.expect_map();
    root_.check_keys(kTopKeys);
    w_.name = root_.at("name").as_string();
    if (w_.name.empty()) throw root_.at("name").error("must not be empty", "name the network");
    w_.source_file = root_.file();
    if (auto n = root_.find("weight_compression")) default_compression_ = read_compression(*n);

    const common::YamlNode inputs = root_.at("inputs");
    const auto input_items = inputs.items();
    if (input_items.empty()) throw inputs.error("must list at least one network input", "add `- {name: x, shape: [...], dtype: int8}`");
    for (const auto& item : input_items) read_declared(item, Declared::Input);
    if (auto constants = root_.find("constants")) {
      for (const auto& item : constants->items()) read_declared(item, Declared::Constant);
    }
    if (auto tensors = root_.find("tensors")) {
      for (const auto& item : tensors->items()) read_declared(item, Declared::Written);
    }

    const common::YamlNode layers = root_.at("layers");
    const auto layer_items = layers.items();
    if (layer_items.empty()) throw layers.error("must list at least one layer", "add `- name: ...` entries");
    // Sized once: a long chain's layers grown by doubling held up to 2.5 times their size while the
    // YAML tree (the load's peak) is still held.
    w_.layers.reserve(w_.layers.size() + layer_items.size());
    pending_.reserve(pending_.size() + layer_items.size());
    w_.tensors.reserve(w_.tensors.size() + layer_items.size());  // most layers write a tensor of their own
    for (std::size_t i = 0; i < layer_items.size(); ++i) {
      if (i % 256 == 255) common::throw_if_stopped(stop_, "loading the workload");
      read_layer(layer_items[i]);
    }
  }

  enum class Declared { Input, Constant, Written };

  void read_declared(const common::YamlNode& item, Declared kind) {
    item.expect_map();
    item.check_keys(kDeclaredKeys);
    const common::YamlNode name_node = item.at("name");
    TensorInfo t;
    t.name = name_node.as_string();
    if (t.name.empty()) throw name_node.error("must not be empty", "name the tensor");
    t.dims = read_shape(item.at("shape"));
    t.shape = nhwc_view(t.dims);
    t.dtype = parse_dtype(item.at("dtype"));
    if (auto q = item.find("quant_scale")) t.quant_scale = read_positive_double(*q);
    t.is_network_input = kind == Declared::Input;
    t.is_constant = kind == Declared::Constant;
    t.is_declared = kind == Declared::Written;
    t.location = item.location();
    if (const int existing = tensor_index(t.name); existing >= 0) {
      throw name_node.error(fmt::format("tensor `{}` is declared twice (first at line {})", t.name,
                                        w_.tensors[static_cast<std::size_t>(existing)].location.line),
                            "give every tensor its own name");
    }
    add_tensor(std::move(t));
  }

  void read_layer(const common::YamlNode& item) {
    item.expect_map();
    item.check_keys(kLayerKeys);
    const int index = static_cast<int>(w_.layers.size());
    Pending p(item);
    Layer l;
    l.location = item.location();
    const common::YamlNode name_node = item.at("name");
    l.name = name_node.as_string();
    if (l.name.empty()) throw name_node.error("must not be empty", "name the layer");
    if (const int existing = layer_index(l.name); existing >= 0) {
      throw name_node.error(fmt::format("layer name `{}` is used twice (first at line {})", l.name,
                                        w_.layers[static_cast<std::size_t>(existing)].location.line),
                            "give every layer its own name");
    }
    l.weight_compression = default_compression_;

    std::string output_name;
    std::optional<common::YamlNode> output_node;
    std::vector<std::int64_t> output_dims;
    if (auto e = item.find("einsum")) {
      read_einsum(item, *e, p, l);
      output_name = p.expr->out.tensor;
      output_node = *e;
      output_dims = einsum_dims(p, p.expr->out);
    } else {
      const common::YamlNode op_node = item.at("op");
      const OpSpelling& op = op_spelling(op_node.as_choice(op_names()));
      l.kind = op.kind;
      l.activation = op.activation;
      check_applicable(item, l.kind, op.name);
      read_op_fields(item, p, l);
      output_node = item.at("output");
      output_name = output_node->as_string();
      if (output_name.empty()) throw output_node->error("must not be empty", "name the output tensor");
      output_dims = read_shape(item.at("output_shape"));
    }
    if (auto n = item.find("activation")) {
      l.activation = parse_activation(*n);
    }
    if (auto n = item.find("dtype")) p.dtype = parse_dtype(*n);
    if (auto n = item.find("quant_scale")) p.quant_scale = read_positive_double(*n);

    l.output_dims = output_dims;
    // Register the output now, so a second producer is reported at its own `output`.
    if (const int existing = tensor_index(output_name); existing >= 0) {
      TensorInfo& t = w_.tensors[static_cast<std::size_t>(existing)];
      if (t.is_declared && !p.expr) {
        // A tensor declared under `tensors:`: this layer writes a part of it (or all of it).
        if (t.producer < 0) t.producer = index;
        t.writers.push_back(index);
        l.output = existing;
        layer_by_name_.emplace(l.name, index);
        w_.layers.push_back(std::move(l));
        pending_.push_back(std::move(p));
        return;
      }
      if (t.producer >= 0) {
        const Layer& other = w_.layers[static_cast<std::size_t>(t.producer)];
        throw output_node->error(fmt::format("tensor `{}` already has a producer, layer `{}` (line {})", output_name,
                                             other.name, other.location.line),
                                 "every tensor is produced by exactly one layer; rename one of the outputs, or "
                                 "declare the tensor under `tensors:` to let several layers write parts of it");
      }
      if (t.is_declared) {
        throw output_node->error(fmt::format("tensor `{}` is declared under `tensors:`, which einsum layers cannot write",
                                             output_name),
                                 "write the layer with `op:`, `inputs:` and `output:`, or rename the output");
      }
      throw output_node->error(fmt::format("tensor `{}` is declared as a network {} and cannot also be produced by a layer",
                                           output_name, t.is_constant ? "constant" : "input"),
                               "rename the output");
    }
    TensorInfo out;
    out.name = output_name;
    out.dims = output_dims;
    out.shape = nhwc_view(output_dims);
    out.producer = index;
    out.writers = {index};
    out.location = output_node->location();
    l.output = static_cast<int>(w_.tensors.size());
    add_tensor(std::move(out));
    layer_by_name_.emplace(l.name, index);
    w_.layers.push_back(std::move(l));
    pending_.push_back(std::move(p));
  }

  void check_applicable(const common::YamlNode& item, OpKind kind, const std::string& op) {
    const auto allowed = keys_for(kind);
    for (const auto& [key, value] : item.entries()) {
      if (std::ranges::find(allowed, key) == allowed.end()) {
        throw value.error(fmt::format("does not apply to op `{}`", op),
                          fmt::format("remove it; keys of {}: {}", op, fmt::join(allowed, ", ")));
      }
    }
  }

  void read_op_fields(const common::YamlNode& item, Pending& p, Layer& l) {
    const common::YamlNode inputs = item.at("inputs");
    const auto input_items = inputs.items();
    const int wanted = input_count(l.kind);
    if (l.kind == OpKind::Cpu) {
      // A CPU operator reads any number of feature maps; its constants are its own business.
      if (input_items.empty()) throw inputs.error("cpu takes at least 1 input, got 0", "write inputs: [x] or [a, b, c]");
      l.cpu_operator = item.at("operator").as_string();
      if (l.cpu_operator.empty()) throw item.at("operator").error("must not be empty", "name the operator, e.g. LSTM");
      if (auto n = item.find("reason")) l.cpu_reason = n->as_string();
    } else if (static_cast<int>(input_items.size()) != wanted) {
      throw inputs.error(fmt::format("{} takes {} input{}, got {}", op_name(l), wanted, wanted == 1 ? "" : "s",
                                     input_items.size()),
                         wanted == 1 ? "write inputs: [x]" : "write inputs: [a, b]");
    }
    for (const auto& in : input_items) p.input_names.push_back(in.as_string());
    if (auto n = item.find("input_shapes")) {
      const auto views = n->items();
      if (views.size() != input_items.size()) {
        throw n->error(fmt::format("lists {} shape{} for {} input{}", views.size(), views.size() == 1 ? "" : "s",
                                   input_items.size(), input_items.size() == 1 ? "" : "s"),
                       "write one shape per input, in the order of `inputs`");
      }
      for (const auto& v : views) l.input_views.push_back(read_shape(v));
    }
    const bool spatial = l.kind == OpKind::Conv2D || l.kind == OpKind::DepthwiseConv2D || l.kind == OpKind::MaxPool ||
                         l.kind == OpKind::AvgPool || l.kind == OpKind::TransposeConv2D;
    if (spatial) {
      std::tie(l.kernel_h, l.kernel_w) = read_pair(item.at("kernel"));
      if (auto n = item.find("stride")) std::tie(l.stride_y, l.stride_x) = read_pair(*n);
      if (auto n = item.find("dilation")) std::tie(l.dilation_y, l.dilation_x) = read_pair(*n);
      read_padding(item.at("padding"), l);
    }
    if (has_weights(l.kind)) {
      l.has_bias = true;
      if (auto n = item.find("bias")) l.has_bias = n->as_bool();
      if (auto n = item.find("weight_dtype")) {
        l.weight_dtype = parse_dtype(*n);
        if (l.weight_dtype != DataType::Int8 && l.weight_dtype != DataType::UInt8) {
          throw n->error(fmt::format("weights must be 8-bit, got {}", data_type_name(l.weight_dtype)),
                         "the NPU reads int8 or uint8 weights, also for 16-bit feature maps");
        }
      }
      if (auto n = item.find("weight_compression")) l.weight_compression = read_compression(*n);
      if (auto n = item.find("weight_encodings")) l.weight_encodings = read_weight_encodings(*n, l.kind);
      if (auto n = item.find("weight_shape")) {
        p.weight_shape_written = true;
        l.weight_shape = read_shape(*n);
      }
    }
    if (auto n = item.find("transpose_b")) l.transpose_b = n->as_bool();
    if (auto n = item.find("operands_swapped")) l.operands_swapped = n->as_bool();
    if (auto n = item.find("lut")) {
      l.lut = read_lut(*n);
    }
    if (auto n = item.find("primary_ofm")) {
      if (n->as_string() != "input_copy") {
        throw n->error(fmt::format("unknown primary_ofm '{}'", n->as_string()),
                       "the only value is input_copy (Vela's AvgPool created for a pass of post ops only)");
      }
      l.primary_ofm_input_copy = true;
    }
  }

  static LutTable read_lut(const common::YamlNode& n) {
    n.expect_map();
    n.check_keys({"entries", "dtype"});
    LutTable t;
    const common::YamlNode entries = n.at("entries");
    t.entries = entries.as_positive_int();
    if (t.entries > 4096) throw entries.error(fmt::format("{} entries do not fit a LUT", t.entries), "Vela's tables have 256 or 512 entries");
    t.dtype = parse_dtype(n.at("dtype"));
    return t;
  }

  static std::vector<WeightEncodingEntry> read_weight_encodings(const common::YamlNode& n, OpKind kind) {
    const std::vector<std::string> traversals =
        kind == OpKind::DepthwiseConv2D  ? std::vector<std::string>{"depthwise"}
        : kind == OpKind::FullyConnected ? std::vector<std::string>{"depth_first"}
                                         : std::vector<std::string>{"depth_first", "part_kernel_first"};
    std::vector<WeightEncodingEntry> out;
    for (const common::YamlNode& item : n.items()) {
      item.expect_map();
      item.check_keys({"traversal", "streamed", "block_depths", "bytes", "scale", "worst_scale"});
      WeightEncodingEntry e;
      const std::string t = item.at("traversal").as_choice(traversals);
      e.traversal = t == "depthwise"           ? WeightTraversal::DepthWise
                    : t == "part_kernel_first" ? WeightTraversal::PartKernelFirst
                                               : WeightTraversal::DepthFirst;
      e.streamed = item.at("streamed").as_bool();
      const common::YamlNode depths = item.at("block_depths");
      for (const common::YamlNode& d : depths.items()) {
        const std::int64_t v = d.as_positive_int();
        if (!e.block_depths.empty() && v <= e.block_depths.back())
          throw d.error("block depths must increase", "list each depth once, smallest first");
        e.block_depths.push_back(v);
      }
      if (e.block_depths.empty()) throw depths.error("must list at least one block depth", "for example block_depths: [16, 32]");
      e.bytes = item.at("bytes").as_positive_int();
      e.scale = read_positive_double(item.at("scale"));
      const common::YamlNode worst = item.at("worst_scale");
      e.worst_scale = read_positive_double(worst);
      // The mean of equal bricks may round a last bit above them.
      if (e.worst_scale < e.scale * (1.0 - 1e-12))
        throw worst.error(fmt::format("is below the mean scale {}", e.scale), "the worst brick's ratio is at least the mean");
      for (const WeightEncodingEntry& other : out) {
        for (std::int64_t d : e.block_depths) {
          if (other.traversal == e.traversal && other.streamed == e.streamed &&
              std::ranges::find(other.block_depths, d) != other.block_depths.end()) {
            throw depths.error(fmt::format("block depth {} is listed twice for {} {}", d, t,
                                           e.streamed ? "streamed" : "one brick"),
                               "give each (traversal, streamed, block depth) one size");
          }
        }
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  void read_padding(const common::YamlNode& n, Layer& l) {
    if (n.is_scalar()) {
      const std::string mode = n.as_choice({"SAME", "VALID"});
      l.padding_mode = mode == "SAME" ? PaddingMode::Same : PaddingMode::Valid;
      return;
    }
    if (!n.is_sequence() || n.items().size() != 4) {
      throw n.error("expected SAME, VALID or a list [top, left, bottom, right]", "for example padding: [1, 1, 1, 1]");
    }
    const auto items = n.items();
    l.padding_mode = PaddingMode::Explicit;
    l.padding = {non_negative(items[0]), non_negative(items[1]), non_negative(items[2]), non_negative(items[3])};
  }

  void read_einsum(const common::YamlNode& item, const common::YamlNode& e, Pending& p, Layer& l) {
    for (const auto& [key, value] : item.entries()) {
      if (std::ranges::find(kEinsumKeys, key) == kEinsumKeys.end()) {
        throw value.error("does not apply to an einsum layer",
                          fmt::format("the einsum names the tensors and `ranks` gives their sizes; keys of an einsum "
                                      "layer: {}",
                                      fmt::join(kEinsumKeys, ", ")));
      }
    }
    l.einsum = e.as_string();
    std::string error;
    p.expr = parse_einsum(l.einsum, error);
    if (!p.expr) throw e.error(fmt::format("cannot parse `{}`: {}", l.einsum, error), "write it as Z[m,n] = A[m,k] * B[k,n]");
    auto roles = classify_einsum(*p.expr, error);
    if (!roles) throw e.error(error, "every rank of Z[m,n] = A[m,k] * B[k,n] appears in at least two of the tensors");
    p.roles = *roles;

    const common::YamlNode ranks = item.at("ranks");
    ranks.expect_map();  // its keys are plain words: the YAML reader refuses a list or map as a key
    for (const auto& [rank, value] : ranks.entries()) {
      const std::int64_t size = dimension(value);
      if (!rank_used(*p.expr, rank)) {
        throw value.error(fmt::format("rank `{}` does not appear in the einsum", rank), "remove it or fix the einsum");
      }
      p.rank_size[rank] = size;
      l.ranks.emplace_back(rank, size);
    }
    for (const EinsumOperand* op : {&p.expr->out, &p.expr->a, &p.expr->b}) {
      if (op->ranks.size() > 4) {
        throw e.error(fmt::format("`{}` has {} ranks; at most 4 fit an NHWC tensor", op->tensor, op->ranks.size()),
                      "merge ranks");
      }
      for (const auto& r : op->ranks) {
        if (!p.rank_size.count(r)) {
          throw ranks.error(fmt::format("rank `{}` of the einsum has no size", r), fmt::format("add `{}: <size>`", r));
        }
      }
      // The shape check of each operand, including the overflow guard.
      std::int64_t elems = 1;
      for (const auto& r : op->ranks) {
        if (!checked_mul(elems, p.rank_size[r], elems)) {
          throw ranks.error(fmt::format("the size of `{}` overflows 64 bits", op->tensor), "use smaller sizes");
        }
      }
      std::int64_t bytes = 0;
      if (!checked_mul(elems, 4, bytes)) {
        throw ranks.error(fmt::format("the size in bytes of `{}` overflows 64 bits", op->tensor), "use smaller sizes");
      }
    }
    if (auto n = item.find("op")) {
      const std::string op = n->as_choice(op_names());
      const OpKind kind = op_spelling(op).kind;
      if (kind != OpKind::FullyConnected && kind != OpKind::MatMul) {
        throw n->error(fmt::format("an einsum layer is fully_connected or matmul, not {}", op),
                       "remove `op:`; the loader derives it from the einsum");
      }
      p.einsum_op = kind;
    }
    if (auto n = item.find("weight_compression")) l.weight_compression = read_compression(*n);
    p.input_names = {p.expr->a.tensor, p.expr->b.tensor};
  }

  static bool rank_used(const EinsumExpr& expr, const std::string& rank) {
    for (const EinsumOperand* op : {&expr.out, &expr.a, &expr.b}) {
      if (std::ranges::find(op->ranks, rank) != op->ranks.end()) return true;
    }
    return false;
  }

  static std::vector<std::int64_t> einsum_dims(const Pending& p, const EinsumOperand& op) {
    std::vector<std::int64_t> dims;
    for (const auto& r : op.ranks) dims.push_back(p.rank_size.at(r));
    return dims;
  }

  // ---- pass 2 ----

  int lookup(const Pending& p, std::size_t input) {
    const std::string& name = p.input_names[input];
    const int t = tensor_index(name);
    if (t >= 0) return t;
    std::vector<std::string> names;
    for (const auto& tensor : w_.tensors) names.push_back(tensor.name);
    const std::string near = common::closest_match(name, names);
    throw p.input_node(input).error(fmt::format("tensor `{}` is not produced by any layer and is not declared as a network input", name),
                      near.empty() ? "declare it under `inputs:` or produce it with a layer"
                                   : fmt::format("did you mean `{}`? otherwise declare it under `inputs:`", near));
  }

  void wire() {
    for (const TensorInfo& t : w_.tensors) {
      if (t.is_declared && t.writers.empty()) {
        throw common::UserError(t.location, "tensors",
                                fmt::format("tensor `{}` is declared under `tensors:` but no layer writes it", t.name),
                                "name it as the `output` of the layers that write it, or remove the declaration");
      }
    }
    for (std::size_t li = 0; li < w_.layers.size(); ++li) {
      Layer& l = w_.layers[li];
      Pending& p = pending_[li];
      std::vector<int> ids;
      for (std::size_t i = 0; i < p.input_names.size(); ++i) ids.push_back(lookup(p, i));
      if (p.expr) {
        lower_einsum(l, p, ids);
      } else {
        l.inputs = ids;
      }
      std::vector<int> readers = l.inputs;
      if (l.weight_tensor >= 0) readers.push_back(l.weight_tensor);
      for (int t : readers) {
        auto& consumers = w_.tensors[static_cast<std::size_t>(t)].consumers;
        if (std::find(consumers.begin(), consumers.end(), static_cast<int>(li)) == consumers.end()) {
          consumers.push_back(static_cast<int>(li));
        }
      }
    }
  }

  // Z = A * B runs as fully_connected when B is a declared constant without batch ranks (B becomes
  // the weights), otherwise as matmul with both operands read as feature maps.
  void lower_einsum(Layer& l, Pending& p, const std::vector<int>& ids) {
    const TensorInfo& a = w_.tensors[static_cast<std::size_t>(ids[0])];
    const TensorInfo& b = w_.tensors[static_cast<std::size_t>(ids[1])];
    const common::YamlNode e = p.key("einsum");
    if (a.is_constant && b.is_constant) {
      throw e.error(fmt::format("both operands `{}` and `{}` are constants", a.name, b.name),
                    "a product of constants is itself a constant; compute it offline");
    }
    const bool fc = b.is_constant && !a.is_constant && p.roles.batch.empty();
    l.kind = fc ? OpKind::FullyConnected : OpKind::MatMul;
    if (p.einsum_op && *p.einsum_op != l.kind) {
      throw p.key("op").error(
          fmt::format("this einsum runs as {}, not {}", op_kind_name(l.kind), op_kind_name(*p.einsum_op)),
          fc ? "its second operand is a constant, so it becomes the weights of a fully_connected layer"
             : "fully_connected needs a declared constant as the second operand, without batch ranks");
    }
    if (fc) {
      l.inputs = {ids[0]};
      l.weight_tensor = ids[1];
      l.has_bias = true;
      if (auto n = p.node.find("bias")) l.has_bias = n->as_bool();
      l.weight_dtype = b.dtype;
      if (b.dtype != DataType::Int8 && b.dtype != DataType::UInt8) {
        throw e.error(fmt::format("constant `{}` is used as fully_connected weights but is {}", b.name,
                                  data_type_name(b.dtype)),
                      "the NPU reads int8 or uint8 weights; declare the constant as int8");
      }
    } else {
      l.inputs = ids;
      for (const auto& node : {p.node.find("bias"), p.node.find("weight_compression")}) {
        if (node) {
          throw node->error("applies only to an einsum that runs as fully_connected",
                            "this einsum runs as matmul, which has no weights of its own");
        }
      }
      // B is stored transposed when its last rank is a contracted one, as in S = Q * K^T.
      const auto& b_ranks = p.expr->b.ranks;
      l.transpose_b = !b_ranks.empty() && std::ranges::find(p.roles.k, b_ranks.back()) != p.roles.k.end();
    }
  }

  // ---- pass 3 ----

  void build_graph() {
    const std::size_t n = w_.layers.size();
    const Dag dag = build_dag(w_);
    std::vector<std::size_t> indegree(n, 0);
    for (std::size_t v = 0; v < n; ++v) indegree[v] = boost::in_degree(v, dag);
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t v = 0; v < n; ++v) {
      if (indegree[v] == 0) ready.push(v);
    }
    std::vector<bool> done(n, false);
    while (!ready.empty()) {
      const std::size_t v = ready.top();
      ready.pop();
      done[v] = true;
      w_.topological_order.push_back(static_cast<int>(v));
      for (auto [it, end] = boost::out_edges(v, dag); it != end; ++it) {
        const std::size_t u = boost::target(*it, dag);
        if (--indegree[u] == 0) ready.push(u);
      }
    }
    if (w_.topological_order.size() != n) report_cycle(dag, done);
  }

  // Every layer left over has a left-over predecessor, so walking predecessors from any of them
  // must revisit a layer; the walk from that layer back to itself is a cycle.
  [[noreturn]] void report_cycle(const Dag& dag, const std::vector<bool>& done) {
    const std::size_t n = w_.layers.size();
    std::size_t v = 0;
    while (done[v]) ++v;
    std::vector<int> visit_step(n, -1);
    std::vector<std::size_t> walk;
    while (visit_step[v] < 0) {
      visit_step[v] = static_cast<int>(walk.size());
      walk.push_back(v);
      std::size_t best = n;
      for (auto [it, end] = boost::in_edges(v, dag); it != end; ++it) {
        const std::size_t u = boost::source(*it, dag);
        if (!done[u]) best = std::min(best, u);
      }
      NPUMAP_ASSERT(best < n);
      v = best;
    }
    // walk[visit_step[v]..] lists the cycle backwards (each entry's predecessor follows it).
    std::vector<std::size_t> cycle(walk.begin() + visit_step[v], walk.end());
    std::reverse(cycle.begin(), cycle.end());
    const auto first = std::min_element(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), first, cycle.end());
    std::vector<std::string> names;
    for (std::size_t c : cycle) names.push_back("`" + w_.layers[c].name + "`");
    names.push_back(names.front());
    // Blame the first layer's input that comes from its predecessor on the cycle.
    const std::size_t head = cycle.front();
    const std::size_t pred = cycle.back();
    const Pending& p = pending_[head];
    const Layer& l = w_.layers[head];
    std::size_t slot = 0;
    for (std::size_t i = 0; i < l.inputs.size(); ++i) {
      if (w_.tensors[static_cast<std::size_t>(l.inputs[i])].producer == static_cast<int>(pred)) {
        slot = i;
        break;
      }
    }
    throw p.input_node(slot).error(fmt::format("layer `{}` is part of a cycle: {}", l.name, fmt::join(names, " -> ")),
                      "a workload is a DAG; one of these layers must read an earlier tensor");
  }

  // ---- pass 4 ----

  const TensorInfo& tensor(int t) const { return w_.tensors[static_cast<std::size_t>(t)]; }

  std::string origin(int t) const {
    const TensorInfo& x = tensor(t);
    if (x.is_network_input) return "as declared under `inputs:`";
    if (x.is_constant) return "as declared under `constants:`";
    return fmt::format("as produced by layer `{}`", w_.layers[static_cast<std::size_t>(x.producer)].name);
  }

  std::string describe(int t) const {
    const TensorInfo& x = tensor(t);
    std::string origin;
    if (x.is_network_input) {
      origin = "network input";
    } else if (x.is_constant) {
      origin = "constant";
    } else {
      origin = fmt::format("from layer `{}`", w_.layers[static_cast<std::size_t>(x.producer)].name);
    }
    return fmt::format("`{}` {} ({})", x.name, dims_string(x.dims), origin);
  }

  void check_layer(int li) {
    Layer& l = w_.layers[static_cast<std::size_t>(li)];
    Pending& p = pending_[static_cast<std::size_t>(li)];
    TensorInfo& out = w_.tensors[static_cast<std::size_t>(l.output)];
    if (out.is_declared) {
      // The declaration fixes the tensor's type and scale; a writer may repeat them, not change them.
      if (p.dtype && *p.dtype != out.dtype) {
        throw p.node.at("dtype").error(fmt::format("is {} but tensor `{}` is declared {}", data_type_name(*p.dtype),
                                                   out.name, data_type_name(out.dtype)),
                                       "every layer writing a declared tensor writes its declared type");
      }
      if (p.quant_scale && *p.quant_scale != out.quant_scale) {
        throw p.node.at("quant_scale").error(fmt::format("is {} but tensor `{}` is declared with scale {}",
                                                         *p.quant_scale, out.name, out.quant_scale),
                                             "every layer writing a declared tensor writes its declared scale");
      }
      if (!fits(nhwc_view(l.output_dims), out.shape)) {
        throw p.key("output_shape").error(
            fmt::format("{} does not fit in tensor `{}` {}", dims_string(l.output_dims), out.name, dims_string(out.dims)),
            "a layer writes all of a declared tensor (any shape with its element count) or a part of it "
            "(no dimension larger than the tensor's)");
      }
    } else {
      out.dtype = p.dtype.value_or(tensor(l.inputs[0]).dtype);
      if (p.quant_scale) out.quant_scale = *p.quant_scale;
    }
    if (l.lut && !uses_lut(l)) {
      throw p.key("lut").error("does not apply: the layer loads no lookup table",
                              "a table belongs to softmax and to the sigmoid, tanh and lut activations");
    }
    if (!l.lut && uses_lut(l)) l.lut = lut_table_default(l, tensor(l.inputs[0]).dtype);
    if (p.expr) {
      check_einsum(l, p);
      return;
    }
    for (std::size_t i = 0; i < l.input_views.size(); ++i) {
      const TensorInfo& t = tensor(l.inputs[i]);
      if (!fits(nhwc_view(l.input_views[i]), t.shape)) {
        throw p.input_view_node(i).error(
            fmt::format("{} does not fit in input {}", dims_string(l.input_views[i]), describe(l.inputs[i])),
            "a layer reads all of a tensor (any shape with its element count) or a part of it (no dimension "
            "larger than the tensor's)");
      }
    }
    const Shape in = input_view(l, 0);
    const Shape declared = nhwc_view(l.output_dims);
    l.ifm_shape = in;
    l.ofm_shape = declared;
    const std::string op = op_name(l);
    // A layer that writes a part of a declared tensor runs, as in Vela 2.1, as an NPU operation whose
    // OFM is the whole tensor (written at an offset): its OFM traffic is the whole tensor's.
    const bool writes_part = out.is_declared && declared.elements() < out.shape.elements();
    switch (l.kind) {
      case OpKind::Conv2D:
      case OpKind::DepthwiseConv2D:
      case OpKind::MaxPool:
      case OpKind::AvgPool: check_spatial(l, p, in, declared, op); break;
      case OpKind::FullyConnected: {
        const std::int64_t features = in.h * in.w * in.c;  // at most the element count, which fits
        if (declared.n != in.n || declared.h != 1 || declared.w != 1) {
          throw p.key("output_shape").error(
              fmt::format("is {} but fully_connected of input {} gives [{},1,1,C] (or [{},C])", dims_string(l.output_dims),
                          describe(l.ifm()), in.n, in.n),
              "the batch N is kept and H*W*C input features become C output features");
        }
        l.ifm_shape = {in.n, 1, 1, features};
        l.matmul = MatmulDims{1, in.n, declared.c, features};
        check_weight_shape(l, p, {features, declared.c}, "fully_connected weights are [input features, output features]");
        l.macs = product({in.n, features, declared.c}, p.node, "the multiply-accumulate count");
        break;
      }
      case OpKind::MatMul: check_matmul_op(l, p); break;
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Maximum:
      case OpKind::Minimum:
      case OpKind::Shl:
      case OpKind::Shr:
      case OpKind::RescaleAdd: {
        // Broadcasting: each dimension of each operand is the output's or 1.
        const Shape in2 = input_view(l, 1);
        const auto dim = [](std::int64_t a, std::int64_t b) { return a == b || a == 1 || b == 1; };
        if (!dim(in.n, in2.n) || !dim(in.h, in2.h) || !dim(in.w, in2.w) || !dim(in.c, in2.c)) {
          throw p.input_node(1).error(
              fmt::format("{} needs operands of broadcastable shapes: {} read as {} and {} read as {}", op,
                          describe(l.ifm()), shape_string(in), describe(l.ifm2()), shape_string(in2)),
              "each dimension must be equal in both operands or 1 in one of them");
        }
        l.ifm2_shape = in2;
        expect_output(l, p, Shape{std::max(in.n, in2.n), std::max(in.h, in2.h), std::max(in.w, in2.w), std::max(in.c, in2.c)},
                      op);
        break;
      }
      case OpKind::Abs:
      case OpKind::LeakyRelu:
      case OpKind::Clz:
      case OpKind::Softmax:
      case OpKind::Activation: expect_output(l, p, in, op); break;
      case OpKind::ReduceSum: expect_output(l, p, Shape{in.n, in.h, in.w, 1}, op); break;
      case OpKind::TransposeConv2D:
        // The NPU upscales the IFM 2x by zero insertion, then runs a stride-1 convolution over it.
        check_spatial(l, p, Shape{in.n, in.h * 2, in.w * 2, in.c}, declared, op);
        l.ifm_shape = in;
        break;
      case OpKind::ResizeBilinear: {
        // A 2x upscale: [N, 2H, 2W, C], or [N, 2H-1, 2W-1, C] with aligned corners.
        const bool doubled = declared == Shape{in.n, in.h * 2, in.w * 2, in.c};
        const bool aligned = declared == Shape{in.n, in.h * 2 - 1, in.w * 2 - 1, in.c};
        if (!doubled && !aligned) {
          throw p.key("output_shape").error(
              fmt::format("is {} but resize_bilinear of input {} gives {} (or {} with aligned corners)",
                          dims_string(l.output_dims), describe(l.ifm()), shape_string({in.n, in.h * 2, in.w * 2, in.c}),
                          shape_string({in.n, in.h * 2 - 1, in.w * 2 - 1, in.c})),
              "the NPU resizes by 2x steps; write larger factors as a chain of resize_bilinear layers");
        }
        l.kernel_h = l.kernel_w = 2;
        l.padding_mode = doubled ? PaddingMode::Same : PaddingMode::Valid;
        break;
      }
      case OpKind::Cpu: break;  // any output shape: the mapper does not model the CPU's operation
    }
    if (writes_part) l.ofm_shape = out.shape;
  }

  /// A written shape fits in a tensor when it is a reshaped view of all of it (the same element
  /// count) or a part of it (no dimension of the 4-D views larger).
  static bool fits(const Shape& part, const Shape& whole) {
    if (part.elements() == whole.elements()) return true;
    return part.n <= whole.n && part.h <= whole.h && part.w <= whole.w && part.c <= whole.c;
  }

  /// The 4-D shape layer `l` reads input `i` as.
  Shape input_view(const Layer& l, std::size_t i) const {
    if (i < l.input_views.size()) return nhwc_view(l.input_views[i]);
    return tensor(l.inputs[i]).shape;
  }

  void expect_output(const Layer& l, const Pending& p, const Shape& expected, const std::string& op) {
    if (nhwc_view(l.output_dims) == expected) return;
    throw p.key("output_shape").error(
        fmt::format("is {} but {} of input {} gives {}", dims_string(l.output_dims), op, describe(l.ifm()),
                    shape_string(expected)),
        l.kind == OpKind::ReduceSum ? "reduce_sum sums over the channels, giving [N,H,W,1]"
                                    : "elementwise layers keep the shape of their input");
  }

  void check_spatial(Layer& l, const Pending& p, const Shape& in, const Shape& declared, const std::string& op) {
    const std::int64_t dkh = (l.kernel_h - 1) * l.dilation_y + 1;
    const std::int64_t dkw = (l.kernel_w - 1) * l.dilation_x + 1;
    const std::int64_t oh = out_size(l.padding_mode, in.h, l.stride_y, dkh, l.padding.top, l.padding.bottom);
    const std::int64_t ow = out_size(l.padding_mode, in.w, l.stride_x, dkw, l.padding.left, l.padding.right);
    const char* mode = l.padding_mode == PaddingMode::Same ? "SAME" : l.padding_mode == PaddingMode::Valid ? "VALID" : "explicit";
    if (oh < 1 || ow < 1) {
      throw p.key("kernel").error(fmt::format("the kernel, dilated to {}x{}, does not fit input {} with {} padding", dkh,
                                             dkw, describe(l.ifm()), mode),
                                 "use a smaller kernel or dilation, or pad the input");
    }
    if (l.padding_mode == PaddingMode::Same) {
      const std::int64_t ypad = needed_total_padding(in.h, l.stride_y, dkh);
      const std::int64_t xpad = needed_total_padding(in.w, l.stride_x, dkw);
      l.padding = {ypad / 2, xpad / 2, (ypad + 1) / 2, (xpad + 1) / 2};
    }
    const bool keeps_channels = l.kind != OpKind::Conv2D && l.kind != OpKind::TransposeConv2D;
    const std::int64_t oc = keeps_channels ? in.c : declared.c;
    const Shape expected{in.n, oh, ow, oc};
    if (declared != expected) {
      if (keeps_channels && declared.c != in.c && Shape{declared.n, declared.h, declared.w, in.c} == expected) {
        throw p.key("output_shape").error(
            fmt::format("has {} channels but {} keeps the {} channels of input {}", declared.c, op, in.c, describe(l.ifm())),
            l.kind == OpKind::DepthwiseConv2D ? "the depth multiplier is 1" : "pooling works on each channel alone");
      }
      throw p.key("output_shape").error(
          fmt::format("is {} but {} of input {} with kernel {}x{}, stride {}x{}, dilation {}x{} and {} padding gives {}",
                      dims_string(l.output_dims), op, describe(l.ifm()), l.kernel_h, l.kernel_w, l.stride_y, l.stride_x,
                      l.dilation_y, l.dilation_x, mode, shape_string(expected)),
          "fix output_shape, or the kernel, stride, dilation and padding");
    }
    switch (l.kind) {
      case OpKind::Conv2D:
      case OpKind::TransposeConv2D:
        check_weight_shape(l, p, {l.kernel_h, l.kernel_w, in.c, oc},
                           "conv2d weights are [kernel_h, kernel_w, input channels, output channels]");
        l.macs = product({in.n, oh, ow, oc, l.kernel_h, l.kernel_w, in.c}, p.node, "the multiply-accumulate count");
        break;
      case OpKind::DepthwiseConv2D:
        check_weight_shape(l, p, {l.kernel_h, l.kernel_w, 1, oc}, "depthwise_conv2d weights are [kernel_h, kernel_w, 1, channels]");
        l.macs = product({in.n, oh, ow, oc, l.kernel_h, l.kernel_w}, p.node, "the multiply-accumulate count");
        break;
      default: break;
    }
  }

  // Weights are implied by the layer; a written weight_shape must agree with the channel counts.
  void check_weight_shape(Layer& l, const Pending& p, std::vector<std::int64_t> expected, const char* hint) {
    if (p.weight_shape_written && l.weight_shape != expected) {
      throw p.key("weight_shape").error(
          fmt::format("is {} but input {} and output {} need {}", dims_string(l.weight_shape), describe(l.ifm()),
                      dims_string(l.output_dims), dims_string(expected)),
          hint);
    }
    l.weight_shape = std::move(expected);
  }

  // Matrix view of written dims: the last is columns, the one before rows, the rest batch.
  struct MatrixView {
    std::int64_t batch = 1;
    std::int64_t rows = 1;
    std::int64_t cols = 1;
  };
  static MatrixView matrix_view(const std::vector<std::int64_t>& dims) {
    MatrixView v;
    v.cols = dims.back();
    if (dims.size() >= 2) v.rows = dims[dims.size() - 2];
    for (std::size_t i = 0; i + 2 < dims.size(); ++i) v.batch *= dims[i];
    return v;
  }

  void check_matmul_op(Layer& l, const Pending& p) {
    const MatrixView a = matrix_view(l.input_views.empty() ? tensor(l.ifm()).dims : l.input_views[0]);
    const MatrixView b = matrix_view(l.input_views.empty() ? tensor(l.ifm2()).dims : l.input_views[1]);
    const std::int64_t bk = l.transpose_b ? b.cols : b.rows;
    const std::int64_t bn = l.transpose_b ? b.rows : b.cols;
    if (a.batch != b.batch || a.cols != bk) {
      throw p.input_node(1).error(
          fmt::format("matmul operands do not fit: {} is {} matrices of {}x{}, {} is {} matrices of {}x{}{}",
                      describe(l.ifm()), a.batch, a.rows, a.cols, describe(l.ifm2()), b.batch, bk, bn,
                      l.transpose_b ? " (transposed)" : ""),
          "A is [.., M, K] and B is [.., K, N] ([.., N, K] with transpose_b), with the same leading batch sizes");
    }
    const MatrixView o = matrix_view(l.output_dims);
    if (o.batch != a.batch || o.rows != a.rows || o.cols != bn) {
      throw p.key("output_shape").error(
          fmt::format("is {} but matmul of {} and {} gives {} matrices of {}x{}", dims_string(l.output_dims),
                      describe(l.ifm()), describe(l.ifm2()), a.batch, a.rows, bn),
          "the output is [.., M, N]");
    }
    set_matmul(l, p, MatmulDims{a.batch, a.rows, bn, a.cols});
  }

  void set_matmul(Layer& l, const Pending& p, const MatmulDims& d) {
    l.matmul = d;
    if (l.kind == OpKind::FullyConnected) {
      l.ifm_shape = {d.m, 1, 1, d.k};
      l.ofm_shape = {d.m, 1, 1, d.n};
      l.weight_shape = {d.k, d.n};
    } else {
      l.ifm_shape = {1, d.batch, d.m, d.k};
      l.ifm2_shape = Shape{1, d.batch, d.k, d.n};
      l.ofm_shape = {1, d.batch, d.m, d.n};
    }
    l.macs = product({d.batch, d.m, d.n, d.k}, p.node, "the multiply-accumulate count");
  }

  void check_einsum(Layer& l, const Pending& p) {
    const EinsumExpr& e = *p.expr;
    std::vector<std::pair<const EinsumOperand*, int>> operands = {{&e.a, l.ifm()}};
    operands.emplace_back(&e.b, l.weight_tensor >= 0 ? l.weight_tensor : l.ifm2());
    for (const auto& [op, t] : operands) {
      const std::vector<std::int64_t> dims = einsum_dims(p, *op);
      if (nhwc_view(dims) != tensor(t).shape) {
        throw p.key("einsum").error(
            fmt::format("operand `{}` is {} here but {} {}", op->tensor, dims_string(dims), dims_string(tensor(t).dims),
                        origin(t)),
            "write the operand with the sizes, in the order, that its producer or declaration gives it");
      }
    }
    auto size_of = [&p](const std::vector<std::string>& ranks) {
      std::int64_t s = 1;
      for (const auto& r : ranks) s *= p.rank_size.at(r);  // each operand's size fits (pass 1)
      return s;
    };
    set_matmul(l, p, MatmulDims{size_of(p.roles.batch), size_of(p.roles.m), size_of(p.roles.n), size_of(p.roles.k)});
  }

  void check_totals() {
    std::int64_t macs = 0;
    std::int64_t bytes = 0;
    for (const auto& l : w_.layers) {
      if (!checked_add(macs, l.macs, macs)) throw root_.at("layers").error("the total multiply-accumulate count overflows 64 bits", "use smaller sizes");
    }
    for (const auto& t : w_.tensors) {
      if (!checked_add(bytes, tensor_bytes(t), bytes)) throw root_.at("layers").error("the total tensor size in bytes overflows 64 bits", "use smaller sizes");
    }
  }

  // Name lookups by hash, so that loading stays linear in the number of layers.
  int tensor_index(const std::string& name) const {
    const auto it = tensor_by_name_.find(name);
    return it == tensor_by_name_.end() ? -1 : it->second;
  }
  int layer_index(const std::string& name) const {
    const auto it = layer_by_name_.find(name);
    return it == layer_by_name_.end() ? -1 : it->second;
  }
  void add_tensor(TensorInfo t) {
    tensor_by_name_.emplace(t.name, static_cast<int>(w_.tensors.size()));
    w_.tensors.push_back(std::move(t));
  }

  const common::YamlNode& root_;
  common::StopToken stop_;
  Workload w_;
  std::unordered_map<std::string, int> tensor_by_name_;
  std::unordered_map<std::string, int> layer_by_name_;
  std::vector<Pending> pending_;
  double default_compression_ = kDefaultWeightCompression;
};

}  // namespace

Workload load_workload(const common::YamlNode& root) { return Loader(root, common::StopToken()).run(); }

Workload load_workload(const std::string& path) { return load_workload(common::YamlNode::load_file(path)); }

Workload load_workload(const std::string& path, const common::StopToken& stop) {
  // Polled only inside the layer loop: a network of under 256 layers loads in milliseconds and then
  // stops at the mapper's first chunk with a partial result, as a stop during the search does.
  const common::YamlNode root = common::YamlNode::load_string(common::read_input_file(path), path, stop);
  return Loader(root, stop).run();
}

Workload load_workload_from_string(const std::string& text, const std::string& file_name) {
  return load_workload(common::YamlNode::load_string(text, file_name));
}

Workload load_workload_from_string(const std::string& text, const std::string& file_name, const common::StopToken& stop) {
  const common::YamlNode root = common::YamlNode::load_string(text, file_name, stop);
  return Loader(root, stop).run();
}

}  // namespace npumap::workloads
