#pragma once
// The seed of a test file's random cases: NPUMAP_TEST_SEED when set (decimal, or 0x hex), otherwise
// the file's fixed default. It is printed, so a failing run can be replayed with the same seed.

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace npumap::testing {

inline std::uint64_t test_seed(const char* file, std::uint64_t fallback) {
  const char* env = std::getenv("NPUMAP_TEST_SEED");
  const std::uint64_t seed = env != nullptr ? std::stoull(env, nullptr, 0) : fallback;
  std::cout << file << " seed: " << seed << " (override with NPUMAP_TEST_SEED)\n";
  return seed;
}

}  // namespace npumap::testing
