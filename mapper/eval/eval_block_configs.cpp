// `mapper eval --block-configs FILE.json [--check]`.
//
// The block-config reference file (docs/design/pass-format-notes.md) lists Vela's SHRAM allocation, its
// valid block-config enumeration and the scheduler's shortlist for one layer per record. This driver
// turns each record into a model::BlockConfigQuery, runs model::make_shram_allocation,
// model::find_valid_block_configs and model::scheduler_block_configs on arch::make_arch(accelerator)
// (default system config, one arch and block-config map per accelerator), and either writes the
// results as JSON or, with --check, compares them with the record field by field.
//
// Flow: read_records (all validation, so a bad record fails before any work and with its key path)
// -> evaluate each record -> write JSON and/or print the comparison.

#include "mapper/eval/eval_block_configs.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "arch/arch.hpp"
#include "common/files.hpp"
#include "common/hash.hpp"
#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/user_error.hpp"
#include "model/block_config.hpp"
#include "npumap_version.hpp"

namespace npumap::eval {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

/// Vela's alloc fields of one record, in the reference's terms.
struct AllocFields {
  int ifm_block_depth = 0;
  bool is_equal_depth_op = false;
  int use_ifm_element = 0;
  int use_accumulator_element = 0;
  int ifm_count = 0;
  int available_banks = 0;
};

/// What a record expects (present only when checking).
struct Expected {
  AllocFields alloc;
  int num_valid = 0;
  std::vector<model::BlockConfig> shortlist;
  std::optional<std::vector<model::BlockConfig>> valid;
};

/// One validated input record.
struct Record {
  std::string accelerator;
  std::string layer_name;
  std::string ifm_dtype;
  model::BlockConfigQuery query;
  std::optional<Expected> expected;
};

/// One record's results.
struct Result {
  AllocFields alloc;
  std::vector<model::BlockConfig> valid;
  std::vector<model::BlockConfig> shortlist;
};

struct OpInfo {
  const char* name;
  arch::NpuBlockType block_type;
  model::Resampling resampling;
};

// Op names of docs/design/npu-model.md §1.4 with their block types; transpose conv and resize read the IFM upscaled.
constexpr OpInfo kOps[] = {
    {"Conv2D", arch::NpuBlockType::ConvolutionMxN, model::Resampling::None},
    {"Conv2DBias", arch::NpuBlockType::ConvolutionMxN, model::Resampling::None},
    {"QuantizedConv2D", arch::NpuBlockType::ConvolutionMxN, model::Resampling::None},
    {"Conv2DBackpropInput", arch::NpuBlockType::ConvolutionMxN, model::Resampling::Transpose},
    {"Conv2DBackpropInputSwitchedBias", arch::NpuBlockType::ConvolutionMxN, model::Resampling::Transpose},
    {"DepthwiseConv2DBias", arch::NpuBlockType::ConvolutionDepthWise, model::Resampling::None},
    {"FullyConnected", arch::NpuBlockType::VectorProduct, model::Resampling::None},
    {"MatMul", arch::NpuBlockType::VectorProduct, model::Resampling::None},
    {"QuantizedMatMul", arch::NpuBlockType::VectorProduct, model::Resampling::None},
    {"MaxPool", arch::NpuBlockType::Pooling, model::Resampling::None},
    {"AvgPool", arch::NpuBlockType::Pooling, model::Resampling::None},
    {"QuantizedMaxPool", arch::NpuBlockType::Pooling, model::Resampling::None},
    {"QuantizedAvgPool", arch::NpuBlockType::Pooling, model::Resampling::None},
    {"ResizeBilinear", arch::NpuBlockType::Pooling, model::Resampling::Nearest},
    {"ReduceSum", arch::NpuBlockType::ReduceSum, model::Resampling::None},
    {"Add", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"Sub", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"Mul", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"Minimum", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"Maximum", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"SHL", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"SHR", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"RescaleAdd", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"Abs", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"CLZ", arch::NpuBlockType::ElementWise, model::Resampling::None},
    {"LeakyRelu", arch::NpuBlockType::ElementWise, model::Resampling::None},
};

constexpr const char* kRecordKeys[] = {
    "accelerator",        "layer_name", "op_type",   "ifm_shape", "ifm2_shape",
    "ofm_shape",          "ifm_dtype",  "ofm_dtype", "kernel_hw", "stride_hw",
    "dilation_hw",        "uses_lut",   "alloc",     "num_valid", "scheduler_candidates_limit16",
    "valid_block_configs"};
constexpr const char* kAllocKeys[] = {"ifm_block_depth",         "is_equal_depth_op", "use_ifm_element",
                                      "use_accumulator_element", "ifm_count",         "available_banks"};

/// Reads and validates the records; every error names the file and the key path.
class RecordReader {
 public:
  explicit RecordReader(std::string file) : file_(std::move(file)) {}

  std::vector<Record> read(bool need_expected) {
    const json root = common::read_json_file<json>(file_, "the file must be a JSON list of block-config records");
    if (!root.is_array()) {
      throw common::UserError({file_}, "", "expected a JSON list of records",
                      "see the block-config record format in docs/pass-format.md");
    }
    std::vector<Record> records;
    records.reserve(root.size());
    for (std::size_t i = 0; i < root.size(); ++i) records.push_back(read_record(root[i], i, need_expected));
    return records;
  }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& message, const std::string& hint = {}) const {
    throw common::UserError({file_}, key, message, hint);
  }

  static std::string key_of(std::size_t i, std::string_view key) { return fmt::format("records[{}].{}", i, key); }

  common::JsonPath path_of(const std::string& key) const { return common::JsonPath{file_, key}; }

  const json& require(const json& rec, std::size_t i, const char* key) const {
    return common::require(rec, key, path_of(fmt::format("records[{}]", i)),
                           "every record needs this key (docs/design/pass-format-notes.md)");
  }

  std::string string_of(const json& v, const std::string& key) const { return common::as_string(v, path_of(key)); }

  /// Every integer of a record (shapes, kernel, stride, dilation, counts) is at most 2^16, the NPU's
  /// largest tensor dimension, so the SHRAM and block arithmetic stays far from overflow.
  int int_of(const json& v, const std::string& key, int min_value) const {
    return static_cast<int>(common::as_int(v, path_of(key), min_value, 1 << 16));
  }

  bool bool_of(const json& v, const std::string& key) const { return common::as_bool(v, path_of(key)); }

  std::vector<int> ints_of(const json& v, const std::string& key, std::size_t min_size, std::size_t max_size,
                           int min_value) const {
    if (!v.is_array() || v.size() < min_size || v.size() > max_size) {
      fail(key, min_size == max_size ? fmt::format("expected a list of {} integers", min_size)
                                     : fmt::format("expected a list of {} to {} integers", min_size, max_size));
    }
    std::vector<int> out;
    for (std::size_t j = 0; j < v.size(); ++j) out.push_back(int_of(v[j], fmt::format("{}[{}]", key, j), min_value));
    return out;
  }

  int bits_of(const json& v, const std::string& key) const {
    const std::string dtype = string_of(v, key);
    if (dtype == "int8" || dtype == "uint8") return 8;
    if (dtype == "int16" || dtype == "uint16") return 16;
    if (dtype == "int32") return 32;
    const std::string near = common::closest_match(dtype, {"int8", "uint8", "int16", "uint16", "int32"});
    fail(key, fmt::format("unknown dtype '{}'", dtype),
         near.empty() ? "expected int8, uint8, int16, uint16 or int32" : fmt::format("did you mean '{}'?", near));
  }

  /// A tensor shape as the 4-D NHWC op shape (docs/pass-format.md: FC [N, C] is [N,1,1,C]; others pad on the left).
  static std::array<int, 4> op_shape(const std::vector<int>& s, bool fully_connected) {
    if (s.size() == 2 && fully_connected) return {s[0], 1, 1, s[1]};
    std::array<int, 4> out{1, 1, 1, 1};
    std::copy(s.begin(), s.end(), out.begin() + static_cast<std::ptrdiff_t>(4 - s.size()));
    return out;
  }

  std::vector<model::BlockConfig> configs_of(const json& v, const std::string& key) const {
    if (!v.is_array()) fail(key, "expected a list of [ofm_h, ofm_w, ifm_d, ofm_d] block configs");
    std::vector<model::BlockConfig> out;
    out.reserve(v.size());
    for (std::size_t j = 0; j < v.size(); ++j) {
      const std::vector<int> c = ints_of(v[j], fmt::format("{}[{}]", key, j), 4, 4, 1);
      out.push_back(model::BlockConfig{c[0], c[1], c[2], c[3]});
    }
    return out;
  }

  Expected read_expected(const json& rec, std::size_t i) const {
    Expected e;
    const json& alloc = require(rec, i, "alloc");
    const std::string alloc_key = key_of(i, "alloc");
    common::check_keys(alloc, path_of(alloc_key), {std::begin(kAllocKeys), std::end(kAllocKeys)});
    auto field = [&](const char* k) -> const json& { return common::require(alloc, k, path_of(alloc_key)); };
    e.alloc.ifm_block_depth = int_of(field("ifm_block_depth"), alloc_key + ".ifm_block_depth", 0);
    e.alloc.is_equal_depth_op = bool_of(field("is_equal_depth_op"), alloc_key + ".is_equal_depth_op");
    e.alloc.use_ifm_element = int_of(field("use_ifm_element"), alloc_key + ".use_ifm_element", 0);
    e.alloc.use_accumulator_element =
        int_of(field("use_accumulator_element"), alloc_key + ".use_accumulator_element", 0);
    e.alloc.ifm_count = int_of(field("ifm_count"), alloc_key + ".ifm_count", 0);
    e.alloc.available_banks = int_of(field("available_banks"), alloc_key + ".available_banks", 0);
    e.num_valid = int_of(require(rec, i, "num_valid"), key_of(i, "num_valid"), 0);
    e.shortlist =
        configs_of(require(rec, i, "scheduler_candidates_limit16"), key_of(i, "scheduler_candidates_limit16"));
    if (const json* v = common::find(rec, "valid_block_configs"); v != nullptr) {
      e.valid = configs_of(*v, key_of(i, "valid_block_configs"));
    }
    return e;
  }

  Record read_record(const json& rec, std::size_t i, bool need_expected) const {
    common::check_keys(rec, path_of(fmt::format("records[{}]", i)), {std::begin(kRecordKeys), std::end(kRecordKeys)});
    Record r;
    r.accelerator = string_of(require(rec, i, "accelerator"), key_of(i, "accelerator"));
    const std::vector<std::string> accelerators = arch::accelerator_names();
    if (std::find(accelerators.begin(), accelerators.end(), r.accelerator) == accelerators.end()) {
      const std::string near = common::closest_match(r.accelerator, accelerators);
      fail(key_of(i, "accelerator"), fmt::format("unknown accelerator '{}'", r.accelerator),
           near.empty() ? "expected one of ethos-u55-32/64/128/256, ethos-u65-256/512"
                        : fmt::format("did you mean '{}'?", near));
    }
    r.layer_name = string_of(require(rec, i, "layer_name"), key_of(i, "layer_name"));

    const std::string op_type = string_of(require(rec, i, "op_type"), key_of(i, "op_type"));
    const OpInfo* op = nullptr;
    std::vector<std::string> op_names;
    for (const OpInfo& candidate : kOps) {
      op_names.emplace_back(candidate.name);
      if (op_type == candidate.name) op = &candidate;
    }
    if (op == nullptr) {
      const std::string near = common::closest_match(op_type, op_names);
      fail(key_of(i, "op_type"), fmt::format("unknown op type '{}'", op_type),
           near.empty() ? "see docs/design/npu-model.md §1.4 for the supported ops" : fmt::format("did you mean '{}'?", near));
    }
    model::BlockConfigQuery& q = r.query;
    q.block_type = op->block_type;
    q.resampling = op->resampling;
    const bool elementwise = op->block_type == arch::NpuBlockType::ElementWise;
    const bool fully_connected = op->block_type == arch::NpuBlockType::VectorProduct;

    // A scalar ([]) operand is meaningful only for elementwise ops (§8.3).
    const std::vector<int> ifm =
        ints_of(require(rec, i, "ifm_shape"), key_of(i, "ifm_shape"), elementwise ? 0 : 1, 4, 1);
    q.ifm_is_scalar = ifm.empty();
    q.ifm_shape = op_shape(ifm, fully_connected);
    if (const json* v = common::find(rec, "ifm2_shape"); v != nullptr && !v->is_null()) {
      if (!elementwise) fail(key_of(i, "ifm2_shape"), "only elementwise ops have a second IFM", "use null");
      const std::vector<int> ifm2 = ints_of(*v, key_of(i, "ifm2_shape"), 0, 4, 1);
      q.ifm2 = ifm2.empty() ? model::Ifm2Kind::Scalar : model::Ifm2Kind::Tensor;
      q.ifm2_shape = op_shape(ifm2, false);
    }
    if (q.ifm_is_scalar && q.ifm2 != model::Ifm2Kind::Tensor) {
      fail(key_of(i, "ifm_shape"), "a scalar IFM needs a tensor ifm2_shape", "the tensor operand sets the IFM depth");
    }
    q.ofm_shape = op_shape(ints_of(require(rec, i, "ofm_shape"), key_of(i, "ofm_shape"), 1, 4, 1), fully_connected);

    r.ifm_dtype = string_of(require(rec, i, "ifm_dtype"), key_of(i, "ifm_dtype"));
    q.ifm_bits = bits_of(require(rec, i, "ifm_dtype"), key_of(i, "ifm_dtype"));
    if (!model::ifm_bits_supported(q.block_type, q.ifm_bits)) {
      fail(key_of(i, "ifm_dtype"), fmt::format("a {}-bit IFM is not supported by {}", q.ifm_bits, op_type),
           "32-bit IFMs are allowed only for elementwise and ReduceSum ops");
    }
    if (const json* v = common::find(rec, "ofm_dtype"); v != nullptr) bits_of(*v, key_of(i, "ofm_dtype"));

    auto pair_of = [&](const char* key) -> std::array<int, 2> {
      const json* v = common::find(rec, key);
      if (v == nullptr) return {1, 1};
      const std::vector<int> p = ints_of(*v, key_of(i, key), 2, 2, 1);
      return {p[0], p[1]};
    };
    const auto k = pair_of("kernel_hw");
    const auto s = pair_of("stride_hw");
    const auto d = pair_of("dilation_hw");
    q.kernel = model::Kernel{k[1], k[0], s[1], s[0], d[1], d[0]};
    if (const json* v = common::find(rec, "uses_lut"); v != nullptr) q.uses_lut = bool_of(*v, key_of(i, "uses_lut"));
    // The reference records are generated with every feature map quantized (docs/pass-format.md).
    q.all_fms_quantized = true;

    if (need_expected) r.expected = read_expected(rec, i);
    return r;
  }

  std::string file_;
};

/// One arch and its block-config map, shared by all records of that accelerator.
struct ArchEntry {
  explicit ArchEntry(arch::Arch a) : arch(std::move(a)), map(arch) {}
  arch::Arch arch;
  model::BlockConfigMap map;
};

Result evaluate(const ArchEntry& entry, const model::BlockConfigQuery& query) {
  Result r;
  const model::ShramAllocation alloc = model::make_shram_allocation(entry.arch, query);
  r.alloc = AllocFields{alloc.ifm_block_depth,
                        alloc.is_equal_depth_op,
                        static_cast<int>(alloc.ifm_element),
                        static_cast<int>(alloc.acc_element),
                        alloc.ifm_count,
                        alloc.available_banks};
  model::find_valid_block_configs(entry.arch, entry.map, query, r.valid);
  model::scheduler_block_configs(r.valid, 16, r.shortlist);
  return r;
}

ordered_json configs_json(const std::vector<model::BlockConfig>& configs) {
  ordered_json out = ordered_json::array();
  for (const auto& c : configs) out.push_back({c.ofm_h, c.ofm_w, c.ifm_d, c.ofm_d});
  return out;
}

ordered_json result_json(const Record& rec, const Result& r) {
  ordered_json j;
  j["accelerator"] = rec.accelerator;
  j["layer_name"] = rec.layer_name;
  j["alloc"] = {{"ifm_block_depth", r.alloc.ifm_block_depth},
                {"is_equal_depth_op", r.alloc.is_equal_depth_op},
                {"use_ifm_element", r.alloc.use_ifm_element},
                {"use_accumulator_element", r.alloc.use_accumulator_element},
                {"ifm_count", r.alloc.ifm_count},
                {"available_banks", r.alloc.available_banks}};
  j["num_valid"] = r.valid.size();
  j["valid_block_configs"] = configs_json(r.valid);
  j["scheduler_candidates_limit16"] = configs_json(r.shortlist);
  return j;
}

std::string config_text(const model::BlockConfig& c) {
  return fmt::format("[{}, {}, {}, {}]", c.ofm_h, c.ofm_w, c.ifm_d, c.ofm_d);
}

/// "" when equal, else where the lists first differ.
std::string list_difference(const std::vector<model::BlockConfig>& expected,
                            const std::vector<model::BlockConfig>& actual) {
  if (expected == actual) return {};
  std::size_t j = 0;
  while (j < expected.size() && j < actual.size() && expected[j] == actual[j]) ++j;
  const std::string e = j < expected.size() ? config_text(expected[j]) : "end of list";
  const std::string a = j < actual.size() ? config_text(actual[j]) : "end of list";
  return fmt::format("expected {}, actual {} (first difference at index {}; {} expected, {} actual)", e, a, j,
                     expected.size(), actual.size());
}

/// Prints one line per mismatching field; returns true when the record matches.
bool compare(std::size_t i, const Record& rec, const Result& r, std::ostream& out) {
  const Expected& e = *rec.expected;
  const std::string who = fmt::format("records[{}] {} {} ({}, uses_lut={})", i, rec.accelerator, rec.layer_name,
                                      rec.ifm_dtype, rec.query.uses_lut);
  bool ok = true;
  auto mismatch = [&](std::string_view field, const std::string& detail) {
    out << who << ": " << field << ": " << detail << "\n";
    ok = false;
  };
  auto check_int = [&](std::string_view field, long long expected, long long actual) {
    if (expected != actual) mismatch(field, fmt::format("expected {}, actual {}", expected, actual));
  };
  check_int("alloc.ifm_block_depth", e.alloc.ifm_block_depth, r.alloc.ifm_block_depth);
  if (e.alloc.is_equal_depth_op != r.alloc.is_equal_depth_op) {
    mismatch("alloc.is_equal_depth_op",
             fmt::format("expected {}, actual {}", e.alloc.is_equal_depth_op, r.alloc.is_equal_depth_op));
  }
  check_int("alloc.use_ifm_element", e.alloc.use_ifm_element, r.alloc.use_ifm_element);
  check_int("alloc.use_accumulator_element", e.alloc.use_accumulator_element, r.alloc.use_accumulator_element);
  check_int("alloc.ifm_count", e.alloc.ifm_count, r.alloc.ifm_count);
  check_int("alloc.available_banks", e.alloc.available_banks, r.alloc.available_banks);
  check_int("num_valid", e.num_valid, static_cast<long long>(r.valid.size()));
  if (std::string d = list_difference(e.shortlist, r.shortlist); !d.empty()) {
    mismatch("scheduler_candidates_limit16", d);
  }
  if (e.valid) {
    if (std::string d = list_difference(*e.valid, r.valid); !d.empty()) mismatch("valid_block_configs", d);
  }
  return ok;
}

}  // namespace

int run_eval_block_configs(const std::string& input_path, bool check, const std::string& output_path, std::ostream& out,
                           std::ostream& err) {
  const std::vector<Record> records = RecordReader(input_path).read(check);

  std::map<std::string, ArchEntry> arches;
  std::vector<Result> results;
  results.reserve(records.size());
  for (const Record& rec : records) {
    auto it = arches.find(rec.accelerator);
    if (it == arches.end()) it = arches.try_emplace(rec.accelerator, arch::make_arch(rec.accelerator)).first;
    results.push_back(evaluate(it->second, rec.query));
  }

  const bool write_json = !check || !output_path.empty();
  if (write_json) {
    ordered_json doc;
    doc["tool"] = "npu-mapper";
    doc["version"] = kVersion;
    doc["git_revision"] = kGitRevision;
    doc["command"] = "eval --block-configs";
    doc["input"] = input_path;
    doc["input_fnv1a64"] = common::file_fnv1a_hex(input_path).substr(8);
    doc["system_config"] = "internal-default";
    doc["memory_mode"] = "internal-default";
    ordered_json list = ordered_json::array();
    for (std::size_t i = 0; i < records.size(); ++i) list.push_back(result_json(records[i], results[i]));
    doc["records"] = std::move(list);
    const std::string text = doc.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
    if (output_path.empty()) {
      out << text;
    } else {
      common::write_file_atomic(output_path, text);
      err << "wrote " << output_path << "\n";
    }
  }

  if (!check) return 0;
  std::size_t matched = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (compare(i, records[i], results[i], out)) ++matched;
  }
  out << matched << "/" << records.size() << " matched\n";
  return matched == records.size() ? 0 : 1;
}

}  // namespace npumap::eval
