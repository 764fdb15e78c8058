// SOFTMAX: its constraints and its decomposition into Vela's chain of elementwise ops (31 ops for
// 8-bit, 14 for int16). Rules: docs/design/lowering/softmax.md (the tables list the ops below).

#include <string>
#include <vector>

#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Rejection Lowering::check_softmax(const WorkOp& o) {
  const int ifm = ifm_of(o), ofm = ofm_of(o);
  if (tensor(ifm).shape != tensor(ofm).shape)
    return reject("IFM and OFM shapes must match", "Op has ifm_shape=" + shape_text(ifm) + " and ofm_shape=" + shape_text(ofm));
  if (auto f = check_types_equal(o)) return f;
  const auto* so = std::get_if<SoftmaxOptions>(&o.opts);
  if (so && so->beta < 0) return reject("Beta value needs to be positive", "Op has beta=" + fmt_float(so->beta));
  return std::nullopt;
}

void Lowering::decompose_softmax(int id) {
  WorkOp& o = op(id);
  const int ifm = o.in[0], ofm = o.out[0];
  const TensorType it = tensor(ifm).type, ot = tensor(ofm).type;
  Shape4 s = o.ifm_s;
  if (s[0] > 1) s = {1, s[0] * s[1], s[2], s[3]};
  if (!((is_8bit(it) && it == ot) || (it == TensorType::INT16 && ot == TensorType::INT16))) {
    o.npu = false;  // the CPU takes it (its constraints already rule this out)
    return;
  }
  const std::string name = o.name;
  const int op_index = o.op_index;
  o.dead = true;
  const Shape4 rr{1, s[1], s[2], 1}, one{1, 1, 1, 1};
  const Dims sd{s[0], s[1], s[2], s[3]}, rd{1, s[1], s[2], 1};
  const NpuQuant q1{{1.0f}, {0}}, q2{{2.0f}, {0}};
  auto cst = [&](const std::string& n) { return add_tensor(name + "_" + n, {1, 1, 1, 1}, TensorType::INT32, q1, true); };
  auto add = [&](VelaOpType vt, const std::string& n, std::vector<int> in, int out, Shape4 a, Shape4 b, Shape4 c,
                 NpuActivation act = NpuActivation::Clip) {
    WorkOp x = make_compute_op(vt, name + "_" + n, std::move(in), {out});
    x.ifm_s = a;
    x.ifm2_s = b;
    x.ofm_s = c;
    x.act = act;
    x.op_index = op_index;
    return add_op(std::move(x));
  };
  const Shape4 mp_in{1, s[1] * s[2], s[3], 1}, mp_out{1, s[1] * s[2], 1, 1};
  const int t0 = add_tensor(name + "_maxpool0_tens0", {1, s[1] * s[2], 1, 1}, it, tensor(ifm).q);
  {
    WorkOp mp = make_compute_op(VelaOpType::MaxPool, name + "_maxpool0", {ifm}, {t0});
    mp.ifm_s = mp_in;
    mp.ofm_s = mp_out;
    mp.k = {s[3], 1, 1, 1, 1, 1};
    mp.has_padding_attr = true;
    mp.pad = NpuPadding::Valid;
    mp.op_index = op_index;
    add_op(std::move(mp));
  }
  auto fm = [&](const std::string& n, const Dims& d, TensorType ty = TensorType::INT32, NpuQuant q = {}) {
    return add_tensor(name + "_" + n + "_tens0", d, ty, std::move(q));
  };
  if (it == TensorType::INT16) {
    const int t1 = fm("sub1", sd);
    add(VelaOpType::Sub, "sub1", {ifm, t0}, t1, s, rr, s, NpuActivation::None);
    const int t2 = fm("mul2", sd);
    add(VelaOpType::Mul, "mul2", {t1, cst("mul2_const")}, t2, s, one, s, NpuActivation::None);
    const int t3 = fm("add3", sd, TensorType::INT16);
    const int a3 = add(VelaOpType::Add, "add3", {t2, cst("add3_const")}, t3, s, one, s, NpuActivation::LUT);
    op(a3).lut = LutKind::SoftmaxExp16;
    const int t4 = fm("reduce_sum4", rd);
    add(VelaOpType::ReduceSum, "reduce_sum4", {t3}, t4, s, one, rr, NpuActivation::None);
    const int t5 = fm("clz5", rd);
    add(VelaOpType::CLZ, "clz5", {t4}, t5, rr, one, rr, NpuActivation::None);
    const int t6 = fm("sub6", rd);
    add(VelaOpType::Sub, "sub6", {cst("sub6_const"), t5}, t6, one, rr, rr, NpuActivation::None);
    const int t7 = fm("shl7", rd);
    add(VelaOpType::SHL, "shl7", {cst("shl7_const"), t6}, t7, one, rr, rr, NpuActivation::None);
    const int t8 = fm("sub8", rd);
    add(VelaOpType::Sub, "sub8", {t4, t7}, t8, rr, rr, rr, NpuActivation::None);
    const int t9 = fm("shl9", rd);
    add(VelaOpType::SHL, "shl9", {t8, t5}, t9, rr, rr, rr, NpuActivation::None);
    const int t10 = fm("shr10", rd);
    add(VelaOpType::SHR, "shr10", {t9, cst("shr10_const")}, t10, rr, one, rr, NpuActivation::None);
    const int t11 = fm("sub11", rd, TensorType::INT16);
    const int a11 = add(VelaOpType::Sub, "sub11", {t10, cst("sub11_const")}, t11, rr, one, rr, NpuActivation::LUT);
    op(a11).lut = LutKind::SoftmaxReciprocal16;
    const int t12 = fm("mul12", sd);
    add(VelaOpType::Mul, "mul12", {t3, t11}, t12, s, rr, s, NpuActivation::None);
    add(VelaOpType::SHR, "shr13", {t12, t6}, ofm, s, rr, s, NpuActivation::None);
    return;
  }
  const int t1 = fm("sub1", sd, TensorType::INT32, NpuQuant{{1.0f}, {127}});
  const int a1 = add(VelaOpType::Sub, "sub1", {ifm, t0}, t1, s, rr, s, NpuActivation::LUT);
  op(a1).lut = LutKind::SoftmaxExp;
  const int t2 = fm("shr2", sd);
  add(VelaOpType::SHR, "shr2", {t1, cst("shr2_const")}, t2, s, one, s);
  const int t3 = fm("reduce_sum3", rd);
  add(VelaOpType::ReduceSum, "reduce_sum3", {t2}, t3, s, one, rr);
  const int t4 = fm("clz4", rd);
  add(VelaOpType::CLZ, "clz4", {t3}, t4, rr, one, rr);
  const int t5 = fm("sub5", rd);
  add(VelaOpType::Sub, "sub5", {cst("sub5_const"), t4}, t5, one, rr, rr);
  const int t6 = fm("sub6", rd);
  add(VelaOpType::Sub, "sub6", {t4, cst("sub6_const")}, t6, rr, one, rr);
  const int t7 = fm("shl7", rd);
  add(VelaOpType::SHL, "shl7", {t3, t6}, t7, rr, rr, rr);
  const int t8 = fm("sub8", rd);
  add(VelaOpType::Sub, "sub8", {t7, cst("sub8_const")}, t8, rr, one, rr);
  const int t9 = fm("shl9", rd);
  add(VelaOpType::SHL, "shl9", {t8, cst("shl9_const")}, t9, rr, one, rr);
  const int t10 = fm("add10", rd, TensorType::INT32, q1);
  add(VelaOpType::RescaleAdd, "add10", {cst("add10_const"), t9}, t10, one, rr, rr);
  const int t11 = fm("mul11", rd, TensorType::INT32, q2);
  add(VelaOpType::Mul, "mul11", {t10, cst("mul11_const")}, t11, rr, one, rr);
  const int t12 = fm("add12", rd, TensorType::INT32, q1);
  add(VelaOpType::Add, "add12", {t11, cst("add12_const")}, t12, rr, one, rr);
  int x = t12;
  const int d = t10;
  int idx = 13;
  for (int round = 0; round < 3; ++round) {
    auto nm = [&](const char* k) { return std::string(k) + std::to_string(idx++); };
    const std::string n1 = nm("mul");
    const int a = fm(n1, rd, TensorType::INT32, q2);
    add(VelaOpType::Mul, n1, {x, d}, a, rr, rr, rr);
    const std::string n2 = nm("sub");
    const int b = fm(n2, rd, TensorType::INT32, q1);
    add(VelaOpType::Sub, n2, {cst(n2 + "_const"), a}, b, one, rr, rr);
    const std::string n3 = nm("mul");
    const int c = fm(n3, rd, TensorType::INT32, q2);
    add(VelaOpType::Mul, n3, {x, b}, c, rr, rr, rr);
    const std::string n4 = nm("mul");
    const int c4 = fm(n4, rd);
    add(VelaOpType::Mul, n4, {c, cst(n4 + "_const")}, c4, rr, one, rr);
    const std::string n5 = nm("add");
    const int nx = fm(n5, rd, TensorType::INT32, q1);
    add(VelaOpType::Add, n5, {x, c4}, nx, rr, rr, rr);
    x = nx;
  }
  const int t28 = fm("mul28", rd, TensorType::INT32, q1);
  add(VelaOpType::Mul, "mul28", {x, cst("mul28_const")}, t28, rr, one, rr);
  const int t29 = fm("mul29", sd, TensorType::INT32, q2);
  add(VelaOpType::Mul, "mul29", {t1, t28}, t29, s, rr, s);
  const int last = add(VelaOpType::SHR, "shr30", {t29, t5}, ofm, s, rr, s, NpuActivation::None);
  op(last).ofm_s = s;
}

}  // namespace npumap::tflite::lowering
