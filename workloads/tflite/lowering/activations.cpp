// Activations and LUT ops: RELU requantisation, LEAKY_RELU, LOGISTIC / TANH and HARD_SWISH as table
// lookups (the LUT op), and LUT fusion onto the producer. Rules: docs/design/lowering/activations.md.

#include <string>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_leaky_relu(const WorkOp& o) {
  if (auto f = check_elementwise_shapes(o)) return f;
  if (auto f = check_types_equal(o)) return f;
  const auto* l = std::get_if<LeakyReluOptions>(&o.opts);
  if (l && l->alpha < 0) return reject("Alpha must not be negative", "Op has alpha=" + fmt_float(l->alpha));
  return std::nullopt;
}

Rejection Lowering::check_hard_swish(const WorkOp& o) {
  const int ifm = ifm_of(o);
  if (!is_8bit(tensor(ifm).type)) return reject("IFM must be int8 or uint8", "Op has ifm_dtype=" + type_text(ifm));
  return check_types_equal(o);
}

/// A standalone RELU, RELU6 or RELU_N1_TO_1 that must rescale becomes an AvgPool with the ReLU as its
/// activation (activations.md, "The RELU family").
void Lowering::lower_requantising_relu(int id) {
  WorkOp& o = op(id);
  if (!(o.vt == VelaOpType::Relu || o.vt == VelaOpType::Relu6 || o.vt == VelaOpType::ReluN1To1)) return;
  if (o.builtin != BuiltinOperator::RELU && o.builtin != BuiltinOperator::RELU6 && o.builtin != BuiltinOperator::RELU_N1_TO_1)
    return;
  const int ifm = o.in[0], ofm = o.out[0];
  if (tensor(ifm).q == tensor(ofm).q) return;
  const NpuActivation a = o.vt == VelaOpType::Relu ? NpuActivation::Relu
                          : o.vt == VelaOpType::Relu6 ? NpuActivation::Relu6 : NpuActivation::ReluN1To1;
  o.vt = VelaOpType::AvgPool;
  o.name += "_avgpool";
  o.act = a;
  o.has_padding_attr = true;
  o.pad = NpuPadding::Valid;
  o.k = {};
}

/// LEAKY_RELU: a LUT op, a LeakyRelu elementwise op, or Mul (+ Mul) + Maximum (activations.md,
/// "LEAKY_RELU").
void Lowering::lower_leaky_relu(int id) {
  WorkOp& o = op(id);
  const int ifm = o.in[0], ofm = o.out[0];
  if (is_8bit(tensor(ifm).type) && tensor(ifm).type == tensor(ofm).type) {
    make_lut_op(id, LutKind::LeakyRelu, "_lut_lrelu");
    return;
  }
  if (tensor(ifm).type == TensorType::INT16 && tensor(ifm).q == tensor(ofm).q) {
    o.rewritten = true;  // int16 with equal scaling: stays a LeakyRelu elementwise op
    return;
  }
  const std::string name = o.name;
  const Shape4 is = o.ifm_s, os = o.ofm_s;
  const NpuActivation act = o.act;
  o.dead = true;
  const int alpha = add_tensor(name + "_alpha", {}, tensor(ifm).type, {}, true);
  const int fm_alpha = add_tensor(name + "_mul_alpha", tensor(ofm).shape, tensor(ofm).type, tensor(ofm).q);
  WorkOp m = make_compute_op(VelaOpType::Mul, name + "_mul_alpha", {ifm, alpha}, {fm_alpha});
  m.ifm_s = is;
  m.ofm_s = os;
  add_op(std::move(m));
  int other = ifm;
  if (!(tensor(ifm).q == tensor(ofm).q)) {
    const int one = add_tensor(name + "_one", {}, tensor(ifm).type, {}, true);
    other = add_tensor(name + "_mul_identity", tensor(ofm).shape, tensor(ofm).type, tensor(ofm).q);
    WorkOp mi = make_compute_op(VelaOpType::Mul, name + "_mul_identity", {ifm, one}, {other});
    mi.ifm_s = is;
    mi.ofm_s = os;
    add_op(std::move(mi));
  }
  WorkOp mx = make_compute_op(VelaOpType::Maximum, name + "_maximum", {other, fm_alpha}, {ofm});
  mx.ifm_s = os;
  mx.ifm2_s = os;
  mx.ofm_s = os;
  mx.act = act;
  add_op(std::move(mx));
}

/// 8-bit LOGISTIC and TANH become LUT ops; int16 ones stay hardware activations (activations.md).
void Lowering::lower_sigmoid_tanh(int id) {
  WorkOp& o = op(id);
  if (o.builtin != BuiltinOperator::LOGISTIC && o.builtin != BuiltinOperator::TANH) return;
  const int ifm = o.in[0], ofm = o.out[0];
  if (is_8bit(tensor(ifm).type) && tensor(ifm).type == tensor(ofm).type)
    make_lut_op(id, o.vt == VelaOpType::Sigmoid ? LutKind::Sigmoid : LutKind::Tanh,
             o.vt == VelaOpType::Sigmoid ? "_lut_sigmoid" : "_lut_tanh");
}

/// The LUT op (activations.md, "The LUT op"): a no-op Add of scalar 0 whose activation is a table lookup.
void Lowering::make_lut_op(int id, LutKind kind, const std::string& suffix) {
  WorkOp& o = op(id);
  const int ifm = o.in[0], ofm = o.out[0];
  NpuQuant zq = tensor(ifm).q;
  zq.zero_point.assign(zq.scale.empty() ? 0 : 1, 0);
  const std::string name = o.name + suffix;
  const int zero = add_tensor(name + "_zero", {}, tensor(ifm).type, zq, true);
  WorkOp& l = op(id);
  l.kind = OpKind::Compute;
  l.vt = VelaOpType::Add;
  l.builtin = BuiltinOperator::ADD;
  l.name = name;
  l.in = {ifm, zero};
  l.ifm2_s = {1, 1, 1, 1};
  l.noop_lut = true;
  l.act = NpuActivation::LUT;
  l.lut = kind;
  tensor(ofm).q = tensor(ifm).q;
}

/// LUT fusion (activations.md, "LUT fusion"): a LUT op hands its table to the only producer of its
/// IFM when that producer is an NPU compute op with a block type, no activation yet and no other
/// consumer; needs the SHRAM LUT banks (not on U55-32/64) and the Vela rewrites.
void Lowering::fuse_lut_activations() {
  if (!(opt.vela_rewrites && lut_banks)) return;
  for (std::size_t id = 0; id < ops.size(); ++id) {
    WorkOp& l = ops[id];
    if (l.dead || !l.noop_lut) continue;
    const int ifm = l.in[0];
    if (tensor(ifm).prod.size() != 1) continue;
    WorkOp& p = op(tensor(ifm).prod[0]);
    if (p.dead || !p.npu || p.kind != OpKind::Compute) continue;
    if (block_of(p.vt) == NpuBlockType::Default) continue;
    if (consumer_entries(ifm) != 1 || p.act != NpuActivation::None) continue;
    p.act = NpuActivation::LUT;
    p.lut = l.lut;
    for (int& o : p.out)
      if (o == ifm) o = l.out[0];
    l.dead = true;
    relink();
  }
}

}  // namespace npumap::tflite::lowering
