// libFuzzer harness: a result.json given to `mapper show` (text, csv, json, one point) and to
// `mapper eval`, through the real command line (mapper/cli/cli.hpp). run_cli never throws; exit
// status 3 (an internal error reached main) is a finding, as is any crash or sanitizer report.
// Run with -close_fd_mask=3: the reports and error lines go to stdout/stderr.
#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.hpp"
#include "mapper/cli/cli.hpp"

namespace {

int run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return npumap::cli::run_cli(static_cast<int>(args.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npumap::fuzz::scratch_file(data, size, ".json");
  const std::array<std::vector<std::string>, 6> commands{{
      {"mapper", "show", path},
      {"mapper", "show", path, "--format", "csv"},
      {"mapper", "show", path, "--format", "json"},
      {"mapper", "show", path, "--point", "0"},
      {"mapper", "show", path, "--point", "0", "--format", "csv"},
      {"mapper", "eval", path},
  }};
  for (const auto& command : commands) {
    if (run(command) == 3) std::abort();
  }
  return 0;
}
