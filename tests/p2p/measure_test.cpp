// run_measurements against a fake copy timer: medians, theoretical figures, waivers.
#include <gtest/gtest.h>

#include "fake_layers.hpp"
#include "gdsb/p2p/measure.hpp"

namespace gdsb::p2p {
namespace {

CapabilityReport caps_of(const testing::FakeMachine& m) { return testing::capabilities_of(m); }

MeasureOptions small() {
  MeasureOptions o;
  o.bytes = 1 << 20;
  o.loops = 2;
  o.repetitions = 5;
  return o;
}

TEST(P2pMeasure, TheoreticalFigures) {
  EXPECT_NEAR(*pcie_gb_s({5, 16}), 63.008, 1e-9);
  EXPECT_NEAR(*pcie_gb_s({4, 16}), 31.504, 1e-9);
  EXPECT_NEAR(*pcie_gb_s({3, 8}), 7.88, 1e-9);
  EXPECT_FALSE(pcie_gb_s({0, 16}));
  EXPECT_FALSE(pcie_gb_s({7, 16}));
  EXPECT_EQ(*nvlink_gb_s(18, 9), 450.0);
  EXPECT_EQ(*nvlink_gb_s(18, 10), 900.0);
  EXPECT_FALSE(nvlink_gb_s(4, 12));
}

TEST(P2pMeasure, MedianOfOddAndEven) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({}), 0);
}

TEST(P2pMeasure, HostFiguresAreMediansNextToLinkAndReference) {
  const auto m = testing::two_island_box();
  const CapabilityReport caps = caps_of(m);
  testing::FakeCopyTimer timer(m);
  const Measurements r = run_measurements(timer, caps, small());
  ASSERT_EQ(r.h2d.items.size(), 8u);
  const HostFigure& f = r.h2d.items[0];
  EXPECT_NEAR(f.gb_s, 50.0, 1e-6);  // median of the +-10% spread
  EXPECT_EQ(f.samples_gb_s.size(), 5u);
  EXPECT_NEAR(*f.theoretical_gb_s, 63.008, 1e-9);
  EXPECT_NEAR(*f.percent, 100.0 * 50 / 63.008, 1e-6);
  EXPECT_NEAR(*f.reference_gb_s, 50.5, 1e-6);
  EXPECT_NEAR(*f.reference_ratio, 50.0 / 50.5, 1e-9);
  EXPECT_FALSE(r.d2h.waived);
}

TEST(P2pMeasure, PeerMatricesUseNvlinkOrPcieTheory) {
  const auto m = testing::two_island_box();
  testing::FakeCopyTimer timer(m);
  const Measurements r = run_measurements(timer, caps_of(m), small());
  EXPECT_FALSE(r.d2d_uni.cells[0][0]);
  EXPECT_NEAR(*r.d2d_uni.cells[0][1], 120, 1e-6);
  EXPECT_NEAR(*r.d2d_uni.theoretical[0][1], 150, 1e-9);  // 6 links x 25 GB/s
  EXPECT_NEAR(*r.d2d_uni.percent[0][1], 80, 1e-6);
  EXPECT_NEAR(*r.d2d_bi.cells[0][1], 120, 1e-6);  // the fake moves both ways at one rate
  EXPECT_NEAR(*r.d2d_bi.theoretical[0][1], 300, 1e-9);
  EXPECT_NEAR(*r.d2d_uni.cells[0][4], 25, 1e-6);
  EXPECT_NEAR(*r.d2d_uni.theoretical[0][4], 63.008, 1e-9);
  EXPECT_NEAR(*r.d2d_uni_no_p2p.cells[0][1], 10, 1e-6);
  EXPECT_NEAR(*r.d2d_uni_no_p2p.theoretical[0][1], 63.008, 1e-9);  // staged: PCIe bound
  EXPECT_NEAR(*r.latency_us.cells[2][3], 2.5, 1e-9);
  EXPECT_TRUE(r.latency_us.theoretical.empty());
  EXPECT_TRUE(r.d2d_uni_sm.waived);
  EXPECT_TRUE(r.notes.empty());
}

TEST(P2pMeasure, PairsWithoutPeerAccessGetNoPeerFigureAndANote) {
  const auto m = testing::pcie_cns_box();
  testing::FakeCopyTimer timer(m);
  MeasureOptions o = small();
  o.sm_copy = true;
  const Measurements r = run_measurements(timer, caps_of(m), o);
  EXPECT_TRUE(r.d2d_uni.cells[0][1].has_value());
  EXPECT_FALSE(r.d2d_uni.cells[0][2].has_value());
  EXPECT_TRUE(r.d2d_uni_no_p2p.cells[0][2].has_value());  // staged still runs
  EXPECT_TRUE(r.latency_us.cells[0][2].has_value());
  EXPECT_FALSE(r.d2d_uni_sm.cells[0][2].has_value());
  EXPECT_FALSE(r.h2d_sm.waived);
  const auto has = [&](const std::string& text) {
    for (const auto& n : r.notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("GPU0 -> GPU2: no peer access"));
  EXPECT_TRUE(has("GPU0 -> GPU2: latency measured with peer access off"));
  EXPECT_FALSE(has("GPU0 -> GPU1"));
}

TEST(P2pMeasure, SingleGpuWaivesPeerCases) {
  const auto m = testing::single_gpu_box();
  testing::FakeCopyTimer timer(m);
  const Measurements r = run_measurements(timer, caps_of(m), small());
  EXPECT_EQ(r.h2d.items.size(), 1u);
  ASSERT_TRUE(r.d2d_uni.waived);
  EXPECT_EQ(*r.d2d_uni.waived, "needs at least 2 GPUs");
  EXPECT_TRUE(r.latency_us.waived);
}

TEST(P2pMeasure, UnavailableTimerWaivesEverything) {
  const auto m = testing::single_gpu_box();
  auto timer = make_unavailable_copy_timer("built without CUDA");
  const Measurements r = run_measurements(*timer, caps_of(m), small());
  ASSERT_TRUE(r.h2d.waived);
  EXPECT_EQ(*r.h2d.waived, "built without CUDA");
  EXPECT_EQ(*r.d2d_bi.waived, "built without CUDA");
}

}  // namespace
}  // namespace gdsb::p2p

namespace gdsb::p2p {
namespace {

TEST(P2pMeasure, StopsAfterTheCurrentCaseWhenSignalled) {
  const auto m = testing::two_island_box();
  const CapabilityReport caps = caps_of(m);
  ASSERT_GE(caps.gpus.size(), 4u);
  testing::FakeCopyTimer timer(m);
  std::atomic<bool> stop{false};
  timer.signal_flag = &stop;
  timer.signal_at = 3;  // the signal arrives while H2D on GPU2 runs
  MeasureOptions o = small();
  o.stop = &stop;
  const Measurements r = run_measurements(timer, caps, o);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(timer.cases, 3);  // the case in progress finished, nothing after it started
  ASSERT_EQ(r.h2d.items.size(), 3u);
  EXPECT_GT(r.h2d.items[2].gb_s, 0);
  EXPECT_FALSE(r.h2d.waived);
  EXPECT_EQ(r.d2h.waived, std::string(kInterruptedReason));
  EXPECT_EQ(r.d2d_uni.waived, std::string(kInterruptedReason));
  EXPECT_EQ(r.latency_us.waived, std::string(kInterruptedReason));
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("H2D from GPU3 on: interrupted"), std::string::npos)
      << r.notes.back();
}

TEST(P2pMeasure, AnUnsetStopFlagChangesNothing) {
  const auto m = testing::two_island_box();
  testing::FakeCopyTimer timer(m);
  std::atomic<bool> stop{false};
  MeasureOptions o = small();
  o.stop = &stop;
  const Measurements r = run_measurements(timer, caps_of(m), o);
  EXPECT_FALSE(r.interrupted);
  EXPECT_FALSE(r.d2h.waived);
  EXPECT_FALSE(r.latency_us.waived);
}

}  // namespace
}  // namespace gdsb::p2p
