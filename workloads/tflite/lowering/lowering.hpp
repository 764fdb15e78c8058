#pragma once
// The shared core of the TFLite lowering (workloads/tflite/npu_lowering.hpp is the public interface):
// the mutable graph the steps rewrite (WorkTensor, WorkOp), the lowering state (Lowering) and the
// helpers every operator family uses. Each step and each operator family's checks and rewrites live in
// their own file of this folder; docs/design/lowering/README.md lists the steps, their order and the
// page that states each rule.
//
// The graph: tensors and ops in two vectors, referred to by index; an op is never erased, only marked
// dead, and relink() rebuilds every tensor's producer and consumer lists from the ops' inputs and
// outputs after a step changes them. Ops created by a rewrite are appended, so a loop over the ops
// that remembers the count first does not visit them.
//
// Errors: bad or unsupported input is a common::UserError naming the model file, the operator and the
// field (bad_input); an inconsistency of the lowering itself is an internal error (NPUMAP_ASSERT or
// internal_error: std::logic_error "internal error: ...", exit status 3 in `mapper`).

#include <array>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/user_error.hpp"
#include "workloads/tflite/model.hpp"
#include "workloads/tflite/npu_lowering.hpp"

namespace npumap::tflite::lowering {

using Dims = std::vector<std::int32_t>;

/// What an op of the work graph is, structurally. Compute ops carry their NPU op type in WorkOp::vt;
/// the other kinds are TFLite operators still waiting for the step that lowers them.
enum class OpKind : std::uint8_t {
  Compute, Concat, Pack, Split, SplitV, Slice, StridedSlice, Unpack, Reshape, Squeeze, ExpandDims, Pad,
  Softmax, Mean, HardSwish, Identity, SplitSliceRead, Cpu
};

/// A tensor of the work graph.
struct WorkTensor {
  std::string name;
  Dims shape;
  TensorType type = TensorType::INT8;
  NpuQuant q;
  bool per_axis = false;  // scale, zero point, min or max is an array (supported-operators.md, G11)
  bool has_quant_table = false;
  int model = -1;         // index into the model's subgraph-0 tensors; -1 = created by the lowering
  bool is_const = false;
  bool gin = false, gout = false;  // graph input, graph output
  std::vector<int> prod, cons;     // producer and consumer ops (rebuilt by relink())
};

/// An op of the work graph: a TFLite operator, or an NPU op a rewrite created.
struct WorkOp {
  OpKind kind = OpKind::Compute;
  VelaOpType vt = VelaOpType::AvgPool;  // the NPU op type of a Compute op
  BuiltinOperator builtin = BuiltinOperator::ADD;
  int op_index = -1;  // the TFLite operator it comes from; -1 when unknown
  std::string name;
  std::vector<int> in, out;  // tensor ids; -1 = an absent optional input
  bool npu = false, dead = false;
  Shape4 ifm_s{1, 1, 1, 1}, ifm2_s{1, 1, 1, 1}, ofm_s{1, 1, 1, 1};  // op shapes
  Shape4 ifm_off{0, 0, 0, 0}, ifm2_off{0, 0, 0, 0}, ofm_off{0, 0, 0, 0};  // read and write offsets
  std::vector<Shape4> in_shapes, out_shapes;  // split / concat types
  std::vector<Shape4> out_offsets;            // SplitSliceRead offsets per output
  NpuKernel k;
  bool has_padding_attr = false;
  NpuPadding pad = NpuPadding::None;
  std::array<std::int32_t, 4> epad{0, 0, 0, 0};  // explicit padding (top, left, bottom, right)
  NpuActivation act = NpuActivation::None;
  LutKind lut = LutKind::None;
  bool noop_lut = false;   // a LUT op: an Add of zero whose activation is the table
  bool rewritten = false;  // RESIZE_BILINEAR / LEAKY_RELU already lowered (their results keep the type)
  std::vector<std::string> reason;  // Vela's CPU reason lines when placed on the CPU
  int weights = -1, bias = -1;  // tensor ids
  Dims wshape;                  // weights as the NPU uses them, OHWI
  std::int32_t bias_len = 0;
  BuiltinOptions opts;
};

/// The ops of one pass, in execution order: the primary op first (or the slot of a created AvgPool).
struct PassGroup {
  std::vector<int> ops;
  bool npu = true;
  bool created_avgpool = false;
  int primary = -1;
};

/// An inconsistency of the lowering itself (not of the input): std::logic_error "internal error: ...".
[[noreturn]] void internal_error(const std::string& what);

/// Runs one step of the lowering of `model_name` (`step` names it): a UserError passes through
/// unchanged; any other exception (an index out of range, a missing option: a check the lowering
/// lacks, or internal_error) becomes std::logic_error "internal error: lowering <model> for the NPU,
/// <step>: <what>". std::bad_alloc passes through.
template <typename F>
auto run_step(const std::string& model_name, const char* step, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const common::UserError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("internal error: ", 0) == 0) what = what.substr(16);
    throw std::logic_error("internal error: lowering " + model_name + " for the NPU, " + step + ": " + what);
  }
}

/// Why an operator cannot run on the NPU: Vela's constraint line and its detail line; nullopt = it can.
using Rejection = std::optional<std::pair<std::string, std::string>>;
Rejection reject(std::string constraint, std::string detail);

// ---- shapes and Vela's text formats (graph.cpp) ----
/// The shape padded with leading 1s to rank 4; ranks above 4 fold their leading dimensions into N.
Shape4 full4(const Dims& s);
/// Python's str() of a list ("[1, 2, 3]").
std::string py_list(const Dims& d);
/// numpy's str() of a 1-D int array ("[ 0 12]").
std::string np_array(const std::vector<std::int64_t>& v);
/// A float as Python prints it in Vela's messages (shortest form).
std::string fmt_float(double v);
/// A WorkOp of kind Compute with the given NPU op type, name, inputs and outputs.
WorkOp make_compute_op(VelaOpType vt, std::string name, std::vector<int> in, std::vector<int> out);

// ---- op type classes (op_types.cpp) ----
bool is_binary_elementwise(BuiltinOperator op);
bool is_mac_main(VelaOpType t);
bool is_elementwise_main(VelaOpType t);
bool is_post(VelaOpType t);
bool is_fuse_limited(VelaOpType t);
bool is_binary_vt(VelaOpType t);
NpuBlockType block_of(VelaOpType t);
NpuActivation act_of(Activation a);
bool is_8bit(TensorType t);

// ---- CPU fallback (cpu_fallback.cpp) ----
/// Vela's internal type name of a TFLite builtin ("ResizeNearestNeighbor").
std::string vela_type_of(BuiltinOperator op);
/// Builtins Vela may place on the NPU; every other one is CPU-only.
bool npu_candidate(BuiltinOperator op);
/// Inputs an NPU-candidate operator must have (the leading ones may not be absent).
std::size_t required_inputs(BuiltinOperator b);
/// Vela's notice for an operator in a CPU pass; empty for the types it keeps quiet about.
std::string cpu_pass_warning(const std::string& vela_type);

// ---- explicit padding (pad.cpp), layout (layout.cpp), report order (emit.cpp) ----
void resolve_explicit_padding(WorkOp& o);
void mark_layout_eligibility(NpuGraph& g);
std::vector<int> make_report_order(const NpuGraph& g);

/// The lowered graph's tensor table while it is built: work-graph tensor ids map to lowered ids, each
/// tensor added on its first use (emit.cpp).
struct LoweredTensorIds {
  NpuGraph& graph;
  const std::vector<WorkTensor>& tensors;
  std::unordered_map<int, int> ids;
  /// The lowered id of work tensor `t` (-1 for -1).
  int operator()(int t);
};

/// The most values Lowering::constant_ints expands (2^24, 128 MiB as 64-bit values; the reader's
/// limit on one inline vector): axes, paddings, shapes and biases have a few, and the weights are
/// read in place, so only a corrupt model (an external buffer) passes it.
inline constexpr std::size_t kMaxConstantInts = std::size_t{1} << 24;

/// The lowering of one model: its work graph and everything the steps share. The pipeline
/// (lower_for_npu.cpp) calls the steps in order; each member is defined in the file named beside it.
struct Lowering {
  const Model& model;
  const Subgraph& sg;
  NpuLoweringOptions opt;
  std::vector<WorkTensor> tensors;
  std::vector<WorkOp> ops;
  std::vector<FallbackReason> reasons;
  std::vector<std::string> warnings;
  bool lut_banks = true;

  // ---- errors and the work graph (graph.cpp) ----
  /// Bad or unsupported input: a UserError naming the model file, `key` (the operator and field).
  [[noreturn]] void bad_input(const std::string& key, const std::string& msg, const std::string& hint = {}) const;
  /// The key of operator `op_index`'s field ("subgraphs[0].operators[3].inputs"); the operator alone
  /// when `field` is empty.
  static std::string operator_key(int op_index, const std::string& field = {});
  void relink();
  WorkTensor& tensor(int id) { return tensors.at(static_cast<std::size_t>(id)); }
  WorkOp& op(int id) { return ops.at(static_cast<std::size_t>(id)); }
  int add_tensor(std::string name, Dims shape, TensorType type, NpuQuant q = {}, bool is_const = false);
  int clone_tensor(int src, const std::string& suffix);
  int add_op(WorkOp o);
  bool cpu_produced(int t);
  bool cpu_consumed(int t);
  int consumer_entries(int t);
  void replace_input(int consumer, int from, int to);
  /// Constant integer values of tensor `id` (empty when not a constant read from the file). A
  /// constant of more than kMaxConstantInts values is bad input (bad_input naming the operator that
  /// reads it and the input), refused before it is expanded.
  std::vector<std::int64_t> constant_ints(int id);
  bool has_constant_data(int id);
  std::optional<std::int32_t> raw_option_int(int op_index, int field) const;
  /// Removes a one-in one-out alias op (a reshape, an identity), rewiring its neighbours.
  void bypass_alias_op(int id);
  /// Drops ops no longer reachable from the graph outputs.
  void prune_unreachable();
  std::vector<int> topological_order();
  std::string shape_text(int t);
  std::string type_text(int t);

  // ---- reading the model (read_model.cpp) ----
  void read_model();
  void classify_operator(WorkOp& o);
  Activation fused_activation(const WorkOp& o) const;
  int ifm_of(const WorkOp& o) const;
  int ifm2_of(const WorkOp& o) const;
  int weights_of(const WorkOp& o) const;
  int bias_of(const WorkOp& o) const;
  int ofm_of(const WorkOp& o) const { return o.out.empty() ? -1 : o.out[0]; }

  // ---- supported-operator checks and op shapes (supported_operators.cpp) ----
  void check_supported_operators();
  void check_operator(int id);
  Rejection check_generic_constraints(const WorkOp& o);
  Rejection check_operator_constraints(const WorkOp& o);
  Rejection check_types_equal(const WorkOp& o);
  void set_op_shapes(WorkOp& o);

  // ---- convolutions (convolution.cpp) ----
  Rejection check_convolution(const WorkOp& o, bool depthwise);
  Rejection check_bias(const WorkOp& o);
  Rejection check_depthwise_convolution(const WorkOp& o);
  Rejection check_transpose_convolution(const WorkOp& o);
  void lower_depth_multiplier(int id);
  void convert_1x1_conv_to_fully_connected(int id);
  void lower_transpose_conv(int id);

  // ---- fully connected (fully_connected.cpp) ----
  Rejection check_fully_connected(const WorkOp& o);
  void flatten_fully_connected_input(int id);

  // ---- pooling and MEAN (pooling.cpp) ----
  Rejection check_pooling(const WorkOp& o);
  Rejection check_mean(const WorkOp& o);
  Shape4 mean_ifm_shape(const WorkOp& o);
  void lower_mean(int id);

  // ---- elementwise (elementwise.cpp) ----
  Rejection check_elementwise_shapes(const WorkOp& o);
  Rejection check_add_sub_mul(const WorkOp& o);
  Rejection check_maximum_minimum(const WorkOp& o);
  void fuse_mul_maximum(int id);

  // ---- activations and LUT ops (activations.cpp) ----
  Rejection check_leaky_relu(const WorkOp& o);
  Rejection check_hard_swish(const WorkOp& o);
  void lower_requantising_relu(int id);
  void lower_leaky_relu(int id);
  void lower_sigmoid_tanh(int id);
  void make_lut_op(int id, LutKind kind, const std::string& suffix);
  void fuse_lut_activations();

  // ---- SOFTMAX (softmax.cpp) ----
  Rejection check_softmax(const WorkOp& o);
  void decompose_softmax(int id);

  // ---- concatenation, split, pack, unpack, slice (concat_split.cpp) ----
  Rejection check_concatenation(const WorkOp& o);
  Rejection check_split_v(const WorkOp& o);
  Rejection check_strided_slice(const WorkOp& o);
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> strided_slice_bounds(const WorkOp& o);
  void lower_concatenations();
  void lower_splits_and_slices();
  void absorb_split_slice_reads();

  // ---- reshape and aliases (reshape.cpp) ----
  bool is_boundary_input(int t);
  bool is_boundary_output(int t);
  void copy_reshapes_between_boundaries();
  void remove_reshapes();
  void bypass_identities();

  // ---- PAD and explicit padding (pad.cpp) ----
  Rejection check_pad(const WorkOp& o);
  void fuse_pad_into_consumer(int id);
  void lower_remaining_pads();
  void lower_pad_as_copies(int id);

  // ---- RESIZE_BILINEAR (resize.cpp) ----
  Rejection check_resize_bilinear(const WorkOp& o);
  void lower_resize_bilinear(int id);

  // ---- the per-operator rewrites and the graph-level ones (graph_rewrites.cpp) ----
  void apply_operator_rewrites();
  void rewrite_first_layer_stride2(int id);
  void finish_npu_ops();

  // ---- pass packing (pass_packing.cpp) and the lowered graph (emit.cpp) ----
  NpuGraph pack_passes();
  std::vector<PassGroup> form_pass_groups(std::vector<int>& group_of);
  std::vector<int> order_pass_groups(const std::vector<PassGroup>& groups, const std::vector<int>& group_of);
  std::vector<int> group_inputs(const PassGroup& g);
  NpuGraph emit_graph(const std::vector<PassGroup>& groups, const std::vector<int>& order);
  CpuOp emit_cpu_op(const WorkOp& o, LoweredTensorIds& lt);
  NpuPass emit_npu_pass(const PassGroup& gr, int subgraph, LoweredTensorIds& lt);
};

}  // namespace npumap::tflite::lowering
