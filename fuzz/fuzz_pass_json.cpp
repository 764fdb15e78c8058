// libFuzzer harness: `mapper eval` on pass JSON (mapper/eval/eval_command.hpp): the JSON reader,
// the pass reader (model/pass_json.hpp) and the cycle model on whatever it accepts, so an
// out-of-range dimension that reaches model::evaluate shows up as a UBSan finding.
#include <sstream>

#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "mapper/eval/eval_command.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npumap::eval::EvalOptions options;
  options.input_path = npumap::fuzz::scratch_file(data, size, ".json");
  options.check = true;
  std::ostringstream out, err;
  try {
    (void)npumap::eval::run_eval(options, out, err);
  } catch (const npumap::common::UserError&) {
  }
  return 0;
}
