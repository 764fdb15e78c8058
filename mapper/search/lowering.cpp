#include "mapper/search/lowering.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/user_error.hpp"
#include "model/block_config.hpp"
#include "model/geometry.hpp"
#include "workloads/bias_scale.hpp"

namespace npumap::search {
namespace {

using workloads::OpKind;

model::DataType to_model(workloads::DataType t) {
  switch (t) {
    case workloads::DataType::Int8: return model::DataType::Int8;
    case workloads::DataType::UInt8: return model::DataType::UInt8;
    case workloads::DataType::Int16: return model::DataType::Int16;
    case workloads::DataType::Int32: return model::DataType::Int32;
  }
  return model::DataType::Int8;
}

model::Activation to_model(workloads::Activation a) {
  switch (a) {
    case workloads::Activation::None: return model::Activation::None;
    case workloads::Activation::Relu: return model::Activation::Relu;
    case workloads::Activation::Relu6: return model::Activation::Relu6;
    case workloads::Activation::ReluN1To1: return model::Activation::ReluN1To1;
    case workloads::Activation::Sigmoid: return model::Activation::Sigmoid;
    case workloads::Activation::Tanh: return model::Activation::Tanh;
    case workloads::Activation::Lut: return model::Activation::Lut;
  }
  return model::Activation::None;
}

/// The pass op of a layer kind. Softmax runs as a unary elementwise pass with a LUT activation and a
/// standalone activation as a 1x1 average pool (docs/design/npu-model.md §1.4).
model::OpType op_type(OpKind kind) {
  switch (kind) {
    case OpKind::Conv2D: return model::OpType::Conv2DBias;
    case OpKind::DepthwiseConv2D: return model::OpType::DepthwiseConv2DBias;
    case OpKind::MaxPool: return model::OpType::MaxPool;
    case OpKind::AvgPool: return model::OpType::AvgPool;
    case OpKind::FullyConnected: return model::OpType::FullyConnected;
    case OpKind::MatMul: return model::OpType::FullyConnected;
    case OpKind::Add: return model::OpType::Add;
    case OpKind::Sub: return model::OpType::Sub;
    case OpKind::Mul: return model::OpType::Mul;
    case OpKind::Maximum: return model::OpType::Maximum;
    case OpKind::Minimum: return model::OpType::Minimum;
    case OpKind::Abs: return model::OpType::Abs;
    case OpKind::LeakyRelu: return model::OpType::LeakyRelu;
    case OpKind::Softmax: return model::OpType::Abs;
    case OpKind::ReduceSum: return model::OpType::ReduceSum;
    case OpKind::TransposeConv2D: return model::OpType::TransposeConv2D;
    case OpKind::ResizeBilinear: return model::OpType::ResizeBilinear;
    case OpKind::Shl: return model::OpType::Shl;
    case OpKind::Shr: return model::OpType::Shr;
    case OpKind::RescaleAdd: return model::OpType::RescaleAdd;
    case OpKind::Clz: return model::OpType::Clz;
    case OpKind::Activation: return model::OpType::AvgPool;
    case OpKind::Cpu: break;  // not an NPU pass: lower_layer returns before asking
  }
  return model::OpType::Conv2DBias;
}

int to_int(std::int64_t v) { return static_cast<int>(v); }

/// A 4-D shape as a model shape.
model::Shape shape4(const workloads::Shape& s) {
  return model::Shape::of({to_int(s.n), to_int(s.h), to_int(s.w), to_int(s.c)});
}

/// The feature-map shape a fully-connected pass sees: Vela reshapes a batch of N rows into H x W
/// (docs/design/npu-model.md §7.3: 4 -> 2x2, 8 -> 2x4, 16 -> 4x4, otherwise 1xN).
model::Shape fc_shape(std::int64_t rows, std::int64_t channels) {
  if (rows == 1) return model::Shape::of({1, to_int(channels)});
  int h = 1;
  int w = to_int(rows);
  if (rows == 4) h = 2, w = 2;
  if (rows == 8) h = 2, w = 4;
  if (rows == 16) h = 4, w = 4;
  return model::Shape::of({1, h, w, to_int(channels)});
}

/// Reads the tensor whole, with the tensor's own shape (not a slice or a reshaped view).
bool reads_whole(const workloads::Layer& layer, std::size_t input, const workloads::TensorInfo& t) {
  const workloads::Shape& seen = input == 0 ? layer.ifm_shape : *layer.ifm2_shape;
  return seen == t.shape;
}

/// A fully-connected layer that reads this tensor as one row of its whole channels, [1,1,1,C]: its
/// IFM op shape is then the tensor's 4-D shape and NHCWB16 is allowed (docs/design/npu-model.md §4.5).
bool fc_reads_nhcwb16(const workloads::Layer& layer, const workloads::TensorInfo& t) {
  const workloads::MatmulDims d = layer.matmul.value_or(workloads::MatmulDims{});
  return d.batch == 1 && d.m == 1 && t.shape.n == 1 && t.shape.h == 1 && t.shape.w == 1 && t.shape.c == d.k;
}

/// A fully-connected layer writing its OFM as the tensor's own 4-D shape, [1,1,1,N] (Vela's FC op
/// shape is its OFM tensor's unless the FC is batched, when it reshapes it): the OFM may be NHCWB16
/// (Vela's eligibility rule 3). Batched FCs stay linear here.
bool fc_writes_nhcwb16(const workloads::Layer& layer, const workloads::TensorInfo& t) {
  const workloads::MatmulDims d = layer.matmul.value_or(workloads::MatmulDims{});
  return d.batch == 1 && d.m == 1 && t.shape.n == 1 && t.shape.h == 1 && t.shape.w == 1 && t.shape.c == d.n;
}

bool is_conv_dw_pool(OpKind k) {
  return k == OpKind::Conv2D || k == OpKind::DepthwiseConv2D || k == OpKind::MaxPool || k == OpKind::AvgPool ||
         k == OpKind::Activation;
}

/// The layer's step in the topological order (its size if absent). The order is a permutation of
/// the layers that keeps file order where it can, so the search starts at the layer's own index and
/// widens: a chain's layers are found at once (searching from the front made lowering every layer
/// quadratic in the layers, 7% of a 50,000-layer chain's time).
int position_in_order(const workloads::Workload& w, int layer) {
  const auto& order = w.topological_order;
  const auto n = static_cast<std::ptrdiff_t>(order.size());
  const auto at = static_cast<std::ptrdiff_t>(layer);
  const auto holds = [&](std::ptrdiff_t i) { return i >= 0 && i < n && order[static_cast<std::size_t>(i)] == layer; };
  for (std::ptrdiff_t d = 0; at - d >= 0 || at + d < n; ++d) {
    if (holds(at + d)) return static_cast<int>(at + d);
    if (holds(at - d)) return static_cast<int>(at - d);
  }
  return static_cast<int>(n);
}

/// A feature map passed from one NPU subgraph to another (in Vela's pass order, the workload's
/// npu_subgraph), every reader on the NPU: Vela's graph optimiser lets it be NHCWB16 (it clears
/// needs_linear_format), but extract_npu_subgraphs.py makes it an output of its producer's subgraph,
/// which the scheduler keeps NHWC. So it stays linear while its transfers are costed as NHCWB16's.
bool crosses_npu_subgraphs(const workloads::Workload& w, int tensor) {
  if (w.npu_subgraph.size() != w.layers.size()) return false;
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  if (t.producer < 0 || t.consumers.empty()) return false;
  const int own = w.npu_subgraph[static_cast<std::size_t>(t.producer)];
  if (own < 0) return false;
  bool other = false;
  for (int c : t.consumers) {
    const int sub = w.npu_subgraph[static_cast<std::size_t>(c)];
    if (sub < 0) return false;  // a CPU reader: linear, as any
    other = other || sub != own;
  }
  return other;
}

/// docs/design/npu-model.md §4.5: a feature map may use NHCWB16 when an NPU op produces it, every consumer reads
/// it with the tensor's own shape as a feature map (not as matmul weights, not as an int32 ReduceSum
/// input) and it is not a network input or output.
bool nhcwb16_eligible(const workloads::Workload& w, int tensor) {
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  if (t.producer < 0 || t.consumers.empty() || crosses_npu_subgraphs(w, tensor)) return false;
  // Every writer's OFM is the whole tensor; parts written side by side in C start at multiples of
  // 16 (Vela's rule for concatenations, avoid_nhcwb16_for_concat: every write offset's depth). The
  // writers of a concatenation along C are its inputs in order (file order), each at the sum of the
  // parts before it; a part of the whole C is written along another axis, at depth 0.
  std::int64_t offset_c = 0;
  for (int writer : t.writers) {
    const auto& l = w.layers[static_cast<std::size_t>(writer)];
    if (l.kind == OpKind::MatMul || l.kind == OpKind::Cpu || !(l.ofm_shape == t.shape)) return false;
    if (l.kind == OpKind::FullyConnected && !fc_writes_nhcwb16(l, t)) return false;
    const std::int64_t part_c = workloads::nhwc_view(l.output_dims).c;
    if (part_c == t.shape.c) continue;
    if (offset_c % 16 != 0) return false;
    offset_c += part_c;
  }
  for (int c : t.consumers) {
    const auto& layer = w.layers[static_cast<std::size_t>(c)];
    // The CPU reads plain NHWC; matmul reads its operands as linear blocks; a fully-connected layer
    // reads NHCWB16 only when its input op shape is the tensor's whole 4-D shape (Vela's rule 6 of
    // its layout eligibility: a pooled [1,1,1,C] feature map feeding a classifier).
    if (layer.kind == OpKind::MatMul || layer.kind == OpKind::Cpu) return false;
    if (layer.kind == OpKind::FullyConnected && !fc_reads_nhcwb16(layer, t)) return false;
    if (layer.kind == OpKind::ReduceSum && t.dtype == workloads::DataType::Int32) return false;
    for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
      if (layer.inputs[i] == tensor && !reads_whole(layer, i, t)) return false;
    }
  }
  return true;
}

/// Layer fusion (docs/design/npu-model.md §9): the tensor is the IFM of its only consumer, which runs right after
/// its producer, and both are convolution, depthwise or pooling passes.
bool may_roll(const workloads::Workload& w, int tensor) {
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  if (t.writers.size() != 1 || t.consumers.size() != 1 || !nhcwb16_eligible(w, tensor)) return false;
  const auto& producer = w.layers[static_cast<std::size_t>(t.producer)];
  const auto& consumer = w.layers[static_cast<std::size_t>(t.consumers[0])];
  if (!is_conv_dw_pool(producer.kind) || !is_conv_dw_pool(consumer.kind)) return false;
  if (consumer.inputs.size() != 1 || consumer.inputs[0] != tensor) return false;
  return position_in_order(w, t.consumers[0]) == position_in_order(w, t.producer) + 1;
}

/// Whether an input of the layer is written by an NPU layer of its own NPU subgraph (the workload's
/// npu_subgraph: the runs of NPU layers between CPU ones in Vela's pass order; without it, in step
/// order). Vela cuts its graph into NPU and CPU subgraphs and gives each NPU subgraph's inputs a
/// start-up producer of their own, so behind a CPU layer a pass has no NPU predecessor and its DMAs do
/// not overlap a previous pass (npu_performance.py's first-pass DMA term).
bool has_npu_predecessor(const workloads::Workload& w, int layer_index) {
  const workloads::Layer& layer = w.layers[static_cast<std::size_t>(layer_index)];
  if (w.npu_subgraph.size() == w.layers.size()) {
    const int own = w.npu_subgraph[static_cast<std::size_t>(layer_index)];
    for (int t : layer.inputs)
      for (int writer : w.tensors[static_cast<std::size_t>(t)].writers)
        if (own >= 0 && w.npu_subgraph[static_cast<std::size_t>(writer)] == own) return true;
    return false;
  }
  const int at = position_in_order(w, layer_index);
  for (int t : layer.inputs) {
    const int producer = w.tensors[static_cast<std::size_t>(t)].producer;
    if (producer < 0 || w.layers[static_cast<std::size_t>(producer)].kind == OpKind::Cpu) continue;
    bool cpu_between = false;
    for (int s = position_in_order(w, producer) + 1; s < at && !cpu_between; ++s)
      cpu_between = w.layers[static_cast<std::size_t>(w.topological_order[static_cast<std::size_t>(s)])].kind == OpKind::Cpu;
    if (!cpu_between) return true;
  }
  return false;
}

/// What the layer's NPU subgraph decides of its pass: whether it has an NPU predecessor, and which of
/// its feature maps, passed between NPU subgraphs, are linear but costed as NHCWB16 (place_fm keeps
/// their needs_linear_format false).
void set_npu_subgraph_flags(const workloads::Workload& w, int layer_index, model::Pass& p) {
  const workloads::Layer& layer = w.layers[static_cast<std::size_t>(layer_index)];
  p.has_npu_predecessor = has_npu_predecessor(w, layer_index);
  p.ifm.needs_linear_format = !crosses_npu_subgraphs(w, layer.inputs[0]);
  if (p.ifm2) p.ifm2->needs_linear_format = !crosses_npu_subgraphs(w, layer.inputs[1]);
  p.ofm.needs_linear_format = !crosses_npu_subgraphs(w, layer.output);
}

/// A network input or output, which stays in the arena unless the arch lets the application hand it
/// over in SRAM (`network_io_in_sram`).
bool network_io_in_arena(const arch::Arch& arch, const workloads::Workload& w, int tensor) {
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  const bool network_input = t.writers.empty() && !t.is_constant;
  return !arch.network_io_in_sram && (network_input || t.is_network_output());
}

model::FeatureMap make_fm(const workloads::TensorInfo& t, model::Shape shape) {
  model::FeatureMap fm;
  fm.shape = shape;
  fm.dtype = to_model(t.dtype);
  fm.quant_scale = static_cast<float>(t.quant_scale);
  return fm;
}

}  // namespace

bool long_lived_feature_map(const arch::Arch& arch, const workloads::Workload& w, int tensor) {
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  if (t.is_constant || network_io_in_arena(arch, w, tensor)) return false;
  const int n = static_cast<int>(w.topological_order.size());
  int first = n;
  for (int writer : t.writers) first = std::min(first, position_in_order(w, writer));
  if (t.writers.empty()) first = 0;
  int last = t.consumers.empty() ? n : 0;
  for (int c : t.consumers) last = std::max(last, position_in_order(w, c));
  return last - first > kLongLivedSteps;
}

/// The table a LUT pass loads and the weights' encoded sizes per variant (lower_layer's last part).
void add_lut_and_weight_variants(const arch::Arch& arch, const workloads::Layer& layer, workloads::DataType ifm_dtype,
                                 LoweredLayer& out) {
  model::Pass& p = out.base;
  const bool own_weights = out.own_weights;
  if (out.uses_lut) {
    // The table lives in permanent storage; each pass that uses it reads it there and DMAs it into
    // SHRAM (costed as Vela costs it: the read always, the DMA's cycles without an NPU predecessor).
    const workloads::LutTable t = layer.lut.value_or(workloads::lut_table_default(layer, ifm_dtype));
    p.lut = model::Lut{model::Shape::of({1, 1, 1, to_int(t.entries)}), to_model(t.dtype), arch.permanent_storage};
  }
  if (own_weights && p.weights) {
    // Each variant's reads are charged as Vela charges them (issue 37 point 3): at its bandwidth
    // compression scale, the mean over bricks of bytes / raw bytes of a full brick. For a stream
    // whose last brick is partial that is below the bytes it stores (which the DMA-cycle and storage
    // figures keep); docs/design/tflite-import.md, "Weights".
    for (const workloads::WeightEncodingEntry& e : layer.weight_encodings) {
      const double scale = e.scale;
      const model::BlockTraversal trav = e.traversal == workloads::WeightTraversal::PartKernelFirst
                                             ? model::BlockTraversal::PartKernelFirst
                                         : e.traversal == workloads::WeightTraversal::DepthWise
                                             ? model::BlockTraversal::DepthWise
                                             : model::BlockTraversal::DepthFirst;
      for (std::int64_t d : e.block_depths) {
        out.weight_variants.push_back({trav, e.streamed, to_int(d), scale, e.worst_scale, e.bytes});
      }
    }
  }

}

LoweredLayer lower_layer(const arch::Arch& arch, const workloads::Workload& w, int layer_index) {
  const workloads::Layer& layer = w.layers[static_cast<std::size_t>(layer_index)];
  LoweredLayer out;
  out.layer = layer_index;
  out.num_inputs = static_cast<int>(layer.inputs.size());
  const auto& ifm_t = w.tensors[static_cast<std::size_t>(layer.inputs[0])];
  const auto& ofm_t = w.tensors[static_cast<std::size_t>(layer.output)];
  out.input_nhcwb16.assign(layer.inputs.size(), false);
  out.input_linear_only.assign(layer.inputs.size(), true);
  out.input_constant.assign(layer.inputs.size(), false);
  out.input_arena_only.assign(layer.inputs.size(), false);
  if (layer.kind == OpKind::Cpu) {
    // Not an NPU pass: the mapspace gives it one zero-cost placement with every tensor in the arena.
    out.cpu = true;
    out.base.ifm = make_fm(ifm_t, shape4(layer.ifm_shape));
    out.base.ofm = make_fm(ofm_t, shape4(layer.ofm_shape));
    out.output_linear_only = true;
    return out;
  }
  NPUMAP_ASSERT(out.num_inputs >= 1 && out.num_inputs <= 2);

  // The base pass: shapes, types and the operator.
  model::Pass& p = out.base;
  p.op.type = op_type(layer.kind);
  const bool matmul_like = layer.kind == OpKind::FullyConnected || layer.kind == OpKind::MatMul;
  p.op.resampling = model::ifm_resampling(p.op.type);
  if (!matmul_like && !workloads::is_binary_elementwise(layer.kind) && layer.kind != OpKind::Abs &&
      layer.kind != OpKind::LeakyRelu && layer.kind != OpKind::Clz && layer.kind != OpKind::Softmax) {
    p.op.kernel = model::Kernel{to_int(layer.kernel_w),   to_int(layer.kernel_h),   to_int(layer.stride_x),
                                to_int(layer.stride_y),   to_int(layer.dilation_x), to_int(layer.dilation_y)};
    p.op.padding = layer.padding_mode == workloads::PaddingMode::Same    ? model::PaddingMode::Same
                   : layer.padding_mode == workloads::PaddingMode::Valid ? model::PaddingMode::Valid
                                                                         : model::PaddingMode::Explicit;
    p.op.explicit_padding = model::Padding{to_int(layer.padding.top), to_int(layer.padding.left),
                                           to_int(layer.padding.bottom), to_int(layer.padding.right)};
  }
  p.op.activation = layer.kind == OpKind::Softmax ? model::Activation::Lut : to_model(layer.activation);
  if (matmul_like) {
    const workloads::MatmulDims d = layer.matmul.value_or(workloads::MatmulDims{});
    out.batch_repeat = to_int(d.batch);
    p.ifm = make_fm(ifm_t, fc_shape(d.m, d.k));
    p.ofm = make_fm(ofm_t, fc_shape(d.m, d.n));
    const workloads::Shape& whole = ifm_t.shape;
    if (layer.kind == OpKind::FullyConnected && d.batch == 1 && whole.n * whole.h * whole.w * whole.c > d.m * d.k) {
      // A slice of a larger tensor (an absorbed SplitSliceRead: an unrolled LSTM's step reading one
      // row of its input): Vela's op then sees the whole tensor as its IFM, in its shape and its
      // bytes (docs/design/npu-model.md §7.3).
      p.ifm = make_fm(ifm_t, shape4(whole));
      p.ifm.op_shape = std::array<int, 4>{to_int(whole.n), to_int(whole.h), to_int(whole.w), to_int(whole.c)};
    }
  } else {
    p.ifm = make_fm(ifm_t, shape4(layer.ifm_shape));
    p.ofm = make_fm(ofm_t, shape4(layer.ofm_shape));
    if (layer.inputs.size() > 1) {
      p.ifm2 = make_fm(w.tensors[static_cast<std::size_t>(layer.inputs[1])], shape4(*layer.ifm2_shape));
    }
  }
  if (layer.primary_ofm_input_copy) {
    // Vela's created AvgPool writes a copy of its input, made while every feature map was in the
    // feature-map storage area; the search's placements never move it (pass-format.md "primary_ofm").
    model::FeatureMap copy = make_fm(ifm_t, shape4(layer.ofm_shape));
    copy.mem_area = arch.feature_map_storage;
    p.primary_ofm = copy;
  }
  set_npu_subgraph_flags(w, layer_index, p);
  // Constant operands are read in place from permanent storage, in linear layout.
  for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
    if (!w.tensors[static_cast<std::size_t>(layer.inputs[i])].is_constant) continue;
    out.input_constant[i] = true;
    model::FeatureMap& fm = i == 0 ? p.ifm : *p.ifm2;
    fm.mem_area = arch.permanent_storage;
    fm.format = model::TensorFormat::NHWC;
    fm.needs_linear_format = true;
  }

  // Weights: the layer's own (conv, depthwise, fc) or, for matmul, the second operand read as weights.
  const bool own_weights = workloads::has_weights(layer.kind);
  if (own_weights || layer.kind == OpKind::MatMul) {
    model::Weights wt;
    std::int64_t elems = 1;
    if (layer.kind == OpKind::MatMul) {
      const workloads::MatmulDims d = *layer.matmul;
      wt.shape = model::Shape::of({to_int(d.k), to_int(d.n)});
      wt.dtype = to_model(w.tensors[static_cast<std::size_t>(layer.inputs[1])].dtype);
      wt.compression_scale = 1.0;
      elems = d.k * d.n;
    } else {
      std::vector<int> dims;
      for (std::int64_t v : layer.weight_shape) dims.push_back(to_int(v));
      if (dims.size() == 2) wt.shape = model::Shape::of({dims[0], dims[1]});
      else wt.shape = model::Shape::of({dims[0], dims[1], dims[2], dims[3]});
      wt.dtype = to_model(layer.weight_dtype);
      wt.compression_scale = layer.weight_compression;
      for (int v : dims) elems *= v;
    }
    const double raw = static_cast<double>(elems) * model::size_in_bytes(wt.dtype) * wt.compression_scale;
    // Encoded bytes, rounded up to the 16-byte stream alignment; the 1e-6 absorbs the rounding of a
    // ratio written as bytes / elements (an imported layer's exact encoded size).
    wt.storage_shape =
        model::Shape::of({1, 1, 1, to_int(model::round_up(static_cast<std::int64_t>(std::ceil(raw - 1e-6)), 16))});
    wt.mem_area = arch.permanent_storage;
    p.weights = wt;
  }
  if (layer.has_bias && own_weights) {
    model::Bias b;
    b.shape = model::Shape::of({to_int(layer.ofm_shape.c)});
    // The packed bias+scale of the final, scheduled network (§7.1), in one stream of every channel:
    // the copy to SRAM is made for IFM-streamed passes, whose weights are encoded whole.
    const int channels = to_int(layer.ofm_shape.c);
    b.storage_shape = model::Shape::of({to_int(workloads::packed_bias_scale_size(channels, arch.ncores(), 0).elements)});
    b.mem_area = arch.permanent_storage;
    b.element_size_bytes = 10;
    p.bias = b;
  }

  out.own_weights = own_weights;
  out.uses_lut = workloads::uses_lut(layer);
  add_lut_and_weight_variants(arch, layer, ifm_t.dtype, out);

  // Can the NPU run it at all: the input bit width of its block type.
  const arch::NpuBlockType block_type = model::npu_block_type(p.op.type);
  const int ifm_bits = model::bits(p.ifm.dtype);
  if (!model::ifm_bits_supported(block_type, ifm_bits)) {
    out.unsupported = fmt::format("{}-bit input is not supported by a {} layer", ifm_bits, workloads::op_name(layer));
  }

  // The traversals the op allows (§7.2).
  if (layer.kind == OpKind::Conv2D || layer.kind == OpKind::TransposeConv2D) {
    out.traversals = {model::BlockTraversal::DepthFirst, model::BlockTraversal::PartKernelFirst};
  }
  if (layer.kind == OpKind::DepthwiseConv2D) out.traversals = {model::BlockTraversal::DepthWise};

  // Feature-map layouts (§4.5) and layer fusion (§9).
  for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
    const bool as_weights = layer.kind == OpKind::MatMul && i == 1;
    const bool fc_nhcwb16 = layer.kind == OpKind::FullyConnected && i == 0 &&
                            fc_reads_nhcwb16(layer, w.tensors[static_cast<std::size_t>(layer.inputs[i])]);
    out.input_linear_only[i] = as_weights || (matmul_like && !fc_nhcwb16);
    out.input_nhcwb16[i] = !out.input_constant[i] && nhcwb16_eligible(w, layer.inputs[i]);
    out.input_arena_only[i] = network_io_in_arena(arch, w, layer.inputs[i]);
  }
  out.output_linear_only = matmul_like && !(layer.kind == OpKind::FullyConnected &&
                                            fc_writes_nhcwb16(layer, w.tensors[static_cast<std::size_t>(layer.output)]));
  out.output_nhcwb16 = nhcwb16_eligible(w, layer.output);
  out.output_arena_only = network_io_in_arena(arch, w, layer.output);
  out.input_may_roll = may_roll(w, layer.inputs[0]);
  out.output_may_roll = may_roll(w, layer.output);
  return out;
}

}  // namespace npumap::search
