// The NPU cycle model (docs/design/npu-model.md §5-§6), a port of Vela's performance_metrics_for_pass.
//
// evaluate() follows Vela's order of operations so doubles agree to ~1e-15:
//   1. clamp the OFM block to the OFM, pick the traversal (§6.4) and derive the IFM block (§3.2, §3.4);
//   2. Conv/DW/FC/Pool/ReduceSum: MACs, IFM and weight read multiples, the replacement read bytes of the
//      IFM and the op's weight tensor, then estimate_conv_pooling_cycles (§6.3);
//      ElementWise: estimate_output_cycles over the whole OFM with the command-overhead term (§6.2);
//   3. without an NPU predecessor, DMA source reads are added to the Npu cycles (§11.11);
//   4. bandwidths in Vela's accumulation order: rewrite, outputs, intermediates, inputs (§6.5), each
//      unscaled and burst-scaled (§5);
//   5. access cycles from the scaled bytes and Total as their max with Npu (§6.6); energy from the
//      unscaled bytes.
// Vela's pass wiring (docs/pass-format.md): inputs = [ifm, ifm2?, weights (not DMA'd), bias (not DMA'd),
// weight DMA source?, bias DMA source?, LUT source?]; intermediates = [weights SRAM copy?, FSBias copy?,
// LUT SHRAM copy?]; outputs = [ofm]; DMA ops = [bias DMA?, weight DMA?, LUT DMA?].
// No heap allocation happens here: every intermediate is a scalar or a fixed array.

#include "model/evaluate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace npumap::model {
namespace {

using arch::Block;
using arch::MemArea;
using arch::NpuBlockType;

constexpr int kRead = static_cast<int>(Direction::Read);
constexpr int kWrite = static_cast<int>(Direction::Write);
constexpr int kWeights = static_cast<int>(TensorPurpose::Weights);
constexpr int kFeatureMap = static_cast<int>(TensorPurpose::FeatureMap);
constexpr int kFSBias = static_cast<int>(TensorPurpose::FSBias);
constexpr int kLut = static_cast<int>(TensorPurpose::Lut);

int idx(MemArea a) { return static_cast<int>(a); }

using BurstView = PreparedPass::BurstView;

/// Element size of a feature map: bits/8 as a real (§4.1).
double fm_element_size(const FeatureMap& t) { return bits(t.dtype) / 8.0; }

/// Whether the efficiency function costs this feature map as NHCWB16 (§5, §11.8).
bool costed_brick16(const FeatureMap& t) { return t.format == TensorFormat::NHCWB16 || !t.needs_linear_format; }

/// Elements of a shape whose last dimension is rounded up to 16 when `brick16` (§4.2).
std::int64_t elements(const Shape& s, bool brick16) {
  std::int64_t n = 1;
  for (int i = 0; i < s.rank; ++i) {
    const int d = (brick16 && i == s.rank - 1) ? static_cast<int>(round_up(s.dims[i], 16)) : s.dims[i];
    n *= d;
  }
  return n;
}

/// Tensor.bandwidth() of a feature map in its own format (§4.3).
double fm_bandwidth(const FeatureMap& t) {
  return static_cast<double>(elements(t.shape, t.format == TensorFormat::NHCWB16)) * fm_element_size(t);
}

/// The efficiency copy of a feature map, with the op's 4-D shape as the stride reference (§4.4).
BurstView fm_view(const FeatureMap& t, const std::array<int, 4>& shape4d) {
  BurstView v;
  v.brick16 = costed_brick16(t);
  v.elem = size_in_bytes(t.dtype);
  v.es = fm_element_size(t);
  v.ref = shape4d;
  if (v.brick16) v.ref[3] = static_cast<int>(round_up(v.ref[3], 16));
  return v;
}

/// estimate_memory_transfer_efficiency (§5) for an NHWC/NHCWB16 tensor, given the bytes `bw`
/// (the replacement read bytes, or the copy's own bandwidth).
double burst_scaled(const arch::Arch& arch, MemArea area, bool is_read, const BurstView& t, const Block& block,
                    double bw) {
  std::int64_t burst = 0;
  const double depth = block.d;
  if (t.brick16) {
    const double stride_c = 16.0 * t.es * t.ref[2];  // strides[1]: step between 16-channel bricks
    if (stride_c == depth) {
      burst = static_cast<std::int64_t>(t.elem) * block.d * block.w;
    } else if (is_read) {
      burst = static_cast<std::int64_t>(16) * t.elem * block.w;
    } else {
      burst = static_cast<std::int64_t>(16) * t.elem * block.w * arch.ncores();
    }
  } else {
    const double stride_x = t.es * t.ref[3];  // strides[3]: one x step covers all channels
    if (is_read) {
      burst = stride_x == depth ? static_cast<std::int64_t>(t.elem) * block.d * block.w
                                : static_cast<std::int64_t>(t.elem) * block.d;
    } else if (block.d <= 16 && stride_x == depth) {
      burst = static_cast<std::int64_t>(t.elem) * block.d * block.w;
    } else {
      burst = std::min<std::int64_t>({64, static_cast<std::int64_t>(16) * t.elem * arch.ncores(),
                                      static_cast<std::int64_t>(block.d) * t.elem});
    }
  }
  const int burst_length = arch.mem(area).burst_length;
  burst = std::min<std::int64_t>(burst_length, burst);
  return bw * (static_cast<double>(burst_length) / static_cast<double>(burst));
}

/// Tensor.storage_size() with scale 1 (§4.3): ceil(bytes) rounded up to 16; a raw 0 counts as 1.
double storage_size(const Shape& storage_shape, double element_size) {
  double raw = static_cast<double>(storage_shape.elements()) * element_size;
  if (raw == 0.0) raw = 1.0;
  const auto bytes = static_cast<std::int64_t>(std::ceil(raw));
  return static_cast<double>(round_up(bytes, 16));
}

/// The bandwidths of one pass, [area][purpose][direction], kept sparse: a pass touches about a dozen
/// of the 84 cells, and the search evaluates millions of passes, so only touched cells are written
/// (no zeroing of two 672-byte arrays) and the sums visit only those, in cell order. That is exact:
/// an untouched cell is +0.0, and a sum that starts at +0.0 never becomes -0.0, so adding +0.0
/// never changes it. A touched cell starts at 0.0 and accumulates in call order, as the dense array did.
class BandwidthLedger {
 public:
  void add(MemArea area, int purpose, int dir, double bytes, double scaled_bytes) {
    const int a = idx(area);
    const int cell = purpose * kNumDirections + dir;
    const auto bit = static_cast<std::uint16_t>(1u << cell);
    if ((touched_[a] & bit) == 0) {
      touched_[a] = static_cast<std::uint16_t>(touched_[a] | bit);
      bytes_[a][cell] = 0.0;
      scaled_[a][cell] = 0.0;
    }
    bytes_[a][cell] += bytes;
    scaled_[a][cell] += scaled_bytes;
  }

  /// Sum over purposes and directions of one area, unscaled or scaled (area_bytes()' order).
  double area_sum(MemArea area, bool scaled) const {
    const int a = idx(area);
    const auto& cells = scaled ? scaled_[a] : bytes_[a];
    double sum = 0.0;
    for (unsigned bits = touched_[a]; bits != 0; bits &= bits - 1) sum += cells[std::countr_zero(bits)];
    return sum;
  }

  /// energy_pj() over the ledger's unscaled bytes, in its order of operations.
  double energy_pj(const arch::Arch& arch, std::int64_t macs) const {
    double e = static_cast<double>(macs) * arch.energy.pj_per_mac;
    for (int a = 0; a < arch::kNumMemAreas; ++a) {
      double read = 0.0;
      double write = 0.0;
      for (unsigned bits = touched_[a]; bits != 0; bits &= bits - 1) {
        const int cell = std::countr_zero(bits);
        (cell % kNumDirections == kRead ? read : write) += bytes_[a][cell];
      }
      e += read * arch.energy.read_pj_per_byte[a] + write * arch.energy.write_pj_per_byte[a];
    }
    return e;
  }

  /// Writes the touched cells into zero-initialised dense arrays.
  void fill(BandwidthArray& bytes, BandwidthArray& scaled) const {
    for (int a = 0; a < arch::kNumMemAreas; ++a) {
      for (unsigned bits = touched_[a]; bits != 0; bits &= bits - 1) {
        const int cell = std::countr_zero(bits);
        bytes[a][cell / kNumDirections][cell % kNumDirections] = bytes_[a][cell];
        scaled[a][cell / kNumDirections][cell % kNumDirections] = scaled_[a][cell];
      }
    }
  }

 private:
  static constexpr int kCells = kNumPurposes * kNumDirections;
  static_assert(kCells <= 16, "a touched mask is 16 bits");
  std::array<std::uint16_t, arch::kNumMemAreas> touched_{};
  // Only cells whose bit is set are ever read, so these are deliberately left uninitialised.
  std::array<std::array<double, kCells>, arch::kNumMemAreas> bytes_;
  std::array<std::array<double, kCells>, arch::kNumMemAreas> scaled_;
};

/// Everything evaluate() computes, with the bandwidths in a ledger instead of dense arrays.
struct Evaluation {
  std::array<double, kNumPassCycles> cycles{};
  std::int64_t macs = 0;
  std::int64_t ifm_read_multiple = 1;
  std::int64_t weight_read_multiple = 0;
  double energy_pj = 0.0;
  PassTrace trace;
  BandwidthLedger bw;
};

/// Bias element_size(): the packed 10 bytes, or 4 from the int32 dtype.
double bias_element_size(const Bias& b) { return b.element_size_bytes != 0 ? b.element_size_bytes : 4.0; }

/// is_acc_40bits_used (§4.6), without ifm2 as the cycle estimate calls it.
bool acc40_used(NpuBlockType type, const Pass& p) {
  return bits(p.ifm.dtype) == 16 && type != NpuBlockType::Pooling && p.ifm.quant_scale.has_value() &&
         p.ofm.quant_scale.has_value();
}

/// get_minimal_cmd_cycles (§6.1): raw block bytes, IFM-area read latency and OFM-area write latency.
double minimal_cmd_cycles(const arch::Arch& arch, const Pass& p, const Block& ifm_blk, const Block& ofm_blk,
                          double output_cycles, double dpu_cycles) {
  const arch::MemoryParams& im = arch.mem(p.ifm.mem_area);
  const FeatureMap& ofm = p.timing_ofm();  // the primary op's output (Vela's ofm_tensor of the primary op)
  const arch::MemoryParams& om = arch.mem(ofm.mem_area);
  const double cyc_ifm =
      static_cast<double>(static_cast<std::int64_t>(ifm_blk.h) * ifm_blk.w * ifm_blk.d) * fm_element_size(p.ifm) /
      im.bandwidth_per_cycle;
  const double cyc_ofm =
      static_cast<double>(static_cast<std::int64_t>(ofm_blk.h) * ofm_blk.w * ofm_blk.d) * fm_element_size(ofm) /
      om.bandwidth_per_cycle;
  return (im.latency_read + cyc_ifm + dpu_cycles + output_cycles + om.latency_write + cyc_ofm) / 4;
}

/// estimate_output_cycles (§6.2) up to its block term: the cycles per output element.
double output_cycles_per_elem(const arch::Arch& arch, NpuBlockType type, const Pass& p, bool acc40) {
  const OpType op = p.op.type;
  int out_idx = 7;
  if (type == NpuBlockType::ElementWise && p.ifm.dtype == DataType::Int32) {
    out_idx = p.ifm2 ? 1 : 0;
  } else if (op == OpType::Mul && p.ofm.dtype == DataType::Int32) {
    out_idx = 2;
  } else if (op == OpType::Mul ||
             (acc40 && (type == NpuBlockType::ConvolutionMxN || type == NpuBlockType::ConvolutionDepthWise ||
                        type == NpuBlockType::Pooling || type == NpuBlockType::ReduceSum ||
                        type == NpuBlockType::VectorProduct))) {
    out_idx = 3;
  } else if (op == OpType::Add || op == OpType::Sub) {
    const auto& s1 = p.ifm.quant_scale;
    const std::optional<float> s2 = p.ifm2 ? p.ifm2->quant_scale : std::nullopt;
    const auto& so = p.ofm.quant_scale;
    out_idx = (!s1 || !s2 || !so || *s1 == *s2) ? 4 : 5;
  } else if (op == OpType::MaxPool) {
    out_idx = 6;
  }
  int act_idx = 2;
  switch (p.op.activation) {
    case Activation::Sigmoid:
    case Activation::Tanh:
    case Activation::Lut:
      act_idx = 0;
      break;
    case Activation::Relu:
    case Activation::Relu6:
    case Activation::ReluN1To1:
      act_idx = 1;
      break;
    case Activation::None:
      break;
  }
  return std::max(arch.accel.output_cycles_per_elem[out_idx], arch.accel.activation_cycles_per_elem[act_idx]);
}

/// estimate_output_cycles (§6.2) for the elementwise whole-op call, with the command-overhead term
/// of `block`; `cpe` is output_cycles_per_elem().
double elementwise_output_cycles(const arch::Arch& arch, const Pass& p, std::int64_t num_elems, double cpe,
                                 const Block& block) {
  const std::int64_t n = static_cast<std::int64_t>(block.w) * block.h * block.d;
  const double cmd = minimal_cmd_cycles(arch, p, block, block, static_cast<double>(n) * cpe, 0.0);
  cpe = std::max(cpe, cmd / static_cast<double>(n));
  return static_cast<double>(num_elems) * cpe;
}

/// estimate_conv_pooling_cycles (§6.3). Mutates `ofm_block.h` for the 1-D ublock tweak, as Vela does.
double conv_pooling_cycles(const arch::Arch& arch, const PreparedPass& pp, const Pass& p, const Block& ifm_block,
                           Block& ofm_block, PassTrace& trace) {
  const NpuBlockType type = pp.type;
  const BlockTraversal traversal = pp.traversal;
  const std::array<std::int64_t, 2>& kernel_dims = pp.kernel_dims;
  const std::array<int, 4>& ifm_shape = pp.ifm_shape;
  const std::array<int, 4>& ofm_shape = pp.ofm_shape;
  const MemArea* scale_area = pp.has_bias ? &pp.scale_area : nullptr;
  Block ub = arch.accel.ofm_ublock;
  if (arch.accel.ofm_ublock.h == 2 &&
      (type == NpuBlockType::ConvolutionMxN || type == NpuBlockType::ConvolutionDepthWise ||
       type == NpuBlockType::VectorProduct) &&
      ofm_shape[1] == 1 && ofm_shape[2] % 2 == 0 && kernel_dims[0] == 1) {
    ub.w = 4;
    ub.h = 1;
    ofm_block.h = 1;
  }
  const std::int64_t nx = ceil_div(ofm_block.w, ub.w);
  const std::int64_t ny = ofm_block.h / ub.h;  // floor (§11.3)
  const std::int64_t nxy = nx * ny;
  const std::int64_t nz = ofm_block.d / ub.d;  // floor
  const std::int64_t elems_blk = static_cast<std::int64_t>(ofm_block.w) * ofm_block.h * ofm_block.d;
  const bool acc40 = pp.acc40;
  const int ifm_bits = bits(p.ifm.dtype);
  const bool pkf = type == NpuBlockType::ConvolutionMxN && traversal == BlockTraversal::PartKernelFirst;
  const bool u55_32 = arch.accel.kind == arch::Accelerator::EthosU55_32;

  const auto& limits = arch.sub_kernel_limits[static_cast<int>(type)];
  const std::int64_t ly = limits[0];
  const std::int64_t lx = limits[1];
  const std::int64_t n_sub_y = ceil_div(kernel_dims[0], ly);
  const std::int64_t n_sub_x = ceil_div(kernel_dims[1], lx);
  const std::int64_t cycles_wb = 32 * static_cast<std::int64_t>(ub.d) / 8;
  const std::int64_t ifm_depth_steps = ceil_div(ifm_block.d, 8);

  std::int64_t dpu = 0;
  for (std::int64_t iy = 0; iy < n_sub_y; ++iy) {
    const std::int64_t sy = std::min(kernel_dims[0] - iy * ly, ly);
    for (std::int64_t ix = 0; ix < n_sub_x; ++ix) {
      const std::int64_t sx = std::min(kernel_dims[1] - ix * lx, lx);
      const std::int64_t e = sx * sy;
      std::int64_t steps = 0;
      std::int64_t c = 0;
      if (type == NpuBlockType::Pooling) {
        steps = 1;
        c = std::max<std::int64_t>(4, e) * nxy * nz;
        if (ifm_bits == 16 && !u55_32) c *= 2;
      } else if (type == NpuBlockType::ConvolutionDepthWise) {
        c = 4 * nxy;
        if (ifm_bits == 16) c *= 2;
        steps = ceil_div(e, 4);
        c = std::max(cycles_wb, c) * steps * nz;
      } else if (!pkf) {  // ConvMxN depth-first, VectorProduct, ReduceSum
        steps = e;
        c = std::max(cycles_wb, 4 * nxy) * steps * nz;
      } else {
        const std::int64_t div = ifm_bits == 16 ? 2 : 4;
        steps = ceil_div(e, div);
        c = std::max(cycles_wb, 4 * nxy) * (steps * ifm_depth_steps * nz);
      }
      std::int64_t delay = 0;
      if (u55_32) {
        const std::int64_t dly = acc40 ? 7 : 3;
        if (nx == 1 && ny == 1) {
          if (nz == 1) {
            delay = dly * steps;
          } else if (steps > 1) {
            delay = dly * (steps - 1) * nz;
          }
        }
        if ((nx == 1 || ny == 1) && nz > 1 && acc40) delay += dly * nz;
      } else {
        const bool slow_acc40 = acc40 && (arch.accel.kind == arch::Accelerator::EthosU55_64 ||
                                          arch.accel.kind == arch::Accelerator::EthosU55_128);
        const std::int64_t dly = slow_acc40 ? 3 : 2;
        if (nx == 1 && ny == 1) {
          if (nz == 1) {
            delay = dly * steps;
          } else if (steps > 1) {
            delay = dly * (steps - 1) * nz;
          }
        }
      }
      if (pkf) delay *= ifm_depth_steps;
      dpu += c + delay;
    }
  }
  if (type == NpuBlockType::ConvolutionMxN || type == NpuBlockType::VectorProduct ||
      type == NpuBlockType::ReduceSum) {
    dpu *= ceil_div(ifm_shape[3], ifm_block.d);
  }
  double dpu_cycles = static_cast<double>(dpu) / arch.ncores();

  const std::int64_t num_ofm_blk = ceil_div(ofm_shape[1], ofm_block.h) * ceil_div(ofm_shape[2], ofm_block.w) *
                                   ceil_div(ofm_shape[3], ofm_block.d);
  double out_cycles = static_cast<double>(elems_blk) * pp.output_cpe;  // estimate_output_cycles
  trace.output_cycles = out_cycles;
  if (scale_area != nullptr) {
    const double bias_cycles =
        static_cast<double>(10 * static_cast<std::int64_t>(std::min(ofm_block.d, ofm_shape[3])) *
                            arch.mem(*scale_area).latency_read) /
        256;
    out_cycles = std::max(out_cycles, bias_cycles);
  }
  const double cmd = minimal_cmd_cycles(arch, p, ifm_block, ofm_block, dpu_cycles, out_cycles);
  dpu_cycles = std::max(dpu_cycles, cmd);
  out_cycles = std::max(out_cycles, cmd);
  const auto blocks = static_cast<double>(num_ofm_blk);
  return dpu_cycles > out_cycles ? dpu_cycles * blocks + out_cycles : out_cycles * blocks + dpu_cycles;
}

bool is_conv_like(NpuBlockType type) {
  return type == NpuBlockType::ConvolutionMxN || type == NpuBlockType::ConvolutionDepthWise ||
         type == NpuBlockType::VectorProduct || type == NpuBlockType::Pooling || type == NpuBlockType::ReduceSum;
}

/// The cycle model (see the top of this file) for `p`, with what does not depend on its block
/// config or double-buffer depth taken from `pp`; shared by evaluate() and evaluate_cost().
Evaluation evaluate_pass(const arch::Arch& arch, const PreparedPass& pp, const Pass& p) {
  Evaluation m;
  const NpuBlockType type = pp.type;
  const std::array<int, 4>& is = pp.ifm_shape;
  const std::array<int, 4>& os = pp.ofm_shape;
  const Weights* w = p.weights ? &*p.weights : nullptr;
  const Bias* b = p.bias ? &*p.bias : nullptr;

  Block ofm_block{p.block_config[1], p.block_config[0], p.block_config[3]};
  ofm_block.w = std::min(ofm_block.w, os[2]);
  ofm_block.h = std::min(ofm_block.h, os[1]);
  ofm_block.d = std::min(ofm_block.d, os[3]);

  const int ifm_bits = bits(p.ifm.dtype);
  Block ifm_block = get_ifm_block_size(arch, get_ifm_block_depth(type, is[3], ifm_bits, pp.traversal, ofm_block.d),
                                       ofm_block, p.op.kernel, arch.default_sub_kernel_max, p.op.resampling);
  ifm_block.w = std::min(ifm_block.w, is[2]);
  ifm_block.h = std::min(ifm_block.h, is[1]);

  const double ifm_bw = pp.ifm_bw;
  const double weights_bw = pp.weights_bw;
  const double bias_bw = pp.bias_bw;

  double ifm_read = ifm_bw;  // replacement_read_bws[ifm] when set
  double weight_read = 0.0;  // replacement_read_bws[weight tensor]
  const bool conv_like = pp.conv_like;
  if (conv_like) {
    m.macs = pp.macs;
    const std::int64_t n_depth = (type == NpuBlockType::ConvolutionDepthWise || type == NpuBlockType::Pooling)
                                     ? 1
                                     : ceil_div(pp.weight_bandwidth_depth, ofm_block.d);
    m.ifm_read_multiple = pp.n_sub_kernels * n_depth;
    ifm_read = ifm_bw * static_cast<double>(m.ifm_read_multiple);
    m.weight_read_multiple = ceil_div(os[1], ofm_block.h) * ceil_div(os[2], ofm_block.w);
    weight_read = pp.weight_read_once * static_cast<double>(m.weight_read_multiple);

    m.trace.has_conv_pooling = true;
    m.trace.kernel_dims = {static_cast<int>(pp.kernel_dims[0]), static_cast<int>(pp.kernel_dims[1])};
    m.trace.block_traversal = pp.traversal;
    m.trace.ifm_block = ifm_block;
    m.cycles[0] = conv_pooling_cycles(arch, pp, p, ifm_block, ofm_block, m.trace);
    m.trace.ofm_block = ofm_block;
    m.trace.conv_pooling_cycles = m.cycles[0];
  } else if (type == NpuBlockType::ElementWise) {
    m.cycles[0] = elementwise_output_cycles(arch, p, pp.ofm_elements, pp.output_cpe, ofm_block);
    m.trace.output_cycles = m.cycles[0];
  }

  if (!p.has_npu_predecessor) {  // DMA ops in order: bias DMA, then weight DMA
    if (b != nullptr && b->dma())
      m.cycles[0] += storage_size(b->storage_shape, bias_element_size(*b)) / arch.mem(b->mem_area).bandwidth_per_cycle;
    if (w != nullptr && w->dma())
      m.cycles[0] += storage_size(w->storage_shape, pp.weight_elem) / arch.mem(w->mem_area).bandwidth_per_cycle;
    if (p.lut)  // the LUT's DMA into SHRAM
      m.cycles[0] += storage_size(p.lut->shape, bits(p.lut->dtype) / 8.0) / arch.mem(p.lut->mem_area).bandwidth_per_cycle;
  }

  const auto add = [&](MemArea area, int purpose, int dir, double bytes, double scaled_bytes) {
    m.bw.add(area, purpose, dir, bytes, scaled_bytes);
  };

  // Rewrite: the op's weight tensor becomes a double buffer in fast storage, read there (§6.5).
  if (p.weights_double_buffer_depth && w != nullptr && conv_like) {
    add(arch.fast_storage, kWeights, kRead, weight_read, weight_read);
    weight_read = 0.0;
  }

  // Outputs.
  {
    const MemArea area = p.force_outputs_to_fast_storage ? arch.fast_storage : p.ofm.mem_area;
    add(area, kFeatureMap, kWrite, pp.ofm_bw, burst_scaled(arch, area, false, pp.ofm_view, ofm_block, pp.ofm_copy_bw));
  }

  // Intermediates: DMA destinations, written once and read without efficiency scaling.
  if (w != nullptr && w->dma()) {
    add(w->dma_to, kWeights, kWrite, weights_bw, weights_bw);
    const double r = conv_like ? weight_read : weights_bw;
    add(w->dma_to, kWeights, kRead, r, r);
  }
  if (b != nullptr && b->dma()) {
    add(b->dma_to, kFSBias, kWrite, bias_bw, bias_bw);
    add(b->dma_to, kFSBias, kRead, bias_bw, bias_bw);
  }
  const double lut_bw = pp.lut_bw;
  if (p.lut) {  // the SHRAM copy: outside the four access areas, so it costs no access cycles
    add(MemArea::Shram, kLut, kWrite, lut_bw, lut_bw);
    add(MemArea::Shram, kLut, kRead, lut_bw, lut_bw);
  }

  // Inputs.
  add(p.ifm.mem_area, kFeatureMap, kRead, ifm_read,
      burst_scaled(arch, p.ifm.mem_area, true, pp.ifm_view, ifm_block, ifm_read));
  if (p.ifm2) {
    const double r = pp.ifm2_bw;
    add(p.ifm2->mem_area, kFeatureMap, kRead, r, burst_scaled(arch, p.ifm2->mem_area, true, pp.ifm2_view, ifm_block, r));
  }
  if (w != nullptr && !w->dma()) {
    const double r = conv_like ? weight_read : weights_bw;
    add(w->mem_area, kWeights, kRead, r, r);  // WeightsCompressed: no burst scaling
  }
  const BurstView& bias_view = pp.bias_view;
  if (b != nullptr && !b->dma()) {
    add(b->mem_area, kFeatureMap, kRead, bias_bw, burst_scaled(arch, b->mem_area, true, bias_view, ifm_block, bias_bw));
  }
  if (w != nullptr && w->dma()) add(w->mem_area, kWeights, kRead, weights_bw, weights_bw);
  if (b != nullptr && b->dma()) {
    add(b->mem_area, kFeatureMap, kRead, bias_bw, burst_scaled(arch, b->mem_area, true, bias_view, ifm_block, bias_bw));
  }
  if (p.lut) {  // the LUT source
    add(p.lut->mem_area, kLut, kRead, lut_bw, burst_scaled(arch, p.lut->mem_area, true, pp.lut_view, ifm_block, lut_bw));
  }

  // §6.6.
  constexpr std::array<MemArea, 4> kAccessAreas = {MemArea::Sram, MemArea::Dram, MemArea::OnChipFlash,
                                                    MemArea::OffChipFlash};
  double total = m.cycles[0];
  for (int i = 0; i < 4; ++i) {
    const double sum = m.bw.area_sum(kAccessAreas[i], true);
    m.cycles[1 + i] = sum / arch.mem(kAccessAreas[i]).bandwidth_per_cycle;
    total = std::max(total, m.cycles[1 + i]);
  }
  m.cycles[static_cast<int>(PassCycles::Total)] = total;
  m.energy_pj = m.bw.energy_pj(arch, m.macs);
  return m;
}

}  // namespace

PreparedPass prepare_pass(const arch::Arch& arch, const Pass& p) {
  PreparedPass pp;
  const NpuBlockType type = npu_block_type(p.op.type);
  pp.type = type;
  pp.ifm_shape = p.ifm_op_shape();
  pp.ofm_shape = p.ofm_op_shape();
  const std::array<int, 4>& is = pp.ifm_shape;
  const std::array<int, 4>& os = pp.ofm_shape;
  const Weights* w = p.weights ? &*p.weights : nullptr;
  const Bias* b = p.bias ? &*p.bias : nullptr;

  if (type == NpuBlockType::ReduceSum) {
    pp.traversal = BlockTraversal::DepthFirst;
  } else if ((type == NpuBlockType::ConvolutionMxN || type == NpuBlockType::ConvolutionDepthWise ||
              type == NpuBlockType::VectorProduct) &&
             w != nullptr) {
    pp.traversal = w->traversal;
  }

  pp.ifm_bw = fm_bandwidth(p.ifm);
  pp.weight_elem = w != nullptr ? bits(w->dtype) / 8.0 : 0.0;
  pp.weights_bw = w != nullptr ? static_cast<double>(w->shape.elements()) * pp.weight_elem * w->compression_scale : 0.0;
  pp.bias_bw = b != nullptr ? static_cast<double>(b->shape.elements()) * bias_element_size(*b) : 0.0;
  pp.has_bias = b != nullptr;
  // The bias's scale tensor lives where the op reads it: the FSBias copy when DMA'd.
  pp.scale_area = b != nullptr ? (b->dma() ? b->dma_to : b->mem_area) : MemArea::Unknown;

  pp.conv_like = is_conv_like(type);
  if (pp.conv_like) {
    const std::int64_t batch = is[0];
    std::array<std::int64_t, 4> wshape{1, 1, 1, 1};
    std::array<std::int64_t, 4> wbw_shape{0, 0, 0, 0};
    double welem = 0.0;
    double wcomp = 0.0;
    if (type == NpuBlockType::Pooling) {
      // get_kernel_size() order (w, h), §11.5.
      wshape = {p.op.kernel.w, p.op.kernel.h, 1, is[3]};
      wbw_shape = wshape;
      pp.macs = 0;
    } else {
      if (type == NpuBlockType::ReduceSum) {
        wshape = {1, 1, p.ifm.shape.as_4d()[3], p.ofm.shape.as_4d()[3]};
      } else if (w != nullptr) {
        const auto s4 = w->shape.as_4d();
        wshape = {s4[0], s4[1], s4[2], s4[3]};
        wbw_shape = wshape;  // WeightsCompressed: bandwidth_shape == shape
        welem = pp.weight_elem;
        wcomp = w->compression_scale;
      }
      pp.macs = static_cast<std::int64_t>(os[0]) * os[1] * os[2] * wshape[0] * wshape[1] * wshape[2] * wshape[3];
    }
    pp.kernel_dims = {wshape[0], wshape[1]};
    const auto& limits = arch.sub_kernel_limits[static_cast<int>(type)];
    pp.n_sub_kernels = ceil_div(pp.kernel_dims[0], limits[0]) * ceil_div(pp.kernel_dims[1], limits[1]);
    pp.weight_bandwidth_depth = wbw_shape[3];
    const std::int64_t wbw_elems = wbw_shape[0] * wbw_shape[1] * wbw_shape[2] * wbw_shape[3];
    // The product's first factors, in the order evaluate() multiplies them.
    pp.weight_read_once = static_cast<double>(batch * wbw_elems) * welem * wcomp;
    pp.acc40 = acc40_used(type, p);
    pp.output_cpe = output_cycles_per_elem(arch, type, p, pp.acc40);
  } else if (type == NpuBlockType::ElementWise) {
    pp.ofm_elements = p.ofm.shape.elements();
    pp.output_cpe = output_cycles_per_elem(arch, type, p, false);
  }

  pp.ofm_view = fm_view(p.ofm, os);
  pp.ofm_bw = fm_bandwidth(p.ofm);
  pp.ofm_copy_bw = static_cast<double>(elements(p.ofm.shape, pp.ofm_view.brick16)) * fm_element_size(p.ofm);
  pp.ifm_view = fm_view(p.ifm, is);
  if (p.ifm2) {
    pp.ifm2_bw = fm_bandwidth(*p.ifm2);
    pp.ifm2_view = fm_view(*p.ifm2, p.ifm2_op_shape());
  }
  if (b != nullptr) {
    pp.bias_view.brick16 = false;  // an int32 NHWC tensor that needs linear format
    pp.bias_view.elem = 4;         // from the dtype even when packed to 10 bytes (§11.6)
    pp.bias_view.es = bias_element_size(*b);
    pp.bias_view.ref = b->storage_shape.as_4d();  // no op shape: strides from storage_shape
  }
  if (p.lut) {  // an NHWC linear constant: strides from its own shape (no op shape)
    pp.lut_bw = static_cast<double>(p.lut->shape.elements()) * (bits(p.lut->dtype) / 8.0);
    pp.lut_view.elem = size_in_bytes(p.lut->dtype);
    pp.lut_view.es = bits(p.lut->dtype) / 8.0;
    pp.lut_view.ref = p.lut->shape.as_4d();
  }
  return pp;
}

PassMetrics evaluate(const arch::Arch& arch, const Pass& p) {
  const Evaluation e = evaluate_pass(arch, prepare_pass(arch, p), p);
  PassMetrics m;
  m.cycles = e.cycles;
  m.macs = e.macs;
  m.ifm_read_multiple = e.ifm_read_multiple;
  m.weight_read_multiple = e.weight_read_multiple;
  e.bw.fill(m.bandwidth, m.scaled_bandwidth);
  m.energy_pj = e.energy_pj;
  m.trace = e.trace;
  return m;
}

PassCost evaluate_cost(const arch::Arch& arch, const PreparedPass& prepared, const Pass& p) {
  const Evaluation e = evaluate_pass(arch, prepared, p);
  PassCost c;
  c.total_cycles = e.cycles[static_cast<int>(PassCycles::Total)];
  // off_chip_bytes(): Dram, then OffChipFlash.
  c.off_chip_bytes = e.bw.area_sum(MemArea::Dram, false) + e.bw.area_sum(MemArea::OffChipFlash, false);
  c.energy_pj = e.energy_pj;
  return c;
}

PassAreaCost evaluate_area_cost(const arch::Arch& arch, const PreparedPass& prepared, const Pass& p) {
  const Evaluation e = evaluate_pass(arch, prepared, p);
  PassAreaCost c;
  c.cycles = e.cycles;
  // area_bytes() adds a memory's cells in the ledger's order; its untouched cells add zeros.
  for (int a = 0; a < arch::kNumMemAreas; ++a) c.area_bytes[static_cast<std::size_t>(a)] = e.bw.area_sum(static_cast<MemArea>(a), false);
  return c;
}

double area_bytes(const PassMetrics& m, arch::MemArea area) {
  double sum = 0.0;
  for (const auto& purpose : m.bandwidth[idx(area)])
    for (double v : purpose) sum += v;
  return sum;
}

double off_chip_bytes(const PassMetrics& m) {
  return area_bytes(m, MemArea::Dram) + area_bytes(m, MemArea::OffChipFlash);
}

std::string_view purpose_name(TensorPurpose p) {
  constexpr std::array<std::string_view, kNumPurposes> names = {"Unknown",     "Weights", "FeatureMap", "Scratch",
                                                                "ScratchFast", "LUT",     "FSBias"};
  return names[static_cast<int>(p)];
}

std::string_view direction_name(Direction d) { return d == Direction::Read ? "Read" : "Write"; }

std::string_view pass_cycles_name(PassCycles c) {
  constexpr std::array<std::string_view, kNumPassCycles> names = {
      "Npu", "SramAccess", "DramAccess", "OnChipFlashAccess", "OffChipFlashAccess", "Total"};
  return names[static_cast<int>(c)];
}

}  // namespace npumap::model
