// FULLY_CONNECTED: its constraints and the flattening of its input (batched input as a 2-D view).
// Rules: docs/design/lowering/fully-connected.md.

#include <string>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_fully_connected(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  const int w = weights_of(o);
  if (w < 0) return reject("Weight tensor must be 8-bit", "Op has no weight tensor");
  if (tensor_type_bits(tensor(w).type) != 8)
    return reject("Weight tensor must be 8-bit", "Tensor '" + tensor(w).name + "' is " + type_text(w));
  if (!tensor(w).is_const) return reject("Weight tensor must be constant", "Tensor '" + tensor(w).name + "' has non-const buffer");
  if (auto f = check_bias(o)) return f;
  const auto* fo = std::get_if<FullyConnectedOptions>(&o.opts);
  const bool keep = fo && fo->keep_num_dims;
  if (!keep && tensor(ofm).shape.size() != 2)
    return reject("The output tensor(s) must have 2D shape", "Op has non-2D output tensor '" + tensor(ofm).name + "'");
  if (keep && tensor(ifm).shape.size() != tensor(ofm).shape.size())
    return reject("The IFM and OFM must have the same number of dimensions if keep_num_dims is set to true",
                  "Op has ifm shape: " + shape_text(ifm) + " and ofm shape: " + shape_text(ofm));
  return std::nullopt;
}

/// The IFM seen as b rows of I values; a batch laid out as a small feature map (fully-connected.md,
/// "The input view").
void Lowering::flatten_fully_connected_input(int id) {
  WorkOp& o = op(id);
  const std::int32_t I = o.wshape.empty() ? o.ifm_s[3] : o.wshape[3];
  if (I <= 0) return;
  std::int64_t elems = 1;
  for (auto d : tensor(o.in[0]).shape) elems *= d;
  const std::int32_t b = static_cast<std::int32_t>(elems / I);
  o.ifm_s = {b, 1, 1, I};
  if (b > 1) {
    std::int32_t h = 1, w = b;
    if (b == 4) h = 2, w = 2;
    else if (b == 8) h = 2, w = 4;
    else if (b == 16) h = 4, w = 4;
    o.ifm_s = {1, h, w, I};
    o.ofm_s = {1, h, w, o.ofm_s[3]};
  }
}

}  // namespace npumap::tflite::lowering
