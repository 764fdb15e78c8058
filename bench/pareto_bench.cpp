// Throughput of the Pareto kernel (mapper/pareto.hpp) in rows per second.
//
// Tables are generated once per shape from std::mt19937_64 with a fixed seed and our own mapping
// of 64-bit draws to doubles, so every platform filters the same numbers. Each table's expected
// front is computed once at setup by an independent block-nested-loop filter (O(n * front)), and
// every benchmark compares the size and an FNV-1a hash of its result with it, calling
// SkipWithError on a mismatch so a fast wrong kernel cannot report a figure.
//
// Cases: uniform random tables with 2 and 3 objectives at 10^5 and 10^6 rows (the headline
// is 10^6 rows x 3 objectives); an anti-correlated 3-objective table whose front is large, where
// the elimination pass cannot help and the staircases do the work; its 5-objective form (20,000
// rows), where the skyline window does; and the mapper's usage
// pattern: 4096-row chunks filtered with one reused workspace, then concatenated and re-filtered.
// With NPUMAP_BENCH_SMOKE=1 (the ctest smoke run) every table is cut to 1% of its rows.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/hash.hpp"
#include "mapper/search/pareto.hpp"

namespace {

using npumap::search::pareto_front;
using npumap::search::ParetoWorkspace;

enum class Shape { Uniform, Anticorrelated };

struct Case {
  std::vector<double> rows;
  std::size_t num_rows = 0;
  std::size_t num_objectives = 0;
  std::size_t front_size = 0;
  std::uint64_t front_hash = 0;
};

bool smoke() {
  const char* env = std::getenv("NPUMAP_BENCH_SMOKE");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::uint64_t fnv1a(const std::vector<std::uint32_t>& indices) {
  npumap::common::Fnv1a h;
  for (std::uint32_t v : indices) h.add(static_cast<std::uint64_t>(v));
  return h.value();
}

// Block-nested-loop filter in index order, independent of the kernel's sorting: a new row is
// dropped if a kept row is <= it everywhere (dominated, or a later duplicate), otherwise it evicts
// the kept rows it dominates and joins them. The kept set is the front.
std::vector<std::uint32_t> reference_front(const std::vector<double>& t, std::size_t n, std::size_t k) {
  std::vector<std::uint32_t> kept;
  std::vector<std::uint32_t> next;
  auto le_all = [&](std::size_t a, std::size_t b) {
    for (std::size_t c = 0; c < k; ++c) {
      if (!(t[a * k + c] <= t[b * k + c])) return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < n; ++i) {
    bool dropped = false;
    for (std::uint32_t j : kept) {
      if (le_all(j, i)) {
        dropped = true;
        break;
      }
    }
    if (dropped) continue;
    next.clear();
    for (std::uint32_t j : kept) {
      // i survived, so j is not <= i; i <= j therefore means i dominates j.
      if (!le_all(i, j)) next.push_back(j);
    }
    next.push_back(static_cast<std::uint32_t>(i));
    kept.swap(next);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

const Case& get_case(Shape shape, std::size_t n, std::size_t k) {
  static std::map<std::tuple<int, std::size_t, std::size_t>, Case> cache;
  const auto key = std::make_tuple(static_cast<int>(shape), n, k);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Case c;
  c.num_rows = n;
  c.num_objectives = k;
  c.rows.resize(n * k);
  std::mt19937_64 rng(0x9a7e70'0000ULL + static_cast<std::uint64_t>(shape) * 1000 + k);
  for (std::size_t i = 0; i < n; ++i) {
    double* r = c.rows.data() + i * k;
    double total = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      r[j] = unit(rng);
      total += r[j];
    }
    if (shape == Shape::Anticorrelated && total > 0.0) {
      // Project onto the plane sum = 1 and lift by up to 20%: many rows trade off, a large front.
      const double lift = 1.0 + 0.2 * unit(rng);
      for (std::size_t j = 0; j < k; ++j) r[j] = r[j] / total * lift;
    }
  }
  const std::vector<std::uint32_t> front = reference_front(c.rows, n, k);
  c.front_size = front.size();
  c.front_hash = fnv1a(front);
  return cache.emplace(key, std::move(c)).first->second;
}

// Set on any mismatch so the process exits non-zero and the ctest smoke run fails too (Google
// Benchmark itself exits 0 after SkipWithError).
bool g_mismatch = false;

bool check(benchmark::State& state, const Case& c, const std::vector<std::uint32_t>& front) {
  if (front.size() != c.front_size || fnv1a(front) != c.front_hash) {
    g_mismatch = true;
    state.SkipWithError("Pareto front differs from the reference filter");
    return false;
  }
  return true;
}

void set_counters(benchmark::State& state, const Case& c) {
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(c.num_rows * state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.counters["front"] = static_cast<double>(c.front_size);
}

void bm_whole(benchmark::State& state, Shape shape, std::size_t n, std::size_t k) {
  const Case& c = get_case(shape, n, k);
  ParetoWorkspace ws;
  std::vector<std::uint32_t> front;
  for (auto _ : state) {
    pareto_front(c.rows.data(), c.num_rows, c.num_objectives, ws, front);
    benchmark::DoNotOptimize(front.data());
    if (!check(state, c, front)) return;
  }
  set_counters(state, c);
}

// The mapper's pattern (docs/design/architecture.md §5): fixed-size chunks, chunk fronts concatenated in order and
// filtered again.
void bm_chunked(benchmark::State& state, Shape shape, std::size_t n, std::size_t k, std::size_t chunk) {
  const Case& c = get_case(shape, n, k);
  ParetoWorkspace ws;
  std::vector<std::uint32_t> chunk_front;
  std::vector<double> merged;
  std::vector<std::uint32_t> origin;
  std::vector<std::uint32_t> merged_front;
  std::vector<std::uint32_t> front;
  for (auto _ : state) {
    merged.clear();
    origin.clear();
    for (std::size_t begin = 0; begin < n; begin += chunk) {
      const std::size_t rows = std::min(chunk, n - begin);
      pareto_front(c.rows.data() + begin * k, rows, k, ws, chunk_front);
      for (std::uint32_t i : chunk_front) {
        const double* r = c.rows.data() + (begin + i) * k;
        merged.insert(merged.end(), r, r + k);
        origin.push_back(static_cast<std::uint32_t>(begin + i));
      }
    }
    pareto_front(merged.data(), origin.size(), k, ws, merged_front);
    front.clear();
    for (std::uint32_t i : merged_front) front.push_back(origin[i]);
    benchmark::DoNotOptimize(front.data());
    if (!check(state, c, front)) return;
  }
  set_counters(state, c);
}

}  // namespace

int main(int argc, char** argv) {
  const bool small = smoke();
  auto rows = [small](std::size_t n) { return small ? n / 100 : n; };
  auto name = [](const char* what, std::size_t k, std::size_t n) {
    return std::string("Pareto/") + what + "/objectives:" + std::to_string(k) + "/rows:" + std::to_string(n);
  };
  for (std::size_t k : {3, 2}) {
    for (std::size_t n : {rows(1'000'000), rows(100'000)}) {
      benchmark::RegisterBenchmark(name("uniform", k, n).c_str(), bm_whole, Shape::Uniform, n, k)
          ->Unit(benchmark::kMillisecond);
    }
  }
  const std::size_t anti = rows(50'000);
  benchmark::RegisterBenchmark(name("anticorrelated", 3, anti).c_str(), bm_whole, Shape::Anticorrelated, anti,
                               std::size_t{3})
      ->Unit(benchmark::kMillisecond);
  // Five objectives (the join's four objectives and an open cascade's SRAM): the skyline path.
  const std::size_t anti5 = rows(20'000);
  benchmark::RegisterBenchmark(name("anticorrelated", 5, anti5).c_str(), bm_whole, Shape::Anticorrelated, anti5,
                               std::size_t{5})
      ->Unit(benchmark::kMillisecond);
  const std::size_t chunked = rows(1'000'000);
  benchmark::RegisterBenchmark(name("uniform_chunks4096", 3, chunked).c_str(), bm_chunked, Shape::Uniform,
                               chunked, std::size_t{3}, std::size_t{4096})
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_mismatch ? 1 : 0;
}
