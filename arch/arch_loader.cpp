// The arch loader: turns `--arch <preset|file>` into an Arch (format: docs/arch-format.md).
//
// Flow. A spec that names a preset loads arch/presets/<name>.yaml; otherwise it is a file path. A
// file may start from a preset (`preset:`), which may itself start from another; the chain is
// collected into layers, base first. The three identity keys (accelerator, system_config,
// memory_mode) are taken from the last layer that states them (or from the command line's overrides,
// ArchRequest), the two names resolved as Vela sections (arch/vela_config.hpp: the --config files,
// then the built-ins), and handed to make_arch(), which refuses a combination that cannot exist and
// supplies every constant of docs/design/npu-model.md §1-§2 and §8.1 plus the default energy table. Then each
// layer's overrides are applied in order, so a file always wins over the preset it names. Last,
// the quantities that depend on several keys are recomputed (bandwidth per cycle from the clock
// scale and the AXI width) and cross-key rules are checked (the cache fits in the SRAM).
//
// Every read goes through common::YamlNode, so each error names file:line:col and the key path; unknown
// keys and unknown names get a closest-match hint. Nothing here falls back to a silent default:
// a key that is absent keeps make_arch()'s value, which docs/arch-format.md lists.

#include "arch/arch_loader.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "common/data_dir.hpp"
#include "arch/vela_config.hpp"
#include "common/user_error.hpp"
#include "common/yaml_reader.hpp"

namespace npumap::arch {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"preset", "name", "accelerator", "system_config", "memory_mode",
                                           "core_clock", "axi_port_width", "sram_capacity", "cache_size",
                                           "network_io_in_sram", "memory", "npu", "shram", "scheduler", "energy"};
const std::vector<std::string> kMemoryKeys = {"clock_scale", "burst_length", "read_latency", "write_latency"};
const std::vector<std::string> kNpuKeys = {"macs",          "cores",
                                           "ofm_ublock",    "ifm_ublock",
                                           "shram_banks",   "shram_granules",
                                           "elementwise_units", "output_cycles_per_elem",
                                           "activation_cycles_per_elem", "ofm_block_max",
                                           "ofm_split_depth", "sub_kernel_max",
                                           "sub_kernel_limits"};
const std::vector<std::string> kShramKeys = {"bank_size",  "reserved_output_banks", "reserved_weight_banks",
                                             "byte_sizes", "pre_align",             "post_align",
                                             "block_config_depths"};
const std::vector<std::string> kSchedulerKeys = {"bandwidth_weights", "cycles_weight", "max_sram_used_weight"};
const std::vector<std::string> kEnergyKeys = {"read_pj_per_byte", "write_pj_per_byte", "pj_per_mac"};
const std::vector<std::string> kBlockKeys = {"w", "h", "d"};
const std::vector<std::string> kKernelLimitKeys = {"h", "w"};
/// Areas behind the AXI ports; Shram timing is not part of the memory system model.
const std::vector<std::string> kAxiAreas = {"Sram", "Dram", "OnChipFlash", "OffChipFlash"};
/// Areas that have an energy figure or a scheduler weight.
const std::vector<std::string> kEnergyAreas = {"Sram", "Dram", "OnChipFlash", "OffChipFlash", "Shram"};
const std::vector<std::string> kBlockTypes = {"Default",     "VectorProduct", "ConvolutionMxN", "Pooling",
                                              "ConvolutionDepthWise", "ElementWise", "ReduceSum"};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string choice_hint(const std::string& value, const std::vector<std::string>& valid) {
  const std::string near = common::closest_match(value, valid);
  return near.empty() ? "one of: " + join(valid) : fmt::format("did you mean `{}`? one of: {}", near, join(valid));
}

/// A string naming one of `valid`; `what` words the error ("accelerator", "preset", ...).
std::string read_name(const common::YamlNode& n, const char* what, const std::vector<std::string>& valid) {
  const std::string s = n.as_string();
  if (std::find(valid.begin(), valid.end(), s) != valid.end()) return s;
  throw n.error(fmt::format("unknown {} `{}`", what, s), choice_hint(s, valid));
}

int to_int(const common::YamlNode& n, std::int64_t v) {
  if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min())
    throw n.error(fmt::format("value {} is too large", v), "use a value below 2147483648");
  return static_cast<int>(v);
}

int read_positive_int(const common::YamlNode& n) {
  const std::int64_t v = n.as_int();
  if (v <= 0) throw n.error(fmt::format("must be positive, got {}", v), "write a whole number of at least 1");
  return to_int(n, v);
}

int read_non_negative_int(const common::YamlNode& n) {
  const std::int64_t v = n.as_int();
  if (v < 0) throw n.error(fmt::format("must not be negative, got {}", v), "write 0 or more");
  return to_int(n, v);
}

double read_positive_double(const common::YamlNode& n) {
  const double v = n.as_double();
  if (!(v > 0.0)) throw n.error(fmt::format("must be positive, got {}", n.as_string()), "write a number above 0");
  return v;
}

double read_non_negative_double(const common::YamlNode& n) {
  const double v = n.as_double();
  if (v < 0.0) throw n.error(fmt::format("must not be negative, got {}", n.as_string()), "write 0 or more");
  return v;
}

std::int64_t read_byte_size(const common::YamlNode& n) {
  const std::string s = n.as_string();
  std::int64_t bytes = 0;
  if (!parse_byte_size(s, bytes))
    throw n.error(fmt::format("expected a byte size, got `{}`", s),
                  "write a whole number of bytes or a size with a unit: 512KiB, 1MiB");
  if (bytes <= 0) throw n.error(fmt::format("must be positive, got {}", s), "write a size of at least 1 byte");
  return bytes;
}

Block read_block(const common::YamlNode& n) {
  n.check_keys(kBlockKeys);
  return Block{read_positive_int(n.at("w")), read_positive_int(n.at("h")), read_positive_int(n.at("d"))};
}

template <std::size_t N, typename T, typename Read>
std::array<T, N> read_fixed_list(const common::YamlNode& n, Read read) {
  const auto items = n.items();
  if (items.size() != N)
    throw n.error(fmt::format("expected {} values, got {}", N, items.size()),
                  "the list has one value per entry of the table in docs/arch-format.md");
  std::array<T, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = read(items[i]);
  return out;
}

MemArea area_of(const std::string& name) {
  MemArea a = MemArea::Unknown;
  const bool ok = parse_mem_area(name, a);
  NPUMAP_ASSERT(ok);
  return a;
}

/// Applies `read` to each `Area: value` entry of a map whose keys must be in `areas`.
template <typename Apply>
void for_each_area(const common::YamlNode& n, const std::vector<std::string>& areas, Apply apply) {
  n.check_keys(areas);
  for (const auto& [key, value] : n.entries()) apply(area_of(key), value);
}

/// What the layers say about the keys that need all layers at once. Set with emplace(), never `=`:
/// assigning a YAML::Node re-points the node it held (yaml-cpp's set_ref), which would rewrite the
/// earlier layer's value in place (ArchBase keeps the base's layers for every point it builds).
struct Derived {
  std::optional<common::YamlNode> sram_capacity;
  std::optional<common::YamlNode> cache_size;
  std::optional<common::YamlNode> axi_port_width;
  std::array<bool, kNumMemAreas> clock_scale_set{};
};

void apply_memory(const common::YamlNode& n, Arch& arch, Derived& derived) {
  for_each_area(n, kAxiAreas, [&](MemArea area, const common::YamlNode& m) {
    m.check_keys(kMemoryKeys);
    MemoryParams& p = arch.memory[static_cast<int>(area)];
    if (auto v = m.find("clock_scale")) {
      p.clock_scale = read_positive_double(*v);
      derived.clock_scale_set[static_cast<int>(area)] = true;
    }
    if (auto v = m.find("burst_length")) p.burst_length = read_positive_int(*v);
    if (auto v = m.find("read_latency")) p.latency_read = read_non_negative_int(*v);
    if (auto v = m.find("write_latency")) p.latency_write = read_non_negative_int(*v);
  });
}

void apply_npu(const common::YamlNode& n, Arch& arch) {
  n.check_keys(kNpuKeys);
  AcceleratorConfig& a = arch.accel;
  if (auto v = n.find("macs")) a.macs = read_positive_int(*v);
  if (auto v = n.find("cores")) a.cores = read_positive_int(*v);
  if (auto v = n.find("ofm_ublock")) a.ofm_ublock = read_block(*v);
  if (auto v = n.find("ifm_ublock")) a.ifm_ublock = read_block(*v);
  if (auto v = n.find("shram_banks")) a.shram_banks = read_positive_int(*v);
  if (auto v = n.find("shram_granules"))
    a.shram_granules = read_fixed_list<kNumShramElements, int>(*v, read_positive_int);
  if (auto v = n.find("elementwise_units")) a.elementwise_units = read_positive_int(*v);
  if (auto v = n.find("output_cycles_per_elem"))
    a.output_cycles_per_elem = read_fixed_list<8, double>(*v, read_non_negative_double);
  if (auto v = n.find("activation_cycles_per_elem"))
    a.activation_cycles_per_elem = read_fixed_list<3, double>(*v, read_non_negative_double);
  if (auto v = n.find("ofm_block_max")) arch.ofm_block_max = read_block(*v);
  if (auto v = n.find("ofm_split_depth")) arch.ofm_split_depth = read_positive_int(*v);
  if (auto v = n.find("sub_kernel_max")) arch.default_sub_kernel_max = read_block(*v);
  if (auto v = n.find("sub_kernel_limits")) {
    v->check_keys(kBlockTypes);
    for (const auto& [key, limit] : v->entries()) {
      const auto index = std::find(kBlockTypes.begin(), kBlockTypes.end(), key) - kBlockTypes.begin();
      limit.check_keys(kKernelLimitKeys);
      arch.sub_kernel_limits[static_cast<std::size_t>(index)] = {read_positive_int(limit.at("h")),
                                                                  read_positive_int(limit.at("w"))};
    }
  }
}

void apply_shram(const common::YamlNode& n, Arch& arch) {
  n.check_keys(kShramKeys);
  ShramConstants& s = arch.shram;
  if (auto v = n.find("bank_size")) s.bank_size_bytes = to_int(*v, read_byte_size(*v));
  if (auto v = n.find("reserved_output_banks")) s.reserved_output_banks = read_non_negative_int(*v);
  if (auto v = n.find("reserved_weight_banks")) s.reserved_weight_banks = read_non_negative_int(*v);
  if (auto v = n.find("byte_sizes")) s.byte_sizes = read_fixed_list<kNumShramElements, int>(*v, read_positive_int);
  if (auto v = n.find("pre_align")) s.pre_align = read_fixed_list<kNumShramElements, int>(*v, read_positive_int);
  if (auto v = n.find("post_align")) s.post_align = read_fixed_list<kNumShramElements, int>(*v, read_positive_int);
  if (auto v = n.find("block_config_depths")) {
    const auto items = v->items();
    if (items.empty()) throw v->error("must list at least one depth", "for example [8, 16, 32]");
    std::vector<int> depths;
    for (const auto& item : items) {
      const int d = read_positive_int(item);
      if (!depths.empty() && d <= depths.back())
        throw item.error(fmt::format("depths must increase, got {} after {}", d, depths.back()),
                         "list the depths in increasing order without repeats");
      depths.push_back(d);
    }
    s.block_config_depths = std::move(depths);
  }
}

void apply_scheduler(const common::YamlNode& n, Arch& arch) {
  n.check_keys(kSchedulerKeys);
  if (auto v = n.find("bandwidth_weights")) {
    for_each_area(*v, kEnergyAreas, [&](MemArea area, const common::YamlNode& w) {
      arch.bandwidth_weights[static_cast<int>(area)] = read_non_negative_double(w);
    });
  }
  if (auto v = n.find("cycles_weight")) arch.cycles_weight = read_non_negative_double(*v);
  if (auto v = n.find("max_sram_used_weight")) arch.max_sram_used_weight = read_non_negative_double(*v);
}

void apply_energy(const common::YamlNode& n, Arch& arch) {
  n.check_keys(kEnergyKeys);
  if (auto v = n.find("read_pj_per_byte")) {
    for_each_area(*v, kEnergyAreas, [&](MemArea area, const common::YamlNode& e) {
      arch.energy.read_pj_per_byte[static_cast<int>(area)] = read_non_negative_double(e);
    });
  }
  if (auto v = n.find("write_pj_per_byte")) {
    for_each_area(*v, kEnergyAreas, [&](MemArea area, const common::YamlNode& e) {
      arch.energy.write_pj_per_byte[static_cast<int>(area)] = read_non_negative_double(e);
    });
  }
  if (auto v = n.find("pj_per_mac")) arch.energy.pj_per_mac = read_non_negative_double(*v);
}

/// The overrides of one layer (everything except the identity keys and `preset`).
void apply_layer(const common::YamlNode& root, Arch& arch, Derived& derived) {
  if (auto v = root.find("name")) arch.name = v->as_string();
  if (auto v = root.find("core_clock")) arch.core_clock = read_positive_double(*v);
  if (auto v = root.find("axi_port_width")) {
    const int bits = read_positive_int(*v);
    if (bits % 8 != 0) throw v->error(fmt::format("must be a multiple of 8 bits, got {}", bits), "AXI ports are 64 or 128 bits wide");
    arch.axi_port_width_bits = bits;
    derived.axi_port_width.emplace(*v);
  }
  if (auto v = root.find("sram_capacity")) {
    const std::string s = v->as_string();
    std::int64_t bytes = 0;
    if (parse_byte_size(s, bytes) && bytes <= 0)
      throw v->error(fmt::format("must be positive, got {}", s), "an arch needs on-chip SRAM; write its size, e.g. 1MiB");
    arch.sram_capacity_bytes = read_byte_size(*v);
    derived.sram_capacity.emplace(*v);
  }
  if (auto v = root.find("network_io_in_sram")) arch.network_io_in_sram = v->as_bool();
  if (auto v = root.find("cache_size")) {
    arch.vela_sram_size = read_byte_size(*v);
    derived.cache_size.emplace(*v);
  }
  if (auto v = root.find("memory")) apply_memory(*v, arch, derived);
  if (auto v = root.find("npu")) apply_npu(*v, arch);
  if (auto v = root.find("shram")) apply_shram(*v, arch);
  if (auto v = root.find("scheduler")) apply_scheduler(*v, arch);
  if (auto v = root.find("energy")) apply_energy(*v, arch);
}

std::atomic<std::size_t> g_arch_files_read{0};

/// An arch file or preset, parsed (and counted: arch_files_read()).
common::YamlNode read_arch_yaml(const std::string& path) {
  g_arch_files_read.fetch_add(1, std::memory_order_relaxed);
  return common::YamlNode::load_file(path);
}

struct Loader {
  std::string presets_dir;
  std::vector<std::string> presets;
  std::vector<common::YamlNode> layers;      ///< base preset first, the file asked for last
  std::vector<std::string> chain;    ///< presets being read, to catch a preset that names itself
  ArchRequest request;               ///< the --config sections and the command-line overrides
  std::vector<std::string>* notes = nullptr;

  std::string preset_path(const std::string& name) const { return (fs::path(presets_dir) / (name + ".yaml")).string(); }

  void collect(const common::YamlNode& root) {
    if (root.is_null())
      throw common::UserError({root.file(), 1, 1}, "", "empty arch file", "write at least `preset:` or `accelerator:`");
    root.expect_map();
    root.check_keys(kTopKeys);
    if (auto p = root.find("preset")) {
      const std::string name = read_name(*p, "preset", presets);
      if (std::find(chain.begin(), chain.end(), name) != chain.end())
        throw p->error(fmt::format("preset `{}` starts from itself", name), "remove the `preset:` loop");
      chain.push_back(name);
      collect(read_arch_yaml(preset_path(name)));
      chain.pop_back();
    }
    layers.push_back(root);
  }

  /// The last layer's value of an identity key, if any layer states it.
  std::optional<common::YamlNode> last(std::string_view key) const {
    for (auto it = layers.rbegin(); it != layers.rend(); ++it)
      if (auto v = it->find(key)) return v;
    return std::nullopt;
  }

  /// An arch being built: the identity's arch (accelerator, system config, memory mode) with the
  /// layers applied so far, and what finish() checks.
  struct Partial {
    Arch arch;
    Derived derived;
    NameSources sources;
    std::string mode;
  };

  Arch build(const std::string& default_name) const {
    Partial p = start(default_name);
    for (const auto& layer : layers) apply_layer(layer, p.arch, p.derived);
    return finish(std::move(p));
  }

  /// The arch of the layers' identity keys, named `default_name`, before any layer is applied.
  Partial start(const std::string& default_name) const {
    const common::YamlNode& top = layers.back();
    const auto acc_node = last("accelerator");
    if (!acc_node)
      throw common::UserError(top.location(), "accelerator", "missing required key",
                      "add `accelerator:` or `preset:`; accelerators: " + join(accelerator_names()));
    const std::string acc = read_name(*acc_node, "accelerator", accelerator_names());
    const VelaConfig& vela = request.vela != nullptr ? *request.vela : VelaConfig::builtin();
    // The system config and memory mode: a command-line override, else the last layer's key, else
    // internal-default. Each is reported where it was given.
    NameSources sources;
    const auto name_of = [&](const std::string& cli, const std::string& cli_key, std::string_view key, const char* what,
                             const std::vector<std::string>& valid, common::SourceLocation& where, std::string& where_key) {
      std::string name = "internal-default";
      if (!cli.empty()) {
        name = cli;
        where = {};
        where_key = cli_key;
        if (std::find(valid.begin(), valid.end(), name) == valid.end())
          throw common::UserError({}, cli_key, fmt::format("unknown {} `{}`", what, name), choice_hint(name, valid));
      } else if (auto v = last(key)) {
        name = read_name(*v, what, valid);
        where = v->location();
        where_key = v->path();
      } else {
        // Not stated anywhere: blamed on the command line's flag, or on the file that could state it.
        const bool flag = cli_key.rfind("--", 0) == 0;
        where = flag ? common::SourceLocation{} : top.location();
        where_key = cli_key;
      }
      return name;
    };
    const std::string sys = name_of(request.system_config, request.system_config_key, "system_config", "system config",
                                    vela.system_config_names(), sources.system_config, sources.system_config_key);
    const std::string mode = name_of(request.memory_mode, request.memory_mode_key, "memory_mode", "memory mode",
                                     vela.memory_mode_names(), sources.memory_mode, sources.memory_mode_key);

    Partial p{vela.make_arch(accelerator_config(acc), sys, mode, sources, notes), {}, sources, mode};
    p.arch.name = default_name;
    return p;
  }

  /// The arch once every layer is applied: derived values and the checks across keys.
  Arch finish(Partial p) const {
    const common::YamlNode& top = layers.back();
    const VelaConfig& vela = request.vela != nullptr ? *request.vela : VelaConfig::builtin();
    Arch& arch = p.arch;
    const Derived& derived = p.derived;
    const NameSources& sources = p.sources;
    const std::string& mode = p.mode;

    for (int i = 0; i < kNumMemAreas; ++i) {
      if (derived.axi_port_width || derived.clock_scale_set[i])
        arch.memory[i].bandwidth_per_cycle = arch.axi_port_width_bits * arch.memory[i].clock_scale / 8.0;
    }

    if (request.arena_cache_size) {
      // Vela's --arena-cache-size: the cache when the mode spills, else the arena's SRAM; it is the
      // last word on the SRAM the mapper may reserve.
      if (*request.arena_cache_size <= 0)
        throw common::UserError({}, request.arena_cache_size_key, fmt::format("must be positive, got {}", *request.arena_cache_size),
                                "the arena or cache SRAM in bytes, e.g. 393216");
      if (arch.spilling_enabled) arch.vela_sram_size = *request.arena_cache_size;
      arch.sram_capacity_bytes = *request.arena_cache_size;
    }
    if (arch.spilling_enabled && arch.vela_sram_size <= 0 && !derived.cache_size) {
      const MemoryMode m = vela.memory_mode(mode, arch.accel);
      const common::SourceLocation at = m.where.file.empty() ? sources.memory_mode : m.where;
      throw common::UserError(at, m.where.file.empty() ? sources.memory_mode_key : "Memory_Mode." + mode,
                              fmt::format("memory mode `{}` spills (its cache is apart from the arena) but states no "
                                          "arena_cache_size, so the cache has no size",
                                          mode),
                              "add arena_cache_size=<bytes> to the section, or pass --arena-cache-size");
    }
    if (derived.cache_size && !arch.spilling_enabled)
      throw derived.cache_size->error(
          fmt::format("memory mode `{}` does not spill, so it has no cache", mode),
          "remove `cache_size`, or pick memory_mode Dedicated_Sram or Dedicated_Sram_512KB");
    // Without a stated capacity the SRAM is what make_arch() says: the cache when spilling.
    if (arch.spilling_enabled && !derived.sram_capacity && !request.arena_cache_size) arch.sram_capacity_bytes = arch.vela_sram_size;
    if (arch.spilling_enabled && arch.vela_sram_size > arch.sram_capacity_bytes) {
      // Point at whatever set the cache size: `cache_size`, else the memory mode, which may sit in a
      // later file than the preset's `sram_capacity`.
      const std::optional<common::YamlNode> mode_node =
          request.memory_mode.empty() ? last("memory_mode") : std::optional<common::YamlNode>();
      if (!derived.cache_size && !mode_node && !derived.sram_capacity) {
        throw common::UserError(sources.memory_mode, sources.memory_mode_key,
                                fmt::format("the {} byte cache does not fit in sram_capacity ({} bytes)", arch.vela_sram_size,
                                            arch.sram_capacity_bytes),
                                "raise `sram_capacity` or use a smaller cache");
      }
      const common::YamlNode& at = derived.cache_size ? *derived.cache_size : mode_node ? *mode_node : *derived.sram_capacity;
      throw at.error(fmt::format("the {} byte cache does not fit in sram_capacity ({} bytes)", arch.vela_sram_size,
                                 arch.sram_capacity_bytes),
                     "raise `sram_capacity` or use a smaller cache");
    }
    const int usable = arch.total_shram_banks() - arch.shram.reserved_output_banks - arch.shram.reserved_weight_banks;
    if (usable <= 0) {
      std::optional<common::YamlNode> at;
      if (auto npu = last("npu")) at = npu->find("shram_banks");
      if (!at) at = last("shram");
      if (!at) at = top;
      throw common::UserError(at->location(), "npu.shram_banks",
                      fmt::format("{} SHRAM banks leave no bank for the IFM and accumulators", arch.accel.shram_banks),
                      "raise npu.shram_banks or lower the reserved banks");
    }
    return arch;
  }
};

Arch load_root(const common::YamlNode& root, const std::string& default_name, const std::string& presets_dir,
               const std::string& preset_name, const ArchRequest& request = {}, std::vector<std::string>* notes = nullptr) {
  Loader loader{presets_dir, preset_names(presets_dir), {}, {}, request, notes};
  if (!preset_name.empty()) loader.chain.push_back(preset_name);
  loader.collect(root);
  return loader.build(default_name);
}

/// Compares digit runs by value and everything else character by character.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      const std::string da = a.substr(i, ie - i);
      const std::string db = b.substr(j, je - j);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return (a.size() - i) < (b.size() - j);
}

bool looks_like_path(const std::string& spec) {
  const auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return spec.size() >= s.size() && spec.compare(spec.size() - s.size(), s.size(), s) == 0;
  };
  return spec.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

}  // namespace

bool parse_byte_size(const std::string& text, std::int64_t& bytes) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                             (i == 0 && (text[i] == '-' || text[i] == '+'))))
    ++i;
  const std::string number = text.substr(0, i);
  std::string unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  if (number.empty() || number == "-" || number == "+") return false;

  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KiB") scale = 1024.0;
  else if (unit == "MiB") scale = 1024.0 * 1024.0;
  else if (unit == "GiB") scale = 1024.0 * 1024.0 * 1024.0;
  else return false;

  const bool integral = number.find('.') == std::string::npos;
  if (unit.empty() && !integral) return false;  // a plain count of bytes is whole
  double value = 0;
  try {
    std::size_t used = 0;
    value = std::stod(number, &used);
    if (used != number.size()) return false;
  } catch (const std::exception&) {
    return false;
  }
  const double total = value * scale;
  if (!std::isfinite(total) || std::fabs(total) > 9.0e18 || total != std::floor(total)) return false;
  bytes = static_cast<std::int64_t>(total);
  return true;
}

std::string default_presets_dir() { return (common::data_dir() / "presets").string(); }

std::vector<std::string> preset_names(const std::string& presets_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(presets_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
  }
  // Natural order, so ethos-u55-32 comes before ethos-u55-128 in listings and hints.
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

std::vector<std::string> preset_names() { return preset_names(default_presets_dir()); }

Arch load_arch(const std::string& spec) { return load_arch(spec, default_presets_dir()); }

Arch load_arch(const std::string& spec, const std::string& presets_dir) {
  const auto presets = preset_names(presets_dir);
  if (std::find(presets.begin(), presets.end(), spec) != presets.end()) {
    const std::string file = (fs::path(presets_dir) / (spec + ".yaml")).string();
    return load_root(read_arch_yaml(file), spec, presets_dir, spec);
  }
  std::error_code ec;
  if (fs::is_regular_file(spec, ec)) return load_root(read_arch_yaml(spec), spec, presets_dir, "");
  if (looks_like_path(spec))
    throw common::UserError({spec, 0, 0}, "", "cannot open arch file", "check the path, or name a preset: " + join(presets));
  if (presets.empty()) {
    // An executable without its data folder (moved out of its install, or a broken install).
    throw common::UserError({presets_dir, 0, 0}, "arch", fmt::format("no arch presets found, so `{}` is unknown", spec),
                            fmt::format("mapper reads its presets from {} (found from {}); reinstall, or point "
                                        "NPUMAP_DATA_DIR at a folder with presets/ and workloads/",
                                        presets_dir, common::data_dir_origin()));
  }
  throw common::UserError({}, "arch", fmt::format("unknown preset `{}`", spec), choice_hint(spec, presets));
}

Arch load_arch(const ArchRequest& request, const std::string& presets_dir, std::vector<std::string>* notes) {
  if (request.spec.empty()) {
    // The accelerator alone (Vela's --accelerator-config): every other value from the system config
    // and memory mode, none from a preset file.
    const auto names = accelerator_names();
    if (std::find(names.begin(), names.end(), request.accelerator) == names.end()) {
      throw common::UserError({}, request.accelerator_key, fmt::format("unknown accelerator config `{}`", request.accelerator),
                              choice_hint(request.accelerator, names));
    }
    const common::YamlNode root =
        common::YamlNode::load_string(fmt::format("accelerator: \"{}\"\n", request.accelerator), request.accelerator_key);
    return load_root(root, request.accelerator, presets_dir, "", request, notes);
  }
  const auto presets = preset_names(presets_dir);
  if (std::find(presets.begin(), presets.end(), request.spec) != presets.end()) {
    const std::string file = (fs::path(presets_dir) / (request.spec + ".yaml")).string();
    return load_root(read_arch_yaml(file), request.spec, presets_dir, request.spec, request, notes);
  }
  std::error_code ec;
  if (fs::is_regular_file(request.spec, ec))
    return load_root(read_arch_yaml(request.spec), request.spec, presets_dir, "", request, notes);
  if (looks_like_path(request.spec))
    throw common::UserError({request.spec, 0, 0}, "", "cannot open arch file", "check the path, or name a preset: " + join(presets));
  throw common::UserError({}, "arch", fmt::format("unknown preset `{}`", request.spec), choice_hint(request.spec, presets));
}

Arch load_arch_string(const std::string& text, const std::string& file, const std::string& presets_dir) {
  return load_root(common::YamlNode::load_string(text, file), file, presets_dir, "");
}

namespace {

/// Keys that choose the arch's identity (Loader::start): a point that sets one is built from scratch.
bool sets_identity(const common::YamlNode& overrides) {
  return !overrides.is_null() && (overrides.has("accelerator") || overrides.has("system_config") || overrides.has("memory_mode") ||
                                  overrides.has("preset"));
}

}  // namespace

namespace {

/// What ArchBase keeps of its base (type-erased in the header: Loader is this file's own).
struct Started {
  Loader::Partial partial;  ///< the base's layers applied
  bool named = false;       ///< a base layer states `name:`
};

}  // namespace

ArchBase::ArchBase(const std::string& base, const std::string& presets_dir)
    : presets_dir_(presets_dir), presets_(preset_names(presets_dir)) {
  Loader loader{presets_dir_, presets_, {}, {}, {}, nullptr};
  if (std::find(loader.presets.begin(), loader.presets.end(), base) != loader.presets.end()) {
    loader.chain.push_back(base);
    loader.collect(read_arch_yaml(loader.preset_path(base)));
  } else {
    std::error_code ec;
    if (!fs::is_regular_file(base, ec)) {
      if (looks_like_path(base)) throw common::UserError({base, 0, 0}, "", "cannot open arch file", "check the path, or name a preset: " + join(loader.presets));
      throw common::UserError({}, "arch", fmt::format("unknown preset `{}`", base), choice_hint(base, loader.presets));
    }
    loader.collect(read_arch_yaml(base));
  }
  // The base's layers applied once; a base whose identity cannot be resolved alone takes the
  // whole path at every build (which reports the error where it always did).
  try {
    Started started{loader.start(""), false};
    for (const auto& layer : loader.layers) {
      apply_layer(layer, started.partial.arch, started.partial.derived);
      started.named = started.named || layer.has("name");
    }
    started_ = std::make_shared<const Started>(std::move(started));
  } catch (const common::UserError&) {
    started_.reset();
  }
  base_chain_ = std::move(loader.chain);
  layers_ = std::move(loader.layers);
}

Arch ArchBase::build(const common::YamlNode& overrides, const std::string& name) const {
  Loader loader{presets_dir_, presets_, layers_, base_chain_, {}, nullptr};
  if (!overrides.is_null()) loader.collect(overrides);
  if (!started_ || sets_identity(overrides)) return loader.build(name);
  // The same arch as loader.build(name): the identity comes from the base alone, so only the
  // overrides' layer is left to apply.
  const Started& started = *std::static_pointer_cast<const Started>(started_);
  Loader::Partial p = started.partial;
  if (!started.named) p.arch.name = name;
  if (!overrides.is_null()) apply_layer(overrides, p.arch, p.derived);
  return loader.finish(std::move(p));
}

Arch load_arch_with_overrides(const std::string& base, const common::YamlNode& overrides, const std::string& name,
                              const std::string& presets_dir) {
  return ArchBase(base, presets_dir).build(overrides, name);
}

std::size_t arch_files_read() { return g_arch_files_read.load(std::memory_order_relaxed); }

}  // namespace npumap::arch
