// Built-in architecture tables (docs/design/npu-model.md §1.1-§1.3, §2.2-§2.5) and make_arch(), which turns an
// (accelerator, system config, memory mode) triple into a complete Arch the way Vela's
// ArchitectureFeatures does:
//   1. the accelerator row gives the MAC-array constants and the AXI port width (128 bits on U65);
//   2. the system config gives the core clock, the memory behind each AXI port and per-memory clock
//      scale, burst length and latencies (the "internal-default" config depends on U55 vs U65); the
//      system configs and memory modes are vela.ini sections (arch/vela_config.cpp holds the built-in
//      ones, Arm's shipped vela.ini);
//   3. the memory mode maps the const / arena / cache areas onto ports, which yields the permanent,
//      feature-map and fast storage areas, whether spilling is on, and Vela's sram_size;
//   4. the "Sram_Only" case (everything on one SRAM port) moves constants to the other port and
//      renames it OnChipFlash with SRAM's timing.
// A combination that cannot exist is refused first (combination_problem): Vela's own checks and what
// an Ethos-U55 system lacks (DRAM, a dedicated SRAM).
// Every number here is data copied from the spec tables; nothing is derived from measurements.

#include <array>
#include <cctype>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "arch/arch.hpp"
#include "arch/vela_config.hpp"
#include "common/user_error.hpp"

namespace npumap::arch {
namespace {

using Granules = std::array<int, kNumShramElements>;

AcceleratorConfig make_accel(Accelerator kind, std::string name, int macs, int cores, Block ofm_ublock,
                             Block ifm_ublock, int banks, Granules granules, int ew_units,
                             std::array<double, 8> out_cycles, std::array<double, 3> act_cycles) {
  AcceleratorConfig c;
  c.kind = kind;
  c.name = std::move(name);
  c.macs = macs;
  c.cores = cores;
  c.ofm_ublock = ofm_ublock;
  c.ifm_ublock = ifm_ublock;
  c.shram_banks = banks;
  c.shram_granules = granules;
  c.elementwise_units = ew_units;
  c.output_cycles_per_elem = out_cycles;
  c.activation_cycles_per_elem = act_cycles;
  return c;
}

// §1.1 and §1.2, in enum order. Block literals are (W, H, D).
const std::array<AcceleratorConfig, kNumAccelerators>& accel_table() {
  static const std::array<AcceleratorConfig, kNumAccelerators> table = {
      make_accel(Accelerator::EthosU55_32, "ethos-u55-32", 32, 1, {1, 1, 4}, {1, 1, 8}, 16,
                 {2, 2, 2, 2, 4, 4, 4, 4}, 1, {2.0, 3.0, 3.0, 3.0, 4.0, 6.0, 1.0, 2.0}, {1.0, 1.0, 0.0}),
      make_accel(Accelerator::EthosU55_64, "ethos-u55-64", 64, 1, {1, 1, 8}, {1, 1, 8}, 16,
                 {2, 2, 2, 2, 4, 4, 4, 8}, 2, {1.0, 1.5, 1.5, 1.5, 2.0, 3.0, 0.5, 1.0}, {1.0, 1.0, 0.0}),
      make_accel(Accelerator::EthosU55_128, "ethos-u55-128", 128, 1, {2, 1, 8}, {2, 1, 8}, 24,
                 {4, 4, 4, 4, 8, 4, 8, 12}, 4, {0.75, 1.25, 0.75, 0.75, 1.0, 1.5, 0.25, 0.5}, {1.0, 0.5, 0.0}),
      make_accel(Accelerator::EthosU55_256, "ethos-u55-256", 256, 1, {2, 2, 8}, {2, 2, 8}, 48,
                 {8, 8, 8, 8, 16, 8, 16, 20}, 8, {0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25},
                 {1.0, 0.25, 0.0}),
      make_accel(Accelerator::EthosU65_256, "ethos-u65-256", 256, 1, {2, 2, 8}, {2, 2, 8}, 48,
                 {8, 8, 8, 8, 16, 8, 16, 20}, 8, {0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25},
                 {1.0, 0.25, 0.0}),
      make_accel(Accelerator::EthosU65_512, "ethos-u65-512", 256, 2, {2, 2, 8}, {2, 2, 8}, 48,
                 {8, 8, 8, 8, 16, 8, 16, 20}, 8, {0.3125, 0.5625, 0.25, 0.1875, 0.25, 0.375, 0.0625, 0.125},
                 {0.5, 0.125, 0.0}),
  };
  return table;
}

[[noreturn]] void unknown_name(const char* key, std::string_view value, const std::vector<std::string>& valid) {
  std::string list;
  for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
  const std::string near = common::closest_match(std::string(value), valid);
  std::string hint = near.empty() ? "valid: " + list : "did you mean '" + near + "'? valid: " + list;
  throw common::UserError({}, key, "unknown " + std::string(key) + " '" + std::string(value) + "'", std::move(hint));
}

constexpr std::array<const char*, kNumMemAreas> kMemAreaNames = {"Unknown", "Sram",         "Dram",
                                                                 "OnChipFlash", "OffChipFlash", "Shram"};

}  // namespace

int Arch::total_shram_banks() const {
  const int reserved_unused = accel.shram_banks > 16 ? 2 : 0;
  return accel.shram_banks - reserved_unused;
}

int Arch::available_shram_banks(bool uses_lut) const {
  const int reserved_unused = accel.shram_banks > 16 ? 2 : 0;
  return total_shram_banks() - ((uses_lut && reserved_unused == 0) ? 2 : 0);
}

const AcceleratorConfig& accelerator_config(Accelerator kind) { return accel_table()[static_cast<int>(kind)]; }

const AcceleratorConfig& accelerator_config(std::string_view name) {
  for (const auto& a : accel_table())
    if (name == a.name) return a;
  unknown_name("accelerator", name, accelerator_names());
}

std::vector<std::string> accelerator_names() {
  std::vector<std::string> out;
  for (const auto& a : accel_table()) out.push_back(a.name);
  return out;
}

std::vector<std::string> system_config_names() { return VelaConfig::builtin().system_config_names(); }

std::vector<std::string> memory_mode_names() { return VelaConfig::builtin().memory_mode_names(); }

std::string vela_accelerator_name(const AcceleratorConfig& accel) {
  // "ethos-u55-256" -> "Ethos_U55_256", the name of Vela's Accelerator enum member: each part
  // capitalised, joined with '_'.
  std::string out;
  bool part_start = true;
  for (const char c : accel.name) {
    if (c == '-') {
      out += '_';
      part_start = true;
    } else {
      out += part_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      part_start = false;
    }
  }
  return out;
}

namespace {

/// The memory behind each AXI port and the port of the constants after Vela's Sram_Only rewrite:
/// when the constants, the arena and the cache share the SRAM port, the constants move to the other
/// port, whose memory Vela then calls OnChipFlash (timed like the SRAM).
struct Ports {
  std::array<MemArea, 2> area{};
  AxiPort const_port = AxiPort::Axi1;
  bool sram_only = false;
  MemArea of(AxiPort p) const { return area[static_cast<int>(p)]; }
};

Ports resolve_ports(const SystemConfig& sys, const MemoryMode& mode) {
  Ports p;
  p.area = sys.axi_port;
  p.const_port = mode.const_port;
  if (p.of(p.const_port) == MemArea::Sram && mode.const_port == mode.arena_port && mode.const_port == mode.cache_port) {
    p.const_port = p.const_port == AxiPort::Axi0 ? AxiPort::Axi1 : AxiPort::Axi0;
    p.area[static_cast<int>(p.const_port)] = MemArea::OnChipFlash;
    p.sram_only = true;
  }
  return p;
}

const char* port_name(AxiPort p) { return p == AxiPort::Axi0 ? "Axi0" : "Axi1"; }

std::string section_label(const char* kind, const std::string& name, bool builtin) {
  return builtin ? fmt::format("{} `{}`", kind, name) : fmt::format("{} `{}` ([{}.{}])", kind, name,
                                                                     std::string(kind) == "system config" ? "System_Config" : "Memory_Mode", name);
}

}  // namespace

std::optional<ArchProblem> combination_problem(const AcceleratorConfig& accel, const SystemConfig& sys,
                                               const MemoryMode& mode) {
  const Ports ports = resolve_ports(sys, mode);
  const std::string sys_label = section_label("system config", sys.name, sys.builtin);
  const std::string mode_label = section_label("memory mode", mode.name, mode.builtin);
  const auto mode_problem = [&](int which, std::string message) {
    ArchProblem p;
    p.blame = ArchProblem::Blame::MemoryMode;
    p.message = std::move(message);
    if (!mode.builtin) {
      static const char* const keys[] = {"const_mem_area", "arena_mem_area", "cache_mem_area"};
      p.where = mode.port_where[static_cast<std::size_t>(which)].file.empty() ? mode.where
                                                                                : mode.port_where[static_cast<std::size_t>(which)];
      p.key_path = "Memory_Mode." + mode.name + "." + keys[which];
    }
    return p;
  };
  const auto sys_problem = [&](AxiPort port, std::string message) {
    ArchProblem p;
    p.blame = ArchProblem::Blame::SystemConfig;
    p.message = std::move(message);
    if (!sys.builtin) {
      const auto i = static_cast<std::size_t>(port);
      p.where = sys.axi_where[i].file.empty() ? sys.where : sys.axi_where[i];
      p.key_path = "System_Config." + sys.name + (port == AxiPort::Axi0 ? ".axi0_port" : ".axi1_port");
    }
    return p;
  };
  const std::array<std::pair<AxiPort, int>, 3> used = {
      {{ports.const_port, 0}, {mode.arena_port, 1}, {mode.cache_port, 2}}};

  // What an Ethos-U55 system lacks: DRAM (it reads its constants from flash and keeps the arena in
  // SRAM), and a dedicated SRAM used as a cache apart from the arena.
  if (!accel.is_u65()) {
    for (const auto& [port, which] : used) {
      if (ports.of(port) != MemArea::Dram) continue;
      return sys_problem(port, fmt::format("{} puts Dram on {}_port, which {} uses, and an {} system has no DRAM (SRAM and "
                                           "flash only)",
                                           sys_label, port == AxiPort::Axi0 ? "axi0" : "axi1", mode_label, accel.name));
    }
    if (mode.cache_port != mode.arena_port) {
      return mode_problem(2, fmt::format("{} keeps the arena on {} and a dedicated SRAM cache on {}, and an {} has no "
                                         "dedicated SRAM (its arena is the shared SRAM)",
                                         mode_label, port_name(mode.arena_port), port_name(mode.cache_port), accel.name));
    }
  }
  // Vela's own checks (ArchitectureFeatures._get_vela_config).
  const MemArea const_area = ports.of(ports.const_port);
  if (const_area != MemArea::Dram && const_area != MemArea::OnChipFlash && const_area != MemArea::OffChipFlash) {
    return mode_problem(0, fmt::format("{} puts the constants (weights, biases) on {}, which is {} in {}: constants "
                                       "need Dram, OnChipFlash or OffChipFlash",
                                       mode_label, port_name(ports.const_port), mem_area_name(const_area), sys_label));
  }
  const MemArea arena_area = ports.of(mode.arena_port);
  if (arena_area != MemArea::Sram && arena_area != MemArea::Dram) {
    return mode_problem(1, fmt::format("{} puts the arena (feature maps) on {}, which is {} in {}: the arena needs Sram or "
                                       "Dram",
                                       mode_label, port_name(mode.arena_port), mem_area_name(arena_area), sys_label));
  }
  const MemArea cache_area = ports.of(mode.cache_port);
  if (cache_area != MemArea::Sram) {
    return mode_problem(2, fmt::format("{} puts the cache on {}, which is {} in {}: the cache needs Sram", mode_label,
                                       port_name(mode.cache_port), mem_area_name(cache_area), sys_label));
  }
  // A memory the system config does not describe: an ini section that names it on a port the mode
  // uses but gives it no clock scale (Vela would silently run it at the NPU clock).
  if (!sys.builtin) {
    for (const auto& [port, which] : used) {
      (void)which;
      const MemArea area = ports.sram_only && port == ports.const_port ? MemArea::Sram : ports.of(port);
      if (sys.clock_scale_set[static_cast<int>(area)]) continue;
      const AxiPort named = ports.sram_only && port == ports.const_port ? mode.arena_port : port;
      return sys_problem(named, fmt::format("{} names {} on {}_port but sets no {}_clock_scale (Vela would take 1.0: the "
                                            "memory as fast as the NPU clock)",
                                            sys_label, mem_area_name(area), named == AxiPort::Axi0 ? "axi0" : "axi1",
                                            mem_area_name(area)));
    }
  }
  return std::nullopt;
}

Arch make_arch(std::string_view accelerator, std::string_view system_config, std::string_view memory_mode) {
  // Resolving the sections takes ~0.2 ms; pass JSON asks for the same few archs once per record, so
  // the built archs are kept (a handful: accelerators x sections that exist).
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, std::string>, Arch> built;
  const auto key = std::make_tuple(std::string(accelerator), std::string(system_config), std::string(memory_mode));
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = built.find(key); it != built.end()) return it->second;
  }
  const VelaConfig& builtin = VelaConfig::builtin();
  const AcceleratorConfig& accel = accelerator_config(accelerator);
  if (!builtin.has_system_config(system_config)) unknown_name("system_config", system_config, builtin.system_config_names());
  if (!builtin.has_memory_mode(memory_mode)) unknown_name("memory_mode", memory_mode, builtin.memory_mode_names());
  const NameSources sources;
  Arch arch = builtin.make_arch(accel, system_config, memory_mode, sources, nullptr);
  const std::lock_guard<std::mutex> lock(mutex);
  built.emplace(key, arch);
  return arch;
}

Arch make_arch(const AcceleratorConfig& accel, const SystemConfig& sys, const MemoryMode& mode, const NameSources& sources,
               const std::function<std::string(const ArchProblem&)>& valid_hint) {
  if (const std::optional<ArchProblem> problem = combination_problem(accel, sys, mode)) {
    std::string hint = valid_hint ? valid_hint(*problem) : std::string();
    if (!problem->where.file.empty()) throw common::UserError(problem->where, problem->key_path, problem->message, hint);
    if (problem->blame == ArchProblem::Blame::SystemConfig)
      throw common::UserError(sources.system_config, sources.system_config_key, problem->message, hint);
    throw common::UserError(sources.memory_mode, sources.memory_mode_key, problem->message, hint);
  }
  Arch arch;
  arch.accel = accel;
  const bool u65 = arch.accel.is_u65();
  arch.name = arch.accel.name;
  arch.system_config = sys.name;
  arch.memory_mode = mode.name;
  arch.core_clock = sys.core_clock;
  arch.axi_port_width_bits = u65 ? 128 : 64;

  // Areas behind no port keep clock scale 1.0, burst 1 and zero latency (§2.2).
  for (auto& m : arch.memory) m = MemoryParams{};
  const auto set_timing = [&](MemArea area, const MemoryTiming& t) {
    MemoryParams& m = arch.memory[static_cast<int>(area)];
    m.clock_scale = t.clock_scale;
    m.burst_length = t.burst_length;
    m.latency_read = t.read_latency;
    m.latency_write = t.write_latency;
  };
  for (const MemArea area : sys.axi_port) set_timing(area, sys.memory[static_cast<int>(area)]);
  const Ports ports = resolve_ports(sys, mode);
  // Sram_Only: the constants' port is OnChipFlash with SRAM's timing.
  if (ports.sram_only) set_timing(MemArea::OnChipFlash, sys.memory[static_cast<int>(MemArea::Sram)]);

  for (auto& m : arch.memory) m.bandwidth_per_cycle = arch.axi_port_width_bits * m.clock_scale / 8.0;

  arch.permanent_storage = ports.of(ports.const_port);
  arch.feature_map_storage = ports.of(mode.arena_port);
  arch.fast_storage = MemArea::Sram;
  arch.spilling_enabled = ports.of(mode.cache_port) == MemArea::Sram && mode.cache_port != mode.arena_port;
  // Vela's sram_size: the cache when spilling (0 here when the mode states none: the arch loader
  // asks for one), else 9999 MiB. The SRAM the mapper may reserve: the cache when spilling, else the
  // size the mode states (Vela 3's arena_cache_size) or 4 MiB.
  if (arch.spilling_enabled) {
    arch.vela_sram_size = mode.arena_cache_size.value_or(0);
    arch.sram_capacity_bytes = arch.vela_sram_size;
  } else {
    arch.vela_sram_size = std::int64_t{9999} * 1024 * 1024;
    arch.sram_capacity_bytes = mode.arena_cache_size.value_or(std::int64_t{4} * 1024 * 1024);
  }

  // §1.3, indexed by NpuBlockType.
  arch.sub_kernel_limits = {{{8, 8}, {1, 1}, {8, 8}, {8, 8}, {8, 8}, {1, 1}, {8, 8}}};

  // §2.5.
  arch.bandwidth_weights = {};
  arch.bandwidth_weights[static_cast<int>(MemArea::Sram)] = 1.0;
  arch.bandwidth_weights[static_cast<int>(MemArea::Dram)] = 10.0;
  arch.bandwidth_weights[static_cast<int>(MemArea::OnChipFlash)] = 2.0;
  arch.bandwidth_weights[static_cast<int>(MemArea::OffChipFlash)] = 20.0;
  arch.cycles_weight = 40.0;
  arch.max_sram_used_weight = arch.spilling_enabled ? 0.0 : 1000.0;

  arch.energy = default_energy_table(arch.accel);
  return arch;
}

std::string_view mem_area_name(MemArea a) {
  const int i = static_cast<int>(a);
  return (i >= 0 && i < kNumMemAreas) ? kMemAreaNames[i] : "Unknown";
}

bool parse_mem_area(std::string_view name, MemArea& out) {
  for (int i = 0; i < kNumMemAreas; ++i) {
    if (name == kMemAreaNames[i]) {
      out = static_cast<MemArea>(i);
      return true;
    }
  }
  return false;
}

}  // namespace npumap::arch
