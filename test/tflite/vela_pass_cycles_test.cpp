// Per-pass cycles against Vela's compile of real models: for every (model, config) record of
// test/data/vela_tflite_reference.json and every NPU pass record in it, the cycle model run on
// Vela's own pass parameters must reproduce the six cycle components Vela printed for that pass.
//
// Each pass is written as a pass-JSON `input` (docs/pass-format.md) with nlohmann::json and run
// through the same reader and evaluator `mapper eval` uses (model::read_pass_input, model::evaluate),
// so the check is the one `mapper eval --check` makes, with the record's cycles as `expected` (and
// the record's rounding allowed for, below).
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
// The network totals follow: ours over the NPU passes plus Vela's figures for its CPU passes (whose
// tensors' bandwidth Vela counts) equal each record's totals. A second test drops each derived input in
// turn and pins how many passes it decides. Fails when the reference or a model is missing (tests run
// from the project root; test/support/reference_data.hpp).

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arch/arch.hpp"
#include "model/evaluate.hpp"
#include "model/pass_json.hpp"
#include "workloads/tflite/npu_lowering.hpp"
#include "workloads/tflite/reader.hpp"
#include "test/support/reference_data.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using npumap::testing::kModelsDir;
using npumap::testing::kVelaReference;

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

/// Where the inputs the record lacks come from; each `false` drops one source (the ablation test).
struct Sources {
  bool predecessors = true;  ///< false: every pass counts as having an NPU predecessor
  bool lut = true;           ///< false: no LUT table input
  bool op_shapes = true;     ///< false: op shapes derived from the tensor shapes
  bool linear_flags = true;  ///< false: needs_linear_format read off the final layout (NHWC = linear)
  bool scales = true;        ///< false: no quantisation scales
};

/// The pass-JSON `input` for record pass `rp` of `rec`, with `p` our lowered pass of the same name.
json pass_input(const json& rec, const json& rp, const NpuPass& p, const NpuGraph& g, const arch::Arch& a,
                const Sources& src) {
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
  const auto fm = [&](const char* key, const json& op_shape, const NpuQuant& q, int id) {
    const json& t = rp.at(key);
    json f = feature_map(t, op_shape, src.scales ? scale_of(q) : std::nullopt,
                         src.linear_flags ? needs_linear(g, id) : t.at("format") == "NHWC");
    if (!src.op_shapes) f.erase("op_shape");
    return f;
  };
  in["ifm"] = fm("ifm", rp.at("ifm_shapes").at(0), p.ifm_quant, p.ifm);
  if (rp.contains("ifm2") && rp.at("ifm2").is_object()) in["ifm2"] = fm("ifm2", rp.at("ifm_shapes").at(1), p.ifm2_quant, p.ifm2);
  in["ofm"] = fm("ofm", rp.at("ofm_shapes").at(0), p.ofm_quant, p.ofm);
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
  if (p.activation == NpuActivation::LUT && src.lut) in["lut"] = lut_json(p.lut, a);
  if (p.created_avgpool) {  // the created AvgPool's copy of its input, in the feature-map storage area
    json c = in["ifm"];
    c["mem_area"] = std::string(arch::mem_area_name(a.feature_map_storage));
    c["op_shape"] = rp.at("ofm_shapes").at(0);
    in["primary_ofm"] = c;
  }
  in["block_config"] = rp.at("block_config_HWIdOd");
  in["has_npu_predecessor"] = !src.predecessors || has_npu_predecessor(g, p);
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

/// A record with its model lowered for the record's accelerator.
struct LoadedRecord {
  const json* rec = nullptr;
  std::string model, config, path;
  NpuGraph graph;
  std::multimap<std::string, const NpuPass*> by_name;
  arch::Arch arch;
};

/// The reference and its 36 lowered records, loaded once for all tests of this file; null when
/// the extracted reference is missing.
struct Reference {
  json data;
  std::vector<std::unique_ptr<LoadedRecord>> records;
  std::vector<std::string> missing_models;
};

const Reference* reference() {
  static const std::unique_ptr<Reference> ref = []() -> std::unique_ptr<Reference> {
    const fs::path ref_path = kVelaReference;
    if (!fs::exists(ref_path)) return nullptr;
    auto r = std::make_unique<Reference>();
    std::ifstream in(ref_path);
    r->data = json::parse(in);
    for (const json& rec : r->data.at("records")) {
      if (rec.at("status") != "ok") continue;
      auto l = std::make_unique<LoadedRecord>();
      l->rec = &rec;
      l->model = rec.at("model").get<std::string>();
      l->config = rec.at("config").get<std::string>();
      l->path = (kModelsDir / (l->model + ".tflite")).string();
      if (!fs::exists(l->path)) {
        r->missing_models.push_back(l->path);
        continue;
      }
      NpuLoweringOptions opts;
      opts.accelerator_config = l->config;
      l->graph = lower_for_npu(read_model(l->path), opts);
      for (const NpuPass& p : l->graph.passes) l->by_name.emplace(p.name, &p);
      l->arch = arch::make_arch(l->config, rec.at("system_config").get<std::string>(), rec.at("memory_mode").get<std::string>());
      r->records.push_back(std::move(l));
    }
    return r;
  }();
  return ref.get();
}

struct Totals {
  int total = 0;
  int exact = 0;
  int rounded_components = 0;  ///< matching components that differ by more than a relative 1e-9
  int mac_mismatches = 0;
  std::array<double, model::kNumPassCycles> sums{};  ///< our cycles summed over the NPU passes
  /// Vela's figures of the other passes: a CPU pass costs no Npu cycles, but Vela's
  /// performance_metrics_for_pass still counts the bandwidth of its tensors (MemoryOnly and
  /// StartupInit passes cost nothing).
  std::array<double, model::kNumPassCycles> other_passes{};
  int other_passes_costed = 0;  ///< how many of them have non-zero figures (each rounded to 3 decimals)
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

/// Every NPU pass of one record, built from `src`, evaluated and compared.
Totals check_record(const LoadedRecord& l, const Sources& src) {
  Totals t;
  for (const json& sg : l.rec->at("subgraphs")) {
    for (const json& cp : sg.at("cascaded_passes"))
      for (const json& rp : cp.at("pass_records")) {
        if (sg.at("placement") != "Npu" || rp.at("placement") != "Npu") {
          for (std::size_t i = 0; i < kComponents.size(); ++i) t.other_passes[i] += rp.at("cycles").at(kComponents[i]).get<double>();
          if (rp.at("cycles").at("total").get<double>() > 0) ++t.other_passes_costed;
          continue;
        }
        ++t.total;
        const NpuPass* p = find_pass(l.by_name, rp);
        if (p == nullptr) {
          ++t.mismatch_by_class["no lowered pass of that name"];
          continue;
        }
        // The same reader and evaluator as `mapper eval`.
        const json input = pass_input(*l.rec, rp, *p, l.graph, l.arch, src);
        const model::PassInput pi = model::read_pass_input(input, l.path, "pass '" + rp.at("name").get<std::string>() + "'");
        const model::PassMetrics m = model::evaluate(pi.arch, pi.pass);
        std::array<bool, model::kNumPassCycles> ok{};
        bool all_ok = true;
        for (std::size_t i = 0; i < kComponents.size(); ++i) {
          const double want = rp.at("cycles").at(kComponents[i]).get<double>();
          ok[i] = cycles_match(want, m.cycles[i]);
          all_ok = all_ok && ok[i];
          if (ok[i] && std::abs(want - m.cycles[i]) > 1e-9 * std::abs(want)) ++t.rounded_components;
        }
        if (rp.at("macs").get<std::int64_t>() != m.macs) ++t.mac_mismatches;  // an integer in both
        for (std::size_t i = 0; i < kComponents.size(); ++i) t.sums[i] += m.cycles[i];
        if (all_ok) {
          ++t.exact;
          continue;
        }
        const std::string cls = classify(rp, ok);
        ++t.mismatch_by_class[cls];
        std::string d = l.model + " " + l.config + " '" + rp.at("name").get<std::string>() + "' " + cls + " |";
        for (std::size_t i = 0; i < kComponents.size(); ++i)
          if (!ok[i])
            d += std::string(" ") + kComponents[i] + " vela " + rp.at("cycles").at(kComponents[i]).dump() + " ours " +
                 std::to_string(m.cycles[i]);
        t.details.push_back(d + "\n    input " + input.dump());
      }
  }
  return t;
}

void add(Totals& all, Totals&& t) {
  all.total += t.total;
  all.exact += t.exact;
  all.rounded_components += t.rounded_components;
  all.mac_mismatches += t.mac_mismatches;
  for (const auto& [k, v] : t.mismatch_by_class) all.mismatch_by_class[k] += v;
  for (auto& d : t.details) all.details.push_back(std::move(d));
}

std::string summary(const Totals& t) {
  std::string s = std::to_string(t.exact) + "/" + std::to_string(t.total) + " passes exact";
  for (const auto& [k, v] : t.mismatch_by_class) s += "\n  " + std::to_string(v) + " x " + k;
  for (std::size_t i = 0; i < t.details.size() && i < 20; ++i) s += "\n" + t.details[i];
  return s;
}

TEST(VelaPassCycles, EveryNpuPassOfEveryRecord) {
  const Reference* ref = reference();
  ASSERT_NE(ref, nullptr) << kVelaReference << " is missing (built by the tests' target npumap_test_data)";
  EXPECT_TRUE(ref->missing_models.empty()) << ref->missing_models.front();
  Totals all;
  std::cout << "model                                          config         exact/passes\n";
  for (const auto& l : ref->records) {
    Totals t = check_record(*l, Sources{});
    std::cout << l->model << std::string(l->model.size() < 47 ? 47 - l->model.size() : 1, ' ') << l->config << "  "
              << t.exact << "/" << t.total << "\n";
    // No known exceptions: every NPU pass of every record reproduces all six components.
    EXPECT_EQ(t.exact, t.total) << l->model << " " << l->config << ": " << summary(t);
    // And so the network's figures: Vela sums every component, Total included, over all passes (§6.7),
    // its CPU passes' bandwidth included; ours over the NPU passes plus Vela's for the others.
    // Each of those passes and the network figure are rounded to 3 decimals.
    for (std::size_t i = 0; i < kComponents.size(); ++i)
      EXPECT_NEAR(l->rec->at("cycles").at(kComponents[i]).get<double>(), t.sums[i] + t.other_passes[i],
                  0.0005 * (t.other_passes_costed + 1) + 1e-9 * t.sums[i])
          << l->model << " " << l->config << " network " << kComponents[i] << ": vela "
          << l->rec->at("cycles").at(kComponents[i]).dump() << " ours " << t.sums[i] << " + other passes "
          << t.other_passes[i];
    if (t.other_passes[5] > 0)
      std::cout << "    of Vela's total " << l->rec->at("cycles").at("total").dump() << ", " << t.other_passes[5]
                << " come from its CPU passes\n";
    add(all, std::move(t));
  }
  std::cout << "all records: " << all.exact << "/" << all.total << " passes exact; " << all.rounded_components
            << " matching components differ from the record only by its rounding to 3 decimals\n";
  EXPECT_EQ(ref->records.size(), static_cast<std::size_t>(npumap::testing::kVelaReferenceRecords));
  EXPECT_EQ(all.total, 3498);  // the reference's NPU pass records (test/data/README.md)
  EXPECT_EQ(all.exact, all.total);
  EXPECT_EQ(all.mac_mismatches, 0);
  // The comparison allows the record's rounding, and it is needed (e.g. 278.78 for 257 * 128/118).
  EXPECT_GT(all.rounded_components, 0);
}

// Each input taken from the .tflite (or from Vela's rules) matters: dropping it breaks exactly this
// many passes. So the comparison can fail, and each source is pinned by the passes that need it.
TEST(VelaPassCycles, EachSourceOfTheMissingInputsIsNeeded) {
  const Reference* ref = reference();
  ASSERT_NE(ref, nullptr) << kVelaReference << " is missing (built by the tests' target npumap_test_data)";
  struct Case {
    const char* name;
    Sources src;
    int exact;  // measured: the passes the dropped input does not affect
  };
  // Each count is (passes) - (passes the dropped input changes); test/data/README.md has 3498 passes.
  const std::vector<Case> cases = {
      // 30 first passes of an NPU subgraph (or reading only its inputs) pay their DMAs in Npu cycles.
      {"has_npu_predecessor always true", Sources{false, true, true, true, true}, 3468},
      // 756 LUT passes read their table from permanent storage (flash or DRAM).
      {"no LUT table", Sources{true, false, true, true, true}, 2742},
      // 69 passes view a tensor through another shape: concatenation slices, absorbed reshapes, the
      // softmax's MaxPool view, swapped broadcast operands.
      {"op shapes from tensor shapes", Sources{true, true, false, true, true}, 3429},
      // 32 passes read or write a tensor passed between two NPU subgraphs (NHWC, costed as NHCWB16).
      {"needs_linear_format from the layout", Sources{true, true, true, false, true}, 3466},
      // 529 Add passes with different input scales use the advanced Add cost (§6.2).
      {"no quantisation scales", Sources{true, true, true, true, false}, 2969},
  };
  for (const Case& c : cases) {
    Totals all;
    for (const auto& l : ref->records) add(all, check_record(*l, c.src));
    std::cout << c.name << ": " << all.exact << "/" << all.total << " passes exact\n";
    for (const auto& [k, v] : all.mismatch_by_class) std::cout << "  " << v << " x " << k << "\n";
    EXPECT_LT(all.exact, all.total) << c.name;
    EXPECT_EQ(all.exact, c.exact) << c.name;
  }
}

}  // namespace
}  // namespace npumap::tflite
