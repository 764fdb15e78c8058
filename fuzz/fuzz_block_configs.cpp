// libFuzzer harness: `mapper eval --block-configs` (mapper/eval/eval_block_configs.hpp): the
// block-config record reader and the SHRAM allocation / block-config search on what it accepts.
#include <sstream>

#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "mapper/eval/eval_block_configs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npumap::fuzz::scratch_file(data, size, ".json");
  std::ostringstream out, err;
  try {
    (void)npumap::eval::run_eval_block_configs(path, true, "", out, err);
  } catch (const npumap::common::UserError&) {
  }
  return 0;
}
