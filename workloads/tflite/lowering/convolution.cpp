// Convolutions: the constraints of CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV (and their bias),
// and their rewrites: depth multiplier > 1, 1x1 convolution on a 1x1 IFM -> fully connected, and the
// transpose convolution's upscaled form. Rules: docs/design/lowering/convolution.md.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_depthwise_convolution(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  if (auto f = check_convolution(o, true)) return f;
  const auto* d = std::get_if<DepthwiseConv2DOptions>(&o.opts);
  const int ic = tensor(ifm).shape.empty() ? 1 : tensor(ifm).shape.back();
  const int oc = tensor(ofm).shape.empty() ? 1 : tensor(ofm).shape.back();
  int m = d ? d->depth_multiplier : 1;
  if (m == 0) m = ic ? tensor(weights_of(o)).shape.back() / ic : 1;
  if (m > 1 && !(ic == 1 && oc == m))
    return reject("For depth multipliers > 1, IFM channels must be 1 and OFM channels must be equal to the depth multiplier",
                  "Op has ifm_channels=" + std::to_string(ic) + ", ofm_channels=" + std::to_string(oc) +
                      " and depth_multiplier=" + std::to_string(m));
  return std::nullopt;
}

Rejection Lowering::check_transpose_convolution(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  if (auto f = check_convolution(o, false)) return f;
  if (o.k.stride_w != 2 || o.k.stride_h != 2)
    return reject("Stride values for both width and height must be 2",
                  "Op has stride WxH as: " + std::to_string(o.k.stride_w) + "x" + std::to_string(o.k.stride_h));
  const Shape4 i4 = full4(tensor(ifm).shape), o4 = full4(tensor(ofm).shape);
  const auto& ws = tensor(weights_of(o)).shape;
  if (o.pad == NpuPadding::Same) {
    if (o4[1] != i4[1] * 2 || o4[2] != i4[2] * 2)
      return reject("SAME padding: OFM dimensions must equal IFM dimensions multiplied by stride",
                    "Op has ifm_shape=" + shape_text(ifm) + ", ofm_shape=" + shape_text(ofm) + " and stride_shape=[2, 2]");
  } else {
    const int eh = i4[1] * 2 + std::max(ws[1] - 2, 0), ew = i4[2] * 2 + std::max(ws[2] - 2, 0);
    if (o4[1] != eh || o4[2] != ew)
      return reject("VALID padding: OFM dimensions must equal IFM dimensions multiplied by stride, minus difference between kernel size and stride",
                    "Op has ifm_shape=" + shape_text(ifm) + ", ofm_shape=" + shape_text(ofm) + ", stride_shape=[2, 2] and kernel_shape=" +
                        py_list(ws));
  }
  return std::nullopt;
}

/// The constraints CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV share (convolution.md, "Constraints").
Rejection Lowering::check_convolution(const WorkOp& o, bool depthwise) {
  const NpuKernel& k = o.k;
  if (k.stride_w < 1 || k.stride_w > 3 || k.stride_h < 1 || k.stride_h > 3)
    return reject("Stride values for both width and height must be in the range [1, 3]",
                  "Op has stride WxH as: " + std::to_string(k.stride_w) + "x" + std::to_string(k.stride_h));
  if (k.dilation_w < 1 || k.dilation_w > 2 || k.dilation_h < 1 || k.dilation_h > 2)
    return reject("Dilation factor values for both width and height must be in the range [1, 2]",
                  "Op has dilation factor WxH as: " + std::to_string(k.dilation_w) + "x" + std::to_string(k.dilation_h));
  const int w = weights_of(o);
  if (w < 0 || tensor(w).shape.size() != 4) return reject("Weight tensor must be 4D", "Op has weights shape: " + shape_text(w));
  const auto& ws = tensor(w).shape;
  const std::int64_t kh = ws[1], kw = ws[2];
  const std::int64_t dkh = (kh - 1) * k.dilation_h + 1, dkw = (kw - 1) * k.dilation_w + 1;
  if (dkh < 1 || dkh > 64)
    return reject("Dilated kernel height must be in the range [1, 64]", "Op has dilated kernel height as: " + std::to_string(dkh));
  if (dkh * dkw < 1 || dkh * dkw > 4096)
    return reject("Product of dilated kernel width and height must be in the range [1, 4096]",
                  "Op has product of dilated kernel width and height as: " + std::to_string(dkh * dkw));
  if (tensor_type_bits(tensor(w).type) != 8)
    return reject("Weight tensor must be 8-bit", "Tensor '" + tensor(w).name + "' is " + std::string(tensor_type_name(tensor(w).type)));
  if (!tensor(w).is_const) return reject("Weight tensor must be constant", "Tensor '" + tensor(w).name + "' has non-const buffer");
  // The weight sum: per output channel for CONV (OHWI: O first); over the whole tensor for DW (a Vela
  // quirk, convolution.md, "Constraints" 7).
  {
    // Read in place (8-bit, checked above): a weight tensor may be larger than constant_ints expands.
    const std::span<const std::uint8_t> bytes = tensor(w).model >= 0
        ? model.tensor_data(sg.tensors[static_cast<std::size_t>(tensor(w).model)]) : std::span<const std::uint8_t>();
    const bool is_signed = tensor(w).type == TensorType::INT8;
    const bool readable = is_signed || tensor(w).type == TensorType::UINT8;
    const std::size_t count = readable ? bytes.size() : 0;
    const auto value = [&](std::size_t i) -> std::int64_t {
      return is_signed ? static_cast<std::int8_t>(bytes[i]) : static_cast<std::int64_t>(bytes[i]);
    };
    const auto& zps = tensor(w).q.zero_point;
    const std::int64_t limit = 127 * 65536;
    const std::size_t o_n = static_cast<std::size_t>(depthwise ? 1 : ws[0]);
    const std::size_t per = o_n ? count / o_n : 0;
    for (std::size_t oc = 0; oc < o_n && per; ++oc) {
      std::int64_t sum = 0;
      for (std::size_t i = 0; i < per; ++i) {
        const std::size_t idx = oc * per + i;
        const std::size_t ch = depthwise ? idx % static_cast<std::size_t>(ws[3]) : oc;
        // A zero point far outside the 8-bit range is clamped, and the sum stops growing once it
        // is certain to fail, so hostile values cannot overflow.
        const std::int64_t zp = std::clamp<std::int64_t>(zps.empty() ? 0 : zps[std::min(ch, zps.size() - 1)],
                                                         -(std::int64_t{1} << 40), std::int64_t{1} << 40);
        sum += std::llabs(value(idx) - zp);
        if (sum > (std::int64_t{1} << 60)) break;
      }
      if (sum > limit)
        return reject("The sum of the weights cannot exceed 8323072",
                      "Tensor '" + tensor(w).name + "' has the sum of weights: " + std::to_string(sum));
    }
  }
  if (auto f = check_bias(o)) return f;
  const int ifm = ifm_of(o);
  if (ifm >= 0 && !tensor(ifm).shape.empty() && tensor(ifm).shape[0] != 1)
    return reject("IFM Tensor batch size must be 1",
                  "Tensor '" + tensor(ifm).name + "' has batch size: " + std::to_string(tensor(ifm).shape[0]));
  return std::nullopt;
}

Rejection Lowering::check_bias(const WorkOp& o) {
  const int b = bias_of(o);
  if (b < 0) return std::nullopt;
  if (tensor(b).type != TensorType::INT32 && tensor(b).type != TensorType::INT64)
    return reject("Optional Bias tensor must be of type: int32, int64",
                  "Tensor '" + tensor(b).name + "' has data type: " + std::string(tensor_type_name(tensor(b).type)));
  for (auto v : constant_ints(b))
    if (v > (std::int64_t{1} << 39) - 1 || v < -(std::int64_t{1} << 39))
      return reject("Optional Bias tensor values must fit within 40-bits",
                    "Tensor '" + tensor(b).name + "' has values larger than 40-bits");
  return std::nullopt;
}

/// A depthwise convolution with multiplier > 1 is a Conv2DBias (convolution.md, "Depth multiplier").
void Lowering::lower_depth_multiplier(int id) {
  WorkOp& o = op(id);
  if (o.weights < 0 || o.wshape.empty()) return;
  const int ic = o.ifm_s[3];
  const int m = ic ? tensor(o.weights).shape.back() / ic : 1;
  if (m <= 1) return;
  o.vt = VelaOpType::Conv2DBias;
  o.wshape = {m, o.k.h, o.k.w, 1};
}

/// A 1x1 Conv2DBias on a 1x1 IFM is a FullyConnected (convolution.md, "1x1 convolution on a 1x1 IFM").
void Lowering::convert_1x1_conv_to_fully_connected(int id) {
  WorkOp& o = op(id);
  if (o.ifm_s[1] == 1 && o.ifm_s[2] == 1 && o.k.w == 1 && o.k.h == 1) {
    o.vt = VelaOpType::FullyConnected;
    o.name += "_fc";
    o.has_padding_attr = false;
    o.pad = NpuPadding::None;
    o.k = {};
  }
}

/// TRANSPOSE_CONV becomes a stride-1 convolution over the upscaled IFM with explicit padding
/// (convolution.md, "Transpose convolution").
void Lowering::lower_transpose_conv(int id) {
  WorkOp& o = op(id);
  if (o.wshape.empty()) {
    const int w = o.in.size() > 1 ? o.in[1] : -1;
    const int ifm = o.in.size() > 2 ? o.in[2] : -1;
    const int bias = o.in.size() > 3 ? o.in[3] : -1;
    o.in = {ifm, w, o.in[0], bias};
    o.weights = w;
    o.bias = bias;
    o.wshape = tensor(w).shape;
    o.k.w = o.wshape[2];
    o.k.h = o.wshape[1];
    o.bias_len = o.wshape[0];
    o.ifm_s = full4(tensor(ifm).shape);
    auto edge = [&](int in, int out, int k) {
      const int u = in ? out / in : 1;
      int after = 0;
      if (o.pad == NpuPadding::Same) {
        const int upsampled = in * u;
        const int total = std::max(0, (upsampled - 1) + k - upsampled);
        after = std::max((total + 1) / u - 1, 0);
      } else {
        after = std::max(k - 2, 0);
      }
      // The leading pad is k - 1 in both modes (3x3 stride 2: SAME (2,2,0,0), VALID (2,2,1,1);
      // convolution.md, "Transpose convolution").
      return std::make_pair(k - 1, after);
    };
    const auto [t, b] = edge(o.ifm_s[1], o.ofm_s[1], o.k.h);
    const auto [l, r] = edge(o.ifm_s[2], o.ofm_s[2], o.k.w);
    o.epad = {t, l, b, r};
    o.pad = NpuPadding::TransposeConv;
    o.k.stride_w = o.k.stride_h = 1;
  }
}

}  // namespace npumap::tflite::lowering
