// Hostile .tflite files (issue 41 point 7): mutants of the real models of workloads/models/ given to
// `mapper import` (and, for the smallest model, to `mapper --workload`), asserting the exit-status
// contract for every mutant: 0 (still a valid model) or 2 with exactly one stderr line that names
// the file; never a crash, never 3 (internal error) for bad input, never 4 (out of memory: each run
// is capped at 2 GiB of address space), and never a nonsense value
// accepted where the mutation makes it certain (a NaN/infinite/zero/negative quantisation scale or a
// zero point outside its type's range on an int8/uint8/int16 feature map, a NaN softmax beta,
// a reshape whose output element count differs from its input's: those must be refused, exit 2,
// unless Vela places the operator on the CPU, which the YAML then says with Vela's reason).
//
// The mutants are deterministic (seed from test_seed(), the mutation positions from the original
// file's own flatbuffer tables, which this test walks itself), so a failure repeats. Kinds:
//   bytes     : random bytes of the file overwritten with random values
//   truncate  : the file cut at a random length
//   scale     : one quantisation scale set to NaN, +inf, -inf, 0, -1
//   zero_point: one zero point set outside [-32768, 65535]
//   shape     : one dimension of one tensor set to 0, -1, 65536, 2^31-1
//   opcode    : one operator code's builtin_code set to a random code (incl. unknown ones)
//   option    : one byte of one operator's builtin options table randomised
//   beta      : a SOFTMAX's beta set to NaN
// The summary line printed at the end gives the counts per exit status.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/cli/cli_harness.hpp"
#include "test/support/test_seed.hpp"

namespace npumap::cli_test {
namespace {

// ---- a minimal walker over a trusted (original) flatbuffer: positions of fields ----
struct Fb {
  const std::string& b;
  std::uint32_t u32(std::size_t p) const {
    std::uint32_t v = 0;
    std::memcpy(&v, b.data() + p, 4);
    return v;
  }
  std::int32_t i32(std::size_t p) const { return static_cast<std::int32_t>(u32(p)); }
  std::uint16_t u16(std::size_t p) const {
    std::uint16_t v = 0;
    std::memcpy(&v, b.data() + p, 2);
    return v;
  }
  /// Position of field `id` of the table at `t`, 0 when absent.
  std::size_t field(std::size_t t, int id) const {
    const std::size_t vt = static_cast<std::size_t>(static_cast<std::int64_t>(t) - i32(t));
    const std::size_t slot = 4 + 2 * static_cast<std::size_t>(id);
    if (slot + 2 > u16(vt)) return 0;
    const std::uint16_t o = u16(vt + slot);
    return o == 0 ? 0 : t + o;
  }
  std::size_t deref(std::size_t p) const { return p + u32(p); }
  /// Table or vector the offset field `id` of table `t` points to, 0 when absent.
  std::size_t ref(std::size_t t, int id) const {
    const std::size_t f = field(t, id);
    return f == 0 ? 0 : deref(f);
  }
  std::uint32_t length(std::size_t vec) const { return u32(vec); }
  /// Table element i of a vector of tables.
  std::size_t elem(std::size_t vec, std::uint32_t i) const { return deref(vec + 4 + 4 * std::size_t{i}); }
};

struct Targets {
  std::vector<std::size_t> scales, zero_points, dims, opcodes, option_tables, betas;
  /// Per entry of scales / zero_points: its tensor is a feature map (no constant data) of type int8,
  /// uint8 or int16, which the workload carries with its scale (biases and other constants are read
  /// by the weight encoder or not at all).
  std::vector<bool> scale_on_feature_map, zero_point_on_feature_map;
  std::vector<std::uint32_t> option_sizes;
};

Targets find_targets(const std::string& bytes) {
  const Fb fb{bytes};
  Targets t;
  const std::size_t root = fb.deref(0);
  const std::size_t codes = fb.ref(root, 1);
  std::vector<std::int32_t> code_of;
  if (codes != 0) {
    for (std::uint32_t i = 0; i < fb.length(codes); ++i) {
      const std::size_t oc = fb.elem(codes, i);
      std::int32_t code = 0;
      if (const std::size_t f = fb.field(oc, 3)) {
        t.opcodes.push_back(f);
        code = fb.i32(f);
      }
      if (const std::size_t f = fb.field(oc, 0)) code = std::max<std::int32_t>(code, static_cast<std::int8_t>(bytes[f]));
      code_of.push_back(code);
    }
  }
  const std::size_t buffers = fb.ref(root, 4);
  const auto constant = [&](std::size_t tensor) {
    const std::size_t f = fb.field(tensor, 2);
    const std::uint32_t index = f == 0 ? 0 : fb.u32(f);
    if (index == 0 || buffers == 0 || index >= fb.length(buffers)) return false;
    const std::size_t data = fb.ref(fb.elem(buffers, index), 0);
    return data != 0 && fb.length(data) > 0;
  };
  const std::size_t sgs = fb.ref(root, 2);
  const std::size_t sg = fb.elem(sgs, 0);
  if (const std::size_t tensors = fb.ref(sg, 0)) {
    for (std::uint32_t i = 0; i < fb.length(tensors); ++i) {
      const std::size_t tt = fb.elem(tensors, i);
      if (const std::size_t shape = fb.ref(tt, 0)) {
        for (std::uint32_t d = 0; d < fb.length(shape); ++d) t.dims.push_back(shape + 4 + 4 * std::size_t{d});
      }
      const std::size_t type_field = fb.field(tt, 1);
      const int type = type_field == 0 ? 0 : static_cast<std::int8_t>(bytes[type_field]);
      const bool feature_map = !constant(tt) && (type == 9 || type == 3 || type == 7);
      if (const std::size_t q = fb.ref(tt, 4)) {
        if (const std::size_t s = fb.ref(q, 2)) {
          for (std::uint32_t k = 0; k < fb.length(s) && k < 2; ++k) {
            t.scales.push_back(s + 4 + 4 * std::size_t{k});
            t.scale_on_feature_map.push_back(feature_map);
          }
        }
        if (const std::size_t z = fb.ref(q, 3)) {
          for (std::uint32_t k = 0; k < fb.length(z) && k < 2; ++k) {
            t.zero_points.push_back(z + 4 + 8 * std::size_t{k});
            t.zero_point_on_feature_map.push_back(feature_map);
          }
        }
      }
    }
  }
  if (const std::size_t ops = fb.ref(sg, 3)) {
    for (std::uint32_t i = 0; i < fb.length(ops); ++i) {
      const std::size_t op = fb.elem(ops, i);
      const std::size_t opts = fb.ref(op, 4);
      if (opts == 0) continue;
      const std::size_t vt = static_cast<std::size_t>(static_cast<std::int64_t>(opts) - fb.i32(opts));
      t.option_tables.push_back(opts);
      t.option_sizes.push_back(fb.u16(vt + 2));
      const std::size_t oi = fb.field(op, 0);
      const std::uint32_t opcode_index = oi == 0 ? 0 : fb.u32(oi);
      if (opcode_index < code_of.size() && code_of[opcode_index] == 25 /* SOFTMAX */) {
        if (const std::size_t beta = fb.field(opts, 0)) t.betas.push_back(beta);
      }
    }
  }
  return t;
}

struct Mutant {
  std::string kind;
  std::string bytes;
  bool must_refuse = false;  ///< a certain nonsense value: exit 2, unless the YAML shows a CPU layer for it
};

void put_f32(std::string& b, std::size_t p, float v) { std::memcpy(b.data() + p, &v, 4); }
void put_i32(std::string& b, std::size_t p, std::int32_t v) { std::memcpy(b.data() + p, &v, 4); }
void put_i64(std::string& b, std::size_t p, std::int64_t v) { std::memcpy(b.data() + p, &v, 8); }

std::vector<Mutant> mutants_of(const std::string& original, std::mt19937_64& rng, int per_kind) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const Targets t = find_targets(original);
  std::vector<Mutant> out;
  const auto add = [&](std::string kind, std::string bytes, bool must_refuse) {
    out.push_back({std::move(kind), std::move(bytes), must_refuse});
  };
  for (int i = 0; i < per_kind; ++i) {
    std::string b = original;
    const std::size_t n = 1 + pick(8);
    for (std::size_t k = 0; k < n; ++k) b[pick(b.size())] = static_cast<char>(rng());
    add("bytes", std::move(b), false);
    add("truncate", original.substr(0, pick(original.size())), false);
    if (!t.scales.empty()) {
      std::string s = original;
      const float values[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 0.0f, -1.0f};
      const std::size_t k = pick(t.scales.size());
      put_f32(s, t.scales[k], values[pick(5)]);
      add("scale", std::move(s), t.scale_on_feature_map[k]);
    }
    if (!t.zero_points.empty()) {
      std::string s = original;
      const std::int64_t values[] = {-40000, 70000, std::int64_t{1} << 40, -(std::int64_t{1} << 40)};
      const std::size_t k = pick(t.zero_points.size());
      put_i64(s, t.zero_points[k], values[pick(4)]);
      add("zero_point", std::move(s), t.zero_point_on_feature_map[k]);
    }
    if (!t.dims.empty()) {
      std::string s = original;
      const std::int32_t values[] = {0, -1, 65536, std::numeric_limits<std::int32_t>::max()};
      put_i32(s, t.dims[pick(t.dims.size())], values[pick(4)]);
      add("shape", std::move(s), false);
    }
    if (!t.opcodes.empty()) {
      std::string s = original;
      put_i32(s, t.opcodes[pick(t.opcodes.size())], static_cast<std::int32_t>(pick(260)) - 10);
      add("opcode", std::move(s), false);
    }
    if (!t.option_tables.empty()) {
      std::string s = original;
      const std::size_t k = pick(t.option_tables.size());
      const std::uint32_t size = std::max<std::uint32_t>(t.option_sizes[k], 5);
      s[t.option_tables[k] + 4 + pick(size - 4)] = static_cast<char>(rng());
      add("option", std::move(s), false);
    }
  }
  for (const std::size_t beta : t.betas) {
    std::string s = original;
    put_f32(s, beta, std::numeric_limits<float>::quiet_NaN());
    add("beta", std::move(s), true);
  }
  return out;
}

TEST(TfliteMutation, EveryMutantKeepsTheExitStatusContract) {
  const std::uint64_t seed = npumap::testing::test_seed(__FILE__, 41);
  // The address-space cap counts malloc's per-thread arenas (64 MiB each, up to 8 per core): two keep
  // the cap independent of the machine's core count.
  setenv("MALLOC_ARENA_MAX", "2", 1);
  std::mt19937_64 rng(seed);
  // Small models of different kinds (a CNN, a DS-CNN, an LSTM, a keyword spotter, a tiny dense net).
  const std::vector<std::string> models = {"tflm__hello_world_int8", "tflm__micro_speech_quantized",
                                           "mlperftiny__kws_ref_model", "mlexamples__ds_cnn_s_quantized",
                                           "mlexamples__basic_lstm_quantized_small", "mlperftiny__str_ww_ref_model"};
  TempDir dir;
  std::map<std::string, int> status_count;
  int total = 0;
  for (const std::string& name : models) {
    const std::string original = read_text(fs::path("workloads") / "models" / (name + ".tflite"));
    ASSERT_FALSE(original.empty()) << name;
    std::vector<Mutant> mutants = mutants_of(original, rng, name == "tflm__hello_world_int8" ? 12 : 5);
    // Two processes at a time (the machine has two cores).
    for (std::size_t i = 0; i < mutants.size(); i += 2) {
      std::vector<std::pair<Spawned, std::size_t>> running;
      std::vector<std::unique_ptr<TempDir>> ios;
      for (std::size_t j = i; j < mutants.size() && j < i + 2; ++j) {
        const fs::path model = dir / (name + "-" + std::to_string(j) + "-" + mutants[j].kind + ".tflite");
        write_text(model, mutants[j].bytes);
        ios.push_back(std::make_unique<TempDir>());
        // Mapped: every third mutant of the smallest model whose check needs no imported YAML.
        const bool map = name == "tflm__hello_world_int8" && j % 3 == 0 && !mutants[j].must_refuse;
        const std::vector<std::string> args =
            map ? std::vector<std::string>{"--workload", model.string(), "--out", (*ios.back() / "run").string(), "-q", "--allow-cpu-only"}
                : std::vector<std::string>{"import", model.string(), "-o", (*ios.back() / "m.yaml").string()};
        // Under a 2 GiB address-space cap: a mutant that makes the mapper allocate without bound ends
        // in exit 4 (out of memory), which the contract below refuses.
        std::vector<std::string> capped{"--as=" + std::to_string(std::size_t{2} << 30), "--", NPUMAP_MAPPER_EXE};
        capped.insert(capped.end(), args.begin(), args.end());
        running.emplace_back(spawn_program("/usr/bin/prlimit", capped, *ios.back()), j);
      }
      for (std::size_t r = 0; r < running.size(); ++r) {
        const std::size_t j = running[r].second;
        const Mutant& m = mutants[j];
        const fs::path model = dir / (name + "-" + std::to_string(j) + "-" + m.kind + ".tflite");
        const RunResult res = wait_mapper(running[r].first);
        ++total;
        ++status_count[std::to_string(res.status)];
        SCOPED_TRACE(model.filename().string() + " (" + m.kind + ")");
        ASSERT_TRUE(res.status == 0 || res.status == 2) << "exit " << res.status << ": " << res.err;
        if (res.status == 2) {
          const auto lines = lines_of(res.err);
          ASSERT_EQ(lines.size(), 1u) << res.err;
          EXPECT_NE(lines[0].find(model.string()), std::string::npos) << lines[0];
        } else if (m.must_refuse) {
          // Accepted: only when Vela put the operator on the CPU (the YAML's cpu layer carries the reason).
          const std::string yaml = read_text(*ios[r] / "m.yaml");
          EXPECT_NE(yaml.find("op: cpu"), std::string::npos) << "nonsense accepted";
          if (const char* keep = std::getenv("NPUMAP_KEEP_MUTANTS"); keep != nullptr && yaml.find("op: cpu") == std::string::npos) {
            fs::copy_file(model, fs::path(keep) / model.filename(), fs::copy_options::overwrite_existing);
          }
        }
      }
    }
  }
  std::string summary;
  for (const auto& [status, count] : status_count) summary += " exit " + status + ": " + std::to_string(count) + ";";
  std::cout << "tflite mutants: " << total << ";" << summary << "\n";
  EXPECT_GT(status_count["0"], 0);
  EXPECT_GT(status_count["2"], 0);
}

}  // namespace
}  // namespace npumap::cli_test
