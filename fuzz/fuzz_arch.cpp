// libFuzzer harness: the arch YAML loader (arch/arch_loader.hpp), with `preset:` resolved in the
// source tree's arch/presets. Bad input must end in common::UserError.
#include "arch/arch_loader.hpp"
#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)npumap::arch::load_arch_string(npumap::fuzz::text_of(data, size), "fuzz.yaml",
                                         NPUMAP_SOURCE_DIR "/arch/presets");
  } catch (const npumap::common::UserError&) {
  }
  return 0;
}
