#pragma once
// Shared helpers of the mapper tests: loading zoo/tiny workloads and presets from the source tree.

#include <cstdint>
#include <string>

#include "arch/arch_loader.hpp"
#include "mapper/search/join/join.hpp"
#include "workloads/loader.hpp"

namespace npumap::search::testing {

inline workloads::Workload tiny(const std::string& name) {
  return workloads::load_workload(std::string(NPUMAP_SOURCE_DIR) + "/workloads/" + name + ".yaml");
}

inline arch::Arch preset(const std::string& name) { return arch::load_arch(name); }

/// A feature map of a hand-made join problem: `bytes` in either layout, made by step `producer` (-1:
/// a network input) and last read by step `consumer` (-1: none).
inline JoinTensor feature_map(std::int64_t bytes, int producer, int consumer) {
  JoinTensor t;
  t.linear_bytes = t.nhcwb16_bytes = bytes;
  t.producer_step = producer;
  t.last_consumer_step = consumer;
  return t;
}

/// A 4-layer network with a branch that rejoins: conv -> (conv, depthwise) -> add.
inline workloads::Workload branch_rejoin() {
  return workloads::load_workload_from_string(R"(
name: branch_rejoin
inputs:
  - {name: x, shape: [1, 8, 8, 8], dtype: int8}
layers:
  - {name: stem, op: conv2d, inputs: [x], output: s, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: left, op: conv2d, inputs: [s], output: l, output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}
  - {name: right, op: depthwise_conv2d, inputs: [s], output: r, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: join, op: add, inputs: [l, r], output: y, output_shape: [1, 8, 8, 16]}
)",
                                              "branch_rejoin.yaml");
}

/// A 5-layer chain of small convolutions and a pooling layer, so fusion can chain over several layers.
inline workloads::Workload chain5() {
  return workloads::load_workload_from_string(R"(
name: chain5
inputs:
  - {name: x, shape: [1, 8, 8, 8], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 8], kernel: 3, padding: SAME}
  - {name: c2, op: depthwise_conv2d, inputs: [a], output: b, output_shape: [1, 8, 8, 8], kernel: 3, padding: SAME}
  - {name: c3, op: conv2d, inputs: [b], output: c, output_shape: [1, 8, 8, 16], kernel: 1, padding: VALID}
  - {name: p4, op: max_pool, inputs: [c], output: d, output_shape: [1, 4, 4, 16], kernel: 2, stride: 2, padding: VALID}
  - {name: c5, op: conv2d, inputs: [d], output: e, output_shape: [1, 4, 4, 8], kernel: 1, padding: VALID}
)",
                                              "chain5.yaml");
}

/// Two fusable convolutions whose cascade must close at the second (its output feeds an add with the
/// network input), then a 1x1 convolution: every cascade is one step long, as in a residual block.
inline workloads::Workload pair_residual() {
  return workloads::load_workload_from_string(R"(
name: pair_residual
inputs:
  - {name: x, shape: [1, 8, 8, 16], dtype: int8}
layers:
  - {name: c1, op: conv2d, inputs: [x], output: a, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: c2, op: conv2d, inputs: [a], output: b, output_shape: [1, 8, 8, 16], kernel: 3, padding: SAME}
  - {name: sum, op: add, inputs: [b, x], output: y, output_shape: [1, 8, 8, 16]}
  - {name: c3, op: conv2d, inputs: [y], output: z, output_shape: [1, 8, 8, 8], kernel: 1, padding: VALID}
)",
                                              "pair_residual.yaml");
}

/// A large early peak (a wide convolution), then a pooled branch with a cascade of two convolutions
/// whose weights can be copied to SRAM, closed by an add: the cascade's SRAM matters to the peak only
/// for some completions.
inline workloads::Workload peak_then_pair() {
  return workloads::load_workload_from_string(R"(
name: peak_then_pair
inputs:
  - {name: x, shape: [1, 16, 16, 16], dtype: int8}
layers:
  - {name: c0, op: conv2d, inputs: [x], output: a, output_shape: [1, 16, 16, 32], kernel: 3, padding: SAME}
  - {name: pool, op: max_pool, inputs: [a], output: p, output_shape: [1, 4, 4, 32], kernel: 4, stride: 4, padding: VALID}
  - {name: c1, op: conv2d, inputs: [p], output: b, output_shape: [1, 4, 4, 64], kernel: 3, padding: SAME}
  - {name: c2, op: conv2d, inputs: [b], output: c, output_shape: [1, 4, 4, 32], kernel: 3, padding: SAME}
  - {name: sum, op: add, inputs: [c, p], output: y, output_shape: [1, 4, 4, 32]}
)",
                                              "peak_then_pair.yaml");
}

}  // namespace npumap::search::testing
