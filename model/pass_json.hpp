#pragma once
// The pass JSON of docs/pass-format.md: read an `input` object into a Pass and the Arch it runs on, write a
// Pass back as an `input` object, and write PassMetrics in the `expected` shape. Keys are written in
// sorted order and bandwidth lists in (mem_area, purpose, direction) index order with zero entries
// left out, exactly as the reference data is laid out, so outputs diff cleanly against it.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "arch/arch.hpp"
#include "model/evaluate.hpp"
#include "model/pass.hpp"

namespace npumap::model {

/// Labels of a pass record that do not affect the model.
struct PassLabels {
  std::string placement_name;
  std::string layer_name;
  std::optional<int> num_valid_block_configs;
};

/// A pass read from JSON together with its arch and labels.
struct PassInput {
  Pass pass;
  arch::Arch arch;
  PassLabels labels;
};

/// Reads an `input` object. The arch is make_arch(accelerator, system_config, memory_mode) with any
/// `arch_params` values applied on top. Bad input throws common::UserError naming `file` and `path.key`.
PassInput read_pass_input(const nlohmann::json& input, const std::string& file, const std::string& path);

/// Writes a pass as an `input` object; `arch_params` is written from `arch`.
nlohmann::ordered_json write_pass_input(const Pass& pass, const arch::Arch& arch, const PassLabels& labels = {});

/// The `arch_params` object of an arch (docs/pass-format.md).
nlohmann::ordered_json write_arch_params(const arch::Arch& arch);

/// Writes metrics in the `expected` shape, plus `energy_pj`. `trace` holds only output_cycles_calls
/// for elementwise passes.
nlohmann::ordered_json write_metrics(const PassMetrics& metrics);

}  // namespace npumap::model
