// Vela's system configs and memory modes (arch/vela_config.hpp): the built-in sections against the
// numbers of Arm's shipped vela.ini (typed here from Vela 2.1's file at commit 64556f32 and Vela 4's,
// not from our text), the lookup rules of Vela's _read_config (inherit, then the section itself; files
// merged key by key), the checks of every --config section, the notes on keys the model does not use,
// combinations that cannot exist, and the arch loader's use of all this.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_loader.hpp"
#include "arch/vela_config.hpp"
#include "common/user_error.hpp"

namespace npumap::arch {
namespace {

struct ShippedSystem {
  const char* name;
  double core_clock;
  MemArea second;
  MemoryTiming timing;  // the second port's memory
};

// Vela's vela.ini: every system config has Sram on axi0 with clock scale 1.0, burst 32, latency 32/32.
const std::vector<ShippedSystem> kShippedSystems = {
    {"Ethos_U55_Deep_Embedded", 200e6, MemArea::OffChipFlash, {0.0625, 128, 64, 64}},
    {"Ethos_U55_High_End_Embedded", 500e6, MemArea::OffChipFlash, {0.125, 128, 64, 64}},
    {"Ethos_U65_Embedded", 500e6, MemArea::OffChipFlash, {0.0625, 128, 64, 64}},
    {"Ethos_U65_Mid_End", 500e6, MemArea::Dram, {0.46875, 128, 500, 250}},
    {"Ethos_U65_High_End", 1e9, MemArea::Dram, {0.234375, 128, 500, 250}},
    {"Ethos_U65_Client_Server", 1e9, MemArea::Dram, {0.75, 128, 500, 250}},
};

struct ShippedMode {
  const char* name;
  AxiPort const_port, arena_port, cache_port;
  std::int64_t size;  // 0: none
};

const std::vector<ShippedMode> kShippedModes = {
    {"Sram_Only", AxiPort::Axi0, AxiPort::Axi0, AxiPort::Axi0, 0},
    {"Shared_Sram", AxiPort::Axi1, AxiPort::Axi0, AxiPort::Axi0, 0},
    {"Dedicated_Sram", AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 384 * 1024},
    {"Dedicated_Sram_256KB", AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 256 * 1024},
    {"Dedicated_Sram_384KB", AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 384 * 1024},
    {"Dedicated_Sram_512KB", AxiPort::Axi1, AxiPort::Axi1, AxiPort::Axi0, 512 * 1024},
};

const AcceleratorConfig& u55() { return accelerator_config("ethos-u55-256"); }
const AcceleratorConfig& u65() { return accelerator_config("ethos-u65-256"); }

void expect_system(const SystemConfig& s, const ShippedSystem& want) {
  SCOPED_TRACE(want.name);
  EXPECT_EQ(s.core_clock, want.core_clock);
  EXPECT_EQ(s.axi_port[0], MemArea::Sram);
  EXPECT_EQ(s.axi_port[1], want.second);
  const MemoryTiming& sram = s.memory[static_cast<int>(MemArea::Sram)];
  EXPECT_EQ(sram.clock_scale, 1.0);
  EXPECT_EQ(sram.burst_length, 32);
  EXPECT_EQ(sram.read_latency, 32);
  EXPECT_EQ(sram.write_latency, 32);
  const MemoryTiming& m = s.memory[static_cast<int>(want.second)];
  EXPECT_EQ(m.clock_scale, want.timing.clock_scale);
  EXPECT_EQ(m.burst_length, want.timing.burst_length);
  EXPECT_EQ(m.read_latency, want.timing.read_latency);
  EXPECT_EQ(m.write_latency, want.timing.write_latency);
}

void expect_mode(const MemoryMode& m, const ShippedMode& want) {
  SCOPED_TRACE(want.name);
  EXPECT_EQ(m.const_port, want.const_port);
  EXPECT_EQ(m.arena_port, want.arena_port);
  EXPECT_EQ(m.cache_port, want.cache_port);
  if (want.size == 0) {
    EXPECT_FALSE(m.arena_cache_size.has_value());
  } else {
    EXPECT_EQ(m.arena_cache_size, want.size);
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const common::UserError& e) {
    return e.what();
  }
  return "";
}

VelaConfig config(const std::string& text) { return VelaConfig::from_texts({{text, "my.ini"}}); }

TEST(VelaConfig, BuiltinSectionsAreArmsShippedValues) {
  const VelaConfig& b = VelaConfig::builtin();
  for (const ShippedSystem& s : kShippedSystems) expect_system(b.system_config(s.name, u55()), s);
  for (const ShippedMode& m : kShippedModes) expect_mode(b.memory_mode(m.name, u55()), m);
  std::vector<std::string> sys = {"internal-default"};
  for (const ShippedSystem& s : kShippedSystems) sys.push_back(s.name);
  EXPECT_EQ(b.system_config_names(), sys);
  std::vector<std::string> modes = {"internal-default"};
  for (const ShippedMode& m : kShippedModes) modes.push_back(m.name);
  EXPECT_EQ(b.memory_mode_names(), modes);
}

TEST(VelaConfig, InternalDefaultIsVelasDefaultForTheAccelerator) {
  // Vela's _set_default_sys_config / _set_default_mem_mode: U55 High-End Embedded with Shared SRAM,
  // U65 Client-Server with Dedicated SRAM (384 KiB cache).
  const VelaConfig& b = VelaConfig::builtin();
  expect_system(b.system_config("internal-default", u55()), kShippedSystems[1]);
  expect_system(b.system_config("internal-default", u65()), kShippedSystems[5]);
  expect_mode(b.memory_mode("internal-default", u55()), kShippedModes[1]);
  expect_mode(b.memory_mode("internal-default", u65()), kShippedModes[2]);
  EXPECT_EQ(b.system_config("internal-default", u55()).name, "internal-default");
}

TEST(VelaConfig, TheListedTextReadsBackAsTheSameSections) {
  // `mapper list system-configs` and `mapper list memory-modes` print these texts; read back with
  // --config they define the same sections, so every combination builds the same arch.
  const VelaConfig read = VelaConfig::from_texts(
      {{builtin_system_configs_ini(), "system-configs.ini"}, {builtin_memory_modes_ini(), "memory-modes.ini"}});
  const VelaConfig& b = VelaConfig::builtin();
  EXPECT_EQ(read.system_config_names(), b.system_config_names());
  EXPECT_EQ(read.memory_mode_names(), b.memory_mode_names());
  for (const ShippedSystem& s : kShippedSystems) {
    const SystemConfig r = read.system_config(s.name, u55());
    EXPECT_FALSE(r.builtin);
    expect_system(r, s);
  }
  for (const ShippedMode& m : kShippedModes) expect_mode(read.memory_mode(m.name, u65()), m);
  int built = 0;
  for (const std::string& acc : accelerator_names()) {
    for (const std::string& sys : b.system_config_names()) {
      for (const std::string& mode : b.memory_mode_names()) {
        const AcceleratorConfig& a = accelerator_config(acc);
        if (combination_problem(a, b.system_config(sys, a), b.memory_mode(mode, a))) continue;
        const Arch x = b.make_arch(a, sys, mode);
        const Arch y = read.make_arch(a, sys, mode);
        EXPECT_EQ(x.core_clock, y.core_clock);
        for (int i = 0; i < kNumMemAreas; ++i) {
          EXPECT_EQ(x.memory[i].bandwidth_per_cycle, y.memory[i].bandwidth_per_cycle);
          EXPECT_EQ(x.memory[i].burst_length, y.memory[i].burst_length);
          EXPECT_EQ(x.memory[i].latency_read, y.memory[i].latency_read);
          EXPECT_EQ(x.memory[i].latency_write, y.memory[i].latency_write);
        }
        EXPECT_EQ(x.permanent_storage, y.permanent_storage);
        EXPECT_EQ(x.feature_map_storage, y.feature_map_storage);
        EXPECT_EQ(x.spilling_enabled, y.spilling_enabled);
        EXPECT_EQ(x.vela_sram_size, y.vela_sram_size);
        EXPECT_EQ(x.sram_capacity_bytes, y.sram_capacity_bytes);
        ++built;
      }
    }
  }
  // Per U55: the 4 systems without DRAM (internal-default, both U55 ones, Ethos_U65_Embedded) with the 3
  // modes without a cache (internal-default, Sram_Only, Shared_Sram), + Sram_Only on the 3 DRAM systems
  // (it moves the constants off the DRAM port) = 15. Per U65: the 3 flash systems with Sram_Only and
  // Shared_Sram (the Dedicated modes would put the arena in flash) = 6, + the 4 DRAM systems (with
  // internal-default) with all 7 modes = 28. 4 x 15 + 2 x 34 = 128.
  EXPECT_EQ(built, 128);
}

TEST(VelaConfig, InheritTakesTheParentsValueUnlessTheSectionSetsItsOwn) {
  const VelaConfig c = config(
      "[System_Config.Parent]\ncore_clock=1e9\naxi0_port=Sram\naxi1_port=Dram\nSram_clock_scale=1.0\n"
      "Dram_clock_scale=0.5\nDram_burst_length=64\n\n"
      "[System_Config.Child]\ninherit=System_Config.Parent\ncore_clock=5e8\nDram_burst_length=128\n\n"
      "[System_Config.Grandchild]\ninherit=System_Config.Child\nDram_clock_scale=0.25\n");
  const SystemConfig g = c.system_config("Grandchild", u65());
  EXPECT_EQ(g.core_clock, 5e8);                                           // the child's
  EXPECT_EQ(g.memory[static_cast<int>(MemArea::Dram)].clock_scale, 0.25);  // its own
  EXPECT_EQ(g.memory[static_cast<int>(MemArea::Dram)].burst_length, 128);  // the child's over the parent's
  EXPECT_EQ(g.memory[static_cast<int>(MemArea::Dram)].read_latency, 0);    // nobody's: Vela's 0
  EXPECT_EQ(g.axi_port[1], MemArea::Dram);                                 // the parent's
  // A section may inherit from a built-in one.
  const VelaConfig d = config("[System_Config.Slow]\ninherit=System_Config.Ethos_U55_High_End_Embedded\ncore_clock=1e8\n");
  const SystemConfig s = d.system_config("Slow", u55());
  EXPECT_EQ(s.core_clock, 1e8);
  EXPECT_EQ(s.memory[static_cast<int>(MemArea::OffChipFlash)].clock_scale, 0.125);
}

TEST(VelaConfig, LaterFilesAddToAndOverrideSectionsAndUserSectionsShadowBuiltins) {
  const VelaConfig c = VelaConfig::from_texts(
      {{"[Memory_Mode.M]\nconst_mem_area=Axi1\narena_mem_area=Axi1\ncache_mem_area=Axi0\narena_cache_size=1000\n", "a.ini"},
       {"[Memory_Mode.M]\narena_cache_size=2000\n", "b.ini"}});
  const MemoryMode m = c.memory_mode("M", u65());
  EXPECT_EQ(m.arena_cache_size, 2000);
  EXPECT_EQ(m.const_port, AxiPort::Axi1);
  EXPECT_EQ(m.size_where.file, "b.ini");
  EXPECT_EQ(m.port_where[0].file, "a.ini");
  // A file's section of a built-in name replaces it whole: keys it does not set take Vela's values.
  const VelaConfig d = config("[System_Config.Ethos_U55_High_End_Embedded]\ncore_clock=1e8\naxi1_port=OffChipFlash\n"
                              "OffChipFlash_clock_scale=0.5\n");
  const SystemConfig s = d.system_config("Ethos_U55_High_End_Embedded", u55());
  EXPECT_FALSE(s.builtin);
  EXPECT_EQ(s.core_clock, 1e8);
  EXPECT_EQ(s.memory[static_cast<int>(MemArea::OffChipFlash)].burst_length, 1);
  EXPECT_EQ(s.axi_port[0], MemArea::Sram);  // Vela's MemArea(1)
  // The files' names come first, then the built-ins that no file redefines.
  const VelaConfig e = config("[System_Config.Z]\ncore_clock=1e8\n");
  EXPECT_EQ(e.system_config_names().at(1), "Z");
  EXPECT_EQ(e.system_config_names().size(), 8u);
}

TEST(VelaConfig, DefaultSectionKeysReachEverySectionAndOverrideInheritedOnes) {
  // configparser's has_option sees [DEFAULT], so in Vela's _read_config a [DEFAULT] value beats the
  // parent's (it counts as the section's own).
  const VelaConfig c = config("[DEFAULT]\nSram_burst_length=64\n[System_Config.P]\ncore_clock=1e9\nSram_burst_length=16\n"
                              "Sram_clock_scale=1\n[System_Config.C]\ninherit=System_Config.P\n");
  EXPECT_EQ(c.system_config("C", u55()).memory[static_cast<int>(MemArea::Sram)].burst_length, 64);
  EXPECT_EQ(c.system_config("P", u55()).memory[static_cast<int>(MemArea::Sram)].burst_length, 16);
}

TEST(VelaConfig, EverySectionIsCheckedWhenTheFilesAreRead) {
  EXPECT_EQ(error_of([] { config("[System_Config.X]\ncore_clock=500e6\nSram_clock_scle=1\n"); }),
            "my.ini:3:1: System_Config.X.Sram_clock_scle: unknown key `Sram_clock_scle` (did you mean `Sram_clock_scale`? "
            "keys of a System_Config section: core_clock, axi0_port, axi1_port, <Mem>_clock_scale, <Mem>_burst_length, "
            "<Mem>_read_latency, <Mem>_write_latency, <Mem>_max_reads, <Mem>_max_writes, <Mem>_ports_used, inherit (Mem: "
            "Sram, Dram, OnChipFlash, OffChipFlash))");
  EXPECT_NE(error_of([] { config("[Memory_Mode.X]\ncore_clock=500e6\n"); }).find("`core_clock` is a System_Config key"),
            std::string::npos);
  EXPECT_NE(error_of([] { config("[System_Config.X]\ncore_clock=0\n"); }).find("must be a positive number, got `0`"), std::string::npos);
  EXPECT_NE(error_of([] { config("[System_Config.X]\nSram_burst_length=32.0\n"); }).find("expected a whole number, got `32.0`"),
            std::string::npos);
  EXPECT_NE(error_of([] { config("[System_Config.X]\nSram_burst_length=0\n"); }).find("must be at least 1, got 0"), std::string::npos);
  EXPECT_NE(error_of([] { config("[System_Config.X]\naxi0_port=sram\n"); }).find("unknown memory `sram` (did you mean `Sram`?"),
            std::string::npos);
  EXPECT_NE(error_of([] { config("[Memory_Mode.X]\narena_cache_size=384KiB\n"); }).find("no unit"), std::string::npos);
  EXPECT_NE(error_of([] { config("[Memory_Mode.X]\ninherit=Memory_Mode.X\n"); }).find("my.ini:2:9: Memory_Mode.X.inherit: "
                                                                                         "inheriting [Memory_Mode.X] loops back"),
            std::string::npos);
  // A value continued on an indented line is one value, as configparser reads it.
  EXPECT_NE(error_of([] { config("[System_Config.X]\ncore_clock=500e6\n  400e6\n"); }).find("continues its value"),
            std::string::npos);
  // Python's number syntax: exponents, underscores between digits, signs.
  const VelaConfig ok = config("[System_Config.X]\ncore_clock=1_000e6\nSram_clock_scale=.5\nSram_burst_length=+0_32\n");
  const SystemConfig x = ok.system_config("X", u55());
  EXPECT_EQ(x.core_clock, 1e9);
  EXPECT_EQ(x.memory[static_cast<int>(MemArea::Sram)].clock_scale, 0.5);
  EXPECT_EQ(x.memory[static_cast<int>(MemArea::Sram)].burst_length, 32);
}

TEST(VelaConfig, SelectingASectionNeedsItsClockAndUnknownNamesListTheNames) {
  const VelaConfig c = config("[System_Config.No_Clock]\nSram_clock_scale=1\n");
  EXPECT_NE(error_of([&] { c.system_config("No_Clock", u55()); }).find("my.ini:1:1: System_Config.No_Clock.core_clock: "
                                                                      "[System_Config.No_Clock] sets no core_clock"),
            std::string::npos);
  EXPECT_NE(error_of([&] { c.system_config("No_Clok", u55()); }).find("unknown system config `No_Clok` (did you mean `No_Clock`?"),
            std::string::npos);
  EXPECT_NE(error_of([&] { c.memory_mode("Shared_SRAM", u55()); }).find("did you mean `Shared_Sram`?"), std::string::npos);
}

TEST(VelaConfig, KeysTheModelDoesNotUseAreNotedOnce) {
  const VelaConfig c = config(
      "[System_Config.S]\ninherit=System_Config.P\nSram_max_reads=8\nDram_clock_scale=0.5\n"
      "[System_Config.P]\ncore_clock=5e8\naxi0_port=Sram\naxi1_port=OffChipFlash\nSram_clock_scale=1\nSram_burst_length=32\n"
      "Sram_read_latency=32\nSram_write_latency=32\nOffChipFlash_clock_scale=0.125\nOffChipFlash_burst_length=128\n"
      "OffChipFlash_read_latency=64\nOffChipFlash_write_latency=64\nOffChipFlash_ports_used=1\n"
      "[Memory_Mode.M]\nconst_mem_area=Axi1\narena_mem_area=Axi0\ncache_mem_area=Axi0\ncache_sram_size=1000\n");
  std::vector<std::string> notes;
  c.make_arch(u55(), "S", "M", {}, &notes);
  c.make_arch(u55(), "S", "M", {}, &notes);  // the same notes are not added twice
  const std::vector<std::string> want = {
      "my.ini:3: [System_Config.S] Sram_max_reads = 8: not modelled: the cycle model does not limit outstanding AXI transactions",
      "my.ini:4: [System_Config.S] Dram_clock_scale = 0.5: not used: no AXI port of this system config is Dram",
      "my.ini:17: [System_Config.P] OffChipFlash_ports_used = 1: not modelled: one AXI port per memory",
      "my.ini:22: [Memory_Mode.M] cache_sram_size = 1000: not used: the mode does not spill (Vela 2.1 reads it only for a "
      "dedicated SRAM cache)"};
  EXPECT_EQ(notes, want);
}

TEST(VelaConfig, CombinationsThatCannotExistSayWhyAndWhatWould) {
  const VelaConfig& b = VelaConfig::builtin();
  const auto problem = [&](const char* acc, const char* sys, const char* mode) {
    const AcceleratorConfig& a = accelerator_config(acc);
    return combination_problem(a, b.system_config(sys, a), b.memory_mode(mode, a));
  };
  // An Ethos-U55 has no dedicated SRAM and no DRAM.
  const auto dedicated = problem("ethos-u55-32", "internal-default", "Dedicated_Sram_512KB");
  ASSERT_TRUE(dedicated);
  EXPECT_EQ(dedicated->blame, ArchProblem::Blame::MemoryMode);
  const auto dram = problem("ethos-u55-256", "Ethos_U65_High_End", "Shared_Sram");
  ASSERT_TRUE(dram);
  EXPECT_EQ(dram->blame, ArchProblem::Blame::SystemConfig);
  // Sram_Only moves the constants off the DRAM port: no DRAM is used.
  EXPECT_FALSE(problem("ethos-u55-256", "Ethos_U65_High_End", "Sram_Only"));
  // Vela's checks: the arena of Dedicated_Sram on a flash port.
  const auto arena = problem("ethos-u65-256", "Ethos_U65_Embedded", "Dedicated_Sram");
  ASSERT_TRUE(arena);
  EXPECT_NE(arena->message.find("the arena needs Sram or Dram"), std::string::npos);
  EXPECT_FALSE(problem("ethos-u65-512", "Ethos_U65_Mid_End", "Dedicated_Sram_256KB"));
  EXPECT_FALSE(problem("ethos-u65-256", "Ethos_U65_Embedded", "Shared_Sram"));
  // The hint lists what works with the other section.
  EXPECT_EQ(error_of([&] { b.make_arch(u55(), "Ethos_U65_Mid_End", "internal-default"); }),
            "system_config: system config `Ethos_U65_Mid_End` puts Dram on axi1_port, which memory mode `internal-default` "
            "uses, and an ethos-u55-256 system has no DRAM (SRAM and flash only) (system configs for ethos-u55-256 with "
            "memory mode `internal-default`: internal-default, Ethos_U55_Deep_Embedded, Ethos_U55_High_End_Embedded, "
            "Ethos_U65_Embedded)");
  // An ini section is blamed at its line.
  const VelaConfig c = config("[Memory_Mode.Mine]\nconst_mem_area=Axi1\narena_mem_area=Axi1\ncache_mem_area=Axi0\n"
                              "arena_cache_size=1024\n");
  EXPECT_NE(error_of([&] { c.make_arch(u55(), "internal-default", "Mine"); })
                .find("my.ini:4:16: Memory_Mode.Mine.cache_mem_area: memory mode `Mine` ([Memory_Mode.Mine]) keeps the arena"),
            std::string::npos);
}

TEST(VelaConfig, TheArchLoaderResolvesNamesAndSizesFromTheFiles) {
  const VelaConfig c = config(
      "[Memory_Mode.Big_Cache]\ninherit=Memory_Mode.Dedicated_Sram\narena_cache_size=1048576\n"
      "[Memory_Mode.Small_Arena]\ninherit=Memory_Mode.Shared_Sram\narena_cache_size=262144\n"
      "[Memory_Mode.No_Size]\nconst_mem_area=Axi1\narena_mem_area=Axi1\ncache_mem_area=Axi0\n");
  ArchRequest r;
  r.accelerator = "ethos-u65-256";
  r.memory_mode = "Big_Cache";
  r.vela = &c;
  const Arch big = load_arch(r, default_presets_dir());
  EXPECT_TRUE(big.spilling_enabled);
  EXPECT_EQ(big.vela_sram_size, 1048576);
  EXPECT_EQ(big.sram_capacity_bytes, 1048576);
  // The preset states its SRAM (384 KiB), which a 1 MiB cache does not fit.
  r.spec = "ethos-u65-256";
  EXPECT_NE(error_of([&] { load_arch(r, default_presets_dir()); }).find("does not fit in sram_capacity"), std::string::npos);
  // --arena-cache-size is the last word.
  r.arena_cache_size = 393216;
  EXPECT_EQ(load_arch(r, default_presets_dir()).vela_sram_size, 393216);
  r = {};
  r.accelerator = "ethos-u55-128";
  r.memory_mode = "Small_Arena";
  r.vela = &c;
  const Arch small = load_arch(r, default_presets_dir());
  EXPECT_FALSE(small.spilling_enabled);
  EXPECT_EQ(small.sram_capacity_bytes, 262144);
  r.accelerator = "ethos-u65-512";
  r.memory_mode = "No_Size";
  r.memory_mode_key = "--memory-mode";
  EXPECT_NE(error_of([&] { load_arch(r, default_presets_dir()); })
                .find("my.ini:7:1: Memory_Mode.No_Size: memory mode `No_Size` spills (its cache is apart from the arena) but "
                      "states no arena_cache_size"),
            std::string::npos);
  r.arena_cache_size = 65536;
  EXPECT_EQ(load_arch(r, default_presets_dir()).sram_capacity_bytes, 65536);
}

TEST(VelaConfig, TheAcceleratorAloneIsItsPreset) {
  // --accelerator-config X builds X with Vela's defaults; the preset X states those same values.
  for (const std::string& acc : accelerator_names()) {
    SCOPED_TRACE(acc);
    ArchRequest r;
    r.accelerator = acc;
    const Arch a = load_arch(r, default_presets_dir());
    const Arch p = load_arch(acc);
    EXPECT_EQ(a.name, p.name);
    EXPECT_EQ(a.sram_capacity_bytes, p.sram_capacity_bytes);
    EXPECT_EQ(a.vela_sram_size, p.vela_sram_size);
    EXPECT_EQ(a.core_clock, p.core_clock);
    EXPECT_EQ(a.energy.read_pj_per_byte, p.energy.read_pj_per_byte);
    EXPECT_EQ(a.energy.write_pj_per_byte, p.energy.write_pj_per_byte);
    EXPECT_EQ(a.energy.pj_per_mac, p.energy.pj_per_mac);
    EXPECT_EQ(a.permanent_storage, p.permanent_storage);
    EXPECT_EQ(a.feature_map_storage, p.feature_map_storage);
  }
  ArchRequest bad;
  bad.accelerator = "ethos-u55-255";
  bad.accelerator_key = "--accelerator-config";
  EXPECT_NE(error_of([&] { load_arch(bad, default_presets_dir()); })
                .find("--accelerator-config: unknown accelerator config `ethos-u55-255` (did you mean `ethos-u55-256`?"),
            std::string::npos);
}

}  // namespace
}  // namespace npumap::arch
