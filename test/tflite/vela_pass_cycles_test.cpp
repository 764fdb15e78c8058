// Per-pass cycles against Vela's compile of real models: for every (model, config) record of
// ../shared/data/vela_tflite_reference.json and every NPU pass record in it, the cycle model run on
// Vela's own pass parameters must reproduce the six cycle components Vela printed for that pass.
//
// Each pass is written as a pass-JSON `input` (docs/pass-format.md) with nlohmann::json and run
// through the same reader and evaluator `mapper eval` uses (model::read_pass_input, model::evaluate),
// so the check is the one `mapper eval --check` makes, with the record's cycles as `expected`.
// What each input key comes from (docs/design/tflite-import.md "Per-pass cycles against Vela"):
//   * the record: op type, kernel, stride, dilation, padding, activation, block config, op shapes, and
//     per tensor the shape, dtype, layout and memory area; the weights' shape, bandwidth compression
//     scale, traversal, where they are stored and whether a DMA copies them to SRAM (its source's
//     storage shape sizes the DMA); the packed 10-byte scale/bias and its FSBias DMA;
//   * the .tflite through our lowering (workloads/tflite/npu_lowering.hpp), matched to the record by
//     Vela's pass name: the quantisation scales (Add/Sub output index, §6.2; 40-bit accumulator,
//     §4.6), the LUT table of a LUT activation (its DMA into SHRAM), and has_npu_predecessor: whether
//     an input of the pass is written by an NPU pass of the same NPU subgraph (Vela's
//     ps.dag_predecessors; a pass reading only the subgraph's inputs pays its DMAs in Npu cycles);
//   * the lowering's needs_linear_format per feature map: Vela's graph optimiser clears it for every
//     NHCWB16-eligible tensor (all of which the scheduler converts, checked by npu_lowering_test) and
//     also for a tensor passed between two NPU subgraphs, which stays NHWC yet is costed as NHCWB16
//     by the burst rule (npu-model.md §11.8);
//   * Vela's rules: Clip costs as no activation (§6.2 activation index 2).
// The record's cycles are Vela's values rounded to 3 decimals, so a component matches when it is
// within half a unit of the third decimal (plus a relative 1e-9 for the doubles themselves).
// Skips with a message when ../shared is absent (tests run from the project root).

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arch/arch.hpp"
#include "model/evaluate.hpp"
#include "model/pass_json.hpp"
#include "workloads/tflite/npu_lowering.hpp"
#include "workloads/tflite/reader.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kShared = fs::path("..") / "shared";

/// The record's dtype spelling in the pass JSON's.
std::string dtype_of(const json& t) { return t.at("dtype").get<std::string>(); }

std::optional<double> scale_of(const NpuQuant& q) {
  if (q.scale.empty()) return std::nullopt;
  return static_cast<double>(q.scale.front());
}

/// Vela's needs_linear_format of lowered tensor `id` (true for tensors the lowering creates: constants).
bool needs_linear(const NpuGraph& g, int id) {
  return id < 0 || g.tensors.at(static_cast<std::size_t>(id)).needs_linear_format;
}

/// A feature map of the record (`ifm`, `ifm2`, `ofm`) with Vela's op shape for it, our scale and
/// Vela's needs_linear_format for it.
json feature_map(const json& t, const json& op_shape, const std::optional<double>& scale, bool linear) {
  json f;
  f["shape"] = t.at("shape");
  f["dtype"] = dtype_of(t);
  f["mem_area"] = t.at("mem_area");
  f["format"] = t.at("format");
  f["needs_linear_format"] = linear;
  f["quant_scale"] = scale ? json(*scale) : json(nullptr);
  f["op_shape"] = op_shape;
  return f;
}

/// Whether an input of `p` is written by an NPU pass of the same NPU subgraph (Vela's
/// ps.dag_predecessors holding an Npu pass, §6.5 A.6).
bool has_npu_predecessor(const NpuGraph& g, const NpuPass& p) {
  for (int t : p.inputs)
    for (const NodeRef& r : g.tensors.at(static_cast<std::size_t>(t)).producers)
      if (r.kind == NodeRef::Kind::NpuPass && g.passes.at(static_cast<std::size_t>(r.index)).npu_subgraph == p.npu_subgraph &&
          &g.passes.at(static_cast<std::size_t>(r.index)) != &p)
        return true;
  return false;
}

/// The LUT tensor Vela creates for a LUT activation: 256 int8 entries for the 8-bit activation
/// tables, 256 int32 for the 8-bit softmax exp table, 512 int32 for the 16-bit softmax tables.
json lut_json(LutKind kind, const arch::Arch& a) {
  json l;
  switch (kind) {
    case LutKind::SoftmaxExp:
      l["shape"] = {1, 1, 1, 256};
      l["dtype"] = "int32";
      break;
    case LutKind::SoftmaxExp16:
    case LutKind::SoftmaxReciprocal16:
      l["shape"] = {1, 1, 1, 512};
      l["dtype"] = "int32";
      break;
    default:
      l["shape"] = {1, 1, 1, 256};
      l["dtype"] = "int8";
      break;
  }
  l["mem_area"] = std::string(arch::mem_area_name(a.permanent_storage));  // LUTs live in permanent storage
  return l;
}

/// The pass-JSON `input` for record pass `rp` of `rec`, with `p` our lowered pass of the same name.
json pass_input(const json& rec, const json& rp, const NpuPass& p, const NpuGraph& g, const arch::Arch& a) {
  json in;
  in["accelerator"] = rec.at("config");
  in["system_config"] = rec.at("system_config");
  in["memory_mode"] = rec.at("memory_mode");
  in["layer_name"] = rp.at("name");
  const json& po = rp.at("primary_op");
  json op;
  op["type"] = po.at("type");
  op["kernel"] = po.at("kernel_hw");
  op["stride"] = po.at("stride_hw");
  op["dilation"] = po.at("dilation_hw");
  if (po.contains("padding")) op["padding"] = po.at("padding");
  if (po.contains("explicit_padding_tlbr")) op["explicit_padding"] = po.at("explicit_padding_tlbr");
  const std::string act = po.value("activation", "None");
  op["activation"] = act == "Clip" ? "None" : act;  // Clip has the cost of no activation (§6.2)
  in["op"] = op;
  in["ifm"] = feature_map(rp.at("ifm"), rp.at("ifm_shapes").at(0), scale_of(p.ifm_quant), needs_linear(g, p.ifm));
  if (rp.contains("ifm2") && rp.at("ifm2").is_object())
    in["ifm2"] = feature_map(rp.at("ifm2"), rp.at("ifm_shapes").at(1), scale_of(p.ifm2_quant), needs_linear(g, p.ifm2));
  in["ofm"] = feature_map(rp.at("ofm"), rp.at("ofm_shapes").at(0), scale_of(p.ofm_quant), needs_linear(g, p.ofm));
  if (const json& w = rp.at("weights"); w.is_object()) {
    json wj;
    wj["shape"] = w.at("shape");
    wj["dtype"] = w.at("dtype");
    wj["compression_scale"] = w.at("bandwidth_compression_scale");
    wj["block_traversal"] = rp.at("block_traversal");
    if (w.contains("dma_source")) {  // the op reads the SRAM copy; the DMA reads the source
      wj["mem_area"] = w.at("dma_source").at("mem_area");
      wj["storage_shape"] = w.at("dma_source").at("storage_shape");
      wj["dma_to"] = w.at("mem_area");
    } else {
      wj["mem_area"] = w.at("mem_area");
      wj["storage_shape"] = w.at("storage_shape");
    }
    in["weights"] = wj;
  }
  if (const json& b = rp.at("scale_bias"); b.is_object()) {
    json bj;
    bj["shape"] = b.at("shape");
    bj["element_size_bytes"] = b.at("element_size_bytes");
    if (b.contains("dma_source")) {  // Vela's move of the scales to fast storage (FSBias)
      bj["mem_area"] = b.at("dma_source").at("mem_area");
      bj["storage_shape"] = b.at("dma_source").at("storage_shape");
      bj["dma_to"] = b.at("mem_area");
    } else {
      bj["mem_area"] = b.at("mem_area");
      bj["storage_shape"] = b.at("storage_shape");
    }
    in["bias"] = bj;
  }
  if (p.activation == NpuActivation::LUT) in["lut"] = lut_json(p.lut, a);
  in["block_config"] = rp.at("block_config_HWIdOd");
  in["has_npu_predecessor"] = has_npu_predecessor(g, p);
  return in;
}

/// The six components as the record names them, in PassCycles order.
constexpr std::array<const char*, model::kNumPassCycles> kComponents = {
    "npu", "sram_access", "dram_access", "on_chip_flash_access", "off_chip_flash_access", "total"};

/// Vela's value rounded to 3 decimals (the record) against ours: within half a unit of the last
/// printed decimal, plus the relative 1e-9 of `mapper eval --check`.
bool cycles_match(double ref, double ours) { return std::abs(ref - ours) <= 0.0005 + 1e-9 * std::abs(ref); }

/// Our pass of the record pass's name; when several share it, the one with the record's op shapes.
const NpuPass* find_pass(const std::multimap<std::string, const NpuPass*>& by_name, const json& rp) {
  const auto [lo, hi] = by_name.equal_range(rp.at("name").get<std::string>());
  const NpuPass* first = nullptr;
  for (auto it = lo; it != hi; ++it) {
    const NpuPass& p = *it->second;
    if (first == nullptr) first = &p;
    if (json(p.ofm_shape) == rp.at("ofm_shapes").at(0) && json(p.ifm_shape) == rp.at("ifm_shapes").at(0)) return &p;
  }
  return first;
}

struct Totals {
  int total = 0;
  int exact = 0;
  std::map<std::string, int> mismatch_by_class;
  std::vector<std::string> details;
};

/// Why a pass does not match, from the components that differ.
std::string classify(const json& rp, const std::array<bool, model::kNumPassCycles>& ok) {
  std::string c = rp.at("primary_op").at("type").get<std::string>() + ":";
  for (int i = 0; i < model::kNumPassCycles; ++i)
    if (!ok[static_cast<std::size_t>(i)]) c += std::string(" ") + kComponents[static_cast<std::size_t>(i)];
  return c;
}

TEST(VelaPassCycles, EveryNpuPassOfEveryRecord) {
  const fs::path ref_path = kShared / "data" / "vela_tflite_reference.json";
  if (!fs::exists(ref_path)) GTEST_SKIP() << "../shared is absent: " << ref_path << " not found";
  std::ifstream ref_in(ref_path);
  const json ref = json::parse(ref_in);

  Totals all;
  std::cout << "model                                          config         exact/passes\n";
  for (const json& rec : ref.at("records")) {
    if (rec.at("status") != "ok") continue;
    const std::string model = rec.at("model").get<std::string>();
    const std::string config = rec.at("config").get<std::string>();
    const fs::path path = kShared / "models" / (model + ".tflite");
    if (!fs::exists(path)) {
      ADD_FAILURE() << "missing model " << path;
      continue;
    }
    NpuLoweringOptions opts;
    opts.accelerator_config = config;
    const NpuGraph g = lower_for_npu(read_model(path.string()), opts);
    std::multimap<std::string, const NpuPass*> by_name;
    for (const NpuPass& p : g.passes) by_name.emplace(p.name, &p);
    const arch::Arch a = arch::make_arch(config, rec.at("system_config").get<std::string>(),
                                         rec.at("memory_mode").get<std::string>());

    Totals t;
    for (const json& sg : rec.at("subgraphs")) {
      if (sg.at("placement") != "Npu") continue;
      for (const json& cp : sg.at("cascaded_passes"))
        for (const json& rp : cp.at("pass_records")) {
          if (rp.at("placement") != "Npu") continue;
          ++t.total;
          const NpuPass* p = find_pass(by_name, rp);
          if (p == nullptr) {
            ++t.mismatch_by_class["no lowered pass of that name"];
            continue;
          }
          const json input = pass_input(rec, rp, *p, g, a);
          const model::PassInput pi = model::read_pass_input(input, path.string(), "pass " + rp.at("name").get<std::string>());
          const model::PassMetrics m = model::evaluate(pi.arch, pi.pass);
          std::array<bool, model::kNumPassCycles> ok{};
          bool all_ok = true;
          for (std::size_t i = 0; i < kComponents.size(); ++i) {
            ok[i] = cycles_match(rp.at("cycles").at(kComponents[i]).get<double>(), m.cycles[i]);
            all_ok = all_ok && ok[i];
          }
          // MACs too, exactly (an integer in both).
          if (rp.at("macs").get<std::int64_t>() != m.macs) ++t.mismatch_by_class["macs"];
          if (all_ok) {
            ++t.exact;
            continue;
          }
          const std::string cls = classify(rp, ok);
          ++t.mismatch_by_class[cls];
          std::string d = model + " " + config + " '" + rp.at("name").get<std::string>() + "' " + cls + " |";
          for (std::size_t i = 0; i < kComponents.size(); ++i)
            if (!ok[i])
              d += std::string(" ") + kComponents[i] + " vela " + rp.at("cycles").at(kComponents[i]).dump() + " ours " +
                   std::to_string(m.cycles[i]);
          t.details.push_back(d + "\n    input " + input.dump());
        }
    }
    std::cout << model << std::string(model.size() < 47 ? 47 - model.size() : 1, ' ') << config << "  " << t.exact << "/"
              << t.total << "\n";
    all.total += t.total;
    all.exact += t.exact;
    for (const auto& [k, v] : t.mismatch_by_class) all.mismatch_by_class[k] += v;
    for (auto& d : t.details) all.details.push_back(std::move(d));
  }
  std::cout << "all records: " << all.exact << "/" << all.total << " passes exact\n";
  for (const auto& [k, v] : all.mismatch_by_class) std::cout << "  " << v << " x " << k << "\n";
  for (std::size_t i = 0; i < all.details.size() && i < 40; ++i) std::cout << all.details[i] << "\n";
  EXPECT_EQ(all.exact, all.total);
}

}  // namespace
}  // namespace npumap::tflite
