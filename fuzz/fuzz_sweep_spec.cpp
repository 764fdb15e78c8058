// libFuzzer harness: the sweep-spec loader (mapper/sweep/sweep_spec.hpp), which also loads every
// workload and builds every arch point it names (zoo names such as `resnet18` resolve from any
// folder). The spec goes to a scratch file. Bad input must end in common::UserError.
#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "mapper/sweep/sweep_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npumap::fuzz::scratch_file(data, size, ".yaml");
  try {
    (void)npumap::sweep::load_sweep_spec(path);
  } catch (const npumap::common::UserError&) {
  }
  return 0;
}
