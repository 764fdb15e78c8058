// Must-fail arch inputs. Each test/errors/arch_*.yaml opens with `# expect: <text>`, the exact
// message after the file name; the loader must throw a common::UserError whose what() is the path followed
// by that text. The same files drive the CLI test (exit status 2, the line on stderr).

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_loader.hpp"
#include "common/user_error.hpp"

#include "test/support/error_files.hpp"

namespace npumap::arch {
namespace {

namespace fs = std::filesystem;

TEST(ArchErrors, EveryMustFailFileGivesItsExpectedLine) {
  const auto files = npumap::testing::error_files("arch_");
  // One file per must-fail case (see the list in docs/arch-format.md, "Errors").
  ASSERT_GE(files.size(), 30u);
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const std::string expected = npumap::testing::expected_message(file);
    ASSERT_FALSE(expected.empty()) << "first line must be `# expect: ...`";
    try {
      load_arch(file);
      ADD_FAILURE() << "loaded without error";
    } catch (const common::UserError& e) {
      EXPECT_EQ(std::string(e.what()), file + expected);
    }
  }
}

/// The cases the acceptance text names, each checked to exist so a deleted file is noticed.
TEST(ArchErrors, TheNamedCasesHaveFiles) {
  const auto files = npumap::testing::error_files("arch_");
  for (const char* name : {"malformed_yaml", "unknown_key", "unknown_top_key", "missing_accelerator",
                           "missing_block_field", "zero_sram", "negative_size", "negative_burst", "zero_clock",
                           "unknown_preset", "unknown_accelerator", "unknown_system_config", "unknown_memory_mode",
                           "wrong_type_number", "wrong_type_int", "wrong_type_map", "wrong_type_list",
                           "wrong_type_string", "empty"}) {
    const std::string path = std::string("test/errors/arch_") + name + ".yaml";
    EXPECT_NE(std::find(files.begin(), files.end(), path), files.end()) << path;
  }
}

TEST(ArchErrors, ErrorCarriesItsParts) {
  try {
    load_arch_string("accelerator: ethos-u55-256\nmemory:\n  Sramm: {burst_length: 64}\n", "m.yaml", default_presets_dir());
    FAIL() << "expected a common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(e.where().file, "m.yaml");
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 3);
    EXPECT_EQ(e.key_path(), "memory.Sramm");
    EXPECT_EQ(e.message(), "unknown key");
    EXPECT_EQ(e.hint(), "did you mean `Sram`?");
  }
}

TEST(ArchErrors, ErrorInsideAPresetChainPointsAtThatFile) {
  const fs::path dir = fs::temp_directory_path() / "npumap_arch_errors_chain";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "base.yaml") << "accelerator: ethos-u55-64\ncore_clock: -5\n";
  try {
    load_arch_string("preset: base\n", "top.yaml", dir.string());
    ADD_FAILURE() << "expected a common::UserError";
  } catch (const common::UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "base.yaml").string() + ":2:13: core_clock: must be positive, got -5 (write a number above 0)");
  }
  fs::remove_all(dir);
}

TEST(ArchErrors, ShramBanksAndOtherRangeChecks) {
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      load_arch_string(text, "r.yaml", default_presets_dir());
    } catch (const common::UserError& e) {
      return e.what();
    }
    return "(no error)";
  };
  // 16 banks have no reserved_unused banks (§8.1); 2 reserved output + 14 reserved weight leave none.
  EXPECT_EQ(error_of("preset: ethos-u55-32\nshram: {reserved_weight_banks: 14}\n"),
            "r.yaml:2:8: npu.shram_banks: 16 SHRAM banks leave no bank for the IFM and accumulators (raise "
            "npu.shram_banks or lower the reserved banks)");
  EXPECT_EQ(error_of("preset: ethos-u55-32\nshram: {block_config_depths: []}\n"),
            "r.yaml:2:30: shram.block_config_depths: must list at least one depth (for example [8, 16, 32])");
  EXPECT_EQ(error_of("preset: ethos-u55-32\nnpu: {cores: 0}\n"),
            "r.yaml:2:14: npu.cores: must be positive, got 0 (write a whole number of at least 1)");
  EXPECT_EQ(error_of("preset: ethos-u55-32\nshram: {bank_size: 0}\n"),
            "r.yaml:2:20: shram.bank_size: must be positive, got 0 (write a size of at least 1 byte)");
  EXPECT_EQ(error_of("preset: ethos-u55-32\nenergy: {write_pj_per_byte: {Dram: -1}}\n"),
            "r.yaml:2:36: energy.write_pj_per_byte.Dram: must not be negative, got -1 (write 0 or more)");
  EXPECT_EQ(error_of("preset: ethos-u55-32\nscheduler: {cycles_weight: -40}\n"),
            "r.yaml:2:28: scheduler.cycles_weight: must not be negative, got -40 (write 0 or more)");
  EXPECT_EQ(error_of("preset: ethos-u55-32\nnpu: {ofm_ublock: {w: 1, h: 1, d: 4, depth: 2}}\n"),
            "r.yaml:2:38: npu.ofm_ublock.depth: unknown key (allowed keys: w, h, d)");
  EXPECT_EQ(error_of("- accelerator: ethos-u55-32\n"),
            "r.yaml:1:1: expected a mapping of keys to values (write `key: value` lines)");
}

}  // namespace
}  // namespace npumap::arch
