#pragma once
// The size of Vela's packed bias/scale tensor (docs/design/lowering/weight-encoding.md, "Bias and
// scale"): shared by the TFLite importer (which checks it against Vela's records) and the search's
// lowering (the bias's storage shape: its DMA's bytes and its copy's SRAM).

#include <cstdint>

namespace npumap::workloads {

/// Size of the packed bias/scale tensor (weight-encoding.md, "Bias and scale").
struct BiasScaleSize {
  std::int64_t elements = 0;       ///< Vela's storage shape: channels + ceil(padding / 10)
  std::int64_t packed_bytes = 0;   ///< the packed stream: 10 bytes per channel, each (step, core) padded to 16
  std::int64_t storage_bytes = 0;  ///< elements * 10 rounded up to 16 (Vela's storage size)
};

/// The bias/scale tensor of a pass with `ofm_depth` (> 0) channels on `cores` (>= 1) cores, in streams
/// of `depth_step` channels (0 = the whole depth). The importer's tflite::packed_bias_scale_size checks
/// its arguments and calls this.
BiasScaleSize packed_bias_scale_size(int ofm_depth, int cores, int depth_step);

}  // namespace npumap::workloads
