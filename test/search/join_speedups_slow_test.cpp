// Every exact speed-up of the join on real networks (labelled slow): for every network of the check's
// folders (workload YAML and .tflite models at their top level) on every preset, with
// cycles,offchip_bytes and with cycles,sram, the front with every speed-up on must equal the front with
// each one switched off (issue 36: a speed-up that drops a row of the front, as the future SRAM floor
// did on the concatenations of mlzoo__ssd_mobilenet_v3_int8, fails here). Values are compared (the
// objectives and each point's peak SRAM): some speed-ups may choose another of several mappings with
// exactly equal values.
//
// Folders: NPUMAP_JOIN_CHECK_DIRS (separated by ';' or '|') from the environment, else as CMake set it
// (test/CMakeLists.txt: the zoo, workloads/, plus the models folder). A join that pairs more than
// kMaxRowsPaired rows with every speed-up on is left out (named in the output; stopped as soon as its
// exact pass has paired that many): those take seconds to minutes each, and bench/mapper_bench.cpp's
// BM_Join checks such joins against the join without its speed-ups every night. The count is
// deterministic, so the set of cases is too. Collapse is not switched off here: without it every
// finished tensor stays in the keys, whose number then grows exponentially with the depth (MobileNet-V2
// took over 11 GB before its first step's look-ahead ended); JoinBound checks it on small networks.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "arch/arch_loader.hpp"
#include "mapper/search/join/join.hpp"
#include "mapper/search/stage.hpp"
#include "workloads/tflite/import.hpp"

#ifndef NPUMAP_JOIN_CHECK_DIRS
#define NPUMAP_JOIN_CHECK_DIRS NPUMAP_SOURCE_DIR "/workloads"
#endif

namespace npumap::search {
namespace {

/// Rows paired by the join with every speed-up on above which a case is left out.
constexpr std::uint64_t kMaxRowsPaired = 2'000'000;

const std::vector<std::string> kPresets{"ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};

struct Case {
  std::string path;
  std::string preset;
};

std::vector<std::string> check_dirs() {
  const char* env = std::getenv("NPUMAP_JOIN_CHECK_DIRS");
  const std::string text = env != nullptr && *env != '\0' ? env : NPUMAP_JOIN_CHECK_DIRS;
  std::vector<std::string> dirs;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(";|", at), text.size());
    if (end > at) dirs.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return dirs;
}

std::vector<Case> cases() {
  std::vector<std::string> paths;
  for (const std::string& dir : check_dirs()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".tflite")) paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Case> out;
  for (const std::string& p : paths)
    for (const std::string& preset : kPresets) out.push_back({p, preset});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::filesystem::path(info.param.path).stem().string() + "_" + info.param.preset;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

/// A front's values: the objectives, in order, and each point's peak SRAM.
std::vector<std::vector<double>> values(const JoinResult& r, const std::vector<Objective>& objectives) {
  std::vector<std::vector<double>> out;
  for (const FrontPoint& p : r.front) {
    std::vector<double> v;
    for (Objective o : objectives) v.push_back(p.objective(o));
    v.push_back(p.peak_sram_bytes);
    out.push_back(std::move(v));
  }
  return out;
}

/// The join with every speed-up on, on two threads, stopped (partial) once its exact pass has paired more
/// than kMaxRowsPaired rows: which joins stop does not depend on the timing (a join that stops pairs
/// more than that in all), only how much of them runs before they do.
JoinResult bounded_join(const JoinProblem& problem, const JoinOptions& options) {
  JoinProgress progress;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  JoinRunContext context;
  context.threads = 2;
  context.progress = &progress;
  context.stop = common::StopToken(&stop);
  std::thread watcher([&] {
    while (!done.load()) {
      if (progress.rows_paired.load() > kMaxRowsPaired) stop.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  JoinResult r = join(problem, options, context);
  done.store(true);
  watcher.join();
  return r;
}

class JoinSpeedupsOnRealNetworks : public ::testing::TestWithParam<Case> {};

TEST_P(JoinSpeedupsOnRealNetworks, EachSwitchedOffGivesTheSameFront) {
  const Case& c = GetParam();
  const arch::Arch a = arch::load_arch(c.preset);
  tflite::ImportOptions import;
  import.accelerator_config = a.accel.name;
  const workloads::Workload w = tflite::load_network(c.path, import);
  for (const std::vector<Objective>& objectives :
       {std::vector<Objective>{Objective::Cycles, Objective::OffchipBytes}, std::vector<Objective>{Objective::Cycles, Objective::Sram}}) {
    const std::string what = c.path + " on " + c.preset + " with " + objective_name(objectives[0]) + "," + objective_name(objectives[1]);
    StageOptions so;
    so.objectives = objectives;
    so.threads = 2;
    const StageResult stage = run_per_layer(a, w, so);
    bool some_empty = false;
    for (const LayerResult& lr : stage.layers) {
      std::size_t rows = 0;
      for (const auto& g : lr.groups) rows += g.rows.size();
      some_empty = some_empty || rows == 0;
    }
    if (some_empty) continue;  // no valid mapping: nothing to join
    const JoinProblem problem = make_join_problem(a, w, stage, true);
    JoinOptions options;
    options.objectives = objectives;
    JoinRunContext context;
    context.threads = 2;
    const JoinResult all_on = bounded_join(problem, options);
    if (all_on.partial || all_on.totals().rows_paired > kMaxRowsPaired) {
      std::printf("left out (more than %llu rows paired with every speed-up on): %s\n",
                  static_cast<unsigned long long>(kMaxRowsPaired), what.c_str());
      continue;
    }
    EXPECT_FALSE(all_on.front.empty()) << what;
    for (int i = 0; i < kNumSpeedups; ++i) {
      const auto s = static_cast<Speedup>(i);
      if (s == Speedup::Collapse) continue;
      JoinOptions off = options;
      off.speedups.set(s, false);
      EXPECT_EQ(values(join(problem, off, context), objectives), values(all_on, objectives)) << what << ": " << speedup_name(s) << " off";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Networks, JoinSpeedupsOnRealNetworks, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace npumap::search
