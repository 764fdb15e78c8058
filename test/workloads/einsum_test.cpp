// Einsum text: parsing, the roles of ranks, and how the loader lowers it onto NPU operations.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/einsum.hpp"
#include "workloads/loader.hpp"

namespace npumap::workloads {
namespace {

using Names = std::vector<std::string>;

TEST(Einsum, ParsesWithAndWithoutBlanks) {
  std::string error;
  for (const char* text : {"Z[m,n] = A[m,k] * B[k,n]", "Z[m,n]=A[m,k]*B[k,n]", "  Z [ m , n ] = A[m, k]  *  B[k,n]  "}) {
    const auto e = parse_einsum(text, error);
    ASSERT_TRUE(e.has_value()) << text << ": " << error;
    EXPECT_EQ(e->out.tensor, "Z");
    EXPECT_EQ(e->out.ranks, (Names{"m", "n"}));
    EXPECT_EQ(e->a.tensor, "A");
    EXPECT_EQ(e->a.ranks, (Names{"m", "k"}));
    EXPECT_EQ(e->b.tensor, "B");
    EXPECT_EQ(e->b.ranks, (Names{"k", "n"}));
  }
}

TEST(Einsum, ReportsWhereParsingStopped) {
  std::string error;
  EXPECT_FALSE(parse_einsum("Z[m,n] = A[m,k] + B[k,n]", error));
  EXPECT_EQ(error, "expected `*` at character 17");
  EXPECT_FALSE(parse_einsum("Z[m,] = A[m] * B[m]", error));
  EXPECT_EQ(error, "expected a rank name at character 5");
  EXPECT_FALSE(parse_einsum("Z[m] = A[m] * B[m] extra", error));
  EXPECT_EQ(error, "unexpected text after the second operand at character 20");
  EXPECT_FALSE(parse_einsum("[m] = A[m] * B[m]", error));
  EXPECT_EQ(error, "expected a tensor name at character 1");
  EXPECT_FALSE(parse_einsum("Z[m = A[m] * B[m]", error));
  EXPECT_EQ(error, "expected `]` at character 5");
}

TEST(Einsum, ClassifiesRanks) {
  std::string error;
  const auto e = parse_einsum("S[h,m,n] = Q[m,h,d] * K[n,h,d]", error);
  ASSERT_TRUE(e);
  const auto roles = classify_einsum(*e, error);
  ASSERT_TRUE(roles) << error;
  EXPECT_EQ(roles->batch, (Names{"h"}));
  EXPECT_EQ(roles->m, (Names{"m"}));
  EXPECT_EQ(roles->n, (Names{"n"}));
  EXPECT_EQ(roles->k, (Names{"d"}));
}

TEST(Einsum, RejectsRanksThatAreNotAProduct) {
  std::string error;
  auto e = parse_einsum("Z[m,n] = A[m,k] * B[m,n]", error);
  ASSERT_TRUE(e);
  EXPECT_FALSE(classify_einsum(*e, error));
  EXPECT_EQ(error, "rank `k` appears only in `A`; a sum over one operand is not a matrix product");
  e = parse_einsum("Z[m,n,p] = A[m,k] * B[k,n]", error);
  EXPECT_FALSE(classify_einsum(*e, error));
  EXPECT_EQ(error, "rank `p` of the output `Z` appears in neither operand");
  e = parse_einsum("Z[m,n] = A[m,m] * B[m,n]", error);
  EXPECT_FALSE(classify_einsum(*e, error));
  EXPECT_EQ(error, "rank `m` appears twice in `A`");
}

TEST(Einsum, BertAttentionLowering) {
  const Workload w = load_workload("workloads/bert_base_layer.yaml");
  const Layer& q = w.layers[static_cast<std::size_t>(w.layer_index("q_proj"))];
  // q[m,h,d] = x[m,c] * w_q[c,h,d]: w_q is a constant, so fully_connected with M = 128,
  // K = 768 and N = 12*64 = 768; IFM (128,1,1,768), weights [768, 768].
  EXPECT_EQ(q.kind, OpKind::FullyConnected);
  EXPECT_EQ(q.weight_tensor, w.tensor_index("w_q"));
  EXPECT_EQ(q.inputs, (std::vector<int>{w.tensor_index("x")}));
  EXPECT_EQ(q.ifm_shape, (Shape{128, 1, 1, 768}));
  EXPECT_EQ(q.weight_shape, (std::vector<std::int64_t>{768, 768}));
  EXPECT_TRUE(q.has_bias);
  EXPECT_EQ(w.tensors[static_cast<std::size_t>(q.output)].dims, (std::vector<std::int64_t>{128, 12, 64}));

  const Layer& s = w.layers[static_cast<std::size_t>(w.layer_index("attn_scores"))];
  // s[h,m,n] = q[m,h,d] * k[n,h,d]: both operands are feature maps: matmul batched over h = 12,
  // M = 128, N = 128, K = 64; k's last rank is contracted, so it is read transposed.
  EXPECT_EQ(s.kind, OpKind::MatMul);
  ASSERT_TRUE(s.matmul);
  EXPECT_EQ(s.matmul->batch, 12);
  EXPECT_EQ(s.matmul->m, 128);
  EXPECT_EQ(s.matmul->n, 128);
  EXPECT_EQ(s.matmul->k, 64);
  EXPECT_TRUE(s.transpose_b);
  EXPECT_EQ(s.weight_tensor, -1);
  EXPECT_TRUE(s.weight_shape.empty());
  EXPECT_EQ(s.ifm_shape, (Shape{1, 12, 128, 64}));
  EXPECT_EQ(*s.ifm2_shape, (Shape{1, 12, 64, 128}));
  EXPECT_EQ(s.ofm_shape, (Shape{1, 12, 128, 128}));
  EXPECT_EQ(w.tensors[static_cast<std::size_t>(s.output)].dtype, DataType::Int16);
  EXPECT_EQ(s.macs, 12 * 128 * 128 * 64);

  const Layer& c = w.layers[static_cast<std::size_t>(w.layer_index("attn_context"))];
  // ctx[m,h,d] = p[h,m,n] * v[n,h,d]: v's last rank d is an output rank, so no transpose.
  EXPECT_EQ(c.kind, OpKind::MatMul);
  EXPECT_FALSE(c.transpose_b);
  EXPECT_EQ(c.macs, 12 * 128 * 64 * 128);

  const Layer& up = w.layers[static_cast<std::size_t>(w.layer_index("ffn_up"))];
  EXPECT_EQ(up.activation, Activation::Lut);
  EXPECT_TRUE(uses_lut(up));
  EXPECT_TRUE(uses_lut(w.layers[static_cast<std::size_t>(w.layer_index("attn_softmax"))]));
  // The attention residual reads the layer input x (a network input) and the projection.
  EXPECT_EQ(w.consumers(w.tensor_index("x")).size(), 4u);  // q, k, v projections and the residual add
}

TEST(Einsum, BatchedConstantOperandRunsAsMatmul) {
  // A constant B with a batch rank cannot be one weight matrix: the einsum runs as matmul.
  const Workload w = load_workload_from_string(R"(
name: batched
inputs: [{name: a, shape: [2, 3, 4], dtype: int8}]
constants: [{name: b, shape: [2, 4, 5], dtype: int8}]
layers:
  - {name: mm, einsum: "z[h,m,n] = a[h,m,k] * b[h,k,n]", ranks: {h: 2, m: 3, k: 4, n: 5}}
)",
                                               "batched.yaml");
  EXPECT_EQ(w.layers[0].kind, OpKind::MatMul);
  EXPECT_EQ(w.layers[0].inputs.size(), 2u);
  EXPECT_EQ(w.layers[0].macs, 2 * 3 * 5 * 4);
}

}  // namespace
}  // namespace npumap::workloads
