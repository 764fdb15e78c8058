// Reading and writing the pass JSON of docs/pass-format.md.
//
// read_pass_input() validates as it goes: every object rejects unknown keys with a closest-match hint,
// every value is type-checked, and every error names the file and the key path (JSON carries no line
// numbers, so the path such as `records[3].input.weights.shape` is the location).
// write_pass_input() and write_metrics() emit keys in sorted order, matching the reference file.

#include "model/pass_json.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <string_view>
#include <vector>

#include "common/json_reader.hpp"
#include "common/user_error.hpp"

namespace npumap::model {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

using Ctx = common::JsonPath;
using common::as_bool;
using common::as_double;
using common::as_string;
using common::check_keys;
using common::find;
using common::joined;
using common::require;

int as_int32(const json& v, const Ctx& ctx, std::int64_t min_value) {
  return static_cast<int>(common::as_int(v, ctx, min_value, 1'000'000'000));
}

/// Bounds that keep every product the cycle model forms (elements, MACs, bytes, cycles) inside
/// 64-bit integers, as the workload loader's kMaxDimension and element checks do for YAML:
/// a dimension, the elements of one tensor, and ofm elements x kernel area x ifm depth.
constexpr int kMaxPassDimension = 1 << 24;
constexpr double kMaxPassElements = 1099511627776.0;  // 2^40
constexpr double kMaxPassMacs = 9007199254740992.0;   // 2^53

template <typename E, typename Parse>
E as_enum(const json& v, const Ctx& ctx, Parse parse, const std::vector<std::string>& valid) {
  const std::string s = as_string(v, ctx);
  E out{};
  if (!parse(s, out)) {
    const std::string near = common::closest_match(s, valid);
    ctx.fail("unknown value '" + s + "'",
             near.empty() ? "valid: " + joined(valid) : "did you mean '" + near + "'? valid: " + joined(valid));
  }
  return out;
}

arch::MemArea as_area(const json& v, const Ctx& ctx) {
  return as_enum<arch::MemArea>(v, ctx, [](std::string_view s, arch::MemArea& a) { return arch::parse_mem_area(s, a); },
                                {"Sram", "Dram", "OnChipFlash", "OffChipFlash"});
}

Shape as_shape(const json& v, const Ctx& ctx, int min_rank, int max_rank, int min_dim = 1) {
  if (!v.is_array()) ctx.fail("expected a list of integers, got " + v.dump());
  const int rank = static_cast<int>(v.size());
  if (rank < min_rank || rank > max_rank) ctx.fail(fmt::format("expected {} to {} dimensions, got {}", min_rank, max_rank, rank));
  Shape s;
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[i] = static_cast<int>(common::as_int(v[i], ctx.index(i), min_dim, kMaxPassDimension));
  double elements = 1.0;
  for (int i = 0; i < rank; ++i) elements *= s.dims[i];
  if (elements > kMaxPassElements) ctx.fail(fmt::format("{:.3g} elements is too many", elements), "at most 2^40 elements per tensor");
  return s;
}

std::array<int, 2> as_pair(const json& v, const Ctx& ctx) {
  const Shape s = as_shape(v, ctx, 2, 2);
  return {s.dims[0], s.dims[1]};
}

FeatureMap read_feature_map(const json& j, const Ctx& ctx) {
  check_keys(j, ctx, {"shape", "dtype", "mem_area", "format", "needs_linear_format", "quant_scale", "op_shape"});
  FeatureMap f;
  f.shape = as_shape(require(j, "shape", ctx), ctx.at("shape"), 0, 4);
  f.dtype = as_enum<DataType>(require(j, "dtype", ctx), ctx.at("dtype"), parse_dtype, {"int8", "uint8", "int16", "int32"});
  f.mem_area = as_area(require(j, "mem_area", ctx), ctx.at("mem_area"));
  if (const json* v = find(j, "format")) f.format = as_enum<TensorFormat>(*v, ctx.at("format"), parse_format, {"NHWC", "NHCWB16"});
  if (const json* v = find(j, "needs_linear_format")) f.needs_linear_format = as_bool(*v, ctx.at("needs_linear_format"));
  if (const json* v = find(j, "quant_scale"); v != nullptr && !v->is_null())
    f.quant_scale = static_cast<float>(as_double(*v, ctx.at("quant_scale")));
  if (const json* v = find(j, "op_shape")) {
    const Shape s = as_shape(*v, ctx.at("op_shape"), 4, 4);
    f.op_shape = s.as_4d();
  }
  return f;
}

Lut read_lut(const json& j, const Ctx& ctx) {
  check_keys(j, ctx, {"shape", "dtype", "mem_area"});
  Lut l;
  l.shape = as_shape(require(j, "shape", ctx), ctx.at("shape"), 1, 4);
  l.dtype = as_enum<DataType>(require(j, "dtype", ctx), ctx.at("dtype"), parse_dtype, {"int8", "uint8", "int16", "int32"});
  l.mem_area = as_area(require(j, "mem_area", ctx), ctx.at("mem_area"));
  return l;
}

Weights read_weights(const json& j, const Ctx& ctx) {
  check_keys(j, ctx, {"shape", "dtype", "mem_area", "compression_scale", "storage_shape", "block_traversal", "dma_to"});
  Weights w;
  w.shape = as_shape(require(j, "shape", ctx), ctx.at("shape"), 2, 4);
  if (const json* v = find(j, "dtype")) w.dtype = as_enum<DataType>(*v, ctx.at("dtype"), parse_dtype, {"int8", "uint8", "int16", "int32"});
  w.mem_area = as_area(require(j, "mem_area", ctx), ctx.at("mem_area"));
  w.compression_scale = as_double(require(j, "compression_scale", ctx), ctx.at("compression_scale"));
  if (!(w.compression_scale > 0.0)) ctx.at("compression_scale").fail("must be positive");
  w.storage_shape = as_shape(require(j, "storage_shape", ctx), ctx.at("storage_shape"), 1, 4, 0);
  w.traversal = as_enum<BlockTraversal>(require(j, "block_traversal", ctx), ctx.at("block_traversal"), parse_traversal,
                                        {"Default", "DepthFirst", "PartKernelFirst", "DepthWise"});
  if (const json* v = find(j, "dma_to")) w.dma_to = as_area(*v, ctx.at("dma_to"));
  return w;
}

Bias read_bias(const json& j, const Ctx& ctx) {
  check_keys(j, ctx, {"shape", "mem_area", "element_size_bytes", "storage_shape", "dma_to"});
  Bias b;
  b.shape = as_shape(require(j, "shape", ctx), ctx.at("shape"), 1, 1);
  b.mem_area = as_area(require(j, "mem_area", ctx), ctx.at("mem_area"));
  if (const json* v = find(j, "element_size_bytes")) {
    b.element_size_bytes = as_int32(*v, ctx.at("element_size_bytes"), 0);
    if (b.element_size_bytes != 0 && b.element_size_bytes != 10)
      ctx.at("element_size_bytes").fail("must be 0 (4 bytes from int32) or 10 (packed bias and scale)");
  }
  b.storage_shape = b.shape;
  if (const json* v = find(j, "storage_shape")) b.storage_shape = as_shape(*v, ctx.at("storage_shape"), 1, 4);
  if (const json* v = find(j, "dma_to")) b.dma_to = as_area(*v, ctx.at("dma_to"));
  return b;
}

OpDesc read_op(const json& j, const Ctx& ctx) {
  check_keys(j, ctx, {"type", "kernel", "stride", "dilation", "padding", "explicit_padding", "activation"});
  OpDesc op;
  std::vector<std::string> op_names;
  for (int i = 0; i < kNumOpTypes; ++i) op_names.emplace_back(op_type_name(static_cast<OpType>(i)));
  op.type = as_enum<OpType>(require(j, "type", ctx), ctx.at("type"), parse_op_type, op_names);
  op.resampling = ifm_resampling(op.type);
  if (const json* v = find(j, "kernel")) {
    const auto k = as_pair(*v, ctx.at("kernel"));
    op.kernel.h = k[0];
    op.kernel.w = k[1];
  }
  if (const json* v = find(j, "stride")) {
    const auto s = as_pair(*v, ctx.at("stride"));
    op.kernel.stride_y = s[0];
    op.kernel.stride_x = s[1];
  }
  if (const json* v = find(j, "dilation")) {
    const auto d = as_pair(*v, ctx.at("dilation"));
    op.kernel.dilation_y = d[0];
    op.kernel.dilation_x = d[1];
  }
  if (const json* v = find(j, "padding")) {
    const std::string s = as_string(*v, ctx.at("padding"));
    if (s == "SAME") {
      op.padding = PaddingMode::Same;
    } else if (s == "VALID") {
      op.padding = PaddingMode::Valid;
    } else if (s == "EXPLICIT") {
      op.padding = PaddingMode::Explicit;
    } else {
      ctx.at("padding").fail("unknown padding '" + s + "'", "valid: SAME, VALID, EXPLICIT");
    }
  }
  if (const json* v = find(j, "explicit_padding")) {
    const Shape s = as_shape(*v, ctx.at("explicit_padding"), 4, 4, 0);
    op.explicit_padding = Padding{s.dims[0], s.dims[1], s.dims[2], s.dims[3]};
  }
  if (const json* v = find(j, "activation"); v != nullptr && !v->is_null()) {
    op.activation = as_enum<Activation>(*v, ctx.at("activation"), parse_activation,
                                        {"Relu", "Relu6", "ReluN1To1", "Sigmoid", "Tanh", "LUT"});
  }
  return op;
}

void apply_arch_params(const json& j, const Ctx& ctx, arch::Arch& a) {
  check_keys(j, ctx,
             {"core_clock", "ncores", "axi_port_width_bits", "permanent_storage_mem_area",
              "feature_map_storage_mem_area", "fast_storage_mem_area", "spilling_enabled",
              "memory_bandwidths_per_cycle", "memory_burst_length", "memory_latency_read", "memory_latency_write"});
  // The same checks as the arch loader (arch/arch_loader.cpp): a positive clock, an AXI port width
  // that is a whole number of bytes.
  if (const json* v = find(j, "core_clock")) {
    a.core_clock = as_double(*v, ctx.at("core_clock"));
    if (!(a.core_clock > 0.0 && a.core_clock <= 1e12)) ctx.at("core_clock").fail("must be positive (Hz) and at most 1e12");
  }
  if (const json* v = find(j, "ncores")) a.accel.cores = as_int32(*v, ctx.at("ncores"), 1);
  if (const json* v = find(j, "axi_port_width_bits")) {
    a.axi_port_width_bits = static_cast<int>(common::as_int(*v, ctx.at("axi_port_width_bits"), 8, 1024));
    if (a.axi_port_width_bits % 8 != 0)
      ctx.at("axi_port_width_bits").fail(fmt::format("must be a multiple of 8 bits, got {}", a.axi_port_width_bits),
                                         "AXI ports are 64 or 128 bits wide");
  }
  if (const json* v = find(j, "permanent_storage_mem_area")) a.permanent_storage = as_area(*v, ctx.at("permanent_storage_mem_area"));
  if (const json* v = find(j, "feature_map_storage_mem_area")) a.feature_map_storage = as_area(*v, ctx.at("feature_map_storage_mem_area"));
  if (const json* v = find(j, "fast_storage_mem_area")) a.fast_storage = as_area(*v, ctx.at("fast_storage_mem_area"));
  if (const json* v = find(j, "spilling_enabled")) a.spilling_enabled = as_bool(*v, ctx.at("spilling_enabled"));
  const std::vector<std::string> areas = {"Sram", "Dram", "OnChipFlash", "OffChipFlash"};
  const auto per_area = [&](const char* key, auto apply) {
    const json* v = find(j, key);
    if (v == nullptr) return;
    const Ctx c = ctx.at(key);
    check_keys(*v, c, areas);
    for (const auto& item : v->items()) {
      arch::MemArea area = arch::MemArea::Unknown;
      arch::parse_mem_area(item.key(), area);
      apply(a.memory[static_cast<int>(area)], item.value(), c.at(item.key()));
    }
  };
  per_area("memory_bandwidths_per_cycle", [&](arch::MemoryParams& m, const json& v, const Ctx& c) {
    m.bandwidth_per_cycle = as_double(v, c);
    if (!(m.bandwidth_per_cycle > 0.0)) c.fail("must be positive");
    m.clock_scale = m.bandwidth_per_cycle * 8.0 / a.axi_port_width_bits;
  });
  per_area("memory_burst_length", [](arch::MemoryParams& m, const json& v, const Ctx& c) { m.burst_length = as_int32(v, c, 1); });
  per_area("memory_latency_read", [](arch::MemoryParams& m, const json& v, const Ctx& c) { m.latency_read = as_int32(v, c, 0); });
  per_area("memory_latency_write", [](arch::MemoryParams& m, const json& v, const Ctx& c) { m.latency_write = as_int32(v, c, 0); });
}

void read_rewrite_list(const json& j, const Ctx& ctx, Pass& p) {
  if (!j.is_array()) ctx.fail("expected a list of rewrites");
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Ctx c = ctx.index(i);
    check_keys(j[i], c, {"op", "tensor", "sub_purpose", "param_a", "param_b"});
    const std::string op = as_string(require(j[i], "op", c), c.at("op"));
    if (op == "Nop") continue;
    if (op != "ChangeTensorSubPurpose") c.at("op").fail("unknown rewrite '" + op + "'", "valid: ChangeTensorSubPurpose, Nop");
    if (as_string(require(j[i], "tensor", c), c.at("tensor")) != "weights")
      c.at("tensor").fail("only the weights can be rewritten", "use \"weights\"");
    if (as_string(require(j[i], "sub_purpose", c), c.at("sub_purpose")) != "DoubleBuffer")
      c.at("sub_purpose").fail("only DoubleBuffer is supported", "use \"DoubleBuffer\"");
    if (!p.weights) c.fail("a weights rewrite needs a pass with weights");
    p.weights_double_buffer_depth = as_int32(require(j[i], "param_a", c), c.at("param_a"), 1);
  }
}

void validate(const Pass& p, const Ctx& ctx) {
  const arch::NpuBlockType type = npu_block_type(p.op.type);
  if (is_binary_elementwise(p.op.type) && !p.ifm2) ctx.at("ifm2").fail("a binary elementwise op needs ifm2");
  if (!is_binary_elementwise(p.op.type) && p.ifm2) ctx.at("ifm2").fail("only binary elementwise ops take ifm2");
  if (has_weights(p.op.type) && !p.weights) ctx.at("weights").fail("this op needs weights");
  if (!has_weights(p.op.type) && p.weights) ctx.at("weights").fail("this op takes no weights");
  if (!has_weights(p.op.type) && p.bias) ctx.at("bias").fail("this op takes no bias");
  for (const FeatureMap* f : {&p.ifm, &p.ofm}) {
    if (f->shape.rank == 0) ctx.at(f == &p.ifm ? "ifm" : "ofm").at("shape").fail("a feature map needs at least one dimension");
  }
  if (p.primary_ofm && p.primary_ofm->shape.rank == 0)
    ctx.at("primary_ofm").at("shape").fail("a feature map needs at least one dimension");
  if (p.op.type == OpType::FullyConnected && p.weights && p.weights->shape.rank != 2 && p.weights->shape.rank != 4)
    ctx.at("weights.shape").fail("FullyConnected weights are [I, O]");
  if ((type == arch::NpuBlockType::ConvolutionMxN || type == arch::NpuBlockType::ConvolutionDepthWise) && p.weights &&
      p.weights->shape.rank != 4)
    ctx.at("weights.shape").fail("convolution weights are HWIO [kh, kw, I, O]");
  for (int i = 0; i < 4; ++i)
    if (p.block_config[i] <= 0) ctx.at("block_config").fail("block config entries must be positive");
  const auto& k = p.op.kernel;
  if (static_cast<double>(k.h) * k.w > kMaxPassDimension || (k.h - 1.0) * k.dilation_y + 1.0 > kMaxPassDimension ||
      (k.w - 1.0) * k.dilation_x + 1.0 > kMaxPassDimension)
    ctx.at("op").fail("kernel or dilation too large", "the kernel area and the dilated kernel are at most 2^24");
  const double macs = static_cast<double>(p.ofm.shape.elements()) * k.h * k.w * std::max(1, p.ifm.shape.last());
  if (macs > kMaxPassMacs) ctx.fail(fmt::format("the pass would do {:.3g} MACs", macs), "at most 2^53");
}

ordered_json shape_json(const Shape& s) {
  ordered_json a = ordered_json::array();
  for (int i = 0; i < s.rank; ++i) a.push_back(s.dims[i]);
  return a;
}

ordered_json fm_json(const FeatureMap& f) {
  ordered_json j;
  j["dtype"] = dtype_name(f.dtype);
  j["format"] = format_name(f.format);
  j["mem_area"] = arch::mem_area_name(f.mem_area);
  j["needs_linear_format"] = f.needs_linear_format;
  if (f.op_shape) j["op_shape"] = *f.op_shape;
  if (f.quant_scale) j["quant_scale"] = static_cast<double>(*f.quant_scale);
  j["shape"] = shape_json(f.shape);
  return j;
}

ordered_json block_json(const arch::Block& b) { return ordered_json::array({b.w, b.h, b.d}); }

ordered_json bandwidth_list(const BandwidthArray& bw) {
  ordered_json list = ordered_json::array();
  for (int a = 0; a < arch::kNumMemAreas; ++a)
    for (int p = 0; p < kNumPurposes; ++p)
      for (int d = 0; d < kNumDirections; ++d) {
        if (bw[a][p][d] == 0.0) continue;
        ordered_json e;
        e["bytes"] = bw[a][p][d];
        e["direction"] = direction_name(static_cast<Direction>(d));
        e["mem_area"] = arch::mem_area_name(static_cast<arch::MemArea>(a));
        e["purpose"] = purpose_name(static_cast<TensorPurpose>(p));
        list.push_back(std::move(e));
      }
  return list;
}

}  // namespace

PassInput read_pass_input(const json& input, const std::string& file, const std::string& path) {
  const Ctx ctx{file, path};
  check_keys(input, ctx,
             {"accelerator", "system_config", "memory_mode", "arch_params", "placement_name", "layer_name", "op", "ifm",
              "ifm2", "ofm", "primary_ofm", "weights", "bias", "lut", "block_config", "num_valid_block_configs", "has_npu_predecessor",
              "force_outputs_to_fast_storage", "rewrite_list"});
  const std::string accel = as_string(require(input, "accelerator", ctx), ctx.at("accelerator"));
  std::string sys = "internal-default";
  std::string mode = "internal-default";
  if (const json* v = find(input, "system_config")) sys = as_string(*v, ctx.at("system_config"));
  if (const json* v = find(input, "memory_mode")) mode = as_string(*v, ctx.at("memory_mode"));

  PassInput out;
  try {
    // A pass of a run whose system config or memory mode came from a --config file names a section
    // that is not built in; its arch_params then carry every value the cycle model reads.
    const auto sys_names = arch::system_config_names();
    const auto mode_names = arch::memory_mode_names();
    const bool known = std::find(sys_names.begin(), sys_names.end(), sys) != sys_names.end() &&
                       std::find(mode_names.begin(), mode_names.end(), mode) != mode_names.end();
    if (!known && find(input, "arch_params") != nullptr) {
      out.arch = arch::make_arch(accel);
      out.arch.system_config = sys;
      out.arch.memory_mode = mode;
    } else {
      out.arch = arch::make_arch(accel, sys, mode);
    }
  } catch (const common::UserError& e) {
    ctx.at(e.key_path()).fail(e.message(), e.hint());
  }
  if (const json* v = find(input, "arch_params")) apply_arch_params(*v, ctx.at("arch_params"), out.arch);

  if (const json* v = find(input, "placement_name")) out.labels.placement_name = as_string(*v, ctx.at("placement_name"));
  if (const json* v = find(input, "layer_name")) out.labels.layer_name = as_string(*v, ctx.at("layer_name"));
  if (const json* v = find(input, "num_valid_block_configs"))
    out.labels.num_valid_block_configs = as_int32(*v, ctx.at("num_valid_block_configs"), 0);

  Pass& p = out.pass;
  p.op = read_op(require(input, "op", ctx), ctx.at("op"));
  p.ifm = read_feature_map(require(input, "ifm", ctx), ctx.at("ifm"));
  p.ofm = read_feature_map(require(input, "ofm", ctx), ctx.at("ofm"));
  if (const json* v = find(input, "ifm2")) p.ifm2 = read_feature_map(*v, ctx.at("ifm2"));
  if (const json* v = find(input, "primary_ofm")) p.primary_ofm = read_feature_map(*v, ctx.at("primary_ofm"));
  if (const json* v = find(input, "weights")) p.weights = read_weights(*v, ctx.at("weights"));
  if (const json* v = find(input, "bias")) p.bias = read_bias(*v, ctx.at("bias"));
  if (const json* v = find(input, "lut")) p.lut = read_lut(*v, ctx.at("lut"));
  const Shape bc = as_shape(require(input, "block_config", ctx), ctx.at("block_config"), 4, 4);
  p.block_config = {bc.dims[0], bc.dims[1], bc.dims[2], bc.dims[3]};
  if (const json* v = find(input, "has_npu_predecessor")) p.has_npu_predecessor = as_bool(*v, ctx.at("has_npu_predecessor"));
  if (const json* v = find(input, "force_outputs_to_fast_storage"))
    p.force_outputs_to_fast_storage = as_bool(*v, ctx.at("force_outputs_to_fast_storage"));
  if (const json* v = find(input, "rewrite_list")) read_rewrite_list(*v, ctx.at("rewrite_list"), p);

  // Conv/DW kernels come from the weight shape when the op does not state them (§3.1).
  const auto type = npu_block_type(p.op.type);
  if ((type == arch::NpuBlockType::ConvolutionMxN || type == arch::NpuBlockType::ConvolutionDepthWise) &&
      p.weights && p.weights->shape.rank == 4 && find(require(input, "op", ctx), "kernel") == nullptr) {
    p.op.kernel.h = p.weights->shape.dims[0];
    p.op.kernel.w = p.weights->shape.dims[1];
  }
  validate(p, ctx);
  return out;
}

ordered_json write_arch_params(const arch::Arch& a) {
  ordered_json j;
  j["axi_port_width_bits"] = a.axi_port_width_bits;
  j["core_clock"] = a.core_clock;
  j["fast_storage_mem_area"] = arch::mem_area_name(a.fast_storage);
  j["feature_map_storage_mem_area"] = arch::mem_area_name(a.feature_map_storage);
  // Areas in alphabetical order, as in the reference data.
  constexpr std::array<arch::MemArea, 4> areas = {arch::MemArea::Dram, arch::MemArea::OffChipFlash,
                                                  arch::MemArea::OnChipFlash, arch::MemArea::Sram};
  ordered_json bw, burst, lr, lw;
  for (const auto area : areas) {
    const std::string name(arch::mem_area_name(area));
    bw[name] = a.mem(area).bandwidth_per_cycle;
    burst[name] = a.mem(area).burst_length;
    lr[name] = a.mem(area).latency_read;
    lw[name] = a.mem(area).latency_write;
  }
  j["memory_bandwidths_per_cycle"] = bw;
  j["memory_burst_length"] = burst;
  j["memory_latency_read"] = lr;
  j["memory_latency_write"] = lw;
  j["ncores"] = a.ncores();
  j["permanent_storage_mem_area"] = arch::mem_area_name(a.permanent_storage);
  j["spilling_enabled"] = a.spilling_enabled;
  return j;
}

ordered_json write_pass_input(const Pass& p, const arch::Arch& a, const PassLabels& labels) {
  ordered_json j;
  j["accelerator"] = a.accel.name;
  j["arch_params"] = write_arch_params(a);
  if (p.bias) {
    const Bias& b = *p.bias;
    ordered_json bj;
    if (b.dma()) bj["dma_to"] = arch::mem_area_name(b.dma_to);
    bj["element_size_bytes"] = b.element_size_bytes;
    bj["mem_area"] = arch::mem_area_name(b.mem_area);
    bj["shape"] = shape_json(b.shape);
    bj["storage_shape"] = shape_json(b.storage_shape);
    j["bias"] = bj;
  }
  j["block_config"] = p.block_config;
  j["force_outputs_to_fast_storage"] = p.force_outputs_to_fast_storage;
  j["has_npu_predecessor"] = p.has_npu_predecessor;
  j["ifm"] = fm_json(p.ifm);
  if (p.ifm2) j["ifm2"] = fm_json(*p.ifm2);
  if (!labels.layer_name.empty()) j["layer_name"] = labels.layer_name;
  if (p.lut) {
    ordered_json lj;
    lj["dtype"] = dtype_name(p.lut->dtype);
    lj["mem_area"] = arch::mem_area_name(p.lut->mem_area);
    lj["shape"] = shape_json(p.lut->shape);
    j["lut"] = lj;
  }
  j["memory_mode"] = a.memory_mode;
  if (labels.num_valid_block_configs) j["num_valid_block_configs"] = *labels.num_valid_block_configs;
  j["ofm"] = fm_json(p.ofm);
  if (p.primary_ofm) j["primary_ofm"] = fm_json(*p.primary_ofm);

  ordered_json op;
  if (p.op.activation != Activation::None) op["activation"] = activation_name(p.op.activation);
  const bool elementwise = is_elementwise(p.op.type);
  if (!elementwise) op["dilation"] = {p.op.kernel.dilation_y, p.op.kernel.dilation_x};
  if (p.op.explicit_padding) {
    const Padding& pad = *p.op.explicit_padding;
    op["explicit_padding"] = {pad.top, pad.left, pad.bottom, pad.right};
  }
  if (!elementwise) op["kernel"] = {p.op.kernel.h, p.op.kernel.w};
  if (p.op.padding) {
    op["padding"] = *p.op.padding == PaddingMode::Same ? "SAME" : *p.op.padding == PaddingMode::Valid ? "VALID" : "EXPLICIT";
  }
  if (!elementwise) op["stride"] = {p.op.kernel.stride_y, p.op.kernel.stride_x};
  op["type"] = op_type_name(p.op.type);
  j["op"] = op;

  if (!labels.placement_name.empty()) j["placement_name"] = labels.placement_name;
  if (p.weights_double_buffer_depth) {
    ordered_json rw;
    rw["op"] = "ChangeTensorSubPurpose";
    rw["param_a"] = *p.weights_double_buffer_depth;
    rw["sub_purpose"] = "DoubleBuffer";
    rw["tensor"] = "weights";
    j["rewrite_list"] = ordered_json::array({rw});
  }
  j["system_config"] = a.system_config;
  if (p.weights) {
    const Weights& w = *p.weights;
    ordered_json wj;
    wj["block_traversal"] = traversal_name(w.traversal);
    wj["compression_scale"] = w.compression_scale;
    if (w.dma()) wj["dma_to"] = arch::mem_area_name(w.dma_to);
    wj["dtype"] = dtype_name(w.dtype);
    wj["mem_area"] = arch::mem_area_name(w.mem_area);
    wj["shape"] = shape_json(w.shape);
    wj["storage_shape"] = shape_json(w.storage_shape);
    j["weights"] = wj;
  }
  return j;
}

ordered_json write_metrics(const PassMetrics& m) {
  ordered_json j;
  ordered_json totals;
  for (const auto area : {arch::MemArea::Dram, arch::MemArea::OffChipFlash, arch::MemArea::OnChipFlash, arch::MemArea::Sram})
    totals[std::string(arch::mem_area_name(area))] = area_bytes(m, area);
  j["bandwidth_totals_by_area"] = totals;
  j["bandwidths"] = bandwidth_list(m.bandwidth);
  ordered_json cycles;
  for (const auto c : {PassCycles::DramAccess, PassCycles::Npu, PassCycles::OffChipFlashAccess,
                       PassCycles::OnChipFlashAccess, PassCycles::SramAccess, PassCycles::Total})
    cycles[std::string(pass_cycles_name(c))] = m.cycle(c);
  j["cycles"] = cycles;
  j["energy_pj"] = m.energy_pj;
  j["ifm_read_multiple"] = m.ifm_read_multiple;
  j["macs"] = m.macs;
  j["scaled_bandwidths"] = bandwidth_list(m.scaled_bandwidth);
  ordered_json trace;
  if (m.trace.has_conv_pooling) {
    trace["block_traversal"] = traversal_name(m.trace.block_traversal);
    trace["conv_pooling_cycles"] = m.trace.conv_pooling_cycles;
    trace["ifm_block"] = block_json(m.trace.ifm_block);
    trace["kernel_dims"] = m.trace.kernel_dims;
  }
  if (m.trace.has_conv_pooling) trace["ofm_block"] = block_json(m.trace.ofm_block);
  trace["output_cycles_calls"] = ordered_json::array({m.trace.output_cycles});
  j["trace"] = trace;
  j["weight_read_multiple"] = m.weight_read_multiple;
  return j;
}

}  // namespace npumap::model
