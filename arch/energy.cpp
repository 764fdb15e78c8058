// Default energy table. These figures are ILLUSTRATIVE: they let the mapper rank mappings by an
// energy-like cost and show how memory traffic dominates it, but they are not measurements of any
// Ethos-U silicon. Arch files override every entry (docs/arch-format.md, `energy:`).
//
// Reasoning behind the orders of magnitude (per byte, read / write):
// * SHRAM: a few tens of KiB of banked SRAM next to the MAC array, so the cheapest storage. 1.0 pJ/B
//   for the 48-bank (48 KiB) SHRAM; SRAM access energy grows roughly with the square root of the
//   array size (longer bit- and word-lines), so 16- and 24-bank SHRAMs get sqrt(banks/48) of that,
//   and writes cost 10% more. SHRAM figures are rounded to 0.01 pJ: more digits would claim a
//   precision these numbers do not have, and the preset files can then state them exactly.
// * Sram: the ~0.5-2 MiB system SRAM on the AXI bus. Published 45 nm figures put a 64-bit read of a
//   1 MiB array near 100 pJ (~12 pJ/B); a 16-28 nm embedded process is roughly 3x lower, so 4 pJ/B
//   read and 4.5 pJ/B write (writes drive full bit-line swings).
// * Dram: LPDDR4-class interfaces cost about 4-6 pJ/bit including I/O and the DRAM core, ~40-100+
//   pJ/B; 80 pJ/B read, 90 pJ/B write (write data and ODT).
// * OffChipFlash: a QSPI/OSPI NOR flash read is cheaper per byte than DRAM (no refresh, no row
//   activations, but off-chip I/O): 50 pJ/B. Programming NOR flash costs nanojoules per byte;
//   inference never writes it, so 2000 pJ/B only makes an (unexpected) write stand out.
// * OnChipFlash: embedded flash or MRAM: no off-chip I/O, so cheaper than external flash, 15 pJ/B
//   read; programming is again expensive, 500 pJ/B. (In the Sram_Only memory mode of docs/design/npu-model.md
//   §2.2 this area is the second SRAM port; an arch file can set it to SRAM figures.)
// * MAC: an 8x8-bit multiply plus a 32-bit accumulate is ~0.3 pJ at 45 nm (0.2 + 0.1); with the
//   operand and accumulator registers in a newer process, 0.25 pJ per MAC. The per-MAC cost is a
//   property of one multiplier, so it does not change with the array size.

#include <cmath>

#include "arch/arch.hpp"

namespace npumap::arch {
namespace {

constexpr double kShramPjPerByteAt48Banks = 1.0;
constexpr double kShramReferenceBanks = 48.0;
constexpr double kShramWriteOverRead = 1.1;

double round_to_hundredths(double pj) { return std::round(pj * 100.0) / 100.0; }

}  // namespace

EnergyTable default_energy_table(const AcceleratorConfig& accel) {
  EnergyTable t;
  const auto set = [&t](MemArea a, double read, double write) {
    t.read_pj_per_byte[static_cast<int>(a)] = read;
    t.write_pj_per_byte[static_cast<int>(a)] = write;
  };
  const double banks = accel.shram_banks > 0 ? static_cast<double>(accel.shram_banks) : kShramReferenceBanks;
  const double shram_read = round_to_hundredths(kShramPjPerByteAt48Banks * std::sqrt(banks / kShramReferenceBanks));
  set(MemArea::Unknown, 0.0, 0.0);
  set(MemArea::Sram, 4.0, 4.5);
  set(MemArea::Dram, 80.0, 90.0);
  set(MemArea::OnChipFlash, 15.0, 500.0);
  set(MemArea::OffChipFlash, 50.0, 2000.0);
  set(MemArea::Shram, shram_read, round_to_hundredths(shram_read * kShramWriteOverRead));
  t.pj_per_mac = 0.25;
  return t;
}

}  // namespace npumap::arch
