#pragma once
// Per-layer weight compression from a file (`mapper --weight-compression FILE`): the measured ratio of
// encoded to raw weight bytes of each layer, e.g. from Vela's per-layer report, overriding what the
// workload says. The file is a YAML (or JSON) mapping from layer name to ratio:
//
//   conv1: 0.71
//   "model/conv2d_3/Conv2D": 1.25
//
// Every name must be a layer with weights; every ratio must be in (0, 64].

#include <string>

#include "workloads/workload.hpp"

namespace npumap::workloads {

/// Sets the weight_compression of the layers named in `file`; throws UserError (file:line:col, the
/// key, a hint) for an unknown layer, a layer without weights or a ratio out of range.
void apply_weight_compression_file(Workload& workload, const std::string& file);

}  // namespace npumap::workloads
