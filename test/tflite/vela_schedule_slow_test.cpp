// search::vela_schedule against Vela 2.1's compiles of the real models (docs/design/vela-schedule.md
// "How close it is"): for every record of test/data/vela_tflite_reference.json, our Vela schedule's
// total cycles (NPU passes, our cycle model) against the record's printed Total cycles, and its peak
// SRAM against the record's printed "SRAM used". The counts are pinned, so a change that moves any
// record across a bound fails here; the table is printed for the design note.
//
// Exact means within Vela's printing: cycles within 0.5 of the record's integer, SRAM within 0.05 KiB
// of its one-decimal KiB. The remaining differences, by cause (none is fixed yet):
//   * cascades: Vela cascades passes through SRAM (npu_cascades_multi_pass > 0); our Vela schedule is
//     pass-level, so every such record differs in cycles and SRAM;
//   * the choice: Vela keeps the least of its weighted candidate metric through a dynamic program cut
//     to 16 candidates per pass; we take least SRAM then cycles (cycles then off-chip bytes when the
//     arch spills) and, among those, the least metric;
//   * SRAM: Vela's tensor allocator (hill climb, alignment) versus our live-tensor sum, and on U65 the
//     feature maps Vela moves to SRAM for cascades.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arch/arch_loader.hpp"
#include "mapper/search/vela_schedule.hpp"
#include "workloads/tflite/import.hpp"
#include "test/support/reference_data.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// Vela's cycles of the NPU subgraphs: the sum of their cascaded passes' Total cycles. Vela's printed
/// Total adds its estimate of the CPU subgraphs' memory traffic (a CPU pass's feature maps read and
/// written at the memory's bandwidth), which our cycle model leaves out (a CPU operator costs 0 here).
double velas_npu_pass_cycles(const json& rec) {
  double cycles = 0.0;
  for (const json& sg : rec.at("subgraphs"))
    if (sg.at("placement").get<std::string>() != "Cpu")
      for (const json& cps : sg.at("cascaded_passes")) cycles += cps.at("cycles").at("total").get<double>();
  return cycles;
}

TEST(VelaScheduleAgainstVela, PinnedCountsOnEveryRecord) {
  std::ifstream in(npumap::testing::kVelaReference);
  ASSERT_TRUE(in.good()) << npumap::testing::kVelaReference;
  const json ref = json::parse(in);
  int records = 0, cycles_exact = 0, cycles_within_5 = 0, cycles_within_15 = 0, sram_exact = 0, sram_within_10 = 0;
  double worst_low = 0.0, worst_high = 0.0;
  for (const json& rec : ref.at("records")) {
    const std::string model = rec.at("model").get<std::string>(), config = rec.at("config").get<std::string>();
    const fs::path path = npumap::testing::kModelsDir / (model + ".tflite");
    ASSERT_TRUE(fs::exists(path)) << path;
    const arch::Arch a = arch::load_arch(config);
    ImportOptions import;
    import.accelerator_config = a.accel.name;
    const workloads::Workload w = load_network(path.string(), import);
    const auto t0 = std::chrono::steady_clock::now();
    const search::StageResult stage = search::run_per_layer(a, w, search::StageOptions{});
    const auto t1 = std::chrono::steady_clock::now();
    const auto v = search::vela_schedule(a, w, stage);
    const auto t2 = std::chrono::steady_clock::now();
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    ASSERT_TRUE(v.has_value()) << model << " on " << config;
    ++records;
    const double vela_cycles = velas_npu_pass_cycles(rec);
    const double vela_sram_kib = rec.at("printed_SRAM_used_KiB").get<double>();
    const double ours_kib = v->point.peak_sram_bytes / 1024.0;
    const double dc = (v->point.cycles - vela_cycles) / vela_cycles;
    worst_low = std::min(worst_low, dc);
    worst_high = std::max(worst_high, dc);
    cycles_exact += std::abs(v->point.cycles - vela_cycles) <= 0.5 ? 1 : 0;
    cycles_within_5 += std::abs(dc) <= 0.05 ? 1 : 0;
    cycles_within_15 += std::abs(dc) <= 0.15 ? 1 : 0;
    sram_exact += std::abs(ours_kib - vela_sram_kib) <= 0.05 ? 1 : 0;
    sram_within_10 += std::abs(ours_kib - vela_sram_kib) <= 0.1 * std::max(vela_sram_kib, 1.0) ? 1 : 0;
    std::printf("%-45s %-14s cycles vela %10.0f ours %10.0f %+6.1f%%  SRAM KiB vela %7.1f ours %7.1f  (stage %.0f ms, "
                "schedule %.0f ms)\n",
                model.c_str(), config.c_str(), vela_cycles, v->point.cycles, 100.0 * dc, vela_sram_kib, ours_kib,
                ms(t1 - t0), ms(t2 - t1));
  }
  std::printf("records %d: cycles exact %d, within 5%% %d, within 15%% %d (range %+.1f%% .. %+.1f%%); SRAM exact %d, "
              "within 10%% %d\n",
              records, cycles_exact, cycles_within_5, cycles_within_15, 100.0 * worst_low, 100.0 * worst_high, sram_exact,
              sram_within_10);
  EXPECT_EQ(records, npumap::testing::kVelaReferenceRecords);
  // Pinned (see the causes above); raise them as the schedule gets closer to Vela's.
  EXPECT_EQ(cycles_exact, 2);
  EXPECT_EQ(cycles_within_5, 21);
  EXPECT_EQ(cycles_within_15, 29);
  EXPECT_EQ(sram_exact, 5);
  EXPECT_EQ(sram_within_10, 14);
}

}  // namespace
}  // namespace npumap::tflite
