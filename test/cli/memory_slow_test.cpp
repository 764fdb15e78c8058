// Memory bounded before refusal (issue 41 point 2): crafted inputs that a careless reader would
// expand to gigabytes are refused under an address-space cap (`prlimit --as`), with exit status 2
// and one line; an input the limits accept but the capped memory cannot hold ends in exit status 4
// and one `out of memory: ...` line (not 2, not 3). And a long chain maps in memory and time that
// grow linearly with its layers (issue 41 point 4).

#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"

namespace npumap::cli_test {
namespace {

/// The mapper under `prlimit --as=<mib> MiB` (virtual memory: what malloc can reserve).
RunResult run_capped(std::size_t mib, const std::vector<std::string>& args) {
  // The cap counts malloc's per-thread arenas (64 MiB each, up to 8 per core): two keep it
  // independent of the machine's core count.
  setenv("MALLOC_ARENA_MAX", "2", 1);
  std::vector<std::string> all{"--as=" + std::to_string(mib << 20), "--", NPUMAP_MAPPER_EXE};
  all.insert(all.end(), args.begin(), args.end());
  TempDir io;
  return wait_mapper(spawn_program("/usr/bin/prlimit", all, io));
}

/// The cap for refused inputs: 1 GiB of address space, the mapper's own (libraries, thread stacks,
/// malloc arenas) included, so a refused input peaks under 1 GB (the bound).
constexpr std::size_t kCapMiB = 1024;

/// A TFLite model whose one tensor (with a `name_bytes` name) is listed `copies` times, padded
/// with an unused buffer of `padding_bytes`: the file is small against the names it lists.
std::string shared_tensor_model(std::size_t name_bytes, int copies, std::size_t padding_bytes) {
  flatbuffers::FlatBufferBuilder b(padding_bytes + name_bytes + 4096);
  const auto pad = b.CreateVector(std::vector<std::uint8_t>(padding_bytes, 0));
  const auto empty_buffer = b.StartTable();
  const auto buffer0 = b.EndTable(empty_buffer);
  const auto pad_start = b.StartTable();
  b.AddOffset(4, pad);
  const auto buffer1 = b.EndTable(pad_start);
  const auto name = b.CreateString(std::string(name_bytes, 'n'));
  const auto shape = b.CreateVector(std::vector<std::int32_t>{1, 4});
  const auto t_start = b.StartTable();
  b.AddOffset(4, shape);
  b.AddOffset(10, name);
  b.AddElement<std::int8_t>(6, 9, -1);
  const flatbuffers::Offset<flatbuffers::Table> tensor(b.EndTable(t_start));
  const auto tensors = b.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::Table>>(static_cast<std::size_t>(copies), tensor));
  const auto ins = b.CreateVector(std::vector<std::int32_t>{0});
  const auto sg_start = b.StartTable();
  b.AddOffset(4, tensors);
  b.AddOffset(6, ins);
  b.AddOffset(8, ins);
  const flatbuffers::Offset<flatbuffers::Table> subgraph(b.EndTable(sg_start));
  const auto subgraphs = b.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::Table>>{subgraph});
  const auto buffers = b.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::Table>>{
      flatbuffers::Offset<flatbuffers::Table>(buffer0), flatbuffers::Offset<flatbuffers::Table>(buffer1)});
  const auto root_start = b.StartTable();
  b.AddElement<std::uint32_t>(4, 3, 0);
  b.AddOffset(8, subgraphs);
  b.AddOffset(12, buffers);
  const auto root = b.EndTable(root_start);
  b.Finish(flatbuffers::Offset<flatbuffers::Table>(root), "TFL3");
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

TEST(MemoryBounds, SharedTablesTfliteIsRefusedUnderTheCap) {
  // 120 MB of file, whose 8 MiB name is listed 400 times (3.2 GB of names): refused once the
  // copies pass 256 MiB (the bound of ReadLimits::max_copied_bytes), well under the cap.
  TempDir dir;
  const fs::path model = dir / "shared.tflite";
  write_text(model, shared_tensor_model(std::size_t{8} << 20, 400, std::size_t{112} << 20));
  const RunResult r = run_capped(kCapMiB, {"import", model.string(), "-o", (dir / "m.yaml").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find(model.string()), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("expands to more than"), std::string::npos) << lines[0];
}

/// A flow list of `n` zeros as a workload file (not a valid workload: its node count matters).
std::string zeros_yaml(std::size_t n) {
  std::string text = "name: big\nlayers: [";
  text.reserve(text.size() + 2 * n + 4);
  for (std::size_t i = 0; i < n; ++i) text += i == 0 ? "0" : ",0";
  return text + "]\n";
}

TEST(MemoryBounds, YamlOverTheNodeLimitIsRefusedBeforeItsTreeIsBuilt) {
  // 4.5 million nodes (9 MB of text): counted while the reader builds its tree and refused at the
  // node past 4 million, before the tree is whole (yaml-cpp's own tree, about 0.5 KB per node, took
  // 2 GB, over the cap; the reader's takes 20 bytes a node).
  TempDir dir;
  const fs::path yaml = dir / "nodes.yaml";
  write_text(yaml, zeros_yaml(4'500'000));
  const RunResult r = run_capped(kCapMiB, {"--workload", yaml.string(), "--out", (dir / "run").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find(yaml.string()), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("over 4 million nodes"), std::string::npos) << lines[0];
}

TEST(MemoryBounds, OutOfMemoryIsItsOwnExitStatusAndLine) {
  // 3.9 million nodes pass the count, but their tree, its list of entries and the duplicate-key
  // check's walk (about 210 MiB of address space in all) do not fit a cap of 120 MiB, under which a
  // small workload maps (tiny_chain needs under 50 MiB).
  TempDir dir;
  const fs::path yaml = dir / "nodes.yaml";
  write_text(yaml, zeros_yaml(3'900'000));
  const RunResult r = run_capped(120, {"--workload", yaml.string(), "--out", (dir / "run").string()});
  EXPECT_EQ(r.status, 4) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("out of memory: ", 0), 0u) << lines[0];
  EXPECT_FALSE(fs::exists(dir / "run"));
}

/// A chain of `n` 1x1 convolutions on 8x8x16 feature maps (every layer alike, as in the issue's
/// 50,000-layer chain).
std::string conv_chain_yaml(int n) {
  std::string text = "name: long_chain\ninputs: [{name: t0, shape: [1, 8, 8, 16], dtype: int8}]\nlayers:\n";
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i);
    text += "  - {name: l";
    text += k;
    text += ", op: conv2d, inputs: [t";
    text += k;
    text += "], output: t";
    text += std::to_string(i + 1);
    text += ", output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}\n";
  }
  return text;
}

struct Usage {
  int status = -1;
  double peak_kib = 0;  ///< peak resident set, KiB (ru_maxrss)
  double cpu_s = 0;     ///< user + system time
};

/// Maps an `n`-layer chain on one thread and reports the process's peak memory and CPU time.
Usage map_chain(int n) {
  TempDir dir;
  write_text(dir / "chain.yaml", conv_chain_yaml(n));
  const Spawned s = spawn_mapper({"--workload", (dir / "chain.yaml").string(), "-j", "1", "-q", "--out", (dir / "o").string()}, dir);
  int wstatus = 0;
  rusage ru{};
  while (wait4(s.pid, &wstatus, 0, &ru) < 0) {
    if (errno != EINTR) throw std::runtime_error("wait4 failed");
  }
  Usage u;
  u.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  u.peak_kib = static_cast<double>(ru.ru_maxrss);
  u.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return u;
}

TEST(MemoryBounds, ALongChainMapsInMemoryAndTimeLinearInItsLayers) {
  // 2,000 and 8,000 layers: the difference divides out what any run costs (libraries, presets).
  // Measured at -j 1: about 8.5 KiB per layer, 8.5 also from 2,000 to 50,000 layers (12.3 before
  // identical layers shared their stage groups, jobs' counters and join-problem and Vela groups
  // instead of a copy each, and Vela's layer mappings were held packed in the document instead of as
  // JSON trees; 16.5 before the YAML reader built a compact tree of its own instead of yaml-cpp's,
  // Vela's point was made into layer mappings and its problem released before the search's stage is
  // made again, and the join problem was made again only in the document, after them; 18.3 before
  // the search's stage was released while Vela builds a stage of its own and its rows once the
  // document has read them, and before the layer mappings' JSON objects were shrunk to fit; 28 KiB
  // before identical layers shared their mapspaces) and about 0.35 s of CPU per 1,000 layers. The
  // bound is the target of 10,000 bytes per layer (9.77 KiB) less a little margin. Where the
  // peak is: the search (load, stage, join, Vela's schedule) at about 5.5 KiB per layer, most of it
  // loading (about 2.5 KiB per layer, test/workloads/loader_memory_slow_test.cpp guards it: the bound
  // here is too loose to), each layer's own LayerResult (its space with the base pass, about 0.7
  // KiB) and Vela's per-step tables; then the document, whose chosen point's layer mappings are JSON
  // trees (about 4 KB per layer) beside Vela's packed ones (about 1.3 KB). The code before (12.3 KiB
  // per layer) fails the bound, and so does either change alone (10.7 with the shared stage, 12.1
  // with the packed mappings).
  // Time: 4 times the layers may take at most 5.5 times the CPU (a quadratic step would take 16). Each
  // size runs twice and keeps its least CPU time: on a busy machine one run's CPU time can swell
  // (caches shared with other jobs), which once failed the ratio with nothing quadratic in the code.
  const auto least_of_two = [](int layers) {
    const Usage a = map_chain(layers), b = map_chain(layers);
    Usage u = a.cpu_s <= b.cpu_s ? a : b;
    u.status = a.status != 0 ? a.status : b.status;  // both must succeed
    return u;
  };
  const Usage small = least_of_two(2'000);
  const Usage large = least_of_two(8'000);
  ASSERT_EQ(small.status, 0);
  ASSERT_EQ(large.status, 0);
  const double kib_per_layer = (large.peak_kib - small.peak_kib) / 6'000.0;
  EXPECT_LT(kib_per_layer, 9.5) << small.peak_kib << " KiB at 2,000 layers, " << large.peak_kib << " KiB at 8,000";
  EXPECT_LT(large.cpu_s, 5.5 * std::max(small.cpu_s, 0.2)) << small.cpu_s << " s at 2,000 layers, " << large.cpu_s << " s at 8,000";
}

}  // namespace
}  // namespace npumap::cli_test
