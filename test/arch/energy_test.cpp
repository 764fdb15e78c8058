// The default energy table: figures as reasoned in arch/energy.cpp, checked by hand.

#include <cmath>

#include <gtest/gtest.h>

#include "arch/arch.hpp"

namespace npumap::arch {
namespace {

double read(const EnergyTable& t, MemArea a) { return t.read_pj_per_byte[static_cast<int>(a)]; }
double write(const EnergyTable& t, MemArea a) { return t.write_pj_per_byte[static_cast<int>(a)]; }

TEST(Energy, FixedFigures) {
  const EnergyTable t = default_energy_table(accelerator_config("ethos-u55-256"));
  EXPECT_EQ(read(t, MemArea::Unknown), 0.0);
  EXPECT_EQ(read(t, MemArea::Sram), 4.0);
  EXPECT_EQ(write(t, MemArea::Sram), 4.5);
  EXPECT_EQ(read(t, MemArea::Dram), 80.0);
  EXPECT_EQ(write(t, MemArea::Dram), 90.0);
  EXPECT_EQ(read(t, MemArea::OnChipFlash), 15.0);
  EXPECT_EQ(write(t, MemArea::OnChipFlash), 500.0);
  EXPECT_EQ(read(t, MemArea::OffChipFlash), 50.0);
  EXPECT_EQ(write(t, MemArea::OffChipFlash), 2000.0);
  EXPECT_EQ(t.pj_per_mac, 0.25);
}

TEST(Energy, ShramScalesWithTheSquareRootOfItsSize) {
  // 48 banks: 1.0 read, 1.1 write. 24 banks: sqrt(0.5) = 0.7071 -> 0.71; 0.71 * 1.1 = 0.781 -> 0.78.
  // 16 banks: sqrt(1/3) = 0.5774 -> 0.58; 0.58 * 1.1 = 0.638 -> 0.64.
  const struct {
    const char* accel;
    double r;
    double w;
  } rows[] = {{"ethos-u55-32", 0.58, 0.64}, {"ethos-u55-64", 0.58, 0.64}, {"ethos-u55-128", 0.71, 0.78},
              {"ethos-u55-256", 1.0, 1.1},  {"ethos-u65-256", 1.0, 1.1},  {"ethos-u65-512", 1.0, 1.1}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.accel);
    const EnergyTable t = default_energy_table(accelerator_config(row.accel));
    EXPECT_EQ(read(t, MemArea::Shram), row.r);
    EXPECT_EQ(write(t, MemArea::Shram), row.w);
  }
}

TEST(Energy, OrderOfTheMemoryHierarchy) {
  // The point of the table: on-chip is cheaper than off-chip, and flash reads are cheaper than DRAM's.
  for (const auto& name : accelerator_names()) {
    SCOPED_TRACE(name);
    const EnergyTable t = default_energy_table(accelerator_config(name));
    EXPECT_LT(read(t, MemArea::Shram), read(t, MemArea::Sram));
    EXPECT_LT(read(t, MemArea::Sram), read(t, MemArea::OnChipFlash));
    EXPECT_LT(read(t, MemArea::OnChipFlash), read(t, MemArea::OffChipFlash));
    EXPECT_LT(read(t, MemArea::OffChipFlash), read(t, MemArea::Dram));
    EXPECT_LT(t.pj_per_mac, read(t, MemArea::Shram));
  }
}

}  // namespace
}  // namespace npumap::arch
