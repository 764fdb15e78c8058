// Every one of the 175 reference passes (test/data/npu_reference_passes.json, Vela's own outputs) as a
// test case: evaluate() must reproduce cycles, MACs, read multiples, both bandwidth arrays and the trace
// (doubles to 1e-9 relative, integers exactly). Each pass is also written back to JSON and re-read to
// check the round trip gives an equal Pass and identical metrics.

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

#include "model/evaluate.hpp"
#include "model/pass_json.hpp"

namespace npumap::model {
namespace {

using nlohmann::json;

const json& reference() {
  static const json data = [] {
    std::ifstream in("test/data/npu_reference_passes.json");
    return in ? json::parse(in) : json::array();
  }();
  return data;
}

::testing::AssertionResult close(double expected, double actual) {
  if (std::abs(expected - actual) <= 1e-9 * std::max(std::abs(expected), std::abs(actual)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << expected << " got " << actual;
}

arch::MemArea area_of(const json& j) {
  arch::MemArea a = arch::MemArea::Unknown;
  arch::parse_mem_area(j.get<std::string>(), a);
  return a;
}

int purpose_of(const json& j) {
  for (int p = 0; p < kNumPurposes; ++p)
    if (purpose_name(static_cast<TensorPurpose>(p)) == j.get<std::string>()) return p;
  ADD_FAILURE() << "unknown purpose " << j;
  return 0;
}

/// Compares a reference bandwidth list with a full array: every listed entry, and zeros elsewhere.
void expect_bandwidths(const json& list, const BandwidthArray& actual, const char* what) {
  BandwidthArray expected{};
  for (const auto& e : list) {
    const int d = e.at("direction").get<std::string>() == "Read" ? 0 : 1;
    expected[static_cast<int>(area_of(e.at("mem_area")))][purpose_of(e.at("purpose"))][d] += e.at("bytes").get<double>();
  }
  for (int a = 0; a < arch::kNumMemAreas; ++a)
    for (int p = 0; p < kNumPurposes; ++p)
      for (int d = 0; d < 2; ++d)
        EXPECT_TRUE(close(expected[a][p][d], actual[a][p][d])) << what << " area " << a << " purpose " << p << " dir " << d;
}

class ReferencePass : public ::testing::TestWithParam<int> {};

TEST_P(ReferencePass, MatchesVela) {
  const json& rec = reference().at(static_cast<std::size_t>(GetParam()));
  const PassInput in = read_pass_input(rec.at("input"), "npu_reference_passes.json",
                                       "records[" + std::to_string(GetParam()) + "].input");
  const PassMetrics m = evaluate(in.arch, in.pass);
  const json& ex = rec.at("expected");

  for (int c = 0; c < kNumPassCycles; ++c) {
    const auto name = std::string(pass_cycles_name(static_cast<PassCycles>(c)));
    EXPECT_TRUE(close(ex.at("cycles").at(name).get<double>(), m.cycles[c])) << name;
  }
  EXPECT_EQ(m.macs, ex.at("macs").get<std::int64_t>());
  EXPECT_EQ(m.ifm_read_multiple, ex.at("ifm_read_multiple").get<std::int64_t>());
  EXPECT_EQ(m.weight_read_multiple, ex.at("weight_read_multiple").get<std::int64_t>());
  expect_bandwidths(ex.at("bandwidths"), m.bandwidth, "bandwidths");
  expect_bandwidths(ex.at("scaled_bandwidths"), m.scaled_bandwidth, "scaled_bandwidths");
  for (const auto& [name, value] : ex.at("bandwidth_totals_by_area").items())
    EXPECT_TRUE(close(value.get<double>(), area_bytes(m, area_of(json(name))))) << name;

  const json& tr = ex.at("trace");
  ASSERT_EQ(tr.at("output_cycles_calls").size(), 1u);
  EXPECT_TRUE(close(tr.at("output_cycles_calls")[0].get<double>(), m.trace.output_cycles));
  EXPECT_EQ(m.trace.has_conv_pooling, tr.contains("conv_pooling_cycles"));
  if (tr.contains("conv_pooling_cycles")) {
    EXPECT_TRUE(close(tr.at("conv_pooling_cycles").get<double>(), m.trace.conv_pooling_cycles));
    const auto block = [](const json& j) { return arch::Block{j[0].get<int>(), j[1].get<int>(), j[2].get<int>()}; };
    EXPECT_EQ(block(tr.at("ofm_block")), m.trace.ofm_block);
    EXPECT_EQ(block(tr.at("ifm_block")), m.trace.ifm_block);
    EXPECT_EQ((tr.at("kernel_dims").get<std::array<int, 2>>()), m.trace.kernel_dims);
    EXPECT_EQ(tr.at("block_traversal").get<std::string>(), traversal_name(m.trace.block_traversal));
  }

  // Round trip: Pass -> JSON -> Pass is the identity, and so the metrics are identical.
  const auto written = write_pass_input(in.pass, in.arch, in.labels);
  const PassInput again = read_pass_input(json::parse(written.dump()), "roundtrip", "input");
  EXPECT_EQ(again.pass, in.pass);
  EXPECT_EQ(again.labels.layer_name, in.labels.layer_name);
  const PassMetrics m2 = evaluate(again.arch, again.pass);
  EXPECT_EQ(m2.cycles, m.cycles);
  EXPECT_EQ(m2.bandwidth, m.bandwidth);
  // The metrics writer lists exactly the non-zero entries, in the reference's order.
  const auto out = json::parse(write_metrics(m).dump());
  ASSERT_EQ(out.at("bandwidths").size(), ex.at("bandwidths").size());
  for (std::size_t i = 0; i < out.at("bandwidths").size(); ++i) {
    for (const char* k : {"mem_area", "purpose", "direction"})
      EXPECT_EQ(out["bandwidths"][i][k], ex["bandwidths"][i][k]) << "entry " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ReferencePass, ::testing::Range(0, 175), [](const ::testing::TestParamInfo<int>& info) {
  const auto i = static_cast<std::size_t>(info.param);
  std::string id = i < reference().size() ? reference()[i].at("id").get<std::string>() : "record_" + std::to_string(i);
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return id;
});

TEST(ReferenceData, HasAllRecords) { EXPECT_EQ(reference().size(), 175u); }

}  // namespace
}  // namespace npumap::model
