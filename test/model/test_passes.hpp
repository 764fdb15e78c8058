#pragma once
// Small builders for hand-written passes in the model tests. Defaults: int8 NHWC linear feature maps in
// SRAM with quant scale 1.0, stride/dilation 1, no activation, an NPU predecessor present.

#include "model/pass.hpp"

namespace npumap::model::testing {

inline FeatureMap fm(Shape shape, DataType dtype = DataType::Int8, arch::MemArea area = arch::MemArea::Sram) {
  FeatureMap f;
  f.shape = shape;
  f.dtype = dtype;
  f.mem_area = area;
  f.format = TensorFormat::NHWC;
  f.needs_linear_format = true;
  f.quant_scale = 1.0f;
  return f;
}

inline Weights weights(Shape shape, BlockTraversal traversal, arch::MemArea area = arch::MemArea::Sram,
                       double compression = 1.0) {
  Weights w;
  w.shape = shape;
  w.mem_area = area;
  w.compression_scale = compression;
  w.storage_shape = Shape::of({1, 1, 1, static_cast<int>(shape.elements())});
  w.traversal = traversal;
  return w;
}

/// Conv2D with kernel (kh, kw) from the weight shape, no bias.
inline Pass conv(Shape ifm, Shape ofm, int kh, int kw, BlockTraversal traversal, std::array<int, 4> bc,
                 DataType dtype = DataType::Int8) {
  Pass p;
  p.op.type = OpType::Conv2DBias;
  p.op.kernel.h = kh;
  p.op.kernel.w = kw;
  p.ifm = fm(ifm, dtype);
  p.ofm = fm(ofm, dtype);
  p.weights = weights(Shape::of({kh, kw, ifm.last(), ofm.last()}), traversal);
  p.block_config = bc;
  return p;
}

inline Pass depthwise(Shape ifm, Shape ofm, int kh, int kw, std::array<int, 4> bc, DataType dtype = DataType::Int8) {
  Pass p = conv(ifm, ofm, kh, kw, BlockTraversal::DepthWise, bc, dtype);
  p.op.type = OpType::DepthwiseConv2DBias;
  p.weights->shape = Shape::of({kh, kw, 1, ofm.last()});
  return p;
}

inline Pass pool(OpType type, Shape ifm, Shape ofm, int kh, int kw, std::array<int, 4> bc, DataType dtype = DataType::Int8) {
  Pass p;
  p.op.type = type;
  p.op.kernel.h = kh;
  p.op.kernel.w = kw;
  p.ifm = fm(ifm, dtype);
  p.ofm = fm(ofm, dtype);
  p.block_config = bc;
  return p;
}

/// FullyConnected with 2-D [N, I] / [N, O] feature maps and [I, O] weights.
inline Pass fully_connected(int n, int in, int out, std::array<int, 4> bc, DataType dtype = DataType::Int8) {
  Pass p;
  p.op.type = OpType::FullyConnected;
  p.ifm = fm(Shape::of({n, in}), dtype);
  p.ofm = fm(Shape::of({n, out}), dtype);
  p.weights = weights(Shape::of({in, out}), BlockTraversal::Default);
  p.block_config = bc;
  return p;
}

inline Pass elementwise(OpType type, Shape shape, std::array<int, 4> bc, DataType ifm_dtype = DataType::Int8,
                        DataType ofm_dtype = DataType::Int8) {
  Pass p;
  p.op.type = type;
  p.ifm = fm(shape, ifm_dtype);
  if (is_binary_elementwise(type)) p.ifm2 = fm(shape, ifm_dtype);
  p.ofm = fm(shape, ofm_dtype);
  p.block_config = bc;
  return p;
}

}  // namespace npumap::model::testing
