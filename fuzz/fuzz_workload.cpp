// libFuzzer harness: the workload YAML loader (workloads/loader.hpp). Bad input must end in
// common::UserError; any other exception, a crash or a sanitizer report is a finding.
#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)npumap::workloads::load_workload_from_string(npumap::fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const npumap::common::UserError&) {
  }
  return 0;
}
