// make_arch() against the `arch_params` Vela reported for every reference pass, plus the table rules
// of docs/design/npu-model.md §1-§2 that the reference data does not exercise.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "arch/arch.hpp"
#include "common/user_error.hpp"

namespace npumap::arch {
namespace {

nlohmann::json load_reference() {
  std::ifstream in("test/data/npu_reference_passes.json");
  EXPECT_TRUE(in.good()) << "run from the project root";
  return nlohmann::json::parse(in);
}

MemArea area(const nlohmann::json& j) {
  MemArea a = MemArea::Unknown;
  EXPECT_TRUE(parse_mem_area(j.get<std::string>(), a)) << j;
  return a;
}

TEST(ArchTables, ReproducesArchParamsOfAllReferencePasses) {
  const nlohmann::json records = load_reference();
  ASSERT_EQ(records.size(), 175u);
  for (const auto& rec : records) {
    const auto& in = rec.at("input");
    const auto& p = in.at("arch_params");
    SCOPED_TRACE(rec.at("id").get<std::string>());
    const Arch a = make_arch(in.at("accelerator").get<std::string>(), in.at("system_config").get<std::string>(),
                             in.at("memory_mode").get<std::string>());
    EXPECT_EQ(a.core_clock, p.at("core_clock").get<double>());
    EXPECT_EQ(a.ncores(), p.at("ncores").get<int>());
    EXPECT_EQ(a.axi_port_width_bits, p.at("axi_port_width_bits").get<int>());
    EXPECT_EQ(a.permanent_storage, area(p.at("permanent_storage_mem_area")));
    EXPECT_EQ(a.feature_map_storage, area(p.at("feature_map_storage_mem_area")));
    EXPECT_EQ(a.fast_storage, area(p.at("fast_storage_mem_area")));
    EXPECT_EQ(a.spilling_enabled, p.at("spilling_enabled").get<bool>());
    for (const char* name : {"Sram", "Dram", "OnChipFlash", "OffChipFlash"}) {
      MemArea m = MemArea::Unknown;
      ASSERT_TRUE(parse_mem_area(name, m));
      SCOPED_TRACE(name);
      EXPECT_EQ(a.mem(m).bandwidth_per_cycle, p.at("memory_bandwidths_per_cycle").at(name).get<double>());
      EXPECT_EQ(a.mem(m).burst_length, p.at("memory_burst_length").at(name).get<int>());
      EXPECT_EQ(a.mem(m).latency_read, p.at("memory_latency_read").at(name).get<int>());
      EXPECT_EQ(a.mem(m).latency_write, p.at("memory_latency_write").at(name).get<int>());
    }
  }
}

TEST(ArchTables, NamesListDefaultFirst) {
  const auto sys = system_config_names();
  ASSERT_EQ(sys.size(), 7u);
  EXPECT_EQ(sys.front(), "internal-default");
  EXPECT_EQ(sys[1], "Ethos_U55_Deep_Embedded");
  const auto modes = memory_mode_names();
  ASSERT_EQ(modes.size(), 7u);  // with Vela 4's Dedicated_Sram_256KB and _384KB
  EXPECT_EQ(modes.front(), "internal-default");
  EXPECT_EQ(modes.back(), "Dedicated_Sram_512KB");
  const auto acc = accelerator_names();
  ASSERT_EQ(acc.size(), 6u);
  EXPECT_EQ(acc[5], "ethos-u65-512");
  EXPECT_EQ(accelerator_config(Accelerator::EthosU55_128).name, "ethos-u55-128");
}

TEST(ArchTables, UnknownNamesThrowWithHint) {
  try {
    make_arch("ethos-u55-265");
    FAIL() << "expected common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(e.key_path(), "accelerator");
    EXPECT_NE(e.hint().find("ethos-u55-256"), std::string::npos) << e.what();
  }
  try {
    make_arch("ethos-u55-256", "internal-default", "Shared_SRAM");
    FAIL() << "expected common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(e.key_path(), "memory_mode");
    EXPECT_NE(e.hint().find("Shared_Sram"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_arch("ethos-u55-256", "Ethos_U99"), common::UserError);
}

TEST(ArchTables, SramSizesAndWeights) {
  // U65 internal default: Dedicated_Sram, spilling on, cache 384 KiB = 393216 (§2.3); no SRAM-size weight.
  const Arch u65 = make_arch("ethos-u65-256");
  EXPECT_TRUE(u65.spilling_enabled);
  EXPECT_EQ(u65.vela_sram_size, 393216);
  EXPECT_EQ(u65.sram_capacity_bytes, 393216);
  EXPECT_EQ(u65.max_sram_used_weight, 0.0);
  // Dedicated_Sram_512KB: cache 524288.
  const Arch u65_512k = make_arch("ethos-u65-512", "Ethos_U65_Mid_End", "Dedicated_Sram_512KB");
  EXPECT_EQ(u65_512k.vela_sram_size, 524288);
  // Mid_End Dram clock scale 0.46875 on a 128-bit port: 128*0.46875/8 = 7.5 B/cycle.
  EXPECT_EQ(u65_512k.mem(MemArea::Dram).bandwidth_per_cycle, 7.5);
  // U55 Shared_Sram: no spilling, Vela's sram_size 9999 MiB, mapper capacity 4 MiB.
  const Arch u55 = make_arch("ethos-u55-64");
  EXPECT_FALSE(u55.spilling_enabled);
  EXPECT_EQ(u55.vela_sram_size, std::int64_t{9999} * 1024 * 1024);
  EXPECT_EQ(u55.sram_capacity_bytes, 4194304);
  EXPECT_EQ(u55.max_sram_used_weight, 1000.0);
  EXPECT_EQ(u55.bandwidth_weights[static_cast<int>(MemArea::OffChipFlash)], 20.0);
  EXPECT_EQ(u55.bandwidth_weights[static_cast<int>(MemArea::OnChipFlash)], 2.0);
  EXPECT_EQ(u55.bandwidth_weights[static_cast<int>(MemArea::Shram)], 0.0);
  EXPECT_EQ(u55.sub_kernel_limits[static_cast<int>(NpuBlockType::VectorProduct)], (std::array<int, 2>{1, 1}));
  EXPECT_EQ(u55.sub_kernel_limits[static_cast<int>(NpuBlockType::Pooling)], (std::array<int, 2>{8, 8}));
}

TEST(ArchTables, ShramBanks) {
  // §8.1: reserved_unused = 2 when banks > 16; the LUT costs 2 banks only on 16-bank configs.
  const Arch u55_32 = make_arch("ethos-u55-32");
  EXPECT_EQ(u55_32.total_shram_banks(), 16);
  EXPECT_EQ(u55_32.available_shram_banks(true), 14);
  EXPECT_EQ(u55_32.available_shram_banks(false), 16);
  const Arch u55_128 = make_arch("ethos-u55-128");
  EXPECT_EQ(u55_128.total_shram_banks(), 22);
  EXPECT_EQ(u55_128.available_shram_banks(true), 22);
  const Arch u65 = make_arch("ethos-u65-512");
  EXPECT_EQ(u65.total_shram_banks(), 46);
  EXPECT_EQ(u65.ncores(), 2);
}

TEST(ArchTables, MemAreaNamesRoundTrip) {
  for (int i = 0; i < kNumMemAreas; ++i) {
    MemArea a = MemArea::Unknown;
    ASSERT_TRUE(parse_mem_area(mem_area_name(static_cast<MemArea>(i)), a));
    EXPECT_EQ(static_cast<int>(a), i);
  }
  MemArea a = MemArea::Sram;
  EXPECT_FALSE(parse_mem_area("sram", a));
}

}  // namespace
}  // namespace npumap::arch
