#pragma once
// The mapspace of one lowered layer (lowering.hpp; docs/design/npu-model.md §7-§10): every way the NPU can run it.
//
// A *template* fixes the discrete choices: block traversal (conv2d: depth-first or part-kernel-
// first), where the weights are read from (in place, copied whole to SRAM, or streamed through an
// SRAM double buffer one OFM-depth slice at a time), whether the bias/scale tensor is copied to SRAM,
// and where each feature map lives and in which layout. The block config stays free: a job is one
// (layer, template) and enumerates every valid block config of §8 for it.
//
// Layer fusion is not a separate template: a rolling buffer lives in SRAM in NHCWB16, so it costs
// exactly what the "whole tensor in SRAM, NHCWB16" template costs. Such a template also emits its rows
// with the tensor marked Rolling (compatibility carries the block heights the buffer needs).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arch.hpp"
#include "mapper/search/compat.hpp"
#include "mapper/search/lowering.hpp"
#include "mapper/search/shared_vector.hpp"
#include "model/block_config.hpp"
#include "model/pass.hpp"
#include "workloads/workload.hpp"

namespace npumap::search {

/// Where a layer's weights are read from.
enum class WeightPlacement : std::uint8_t {
  InPlace,       ///< read from permanent storage, once per OFM block column (weight_read_multiple)
  Copy,          ///< copied whole to SRAM by DMA, then read there
  DoubleBuffer,  ///< streamed into an SRAM double buffer one OFM-depth slice at a time
};
/// Where the bias/scale tensor is read from.
enum class BiasPlacement : std::uint8_t { InPlace, Copy };

const char* weight_placement_name(WeightPlacement w);
const char* bias_placement_name(BiasPlacement b);

/// A feature map's placement in a template (Arena or Sram; Rolling is derived, see above).
struct FmChoice {
  Residence residence = Residence::Arena;
  Layout layout = Layout::Linear;
  friend bool operator==(const FmChoice&, const FmChoice&) = default;
};

/// The discrete choices of one job.
struct Template {
  model::BlockTraversal traversal = model::BlockTraversal::Default;
  WeightPlacement weights = WeightPlacement::InPlace;
  BiasPlacement bias = BiasPlacement::InPlace;
  std::vector<FmChoice> inputs;      ///< per feature-map input (ifm, ifm2; a CPU operator may have more)
  FmChoice output;
  std::array<bool, 2> input_may_roll{};  ///< also emit rows with this input as a rolling buffer
  bool output_may_roll = false;          ///< also emit rows with the output as a rolling buffer
  /// Elementwise only: the output overwrites this input (in place), or -1. Offered when the input
  /// has the output's shape, data type and placement; the join checks that the input dies here.
  int output_over_input = -1;
  friend bool operator==(const Template&, const Template&) = default;
};

/// Switches of the mapspace.
struct SpaceOptions {
  bool fusion = true;  ///< offer rolling buffers (layer fusion)
  bool in_place = true;  ///< offer elementwise outputs written over an input (off: for metamorphic tests)
};

/// Everything about one layer's mapspace. Its templates, block configs and weight variants are
/// shared by its copies (an identical layer's space is a copy of the one computed).
struct LayerSpace {
  int layer = -1;
  int num_inputs = 1;
  model::Pass base;             ///< the pass with the layer's shapes; templates and block configs fill in the rest
  int batch_repeat = 1;         ///< a batched matmul runs as this many identical passes
  std::vector<bool> input_constant;  ///< per input: a constant read in place (placement fixed by `base`)
  SharedVector<Template> templates;
  SharedVector<model::BlockConfig> block_configs;  ///< every valid config (§8), Vela's order
  std::uint64_t block_config_grid = 0;  ///< configs tried before the SHRAM check (§8.4 loop)
  std::string unsupported;      ///< non-empty: why the NPU cannot run this layer at all
  SharedVector<WeightVariantCost> weight_variants;  ///< LoweredLayer::weight_variants
  bool cpu = false;             ///< a CPU operator: one template, no block configs, one zero-cost pmapping
};

/// Builds the mapspace of a lowered layer on `arch`: its templates and its valid block configs.
LayerSpace make_layer_space(const arch::Arch& arch, const LoweredLayer& lowered, const SpaceOptions& options);
/// lower_layer, then make_layer_space.
LayerSpace make_layer_space(const arch::Arch& arch, const workloads::Workload& workload, int layer,
                            const SpaceOptions& options);

/// The pass of one candidate: the layer's base pass with a template and a block config applied.
model::Pass make_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl,
                      const model::BlockConfig& block_config);
/// make_pass in two steps, so a job builds its template's pass once: the base pass with the
/// template applied, then (per candidate) the block config, which overwrites everything it sets.
model::Pass make_template_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl);
void apply_block_config(model::Pass& pass, const LayerSpace& space, const Template& tpl,
                        const model::BlockConfig& block_config);

/// The weight variant (index into space.weight_variants) a candidate encodes its weights as: the
/// template's traversal, the block's OFM depth capped at the weights' OFM depth, streamed when the
/// template double-buffers the weights and the block is shallower than them; -1 when none is listed
/// (the layer's `weight_compression` applies).
int weight_variant_index(const LayerSpace& space, const Template& tpl, const model::BlockConfig& block_config);

/// SRAM the pass itself reserves while it runs: the weight copy or double buffer and the bias copy.
/// A double buffer holds two slices at `double_buffer_scale` (the worst brick's; <= 0: the
/// weights' compression scale).
std::int64_t transient_sram_bytes(const model::Pass& pass, double double_buffer_scale = 0.0);

/// Of transient_sram_bytes, the bias copy's: 0 where the pass reads its bias in place.
std::int64_t bias_copy_sram_bytes(const model::Pass& pass);

/// The consumer-side rolling-buffer rows of a block config: the IFM block height (docs/design/npu-model.md §9).
int rolling_consumer_rows(const arch::Arch& arch, const LayerSpace& space, const model::BlockConfig& block_config);

/// Storage bytes of a feature map of this shape and element size in a layout (§4.3).
std::int64_t fm_storage_bytes(const workloads::Shape& shape, int element_bytes, Layout layout);

}  // namespace npumap::search
