// --expect parsing and evaluation.
#include <gtest/gtest.h>

#include "fake_layers.hpp"
#include "gdsb/error.hpp"
#include "gdsb/p2p/expect.hpp"

namespace gdsb::p2p {
namespace {

CapabilityReport caps_of(const testing::FakeMachine& m, std::vector<PciePair> peers = {}) {
  testing::FakeCudaLayer cuda(m);
  testing::FakeNvmlLayer nvml(m);
  StaticPcieTopologySource pcie("fixture", std::move(peers));
  return collect_capabilities(cuda, nvml, pcie);
}

std::string usage_message(const std::string& expr) {
  try {
    parse_expectation(expr);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(P2pExpect, ParsesRatesInEitherBase) {
  EXPECT_EQ(parse_expectation("min-h2d=50GB/s").value, 50);
  EXPECT_EQ(parse_expectation("MIN-H2D=50GB/s").kind, ExpectKind::MinH2d);
  EXPECT_NEAR(parse_expectation("min-d2d=1GiB/s").value, 1.073741824, 1e-12);
  EXPECT_NEAR(parse_expectation("min-d2h=500MB/s").value, 0.5, 1e-12);
  EXPECT_NEAR(parse_expectation("min-d2d-bi=1024MiB/s").value, 1.073741824, 1e-12);
  EXPECT_EQ(parse_expectation("max-latency=3us").value, 3);
  EXPECT_EQ(parse_expectation("max-latency=2500ns").value, 2.5);
  EXPECT_EQ(parse_expectation("min-h2d-percent=80").value, 80);
  EXPECT_EQ(parse_expectation("min-d2d-bi-percent=75%").kind, ExpectKind::MinD2dBiPercent);
  EXPECT_FALSE(parse_expectation("all-gpu-p2p").needs_measurement());
  EXPECT_TRUE(parse_expectation("min-d2d=1GB/s").needs_measurement());
}

// Rates are read as gdsb::parse_rate reads them: B bytes, b bits (base 1000, 8 bits a byte).
TEST(P2pExpect, RatesInBitsAreBitsAndTheAmbiguousFormIsRefused) {
  EXPECT_DOUBLE_EQ(parse_expectation("min-h2d=400Gb/s").value, 50.0);  // 400e9 / 8 B/s
  EXPECT_DOUBLE_EQ(parse_expectation("min-d2d=400Gbit/s").value, 50.0);
  EXPECT_DOUBLE_EQ(parse_expectation("min-h2d=50GB/s").value, 50.0);
  EXPECT_DOUBLE_EQ(parse_expectation("min-d2h=50GiB/s").value, 53.6870912);  // 50 x 2^30 / 1e9
  for (const std::string bad : {"min-h2d=50gb/s", "min-d2d=500mb/s"}) {
    const std::string msg = usage_message(bad);
    EXPECT_NE(msg.find("--expect '" + bad + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("could be bytes or bits"), std::string::npos) << msg;
  }
  const std::string msg = usage_message("min-h2d=50gb/s");
  EXPECT_NE(msg.find("GB/s for bytes or Gb/s for bits"), std::string::npos) << msg;
}

TEST(P2pExpect, BadExpressionsNameThemselves) {
  for (const std::string bad : {"all-gpus", "min-h2d=fast", "min-h2d=50", "min-h2d=50GB",
                                "max-latency=5", "max-latency=5GB/s", "min-h2d-percent=80GB/s",
                                "min-foo=1GB/s", "min-h2d=-1GB/s", "min-h2d=50furlongs/s"}) {
    const std::string msg = usage_message(bad);
    EXPECT_NE(msg.find("--expect '" + bad + "'"), std::string::npos) << bad << ": " << msg;
  }
}

TEST(P2pExpect, AllGpuP2pFailsOnTheCnsBox) {
  const auto r = evaluate(parse_expectation("all-gpu-p2p"), caps_of(testing::pcie_cns_box()), nullptr);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("GPU0 -> GPU2"), std::string::npos);
  EXPECT_NE(r.detail.find("CNS"), std::string::npos);
  EXPECT_TRUE(evaluate(parse_expectation("all-gpu-p2p"), caps_of(testing::two_island_box()), nullptr).ok);
}

TEST(P2pExpect, AllGpuNvlinkNeedsEveryPair) {
  const auto r = evaluate(parse_expectation("all-gpu-nvlink"), caps_of(testing::two_island_box()), nullptr);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("GPU0 -> GPU4"), std::string::npos);
}

TEST(P2pExpect, SingleAndNoGpu) {
  EXPECT_TRUE(evaluate(parse_expectation("all-gpu-p2p"), caps_of(testing::single_gpu_box()), nullptr).ok);
  EXPECT_FALSE(evaluate(parse_expectation("all-gpu-p2p"), CapabilityReport{}, nullptr).ok);
}

TEST(P2pExpect, NvmeP2pdma) {
  const auto caps = caps_of(testing::pcie_cns_box(), testing::pcie_box_peers());
  const auto r = evaluate(parse_expectation("all-nvme-p2pdma"), caps, nullptr);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("0000:85:00.0 x 0000:19:00.0: NOT_SUPPORTED"), std::string::npos);
  EXPECT_FALSE(evaluate(parse_expectation("all-nvme-p2pdma"), caps_of(testing::single_gpu_box()), nullptr).ok);
}

TEST(P2pExpect, BandwidthAndLatencyAgainstMeasurements) {
  const auto m = testing::two_island_box();
  const auto caps = caps_of(m);
  testing::FakeCopyTimer timer(m);
  MeasureOptions o;
  o.bytes = 1 << 20;
  const Measurements meas = run_measurements(timer, caps, o);
  EXPECT_TRUE(evaluate(parse_expectation("min-h2d=49GB/s"), caps, &meas).ok);
  const auto h2d = evaluate(parse_expectation("min-h2d=51GB/s"), caps, &meas);
  EXPECT_FALSE(h2d.ok);
  EXPECT_EQ(h2d.detail, "GPU0 measured 50.00 GB/s");
  EXPECT_TRUE(evaluate(parse_expectation("min-d2d=24GB/s"), caps, &meas).ok);
  EXPECT_FALSE(evaluate(parse_expectation("min-d2d=26GB/s"), caps, &meas).ok);  // cross-island PCIe
  EXPECT_TRUE(evaluate(parse_expectation("max-latency=3us"), caps, &meas).ok);
  EXPECT_FALSE(evaluate(parse_expectation("max-latency=2us"), caps, &meas).ok);
  EXPECT_TRUE(evaluate(parse_expectation("min-h2d-percent=75"), caps, &meas).ok);   // 79%
  EXPECT_FALSE(evaluate(parse_expectation("min-h2d-percent=85"), caps, &meas).ok);
  EXPECT_FALSE(evaluate(parse_expectation("min-h2d=1GB/s"), caps, nullptr).ok);
}

}  // namespace
}  // namespace gdsb::p2p
