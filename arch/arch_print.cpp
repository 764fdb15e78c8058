#include "arch/arch_print.hpp"

#include <set>

#include <fmt/format.h>

namespace npumap::arch {
namespace {

std::string format_hz(double hz) {
  if (hz >= 1e9 && hz == static_cast<double>(static_cast<std::int64_t>(hz / 1e6)) * 1e6) return fmt::format("{:g} GHz", hz / 1e9);
  if (hz >= 1e6) return fmt::format("{:g} MHz", hz / 1e6);
  return fmt::format("{:g} Hz", hz);
}

}  // namespace

std::string format_bytes(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  std::int64_t v = bytes;
  while (unit < 3 && v != 0 && v % 1024 == 0) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", v, kUnits[unit]);
}

std::string describe_arch(const Arch& arch) {
  const AcceleratorConfig& a = arch.accel;
  std::string out;
  out += fmt::format("arch {}: {} ({} MACs x {} core{}), system config {}, memory mode {}\n", arch.name, a.name,
                     a.macs, a.cores, a.cores == 1 ? "" : "s", arch.system_config, arch.memory_mode);
  out += fmt::format("  core clock {}, AXI port {} bits\n", format_hz(arch.core_clock), arch.axi_port_width_bits);

  // Only the areas something is stored in matter to a run; the rest keep the §2.2 defaults.
  std::set<int> used = {static_cast<int>(arch.fast_storage), static_cast<int>(arch.feature_map_storage),
                        static_cast<int>(arch.permanent_storage)};
  out += fmt::format("  {:<13} {:>11} {:>8} {:>6} {:>12} {:>13} {:>16}\n", "memory", "clock scale", "B/cycle", "burst",
                     "read latency", "write latency", "read/write pJ/B");
  for (int i : used) {
    const MemoryParams& m = arch.memory[i];
    const std::string energy = fmt::format("{:g}/{:g}", arch.energy.read_pj_per_byte[i], arch.energy.write_pj_per_byte[i]);
    out += fmt::format("  {:<13} {:>11g} {:>8g} {:>6} {:>12} {:>13} {:>16}\n", mem_area_name(static_cast<MemArea>(i)),
                       m.clock_scale, m.bandwidth_per_cycle, m.burst_length, m.latency_read, m.latency_write, energy);
  }
  out += fmt::format("  storage: weights in {}, feature maps in {}, fast storage {}, spilling {}\n",
                     mem_area_name(arch.permanent_storage), mem_area_name(arch.feature_map_storage),
                     mem_area_name(arch.fast_storage), arch.spilling_enabled ? "on" : "off");
  out += fmt::format("  SRAM capacity {}", format_bytes(arch.sram_capacity_bytes));
  if (arch.spilling_enabled) out += fmt::format(" (cache {})", format_bytes(arch.vela_sram_size));
  out += fmt::format("; SHRAM {} banks x {}\n", a.shram_banks, format_bytes(arch.shram.bank_size_bytes));
  const int shram = static_cast<int>(MemArea::Shram);
  out += fmt::format("  energy (illustrative unless set): {:g} pJ/MAC, SHRAM {:g}/{:g} pJ/B read/write\n",
                     arch.energy.pj_per_mac, arch.energy.read_pj_per_byte[shram], arch.energy.write_pj_per_byte[shram]);
  return out;
}

}  // namespace npumap::arch
