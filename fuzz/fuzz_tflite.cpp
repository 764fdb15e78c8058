// libFuzzer harness: the .tflite reader (workloads/tflite/reader.hpp) and, on every model it
// accepts, the Vela NPU lowering (workloads/tflite/npu_lowering.hpp) for a U55 and a U65 config.
#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/tflite/npu_lowering.hpp"
#include "workloads/tflite/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npumap::tflite::Model model;
  try {
    model = npumap::tflite::read_model_bytes(npumap::fuzz::text_of(data, size), "fuzz.tflite");
  } catch (const npumap::common::UserError&) {
    return 0;
  }
  for (const char* config : {"ethos-u55-128", "ethos-u65-256"}) {
    try {
      npumap::tflite::NpuLoweringOptions options;
      options.accelerator_config = config;
      (void)npumap::tflite::lower_for_npu(model, options);
    } catch (const npumap::common::UserError&) {
    }
  }
  return 0;
}
