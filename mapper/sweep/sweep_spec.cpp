// Reading a sweep spec. Every check happens here, before any mapping work starts.
//
// A point's arch is built by the arch loader itself: the base (preset or file, read once: ArchBase), then a map of
// the point's settings whose value nodes are the spec's own YAML nodes, so a value the loader rejects
// is reported at its line and column in the spec. `memory.<Area>.bandwidth` is the one key the arch
// format does not have: it is applied after loading, as clock_scale = bandwidth * 8 / axi_port_width.

#include "mapper/sweep/sweep_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "arch/arch_loader.hpp"
#include "common/files.hpp"
#include "common/hash.hpp"
#include "common/user_error.hpp"
#include "common/yaml_reader.hpp"
#include "npumap_version.hpp"
#include "workloads/loader.hpp"
#include "workloads/tflite/import.hpp"
#include "workloads/zoo.hpp"

namespace npumap::sweep {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"name", "workloads", "base", "grid", "points", "objectives", "fusion", "epsilon", "tolerance"};
const std::vector<std::string> kArchKeys = {"accelerator",    "system_config", "memory_mode", "core_clock",
                                            "axi_port_width", "sram_capacity", "cache_size"};
const std::vector<std::string> kAreas = {"Sram", "Dram", "OnChipFlash", "OffChipFlash"};
const std::vector<std::string> kMemoryFields = {"clock_scale", "burst_length", "read_latency", "write_latency", "bandwidth"};
constexpr std::size_t kMaxPoints = 100000;

std::string read_bytes(const std::string& path) { return common::read_input_file(path); }

std::vector<std::string> split_dots(const std::string& key) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

/// Checks a parameter key; `at` is the node to blame (the key's value).
void check_param_key(const std::string& key, const common::YamlNode& at) {
  if (std::find(kArchKeys.begin(), kArchKeys.end(), key) != kArchKeys.end()) return;
  const std::vector<std::string> parts = split_dots(key);
  if (parts.size() == 3 && parts[0] == "memory") {
    if (std::find(kAreas.begin(), kAreas.end(), parts[1]) == kAreas.end()) {
      const std::string near = common::closest_match(parts[1], kAreas);
      throw at.error(fmt::format("unknown memory area `{}` in key `{}`", parts[1], key),
                     near.empty() ? "areas: Sram, Dram, OnChipFlash, OffChipFlash" : "did you mean `" + near + "`?");
    }
    if (std::find(kMemoryFields.begin(), kMemoryFields.end(), parts[2]) == kMemoryFields.end()) {
      const std::string near = common::closest_match(parts[2], kMemoryFields);
      throw at.error(fmt::format("unknown memory parameter `{}` in key `{}`", parts[2], key),
                     near.empty() ? "one of: clock_scale, burst_length, read_latency, write_latency, bandwidth"
                                  : "did you mean `" + near + "`?");
    }
    return;
  }
  const std::vector<std::string> all = sweep_parameter_keys();
  const std::string near = common::closest_match(key, all);
  throw at.error(fmt::format("`{}` is not a sweep parameter", key),
                 near.empty() ? "parameters: accelerator, system_config, memory_mode, core_clock, axi_port_width, "
                                "sram_capacity, cache_size, memory.<Area>.<clock_scale|burst_length|read_latency|"
                                "write_latency|bandwidth>"
                              : "did you mean `" + near + "`?");
}

/// A parameter value: one scalar.
std::string param_text(const common::YamlNode& v) {
  if (!v.is_scalar()) throw v.error("expected a single value", "a grid key takes a list of values, a point key one value");
  const std::string s = v.as_string();
  if (s.empty()) throw v.error("empty value", "write the value, e.g. 1MiB");
  return s;
}

using Setting = std::pair<std::string, common::YamlNode>;

/// Resolves a workload entry: a zoo name ("resnet18") or a path relative to the spec's folder.
std::string resolve_workload(const common::YamlNode& item, const fs::path& spec_dir) {
  const std::string text = item.as_string();
  if (workloads::is_zoo_name(text)) {
    try {
      return workloads::zoo_file(text, item.path());
    } catch (const common::UserError& e) {
      throw item.error(e.message(), e.hint());  // located at the spec's entry
    }
  }
  fs::path p(text);
  if (p.is_relative()) p = spec_dir / p;
  std::error_code ec;  // a path the OS refuses (a name over 255 bytes) cannot be opened either
  if (!fs::is_regular_file(p, ec)) throw item.error(fmt::format("cannot open workload file `{}`", p.string()), "paths are relative to the spec's folder");
  return p.lexically_normal().string();
}

std::string resolve_base(const common::YamlNode& node, const fs::path& spec_dir) {
  const std::string text = node.as_string();
  const auto presets = arch::preset_names();
  if (std::find(presets.begin(), presets.end(), text) != presets.end()) return text;
  const bool is_name = text.find('/') == std::string::npos && fs::path(text).extension() != ".yaml";
  if (is_name) {
    const std::string near = common::closest_match(text, presets);
    std::string all;
    for (const auto& n : presets) all += (all.empty() ? "" : ", ") + n;
    throw node.error(fmt::format("unknown preset `{}`", text),
                     near.empty() ? "presets: " + all : "did you mean `" + near + "`? presets: " + all);
  }
  fs::path p(text);
  if (p.is_relative()) p = spec_dir / p;
  std::error_code ec;  // a path the OS refuses (a name over 255 bytes) cannot be opened either
  if (!fs::is_regular_file(p, ec)) throw node.error(fmt::format("cannot open arch file `{}`", p.string()), "paths are relative to the spec's folder");
  return p.lexically_normal().string();
}

/// The sweep's base arch, read once; a base that cannot be read is reported at each point (the first).
struct SweepBase {
  std::optional<arch::ArchBase> arch;
  std::exception_ptr error;  ///< the base's UserError, when it could not be read
  /// One overrides map per set of keys, its values rewritten for each point: a point costs no YAML
  /// nodes of its own (50,000 points made and freed 50,000 maps, and malloc slowed to a crawl).
  std::map<std::string, YAML::Node> overrides;
};

/// The arch of one point. Errors from the arch loader keep their location and name the point.

arch::Arch build_point_arch(SweepBase& base, const std::string& id, const std::vector<Setting>& settings,
                            const std::string& spec_file) {
  std::string keys;
  for (const auto& setting : settings) keys += setting.first + "\n";
  // A handle to the map kept for these keys (every value a scalar: param_text checked).
  YAML::Node overrides = base.overrides.try_emplace(keys, YAML::Node(YAML::NodeType::Map)).first->second;
  std::map<std::string, const common::YamlNode*> bandwidth;  // area -> value node
  std::map<std::string, const common::YamlNode*> clock_scale;
  std::vector<std::pair<std::string, const common::YamlNode*>> memory_settings;
  for (const auto& [key, value] : settings) {
    const std::vector<std::string> parts = split_dots(key);
    // The values' text, not the spec's nodes: assigning a node of the spec merges the whole spec
    // document's node memory into `overrides`, for every point (quadratic in the points). The text
    // has no line:col, so annotate() below puts the setting's own location back.
    if (parts.size() == 1) {
      overrides[key] = value.as_string();
      continue;
    }
    memory_settings.emplace_back(parts[1], &value);
    if (parts[2] == "bandwidth") {
      bandwidth[parts[1]] = &value;
    } else {
      if (parts[2] == "clock_scale") clock_scale[parts[1]] = &value;
      overrides["memory"][parts[1]][parts[2]] = value.as_string();
    }
  }
  std::string described;
  for (const auto& [key, value] : settings) described += fmt::format("{}{}={}", described.empty() ? "" : ", ", key, value.as_string());
  if (described.empty()) described = "the base arch";
  const auto annotate = [&](const common::UserError& e) {
    // An error in a copied setting (whose copy has no line:col of its own) is placed at the setting in the spec.
    common::SourceLocation where = e.where();
    for (const auto& setting : settings) {
      const std::string& k = setting.first;
      if (e.key_path() == k || e.key_path().rfind(k + ".", 0) == 0 || e.key_path().rfind(k + "[", 0) == 0) where = setting.second.location();
    }
    return common::UserError(where, e.key_path(), fmt::format("{} (arch point {}: {})", e.message(), id, described), e.hint());
  };
  for (const auto& [area, node] : bandwidth) {
    if (clock_scale.count(area) != 0)
      throw annotate(node->error(fmt::format("memory.{}.bandwidth and memory.{}.clock_scale both set", area, area),
                                 "bandwidth = axi_port_width * clock_scale / 8: set one of them"));
  }
  arch::Arch a;
  try {
    if (base.error) std::rethrow_exception(base.error);
    a = base.arch->build(common::YamlNode::from_yaml(overrides, spec_file), id);
  } catch (const common::UserError& e) {
    throw annotate(e);
  }
  for (const auto& [area_name, node] : memory_settings) {
    arch::MemArea area{};
    arch::parse_mem_area(area_name, area);
    if (area != a.permanent_storage && area != a.feature_map_storage && area != a.fast_storage) {
      throw annotate(node->error(
          fmt::format("this arch does not use {}: weights are in {}, feature maps in {}", area_name,
                      arch::mem_area_name(a.permanent_storage), arch::mem_area_name(a.feature_map_storage)),
          "set a memory the arch uses, or change system_config / memory_mode"));
    }
  }
  for (const auto& [area_name, node] : bandwidth) {
    const double bw = node->as_double();
    if (!(bw > 0.0)) throw annotate(node->error(fmt::format("must be positive, got {}", node->as_string()), "bytes per NPU cycle, e.g. 4"));
    arch::MemArea area{};
    arch::parse_mem_area(area_name, area);
    auto& m = a.memory[static_cast<int>(area)];
    m.bandwidth_per_cycle = bw;
    m.clock_scale = bw * 8.0 / a.axi_port_width_bits;
  }
  return a;
}

/// The search settings of a spec: objectives, fusion, epsilon (`tolerance`: its former name), each optional.
void read_search_options(const common::YamlNode& root, SweepSpec& spec) {
  if (auto o = root.find("objectives")) {
    std::string text;
    if (o->is_sequence()) {
      for (const common::YamlNode& item : o->items()) text += (text.empty() ? "" : ",") + item.as_string();
    } else {
      text = o->as_string();
    }
    try {
      spec.objectives = search::parse_objectives(text);
    } catch (const common::UserError& e) {
      throw o->error(e.message(), e.hint());
    }
    if (spec.objectives.empty()) throw o->error("no objectives", "e.g. [cycles, offchip_bytes]");
  }
  if (auto f = root.find("fusion")) spec.fusion = f->as_bool();
  for (const char* key : {"epsilon", "tolerance"}) {
    if (auto t = root.find(key)) {
      spec.epsilon = t->as_double();
      if (!(spec.epsilon >= 0.0 && spec.epsilon < 1.0))
        throw t->error(fmt::format("must be in [0, 1), got {}", t->as_string()), "0 is the exact front; 0.01 an ε-front within 1%");
    }
  }
}

}  // namespace

std::vector<std::string> sweep_parameter_keys() {
  std::vector<std::string> keys = kArchKeys;
  for (const auto& area : kAreas) {
    for (const auto& field : kMemoryFields) keys.push_back("memory." + area + "." + field);
  }
  return keys;
}

namespace {

/// The grid of a spec: its keys (in file order, into spec.grid_keys) with their checked values,
/// and its number of points; none without `grid:`.
struct GridAxes {
  std::optional<common::YamlNode> node;
  std::vector<std::pair<std::string, std::vector<common::YamlNode>>> axes;
  std::size_t points = 0;
};

GridAxes read_grid(const common::YamlNode& root, SweepSpec& spec) {
  GridAxes out;
  if (auto g = root.find("grid")) {
    g->expect_map();
    std::size_t count = 1;
    for (const auto& [key, values] : g->entries()) {
      check_param_key(key, values);
      std::vector<common::YamlNode> list = values.is_sequence() ? values.items() : std::vector<common::YamlNode>{values};
      if (list.empty()) throw values.error(fmt::format("no values for `{}`", key), "give a list such as [256KiB, 1MiB]");
      std::set<std::string> values_seen;  // a set: a grid of many values stays O(n log n)
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string text = param_text(list[i]);
        if (!values_seen.insert(list[i].as_string()).second)
          throw list[i].error(fmt::format("value `{}` is listed twice", text), "list each value once");
      }
      count *= list.size();
      if (count > kMaxPoints)
        throw values.error(fmt::format("the grid has more than {} points", kMaxPoints), "split the sweep into several specs");
      out.axes.emplace_back(key, std::move(list));
      spec.grid_keys.push_back(key);
    }
    if (out.axes.empty()) throw g->error("empty grid", "give at least one key with a list of values, or remove `grid:`");
    out.node = *g;
    out.points = count;
  }
  return out;
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& path) {
  SweepSpec spec;
  spec.file = path;
  std::error_code ec;  // the error_code form: a path the OS refuses is left to the reader's one-line error
  if (fs::is_directory(path, ec)) throw common::UserError({path, 0, 0}, "", "is a folder, not a sweep spec", "give a .yaml file, e.g. sweeps/example.yaml");
  const common::YamlNode root = common::YamlNode::load_file(path);
  if (root.is_null()) throw common::UserError({path, 1, 1}, "", "empty sweep spec", "write at least `workloads:` (see docs/sweep-format.md)");
  root.expect_map();
  root.check_keys(kTopKeys);
  const fs::path spec_dir = fs::path(path).parent_path();

  spec.name = root.has("name") ? root.at("name").as_string() : fs::path(path).stem().string();
  if (spec.name.empty() || spec.name.find('/') != std::string::npos)
    throw root.at("name").error("a sweep name must be non-empty and contain no `/`", "it names the output folder");

  // Workloads.
  const common::YamlNode wl = root.at("workloads");
  wl.expect_sequence();
  if (wl.items().empty()) throw wl.error("no workloads", "list at least one, e.g. [resnet18]");
  for (const common::YamlNode& item : wl.items()) {
    SweepWorkload w;
    w.path = resolve_workload(item, spec_dir);
    w.id = fs::path(w.path).stem().string();
    for (const auto& other : spec.workloads) {
      if (other.id == w.id) throw item.error(fmt::format("workload `{}` is listed twice", w.id), "list each workload once");
    }
    const tflite::NetworkInput input = tflite::read_network(w.path);
    w.workload = tflite::load_network(input, tflite::ImportOptions{});
    w.model = input.model;
    spec.workloads.push_back(std::move(w));
  }

  spec.base = root.has("base") ? resolve_base(root.at("base"), spec_dir) : std::string("ethos-u55-256");

  read_search_options(root, spec);

  // The settings of every point: the grid's combinations (made one point at a time, so a grid of
  // many values holds no list of them), then the explicit list.
  const GridAxes grid_axes = read_grid(root, spec);
  const std::optional<common::YamlNode>& grid = grid_axes.node;  // grid points are reported at the grid
  const auto& axes = grid_axes.axes;
  const std::size_t grid_points = grid_axes.points;
  std::vector<std::vector<Setting>> listed;
  std::vector<common::YamlNode> listed_at;  // per listed point, the node a duplicate is reported at
  spec.param_keys = spec.grid_keys;
  if (auto p = root.find("points")) {
    p->expect_sequence();
    for (const common::YamlNode& item : p->items()) {
      item.expect_map();
      std::vector<Setting> s;
      for (const auto& [key, value] : item.entries()) {
        check_param_key(key, value);
        param_text(value);
        s.emplace_back(key, value);
        if (std::find(spec.param_keys.begin(), spec.param_keys.end(), key) == spec.param_keys.end()) spec.param_keys.push_back(key);
      }
      listed.push_back(std::move(s));
      listed_at.push_back(item);
    }
    if (grid_points + listed.size() > kMaxPoints)
      throw p->error(fmt::format("the sweep has more than {} points", kMaxPoints), "split it into several specs");
  }
  if (grid_points == 0 && listed.empty()) {  // neither grid nor list: the base arch is the one point
    listed.emplace_back();
    listed_at.push_back(root);
  }
  const std::size_t num_points = grid_points + listed.size();

  // The base is read once; each point only applies its settings to it (linear in the points).
  SweepBase base;  // (the sweep's points are built one after the other: its override maps are reused)
  try {
    base.arch.emplace(spec.base, arch::default_presets_dir());
  } catch (const common::UserError&) {
    base.error = std::current_exception();
  }
  const int width = static_cast<int>(std::to_string(num_points).size());
  spec.points.reserve(num_points);  // (an Arch is about 1 KB: no moves while the list grows)
  std::map<std::vector<std::pair<std::string, std::string>>, std::string> seen;
  std::vector<std::size_t> digit(axes.size(), 0);  // the grid point's value per key
  std::vector<Setting> grid_settings;
  for (std::size_t i = 0; i < num_points; ++i) {
    const bool on_grid = i < grid_points;
    if (on_grid) {
      grid_settings.clear();
      for (std::size_t k = 0; k < axes.size(); ++k) grid_settings.emplace_back(axes[k].first, axes[k].second[digit[k]]);
      for (std::size_t k = axes.size(); k-- > 0;) {  // the last key varies fastest
        if (++digit[k] < axes[k].second.size()) break;
        digit[k] = 0;
      }
    }
    const std::vector<Setting>& settings = on_grid ? grid_settings : listed[i - grid_points];
    // Built in place: a point holds an Arch (about 1 KB), so a temporary would cost a second one.
    SweepPoint& point = spec.points.emplace_back();
    point.index = i;
    point.id = fmt::format("p{:0{}}", i + 1, width);
    for (const auto& [key, value] : settings) point.params.emplace_back(key, value.as_string());
    auto canonical = point.params;
    std::sort(canonical.begin(), canonical.end());
    if (auto it = seen.find(canonical); it != seen.end()) {
      const common::YamlNode& at = on_grid ? *grid : listed_at[i - grid_points];
      throw at.error(fmt::format("arch point {} repeats point {}", point.id, it->second), "remove the duplicate");
    }
    seen.emplace(std::move(canonical), point.id);
    point.arch = build_point_arch(base, point.id, settings, path);
  }

  // A .tflite model is lowered as Vela lowers it for each accelerator the points use.
  for (auto& w : spec.workloads) {
    if (!w.model) continue;
    for (const SweepPoint& point : spec.points) {
      const std::string& accel = point.arch.accel.name;
      if (w.by_accelerator.count(accel) != 0) continue;
      tflite::ImportOptions options;
      options.accelerator_config = accel;
      workloads::Workload lowered = tflite::import_model(*w.model, options).workload;
      lowered.source_file = w.path;
      w.by_accelerator.emplace(accel, std::move(lowered));
    }
  }

  // Fingerprint: what the results depend on.
  std::string material = fmt::format("npu-mapper {}\n", kVersion) + read_bytes(path);
  for (const auto& w : spec.workloads) material += "\n" + w.path + "\n" + read_bytes(w.path);
  const auto presets = arch::preset_names();
  const bool base_is_preset = std::find(presets.begin(), presets.end(), spec.base) != presets.end();
  material += "\n" + spec.base + "\n" +
              read_bytes(base_is_preset ? (fs::path(arch::default_presets_dir()) / (spec.base + ".yaml")).string() : spec.base);
  spec.fingerprint = common::fnv1a_hex(material);
  return spec;
}

}  // namespace npumap::sweep
