// The lowering's shared core: the work graph (tensors, ops, their adjacency), Vela's text formats,
// constant values and raw option fields read from the file, alias bypass, pruning and the
// topological order. See lowering.hpp.

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include "common/user_error.hpp"
#include "workloads/tflite/lowering/lowering.hpp"

namespace npumap::tflite::lowering {

Shape4 full4(const Dims& s) {
  Shape4 r{1, 1, 1, 1};
  const std::size_t n = std::min<std::size_t>(s.size(), 4);
  for (std::size_t i = 0; i < n; ++i) r[4 - n + i] = s[s.size() - n + i];
  // Ranks above 4 fold the extra leading dimensions into N (only CPU tensors; saturates).
  std::int64_t lead = r[0];
  for (std::size_t i = 0; i + 4 < s.size(); ++i)
    lead = std::min<std::int64_t>(lead * s[i], std::numeric_limits<std::int32_t>::max());
  r[0] = static_cast<std::int32_t>(lead);
  return r;
}

std::string py_list(const Dims& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

/// numpy's str() of a 1-D int array: elements right-aligned to the widest one ("[ 0 12]").
std::string np_array(const std::vector<std::int64_t>& v) {
  std::size_t w = 1;
  for (auto x : v) w = std::max(w, std::to_string(x).size());
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string e = std::to_string(v[i]);
    if (i) s += ' ';
    s += std::string(w - e.size(), ' ') + e;
  }
  return s + "]";
}

std::string fmt_float(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

WorkOp make_compute_op(VelaOpType vt, std::string name, std::vector<int> in, std::vector<int> out) {
  WorkOp o;
  o.kind = OpKind::Compute;
  o.vt = vt;
  o.name = std::move(name);
  o.in = std::move(in);
  o.out = std::move(out);
  return o;
}

Rejection reject(std::string c, std::string d) { return std::make_pair(std::move(c), std::move(d)); }

void Lowering::bad_input(const std::string& key, const std::string& msg, const std::string& hint) const {
  throw common::UserError(common::SourceLocation{model.name, 0, 0}, key, msg, hint);
}

void internal_error(const std::string& what) { throw std::logic_error("internal error: " + what); }

std::string Lowering::operator_key(int op_index, const std::string& field) {
  std::string key = "subgraphs[0].operators[" + std::to_string(op_index) + "]";
  return field.empty() ? key : key + "." + field;
}

void Lowering::relink() {
  for (WorkTensor& t : tensors) {
    t.prod.clear();
    t.cons.clear();
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].dead) continue;
    for (int t : ops[i].in)
      if (t >= 0) tensors[static_cast<std::size_t>(t)].cons.push_back(static_cast<int>(i));
    for (int t : ops[i].out)
      if (t >= 0) tensors[static_cast<std::size_t>(t)].prod.push_back(static_cast<int>(i));
  }
}

int Lowering::add_tensor(std::string name, Dims shape, TensorType type, NpuQuant q, bool is_const) {
  WorkTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.type = type;
  t.q = std::move(q);
  t.is_const = is_const;
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size() - 1);
}

int Lowering::clone_tensor(int src, const std::string& suffix) {
  WorkTensor t = tensor(src);
  t.name += suffix;
  t.model = -1;
  t.is_const = false;
  t.gin = t.gout = false;
  t.prod.clear();
  t.cons.clear();
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size() - 1);
}

int Lowering::add_op(WorkOp o) {
  o.npu = true;
  ops.push_back(std::move(o));
  return static_cast<int>(ops.size() - 1);
}

bool Lowering::cpu_produced(int t) {
  for (int p : tensor(t).prod)
    if (!op(p).npu) return true;
  return false;
}

bool Lowering::cpu_consumed(int t) {
  for (int c : tensor(t).cons)
    if (!op(c).npu) return true;
  return false;
}

int Lowering::consumer_entries(int t) { return static_cast<int>(tensor(t).cons.size()) + (tensor(t).gout ? 1 : 0); }

void Lowering::replace_input(int consumer, int from, int to) {
  for (int& x : op(consumer).in)
    if (x == from) x = to;
}

/// Constant integer values of tensor `id` (empty when not a constant read from the file).
std::vector<std::int64_t> Lowering::constant_ints(int id) {
  std::vector<std::int64_t> v;
  if (id < 0) return v;
  const WorkTensor& t = tensor(id);
  if (t.model < 0) return v;
  const auto data = model.tensor_data(sg.tensors[static_cast<std::size_t>(t.model)]);
  const int bits = tensor_type_bits(t.type);
  if (bits <= 0 || bits % 8 != 0) return v;
  const std::size_t es = static_cast<std::size_t>(bits / 8);
  if (const std::size_t n = data.size() / es; n > kMaxConstantInts) {
    // Refused before the 8-byte-per-value copy is made: an external buffer may hold 512 MiB.
    int op_index = -1;
    std::string field = "inputs";
    for (const int c : t.cons) {
      const WorkOp& o = ops[static_cast<std::size_t>(c)];
      if (o.op_index < 0 || (op_index >= 0 && o.op_index >= op_index)) continue;
      op_index = o.op_index;
      const auto at = std::find(o.in.begin(), o.in.end(), id);
      field = at == o.in.end() ? "inputs" : "inputs[" + std::to_string(at - o.in.begin()) + "]";
    }
    bad_input(op_index >= 0 ? operator_key(op_index, field) : "subgraphs[0].tensors[" + std::to_string(t.model) + "]",
              fmt::format("constant tensor '{}' has {} values, over the {} a constant read as integers (axes, "
                          "paddings, shapes, biases) may have",
                          t.name, n, kMaxConstantInts),
              "is the model corrupt? such constants have a few values");
  }
  for (std::size_t i = 0; i + es <= data.size(); i += es) {
    switch (t.type) {
      case TensorType::INT8: v.push_back(static_cast<std::int8_t>(data[i])); break;
      case TensorType::UINT8: v.push_back(data[i]); break;
      case TensorType::INT16: { std::int16_t x; std::memcpy(&x, &data[i], 2); v.push_back(x); break; }
      case TensorType::INT32: { std::int32_t x; std::memcpy(&x, &data[i], 4); v.push_back(x); break; }
      case TensorType::INT64: { std::int64_t x; std::memcpy(&x, &data[i], 8); v.push_back(x); break; }
      case TensorType::FLOAT32: { float x; std::memcpy(&x, &data[i], 4); v.push_back(static_cast<std::int64_t>(x)); break; }
      default: return {};
    }
  }
  return v;
}

bool Lowering::has_constant_data(int id) { return id >= 0 && tensor(id).is_const; }

/// An int field of operator `op_index`'s builtin options table, read from the file's bytes: the
/// reader does not parse PackOptions / UnpackOptions, whose axis (field 1) the lowering needs.
/// Every table on the way is checked with a flatbuffers::Verifier; nullopt when absent or bad.
std::optional<std::int32_t> Lowering::raw_option_int(int op_index, int field) const {
  if (!model.bytes || model.bytes->size() < 8 || op_index < 0) return std::nullopt;
  const auto* base = reinterpret_cast<const std::uint8_t*>(model.bytes->data());
  flatbuffers::Verifier v(base, model.bytes->size());
  auto slot = [](int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); };
  using Tables = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
  const auto* root = flatbuffers::GetRoot<flatbuffers::Table>(base);
  if (!root->VerifyTableStart(v) || !root->VerifyField<flatbuffers::uoffset_t>(v, slot(2), 4)) return std::nullopt;
  const auto* subgraphs = root->GetPointer<const Tables*>(slot(2));
  if (subgraphs == nullptr || !v.VerifyVector(subgraphs) || subgraphs->size() == 0) return std::nullopt;
  const auto* sub = subgraphs->Get(0);
  if (!sub->VerifyTableStart(v) || !sub->VerifyField<flatbuffers::uoffset_t>(v, slot(3), 4)) return std::nullopt;
  const auto* operators = sub->GetPointer<const Tables*>(slot(3));
  if (operators == nullptr || !v.VerifyVector(operators) || static_cast<std::size_t>(op_index) >= operators->size())
    return std::nullopt;
  const auto* op = operators->Get(static_cast<flatbuffers::uoffset_t>(op_index));
  if (!op->VerifyTableStart(v) || !op->VerifyField<flatbuffers::uoffset_t>(v, slot(4), 4)) return std::nullopt;
  const auto* options = op->GetPointer<const flatbuffers::Table*>(slot(4));
  if (options == nullptr || !options->VerifyTableStart(v) || !options->VerifyField<std::int32_t>(v, slot(field), 4))
    return std::nullopt;
  if (options->GetOptionalFieldOffset(slot(field)) == 0) return std::nullopt;
  return options->GetField<std::int32_t>(slot(field), 0);
}

/// Removes `o` (a one-in one-out alias op), rewiring as reshape.md ("Removal") describes.
void Lowering::bypass_alias_op(int id) {
  WorkOp& o = op(id);
  const int in = o.in.at(0), out = o.out.at(0);
  o.dead = true;
  relink();
  const bool out_boundary = tensor(out).gout || cpu_consumed(out);
  if (out_boundary && !tensor(in).prod.empty() && !tensor(in).gout && !tensor(in).gin) {
    for (int p : tensor(in).prod)
      for (int& x : op(p).out)
        if (x == in) x = out;
    const std::vector<int> consumers = tensor(in).cons;
    for (int c : consumers) replace_input(c, in, out);
  } else {
    const std::vector<int> consumers = tensor(out).cons;
    for (int c : consumers) replace_input(c, out, in);
    if (tensor(out).gout) tensor(in).gout = true;
  }
  relink();
}

/// Drops ops no longer reachable from the graph outputs (a MUL absorbed by the MUL + MAXIMUM
/// pattern, a PAD all of whose consumers took its padding).
void Lowering::prune_unreachable() {
  relink();
  std::vector<char> live_t(tensors.size(), 0), live_o(ops.size(), 0);
  std::vector<int> stack(sg.outputs.begin(), sg.outputs.end());
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].gout) stack.push_back(static_cast<int>(i));
  while (!stack.empty()) {
    const int t = stack.back();
    stack.pop_back();
    if (t < 0 || live_t[static_cast<std::size_t>(t)]) continue;
    live_t[static_cast<std::size_t>(t)] = 1;
    for (int p : tensor(t).prod) {
      if (live_o[static_cast<std::size_t>(p)]) continue;
      live_o[static_cast<std::size_t>(p)] = 1;
      for (int i : op(p).in) stack.push_back(i);
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (!live_o[i]) ops[i].dead = true;
  relink();
}

std::vector<int> Lowering::topological_order() {
  std::vector<int> indeg(ops.size(), 0), order;
  std::vector<std::vector<int>> succ(ops.size());
  for (std::size_t id = 0; id < ops.size(); ++id) {
    if (ops[id].dead) continue;
    std::set<int> preds;
    for (int i : ops[id].in)
      if (i >= 0)
        for (int p : tensor(i).prod)
          if (p != static_cast<int>(id)) preds.insert(p);
    for (int p : preds) {
      succ[static_cast<std::size_t>(p)].push_back(static_cast<int>(id));
      ++indeg[id];
    }
  }
  std::vector<int> ready;
  for (std::size_t id = 0; id < ops.size(); ++id)
    if (!ops[id].dead && indeg[id] == 0) ready.push_back(static_cast<int>(id));
  for (std::size_t k = 0; k < ready.size(); ++k) {
    const int id = ready[k];
    order.push_back(id);
    for (int s : succ[static_cast<std::size_t>(id)])
      if (--indeg[static_cast<std::size_t>(s)] == 0) ready.push_back(s);
  }
  std::size_t live = 0;
  for (const WorkOp& o : ops) live += o.dead ? 0 : 1;
  if (order.size() != live) internal_error("the lowered operator graph has a cycle");
  return order;
}

std::string Lowering::shape_text(int t) { return t >= 0 ? py_list(tensor(t).shape) : "[]"; }

std::string Lowering::type_text(int t) { return std::string(tensor_type_name(tensor(t).type)); }

}  // namespace npumap::tflite::lowering
