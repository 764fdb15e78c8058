// The lowering pipeline: lower_for_npu() runs the steps in Vela's order on subgraph 0
// (docs/design/lowering/README.md lists them).

#include <set>
#include <string>

#include "common/user_error.hpp"
#include "workloads/tflite/lowering/lowering.hpp"
#include "workloads/tflite/npu_lowering.hpp"

namespace npumap::tflite {

NpuGraph lower_for_npu(const Model& model, const NpuLoweringOptions& options) {
  using common::SourceLocation;
  using common::UserError;
  if (model.subgraphs.empty())
    throw UserError(SourceLocation{model.name, 0, 0}, "subgraphs", "the model has no subgraph to lower");
  static const std::set<std::string> configs{"",          "ethos-u55-32",  "ethos-u55-64", "ethos-u55-128",
                                             "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
  if (!configs.count(options.accelerator_config))
    throw UserError(SourceLocation{model.name, 0, 0}, "accelerator_config",
                    "unknown accelerator config '" + options.accelerator_config + "'",
                    "one of ethos-u55-32, -64, -128, -256, ethos-u65-256, -512");
  using lowering::Lowering;
  Lowering c{model, model.subgraphs[0], options, {}, {}, {}, {}, true};
  // Bad input is a UserError from the step that finds it; anything else a step throws is an internal
  // error of the lowering, named with the step (lowering::run_step).
  struct Step {
    const char* name;
    void (Lowering::*run)();
  };
  static constexpr Step steps[] = {
      {"reading the model", &Lowering::read_model},
      {"the supported-operator checks", &Lowering::check_supported_operators},
      {"lowering the concatenations", &Lowering::lower_concatenations},
      {"lowering the splits and slices", &Lowering::lower_splits_and_slices},
      {"copying reshapes between boundaries", &Lowering::copy_reshapes_between_boundaries},
      {"removing the reshapes", &Lowering::remove_reshapes},
      {"the operator rewrites", &Lowering::apply_operator_rewrites},
      {"finishing the NPU ops", &Lowering::finish_npu_ops},
      {"absorbing the slice reads", &Lowering::absorb_split_slice_reads},
  };
  for (const Step& step : steps) lowering::run_step(model.name, step.name, [&] { (c.*step.run)(); });
  return lowering::run_step(model.name, "packing the passes", [&] { return c.pack_passes(); });
}

}  // namespace npumap::tflite
