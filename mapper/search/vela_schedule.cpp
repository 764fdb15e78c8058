// Vela's schedule as a point of our mapspace; see vela_schedule.hpp and docs/design/vela-schedule.md.

#include "mapper/search/vela_schedule.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tbb/parallel_for.h>

#include "mapper/search/point_memory.hpp"
#include "mapper/search/vela_cascades.hpp"
#include "mapper/search/vela_sram.hpp"
#include "model/block_config.hpp"
#include "model/evaluate.hpp"
#include "model/pass.hpp"
#include "model/traversal.hpp"

namespace npumap::search {
namespace {

/// Whether every feature map of the group is in the arena (Vela keeps whole tensors there).
bool all_in_arena(const PmappingGroup& g, bool spills) {
  return spills || std::all_of(g.compat.begin(), g.compat.end(),
                               [](const TensorCompat& c) { return c.residence == Residence::Arena; });
}

/// Whether every feature map of the group is in the arena or a rolling buffer (Vela's cascades; the
/// join leaves the rolling groups out where the arena is SRAM, add_vela_cascades chooses them).
bool arena_or_rolling(const PmappingGroup& g, bool spills) {
  return spills || std::all_of(g.compat.begin(), g.compat.end(), [](const TensorCompat& c) {
           return c.residence == Residence::Arena || c.residence == Residence::Rolling;
         });
}

/// Per block config of the layer (space.block_configs, Vela's enumeration order): whether Vela's
/// scheduler shortlist of `limit` (0: all) holds it.
std::vector<bool> in_shortlist(const LayerSpace& space, int limit) {
  std::vector<bool> in(space.block_configs.size(), limit <= 0);
  if (limit <= 0) return in;
  const std::vector<model::BlockConfig> shortlist = model::scheduler_block_configs(space.block_configs, limit);
  for (std::size_t i = 0; i < space.block_configs.size(); ++i)
    in[i] = std::find(shortlist.begin(), shortlist.end(), space.block_configs[i]) != shortlist.end();
  return in;
}

/// Vela's bandwidth weight of a byte read or written in `area` (its scheduler's bandwidth_weights).
double vela_bandwidth_weight(arch::MemArea area) {
  switch (area) {
    case arch::MemArea::Sram: return 1.0;
    case arch::MemArea::Dram: return 10.0;
    case arch::MemArea::OnChipFlash: return 2.0;
    case arch::MemArea::OffChipFlash: return 20.0;
    default: return 0.0;
  }
}

/// One block config of a layer's template costed as the per-layer stage costs it, with Vela's pass
/// metric: 40 per cycle plus every memory's bytes times its bandwidth weight.
struct VelaCandidate {
  PmappingRow row;
  double metric = 0.0;
};

/// The pass as Vela's scheduler costs it: its weights are encoded before scheduling only where they
/// get a DMA to SRAM, and then once, for a block depth of 16 in streams of 16 OFM channels (the real
/// encoding follows the chosen block config after scheduling); weights read in place are costed
/// uncompressed (scale 1). The reported cycles use the real encoding (apply_block_config's). Where the
/// arch spills, an OFM that may roll is still a tensor of the arena: Vela writes its bytes to SRAM
/// (force_outputs_to_fast_storage) but times the block commands with the arena's latency; an IFM that
/// may roll is wholly the arena's (read there, bytes and cycles).
model::Pass scheduling_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl, model::Pass pass,
                            bool bias_in_place) {
  // Vela packs the biases (10 bytes per channel) and moves an IFM-streamed pass's to SRAM only after
  // scheduling (move_scales_to_fast_storage): while it ranks block configs every bias is the int32
  // tensor read in place, so each OFM block waits the permanent storage's latency for it
  // (docs/design/npu-model.md §6.3, the bias term of the output cycles).
  if (pass.bias && bias_in_place) {
    pass.bias->dma_to = arch::MemArea::Unknown;
    pass.bias->element_size_bytes = 0;
    pass.bias->storage_shape = pass.bias->shape;
  }
  // Every feature map is NHWC while Vela schedules (mark_tensors.py gives them the arch's default
  // format; apply_result sets NHCWB16 afterwards): its bytes are those of the unrounded channels,
  // while the transfer efficiency of a tensor that need not be linear is still costed as NHCWB16.
  for (model::FeatureMap* fm : {&pass.ifm, pass.ifm2 ? &*pass.ifm2 : nullptr, &pass.ofm})
    if (fm != nullptr && fm->format == model::TensorFormat::NHCWB16) fm->format = model::TensorFormat::NHWC;
  if (arch.spilling_enabled && tpl.output_may_roll && pass.ofm.mem_area == arch.fast_storage) {
    pass.ofm.mem_area = arch.feature_map_storage;
    pass.force_outputs_to_fast_storage = true;
  }
  // A rolled IFM is read from the arena, bytes, access cycles and latency alike: Vela costs an
  // IFM-streamed pass with no rewrite of its own (search_ifm_streaming_body passes an empty
  // rewrite_list to performance_metrics_for_pass; the rolling buffer's rewrite joins the candidate
  // afterwards), so the IFM is still the arena's tensor there.
  if (arch.spilling_enabled && tpl.input_may_roll[0] && pass.ifm.mem_area == arch.fast_storage)
    pass.ifm.mem_area = arch.feature_map_storage;
  const bool matmul = pass.op.type == model::OpType::FullyConnected && space.num_inputs == 2;
  if (!pass.weights || matmul) return pass;
  if (tpl.weights == WeightPlacement::InPlace) {
    pass.weights->compression_scale = 1.0;
    return pass;
  }
  const int depth = pass.weights->shape.last();
  const model::BlockTraversal trav =
      tpl.traversal == model::BlockTraversal::Default ? model::BlockTraversal::DepthFirst : tpl.traversal;
  for (const WeightVariantCost& v : space.weight_variants)
    if (v.traversal == trav && v.streamed == (depth > 16) && v.block_depth == std::min(16, depth)) {
      pass.weights->compression_scale = v.scale;
      pass.weights->storage_shape = model::Shape::of({1, 1, 1, static_cast<int>(v.bytes)});
    }
  return pass;
}

/// A row's weights in SRAM as Vela's scheduler counts them: from the encoding it made before
/// scheduling (insert_dma's, for a block depth of 16 in streams of 16 OFM channels), not the one
/// made for the chosen block config afterwards. Whole (IFM streaming): that encoding's bytes,
/// rounded up to 16. Double-buffered: two slices of the block's OFM depth at that encoding's
/// worst-stream ratio (storage_size_for_sub_purpose), rounded up to 16. In place: none.
double scheduling_weight_sram(const LayerSpace& space, const Template& tpl, const model::BlockConfig& bc) {
  const model::Pass& base = space.base;
  if (!base.weights || tpl.weights == WeightPlacement::InPlace) return 0.0;
  const model::Weights& wt = *base.weights;
  const int depth = wt.shape.last();
  const model::BlockTraversal trav =
      tpl.traversal == model::BlockTraversal::Default ? model::BlockTraversal::DepthFirst : tpl.traversal;
  for (const WeightVariantCost& v : space.weight_variants) {
    if (v.traversal != trav || v.streamed != (depth > 16) || v.block_depth != std::min(16, depth)) continue;
    if (tpl.weights != WeightPlacement::DoubleBuffer) return static_cast<double>(model::round_up(v.bytes, 16));
    std::int64_t elems = 1;
    for (int i = 0; i + 1 < wt.shape.rank; ++i) elems *= wt.shape.dims[static_cast<std::size_t>(i)];
    elems *= std::min(depth, 2 * bc.ofm_d);
    const double raw = static_cast<double>(elems) * model::size_in_bytes(wt.dtype) * v.worst_scale;
    return static_cast<double>(model::round_up(static_cast<std::int64_t>(std::ceil(raw)), 16));
  }
  return -1.0;
}

/// One template's scheduling passes prepared for the cycle model (model::prepare_pass), reused across
/// its block configs: the passes differ only in the block config, the double buffer's depth and, where
/// no encoding of Vela's replaces it, the weights' encoding, which `weights` records.
struct SchedulingPrep {
  bool ready = false;
  std::optional<model::Weights> weights;
  model::PreparedPass pass;
};

/// Vela's pass metric of `pass` (the template's pass at one block config, make_pass): 40 per cycle
/// plus every memory's bytes times its bandwidth weight, of the pass as Vela's scheduler costs it
/// (scheduling_pass). With `prep` (one per template) the prepared passes are reused.
double scheduling_metric(const arch::Arch& arch, const LayerSpace& space, const Template& tpl, const model::Pass& pass,
                         bool bias_in_place, SchedulingPrep* prep = nullptr) {
  const model::Pass sp = scheduling_pass(arch, space, tpl, pass, bias_in_place);
  SchedulingPrep local;
  SchedulingPrep& pp = prep != nullptr ? *prep : local;
  if (!pp.ready || pp.weights != sp.weights) {
    pp.pass = model::prepare_pass(arch, sp);
    pp.weights = sp.weights;
    pp.ready = true;
  }
  const model::PassAreaCost ms = model::evaluate_area_cost(arch, pp.pass, sp);
  double bytes = 0.0;
  for (int a = 0; a < arch::kNumMemAreas; ++a)
    bytes += vela_bandwidth_weight(static_cast<arch::MemArea>(a)) * ms.area_bytes[static_cast<std::size_t>(a)];
  return (40.0 * ms.total_cycles() + bytes) * space.batch_repeat;
}

/// The pass's own SRAM as the per-layer stage counts it (transient_sram_bytes at the double
/// buffer's worst-stream ratio of the block config's weight encoding).
double own_sram(const LayerSpace& space, const Template& tpl, const model::BlockConfig& bc, const model::Pass& pass) {
  const int wv = weight_variant_index(space, tpl, bc);
  const double scale = wv >= 0 ? space.weight_variants[static_cast<std::size_t>(wv)].worst_scale : 0.0;
  return static_cast<double>(transient_sram_bytes(pass, scale));
}

/// The row of `pass` (the template's pass at block config `candidate`) as the per-layer stage costs it,
/// with `like`'s job.
PmappingRow costed_row(const arch::Arch& arch, const LayerSpace& space, const Template& tpl, const PmappingRow& like,
                       std::uint32_t candidate, const model::Pass& pass) {
  const model::PassMetrics m = model::evaluate(arch, pass);
  const double repeat = space.batch_repeat;
  PmappingRow row = like;
  row.candidate = candidate;
  row.cycles = m.total_cycles() * repeat;
  row.offchip_bytes = model::off_chip_bytes(m) * repeat;
  row.energy_pj = m.energy_pj * repeat;
  row.sram_bytes = own_sram(space, tpl, space.block_configs[candidate], pass);
  return row;
}

VelaCandidate vela_candidate(const arch::Arch& arch, const LayerSpace& space, const Template& tpl, const PmappingRow& like,
                             std::uint32_t candidate, bool bias_in_place = true) {
  const model::Pass pass = make_pass(arch, space, tpl, space.block_configs[candidate]);
  return {costed_row(arch, space, tpl, like, candidate, pass), scheduling_metric(arch, space, tpl, pass, bias_in_place)};
}

/// Vela's pass metric per join step, template and block config (scheduling_metric, the bias read in place),
/// of the rows fresh_groups kept: the join's metrics (row_metrics), the tie-breaks and the cascade
/// choice read the same passes again. Per step a list sorted by (template, config) once filled (seal), and the
/// layer's block configs in Vela's order (vela_config_order), which they all walk.
class MetricTable {
 public:
  void reset(std::size_t steps) {
    slot_.resize(steps);
    for (std::size_t s = 0; s < steps; ++s) slot_[s] = s;
    steps_.assign(steps, {});
    orders_.assign(steps, {});
  }
  /// Step `s` is a copy of step `first`'s layer (their groups share one buffer): it reads and adds
  /// to `first`'s metrics and order.
  void share(std::size_t s, std::size_t first) { slot_[s] = slot_[first]; }
  void set_order(std::size_t s, std::vector<std::uint32_t> order) { orders_[slot_[s]] = std::move(order); }
  const std::vector<std::uint32_t>& order(std::size_t s) const { return orders_.at(slot_.at(s)); }
  void add(std::size_t s, std::uint32_t tpl, std::uint32_t config, double metric) {
    steps_[slot_[s]].emplace_back(key(tpl, config), metric);
  }
  void seal() {
    for (auto& v : steps_) std::sort(v.begin(), v.end());
  }
  /// The metric of step `s`'s pass of template `tpl` at `config`, costed here where fresh_groups did
  /// not.
  double get(const arch::Arch& arch, const LayerSpace& space, const Template& tpl, std::size_t s, std::uint32_t tpl_index,
             std::uint32_t config) const {
    if (s < slot_.size()) {
      const auto& v = steps_[slot_[s]];
      const std::uint64_t k = key(tpl_index, config);
      const auto it = std::lower_bound(v.begin(), v.end(), k, [](const auto& e, std::uint64_t x) { return e.first < x; });
      if (it != v.end() && it->first == k) return it->second;
    }
    return scheduling_metric(arch, space, tpl, make_pass(arch, space, tpl, space.block_configs[config]), true);
  }

 private:
  static std::uint64_t key(std::uint32_t tpl, std::uint32_t config) { return (std::uint64_t{tpl} << 32U) | config; }
  std::vector<std::size_t> slot_;  ///< per step, the step whose metrics and order it reads
  std::vector<std::vector<std::pair<std::uint64_t, double>>> steps_;
  std::vector<std::vector<std::uint32_t>> orders_;
};

/// The block configs Vela's scheduler tries for a layer, in its order: the shortlist of `limit`
/// (sorted by OFM block area then depth, largest first), or every config in enumeration order (0).
std::vector<std::uint32_t> vela_config_order(const LayerSpace& space, int limit) {
  std::vector<std::uint32_t> order;
  if (limit <= 0) {
    for (std::uint32_t i = 0; i < space.block_configs.size(); ++i) order.push_back(i);
    return order;
  }
  for (const model::BlockConfig& bc : model::scheduler_block_configs(space.block_configs, limit)) {
    const auto it = std::find(space.block_configs.begin(), space.block_configs.end(), bc);
    order.push_back(static_cast<std::uint32_t>(it - space.block_configs.begin()));
  }
  return order;
}

/// The bias placement Vela gives a template: a copy in SRAM for an IFM-streamed pass (weights copied
/// whole; its post-schedule pass copies those passes' bias and scale where they fit), else in place.
/// Any placement when the layer offers no template with Vela's.
bool vela_bias(const LayerSpace& space, const Template& tpl) {
  const BiasPlacement want = tpl.weights == WeightPlacement::Copy ? BiasPlacement::Copy : BiasPlacement::InPlace;
  if (tpl.bias == want) return true;
  return std::none_of(space.templates.begin(), space.templates.end(), [&](const Template& t) { return t.bias == want; });
}

/// Whether a template's feature maps are those of a (non-rolling) group's compatibility.
bool template_has_compat(const Template& tpl, const std::vector<TensorCompat>& compat) {
  if (compat.size() != tpl.inputs.size() + 1) return false;
  for (std::size_t i = 0; i < tpl.inputs.size(); ++i)
    if (compat[i].residence != tpl.inputs[i].residence || compat[i].layout != tpl.inputs[i].layout) return false;
  const TensorCompat& out = compat.back();
  return out.residence == tpl.output.residence && out.layout == tpl.output.layout && out.over_input == tpl.output_over_input;
}

/// The rows of a non-rolling group that Vela could choose, costed here rather than taken from the
/// per-layer stage (which keeps one of equal rows and drops those its objectives rank worse, so a
/// layer's Vela rows may be gone): per template of Vela's (vela_template, vela_bias) with the group's
/// feature maps, each config Vela tries, keeping those no other beats in both cycles and own SRAM.
std::vector<PmappingRow> vela_rows(const arch::Arch& arch, const LayerResult& lr,
                                   const std::vector<TensorCompat>& compat, int limit) {
  std::vector<PmappingRow> all;
  const std::vector<std::uint32_t> order = vela_config_order(lr.space, limit);
  for (std::size_t ti = 0; ti < lr.space.templates.size(); ++ti) {
    const Template& tpl = lr.space.templates[ti];
    if (!template_has_compat(tpl, compat)) continue;
    if (!vela_template(arch, lr.space, tpl) || !vela_bias(lr.space, tpl)) continue;
    PmappingRow like;
    like.template_index = static_cast<std::uint32_t>(ti);
    for (const std::uint32_t c : order) all.push_back(vela_candidate(arch, lr.space, tpl, like, c).row);
  }
  std::vector<PmappingRow> kept;
  for (std::size_t i = 0; i < all.size(); ++i) {
    bool beaten = false;
    for (std::size_t j = 0; j < all.size() && !beaten; ++j) {
      const bool no_worse = all[j].cycles <= all[i].cycles && all[j].sram_bytes <= all[i].sram_bytes;
      const bool better = all[j].cycles < all[i].cycles || all[j].sram_bytes < all[i].sram_bytes;
      beaten = no_worse && (better || j < i);
    }
    if (!beaten) kept.push_back(all[i]);
  }
  return kept;
}

/// Whether a group's feature-map layouts are Vela's: NHCWB16 wherever the layer may use it (Vela
/// stores a feature map passed between NPU passes in NHCWB16 unless it needs the linear format: a CPU
/// consumer, a network input or output, a reshape it cannot follow; our lowering offers NHCWB16 on
/// the same conditions), linear elsewhere.
bool vela_layouts_of(const LayerSpace& space, const std::vector<TensorCompat>& compat) {
  for (std::size_t i = 0; i < compat.size(); ++i) {
    const bool last = i + 1 == compat.size();
    const bool offered = std::any_of(space.templates.begin(), space.templates.end(), [&](const Template& t) {
      const FmChoice& c = last ? t.output : (i < t.inputs.size() ? t.inputs[i] : t.output);
      return (last || i < t.inputs.size()) && c.layout == Layout::Nhcwb16;
    });
    if (compat[i].layout != (offered ? Layout::Nhcwb16 : Layout::Linear)) return false;
  }
  return true;
}

/// One template and block config of a layer as fresh_groups filters it: Vela's pass metric and the
/// SRAM its filter compares; the row itself is costed only where the filter keeps it.
struct FreshCandidate {
  std::uint32_t tpl = 0;     ///< template index in the layer's space
  std::uint32_t config = 0;  ///< block config index
  double metric = 0.0;       ///< Vela's pass metric (scheduling_metric)
  double sram = 0.0;         ///< the SRAM compared (see fresh_groups)
  bool streamed = false;     ///< the weights double-buffered (Vela's WeightStream)
};

/// Of a group's candidates `idx` (indices into `cands`, in Vela's order), marks in `kept` (by position
/// in `idx`) those no other beats: no worse in both metric and SRAM and better in one, or equal in both
/// and earlier; with `by_strategy` only a candidate of the same weight placement beats. In the order of
/// (placement, metric, SRAM, position) a candidate is beaten exactly when one before it of its
/// placement has no more SRAM (every one before it has less metric, or equal metric and less SRAM, or
/// is equal and earlier), so one sweep decides. `order` is scratch.
void keep_unbeaten(const std::vector<std::uint32_t>& idx, const std::vector<FreshCandidate>& cands, bool by_strategy,
                   std::vector<std::uint32_t>& order, std::vector<char>& kept) {
  const auto n = static_cast<std::uint32_t>(idx.size());
  order.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  const auto cls = [&](std::uint32_t i) { return by_strategy && cands[idx[i]].streamed ? 1 : 0; };
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const FreshCandidate& a = cands[idx[x]];
    const FreshCandidate& b = cands[idx[y]];
    return std::make_tuple(cls(x), a.metric, a.sram, x) < std::make_tuple(cls(y), b.metric, b.sram, y);
  });
  kept.assign(n, 0);
  double least = std::numeric_limits<double>::infinity();
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t i = order[k];
    if (k > 0 && cls(order[k - 1]) != cls(i)) least = std::numeric_limits<double>::infinity();
    const double sram = cands[idx[i]].sram;
    kept[i] = least <= sram ? 0 : 1;
    least = std::min(least, sram);
  }
}

/// Vela's groups of a layer, costed here rather than taken from the per-layer stage (which keeps one of
/// equal rows and drops those its objectives rank worse, so a layer's Vela rows may be gone): per
/// template of Vela's (vela_template, vela_bias) with every feature map in the arena, each config Vela
/// tries, as the stage groups them: the row as it is and, where the template may roll a tensor, with
/// that tensor as a rolling buffer (the consumer's IFM block height, the producer's OFM block height).
/// A cascade streams its IFMs with the weights whole in SRAM (Vela's IfmStream), so a rolling variant
/// never double-buffers its weights. Each group keeps the rows no other beats in both Vela's pass metric
/// and own SRAM (the first of equal rows, in Vela's order).
std::vector<PmappingGroup> fresh_groups(const arch::Arch& arch, const LayerResult& lr, int limit,
                                        MetricTable* table, std::size_t step, bool concat_in) {
  const std::vector<std::uint32_t> own_order = table != nullptr ? std::vector<std::uint32_t>{} : vela_config_order(lr.space, limit);
  const std::vector<std::uint32_t>& order = table != nullptr ? table->order(step) : own_order;
  // Where the arena is SRAM, a row is beaten only by one of the same weight placement: Vela filters
  // each strategy's candidates on their own, and an IFM-streamed pass's SRAM (its weights whole, at
  // one estimate, less the OFM written over its IFM; vela_cascades) is not the row's own SRAM. The
  // SRAM compared is then Vela's scheduler's figure for the weights (scheduling_weight_sram: the
  // encoding it made before scheduling; a double buffer of 96 and one of 112 OFM channels of 128 are
  // the same whole tensor there, so of equal metrics it keeps its earlier config), else the row's.
  const bool by_strategy = !arch.spilling_enabled;
  std::vector<FreshCandidate> cands;
  std::map<std::vector<TensorCompat>, std::vector<std::uint32_t>> groups;  // each group's candidates in Vela's order
  std::vector<TensorCompat> base, key;
  const LayerSpace& space = lr.space;
  for (std::size_t ti = 0; ti < space.templates.size(); ++ti) {
    const Template& tpl = space.templates[ti];
    if (!vela_template(arch, space, tpl) || !vela_bias(space, tpl)) continue;
    // A tensor not in the arena must be a rolling buffer (on U65 the rolling site is SRAM, NHCWB16).
    const bool in_off = !tpl.inputs.empty() && tpl.inputs[0].residence != Residence::Arena;
    const bool out_off = tpl.output.residence != Residence::Arena;
    bool others = true;
    for (std::size_t i = 1; i < tpl.inputs.size(); ++i) others = others && tpl.inputs[i].residence == Residence::Arena;
    if (!others || (in_off && !tpl.input_may_roll[0]) || (out_off && !tpl.output_may_roll)) continue;
    base.clear();
    for (int i = 0; i < space.num_inputs; ++i) base.push_back({tpl.inputs[static_cast<std::size_t>(i)].residence, tpl.inputs[static_cast<std::size_t>(i)].layout, 0});
    base.push_back({tpl.output.residence, tpl.output.layout, 0, static_cast<std::int8_t>(tpl.output_over_input)});
    // A concatenation's reader Vela may cascade with one of its writers, the tensor whole in the arena
    // (add_vela_cascades): its rows kept apart per IFM block height, which sizes the rolling buffer
    // Vela's scheduler counts, as for a rolling IFM.
    const bool whole_in = concat_in && !in_off && base[0].layout == Layout::Nhcwb16;
    SchedulingPrep prep;
    // Per rolling variant (2 x IFM rolls + output rolls) the group of the last key looked up: a key is
    // the template's with the rolling rows, which few configs change.
    struct LastGroup {
      std::vector<std::uint32_t>* group = nullptr;
      std::uint16_t in_rows = 0, out_rows = 0;
    };
    std::array<LastGroup, 4> lasts{};
    for (const std::uint32_t c : order) {
      const model::BlockConfig& bc = space.block_configs[c];
      const model::Pass pass = make_pass(arch, space, tpl, bc);
      const double weights = by_strategy ? scheduling_weight_sram(space, tpl, bc) : -1.0;
      const bool streamed = tpl.weights == WeightPlacement::DoubleBuffer;
      const auto at = static_cast<std::uint32_t>(cands.size());
      cands.push_back({static_cast<std::uint32_t>(ti), c, scheduling_metric(arch, space, tpl, pass, true, &prep),
                       weights >= 0.0 ? weights : own_sram(space, tpl, bc, pass), streamed});
      const int in_rows = tpl.input_may_roll[0] || whole_in ? rolling_consumer_rows(arch, space, bc) : 0;
      for (int in_roll = in_off ? 1 : 0; in_roll <= (tpl.input_may_roll[0] ? 1 : 0); ++in_roll)
        for (int out_roll = out_off ? 1 : 0; out_roll <= (tpl.output_may_roll ? 1 : 0); ++out_roll) {
          if ((in_roll != 0 || out_roll != 0) && streamed) continue;
          const auto rin = static_cast<std::uint16_t>(in_roll != 0 || whole_in ? in_rows : 0);
          const auto rout = static_cast<std::uint16_t>(out_roll != 0 ? bc.ofm_h : 0);
          LastGroup& last = lasts[static_cast<std::size_t>(2 * in_roll + out_roll)];
          if (last.group == nullptr || last.in_rows != rin || last.out_rows != rout) {
            key.assign(base.begin(), base.end());
            if (in_roll != 0) key[0] = {Residence::Rolling, Layout::Nhcwb16, rin};
            else if (whole_in) key[0].rows = rin;
            if (out_roll != 0) key.back() = {Residence::Rolling, Layout::Nhcwb16, rout};
            auto it = groups.find(key);
            if (it == groups.end()) it = groups.emplace(key, std::vector<std::uint32_t>{}).first;
            last = {&it->second, rin, rout};
          }
          last.group->push_back(at);
        }
    }
  }
  // Each group keeps the rows no other beats (keep_unbeaten); a candidate's row is costed once, for
  // the first group that keeps it, and its metric kept in `table` (only the kept ones: the table lives
  // through the schedule, and the rows of the problem are what its readers mostly ask for).
  std::vector<PmappingGroup> out;
  std::vector<std::optional<PmappingRow>> rows(cands.size());
  std::vector<std::uint32_t> scratch;
  std::vector<char> kept;
  for (const auto& [compat, idx] : groups) {
    keep_unbeaten(idx, cands, by_strategy, scratch, kept);
    PmappingGroup& g = out.emplace_back(PmappingGroup{compat, {}});
    for (std::size_t i = 0; i < idx.size(); ++i) {
      if (kept[i] == 0) continue;
      const FreshCandidate& fc = cands[idx[i]];
      std::optional<PmappingRow>& row = rows[idx[i]];
      if (!row) {
        const Template& tpl = space.templates[fc.tpl];
        PmappingRow like;
        like.template_index = fc.tpl;
        row = costed_row(arch, space, tpl, like, fc.config, make_pass(arch, space, tpl, space.block_configs[fc.config]));
        if (table != nullptr) table->add(step, fc.tpl, fc.config, fc.metric);
      }
      g.rows.push_back(*row);
    }
  }
  return out;
}

/// The groups of one step Vela could choose: with `templates`, Vela's groups costed afresh
/// (fresh_groups; `fresh` tells whether the step has them), with `layouts` only those in Vela's
/// layouts. Otherwise (or when the layer has none of Vela's) the stage's groups: all feature maps in
/// the arena (any, where the arch spills), rows whose block config is on the shortlist, with
/// `templates` Vela's rows (vela_rows) and with `layouts` Vela's layouts, falling back to Vela's rows
/// in any layout, the shortlisted rows, the arena groups, then all groups, when a filter leaves none.
std::vector<PmappingGroup> vela_groups(const arch::Arch& arch, const std::vector<PmappingGroup>& groups,
                                       const LayerResult& lr, int limit, bool templates, bool layouts, bool spills,
                                       bool& fresh, MetricTable* table, std::size_t step, bool concat_in) {
  fresh = false;
  if (templates && !lr.space.cpu) {
    std::vector<PmappingGroup> kept, laid;
    for (PmappingGroup& g : fresh_groups(arch, lr, limit, table, step, concat_in)) {
      if (!arena_or_rolling(g, spills) || g.rows.empty()) continue;
      if (layouts && vela_layouts_of(lr.space, g.compat)) laid.push_back(g);
      kept.push_back(std::move(g));
    }
    fresh = !laid.empty() || !kept.empty();
    if (!laid.empty()) return laid;
    if (!kept.empty()) return kept;
  }
  const std::vector<bool> listed = lr.space.cpu ? std::vector<bool>{} : in_shortlist(lr.space, limit);
  std::vector<PmappingGroup> arena, shortlisted, velas, laid_out;
  for (const PmappingGroup& g : groups) {
    if (!all_in_arena(g, spills)) continue;
    arena.push_back(g);
    PmappingGroup s{g.compat, {}}, v{g.compat, {}};
    const bool rolling = std::any_of(g.compat.begin(), g.compat.end(),
                                     [](const TensorCompat& c) { return c.residence == Residence::Rolling; });
    if (templates && !lr.space.cpu && !rolling) v.rows = vela_rows(arch, lr, g.compat, limit);
    for (const PmappingRow& row : g.rows) {
      if (!listed.empty() && (row.candidate >= listed.size() || !listed[row.candidate])) continue;
      s.rows.push_back(row);
      if (!rolling && templates && !lr.space.cpu) continue;  // costed by vela_rows
      if (!templates || lr.space.cpu || vela_template(arch, lr.space, lr.space.templates[row.template_index]))
        v.rows.push_back(row);
    }
    if (!s.rows.empty()) shortlisted.push_back(std::move(s));
    if (!v.rows.empty() && layouts && vela_layouts_of(lr.space, g.compat)) laid_out.push_back(v);
    if (!v.rows.empty()) velas.push_back(std::move(v));
  }
  if (!laid_out.empty()) return laid_out;
  if (!velas.empty()) return velas;
  if (!shortlisted.empty()) return shortlisted;
  if (!arena.empty()) return arena;
  return groups;
}

/// Vela's block config per pass, for the templates and feature-map placements `b.point` chose: each
/// layer outside a cascade whose rows are the stage's (not `fresh`: those are Vela's rows already) takes, among the configs Vela tries, the one with the least pass metric
/// (plus 1,000 per byte by which its weight buffer would raise the peak SRAM, unless the arch
/// spills), the first in Vela's order on a tie, as Vela's Pareto filter keeps the first of equal
/// candidates. The per-layer stage keeps only one of a layer's equal rows (the first in enumeration
/// order) and drops rows our objectives rank worse, so the join alone cannot make these choices.
void choose_vela_block_configs(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                               int limit, const std::vector<bool>& fresh, VelaBaseline& b) {
  const PointMemory memory = point_memory(b.problem, b.point);
  const double sram_weight = vela_weights(arch).sram_byte;
  const double peak = b.point.peak_sram_bytes;
  for (std::size_t s = 0; s < b.problem.steps.size(); ++s) {
    const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
    if (lr.space.cpu || (s < fresh.size() && fresh[s])) continue;
    const PmappingGroup& g = b.problem.steps[s].groups.at(b.point.group[s]);
    if (std::any_of(g.compat.begin(), g.compat.end(), [](const TensorCompat& c) { return c.residence == Residence::Rolling; }))
      continue;  // a cascade's rolling buffers follow its members' block configs
    const PmappingRow chosen = g.rows.at(b.point.row[s]);
    const Template& tpl = lr.space.templates[chosen.template_index];
    const double others = memory.sram_bytes[s] - chosen.sram_bytes;  // SRAM in use besides the pass's own
    std::optional<VelaCandidate> best;
    double best_score = 0.0;
    for (const std::uint32_t c : vela_config_order(lr.space, limit)) {
      const VelaCandidate cand = vela_candidate(arch, lr.space, tpl, chosen, c);
      const double in_use = others + cand.row.sram_bytes;
      if (in_use > static_cast<double>(b.problem.sram_capacity)) continue;
      const double score = cand.metric + sram_weight * std::max(0.0, in_use - peak);
      if (!best || score < best_score) best = cand, best_score = score;
    }
    if (!best || best->row.candidate == chosen.candidate) continue;
    b.point.cycles += best->row.cycles - chosen.cycles;
    b.point.offchip_bytes += best->row.offchip_bytes - chosen.offchip_bytes;
    b.point.energy_pj += best->row.energy_pj - chosen.energy_pj;
    const auto same = std::find_if(g.rows.begin(), g.rows.end(),
                                   [&](const PmappingRow& r) { return r.template_index == chosen.template_index && r.candidate == best->row.candidate; });
    b.point.row[s] = static_cast<std::uint32_t>(same - g.rows.begin());
    if (same == g.rows.end()) b.problem.steps[s].groups.edit().at(b.point.group[s]).rows.push_back(best->row);
  }
  const PointMemory after = point_memory(b.problem, b.point);
  b.point.peak_sram_bytes = after.sram_bytes.empty() ? 0.0 : *std::max_element(after.sram_bytes.begin(), after.sram_bytes.end());
}

}  // namespace

model::Pass vela_scheduling_pass(const arch::Arch& arch, const LayerSpace& space, const Template& tpl,
                                 const model::BlockConfig& block_config) {
  return scheduling_pass(arch, space, tpl, make_pass(arch, space, tpl, block_config), true);
}

bool vela_template(const arch::Arch& arch, const LayerSpace& space, const Template& tpl) {
  if (!space.base.weights.has_value()) return true;
  const arch::NpuBlockType type = model::npu_block_type(space.base.op.type);
  if (type == arch::NpuBlockType::ConvolutionMxN) {
    // Vela's weight encoder picks the traversal (choose_block_traversal) before the scheduler runs.
    const std::array<int, 4> hwio = space.base.weights->shape.as_4d();
    if (tpl.traversal != model::choose_block_traversal(type, hwio[2], hwio[0] * hwio[1], model::bits(space.base.ifm.dtype)))
      return false;
  }
  if (arch.permanent_storage == arch.fast_storage) return tpl.weights == WeightPlacement::InPlace;
  if (type == arch::NpuBlockType::VectorProduct) return tpl.weights == WeightPlacement::InPlace;
  if (tpl.weights == WeightPlacement::DoubleBuffer) return true;
  const bool ifm_stream = type == arch::NpuBlockType::ConvolutionMxN ||
                          type == arch::NpuBlockType::ConvolutionDepthWise || type == arch::NpuBlockType::Pooling;
  return ifm_stream && tpl.weights == WeightPlacement::Copy;
}

VelaWeights vela_weights(const arch::Arch& arch) {
  VelaWeights w;
  // Vela's bandwidth weights per memory: DRAM 10, on-chip flash 2, off-chip flash 20; our off-chip
  // bytes are those of the permanent storage and, when the arena is off-chip, the feature maps.
  switch (arch.permanent_storage) {
    case arch::MemArea::Dram: w.offchip_byte = 10.0; break;
    case arch::MemArea::OnChipFlash: w.offchip_byte = 2.0; break;
    case arch::MemArea::OffChipFlash: w.offchip_byte = 20.0; break;
    default: w.offchip_byte = 1.0; break;
  }
  w.sram_byte = arch.spilling_enabled ? 0.0 : 1000.0;  // Vela ignores SRAM use when it may spill
  return w;
}

namespace {
/// Whether the layer reads, as its only feature-map input read through its IFM, a concatenation that
/// Vela's scheduler may cascade with one of its writers where the arena is SRAM (add_vela_cascades):
/// a convolution, depthwise or pooling layer, the tensor's only reader, reading it once, written by
/// two NPU layers or more (a slice each), one of them a convolution, depthwise or pooling layer.
bool reads_concatenation(const workloads::Workload& w, int layer) {
  const workloads::Layer& l = w.layers.at(static_cast<std::size_t>(layer));
  const auto streams = [](workloads::OpKind k) {
    return k == workloads::OpKind::Conv2D || k == workloads::OpKind::DepthwiseConv2D || k == workloads::OpKind::MaxPool ||
           k == workloads::OpKind::AvgPool || k == workloads::OpKind::Activation;
  };
  if (!streams(l.kind) || l.inputs.empty()) return false;
  const int t = l.inputs[0];
  const workloads::TensorInfo& ti = w.tensors.at(static_cast<std::size_t>(t));
  if (ti.writers.size() < 2 || ti.consumers.size() != 1 || ti.consumers[0] != layer || std::count(l.inputs.begin(), l.inputs.end(), t) != 1)
    return false;
  bool any = false;
  for (const int writer : ti.writers) {
    const workloads::OpKind k = w.layers.at(static_cast<std::size_t>(writer)).kind;
    if (k == workloads::OpKind::Cpu) return false;
    any = any || streams(k);
  }
  return any;
}

/// vela_problem, recording in `table` (if given) the metrics fresh_groups costs.
JoinProblem build_vela_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                               int block_config_limit, bool vela_templates, bool vela_layouts, std::vector<bool>* fresh_steps,
                               MetricTable* table) {
  JoinProblem problem = make_join_problem(arch, workload, stage, true, true);
  if (table != nullptr) table->reset(problem.steps.size());
  if (fresh_steps != nullptr) fresh_steps->assign(problem.steps.size(), false);
  // vela_groups reads the arch, the options, the step's groups and its layer's space (never its
  // layer index). Layers whose groups share one buffer are copies of one computed layer
  // (stage_of_workload), equal in all of these: they share Vela's groups too, made once, by the first
  // such step (its metrics in `table` are the ones the sharing steps read).
  const std::size_t n = problem.steps.size();
  std::map<std::pair<const void*, bool>, std::size_t> maker_of;
  std::vector<std::size_t> made_by(n), makers;
  std::vector<char> concat_in(n, 0);
  for (std::size_t s = 0; s < n; ++s) {
    const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
    const void* shared = lr.groups.buffer();
    concat_in[s] = !arch.spilling_enabled && reads_concatenation(workload, workload.topological_order.at(s)) ? 1 : 0;
    const auto [it, added] = maker_of.try_emplace({shared, concat_in[s] != 0}, s);
    made_by[s] = shared != nullptr ? it->second : s;
    if (made_by[s] != s) continue;
    makers.push_back(s);
    if (table != nullptr && !lr.space.cpu) table->set_order(s, vela_config_order(lr.space, block_config_limit));
  }
  // Each distinct list in parallel: a maker reads its own layer and writes its own slot of `table`.
  std::vector<SharedVector<PmappingGroup>> groups(n);
  std::vector<char> fresh(n, 0);
  tbb::parallel_for(std::size_t{0}, makers.size(), [&](std::size_t i) {
    const std::size_t s = makers[i];
    const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
    bool made_fresh = false;
    groups[s] = vela_groups(arch, problem.steps[s].groups, lr, block_config_limit, vela_templates, vela_layouts,
                            arch.spilling_enabled, made_fresh, table, s, concat_in[s] != 0);
    fresh[s] = made_fresh ? 1 : 0;
  });
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t m = made_by[s];
    problem.steps[s].groups = groups[m];
    if (fresh_steps != nullptr) (*fresh_steps)[s] = fresh[m] != 0;
    if (table != nullptr && m != s) table->share(s, m);
  }
  if (table != nullptr) table->seal();
  return problem;
}
}  // namespace

JoinProblem vela_problem(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                         int block_config_limit, bool vela_templates, bool vela_layouts, std::vector<bool>* fresh_steps) {
  return build_vela_problem(arch, workload, stage, block_config_limit, vela_templates, vela_layouts, fresh_steps, nullptr);
}

namespace {
std::optional<VelaBaseline> vela_schedule_with_limit(const arch::Arch& arch, const workloads::Workload& workload,
                                                     const StageResult& stage, const common::StopToken& stop,
                                                     int block_config_limit);
}  // namespace

std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload,
                                          const StageResult& stage, const common::StopToken& stop,
                                          int block_config_limit) {
  for (const LayerResult& lr : stage.layers) {
    std::size_t rows = 0;
    for (const PmappingGroup& g : lr.groups) rows += g.rows.size();
    if (rows == 0) return std::nullopt;
  }
  std::optional<VelaBaseline> b = vela_schedule_with_limit(arch, workload, stage, stop, block_config_limit);
  // The per-layer stage keeps each group's Pareto-optimal rows only, so a shortlisted block config
  // dominated by one off the shortlist is gone: the shortlist's rows left may not join (the groups'
  // feature-map layouts or SRAM disagree across steps: mobilenet_v2 on an ethos-u65-256). Then the
  // schedule takes its block configs from every config, as with --block-config-limit 0.
  if (!b && block_config_limit > 0 && !stop.stop_requested()) b = vela_schedule_with_limit(arch, workload, stage, stop, 0);
  return b;
}

namespace {

/// Vela's pass metric of every row of `problem`, per step, group and row: 40 per cycle plus each
/// memory's bytes times its bandwidth weight, of the pass as Vela's scheduler costs it (scheduling_metric,
/// from `table` where fresh_groups costed it); 0 for a CPU operator. Rows of one (job, block config)
/// share the pass, so each is costed once. Each adds a millionth per place of its block config in
/// Vela's order of the shortlist (`table`'s order): Vela's
/// Pareto filter keeps the first of equal candidates, which it generates in that order, so of
/// schedules with equal metric the join then keeps the one with Vela's earlier configs (a tie-break
/// far below the differences between real candidates).
std::vector<std::vector<std::vector<double>>> row_metrics(const arch::Arch& arch, const workloads::Workload& workload,
                                                          const StageResult& stage, const JoinProblem& problem,
                                                          const MetricTable& table) {
  std::vector<std::vector<std::vector<double>>> out(problem.steps.size());
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
    std::map<std::pair<std::uint32_t, std::uint32_t>, double> cache;
    const std::vector<std::uint32_t>& order = table.order(s);
    for (const PmappingGroup& g : problem.steps[s].groups) {
      std::vector<double>& m = out[s].emplace_back();
      for (const PmappingRow& row : g.rows) {
        if (lr.space.cpu) {
          m.push_back(0.0);
          continue;
        }
        const auto key = std::make_pair(row.template_index, row.candidate);
        auto it = cache.find(key);
        if (it == cache.end()) {
          const Template& tpl = lr.space.templates[row.template_index];
          const auto at = std::find(order.begin(), order.end(), row.candidate);
          const double tie = 1e-6 * static_cast<double>(at - order.begin());
          it = cache.emplace(key, table.get(arch, lr.space, tpl, s, row.template_index, row.candidate) + tie).first;
        }
        m.push_back(it->second);
      }
    }
  }
  return out;
}

/// Whether two templates make the same choices but for the rolling flags (which follow the placements).
/// `point`'s own costs from `problem`'s rows: the sums in step order, as the join adds them, and its
/// peak SRAM from point_memory.
void cost_point(const JoinProblem& problem, FrontPoint& point) {
  point.cycles = point.offchip_bytes = point.energy_pj = point.peak_sram_bytes = 0.0;
  for (std::size_t s = 0; s < problem.steps.size(); ++s) {
    const PmappingRow& row = problem.steps[s].groups[point.group[s]].rows[point.row[s]];
    point.cycles = point.cycles + row.cycles;
    point.offchip_bytes = point.offchip_bytes + row.offchip_bytes;
    point.energy_pj = point.energy_pj + row.energy_pj;
  }
  const PointMemory mem = point_memory(problem, point);
  for (const double bytes : mem.sram_bytes) point.peak_sram_bytes = std::max(point.peak_sram_bytes, bytes);
}

bool same_choices(const Template& a, const Template& b) {
  return a.traversal == b.traversal && a.weights == b.weights && a.bias == b.bias && a.inputs == b.inputs &&
         a.output == b.output && a.output_over_input == b.output_over_input;
}

/// Moves the point's step `s` to the row of its template and block config with feature map `slot` (an
/// input index, or the output when `slot` equals the number of inputs) placed as `to`; false when the
/// layer has no such template. Adds the group or row to the problem when it lacks them.
bool replace_placement(const arch::Arch& arch, const LayerResult& lr, JoinProblem& problem,
                       FrontPoint& point, std::size_t s, std::size_t slot, const FmChoice& to) {
  const PmappingGroup& g = problem.steps[s].groups.at(point.group[s]);
  const PmappingRow chosen = g.rows.at(point.row[s]);
  Template want = lr.space.templates.at(chosen.template_index);
  if (slot < want.inputs.size()) want.inputs[slot] = to; else want.output = to;
  // An output written over an input shares its placement: moving either ends the sharing.
  const bool unshare = want.output_over_input >= 0 &&
                       (slot == want.inputs.size() || static_cast<int>(slot) == want.output_over_input);
  if (unshare) want.output_over_input = -1;
  std::size_t ti = 0;
  while (ti < lr.space.templates.size() && !same_choices(lr.space.templates[ti], want)) ++ti;
  if (ti == lr.space.templates.size()) return false;
  std::vector<TensorCompat> compat = g.compat;
  compat.at(slot).residence = to.residence;
  compat.at(slot).layout = to.layout;
  if (unshare) compat.back().over_input = -1;
  std::vector<PmappingGroup>& groups = problem.steps[s].groups.edit();
  auto git = std::find_if(groups.begin(), groups.end(), [&](const PmappingGroup& x) { return x.compat == compat; });
  if (git == groups.end()) git = groups.insert(groups.end(), PmappingGroup{compat, {}});
  PmappingRow like = chosen;
  like.template_index = static_cast<std::uint32_t>(ti);
  auto rit = std::find_if(git->rows.begin(), git->rows.end(),
                          [&](const PmappingRow& r) { return r.template_index == like.template_index && r.candidate == chosen.candidate; });
  if (rit == git->rows.end())
    rit = git->rows.insert(git->rows.end(), vela_candidate(arch, lr.space, lr.space.templates[ti], like, chosen.candidate).row);
  point.group[s] = static_cast<std::uint32_t>(git - groups.begin());
  point.row[s] = static_cast<std::uint32_t>(rit - git->rows.begin());
  return true;
}

/// Vela's use of the SRAM left after scheduling when the arena is off-chip (its
/// use_fast_storage_for_feature_maps): each feature map passed between two cascaded passes on the NPU
/// (written by NPU passes only, one or several: a concatenation's passes each write a slice of one
/// output, which Vela lists as an output of each; read only by NPU passes of the writer's NPU
/// subgraph, not a network output)
/// moves whole to SRAM, in order of
/// the cascaded passes it spans (fewest first) then its size (largest first), wherever the SRAM in use
/// at every step stays within the capacity. Block configs stay as scheduled.
void fill_sram(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage, VelaBaseline& b) {
  JoinProblem& problem = b.problem;
  const std::size_t n = problem.steps.size();
  const auto layer_of = [&](std::size_t s) -> const LayerResult& {
    return stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
  };
  // Vela's NPU subgraph of each step's layer (-1 for a CPU layer; every step in one where the workload
  // does not say).
  const auto subgraph_of = [&](std::size_t s) {
    const auto layer = static_cast<std::size_t>(workload.topological_order.at(s));
    return workload.npu_subgraph.size() == workload.layers.size() ? workload.npu_subgraph[layer] : 0;
  };
  // The cascaded pass of each step: a step whose input arrives in a rolling buffer joins its producer's.
  std::vector<int> cps(n, 0);
  int next = -1;
  for (std::size_t s = 0; s < n; ++s) {
    const PmappingGroup& g = problem.steps[s].groups[b.point.group[s]];
    int joined = -1;
    for (std::size_t i = 0; i < problem.steps[s].inputs.size(); ++i) {
      const int producer = problem.tensors[static_cast<std::size_t>(problem.steps[s].inputs[i])].producer_step;
      if (g.compat[i].residence == Residence::Rolling && producer >= 0) joined = cps[static_cast<std::size_t>(producer)];
    }
    cps[s] = joined >= 0 ? joined : ++next;
  }
  struct Candidate {
    int span = 0;
    std::int64_t bytes = 0;
    std::string name;
    int tensor = -1;
  };
  std::vector<Candidate> candidates;
  for (std::size_t t = 0; t < problem.tensors.size(); ++t) {
    const JoinTensor& jt = problem.tensors[t];
    if (jt.constant || jt.network_output || jt.producer_step < 0 || jt.last_consumer_step < 0) continue;
    const auto p = static_cast<std::size_t>(jt.producer_step);
    if (layer_of(p).space.cpu) continue;
    const TensorCompat& pc = problem.steps[p].groups[b.point.group[p]].compat.back();
    if (pc.residence != Residence::Arena) continue;
    bool ok = true;
    for (std::size_t s = p; s < n && ok; ++s) {
      const PmappingGroup& g = problem.steps[s].groups[b.point.group[s]];
      // Every writer (several for a concatenation, each writing its slice) on the NPU, in the arena
      // in the first writer's layout; every reader on the NPU, in the first writer's NPU subgraph (a
      // tensor read in another is an output of its subgraph, never offered to Vela's fill), reading it
      // from the arena.
      if (problem.steps[s].output == static_cast<int>(t))
        ok = !layer_of(s).space.cpu && g.compat.back().residence == Residence::Arena && g.compat.back().layout == pc.layout;
      for (std::size_t i = 0; i < problem.steps[s].inputs.size(); ++i) {
        if (problem.steps[s].inputs[i] != static_cast<int>(t)) continue;
        ok = ok && !layer_of(s).space.cpu && subgraph_of(s) == subgraph_of(p) && g.compat[i].residence == Residence::Arena;
      }
    }
    if (!ok) continue;
    const std::int64_t bytes = pc.layout == Layout::Nhcwb16 ? jt.nhcwb16_bytes : jt.linear_bytes;
    candidates.push_back({cps[static_cast<std::size_t>(jt.last_consumer_step)] - cps[p] + 1, bytes,
                          workload.tensors.at(t).name, static_cast<int>(t)});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    return std::tie(x.span, y.bytes, x.name) < std::tie(y.span, x.bytes, y.name);
  });
  for (const Candidate& c : candidates) {
    const auto t = static_cast<std::size_t>(c.tensor);
    const FrontPoint before = b.point;
    const auto p = static_cast<std::size_t>(problem.tensors[t].producer_step);
    const TensorCompat pc = problem.steps[p].groups[b.point.group[p]].compat.back();
    const FmChoice to{Residence::Sram, pc.layout};
    bool ok = true;
    for (std::size_t s = p; s < n && ok; ++s) {
      const std::size_t n_in = problem.steps[s].inputs.size();
      if (problem.steps[s].output == c.tensor) ok = replace_placement(arch, layer_of(s), problem, b.point, s, n_in, to);
      for (std::size_t i = 0; i < n_in && ok; ++i)
        if (problem.steps[s].inputs[i] == c.tensor) ok = replace_placement(arch, layer_of(s), problem, b.point, s, i, to);
    }
    if (ok) {
      const PointMemory mem = point_memory(problem, b.point);
      ok = std::all_of(mem.sram_bytes.begin(), mem.sram_bytes.end(),
                       [&](double v) { return v <= static_cast<double>(problem.sram_capacity); });
    }
    if (!ok) b.point = before;
  }
}

/// The rows of a pass for Vela's OFM-over-IFM overlap (VelaPassRows): a convolution, depthwise or
/// pooling pass without upscaling, its IFM and OFM rows in NHWC bytes, its padding at the top.
VelaPassRows vela_pass_rows(const LayerSpace& space) {
  VelaPassRows r;
  const model::Pass& p = space.base;
  const arch::NpuBlockType type = model::npu_block_type(p.op.type);
  const bool streams = type == arch::NpuBlockType::ConvolutionMxN || type == arch::NpuBlockType::ConvolutionDepthWise ||
                       type == arch::NpuBlockType::Pooling;
  if (space.cpu || !streams || p.op.resampling != model::Resampling::None) return r;
  const std::array<int, 4> in = p.ifm_op_shape(), out = p.ofm_op_shape();
  r.rows = true;
  r.ifm_h = in[1], r.ofm_h = out[1];
  r.stride = p.op.kernel.stride_y;
  r.kernel_h = p.op.kernel.dilated_h();
  if (p.op.explicit_padding) r.pad_top = p.op.explicit_padding->top;
  else if (p.op.padding == model::PaddingMode::Same)
    r.pad_top = std::max((r.ofm_h - 1) * r.stride + r.kernel_h - r.ifm_h, 0) / 2;
  r.ifm_row_bytes = static_cast<double>(in[2]) * in[3] * model::bits(p.ifm.dtype) / 8;
  r.ofm_row_bytes = static_cast<double>(out[2]) * out[3] * model::bits(p.ofm.dtype) / 8;
  return r;
}

/// Vela's rows and cascades (add_vela_cascades; where the arch spills with Vela's figures for it: no
/// feature map counts, no OFM-over-IFM overlap): each row's metric as Vela's
/// scheduler sees the pass (vela_candidate: the int32 bias read in place, the weights as encoded
/// before scheduling) and its weights' SRAM likewise (scheduling_weight_sram); of equal metrics the
/// weight-streamed row first (docs/design/vela-schedule.md). Kept only where our accounting of the
/// point's SRAM stays within the capacity.
std::vector<VelaSramStep> vela_sram_steps(const workloads::Workload& workload, const StageResult& stage,
                                          const VelaBaseline& b);

void cascade_vela(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                 const MetricTable& table, VelaBaseline& b) {
  const std::size_t n = b.problem.steps.size();
  std::vector<bool> npu(n);
  std::vector<VelaPassRows> shapes(n);
  std::vector<const std::vector<std::uint32_t>*> orders(n);
  for (std::size_t s = 0; s < n; ++s) {
    const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
    npu[s] = !lr.space.cpu;
    shapes[s] = vela_pass_rows(lr.space);
    if (npu[s]) orders[s] = &table.order(s);
  }
  std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, VelaRowCost> cache;
  const VelaRowCostFn cost = [&](std::size_t s, const PmappingRow& row) {
    const auto key = std::make_tuple(s, row.template_index, row.candidate);
    auto it = cache.find(key);
    if (it == cache.end()) {
      const LayerResult& lr = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s)));
      const Template& tpl = lr.space.templates[row.template_index];
      const std::vector<std::uint32_t>& order = *orders[s];
      const auto at = std::find(order.begin(), order.end(), row.candidate);
      VelaRowCost c;
      c.ifm_stream = shapes[s].rows && tpl.weights != WeightPlacement::DoubleBuffer;
      // Of equal metrics Vela keeps its first candidate: the weight-streamed ones come before the
      // IFM-streamed ones, each in its order of configs.
      const std::size_t place = static_cast<std::size_t>(at - order.begin()) + (c.ifm_stream ? order.size() : 0);
      c.metric = table.get(arch, lr.space, tpl, s, row.template_index, row.candidate);
      c.order = static_cast<double>(place);
      c.block_h = lr.space.block_configs[row.candidate].ofm_h;
      c.ifm_block_h = shapes[s].rows ? rolling_consumer_rows(arch, lr.space, lr.space.block_configs[row.candidate]) : 0;
      c.bias_bytes = static_cast<double>(bias_copy_sram_bytes(make_pass(arch, lr.space, tpl, lr.space.block_configs[row.candidate])));
      c.weight_bytes = scheduling_weight_sram(lr.space, tpl, lr.space.block_configs[row.candidate]);
      it = cache.emplace(key, c).first;
    }
    return it->second;
  };
  const FrontPoint before = b.point;
  b.whole_cascades.clear();
  add_vela_cascades(b.problem, npu, vela_scheduling_merges(b.problem, vela_sram_steps(workload, stage, b)), shapes, cost,
                    vela_weights(arch).sram_byte, arch.spilling_enabled, b.point, &b.whole_cascades);
  cost_point(b.problem, b.point);
  if (b.point.peak_sram_bytes > static_cast<double>(b.problem.sram_capacity)) b.point = before, b.whole_cascades.clear();
}

/// Per join step of `b`, what Vela's live ranges need (vela_sram.hpp): NPU or CPU; the inputs of an
/// elementwise pass (not SHL/SHR) of the OFM's shape and element type, which its OFM may take over;
/// and the bias copy (10 bytes per channel) Vela adds to an IFM-streamed pass (its weights whole in
/// SRAM, or a member of a cascade) whose row here reads the bias in place.
std::vector<VelaSramStep> vela_sram_steps(const workloads::Workload& workload, const StageResult& stage,
                                          const VelaBaseline& b) {
  std::vector<VelaSramStep> out(workload.topological_order.size());
  for (const auto& [writer, reader] : b.whole_cascades) out.at(reader).cascade_writer = static_cast<int>(writer);
  for (std::size_t s = 0; s < out.size(); ++s) {
    const LayerSpace& space = stage.layers.at(static_cast<std::size_t>(workload.topological_order.at(s))).space;
    out[s].npu = !space.cpu;
    const model::Pass& p = space.base;
    if (space.cpu) continue;
    const PmappingGroup& g = b.problem.steps[s].groups.at(b.point.group[s]);
    const Template& tpl = space.templates.at(g.rows.at(b.point.row[s]).template_index);
    const bool cascaded = std::any_of(g.compat.begin(), g.compat.end(), [](const TensorCompat& c) { return c.residence == Residence::Rolling; }) ||
                          in_whole_cascade(b, s);
    if (p.bias && tpl.bias != BiasPlacement::Copy && (tpl.weights == WeightPlacement::Copy || cascaded))
      out[s].bias_copy_bytes = p.bias->storage_shape.elements() * 10;
    if (model::npu_block_type(p.op.type) != arch::NpuBlockType::ElementWise) continue;
    out[s].operands_swapped = workload.layers.at(static_cast<std::size_t>(workload.topological_order.at(s))).operands_swapped;
    if (p.op.type == model::OpType::Shl || p.op.type == model::OpType::Shr) continue;
    out[s].merge_input[0] = p.ifm.shape == p.ofm.shape && p.ifm.dtype == p.ofm.dtype;
    out[s].merge_input[1] = p.ifm2 && p.ifm2->shape == p.ofm.shape && p.ifm2->dtype == p.ofm.dtype;
  }
  return out;
}

/// Vela's schedule with the shortlist of `block_config_limit` (0: every config); none if nothing joins.
std::optional<VelaBaseline> vela_schedule_with_limit(const arch::Arch& arch, const workloads::Workload& workload,
                                                     const StageResult& stage, const common::StopToken& stop,
                                                     int block_config_limit) {
  // Vela's dynamic program keeps, pass by pass, the candidates with the least candidate metric: 40 per
  // cycle, each byte moved weighted by its memory's bandwidth weight, and 1,000 per byte of peak SRAM
  // (0 when the arch spills). The cycles and the bytes add up over the passes, so the join minimises
  // their weighted sum exactly when each row's cycles are replaced by its pass metric (row_metrics):
  // where the arch spills that single column is the whole metric; otherwise the peak SRAM is a
  // maximum, so the join finds the front of (peak SRAM, metric) and the point with the least
  // weighted sum is taken from it (docs/design/vela-schedule.md).
  JoinRunContext context;
  context.threads = 0;  // the caller's arena
  context.stop = stop;
  const VelaWeights weights = vela_weights(arch);
  // Vela's weight placements and layouts first; when the layers' Vela rows do not join, Vela's
  // placements in any layout; then every template of the shortlisted arena groups.
  for (const int level : {2, 1, 0}) {
    std::vector<bool> fresh;
    MetricTable table;
    VelaBaseline b{build_vela_problem(arch, workload, stage, block_config_limit, level >= 1, level >= 2, &fresh, &table), {}, 0.0, {}};
    JoinProblem metric = b.problem;
    const auto metrics = row_metrics(arch, workload, stage, b.problem, table);
    // Vela schedules with every feature map between cascades in the arena (it moves some to SRAM only
    // afterwards, fill_sram): the groups with a feature map whole in SRAM are left out of the join
    // (kept in b.problem for the fill), unless a step has no other; origin maps the join's groups back.
    std::vector<std::vector<std::uint32_t>> origin(metric.steps.size());
    for (std::size_t s = 0; s < metric.steps.size(); ++s) {
      std::vector<PmappingGroup> kept;
      for (std::size_t g = 0; g < b.problem.steps[s].groups.size(); ++g) {
        PmappingGroup group = b.problem.steps[s].groups[g];
        const bool sram = std::any_of(group.compat.begin(), group.compat.end(), [&](const TensorCompat& c) {
          return c.residence == Residence::Sram || (!arch.spilling_enabled && c.residence == Residence::Rolling);
        });
        if (sram) continue;
        for (std::size_t r = 0; r < group.rows.size(); ++r) group.rows[r].cycles = metrics[s][g][r];
        kept.push_back(std::move(group));
        origin[s].push_back(static_cast<std::uint32_t>(g));
      }
      if (kept.empty()) {
        origin[s].clear();
        for (std::size_t g = 0; g < b.problem.steps[s].groups.size(); ++g) {
          PmappingGroup group = b.problem.steps[s].groups[g];
          for (std::size_t r = 0; r < group.rows.size(); ++r) group.rows[r].cycles = metrics[s][g][r];
          kept.push_back(std::move(group));
          origin[s].push_back(static_cast<std::uint32_t>(g));
        }
      }
      metric.steps[s].groups = std::move(kept);
    }
    JoinOptions options;
    options.objectives = weights.sram_byte == 0.0 ? std::vector<Objective>{Objective::Cycles}
                                                  : std::vector<Objective>{Objective::Sram, Objective::Cycles};
    JoinResult r = weights.sram_byte == 0.0 ? join_best(metric, options, context) : join(metric, options, context);
    if (r.partial) return std::nullopt;
    if (r.front.empty()) continue;
    std::size_t best = 0;
    const auto score = [&](const FrontPoint& p) { return weights.sram_byte * p.peak_sram_bytes + p.cycles; };
    for (std::size_t i = 1; i < r.front.size(); ++i)
      if (score(r.front[i]) < score(r.front[best])) best = i;
    b.point.group = r.front[best].group;
    b.point.row = r.front[best].row;
    for (std::size_t s = 0; s < b.point.group.size(); ++s) b.point.group[s] = origin[s][b.point.group[s]];
    cost_point(b.problem, b.point);
    choose_vela_block_configs(arch, workload, stage, block_config_limit, fresh, b);
    cost_point(b.problem, b.point);
    cascade_vela(arch, workload, stage, table, b);
    if (arch.spilling_enabled) {
      fill_sram(arch, workload, stage, b);
      cost_point(b.problem, b.point);
    }
    // Vela's own figure for this schedule beside our accounting of it: its allocator's (vela_sram.hpp).
    b.sram_used_bytes = static_cast<double>(vela_sram_used(b.problem, b.point, vela_sram_steps(workload, stage, b)));
    return b;
  }
  return std::nullopt;
}

}  // namespace

bool in_whole_cascade(const VelaBaseline& b, std::size_t s) {
  return std::any_of(b.whole_cascades.begin(), b.whole_cascades.end(), [&](const auto& c) { return c.first == s || c.second == s; });
}

FrontMappings vela_point_mappings(const arch::Arch& arch, const workloads::Workload& workload, const StageResult& stage,
                                  const VelaBaseline& b) {
  FrontMappings m = front_mappings(arch, workload, stage, b.problem, {&b.point}, 0);
  mark_whole_cascades(m, 0, b);
  return m;
}

void mark_whole_cascades(FrontMappings& m, std::size_t point, const VelaBaseline& b) {
  for (const auto& [writer, reader] : b.whole_cascades) {
    m.layers.at(m.points.at(point).layers.at(writer)).fused_with_next = true;
    m.layers.at(m.points.at(point).layers.at(reader)).fused_with_previous = true;
  }
}

std::optional<VelaBaseline> vela_schedule(const arch::Arch& arch, const workloads::Workload& workload) {
  StageOptions options;
  const StageResult stage = run_per_layer(arch, workload, options);
  return vela_schedule(arch, workload, stage);
}

}  // namespace npumap::search
