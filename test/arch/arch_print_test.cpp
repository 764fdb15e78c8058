// describe_arch and format_bytes: the summary names the figures a report reader needs.

#include <string>

#include <gtest/gtest.h>

#include "arch/arch_loader.hpp"
#include "arch/arch_print.hpp"

namespace npumap::arch {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ArchPrint, FormatBytesPicksTheLargestExactUnit) {
  EXPECT_EQ(format_bytes(1048576), "1 MiB");
  EXPECT_EQ(format_bytes(393216), "384 KiB");  // 393216 / 1024 = 384
  EXPECT_EQ(format_bytes(1536), "1536 B");     // 1.5 KiB is not a whole number of KiB
  EXPECT_EQ(format_bytes(1000), "1000 B");
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(3LL * 1024 * 1024 * 1024), "3 GiB");
}

TEST(ArchPrint, U55Summary) {
  const std::string s = describe_arch(load_arch("ethos-u55-256"));
  EXPECT_TRUE(contains(s, "arch ethos-u55-256: ethos-u55-256 (256 MACs x 1 core), system config internal-default, "
                          "memory mode internal-default\n")) << s;
  EXPECT_TRUE(contains(s, "core clock 500 MHz, AXI port 64 bits")) << s;
  // Sram: scale 1, 64*1/8 = 8 B/cycle, burst 32, latency 32/32, 4/4.5 pJ/B.
  EXPECT_TRUE(contains(s, "  Sram                    1        8     32           32            32            4/4.5\n")) << s;
  // OffChipFlash: scale 0.125, 64*0.125/8 = 1 B/cycle, burst 128, latency 64/64, 50/2000 pJ/B.
  EXPECT_TRUE(contains(s, "  OffChipFlash        0.125        1    128           64            64          50/2000\n")) << s;
  EXPECT_FALSE(contains(s, "Dram")) << "unused areas are not listed\n" << s;
  EXPECT_TRUE(contains(s, "weights in OffChipFlash, feature maps in Sram, fast storage Sram, spilling off")) << s;
  EXPECT_TRUE(contains(s, "SRAM capacity 4 MiB; SHRAM 48 banks x 1 KiB")) << s;
  EXPECT_TRUE(contains(s, "0.25 pJ/MAC")) << s;
  EXPECT_EQ(s.back(), '\n');
}

TEST(ArchPrint, U65Summary) {
  const std::string s = describe_arch(load_arch("ethos-u65-512"));
  EXPECT_TRUE(contains(s, "(256 MACs x 2 cores)")) << s;
  EXPECT_TRUE(contains(s, "core clock 1 GHz, AXI port 128 bits")) << s;
  // Dram: 128 * 0.75 / 8 = 12 B/cycle, latency 500/250.
  EXPECT_TRUE(contains(s, "  Dram                 0.75       12    128          500           250            80/90\n")) << s;
  EXPECT_TRUE(contains(s, "spilling on")) << s;
  EXPECT_TRUE(contains(s, "SRAM capacity 384 KiB (cache 384 KiB)")) << s;
}

}  // namespace
}  // namespace npumap::arch
