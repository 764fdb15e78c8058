#include "workloads/tflite/import.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>

#include <tbb/parallel_for.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/files.hpp"
#include "common/hash.hpp"
#include "common/text_escape.hpp"
#include "common/user_error.hpp"
#include "workloads/loader.hpp"
#include "workloads/tflite/reader.hpp"
#include "workloads/tflite/weight_encoding.hpp"
#include "workloads/writer.hpp"

namespace npumap::tflite {
namespace {

using workloads::DataType;

/// The OFM block depth of the representative `weight_compression` ratio (a single number for the
/// layer, used when a mapping's variant has no encoded size): 16, the depth Vela's block-config
/// search picks most often for layers with 16 or more output channels, or a smaller layer's own
/// depth rounded up to the micro-block.
int representative_block_depth(int ofm_depth, const WeightAccelerator& accel) {
  const int ublock = accel.ofm_ublock_depth;
  return std::min(16, (ofm_depth + ublock - 1) / ublock * ublock);
}

/// The OFM block depths the block-config search offers a layer of `ofm_depth` output channels
/// (docs/design/npu-model.md §8.4): multiples of the micro-block depth below the deepest block (128),
/// kept when a multiple of 16 or at least the layer's depth; a depth past the layer's is listed as
/// the layer's depth (it encodes alike).
std::vector<int> searched_block_depths(int ofm_depth, const WeightAccelerator& accel) {
  constexpr int kOfmBlockMaxDepth = 128;
  const int ublock = accel.ofm_ublock_depth;
  const int max_d = std::min(kOfmBlockMaxDepth, ofm_depth);
  std::vector<int> out;
  for (int c = ublock; c < max_d + ublock; c += ublock) {
    if (c >= max_d || c % 16 == 0) {
      const int d = std::min(c, ofm_depth);
      if (out.empty() || out.back() != d) out.push_back(d);
    }
  }
  return out;
}

workloads::WeightTraversal workload_traversal(WeightTraversal t) {
  switch (t) {
    case WeightTraversal::DepthFirst: return workloads::WeightTraversal::DepthFirst;
    case WeightTraversal::PartKernelFirst: return workloads::WeightTraversal::PartKernelFirst;
    case WeightTraversal::DepthWise: return workloads::WeightTraversal::DepthWise;
  }
  return workloads::WeightTraversal::DepthFirst;
}

[[noreturn]] void fail(const Model& model, const std::string& where, const std::string& message,
                       const std::string& hint = {}) {
  throw common::UserError(common::SourceLocation{model.name, 0, 0}, where, message, hint);
}

/// The workload data type of a feature map the NPU reads or writes.
std::optional<DataType> npu_data_type(TensorType t) {
  switch (t) {
    case TensorType::INT8: return DataType::Int8;
    case TensorType::UINT8: return DataType::UInt8;
    case TensorType::INT16: return DataType::Int16;
    case TensorType::INT32: return DataType::Int32;
    default: return std::nullopt;
  }
}

/// A tensor only CPU operators touch lives in the arena and matters only by its size: other element
/// types are written as the workload type of the same width.
std::optional<DataType> arena_data_type(TensorType t) {
  if (auto d = npu_data_type(t)) return d;
  switch (t) {
    case TensorType::FLOAT32: return DataType::Int32;
    case TensorType::FLOAT16: return DataType::Int16;
    case TensorType::BOOL: return DataType::Int8;
    default: return std::nullopt;
  }
}

/// A lowered tensor's shape as workload dims (rank 1..4): a scalar is [1]; leading dimensions past
/// four are merged into the first of the remaining four.
std::vector<std::int64_t> workload_dims(const std::vector<std::int32_t>& shape) {
  std::vector<std::int64_t> d(shape.begin(), shape.end());
  if (d.empty()) return {1};
  while (d.size() > 4 && d.front() == 1) d.erase(d.begin());
  while (d.size() > 4) {
    d[1] *= d[0];
    d.erase(d.begin());
  }
  return d;
}

std::vector<std::int64_t> dims4(const Shape4& s) { return {s[0], s[1], s[2], s[3]}; }

std::string list(const std::vector<std::int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string number(double v) { return fmt::format("{}", v); }

/// The workload op of a pass's primary op.
const char* op_text(const Model& model, const NpuPass& p) {
  switch (p.op_type) {
    case VelaOpType::Conv2DBias: return "conv2d";
    case VelaOpType::DepthwiseConv2DBias: return "depthwise_conv2d";
    case VelaOpType::FullyConnected: return "fully_connected";
    case VelaOpType::Conv2DBackpropInputSwitchedBias: return "transpose_conv2d";
    case VelaOpType::AvgPool: return "avg_pool";
    case VelaOpType::MaxPool: return "max_pool";
    case VelaOpType::ReduceSum: return "reduce_sum";
    case VelaOpType::ResizeBilinear: return "resize_bilinear";
    case VelaOpType::Add: return "add";
    case VelaOpType::Sub: return "sub";
    case VelaOpType::Mul: return "mul";
    case VelaOpType::Maximum: return "maximum";
    case VelaOpType::Minimum: return "minimum";
    case VelaOpType::SHL: return "shl";
    case VelaOpType::SHR: return "shr";
    case VelaOpType::RescaleAdd: return "rescale_add";
    case VelaOpType::Abs: return "abs";
    case VelaOpType::CLZ: return "clz";
    case VelaOpType::LeakyRelu: return "leaky_relu";
    default: break;
  }
  fail(model, "passes", fmt::format("pass '{}' has primary op {}, which no workload op runs", p.name,
                                    vela_op_type_name(p.op_type)));
}

/// The workload spelling of a pass's activation. Clip (a clamp to the output range) costs what no
/// activation costs (docs/design/npu-model.md §1.2: index 2, "none or any other").
const char* activation_text(NpuActivation a) {
  switch (a) {
    case NpuActivation::None:
    case NpuActivation::Clip: return "none";
    case NpuActivation::Relu: return "relu";
    case NpuActivation::Relu6: return "relu6";
    case NpuActivation::ReluN1To1: return "relu_n1_to_1";
    case NpuActivation::Sigmoid: return "sigmoid";
    case NpuActivation::Tanh: return "tanh";
    case NpuActivation::LUT: return "lut";
  }
  return "none";
}

bool spatial(VelaOpType t) {
  return t == VelaOpType::Conv2DBias || t == VelaOpType::DepthwiseConv2DBias || t == VelaOpType::AvgPool ||
         t == VelaOpType::MaxPool || t == VelaOpType::Conv2DBackpropInputSwitchedBias;
}

bool has_weights(VelaOpType t) {
  return t == VelaOpType::Conv2DBias || t == VelaOpType::DepthwiseConv2DBias || t == VelaOpType::FullyConnected ||
         t == VelaOpType::Conv2DBackpropInputSwitchedBias;
}

/// The encoder input of a pass's weights: the real weight values after Vela's rewrites, or, for
/// weights the lowering creates (MEAN's averaging kernel), unit weights of the pass's shape.
WeightEncodingInput weight_input(const Model& model, const NpuPass& p, const WeightAccelerator& accel, bool rewrites) {
  std::int64_t raw = 1;
  for (std::int32_t d : p.weights_shape) raw *= d;
  if (raw <= 0) fail(model, "passes", fmt::format("pass '{}' has an empty weight shape", p.name));
  const bool from_model =
      p.tflite_op_index >= 0 && p.weights_tensor >= 0 && !model.subgraphs.empty() &&
      static_cast<std::size_t>(p.tflite_op_index) < model.subgraphs[0].operators.size();
  if (from_model) {
    OperatorWeightOptions o;
    o.accelerator = accel;
    o.first_layer_rewrite = rewrites;
    return operator_weight_input(model, 0, p.tflite_op_index, o);
  }
  // Weights the lowering creates: OHWI of unit values.
  WeightEncodingInput in;
  in.ofm_depth = p.weights_shape.size() > 0 ? p.weights_shape[0] : 1;
  in.kernel_h = p.weights_shape.size() > 1 ? p.weights_shape[1] : 1;
  in.kernel_w = p.weights_shape.size() > 2 ? p.weights_shape[2] : 1;
  in.ifm_depth = p.weights_shape.size() > 3 ? p.weights_shape[3] : 1;
  in.values.assign(static_cast<std::size_t>(raw), 1);
  in.block_type = p.op_type == VelaOpType::DepthwiseConv2DBias ? WeightBlockType::Depthwise
                  : p.op_type == VelaOpType::FullyConnected    ? WeightBlockType::FullyConnected
                  : p.op_type == VelaOpType::Conv2DBackpropInputSwitchedBias ? WeightBlockType::TransposeConv
                                                                             : WeightBlockType::Conv;
  in.ifm_bits = p.ifm_type == TensorType::INT16 ? 16 : 8;
  in.traversal = choose_traversal(in.block_type, in.kernel_h, in.kernel_w, in.ifm_depth, in.ifm_bits);
  in.accelerator = accel;
  in.dilation_h = p.kernel.dilation_h;
  in.dilation_w = p.kernel.dilation_w;
  return in;
}

/// The traversals a mapping may feed the weights in (the mapspace's choices): both orders for a
/// convolution, the depthwise order for a depthwise convolution, depth-first for fully connected.
std::vector<WeightTraversal> mapped_traversals(WeightBlockType type) {
  switch (type) {
    case WeightBlockType::Conv:
    case WeightBlockType::TransposeConv: return {WeightTraversal::DepthFirst, WeightTraversal::PartKernelFirst};
    case WeightBlockType::Depthwise: return {WeightTraversal::DepthWise};
    case WeightBlockType::FullyConnected: return {WeightTraversal::DepthFirst};
  }
  return {WeightTraversal::DepthFirst};
}

/// The table a LUT activation loads (Vela's tables: 8-bit activations 256 int8 entries, the 8-bit
/// softmax exp 256 int32, the 16-bit softmax tables 512 int32).
workloads::LutTable lut_table(LutKind kind) {
  switch (kind) {
    case LutKind::SoftmaxExp: return {256, DataType::Int32};
    case LutKind::SoftmaxExp16:
    case LutKind::SoftmaxReciprocal16: return {512, DataType::Int32};
    default: return {256, DataType::Int8};
  }
}

/// Builds the workload YAML of a lowered graph.
class Converter {
 public:
  Converter(const Model& model, const NpuGraph& g, const ImportOptions& options)
      : model_(model), g_(g), options_(options), accel_(weight_accelerator(options.accelerator_config.empty()
                                                                                 ? "ethos-u55-128"
                                                                                 : options.accelerator_config)) {}

  std::string run() {
    name_tensors();
    classify_tensors();
    const std::vector<int> order = node_order();
    encode_weights_in_parallel();
    std::string layers;
    for (int node : order) {
      if (node < num_passes()) {
        layers += pass_line(g_.passes[static_cast<std::size_t>(node)]);
      } else {
        layers += cpu_lines(g_.cpu_ops[static_cast<std::size_t>(node - num_passes())]);
      }
    }
    std::string out;
    out += fmt::format("# Imported from {} by npu-mapper: the NPU passes and CPU operators of Vela 2.1's lowering\n",
                       common::yaml_comment_text(model_.name));
    out += fmt::format("# ({}, Vela rewrites {}). Weight compression: Vela's weight encoder on the model's weights.\n",
                       common::yaml_comment_text(options_.accelerator_config.empty() ? "ethos-u55-128" : options_.accelerator_config),
                       options_.vela_rewrites ? "on" : "off");
    out += "name: " + workloads::yaml_quote(network_name()) + "\n";
    out += "inputs:\n" + section(Role::Input);
    if (any(Role::Constant)) out += "constants:\n" + section(Role::Constant);
    if (any(Role::Declared)) out += "tensors:\n" + section(Role::Declared);
    out += "layers:\n" + layers;
    return out;
  }

 private:
  enum class Role : std::uint8_t { Unused, Input, Constant, Declared, Output };

  int num_passes() const { return static_cast<int>(g_.passes.size()); }

  std::string network_name() const {
    std::string n = model_.name;
    const auto slash = n.find_last_of('/');
    if (slash != std::string::npos) n = n.substr(slash + 1);
    const auto dot = n.rfind(".tflite");
    if (dot != std::string::npos && dot > 0) n = n.substr(0, dot);
    return n.empty() ? std::string("model") : n;
  }

  // ---- tensors ----

  /// Unique names: a lowered tensor keeps its name, a repeated one gets "#2", "#3", ...
  void name_tensors() {
    std::unordered_map<std::string, int> seen;
    for (const auto& t : g_.tensors) {
      // As written (valid UTF-8): two names that differ only in bytes that are not UTF-8 stay two.
      std::string n = t.name.empty() ? std::string("tensor") : common::valid_utf8(t.name);
      int& count = seen[n];
      ++count;
      tensor_names_.push_back(count == 1 ? n : fmt::format("{}#{}", n, count));
    }
  }

  const LoweredTensor& lt(int t) const { return g_.tensors[static_cast<std::size_t>(t)]; }

  /// A tensor's workload dims: its own shape, or for a tensor whose writers' OFM is a 4-D view of it
  /// (Vela reshapes a concatenation's output), that view, so each written part is a box in it.
  std::vector<std::int64_t> dims(int t) const {
    const auto& view = declared_view_[static_cast<std::size_t>(t)];
    return view.empty() ? workload_dims(lt(t).shape) : view;
  }

  DataType dtype(int t, bool npu) const {
    const TensorType type = lt(t).dtype;
    const auto d = npu ? npu_data_type(type) : arena_data_type(type);
    if (!d) {
      fail(model_, fmt::format("tensors['{}']", lt(t).name),
           fmt::format("tensor '{}' is {}, which {}", lt(t).name, tensor_type_name(type),
                       npu ? "the NPU does not read or write" : "has no workload type of its width"),
           "npu-mapper maps networks whose arena tensors are int8, uint8, int16 or int32 (or 4-, 2-, 1-byte "
           "tensors only the CPU touches)");
    }
    return *d;
  }

  /// The `quant_scale: ...` entry of a tensor: its scale (1 when it has none). A scale that is not a
  /// positive finite number (0, negative, NaN, infinity) is refused when an NPU pass reads or writes
  /// the tensor; a tensor only CPU layers touch (Vela put them there, G10/G14) gets no entry, since
  /// a CPU layer's cost does not depend on it (docs/design/tflite-import.md, "Hostile and corrupt models").
  std::string quant_scale_entry(int t) const {
    const NpuQuant& q = lt(t).quant;
    if (!q.quantized()) return "quant_scale: 1";
    const float s = q.scale[0];
    if (std::isfinite(s) && s > 0.0f) return "quant_scale: " + number(static_cast<double>(s));
    const auto npu = [&](const std::vector<NodeRef>& refs) {
      for (const NodeRef& r : refs) {
        if (r.kind == NodeRef::Kind::NpuPass) return g_.passes[static_cast<std::size_t>(r.index)].tflite_op_index;
      }
      return -2;
    };
    int op = npu(lt(t).producers);
    if (op == -2) op = npu(lt(t).consumers);
    if (op == -2) return {};
    const int mt = lt(t).model_tensor;
    fail(model_, mt >= 0 ? fmt::format("subgraphs[0].tensors[{}].quantization.scale[0]", mt) : fmt::format("tensors['{}']", lt(t).name),
         fmt::format("quantisation scale {} of tensor '{}' (read or written on the NPU by operators[{}]) is not a "
                     "positive finite number",
                     s, lt(t).name, op),
         "a corrupt model: every NPU tensor needs a scale > 0");
  }

  /// The tensors the passes read as feature maps and the CPU operators touch, and how the workload
  /// declares each.
  void classify_tensors() {
    role_.assign(g_.tensors.size(), Role::Unused);
    npu_touched_.assign(g_.tensors.size(), false);
    std::vector<int>& writes = writer_count_;
    writes.assign(g_.tensors.size(), 0);
    for (const NpuPass& p : g_.passes) ++writes[static_cast<std::size_t>(p.ofm)];
    for (const CpuOp& c : g_.cpu_ops) {
      for (int t : c.outputs) {
        if (t >= 0) ++writes[static_cast<std::size_t>(t)];
      }
    }
    std::vector<bool> whole(g_.tensors.size(), true);
    std::vector<bool> read(g_.tensors.size(), false);
    declared_view_.assign(g_.tensors.size(), {});
    for (const NpuPass& p : g_.passes) {
      const std::int64_t own = workloads::nhwc_view(workload_dims(lt(p.ofm).shape)).elements();
      if (writes[static_cast<std::size_t>(p.ofm)] > 1 && elements(p.ofm_shape) == own) {
        declared_view_[static_cast<std::size_t>(p.ofm)] = dims4(p.ofm_shape);
      }
    }
    for (const NpuPass& p : g_.passes) {
      for (int t : {p.ifm, p.has_ifm2 ? p.ifm2 : -1}) {
        if (t < 0) continue;
        read[static_cast<std::size_t>(t)] = true;
        npu_touched_[static_cast<std::size_t>(t)] = true;
      }
      npu_touched_[static_cast<std::size_t>(p.ofm)] = true;
      if (workloads::nhwc_view(output_dims(p)) != workloads::nhwc_view(dims(p.ofm))) {
        whole[static_cast<std::size_t>(p.ofm)] = false;
      }
    }
    for (const CpuOp& c : g_.cpu_ops) {
      for (int t : cpu_inputs(c)) read[static_cast<std::size_t>(t)] = true;
    }
    for (std::size_t t = 0; t < g_.tensors.size(); ++t) {
      if (writes[t] > 1 || (writes[t] == 1 && !whole[t])) {
        role_[t] = Role::Declared;
      } else if (writes[t] == 1) {
        role_[t] = Role::Output;
      } else if (read[t]) {
        role_[t] = g_.tensors[t].constant ? Role::Constant : Role::Input;
      }
    }
  }

  /// The feature maps a CPU operator reads: its non-constant inputs, or its constants when it reads
  /// nothing else (a CPU operator has at least one input in the workload).
  std::vector<int> cpu_inputs(const CpuOp& c) const {
    std::vector<int> ins;
    for (int t : c.inputs) {
      if (t >= 0 && !lt(t).constant && std::find(ins.begin(), ins.end(), t) == ins.end()) ins.push_back(t);
    }
    if (ins.empty()) {
      for (int t : c.inputs) {
        if (t >= 0 && std::find(ins.begin(), ins.end(), t) == ins.end()) ins.push_back(t);
      }
    }
    return ins;
  }

  bool any(Role r) const { return std::find(role_.begin(), role_.end(), r) != role_.end(); }

  std::string section(Role r) const {
    std::string out;
    for (std::size_t t = 0; t < g_.tensors.size(); ++t) {
      if (role_[t] != r) continue;
      const int ti = static_cast<int>(t);
      const std::string scale = quant_scale_entry(ti);
      out += fmt::format("  - {{name: {}, shape: {}, dtype: {}{}}}\n", workloads::yaml_quote(tensor_names_[t]),
                         list(dims(ti)), workloads::data_type_name(dtype(ti, npu_touched_[t])),
                         scale.empty() ? "" : ", " + scale);
    }
    return out;
  }

  // ---- order ----

  /// Passes and CPU operators in an order that respects every tensor's writers and readers: Kahn's
  /// algorithm, ready nodes taken by TFLite operator index, then by position in Vela's pass order;
  /// except that a producer whose only reader reads nothing else (a chain link) is taken as late as
  /// its reader, right before it, where that keeps no input live longer (chain_heads). Vela's pass
  /// order (its depth-first walk back from the outputs) puts such a producer right before its
  /// reader too, and our mapspace rolls a tensor only from one step into the next (lowering.cpp
  /// may_roll), so Vela's cascades along such links stay expressible: yolo-fastest's max pools, each
  /// right before the copy into the concatenation it feeds, where operator order put the three
  /// pools first.
  std::vector<int> node_order() const {
    const int n = num_passes() + static_cast<int>(g_.cpu_ops.size());
    std::vector<std::vector<int>> succ(static_cast<std::size_t>(n)), pred(static_cast<std::size_t>(n));
    std::vector<int> indegree(static_cast<std::size_t>(n), 0);
    for (const LoweredTensor& t : g_.tensors) {
      for (const NodeRef& w : t.producers) {
        for (const NodeRef& r : t.consumers) {
          const int a = node_of(w);
          const int b = node_of(r);
          if (a == b) continue;
          succ[static_cast<std::size_t>(a)].push_back(b);
          pred[static_cast<std::size_t>(b)].push_back(a);
          ++indegree[static_cast<std::size_t>(b)];
        }
      }
    }
    const std::vector<int> plain = kahn(succ, indegree, [&](int v) { return std::make_tuple(op_of(v), v, 1, v); });
    const std::vector<int> head = chain_heads(succ, pred, plain);
    return kahn(succ, indegree, [&](int v) {
      const int h = head[static_cast<std::size_t>(v)];
      return std::make_tuple(op_of(h), h, h == v ? 1 : 0, v);
    });
  }

  int node_of(const NodeRef& r) const { return r.kind == NodeRef::Kind::NpuPass ? r.index : num_passes() + r.index; }

  int op_of(int node) const {
    const int op = node < num_passes() ? g_.passes[static_cast<std::size_t>(node)].tflite_op_index
                                       : g_.cpu_ops[static_cast<std::size_t>(node - num_passes())].tflite_op_index;
    return op < 0 ? INT_MAX : op;
  }

  /// Kahn's algorithm, the ready node of least key first (the key's last element is the node).
  template <class KeyOf>
  std::vector<int> kahn(const std::vector<std::vector<int>>& succ, std::vector<int> indegree, KeyOf key_of) const {
    using Key = decltype(key_of(0));
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    for (std::size_t v = 0; v < succ.size(); ++v)
      if (indegree[v] == 0) ready.push(key_of(static_cast<int>(v)));
    std::vector<int> order;
    while (!ready.empty()) {
      const int v = std::get<std::tuple_size_v<Key> - 1>(ready.top());
      ready.pop();
      order.push_back(v);
      for (int u : succ[static_cast<std::size_t>(v)])
        if (--indegree[static_cast<std::size_t>(u)] == 0) ready.push(key_of(u));
    }
    if (order.size() != succ.size()) fail(model_, "operators", "the lowered graph has a cycle");
    return order;
  }

  /// Per node, where it is taken: a link (every successor is one node whose only predecessor it is)
  /// takes its successor's head, if each of its predecessors has another successor whose operator
  /// index is at least the head's (moving the link there keeps no input live longer); any other node
  /// is its own head. `plain` is a topological order, walked back so a successor's head is known.
  std::vector<int> chain_heads(const std::vector<std::vector<int>>& succ, const std::vector<std::vector<int>>& pred,
                               const std::vector<int>& plain) const {
    const auto only = [](const std::vector<int>& v) {
      return !v.empty() && std::all_of(v.begin(), v.end(), [&](int x) { return x == v.front(); }) ? v.front() : -1;
    };
    std::vector<int> head(succ.size());
    std::iota(head.begin(), head.end(), 0);
    for (auto it = plain.rbegin(); it != plain.rend(); ++it) {
      const int v = *it;
      const int c = only(succ[static_cast<std::size_t>(v)]);
      if (c < 0 || only(pred[static_cast<std::size_t>(c)]) != v || pred[static_cast<std::size_t>(v)].empty()) continue;
      const int h = head[static_cast<std::size_t>(c)];
      const auto read_again = [&](int q) {
        const auto& s = succ[static_cast<std::size_t>(q)];
        return std::any_of(s.begin(), s.end(), [&](int r) { return r != v && op_of(r) >= op_of(h); });
      };
      const auto& ps = pred[static_cast<std::size_t>(v)];
      if (std::all_of(ps.begin(), ps.end(), read_again)) head[static_cast<std::size_t>(v)] = h;
    }
    return head;
  }

  // ---- layers ----

  std::string layer_name(const std::string& wanted) {
    std::string n = wanted.empty() ? std::string("layer") : common::valid_utf8(wanted);
    int& count = layer_names_[n];
    ++count;
    return count == 1 ? n : fmt::format("{}#{}", n, count);
  }

  static std::int64_t elements(const Shape4& s) { return static_cast<std::int64_t>(s[0]) * s[1] * s[2] * s[3]; }

  /// Input features of a fully-connected pass (I of its OHWI weights).
  static std::int64_t fc_features(const NpuPass& p) {
    return p.weights_shape.size() == 4 && p.weights_shape[3] > 0 ? p.weights_shape[3] : p.ifm_shape[3];
  }

  /// The shape a pass writes, as the workload layer states it: fully connected [rows, O]; a part of
  /// a tensor several passes write (Vela's concatenation copies: 1x1 pools that write their input's
  /// shape at an offset into an OFM of the whole tensor) the part.
  std::vector<std::int64_t> output_dims(const NpuPass& p) const {
    if (p.op_type == VelaOpType::FullyConnected) {
      const std::int64_t o = p.ofm_shape[3];
      return {elements(p.ofm_shape) / o, o};
    }
    if (writer_count_[static_cast<std::size_t>(p.ofm)] > 1 &&
        (p.op_type == VelaOpType::AvgPool || p.op_type == VelaOpType::MaxPool) && p.kernel.h == 1 && p.kernel.w == 1 &&
        p.kernel.stride_h == 1 && p.kernel.stride_w == 1) {
      return dims4(p.ifm_shape);
    }
    return dims4(p.ofm_shape);
  }

  /// The shape a pass reads an operand as. Fully connected: [rows, I] with the rows of its output
  /// (an unrolled LSTM's first step reads one row of its input this way).
  static std::vector<std::int64_t> input_dims(const NpuPass& p, const Shape4& s) {
    if (p.op_type == VelaOpType::FullyConnected) {
      return {elements(p.ofm_shape) / p.ofm_shape[3], fc_features(p)};
    }
    if (p.block_type == NpuBlockType::ElementWise) {
      // An elementwise pass that reads a slice (an absorbed SPLIT) records the whole tensor as its IFM
      // shape and the slice's start as its offset: it reads the OFM's extent of it.
      return {std::min(s[0], p.ofm_shape[0]), std::min(s[1], p.ofm_shape[1]), std::min(s[2], p.ofm_shape[2]),
              std::min(s[3], p.ofm_shape[3])};
    }
    return dims4(s);
  }


  std::string pass_line(const NpuPass& p) {
    std::vector<std::string> kv;
    const char* op = op_text(model_, p);
    kv.push_back("name: " + workloads::yaml_quote(layer_name(p.name)));
    kv.push_back(fmt::format("op: {}", op));
    // Operands in the NPU's order: Vela reads a broadcast first operand second (npu_lowering.hpp).
    std::vector<int> ins;
    std::vector<Shape4> seen;
    if (p.has_ifm2 && p.operands_reversed) {
      ins = {p.ifm2, p.ifm};
    } else if (p.has_ifm2) {
      ins = {p.ifm, p.ifm2};
    } else {
      ins = {p.ifm};
    }
    seen = {p.ifm_shape};
    if (p.has_ifm2) seen.push_back(p.ifm2_shape);
    std::vector<std::string> names;
    std::vector<std::string> views;
    bool any_view = false;
    for (std::size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] < 0) fail(model_, "passes", fmt::format("pass '{}' has no input feature map", p.name));
      names.push_back(workloads::yaml_quote(tensor_names_[static_cast<std::size_t>(ins[i])]));
      const std::vector<std::int64_t> v = input_dims(p, seen[i]);
      views.push_back(list(v));
      if (workloads::nhwc_view(v) != workloads::nhwc_view(dims(ins[i]))) any_view = true;
    }
    kv.push_back(fmt::format("inputs: [{}]", fmt::join(names, ", ")));
    if (any_view) kv.push_back(fmt::format("input_shapes: [{}]", fmt::join(views, ", ")));
    kv.push_back("output: " + workloads::yaml_quote(tensor_names_[static_cast<std::size_t>(p.ofm)]));
    if (p.has_ifm2 && p.operands_reversed) kv.push_back("operands_swapped: true");
    const bool declared = role_[static_cast<std::size_t>(p.ofm)] == Role::Declared;
    kv.push_back("output_shape: " + list(declared ? output_dims(p) : dims(p.ofm)));
    if (!declared) {
      kv.push_back(fmt::format("dtype: {}", workloads::data_type_name(dtype(p.ofm, true))));
      if (std::string scale = quant_scale_entry(p.ofm); !scale.empty()) kv.push_back(std::move(scale));
    }
    if (spatial(p.op_type)) {
      kv.push_back(fmt::format("kernel: [{}, {}]", p.kernel.h, p.kernel.w));
      if (p.op_type != VelaOpType::Conv2DBackpropInputSwitchedBias) {
        kv.push_back(fmt::format("stride: [{}, {}]", p.kernel.stride_h, p.kernel.stride_w));
      }
      if (p.op_type == VelaOpType::Conv2DBias || p.op_type == VelaOpType::DepthwiseConv2DBias) {
        kv.push_back(fmt::format("dilation: [{}, {}]", p.kernel.dilation_h, p.kernel.dilation_w));
      }
      const auto& e = p.explicit_padding;
      kv.push_back(fmt::format("padding: [{}, {}, {}, {}]", e[0], e[1], e[2], e[3]));
    }
    kv.push_back(fmt::format("activation: {}", activation_text(p.activation)));
    if (has_weights(p.op_type)) {
      if (p.weights_type != TensorType::INT8 && p.weights_type != TensorType::UINT8) {
        fail(model_, "passes", fmt::format("pass '{}' has {} weights; the NPU reads int8 or uint8 weights", p.name,
                                           tensor_type_name(p.weights_type)));
      }
      kv.push_back("bias: true");
      kv.push_back(fmt::format("weight_dtype: {}", p.weights_type == TensorType::UINT8 ? "uint8" : "int8"));
      const WeightJob& job = weight_job(p);
      kv.push_back("weight_compression: " + number(job.representative_ratio));
      kv.push_back("weight_encodings: " + workloads::weight_encodings_yaml(job.entries));
    }
    if (p.activation == NpuActivation::LUT) kv.push_back("lut: " + workloads::lut_yaml(lut_table(p.lut)));
    if (p.created_avgpool) kv.push_back("primary_ofm: input_copy");
    return fmt::format("  - {{{}}}\n", fmt::join(kv, ", "));
  }

  using CompressionKey = std::tuple<int, int, std::vector<std::int32_t>, int, int, int, BuiltinOperator>;

  /// What decides a pass's weight encodings: its weight tensor, operator and shapes (nullopt for
  /// weights the lowering creates, which are encoded per pass).
  std::optional<CompressionKey> compression_key(const NpuPass& p) const {
    if (p.weights_tensor < 0 || p.tflite_op_index < 0) return std::nullopt;
    return std::make_tuple(p.weights_tensor, static_cast<int>(p.op_type), p.weights_shape, static_cast<int>(p.ifm_type),
                           p.kernel.dilation_h, p.kernel.dilation_w,
                           model_.subgraphs[0].operators.at(static_cast<std::size_t>(p.tflite_op_index)).code);
  }

  /// One weight tensor's encodings: every variant a mapping may choose (traversal, block depth,
  /// streamed or not), grouped by the size they share.
  struct WeightJob {
    const NpuPass* pass = nullptr;  ///< the first pass with these weights
    std::unique_ptr<WeightEncoder> encoder;
    std::int64_t raw = 0;           ///< raw weight bytes
    int ofm_depth = 0;
    /// The canonical variants to encode and, per lookup key (traversal, block depth, streamed),
    /// the index of its canonical variant.
    std::vector<WeightVariant> canonical;
    std::vector<std::pair<WeightVariant, std::size_t>> keys;
    WeightVariant representative;   ///< the variant `weight_compression` reports
    std::size_t representative_index = 0;  ///< its canonical variant
    std::vector<WeightEncoding> results;  ///< per canonical variant
    std::vector<workloads::WeightEncodingEntry> entries;
    double representative_ratio = 0.0;
    std::exception_ptr error;       ///< the encoder's error, raised at the pass in conversion order
  };

  /// Every weight variant a mapping can choose, for every weight tensor, in parallel (oneTBB):
  /// first each tensor is prepared once (an unrolled LSTM reuses each weight tensor in every time
  /// step), then each distinct canonical variant of each tensor is encoded as its own task. A pass
  /// whose encoding fails keeps its error, raised when the conversion, in its own order, reaches
  /// the pass, so the message is the one a serial import gives.
  void encode_weights_in_parallel() {
    std::map<CompressionKey, std::size_t> job_of_key;
    job_of_pass_.assign(g_.passes.size(), kNoJob);
    for (std::size_t i = 0; i < g_.passes.size(); ++i) {
      const NpuPass& p = g_.passes[i];
      if (!has_weights(p.op_type)) continue;
      const std::optional<CompressionKey> key = compression_key(p);
      if (key) {
        const auto [it, fresh] = job_of_key.emplace(*key, jobs_.size());
        if (fresh) {
          jobs_.emplace_back();
          jobs_.back().pass = &p;
        }
        job_of_pass_[i] = it->second;
      } else {
        job_of_pass_[i] = jobs_.size();
        jobs_.emplace_back();
        jobs_.back().pass = &p;
      }
    }
    // Prepare each tensor and list its variants.
    tbb::parallel_for(std::size_t{0}, jobs_.size(), [&](std::size_t j) {
      WeightJob& job = jobs_[j];
      try {
        const WeightEncodingInput in = weight_input(model_, *job.pass, accel_, options_.vela_rewrites);
        job.encoder = std::make_unique<WeightEncoder>(in);
        job.raw = static_cast<std::int64_t>(in.values.size());
        job.ofm_depth = in.ofm_depth;
        job.representative = {in.traversal, representative_block_depth(in.ofm_depth, accel_), false};
        std::map<WeightVariant, std::size_t> index;
        const auto add = [&](const WeightVariant& key) {
          const WeightVariant c = job.encoder->canonical(key);
          const auto [it, fresh] = index.emplace(c, job.canonical.size());
          if (fresh) job.canonical.push_back(c);
          return it->second;
        };
        for (WeightTraversal t : mapped_traversals(in.block_type)) {
          for (int d : searched_block_depths(in.ofm_depth, accel_)) {
            for (bool streamed : {false, true}) {
              // The key the search looks up: a block as deep as the tensor is one brick.
              const WeightVariant key{t, d, streamed && d < in.ofm_depth};
              if (std::find_if(job.keys.begin(), job.keys.end(), [&](const auto& k) { return k.first == key; }) !=
                  job.keys.end()) {
                continue;
              }
              job.keys.emplace_back(key, add(key));
            }
          }
        }
        job.representative_index = add(job.representative);
      } catch (...) {
        job.error = std::current_exception();
      }
    });
    // Encode each distinct variant of each tensor.
    std::vector<std::pair<std::size_t, std::size_t>> tasks;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      if (jobs_[j].error) continue;
      jobs_[j].results.resize(jobs_[j].canonical.size());
      for (std::size_t v = 0; v < jobs_[j].canonical.size(); ++v) tasks.emplace_back(j, v);
    }
    std::vector<std::exception_ptr> task_error(tasks.size());
    tbb::parallel_for(std::size_t{0}, tasks.size(), [&](std::size_t t) {
      const auto [j, v] = tasks[t];
      try {
        jobs_[j].results[v] = jobs_[j].encoder->encode(jobs_[j].canonical[v]);
      } catch (...) {
        task_error[t] = std::current_exception();
      }
    });
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      WeightJob& job = jobs_[tasks[t].first];
      if (task_error[t] && !job.error) job.error = task_error[t];
    }
    for (WeightJob& job : jobs_) {
      if (job.error) continue;
      job.encoder.reset();  // the prepared weights are no longer needed
      job.results.shrink_to_fit();
      // One entry per (traversal, streamed, shared size), listing the block depths it holds for.
      for (const auto& key_and_result : job.keys) {
        const auto& key = key_and_result.first;  // not a structured binding: clang 14 cannot capture those
        const WeightEncoding& e = job.results[key_and_result.second];
        auto it = std::find_if(job.entries.begin(), job.entries.end(), [&](const workloads::WeightEncodingEntry& x) {
          return x.traversal == workload_traversal(key.traversal) && x.streamed == key.streamed &&
                 x.bytes == e.total_bytes && x.scale == e.mean_scale && x.worst_scale == e.worst_scale;
        });
        if (it == job.entries.end()) {
          workloads::WeightEncodingEntry entry;
          entry.traversal = workload_traversal(key.traversal);
          entry.streamed = key.streamed;
          entry.bytes = e.total_bytes;
          entry.scale = e.mean_scale;
          entry.worst_scale = e.worst_scale;
          job.entries.push_back(std::move(entry));
          it = job.entries.end() - 1;
        }
        it->block_depths.push_back(key.block_depth);
      }
      for (auto& entry : job.entries) std::sort(entry.block_depths.begin(), entry.block_depths.end());
      job.representative_ratio = static_cast<double>(job.results[job.representative_index].total_bytes) /
                                 static_cast<double>(job.raw);
    }
  }

  /// The pass's weight job from encode_weights_in_parallel(); rethrows its encoder's error.
  const WeightJob& weight_job(const NpuPass& p) {
    const std::size_t job = job_of_pass_.at(static_cast<std::size_t>(&p - g_.passes.data()));
    NPUMAP_ASSERT(job != kNoJob);
    if (jobs_[job].error) {
      try {
        std::rethrow_exception(jobs_[job].error);
      } catch (const common::UserError& e) {
        if (!e.where().file.empty() && e.where().file != "weights") throw;
        // The weight encoder names only its own fields: say which file, operator and tensor.
        const std::string key = fmt::format("subgraphs[0].operators[{}].inputs[1]{}{}", p.tflite_op_index,
                                            e.key_path().empty() ? "" : ".", e.key_path());
        fail(model_, key, fmt::format("weights: {}", e.message()), e.hint());
      }
    }
    return jobs_[job];
  }

  std::string cpu_lines(const CpuOp& c) {
    const std::vector<int> ins = cpu_inputs(c);
    std::string out;
    if (ins.empty()) return out;  // nothing to read: its outputs are declared as network inputs
    std::vector<std::string> names;
    for (int t : ins) names.push_back(workloads::yaml_quote(tensor_names_[static_cast<std::size_t>(t)]));
    const std::string reason = fmt::format("{}", fmt::join(c.reason, "; "));
    const std::string op = c.vela_type.empty() ? std::string(operator_name(c.builtin)) : c.vela_type;
    for (std::size_t k = 0; k < c.outputs.size(); ++k) {
      const int t = c.outputs[k];
      if (t < 0) continue;
      std::vector<std::string> kv;
      kv.push_back("name: " + workloads::yaml_quote(layer_name(c.name)));
      kv.push_back("op: cpu");
      kv.push_back(fmt::format("inputs: [{}]", fmt::join(names, ", ")));
      kv.push_back("output: " + workloads::yaml_quote(tensor_names_[static_cast<std::size_t>(t)]));
      kv.push_back("output_shape: " + list(dims(t)));
      if (role_[static_cast<std::size_t>(t)] != Role::Declared) {
        kv.push_back(fmt::format("dtype: {}", workloads::data_type_name(dtype(t, npu_touched_[static_cast<std::size_t>(t)]))));
        if (std::string scale = quant_scale_entry(t); !scale.empty()) kv.push_back(std::move(scale));
      }
      kv.push_back("operator: " + workloads::yaml_quote(op));
      kv.push_back("reason: " + workloads::yaml_quote(reason));
      out += fmt::format("  - {{{}}}\n", fmt::join(kv, ", "));
    }
    return out;
  }

  const Model& model_;
  const NpuGraph& g_;
  const ImportOptions& options_;
  WeightAccelerator accel_;
  std::vector<std::string> tensor_names_;
  std::vector<Role> role_;
  std::vector<bool> npu_touched_;
  std::vector<int> writer_count_;  ///< per lowered tensor: passes and CPU operators writing it
  std::vector<std::vector<std::int64_t>> declared_view_;  ///< per lowered tensor: see dims()
  std::unordered_map<std::string, int> layer_names_;
  static constexpr std::size_t kNoJob = static_cast<std::size_t>(-1);
  std::vector<std::size_t> job_of_pass_;  ///< per pass: its weight-encoding job, or kNoJob
  std::vector<WeightJob> jobs_;           ///< per distinct weight tensor
};

}  // namespace

ImportedModel import_model(const Model& model, const ImportOptions& options) {
  NpuLoweringOptions lo;
  lo.accelerator_config = options.accelerator_config;
  lo.vela_rewrites = options.vela_rewrites;
  ImportedModel out;
  out.graph = lower_for_npu(model, lo);
  if (out.graph.passes.empty() && out.graph.cpu_ops.empty()) fail(model, "operators", "the model has no operators");
  out.yaml = Converter(model, out.graph, options).run();
  out.workload = workloads::load_workload_from_string(out.yaml, model.name);
  return out;
}

ImportedModel import_tflite(const std::string& path, const ImportOptions& options) {
  return import_model(read_model(path), options);
}

namespace {

bool has_tflite_extension(const std::string& path) {
  if (path.size() < 7) return false;
  std::string ext = path.substr(path.size() - 7);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".tflite";
}

bool has_tflite_identifier(std::string_view head) { return head.size() >= 8 && head.substr(4, 4) == "TFL3"; }

}  // namespace

bool is_tflite_path(const std::string& path) {
  if (has_tflite_extension(path)) return true;
  // Only a regular file is opened to look (a FIFO or standard input can be read only once).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  if (!in.read(head, 8)) return false;
  return has_tflite_identifier(std::string_view(head, 8));
}

NetworkInput read_network(const std::string& path, const common::StopToken& stop) {
  NetworkInput in;
  in.name = common::input_display_name(path);
  // One read: the kind (and so the size limit) comes from the name or the first 8 bytes.
  const ReadLimits limits;
  std::string bytes = common::read_input(
      path,
      [&](std::string_view head) {
        in.is_tflite = has_tflite_extension(path) || has_tflite_identifier(head);
        return in.is_tflite ? tflite_input_limit(limits) : common::text_input_limit();
      },
      stop, "loading the workload");
  in.hash = common::fnv1a_hex(bytes);
  if (in.is_tflite) {
    in.model = std::make_shared<const Model>(read_model_bytes(std::move(bytes), in.name, limits));
  } else {
    in.yaml = std::move(bytes);
  }
  return in;
}

workloads::Workload load_network(const NetworkInput& in, const ImportOptions& options, const common::StopToken& stop) {
  if (in.is_tflite) {
    workloads::Workload w = import_model(*in.model, options).workload;
    w.source_file = in.name;
    return w;
  }
  return workloads::load_workload_from_string(in.yaml, in.name, stop);
}

workloads::Workload load_network(const std::string& path, const ImportOptions& options, const common::StopToken& stop) {
  return load_network(read_network(path, stop), options, stop);
}

}  // namespace npumap::tflite
