// Loading a long chain costs memory linear in its layers and well under the 10 KB per
// layer (issue 41): the load alone, in a child process whose peak resident set is read from
// wait4, at 2,000 and 8,000 layers; the difference divides out what any process costs.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

/// A chain of `n` 1x1 convolutions on 8x8x16 feature maps, as test/cli/memory_slow_test.cpp maps.
std::string conv_chain_yaml(int n) {
  std::string text = "name: long_chain\ninputs: [{name: t0, shape: [1, 8, 8, 16], dtype: int8}]\nlayers:\n";
  for (int i = 0; i < n; ++i) {
    text += "  - {name: l" + std::to_string(i) + ", op: conv2d, inputs: [t" + std::to_string(i) + "], output: t" +
            std::to_string(i + 1) + ", output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}\n";
  }
  return text;
}

/// The peak resident set (KiB) of a child that writes the chain's text and loads it; -1 if the
/// load failed.
long load_peak_kib(int n) {
  const pid_t pid = fork();
  if (pid == 0) {
    int status = 0;
    try {
      const Workload w = load_workload_from_string(conv_chain_yaml(n), "chain.yaml");
      status = static_cast<int>(w.layers.size()) == n ? 0 : 1;
    } catch (...) {
      status = 1;
    }
    _exit(status);
  }
  int wstatus = 0;
  rusage ru{};
  while (wait4(pid, &wstatus, 0, &ru) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? ru.ru_maxrss : -1;
}

TEST(LoaderMemory, ALongChainLoadsInUnderThreeKiBPerLayer) {
  // Measured about 2.5 KiB per layer: the loaded workload (about 1 KiB: each layer's and tensor's
  // structs, shapes and names), the loader's per-layer notes (about 0.5 KiB), the reader's tree
  // (about 0.6 KiB: 20 nodes of 20 bytes, their entries and text), the name indexes and the text
  // itself. The bound has a 10% margin; with yaml-cpp's tree (about 0.5 KB per node) loading took
  // 12.5 KiB, and 3.2 KiB while the notes kept the nodes to blame.
  const long small = load_peak_kib(2'000);
  const long large = load_peak_kib(8'000);
  ASSERT_GT(small, 0);
  ASSERT_GT(large, 0);
  const double kib_per_layer = static_cast<double>(large - small) / 6'000.0;
  EXPECT_LT(kib_per_layer, 2.7) << small << " KiB at 2,000 layers, " << large << " KiB at 8,000";
}

}  // namespace
}  // namespace npumap::workloads
