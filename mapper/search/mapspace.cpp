// Building the mapspace of one layer: the base pass, the templates and the valid block configs.
// See mapspace.hpp for what a template fixes and why rolling buffers share templates.

#include "mapper/search/mapspace.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/user_error.hpp"
#include "model/geometry.hpp"

namespace npumap::search {
namespace {

using arch::MemArea;
using arch::NpuBlockType;
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
/// standalone activation as a 1x1 average pool (NPU_MODEL.md §1.4).
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
    case OpKind::Activation: return model::OpType::AvgPool;
  }
  return model::OpType::Conv2DBias;
}

int to_int(std::int64_t v) { return static_cast<int>(v); }

/// A 4-D shape as a model shape.
model::Shape shape4(const workloads::Shape& s) {
  return model::Shape::of({to_int(s.n), to_int(s.h), to_int(s.w), to_int(s.c)});
}

/// The feature-map shape a fully-connected pass sees: Vela reshapes a batch of N rows into H x W
/// (NPU_MODEL.md §7.3: 4 -> 2x2, 8 -> 2x4, 16 -> 4x4, otherwise 1xN).
model::Shape fc_shape(std::int64_t rows, std::int64_t channels) {
  if (rows == 1) return model::Shape::of({1, to_int(channels)});
  int h = 1;
  int w = to_int(rows);
  if (rows == 4) h = 2, w = 2;
  if (rows == 8) h = 2, w = 4;
  if (rows == 16) h = 4, w = 4;
  return model::Shape::of({1, h, w, to_int(channels)});
}

bool is_conv_dw_pool(OpKind k) {
  return k == OpKind::Conv2D || k == OpKind::DepthwiseConv2D || k == OpKind::MaxPool || k == OpKind::AvgPool ||
         k == OpKind::Activation;
}

int position_in_order(const workloads::Workload& w, int layer) {
  const auto& order = w.topological_order;
  return static_cast<int>(std::find(order.begin(), order.end(), layer) - order.begin());
}

/// NPU_MODEL.md §4.5: a feature map may use NHCWB16 when an NPU op produces it, every consumer reads
/// it with the tensor's own shape as a feature map (not as matmul weights, not as an int32 ReduceSum
/// input) and it is not a network input or output.
bool nhcwb16_eligible(const workloads::Workload& w, int tensor) {
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  if (t.producer < 0 || t.consumers.empty()) return false;
  for (int c : t.consumers) {
    const auto& layer = w.layers[static_cast<std::size_t>(c)];
    if (layer.kind == OpKind::MatMul || layer.kind == OpKind::FullyConnected) return false;
    if (layer.kind == OpKind::ReduceSum && t.dtype == workloads::DataType::Int32) return false;
    for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
      if (layer.inputs[i] != tensor) continue;
      const workloads::Shape& seen = i == 0 ? layer.ifm_shape : *layer.ifm2_shape;
      if (!(seen == t.shape)) return false;
    }
  }
  const auto& producer = w.layers[static_cast<std::size_t>(t.producer)];
  return producer.kind != OpKind::MatMul && producer.kind != OpKind::FullyConnected && producer.ofm_shape == t.shape;
}

/// Layer fusion (NPU_MODEL.md §9): the tensor is the IFM of its only consumer, which runs right after
/// its producer, and both are convolution, depthwise or pooling passes.
bool may_roll(const workloads::Workload& w, int tensor) {
  const auto& t = w.tensors[static_cast<std::size_t>(tensor)];
  if (t.producer < 0 || t.consumers.size() != 1 || !nhcwb16_eligible(w, tensor)) return false;
  const auto& producer = w.layers[static_cast<std::size_t>(t.producer)];
  const auto& consumer = w.layers[static_cast<std::size_t>(t.consumers[0])];
  if (!is_conv_dw_pool(producer.kind) || !is_conv_dw_pool(consumer.kind)) return false;
  if (consumer.inputs.size() != 1 || consumer.inputs[0] != tensor) return false;
  return position_in_order(w, t.consumers[0]) == position_in_order(w, t.producer) + 1;
}

std::vector<FmChoice> fm_choices(const arch::Arch& arch, const workloads::Workload& w, int tensor, bool linear_only) {
  const bool nhcwb16 = !linear_only && nhcwb16_eligible(w, tensor);
  std::vector<FmChoice> out{{Residence::Arena, Layout::Linear}};
  if (nhcwb16) out.push_back({Residence::Arena, Layout::Nhcwb16});
  if (arch.feature_map_storage != arch.fast_storage) {
    out.push_back({Residence::Sram, Layout::Linear});
    if (nhcwb16) out.push_back({Residence::Sram, Layout::Nhcwb16});
  }
  return out;
}

/// True when this choice puts the tensor where a rolling buffer would be: fast storage, NHCWB16.
bool is_rolling_site(const arch::Arch& arch, const FmChoice& c) {
  const bool in_fast = c.residence == Residence::Sram || arch.feature_map_storage == arch.fast_storage;
  return in_fast && c.layout == Layout::Nhcwb16;
}

model::FeatureMap make_fm(const workloads::TensorInfo& t, model::Shape shape) {
  model::FeatureMap fm;
  fm.shape = shape;
  fm.dtype = to_model(t.dtype);
  fm.quant_scale = static_cast<float>(t.quant_scale);
  return fm;
}

void place_fm(const arch::Arch& arch, model::FeatureMap& fm, const FmChoice& c) {
  fm.mem_area = c.residence == Residence::Arena ? arch.feature_map_storage : arch.fast_storage;
  fm.format = c.layout == Layout::Nhcwb16 ? model::TensorFormat::NHCWB16 : model::TensorFormat::NHWC;
  fm.needs_linear_format = c.layout == Layout::Linear;
}

std::uint64_t grid_size(const arch::Arch& arch, const workloads::Shape& ofm) {
  const std::int64_t max_w = std::min<std::int64_t>(arch.ofm_block_max.w, ofm.w);
  const std::int64_t max_h = std::min<std::int64_t>(arch.ofm_block_max.h, ofm.h);
  const std::int64_t max_d = std::min<std::int64_t>(arch.ofm_block_max.d, ofm.c);
  const std::int64_t min_w = arch.accel.ofm_ublock.w;
  const std::int64_t min_h = arch.accel.ofm_ublock.h;
  const std::int64_t ud = arch.accel.ofm_ublock.d;
  std::uint64_t depths = 0;
  for (std::int64_t c = ud; c < max_d + ud; c += ud) depths += (c >= max_d || c % 16 == 0) ? 1 : 0;
  return static_cast<std::uint64_t>(model::ceil_div(max_w, min_w)) *
         static_cast<std::uint64_t>(model::ceil_div(max_h, min_h)) * depths;
}


}  // namespace

const char* weight_placement_name(WeightPlacement w) {
  switch (w) {
    case WeightPlacement::InPlace: return "in_place";
    case WeightPlacement::Copy: return "copy";
    case WeightPlacement::DoubleBuffer: return "double_buffer";
  }
  return "unknown";
}

const char* bias_placement_name(BiasPlacement b) { return b == BiasPlacement::InPlace ? "in_place" : "copy"; }

std::int64_t fm_storage_bytes(const workloads::Shape& s, int element_bytes, Layout layout) {
  const std::int64_t c = layout == Layout::Nhcwb16 ? (s.c + 15) / 16 * 16 : s.c;
  return std::max<std::int64_t>(16, model::round_up(s.n * s.h * s.w * c * element_bytes, 16));
}

LayerSpace make_layer_space(const arch::Arch& arch, const workloads::Workload& w, int layer_index,
                            const SpaceOptions& options) {
  const workloads::Layer& layer = w.layers[static_cast<std::size_t>(layer_index)];
  LayerSpace space;
  space.layer = layer_index;
  space.num_inputs = static_cast<int>(layer.inputs.size());
  NPUMAP_ASSERT(space.num_inputs >= 1 && space.num_inputs <= 2);
  const auto& ifm_t = w.tensors[static_cast<std::size_t>(layer.inputs[0])];
  const auto& ofm_t = w.tensors[static_cast<std::size_t>(layer.output)];

  // The base pass: shapes, types and the operator.
  model::Pass& p = space.base;
  p.op.type = op_type(layer.kind);
  const bool matmul_like = layer.kind == OpKind::FullyConnected || layer.kind == OpKind::MatMul;
  if (!matmul_like && !workloads::is_binary_elementwise(layer.kind) && layer.kind != OpKind::Abs &&
      layer.kind != OpKind::LeakyRelu && layer.kind != OpKind::Softmax) {
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
    space.batch_repeat = to_int(d.batch);
    p.ifm = make_fm(ifm_t, fc_shape(d.m, d.k));
    p.ofm = make_fm(ofm_t, fc_shape(d.m, d.n));
  } else {
    p.ifm = make_fm(ifm_t, shape4(layer.ifm_shape));
    p.ofm = make_fm(ofm_t, shape4(layer.ofm_shape));
    if (layer.inputs.size() > 1) {
      p.ifm2 = make_fm(w.tensors[static_cast<std::size_t>(layer.inputs[1])], shape4(*layer.ifm2_shape));
    }
  }
  bool has_npu_predecessor = false;
  for (int t : layer.inputs) has_npu_predecessor = has_npu_predecessor || w.tensors[static_cast<std::size_t>(t)].producer >= 0;
  p.has_npu_predecessor = has_npu_predecessor;

  // Weights: the layer's own (conv, depthwise, fc) or, for matmul, the second operand read as weights.
  const bool own_weights = layer.kind == OpKind::Conv2D || layer.kind == OpKind::DepthwiseConv2D ||
                           layer.kind == OpKind::FullyConnected;
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
    wt.storage_shape = model::Shape::of({1, 1, 1, to_int(model::round_up(static_cast<std::int64_t>(std::ceil(raw)), 16))});
    wt.mem_area = arch.permanent_storage;
    p.weights = wt;
  }
  if (layer.has_bias && own_weights) {
    model::Bias b;
    b.shape = model::Shape::of({to_int(layer.ofm_shape.c)});
    b.storage_shape = b.shape;
    b.mem_area = arch.permanent_storage;
    b.element_size_bytes = 10;  // the packed bias+scale of the final, scheduled network (§7.1)
    p.bias = b;
  }

  // Block configs: every valid one (§8), and the size of the grid they were picked from.
  model::BlockConfigQuery q;
  q.block_type = model::npu_block_type(p.op.type);
  q.ifm_shape = p.ifm_op_shape();
  q.ofm_shape = p.ofm_op_shape();
  if (p.ifm2) {
    q.ifm2 = model::Ifm2Kind::Tensor;
    q.ifm2_shape = p.ifm2_op_shape();
  }
  q.ifm_bits = model::bits(p.ifm.dtype);
  q.kernel = p.op.kernel;
  q.uses_lut = workloads::uses_lut(layer);
  q.all_fms_quantized = true;
  const workloads::Shape ofm_op{q.ofm_shape[0], q.ofm_shape[1], q.ofm_shape[2], q.ofm_shape[3]};
  space.block_config_grid = grid_size(arch, ofm_op);
  if (!model::ifm_bits_supported(q.block_type, q.ifm_bits)) {
    space.unsupported = fmt::format("{}-bit input is not supported by a {} layer", q.ifm_bits, workloads::op_name(layer));
  } else {
    space.block_configs = model::find_valid_block_configs(arch, q);
  }

  // Templates.
  std::vector<model::BlockTraversal> traversals{model::BlockTraversal::Default};
  if (layer.kind == OpKind::Conv2D) traversals = {model::BlockTraversal::DepthFirst, model::BlockTraversal::PartKernelFirst};
  if (layer.kind == OpKind::DepthwiseConv2D) traversals = {model::BlockTraversal::DepthWise};
  std::vector<WeightPlacement> weights{WeightPlacement::InPlace};
  std::vector<BiasPlacement> biases{BiasPlacement::InPlace};
  if (own_weights && arch.permanent_storage != arch.fast_storage) {
    weights = {WeightPlacement::InPlace, WeightPlacement::Copy, WeightPlacement::DoubleBuffer};
  }
  if (p.bias && arch.permanent_storage != arch.fast_storage) biases = {BiasPlacement::InPlace, BiasPlacement::Copy};
  std::vector<std::vector<FmChoice>> in_choices;
  std::array<bool, 2> in_roll{};
  for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
    const bool as_weights = layer.kind == OpKind::MatMul && i == 1;
    in_choices.push_back(fm_choices(arch, w, layer.inputs[i], as_weights || matmul_like));
    in_roll[i] = options.fusion && i == 0 && may_roll(w, layer.inputs[i]);
  }
  const std::vector<FmChoice> out_choices = fm_choices(arch, w, layer.output, matmul_like);
  const bool out_roll = options.fusion && may_roll(w, layer.output);
  const std::size_t n_in1 = in_choices.size() > 1 ? in_choices[1].size() : 1;
  for (auto trav : traversals) {
    for (auto wp : weights) {
      for (auto bp : biases) {
        for (const FmChoice& in0 : in_choices[0]) {
          for (std::size_t j = 0; j < n_in1; ++j) {
            for (const FmChoice& out : out_choices) {
              Template t;
              t.traversal = trav;
              t.weights = wp;
              t.bias = bp;
              t.inputs[0] = in0;
              if (in_choices.size() > 1) t.inputs[1] = in_choices[1][j];
              t.output = out;
              t.input_may_roll[0] = in_roll[0] && is_rolling_site(arch, in0);
              t.output_may_roll = out_roll && is_rolling_site(arch, out);
              space.templates.push_back(t);
            }
          }
        }
      }
    }
  }
  return space;
}

model::Pass make_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl,
                      const model::BlockConfig& bc) {
  model::Pass p = space.base;
  place_fm(arch, p.ifm, tpl.inputs[0]);
  if (p.ifm2) place_fm(arch, *p.ifm2, tpl.inputs[1]);
  place_fm(arch, p.ofm, tpl.output);
  if (p.weights) {
    p.weights->traversal = tpl.traversal;
    if (p.op.type == model::OpType::FullyConnected && space.num_inputs == 2) {
      // matmul: the second operand is a feature map read as weights where it lives
      p.weights->mem_area = tpl.inputs[1].residence == Residence::Arena ? arch.feature_map_storage : arch.fast_storage;
    } else if (tpl.weights != WeightPlacement::InPlace) {
      p.weights->dma_to = arch.fast_storage;
      if (tpl.weights == WeightPlacement::DoubleBuffer) p.weights_double_buffer_depth = bc.ofm_d;
    }
  }
  if (p.bias && tpl.bias == BiasPlacement::Copy) p.bias->dma_to = arch.fast_storage;
  p.block_config = {bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d};
  return p;
}

std::int64_t transient_sram_bytes(const model::Pass& p) {
  std::int64_t bytes = 0;
  if (p.weights && p.weights->dma()) {
    const model::Weights& wt = *p.weights;
    if (p.weights_double_buffer_depth) {
      // storage_size_for_sub_purpose(DoubleBuffer, depth) (§4.3): the last dimension limited to
      // two slices of the OFM-depth step, compressed at the worst-stream ratio (here the mean).
      std::int64_t elems = 1;
      for (int i = 0; i + 1 < wt.shape.rank; ++i) elems *= wt.shape.dims[static_cast<std::size_t>(i)];
      elems *= std::min(wt.shape.last(), 2 * *p.weights_double_buffer_depth);
      const double raw = static_cast<double>(elems) * model::size_in_bytes(wt.dtype) * wt.compression_scale;
      bytes += model::round_up(static_cast<std::int64_t>(std::ceil(raw)), 16);
    } else {
      bytes += wt.storage_shape.elements();
    }
  }
  if (p.bias && p.bias->dma()) {
    const int elem = p.bias->element_size_bytes == 0 ? 4 : p.bias->element_size_bytes;
    bytes += model::round_up(p.bias->storage_shape.elements() * elem, 16);
  }
  return bytes;
}

int rolling_consumer_rows(const arch::Arch& arch, const LayerSpace& space, const model::BlockConfig& bc) {
  // NPU_MODEL.md §9: the IFM block of the consumer, with ofm_block_max as the sub-kernel limit.
  const arch::Block ofm_block{bc.ofm_w, bc.ofm_h, bc.ofm_d};
  const arch::Block ifm_block = model::get_ifm_block_size(arch, bc.ofm_d, ofm_block, space.base.op.kernel,
                                                          arch.ofm_block_max, model::Resampling::None);
  return ifm_block.h;
}

}  // namespace npumap::search
