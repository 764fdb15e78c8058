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

/// The placements of a feature map: the arena, and SRAM where it differs from the arena; each in
/// linear layout and, where allowed, NHCWB16.
std::vector<FmChoice> fm_choices(const arch::Arch& arch, bool nhcwb16, bool arena_only) {
  std::vector<FmChoice> out{{Residence::Arena, Layout::Linear}};
  if (nhcwb16) out.push_back({Residence::Arena, Layout::Nhcwb16});
  if (arch.feature_map_storage != arch.fast_storage && !arena_only) {
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


/// Places a feature map of the base pass; a linear one keeps the base's needs_linear_format where that
/// is false (a feature map passed between NPU subgraphs: linear, costed as NHCWB16; lowering.cpp).
void place_fm(const arch::Arch& arch, model::FeatureMap& fm, const FmChoice& c) {
  fm.mem_area = c.residence == Residence::Arena ? arch.feature_map_storage : arch.fast_storage;
  fm.format = c.layout == Layout::Nhcwb16 ? model::TensorFormat::NHCWB16 : model::TensorFormat::NHWC;
  fm.needs_linear_format = c.layout == Layout::Linear && fm.needs_linear_format;
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

LayerSpace make_layer_space(const arch::Arch& arch, const LoweredLayer& lowered, const SpaceOptions& options) {
  LayerSpace space;
  space.layer = lowered.layer;
  space.num_inputs = lowered.num_inputs;
  space.base = lowered.base;
  space.batch_repeat = lowered.batch_repeat;
  space.input_constant = lowered.input_constant;
  space.unsupported = lowered.unsupported;
  space.weight_variants = lowered.weight_variants;
  const model::Pass& p = space.base;
  if (lowered.cpu) {
    // A CPU operator: one placement, every feature map in the arena in linear layout, and one
    // candidate (it has no block configs).
    space.cpu = true;
    space.block_config_grid = 1;
    Template t;
    t.inputs.assign(static_cast<std::size_t>(lowered.num_inputs), FmChoice{Residence::Arena, Layout::Linear});
    t.output = FmChoice{Residence::Arena, Layout::Linear};
    space.templates = std::vector<Template>{t};
    return space;
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
  q.uses_lut = lowered.uses_lut;
  q.all_fms_quantized = true;
  const workloads::Shape ofm_op{q.ofm_shape[0], q.ofm_shape[1], q.ofm_shape[2], q.ofm_shape[3]};
  space.block_config_grid = grid_size(arch, ofm_op);
  if (space.unsupported.empty()) space.block_configs = model::find_valid_block_configs(arch, q);

  // Templates.
  const std::vector<model::BlockTraversal>& traversals = lowered.traversals;
  std::vector<WeightPlacement> weights{WeightPlacement::InPlace};
  std::vector<BiasPlacement> biases{BiasPlacement::InPlace};
  if (lowered.own_weights && arch.permanent_storage != arch.fast_storage) {
    weights = {WeightPlacement::InPlace, WeightPlacement::Copy, WeightPlacement::DoubleBuffer};
  }
  if (p.bias && arch.permanent_storage != arch.fast_storage) biases = {BiasPlacement::InPlace, BiasPlacement::Copy};
  std::vector<std::vector<FmChoice>> in_choices;
  std::array<bool, 2> in_roll{};
  for (std::size_t i = 0; i < static_cast<std::size_t>(lowered.num_inputs); ++i) {
    if (lowered.input_constant[i]) {
      in_choices.push_back({FmChoice{Residence::Arena, Layout::Linear}});  // stays where it is stored
    } else {
      in_choices.push_back(fm_choices(arch, lowered.input_nhcwb16[i] && !lowered.input_linear_only[i],
                                      lowered.input_arena_only[i]));
    }
    in_roll[i] = options.fusion && i == 0 && lowered.input_may_roll;
  }
  const std::vector<FmChoice> out_choices =
      fm_choices(arch, lowered.output_nhcwb16 && !lowered.output_linear_only, lowered.output_arena_only);
  const bool out_roll = options.fusion && lowered.output_may_roll;
  const std::size_t n_in1 = in_choices.size() > 1 ? in_choices[1].size() : 1;
  // Inputs an elementwise output may overwrite: same shape and data type as the output.
  std::array<bool, 2> in_place_ok{};
  const bool elementwise = model::npu_block_type(p.op.type) == NpuBlockType::ElementWise;
  std::vector<Template> templates;
  in_place_ok[0] = elementwise && p.ifm.shape == p.ofm.shape && p.ifm.dtype == p.ofm.dtype;
  in_place_ok[1] = elementwise && p.ifm2 && p.ifm2->shape == p.ofm.shape && p.ifm2->dtype == p.ofm.dtype;
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
              t.inputs.push_back(in0);
              if (in_choices.size() > 1) t.inputs.push_back(in_choices[1][j]);
              t.output = out;
              t.input_may_roll[0] = in_roll[0] && is_rolling_site(arch, in0);
              t.output_may_roll = out_roll && is_rolling_site(arch, out);
              templates.push_back(t);
              // In-place elementwise: the same choices with the output written over input i.
              for (std::size_t i = 0; options.in_place && i < t.inputs.size(); ++i) {
                if (!in_place_ok[i] || !(t.inputs[i] == out)) continue;
                Template ip = t;
                ip.output_over_input = static_cast<int>(i);
                ip.output_may_roll = false;
                ip.input_may_roll[i] = false;
                templates.push_back(ip);
              }
            }
          }
        }
      }
    }
  }
  space.templates = std::move(templates);
  return space;
}


LayerSpace make_layer_space(const arch::Arch& arch, const workloads::Workload& workload, int layer,
                            const SpaceOptions& options) {
  return make_layer_space(arch, lower_layer(arch, workload, layer), options);
}

model::Pass make_template_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl) {
  model::Pass p = space.base;
  if (!space.input_constant[0]) place_fm(arch, p.ifm, tpl.inputs[0]);
  if (p.op.type == model::OpType::FullyConnected && tpl.inputs[0].layout == Layout::Nhcwb16) {
    // A fully-connected layer reads an NHCWB16 input with the tensor's 4-D shape [1,1,1,C], as Vela does.
    p.ifm.shape = model::Shape::of({1, 1, 1, p.ifm.shape.last()});
  }
  if (p.ifm2 && !space.input_constant[1]) place_fm(arch, *p.ifm2, tpl.inputs[1]);
  place_fm(arch, p.ofm, tpl.output);
  if (p.weights) {
    p.weights->traversal = tpl.traversal;
    if (p.op.type == model::OpType::FullyConnected && space.num_inputs == 2) {
      // matmul: the second operand is a feature map read as weights where it lives
      p.weights->mem_area = tpl.inputs[1].residence == Residence::Arena ? arch.feature_map_storage : arch.fast_storage;
    } else if (tpl.weights != WeightPlacement::InPlace) {
      p.weights->dma_to = arch.fast_storage;
    }
  }
  if (p.bias && tpl.bias == BiasPlacement::Copy) p.bias->dma_to = arch.fast_storage;
  return p;
}

int weight_variant_index(const LayerSpace& space, const Template& tpl, const model::BlockConfig& bc) {
  if (space.weight_variants.empty() || !space.base.weights) return -1;
  const int depth = space.base.weights->shape.last();
  const int d = std::min(bc.ofm_d, depth);
  const bool streamed = tpl.weights == WeightPlacement::DoubleBuffer && d < depth;
  const model::BlockTraversal trav =
      tpl.traversal == model::BlockTraversal::Default ? model::BlockTraversal::DepthFirst : tpl.traversal;
  for (std::size_t i = 0; i < space.weight_variants.size(); ++i) {
    const WeightVariantCost& v = space.weight_variants[i];
    if (v.traversal == trav && v.streamed == streamed && v.block_depth == d) return static_cast<int>(i);
  }
  return -1;
}

void apply_block_config(model::Pass& p, const LayerSpace& space, const Template& tpl, const model::BlockConfig& bc) {
  // The weight stream's double buffer holds slices of the block's OFM depth (not for a matmul,
  // whose weights are a feature map read in place).
  const bool matmul = p.op.type == model::OpType::FullyConnected && space.num_inputs == 2;
  if (p.weights && !matmul && tpl.weights == WeightPlacement::DoubleBuffer) p.weights_double_buffer_depth = bc.ofm_d;
  // The weights encoded for this traversal and block depth, streamed or in one brick: the bytes
  // stored (and DMA'd) and the bandwidth scale the cycle model reads (Vela's mean over bricks).
  if (p.weights && !matmul) {
    if (const int v = weight_variant_index(space, tpl, bc); v >= 0) {
      const WeightVariantCost& wv = space.weight_variants[static_cast<std::size_t>(v)];
      p.weights->compression_scale = wv.scale;
      p.weights->storage_shape = model::Shape::of({1, 1, 1, static_cast<int>(wv.bytes)});
    }
  }
  p.block_config = {bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d};
}

model::Pass make_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl,
                      const model::BlockConfig& bc) {
  model::Pass p = make_template_pass(arch, space, tpl);
  apply_block_config(p, space, tpl, bc);
  return p;
}

std::int64_t transient_sram_bytes(const model::Pass& p, double double_buffer_scale) {
  std::int64_t bytes = 0;
  if (p.weights && p.weights->dma()) {
    const model::Weights& wt = *p.weights;
    if (p.weights_double_buffer_depth) {
      // storage_size_for_sub_purpose(DoubleBuffer, depth) (§4.3): the last dimension limited to
      // two slices of the OFM-depth step, compressed at the worst-stream ratio.
      std::int64_t elems = 1;
      for (int i = 0; i + 1 < wt.shape.rank; ++i) elems *= wt.shape.dims[static_cast<std::size_t>(i)];
      elems *= std::min(wt.shape.last(), 2 * *p.weights_double_buffer_depth);
      const double scale = double_buffer_scale > 0.0 ? double_buffer_scale : wt.compression_scale;
      const double raw = static_cast<double>(elems) * model::size_in_bytes(wt.dtype) * scale;
      bytes += model::round_up(static_cast<std::int64_t>(std::ceil(raw)), 16);
    } else {
      bytes += wt.storage_shape.elements();
    }
  }
  return bytes + bias_copy_sram_bytes(p);
}

std::int64_t bias_copy_sram_bytes(const model::Pass& p) {
  if (!p.bias || !p.bias->dma()) return 0;
  const int elem = p.bias->element_size_bytes == 0 ? 4 : p.bias->element_size_bytes;
  return model::round_up(p.bias->storage_shape.elements() * elem, 16);
}

int rolling_consumer_rows(const arch::Arch& arch, const LayerSpace& space, const model::BlockConfig& bc) {
  // docs/design/npu-model.md §9: the IFM block of the consumer, with ofm_block_max as the sub-kernel limit.
  const arch::Block ofm_block{bc.ofm_w, bc.ofm_h, bc.ofm_d};
  const arch::Block ifm_block = model::get_ifm_block_size(arch, bc.ofm_d, ofm_block, space.base.op.kernel,
                                                          arch.ofm_block_max, model::Resampling::None);
  return ifm_block.h;
}

}  // namespace npumap::search
