// Built-in architecture tables (docs/design/npu-model.md §1.1-§1.3, §2.2-§2.5) and make_arch(), which turns an
// (accelerator, system config, memory mode) triple into a complete Arch the way Vela's
// ArchitectureFeatures does:
//   1. the accelerator row gives the MAC-array constants and the AXI port width (128 bits on U65);
//   2. the system config gives the core clock, the memory behind each AXI port and per-memory clock
//      scale, burst length and latencies (the "internal-default" config depends on U55 vs U65);
//   3. the memory mode maps the const / arena / cache areas onto ports, which yields the permanent,
//      feature-map and fast storage areas, whether spilling is on, and Vela's sram_size;
//   4. the "Sram_Only" case (everything on one SRAM port) moves constants to the other port and
//      renames it OnChipFlash with SRAM's timing.
// Every number here is data copied from the spec tables; nothing is derived from measurements.

#include <array>
#include <string>
#include <vector>

#include "arch/arch.hpp"
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

/// Timing of one configured memory in a system config (§2.3-§2.4).
struct MemorySetting {
  MemArea area = MemArea::Unknown;
  double clock_scale = 1.0;
  int burst_length = 1;
  int latency_read = 0;
  int latency_write = 0;
};

/// One system config: clock, the memory behind each AXI port, and the configured memories.
struct SystemConfig {
  const char* name;
  double core_clock;
  MemArea axi0;
  MemArea axi1;
  std::array<MemorySetting, 2> settings;
};

constexpr const char* kInternalDefault = "internal-default";

const SystemConfig kU55Default{kInternalDefault, 500e6, MemArea::Sram, MemArea::OffChipFlash,
                               {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::OffChipFlash, 0.125, 128, 64, 64}}}};
const SystemConfig kU65Default{kInternalDefault, 1e9, MemArea::Sram, MemArea::Dram,
                               {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::Dram, 0.75, 128, 500, 250}}}};

// §2.4: the vela.ini sections shipped with the version the model follows.
const std::array<SystemConfig, 6> kVelaSystemConfigs = {{
    {"Ethos_U55_Deep_Embedded", 200e6, MemArea::Sram, MemArea::OffChipFlash,
     {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::OffChipFlash, 0.0625, 128, 64, 64}}}},
    {"Ethos_U55_High_End_Embedded", 500e6, MemArea::Sram, MemArea::OffChipFlash,
     {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::OffChipFlash, 0.125, 128, 64, 64}}}},
    {"Ethos_U65_Embedded", 500e6, MemArea::Sram, MemArea::OffChipFlash,
     {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::OffChipFlash, 0.0625, 128, 64, 64}}}},
    {"Ethos_U65_Mid_End", 500e6, MemArea::Sram, MemArea::Dram,
     {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::Dram, 0.46875, 128, 500, 250}}}},
    {"Ethos_U65_High_End", 1e9, MemArea::Sram, MemArea::Dram,
     {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::Dram, 0.234375, 128, 500, 250}}}},
    {"Ethos_U65_Client_Server", 1e9, MemArea::Sram, MemArea::Dram,
     {{{MemArea::Sram, 1.0, 32, 32, 32}, {MemArea::Dram, 0.75, 128, 500, 250}}}},
}};

/// One memory mode: which port holds constants, the arena and the cache (§2.2, §2.4).
struct MemoryMode {
  const char* name;
  AxiPort const_port;
  AxiPort arena_port;
  AxiPort cache_port;
  std::int64_t cache_sram_size;  ///< only meaningful when spilling is enabled
};

const MemoryMode kU55DefaultMode{kInternalDefault, AxiPort::Axi1, AxiPort::Axi0, AxiPort::Axi0, 393216};
const MemoryMode kU65DefaultMode{kInternalDefault, AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 393216};

const std::array<MemoryMode, 4> kVelaMemoryModes = {{
    {"Sram_Only", AxiPort::Axi0, AxiPort::Axi0, AxiPort::Axi0, 393216},
    {"Shared_Sram", AxiPort::Axi1, AxiPort::Axi0, AxiPort::Axi0, 393216},
    {"Dedicated_Sram", AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 393216},
    {"Dedicated_Sram_512KB", AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 524288},
}};

[[noreturn]] void unknown_name(const char* key, std::string_view value, const std::vector<std::string>& valid) {
  std::string list;
  for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
  const std::string near = common::closest_match(std::string(value), valid);
  std::string hint = near.empty() ? "valid: " + list : "did you mean '" + near + "'? valid: " + list;
  throw common::UserError({}, key, "unknown " + std::string(key) + " '" + std::string(value) + "'", std::move(hint));
}

const SystemConfig& find_system_config(std::string_view name, bool u65) {
  if (name == kInternalDefault) return u65 ? kU65Default : kU55Default;
  for (const auto& s : kVelaSystemConfigs)
    if (name == s.name) return s;
  unknown_name("system_config", name, system_config_names());
}

const MemoryMode& find_memory_mode(std::string_view name, bool u65) {
  if (name == kInternalDefault) return u65 ? kU65DefaultMode : kU55DefaultMode;
  for (const auto& m : kVelaMemoryModes)
    if (name == m.name) return m;
  unknown_name("memory_mode", name, memory_mode_names());
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

std::vector<std::string> system_config_names() {
  std::vector<std::string> out{kInternalDefault};
  for (const auto& s : kVelaSystemConfigs) out.emplace_back(s.name);
  return out;
}

std::vector<std::string> memory_mode_names() {
  std::vector<std::string> out{kInternalDefault};
  for (const auto& m : kVelaMemoryModes) out.emplace_back(m.name);
  return out;
}

Arch make_arch(std::string_view accelerator, std::string_view system_config, std::string_view memory_mode) {
  Arch arch;
  arch.accel = accelerator_config(accelerator);
  const bool u65 = arch.accel.is_u65();
  const SystemConfig& sys = find_system_config(system_config, u65);
  const MemoryMode& mode = find_memory_mode(memory_mode, u65);

  arch.name = arch.accel.name;
  arch.system_config = std::string(system_config);
  arch.memory_mode = std::string(memory_mode);
  arch.core_clock = sys.core_clock;
  arch.axi_port_width_bits = u65 ? 128 : 64;

  // Unconfigured areas keep clock scale 1.0, burst 1 and zero latency (§2.2).
  for (auto& m : arch.memory) m = MemoryParams{};
  for (const auto& s : sys.settings) {
    auto& m = arch.memory[static_cast<int>(s.area)];
    m.clock_scale = s.clock_scale;
    m.burst_length = s.burst_length;
    m.latency_read = s.latency_read;
    m.latency_write = s.latency_write;
  }

  std::array<MemArea, 2> port_area = {sys.axi0, sys.axi1};
  AxiPort const_port = mode.const_port;
  const auto area_of = [&](AxiPort p) { return port_area[static_cast<int>(p)]; };

  // Sram_Only: constants cannot share the arena's SRAM port, so Vela moves them to the other port and
  // calls that memory OnChipFlash, timed like SRAM.
  if (area_of(const_port) == MemArea::Sram && const_port == mode.arena_port && const_port == mode.cache_port) {
    const_port = const_port == AxiPort::Axi0 ? AxiPort::Axi1 : AxiPort::Axi0;
    port_area[static_cast<int>(const_port)] = MemArea::OnChipFlash;
    const MemoryParams& sram = arch.memory[static_cast<int>(MemArea::Sram)];
    MemoryParams& flash = arch.memory[static_cast<int>(MemArea::OnChipFlash)];
    flash.clock_scale = sram.clock_scale;
    flash.burst_length = sram.burst_length;
    flash.latency_read = sram.latency_read;
    flash.latency_write = sram.latency_write;
  }

  for (auto& m : arch.memory) m.bandwidth_per_cycle = arch.axi_port_width_bits * m.clock_scale / 8.0;

  arch.permanent_storage = area_of(const_port);
  arch.feature_map_storage = area_of(mode.arena_port);
  arch.fast_storage = MemArea::Sram;
  arch.spilling_enabled = area_of(mode.cache_port) == MemArea::Sram && mode.cache_port != mode.arena_port;
  arch.vela_sram_size = arch.spilling_enabled ? mode.cache_sram_size : std::int64_t{9999} * 1024 * 1024;
  arch.sram_capacity_bytes = arch.spilling_enabled ? arch.vela_sram_size : std::int64_t{4} * 1024 * 1024;

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
