// The example documents in fixtures/: each renders, and the gate reaches the expected
// verdict on the prepared pairs (regression, noise, topology).
#include <gtest/gtest.h>

#include "gdsb/report/compare.hpp"
#include "gdsb/report/gate.hpp"
#include "gdsb/report/html.hpp"

namespace gdsb::report {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GDSB_REPORT_FIXTURES) + "/" + name;
}

class EachFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(EachFixture, LoadsAndRenders) {
  const auto doc = load_document(fixture(GetParam()));
  const auto html = render_html(doc.json);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<table"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Examples, EachFixture,
                         ::testing::Values("io_dgx.json", "io_dgx_regressed.json",
                                           "io_dgx_noisy.json", "topo_switch_acs.json",
                                           "topo_clean.json", "p2p_4gpu.json",
                                           "cluster_plain.json", "cluster_storage.json",
                                           "cluster_storage_regressed.json",
                                           "cluster_storage_mpirun.json"));

TEST(Fixtures, RegressedGdsRunFailsTheGate) {
  const auto r = run_gate(load_document(fixture("io_dgx.json")),
                          load_document(fixture("io_dgx_regressed.json")), default_thresholds());
  EXPECT_TRUE(r.failed());
  bool gpud_throughput_failed = false;
  for (const auto& c : r.cases) {
    if (c.name == "throughput" && c.group.rfind("GPUD READ", 0) == 0)
      gpud_throughput_failed = c.outcome == Outcome::Fail;
  }
  EXPECT_TRUE(gpud_throughput_failed);
}

TEST(Fixtures, NoisyRunPassesTheGate) {
  const auto r = run_gate(load_document(fixture("io_dgx.json")),
                          load_document(fixture("io_dgx_noisy.json")), default_thresholds());
  EXPECT_FALSE(r.failed()) << gate_text(r);
}

TEST(Fixtures, AcsRegressionFailsTheTopologyGate) {
  const auto r = run_gate(load_document(fixture("topo_clean.json")),
                          load_document(fixture("topo_switch_acs.json")), default_thresholds());
  EXPECT_TRUE(r.failed());
}

TEST(Fixtures, GdsAgainstCpuPathInTheExample) {
  CompareOptions opt;
  opt.baseline_xfer = XferType::CpuGpu;
  opt.current_xfer = XferType::GpuDirect;
  const auto doc = load_document(fixture("io_dgx.json"));
  const auto c = compare_documents(doc, doc, opt);
  ASSERT_EQ(c.matches.size(), 1u);
  EXPECT_EQ(c.matches[0].metrics[0].change, Change::Better);
}

}  // namespace
}  // namespace gdsb::report
