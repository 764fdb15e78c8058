// The lowering's two error classes (docs/design/lowering/README.md, "Errors"):
//  * bad or unsupported input is a common::UserError of one line that names the model file, the
//    operator and its field ("test.tflite: subgraphs[0].operators[N].<field>: ..."), never an
//    internal error;
//  * an inconsistency of the lowering itself is std::logic_error "internal error: ...", never a
//    UserError: the internal paths are driven directly on the lowering's state (lowering.hpp), and
//    lowering::run_step turns any other exception of a step into an internal error naming the step.

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/user_error.hpp"
#include "tflite_net.hpp"
#include "workloads/tflite/lowering/lowering.hpp"
#include "workloads/tflite/npu_lowering.hpp"

namespace npumap::tflite {
namespace {

/// Lowers `m` and returns the UserError's line; fails the test on success or on any other exception.
std::string user_error_of(const Model& m) {
  try {
    (void)lower_for_npu(m, {});
  } catch (const common::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "bad input must be a UserError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a UserError";
  return {};
}

void expect_names(const std::string& line, const std::string& key, const std::string& text) {
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.rfind("test.tflite: " + key + ": ", 0), 0u) << "want the file, operator and field first: " << line;
  EXPECT_NE(line.find(text), std::string::npos) << line;
  EXPECT_EQ(line.find("internal error"), std::string::npos) << "bad input is not an internal error: " << line;
}

TEST(LoweringErrors, BadInputNamesTheFileTheOperatorAndTheField) {
  {  // an operator code Vela 2.1 does not know
    Net n;
    const int x = n.fm("x", {1, 4});
    const int y = n.fm("y", {1, 4});
    n.op(RELU, {x}, {x});  // operator 0; the unknown one is operator 1
    n.sg.operators.back().outputs = {y};
    const int z = n.fm("z", {1, 4});
    n.op(GELU, {y}, {z});
    expect_names(user_error_of(n.build({x}, {z})), "subgraphs[0].operators[1].opcode_index", "operator code '150'");
  }
  {  // a model Vela compiled already
    Net n;
    const int x = n.fm("x", {1, 4});
    const int y = n.fm("y", {1, 4});
    n.spec.operator_codes.push_back(tb::OpCodeSpec{32, {}, "ethos-u", 1});
    n.sg.operators.push_back(tb::OperatorSpec{0, {x}, {y}, {}, {}, {1, 4, 1}, {}});
    expect_names(user_error_of(n.build({x}, {y})), "subgraphs[0].operators[0].custom_options", "already compiled");
  }
  {  // an NPU candidate without its required inputs
    Net n;
    const int x = n.fm("x", {1, 4});
    const int y = n.fm("y", {1, 4});
    n.op(ADD, {x}, {y}, add_opts());
    expect_names(user_error_of(n.build({x}, {y})), "subgraphs[0].operators[0].inputs", "needs 2 inputs");
  }
  {  // a concatenation with a fused activation on the NPU (Vela 2.1 fails on it)
    Net n;
    const int a = n.fm("a", {1, 4, 4, 8});
    const int b = n.fm("b", {1, 4, 4, 8});
    const int y = n.fm("y", {1, 4, 4, 16});
    n.op(CONCATENATION, {a, b}, {y}, {10, {tb::i32(0, 3), tb::i8(1, 1)}});
    expect_names(user_error_of(n.build({a, b}, {y})),
                 "subgraphs[0].operators[0].builtin_options.fused_activation_function", "fused activation");
  }
  {  // a resize that passes the height/width checks but changes the channels: no chain of doublings
    Net n;
    const int x = n.fm("x", {1, 4, 4, 8});
    const int y = n.fm("y", {1, 4, 4, 16});
    n.op(RESIZE_BILINEAR, {x, n.i32("size", {2}, {4, 4})}, {y}, {15, {tb::boolean(2, false), tb::boolean(3, false)}});
    expect_names(user_error_of(n.build({x}, {y})), "subgraphs[0].operators[0].outputs[0]",
                 "resizes [1, 4, 4, 8] to [1, 4, 4, 16]: only the height and width may change");
  }
}

/// A small model (x -> RELU -> y -> ADD(y, y) -> z) read and checked, ready for the later steps.
struct Checked {
  Model model;
  lowering::Lowering l;
  explicit Checked(Model m)
      : model(std::move(m)), l{model, model.subgraphs[0], NpuLoweringOptions{}, {}, {}, {}, {}, true} {
    l.read_model();
    l.check_supported_operators();
  }
};

Model small_model() {
  Net n;
  const int x = n.fm("x", {1, 4, 4, 8});
  const int y = n.fm("y", {1, 4, 4, 8});
  const int z = n.fm("z", {1, 4, 4, 8});
  n.op(RELU, {x}, {y});
  n.op(ADD, {y, y}, {z}, add_opts());
  return n.build({x}, {z});
}

void expect_internal(const std::function<void()>& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "expected an internal error";
  } catch (const common::UserError& e) {
    ADD_FAILURE() << "an inconsistency of the lowering must not be reported as bad input: " << e.what();
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("internal error: ", 0), 0u) << what;
    EXPECT_NE(what.find(text), std::string::npos) << what;
    EXPECT_EQ(what.find("internal error: ", 1), std::string::npos) << "one prefix: " << what;
  }
}

TEST(LoweringErrors, AConstantTooLargeToReadAsIntegersIsRefusedNamingItsOperator) {
  // A MEAN whose axes are an int8 constant of 4096 x 4097 = 16,781,312 values in an external buffer
  // (inline vectors stop at 2^24 bytes in the reader): over kMaxConstantInts = 2^24 = 16,777,216, so
  // it is refused before constant_ints expands it to 128 MiB of 64-bit values.
  Net n;
  const int x = n.fm("x", {1, 7, 7, 16});
  const int ax = n.cst_bytes("axes", {4096, 4097}, kI8, {});
  const int y = n.fm("y", {1, 1, 1, 16});
  n.op(MEAN, {x, ax}, {y}, {27, {tb::boolean(0, true)}});
  n.sg.inputs = {x};
  n.sg.outputs = {y};
  tb::ModelSpec m = n.spec;
  m.subgraphs = {n.sg};
  const std::string bytes =
      tb::build_with_external_buffer(m, n.spec.buffers.size() - 1, std::vector<std::uint8_t>(std::size_t{4096} * 4097, 1));
  const std::string line = user_error_of(read_model_bytes(bytes, "test.tflite"));
  expect_names(line, "subgraphs[0].operators[0].inputs[1]", "constant tensor 'axes' has 16781312 values, over the 16777216");
}

TEST(LoweringErrors, AnOpLeftUnloweredOnTheNpuIsAnInternalError) {
  Checked c(small_model());
  ASSERT_EQ(c.l.ops.size(), 2u);
  ASSERT_TRUE(c.l.ops[1].npu);
  EXPECT_NO_THROW((void)Checked(small_model()).l.pack_passes());  // the consistent state packs
  c.l.ops[1].kind = lowering::OpKind::Pad;  // as if a step had forgotten to lower it
  expect_internal([&] { (void)c.l.pack_passes(); }, "was left unlowered on the NPU");
}

TEST(LoweringErrors, ACycleInTheLoweredGraphIsAnInternalError) {
  Checked c(small_model());
  c.l.ops[0].in = {c.l.ops[1].out[0]};  // RELU now reads the ADD's output: a cycle the input did not have
  c.l.relink();
  expect_internal([&] { (void)c.l.topological_order(); }, "has a cycle");
}

TEST(LoweringErrors, AStepThatThrowsAnythingButAUserErrorIsAnInternalErrorNamingTheStep) {
  const common::UserError bad({"m.tflite", 0, 0}, "subgraphs[0].operators[2].inputs", "needs 2 inputs");
  try {
    lowering::run_step("m.tflite", "the operator rewrites", [&] { throw bad; });
    ADD_FAILURE() << "expected the UserError";
  } catch (const common::UserError& e) {
    EXPECT_STREQ(e.what(), bad.what());  // bad input passes through unchanged
  }
  expect_internal([] { lowering::run_step("m.tflite", "the operator rewrites", [] { std::vector<int>{}.at(3); }); },
                  "lowering m.tflite for the NPU, the operator rewrites: ");
  expect_internal([] { lowering::run_step("m.tflite", "packing the passes", [] { lowering::internal_error("x"); }); },
                  "lowering m.tflite for the NPU, packing the passes: x");
  EXPECT_EQ(lowering::run_step("m.tflite", "a step", [] { return 7; }), 7);
}

}  // namespace
}  // namespace npumap::tflite
