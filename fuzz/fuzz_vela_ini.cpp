// libFuzzer harness: Vela's configuration files (arch/vela_ini.hpp, arch/vela_config.hpp): the ini
// reader, the checks of every section, and every section it defines resolved and combined into an
// arch for an Ethos-U55 and an Ethos-U65. Bad input must end in common::UserError.
#include <vector>

#include "arch/arch.hpp"
#include "arch/vela_config.hpp"
#include "common/user_error.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const npumap::arch::VelaConfig config =
        npumap::arch::VelaConfig::from_texts({{npumap::fuzz::text_of(data, size), "fuzz.ini"}});
    for (const char* accelerator : {"ethos-u55-64", "ethos-u65-256"}) {
      const npumap::arch::AcceleratorConfig& accel = npumap::arch::accelerator_config(accelerator);
      for (const std::string& sys : config.system_config_names()) {
        for (const std::string& mode : config.memory_mode_names()) {
          try {
            std::vector<std::string> notes;
            (void)config.make_arch(accel, sys, mode, {}, &notes);
          } catch (const npumap::common::UserError&) {
          }
        }
      }
    }
  } catch (const npumap::common::UserError&) {
  }
  return 0;
}
