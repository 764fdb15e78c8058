// Loader tests: every preset, every key of the arch format (docs/arch-format.md), layering of
// presets and files, spec resolution and byte sizes. Expected values come from the spec tables of
// docs/design/npu-model.md §1-§2 and from the YAML written in each test, never from the loader's own output.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "arch/arch.hpp"
#include "arch/arch_loader.hpp"
#include "common/user_error.hpp"

namespace npumap::arch {
namespace {

namespace fs = std::filesystem;

constexpr int kSram = static_cast<int>(MemArea::Sram);
constexpr int kDram = static_cast<int>(MemArea::Dram);
constexpr int kOnChipFlash = static_cast<int>(MemArea::OnChipFlash);
constexpr int kOffChipFlash = static_cast<int>(MemArea::OffChipFlash);
constexpr int kShram = static_cast<int>(MemArea::Shram);

Arch load_text(const std::string& text) { return load_arch_string(text, "t.yaml", default_presets_dir()); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = fs::temp_directory_path() / (std::string("npumap_arch_") + info->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

void expect_same_arch(const Arch& a, const Arch& b) {
  EXPECT_EQ(a.accel.name, b.accel.name);
  EXPECT_EQ(a.accel.kind, b.accel.kind);
  EXPECT_EQ(a.accel.macs, b.accel.macs);
  EXPECT_EQ(a.accel.cores, b.accel.cores);
  EXPECT_EQ(a.accel.ofm_ublock, b.accel.ofm_ublock);
  EXPECT_EQ(a.accel.ifm_ublock, b.accel.ifm_ublock);
  EXPECT_EQ(a.accel.shram_banks, b.accel.shram_banks);
  EXPECT_EQ(a.accel.shram_granules, b.accel.shram_granules);
  EXPECT_EQ(a.accel.elementwise_units, b.accel.elementwise_units);
  EXPECT_EQ(a.accel.output_cycles_per_elem, b.accel.output_cycles_per_elem);
  EXPECT_EQ(a.accel.activation_cycles_per_elem, b.accel.activation_cycles_per_elem);
  EXPECT_EQ(a.system_config, b.system_config);
  EXPECT_EQ(a.memory_mode, b.memory_mode);
  EXPECT_EQ(a.core_clock, b.core_clock);
  EXPECT_EQ(a.axi_port_width_bits, b.axi_port_width_bits);
  for (int i = 0; i < kNumMemAreas; ++i) {
    SCOPED_TRACE(mem_area_name(static_cast<MemArea>(i)));
    EXPECT_EQ(a.memory[i].clock_scale, b.memory[i].clock_scale);
    EXPECT_EQ(a.memory[i].bandwidth_per_cycle, b.memory[i].bandwidth_per_cycle);
    EXPECT_EQ(a.memory[i].burst_length, b.memory[i].burst_length);
    EXPECT_EQ(a.memory[i].latency_read, b.memory[i].latency_read);
    EXPECT_EQ(a.memory[i].latency_write, b.memory[i].latency_write);
  }
  EXPECT_EQ(a.permanent_storage, b.permanent_storage);
  EXPECT_EQ(a.feature_map_storage, b.feature_map_storage);
  EXPECT_EQ(a.fast_storage, b.fast_storage);
  EXPECT_EQ(a.spilling_enabled, b.spilling_enabled);
  EXPECT_EQ(a.vela_sram_size, b.vela_sram_size);
  EXPECT_EQ(a.sram_capacity_bytes, b.sram_capacity_bytes);
  EXPECT_EQ(a.ofm_block_max, b.ofm_block_max);
  EXPECT_EQ(a.ofm_split_depth, b.ofm_split_depth);
  EXPECT_EQ(a.default_sub_kernel_max, b.default_sub_kernel_max);
  EXPECT_EQ(a.sub_kernel_limits, b.sub_kernel_limits);
  EXPECT_EQ(a.shram.bank_size_bytes, b.shram.bank_size_bytes);
  EXPECT_EQ(a.shram.reserved_output_banks, b.shram.reserved_output_banks);
  EXPECT_EQ(a.shram.reserved_weight_banks, b.shram.reserved_weight_banks);
  EXPECT_EQ(a.shram.byte_sizes, b.shram.byte_sizes);
  EXPECT_EQ(a.shram.pre_align, b.shram.pre_align);
  EXPECT_EQ(a.shram.post_align, b.shram.post_align);
  EXPECT_EQ(a.shram.block_config_depths, b.shram.block_config_depths);
  EXPECT_EQ(a.bandwidth_weights, b.bandwidth_weights);
  EXPECT_EQ(a.cycles_weight, b.cycles_weight);
  EXPECT_EQ(a.max_sram_used_weight, b.max_sram_used_weight);
  EXPECT_EQ(a.energy.read_pj_per_byte, b.energy.read_pj_per_byte);
  EXPECT_EQ(a.energy.write_pj_per_byte, b.energy.write_pj_per_byte);
  EXPECT_EQ(a.energy.pj_per_mac, b.energy.pj_per_mac);
}

TEST(ArchPresets, TheSixPresetsInNaturalOrder) {
  const std::vector<std::string> expected = {"ethos-u55-32",  "ethos-u55-64",  "ethos-u55-128",
                                             "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
  EXPECT_EQ(preset_names(), expected);
}

TEST(ArchPresets, EveryPresetMatchesMakeArchWithItsDefaults) {
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const Arch loaded = load_arch(name);
    EXPECT_EQ(loaded.name, name);
    // Each preset states internal-default / internal-default; make_arch's defaults are the same.
    expect_same_arch(loaded, make_arch(name));
    // The energy lines of the preset file restate the default table of arch/energy.cpp.
    const EnergyTable def = default_energy_table(loaded.accel);
    EXPECT_EQ(loaded.energy.read_pj_per_byte, def.read_pj_per_byte);
    EXPECT_EQ(loaded.energy.write_pj_per_byte, def.write_pj_per_byte);
  }
}

TEST(ArchPresets, U55PresetByHand) {
  // §2.3 U55 internal-default: 500 MHz; Sram 64*1.0/8 = 8 B/cycle, OffChipFlash 64*0.125/8 = 1 B/cycle;
  // Shared_Sram: weights in flash, FMs in SRAM, no spilling, so Vela's sram_size is 9999 MiB.
  const Arch a = load_arch("ethos-u55-128");
  EXPECT_EQ(a.accel.macs, 128);
  EXPECT_EQ(a.accel.shram_banks, 24);
  EXPECT_EQ(a.core_clock, 500e6);
  EXPECT_EQ(a.axi_port_width_bits, 64);
  EXPECT_EQ(a.mem(MemArea::Sram).bandwidth_per_cycle, 8.0);
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).bandwidth_per_cycle, 1.0);
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).burst_length, 128);
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).latency_read, 64);
  EXPECT_EQ(a.permanent_storage, MemArea::OffChipFlash);
  EXPECT_EQ(a.feature_map_storage, MemArea::Sram);
  EXPECT_FALSE(a.spilling_enabled);
  EXPECT_EQ(a.vela_sram_size, 9999LL * 1024 * 1024);
  EXPECT_EQ(a.sram_capacity_bytes, 4194304);  // the preset's `sram_capacity: 4MiB`
  // 24 banks: sqrt(24/48) = 0.7071 -> 0.71 pJ/B read, 0.71 * 1.1 = 0.781 -> 0.78 write.
  EXPECT_EQ(a.energy.read_pj_per_byte[kShram], 0.71);
  EXPECT_EQ(a.energy.write_pj_per_byte[kShram], 0.78);
}

TEST(ArchPresets, U65PresetByHand) {
  // §2.3 U65 internal-default: 1 GHz, 128-bit AXI; Sram 128/8 = 16 B/cycle, Dram 128*0.75/8 = 12;
  // Dedicated_Sram: weights and FMs in DRAM, SRAM cache of 393216 bytes, spilling on.
  const Arch a = load_arch("ethos-u65-512");
  EXPECT_EQ(a.accel.cores, 2);
  EXPECT_EQ(a.core_clock, 1e9);
  EXPECT_EQ(a.mem(MemArea::Sram).bandwidth_per_cycle, 16.0);
  EXPECT_EQ(a.mem(MemArea::Dram).bandwidth_per_cycle, 12.0);
  EXPECT_EQ(a.mem(MemArea::Dram).latency_read, 500);
  EXPECT_EQ(a.mem(MemArea::Dram).latency_write, 250);
  EXPECT_EQ(a.permanent_storage, MemArea::Dram);
  EXPECT_EQ(a.feature_map_storage, MemArea::Dram);
  EXPECT_TRUE(a.spilling_enabled);
  EXPECT_EQ(a.vela_sram_size, 393216);
  EXPECT_EQ(a.sram_capacity_bytes, 393216);
  EXPECT_EQ(a.max_sram_used_weight, 0.0);
}

// ---- identity keys -------------------------------------------------------------------------

TEST(ArchKeys, AcceleratorAloneGivesMakeArchDefaults) {
  expect_same_arch(load_text("accelerator: ethos-u65-256\n"), make_arch("ethos-u65-256"));
  EXPECT_EQ(load_text("accelerator: ethos-u65-256\n").name, "t.yaml");
}

TEST(ArchKeys, AcceleratorOverridesThePresets) {
  const Arch a = load_text("preset: ethos-u55-256\naccelerator: ethos-u55-64\n");
  EXPECT_EQ(a.accel.name, "ethos-u55-64");
  EXPECT_EQ(a.accel.macs, 64);
  EXPECT_EQ(a.accel.ofm_ublock, (Block{1, 1, 8}));
}

TEST(ArchKeys, SystemConfigByName) {
  // §2.4 Ethos_U65_Mid_End: 500 MHz, Dram clock scale 0.46875 -> 128 * 0.46875 / 8 = 7.5 B/cycle.
  const Arch a = load_text("preset: ethos-u65-256\nsystem_config: Ethos_U65_Mid_End\n");
  EXPECT_EQ(a.system_config, "Ethos_U65_Mid_End");
  EXPECT_EQ(a.core_clock, 500e6);
  EXPECT_EQ(a.mem(MemArea::Dram).clock_scale, 0.46875);
  EXPECT_EQ(a.mem(MemArea::Dram).bandwidth_per_cycle, 7.5);
  // §2.4 Ethos_U55_Deep_Embedded: 200 MHz, flash 64 * 0.0625 / 8 = 0.5 B/cycle.
  const Arch b = load_text("accelerator: ethos-u55-32\nsystem_config: Ethos_U55_Deep_Embedded\n");
  EXPECT_EQ(b.core_clock, 200e6);
  EXPECT_EQ(b.mem(MemArea::OffChipFlash).bandwidth_per_cycle, 0.5);
}

TEST(ArchKeys, EveryNamedSystemConfigAndMemoryModeLoads) {
  // Every pair that can exist loads as make_arch builds it; the others fail in both the same way.
  int loaded = 0;
  for (const auto& sys : system_config_names()) {
    for (const auto& mode : memory_mode_names()) {
      SCOPED_TRACE(sys + " / " + mode);
      const std::string text = "accelerator: ethos-u65-256\nsystem_config: " + sys + "\nmemory_mode: " + mode + "\n";
      std::string made_error;
      Arch made;
      try {
        made = make_arch("ethos-u65-256", sys, mode);
      } catch (const common::UserError& e) {
        made_error = e.message();
      }
      if (!made_error.empty()) {
        try {
          load_text(text);
          ADD_FAILURE() << "loaded a combination make_arch refuses: " << made_error;
        } catch (const common::UserError& e) {
          EXPECT_EQ(e.message(), made_error);
          EXPECT_EQ(e.where().line, 3);  // at the memory_mode key (the U65's system configs all exist)
        }
        continue;
      }
      expect_same_arch(load_text(text), made);
      ++loaded;
    }
  }
  // The 3 flash systems take Sram_Only and Shared_Sram; the 4 DRAM ones (internal-default too) all 7 modes.
  EXPECT_EQ(loaded, 3 * 2 + 4 * 7);
}

TEST(ArchKeys, MemoryModeByName) {
  // §2.2 Sram_Only: constants move to the second port, renamed OnChipFlash with SRAM timing.
  const Arch a = load_text("preset: ethos-u55-256\nmemory_mode: Sram_Only\n");
  EXPECT_EQ(a.memory_mode, "Sram_Only");
  EXPECT_EQ(a.permanent_storage, MemArea::OnChipFlash);
  EXPECT_EQ(a.feature_map_storage, MemArea::Sram);
  EXPECT_EQ(a.mem(MemArea::OnChipFlash).bandwidth_per_cycle, 8.0);
  EXPECT_EQ(a.mem(MemArea::OnChipFlash).burst_length, 32);
  // Dedicated_Sram_512KB on a U65 with a 4 MiB SRAM: the 524288 byte cache fits.
  const Arch b = load_text("preset: ethos-u65-256\nsram_capacity: 4MiB\nmemory_mode: Dedicated_Sram_512KB\n");
  EXPECT_TRUE(b.spilling_enabled);
  EXPECT_EQ(b.vela_sram_size, 524288);
  EXPECT_EQ(b.sram_capacity_bytes, 4194304);
  // An Ethos-U55 has no dedicated SRAM to cache in (test/errors/arch_u55_dedicated_sram.yaml).
  EXPECT_THROW(load_text("preset: ethos-u55-256\nmemory_mode: Dedicated_Sram_512KB\n"), common::UserError);
}

TEST(ArchKeys, Name) { EXPECT_EQ(load_text("preset: ethos-u55-32\nname: my npu\n").name, "my npu"); }

// ---- top-level scalars -----------------------------------------------------------------------

TEST(ArchKeys, CoreClock) { EXPECT_EQ(load_text("preset: ethos-u55-256\ncore_clock: 400e6\n").core_clock, 400e6); }

TEST(ArchKeys, AxiPortWidthRecomputesEveryBandwidth) {
  // 128-bit port on the U55 preset: Sram 128*1.0/8 = 16, OffChipFlash 128*0.125/8 = 2,
  // unconfigured Dram keeps clock scale 1.0 -> 16.
  const Arch a = load_text("preset: ethos-u55-256\naxi_port_width: 128\n");
  EXPECT_EQ(a.axi_port_width_bits, 128);
  EXPECT_EQ(a.mem(MemArea::Sram).bandwidth_per_cycle, 16.0);
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).bandwidth_per_cycle, 2.0);
  EXPECT_EQ(a.mem(MemArea::Dram).bandwidth_per_cycle, 16.0);
}

TEST(ArchKeys, SramCapacityInEveryUnit) {
  EXPECT_EQ(load_text("preset: ethos-u55-256\nsram_capacity: 512KiB\n").sram_capacity_bytes, 524288);
  EXPECT_EQ(load_text("preset: ethos-u55-256\nsram_capacity: 2000000\n").sram_capacity_bytes, 2000000);
  EXPECT_EQ(load_text("preset: ethos-u55-256\nsram_capacity: 1.5MiB\n").sram_capacity_bytes, 1572864);
  EXPECT_EQ(load_text("preset: ethos-u55-256\nsram_capacity: 1GiB\n").sram_capacity_bytes, 1073741824);
  EXPECT_EQ(load_text("preset: ethos-u55-256\nsram_capacity: 4096B\n").sram_capacity_bytes, 4096);
}

TEST(ArchKeys, CacheSize) {
  // The U65 preset states sram_capacity 384KiB; a smaller cache leaves it alone.
  const Arch a = load_text("preset: ethos-u65-256\ncache_size: 256KiB\n");
  EXPECT_EQ(a.vela_sram_size, 262144);
  EXPECT_EQ(a.sram_capacity_bytes, 393216);
  // Without a stated capacity the SRAM is the cache (make_arch's rule for spilling modes).
  const Arch b = load_text("accelerator: ethos-u65-256\ncache_size: 256KiB\n");
  EXPECT_EQ(b.sram_capacity_bytes, 262144);
  // A larger cache needs a larger SRAM, stated explicitly.
  const Arch c = load_text("preset: ethos-u65-256\ncache_size: 1MiB\nsram_capacity: 1MiB\n");
  EXPECT_EQ(c.vela_sram_size, 1048576);
  EXPECT_EQ(c.sram_capacity_bytes, 1048576);
}

// ---- memory ----------------------------------------------------------------------------------

TEST(ArchKeys, MemoryEveryAreaEveryKey) {
  const struct {
    const char* area;
    int index;
  } areas[] = {{"Sram", kSram}, {"Dram", kDram}, {"OnChipFlash", kOnChipFlash}, {"OffChipFlash", kOffChipFlash}};
  for (const auto& area : areas) {
    SCOPED_TRACE(area.area);
    const Arch a = load_text(std::string("preset: ethos-u55-256\nmemory:\n  ") + area.area +
                             ": {clock_scale: 0.375, burst_length: 48, read_latency: 7, write_latency: 9}\n");
    const MemoryParams& m = a.memory[area.index];
    EXPECT_EQ(m.clock_scale, 0.375);
    EXPECT_EQ(m.bandwidth_per_cycle, 3.0);  // 64 * 0.375 / 8
    EXPECT_EQ(m.burst_length, 48);
    EXPECT_EQ(m.latency_read, 7);
    EXPECT_EQ(m.latency_write, 9);
  }
}

TEST(ArchKeys, MemoryPartialOverrideKeepsTheRest) {
  const Arch a = load_text("preset: ethos-u65-256\nmemory: {Dram: {read_latency: 300}}\n");
  EXPECT_EQ(a.mem(MemArea::Dram).latency_read, 300);
  EXPECT_EQ(a.mem(MemArea::Dram).latency_write, 250);
  EXPECT_EQ(a.mem(MemArea::Dram).clock_scale, 0.75);
  EXPECT_EQ(a.mem(MemArea::Dram).bandwidth_per_cycle, 12.0);
  EXPECT_EQ(a.mem(MemArea::Dram).burst_length, 128);
  // Zero latency is allowed: it is what an unconfigured area has (§2.2).
  EXPECT_EQ(load_text("preset: ethos-u65-256\nmemory: {Sram: {write_latency: 0}}\n").mem(MemArea::Sram).latency_write, 0);
}

// ---- npu -------------------------------------------------------------------------------------

TEST(ArchKeys, NpuEveryKey) {
  const Arch a = load_text(R"(preset: ethos-u55-256
npu:
  macs: 512
  cores: 2
  ofm_ublock: {w: 4, h: 2, d: 16}
  ifm_ublock: {w: 4, h: 2, d: 8}
  shram_banks: 64
  shram_granules: [1, 2, 3, 4, 5, 6, 7, 8]
  elementwise_units: 16
  output_cycles_per_elem: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
  activation_cycles_per_elem: [0.5, 0.125, 0]
  ofm_block_max: {w: 32, h: 16, d: 64}
  ofm_split_depth: 32
  sub_kernel_max: {w: 4, h: 4, d: 1024}
  sub_kernel_limits: {Default: {h: 2, w: 3}, ReduceSum: {h: 4, w: 5}}
)");
  EXPECT_EQ(a.accel.macs, 512);
  EXPECT_EQ(a.accel.cores, 2);
  EXPECT_EQ(a.ncores(), 2);
  EXPECT_EQ(a.accel.ofm_ublock, (Block{4, 2, 16}));
  EXPECT_EQ(a.accel.ifm_ublock, (Block{4, 2, 8}));
  EXPECT_EQ(a.accel.shram_banks, 64);
  EXPECT_EQ(a.total_shram_banks(), 62);  // 64 - 2 reserved_unused (more than 16 banks, §8.1)
  EXPECT_EQ(a.accel.shram_granules, (std::array<int, 8>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(a.accel.elementwise_units, 16);
  EXPECT_EQ(a.accel.output_cycles_per_elem, (std::array<double, 8>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}));
  EXPECT_EQ(a.accel.activation_cycles_per_elem, (std::array<double, 3>{0.5, 0.125, 0.0}));
  EXPECT_EQ(a.ofm_block_max, (Block{32, 16, 64}));
  EXPECT_EQ(a.ofm_split_depth, 32);
  EXPECT_EQ(a.default_sub_kernel_max, (Block{4, 4, 1024}));
  EXPECT_EQ(a.sub_kernel_limits[static_cast<int>(NpuBlockType::Default)], (std::array<int, 2>{2, 3}));
  EXPECT_EQ(a.sub_kernel_limits[static_cast<int>(NpuBlockType::ReduceSum)], (std::array<int, 2>{4, 5}));
  // Block types not named keep §1.3's limits.
  EXPECT_EQ(a.sub_kernel_limits[static_cast<int>(NpuBlockType::VectorProduct)], (std::array<int, 2>{1, 1}));
  EXPECT_EQ(a.sub_kernel_limits[static_cast<int>(NpuBlockType::ConvolutionMxN)], (std::array<int, 2>{8, 8}));
}

TEST(ArchKeys, NpuEveryBlockTypeName) {
  const char* names[] = {"Default", "VectorProduct", "ConvolutionMxN", "Pooling", "ConvolutionDepthWise", "ElementWise",
                         "ReduceSum"};
  for (int i = 0; i < kNumNpuBlockTypes; ++i) {
    SCOPED_TRACE(names[i]);
    const Arch a = load_text(std::string("preset: ethos-u55-256\nnpu: {sub_kernel_limits: {") + names[i] +
                             ": {h: 3, w: 2}}}\n");
    EXPECT_EQ(a.sub_kernel_limits[i], (std::array<int, 2>{3, 2}));
  }
}

// ---- shram -----------------------------------------------------------------------------------

TEST(ArchKeys, ShramEveryKey) {
  const Arch a = load_text(R"(preset: ethos-u55-256
shram:
  bank_size: 2KiB
  reserved_output_banks: 4
  reserved_weight_banks: 1
  byte_sizes: [1, 2, 1, 2, 4, 3, 4, 6]
  pre_align: [1, 1, 1, 1, 1, 4, 4, 4]
  post_align: [16, 16, 16, 16, 16, 1, 1, 1]
  block_config_depths: [8, 16, 24]
)");
  EXPECT_EQ(a.shram.bank_size_bytes, 2048);
  EXPECT_EQ(a.shram.reserved_output_banks, 4);
  EXPECT_EQ(a.shram.reserved_weight_banks, 1);
  EXPECT_EQ(a.shram.byte_sizes, (std::array<int, 8>{1, 2, 1, 2, 4, 3, 4, 6}));
  EXPECT_EQ(a.shram.pre_align, (std::array<int, 8>{1, 1, 1, 1, 1, 4, 4, 4}));
  EXPECT_EQ(a.shram.post_align, (std::array<int, 8>{16, 16, 16, 16, 16, 1, 1, 1}));
  EXPECT_EQ(a.shram.block_config_depths, (std::vector<int>{8, 16, 24}));
}

// ---- scheduler and energy --------------------------------------------------------------------

TEST(ArchKeys, SchedulerEveryKey) {
  const Arch a = load_text(R"(preset: ethos-u65-256
scheduler:
  bandwidth_weights: {Sram: 1.5, Dram: 8, OnChipFlash: 3, OffChipFlash: 25, Shram: 0.5}
  cycles_weight: 50
  max_sram_used_weight: 500
)");
  EXPECT_EQ(a.bandwidth_weights[kSram], 1.5);
  EXPECT_EQ(a.bandwidth_weights[kDram], 8.0);
  EXPECT_EQ(a.bandwidth_weights[kOnChipFlash], 3.0);
  EXPECT_EQ(a.bandwidth_weights[kOffChipFlash], 25.0);
  EXPECT_EQ(a.bandwidth_weights[kShram], 0.5);
  EXPECT_EQ(a.cycles_weight, 50.0);
  EXPECT_EQ(a.max_sram_used_weight, 500.0);
}

TEST(ArchKeys, EnergyEveryKey) {
  const Arch a = load_text(R"(preset: ethos-u55-256
energy:
  read_pj_per_byte: {Sram: 1, Dram: 2, OnChipFlash: 3, OffChipFlash: 4, Shram: 5}
  write_pj_per_byte: {Sram: 6, Dram: 7, OnChipFlash: 8, OffChipFlash: 9, Shram: 10}
  pj_per_mac: 0.5
)");
  EXPECT_EQ(a.energy.read_pj_per_byte, (std::array<double, 6>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(a.energy.write_pj_per_byte, (std::array<double, 6>{0, 6, 7, 8, 9, 10}));
  EXPECT_EQ(a.energy.pj_per_mac, 0.5);
  // A partial table keeps the preset's other entries; zero energy is allowed.
  const Arch b = load_text("preset: ethos-u55-256\nenergy: {read_pj_per_byte: {Dram: 0}}\n");
  EXPECT_EQ(b.energy.read_pj_per_byte[kDram], 0.0);
  EXPECT_EQ(b.energy.read_pj_per_byte[kSram], 4.0);
  EXPECT_EQ(b.energy.pj_per_mac, 0.25);
}

// ---- the documented full example -------------------------------------------------------------

TEST(ArchFormat, FullExampleLoadsAsWritten) {
  const Arch a = load_arch("test/arch/full_example.yaml");
  EXPECT_EQ(a.name, "u55-256-fast-flash");
  EXPECT_EQ(a.system_config, "Ethos_U55_High_End_Embedded");
  EXPECT_EQ(a.memory_mode, "Shared_Sram");
  EXPECT_EQ(a.core_clock, 400e6);
  EXPECT_EQ(a.sram_capacity_bytes, 2 * 1048576);
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).bandwidth_per_cycle, 2.0);  // 64 * 0.25 / 8
  EXPECT_EQ(a.mem(MemArea::OffChipFlash).burst_length, 256);
  EXPECT_EQ(a.mem(MemArea::Dram).bandwidth_per_cycle, 4.0);  // 64 * 0.5 / 8
  EXPECT_EQ(a.sub_kernel_limits[static_cast<int>(NpuBlockType::ConvolutionMxN)], (std::array<int, 2>{4, 4}));
  EXPECT_EQ(a.shram.block_config_depths, (std::vector<int>{8, 16, 32, 64}));
  EXPECT_EQ(a.bandwidth_weights[kOffChipFlash], 10.0);
  EXPECT_EQ(a.energy.pj_per_mac, 0.2);
}

TEST(ArchFormat, DocsShowTheFullExampleVerbatim) {
  const std::string doc = read_file("docs/arch-format.md");
  const std::string example = read_file("test/arch/full_example.yaml");
  ASSERT_FALSE(example.empty());
  EXPECT_NE(doc.find("```yaml\n" + example + "```"), std::string::npos)
      << "docs/arch-format.md must quote test/arch/full_example.yaml in a ```yaml block";
}

TEST(ArchFormat, DocsListEveryPreset) {
  const std::string doc = read_file("docs/arch-format.md");
  for (const auto& name : preset_names()) EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << name;
  for (const auto& name : system_config_names()) EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << name;
  for (const auto& name : memory_mode_names()) EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << name;
}

// ---- layering and resolution -----------------------------------------------------------------

TEST(ArchLayers, FileOverridesOnlyWhatItStates) {
  const Arch a = load_text("preset: ethos-u65-256\ncore_clock: 750e6\n");
  Arch expected = make_arch("ethos-u65-256");
  expected.core_clock = 750e6;
  expected.name = "t.yaml";
  expect_same_arch(a, expected);
}

TEST(ArchLayers, PresetChainAppliesBaseFirst) {
  TempDir dir;
  dir.write("base.yaml", "accelerator: ethos-u55-64\ncore_clock: 100e6\nsram_capacity: 256KiB\n");
  dir.write("mid.yaml", "preset: base\ncore_clock: 200e6\nmemory: {Sram: {burst_length: 16}}\n");
  const std::string file = dir.write("top.yaml", "preset: mid\nsram_capacity: 128KiB\n");
  const Arch a = load_arch(file, dir.path.string());
  EXPECT_EQ(a.accel.name, "ethos-u55-64");  // from base
  EXPECT_EQ(a.core_clock, 200e6);           // mid over base
  EXPECT_EQ(a.mem(MemArea::Sram).burst_length, 16);
  EXPECT_EQ(a.sram_capacity_bytes, 131072);  // top over base
  EXPECT_EQ(a.name, file);
  const Arch mid = load_arch("mid", dir.path.string());
  EXPECT_EQ(mid.name, "mid");
  EXPECT_EQ(mid.sram_capacity_bytes, 262144);
  EXPECT_EQ(preset_names(dir.path.string()), (std::vector<std::string>{"base", "mid", "top"}));
}

TEST(ArchLayers, PresetLoopIsAnError) {
  TempDir dir;
  const std::string a = dir.write("a.yaml", "preset: b\n");
  const std::string b = dir.write("b.yaml", "preset: a\n");
  try {
    load_arch("a", dir.path.string());
    FAIL() << "expected a common::UserError";
  } catch (const common::UserError& e) {
    // a -> b -> a: the loop is found at b's `preset: a` (line 1, value at column 9).
    EXPECT_EQ(std::string(e.what()), b + ":1:9: preset: preset `a` starts from itself (remove the `preset:` loop)");
  }
}

TEST(ArchResolve, PresetNameThenPath) {
  TempDir dir;
  const std::string file = dir.write("mine.yaml", "preset: ethos-u55-64\ncore_clock: 250e6\n");
  const Arch a = load_arch(file);
  EXPECT_EQ(a.name, file);
  EXPECT_EQ(a.accel.macs, 64);
  EXPECT_EQ(a.core_clock, 250e6);
}

TEST(ArchResolve, UnknownPresetNamesTheClosest) {
  try {
    load_arch("ethos-u55-255");
    FAIL() << "expected a common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "arch: unknown preset `ethos-u55-255` (did you mean `ethos-u55-256`? one of: ethos-u55-32, ethos-u55-64, "
              "ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512)");
    EXPECT_EQ(e.key_path(), "arch");
  }
}

TEST(ArchResolve, MissingFile) {
  try {
    load_arch("no/such/arch.yaml");
    FAIL() << "expected a common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "no/such/arch.yaml: cannot open arch file (check the path, or name a preset: ethos-u55-32, ethos-u55-64, "
              "ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512)");
  }
}

// ---- byte sizes ------------------------------------------------------------------------------

TEST(ByteSize, UnitsAndRejections) {
  std::int64_t v = 0;
  EXPECT_TRUE(parse_byte_size("1024", v));
  EXPECT_EQ(v, 1024);
  EXPECT_TRUE(parse_byte_size("512KiB", v));
  EXPECT_EQ(v, 512 * 1024);
  EXPECT_TRUE(parse_byte_size("1 MiB", v));
  EXPECT_EQ(v, 1048576);
  EXPECT_TRUE(parse_byte_size("0.5KiB", v));
  EXPECT_EQ(v, 512);
  EXPECT_TRUE(parse_byte_size("3GiB", v));
  EXPECT_EQ(v, 3LL * 1024 * 1024 * 1024);
  EXPECT_TRUE(parse_byte_size("-2KiB", v));
  EXPECT_EQ(v, -2048);  // parsed; the loader then rejects it as not positive
  EXPECT_TRUE(parse_byte_size("0", v));
  EXPECT_EQ(v, 0);
  EXPECT_FALSE(parse_byte_size("1MB", v));      // decimal units are ambiguous, so not accepted
  EXPECT_FALSE(parse_byte_size("1.5", v));      // a plain byte count is whole
  EXPECT_FALSE(parse_byte_size("0.3KiB", v));   // 307.2 bytes
  EXPECT_FALSE(parse_byte_size("KiB", v));
  EXPECT_FALSE(parse_byte_size("", v));
  EXPECT_FALSE(parse_byte_size("1e6", v));
  EXPECT_FALSE(parse_byte_size("12x", v));
}

}  // namespace
}  // namespace npumap::arch

namespace npumap::arch {
namespace {

// ArchBase (a sweep's base read once) against the loader reading the same keys from one file
// (`preset: <base>` then the overrides): the same arch whether the overrides keep the base's
// identity (only their layer is applied to the base's cached arch) or change it (built from scratch),
// and the base is read once however many archs are built from it.
TEST(ArchBase, SameArchAsOneFileWithThoseKeys) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ethos-u55-256", "sram_capacity: 1MiB\n"},
      {"ethos-u55-256", "core_clock: 400e6\naxi_port_width: 128\n"},
      {"ethos-u55-256", "memory:\n  OffChipFlash: {clock_scale: 0.25}\n"},
      {"ethos-u55-256", "memory_mode: Shared_Sram\n"},
      {"ethos-u55-256", "accelerator: ethos-u55-64\n"},
      {"ethos-u65-256", "system_config: Ethos_U65_High_End\nmemory_mode: Dedicated_Sram\nsram_capacity: 2MiB\n"},
      {"ethos-u65-256", "sram_capacity: 1MiB\ncache_size: 512KiB\n"},
      {"ethos-u65-512", ""},
  };
  // One ArchBase per base, used for every case of it in turn: a build leaves the base unchanged.
  std::map<std::string, ArchBase> prepared_bases;
  for (const auto& [base, keys] : cases) {
    SCOPED_TRACE(base + ": " + keys);
    const ArchBase& prepared = prepared_bases.try_emplace(base, base, default_presets_dir()).first->second;
    const common::YamlNode overrides = common::YamlNode::load_string(keys, "o.yaml");  // "" is null: no overrides
    Arch from_base;
    try {
      from_base = prepared.build(overrides, "point");
    } catch (const common::UserError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const Arch from_file = load_text("preset: " + base + "\n" + keys);
    expect_same_arch(from_base, from_file);
    EXPECT_EQ(from_base.name, "point");
  }
  // After those builds, the bases alone are still the presets.
  for (const auto& [base, prepared] : prepared_bases) expect_same_arch(prepared.build(common::YamlNode::load_string("", "o.yaml"), base), load_arch(base));
}

TEST(ArchBase, ReadsItsBaseOnce) {
  TempDir tmp;
  // A file whose `preset:` names another: two files for the base, then none per build.
  const std::string file = tmp.write("base.yaml", "preset: ethos-u55-128\ncore_clock: 300e6\n");
  const std::size_t before = arch_files_read();
  const ArchBase prepared(file, default_presets_dir());
  EXPECT_EQ(arch_files_read() - before, 2u);
  const common::YamlNode overrides = common::YamlNode::load_string("sram_capacity: 2MiB\n", "o.yaml");
  for (int i = 0; i < 100; ++i) {
    const Arch a = prepared.build(overrides, "p");
    ASSERT_EQ(a.sram_capacity_bytes, 2 << 20);
    ASSERT_EQ(a.core_clock, 300e6);
  }
  EXPECT_EQ(arch_files_read() - before, 2u);
}

}  // namespace
}  // namespace npumap::arch
