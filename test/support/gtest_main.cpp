// main() of every test binary: GoogleTest's default main, except that a run in which any test
// skipped exits 1. Everything a test needs (real models, Vela's reference compiles) ships in the
// repository, so a GTEST_SKIP means missing data or a race the test could not provoke: a failure,
// in ctest, in CI's sanitizer runs and when a binary is run by hand.

#include <cstdio>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const int skipped = ::testing::UnitTest::GetInstance()->skipped_test_count();
  if (status == 0 && skipped > 0) {
    std::fprintf(stderr, "npumap: %d test(s) skipped; no test may skip (is the repository complete?)\n", skipped);
    return 1;
  }
  return status;
}
