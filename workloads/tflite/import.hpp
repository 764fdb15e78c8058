#pragma once
// The TFLite importer's last step: a lowered NPU graph (npu_lowering.hpp) becomes a workload. Each NPU
// pass is one layer (named after the pass, which Vela names after the TFLite output tensor), each CPU
// operator a `cpu` layer with Vela's reason, and each layer with weights gets the encoded-to-raw weight
// ratio of Vela's weight encoder run on the real weight values. The result is written as workload
// YAML text and loaded by the ordinary loader, so `mapper import` writes exactly what `--workload
// model.tflite` maps. docs/design/tflite-import.md says how each part of a pass is expressed.

#include <memory>
#include <string>

#include "common/stop_token.hpp"
#include "workloads/tflite/model.hpp"
#include "workloads/tflite/npu_lowering.hpp"
#include "workloads/workload.hpp"

namespace npumap::tflite {

/// What the import depends on.
struct ImportOptions {
  /// Vela accelerator config ("ethos-u55-256", ...): LUT fusion needs SHRAM LUT banks, and the weight
  /// stream depends on the micro-block depths and core count. Empty = ethos-u55-128.
  std::string accelerator_config;
  /// Vela's graph rewrites (first-layer stride-2 rewrite, CONV->FC, PAD fusion, ...); false keeps the
  /// graph as written (`--no-vela-rewrites`).
  bool vela_rewrites = true;
};

/// A model imported as a workload.
struct ImportedModel {
  NpuGraph graph;               ///< the lowered graph the workload was built from
  std::string yaml;             ///< the workload as YAML text (what `mapper import` writes)
  workloads::Workload workload; ///< `yaml` loaded; its source_file is the .tflite path
};

/// Reads, lowers and converts the model in `path`. Bad input throws common::UserError (one line).
ImportedModel import_tflite(const std::string& path, const ImportOptions& options);
/// The same for a model already read.
ImportedModel import_model(const Model& model, const ImportOptions& options);

/// True when `path` names a TFLite model: its name ends in ".tflite" (any case) or its bytes 4..7
/// are the flatbuffers identifier "TFL3".
bool is_tflite_path(const std::string& path);

/// A network input read once (common::read_input: a file, a FIFO, or standard input as "-"): a
/// .tflite model (named ".tflite" or starting with the identifier "TFL3"; read and checked) or
/// workload YAML text. Each kind has its own size limit (512 MiB for models, 16 MiB for text).
struct NetworkInput {
  std::string name;                    ///< the path, "<stdin>" for "-"
  std::string hash;                    ///< common::fnv1a_hex of the bytes read
  bool is_tflite = false;
  std::shared_ptr<const Model> model;  ///< a .tflite model
  std::string yaml;                    ///< else the workload YAML text
};
/// Reads `path` once, polling `stop` while a pipe or FIFO has no data (then common::Interrupted).
NetworkInput read_network(const std::string& path, const common::StopToken& stop = {});

/// The workload of an input read: a .tflite model imported with `options`, or the YAML loaded
/// polling `stop` (as workloads::load_workload does).
workloads::Workload load_network(const NetworkInput& input, const ImportOptions& options, const common::StopToken& stop = {});
/// read_network() then load_network().
workloads::Workload load_network(const std::string& path, const ImportOptions& options,
                                 const common::StopToken& stop = {});

}  // namespace npumap::tflite
