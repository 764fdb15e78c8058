// The lowering pipeline: lower_for_npu() runs the steps in Vela's order on subgraph 0
// (docs/design/lowering/README.md lists them).

#include <exception>
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
  lowering::Lowering c{model, model.subgraphs[0], options, {}, {}, {}, {}, true};
  try {
    c.read_model();
    c.check_supported_operators();
    c.lower_concatenations();
    c.lower_splits_and_slices();
    c.copy_reshapes_between_boundaries();
    c.remove_reshapes();
    c.apply_operator_rewrites();
    c.finish_npu_ops();
    c.absorb_split_slice_reads();
    return c.pack_passes();
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    // A malformed graph that slipped past the checks (an index out of range, a missing option):
    // report it as bad input on one line rather than letting a library exception escape.
    throw UserError(SourceLocation{model.name, 0, 0}, "subgraphs[0]",
                    std::string("cannot lower the graph for the NPU: ") + e.what());
  }
}

}  // namespace npumap::tflite
