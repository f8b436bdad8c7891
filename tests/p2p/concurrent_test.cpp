// --concurrent against the fake copy timer: aggregate and per-GPU figures, the ratio to the
// one-GPU figures, the groups below a shared switch or socket, and the waivers.
#include <gtest/gtest.h>

#include <sstream>

#include "fake_layers.hpp"
#include "gdsb/p2p/measure.hpp"
#include "gdsb/p2p/report.hpp"

namespace gdsb::p2p {
namespace {

CapabilityReport caps_of(const testing::FakeMachine& m) { return testing::capabilities_of(m); }

MeasureOptions concurrent() {
  MeasureOptions o;
  o.bytes = 1 << 20;
  o.loops = 2;  // 5 repetitions (the default): the fake's spread has a median of exactly 1x
  o.concurrent = true;
  return o;
}

// The text report of the concurrent measurements on these capabilities.
std::string text_report(testing::FakeCopyTimer& timer, CapabilityReport caps) {
  P2PDocument doc;
  doc.caps = std::move(caps);
  doc.measurements = run_measurements(timer, doc.caps, concurrent());
  std::ostringstream out;
  write_text(out, doc);
  return out.str();
}

// 4 L40S, GPU0+GPU1 below one switch (NVML Single) on NUMA 0, GPU2+GPU3 below another on
// NUMA 1. Each switch's uplink carries 60 GB/s; one GPU alone copies at 50 GB/s.
TEST(P2pConcurrent, SharedSwitchUplinkShowsAsARatioBelowOne) {
  const auto m = testing::pcie_cns_box();
  testing::FakeCopyTimer timer(m);
  timer.uplink_of = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};
  timer.uplink_gb_s = 60;
  const Measurements r = run_measurements(timer, caps_of(m), concurrent());
  ASSERT_FALSE(r.h2d_concurrent.waived);
  const auto& g = r.h2d_concurrent.groups;
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g[0].shared, "all GPUs");
  // Each GPU gets 60 / 2 = 30 GB/s; four of them over the common interval: 120 GB/s.
  EXPECT_NEAR(g[0].gb_s, 120.0, 1e-6);
  ASSERT_EQ(g[0].per_gpu_gb_s.size(), 4u);
  for (double v : g[0].per_gpu_gb_s) EXPECT_NEAR(v, 30.0, 1e-6);
  EXPECT_NEAR(*g[0].single_sum_gb_s, 200.0, 1e-6);
  EXPECT_NEAR(*g[0].ratio, 0.6, 1e-9);
  EXPECT_EQ(g[0].samples_gb_s.size(), 5u);
  // The switch groups; the socket tier gives the same sets and is not repeated.
  EXPECT_EQ(g[1].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(g[2].gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(g[1].shared, "a PCIe switch (NVML PIX/PXB)");
  EXPECT_NEAR(g[1].gb_s, 60.0, 1e-6);
  EXPECT_NEAR(*g[1].single_sum_gb_s, 100.0, 1e-6);
  EXPECT_NEAR(*g[1].ratio, 0.6, 1e-9);
  EXPECT_EQ(r.h2d_concurrent.grouping, "groups from NVML's common-ancestor level and the GPUs' NUMA nodes");
  ASSERT_FALSE(r.d2h_concurrent.waived);
  EXPECT_EQ(r.d2h_concurrent.groups.size(), 3u);
  // H2D then D2H, each on all GPUs and the two switches.
  const std::vector<std::vector<int>> calls = {{0, 1, 2, 3}, {0, 1}, {2, 3}, {0, 1, 2, 3}, {0, 1}, {2, 3}};
  EXPECT_EQ(timer.concurrent_calls, calls);
}

TEST(P2pConcurrent, TheCommonIntervalEndsWithTheSlowestGpu) {
  const auto m = testing::pcie_cns_box();
  testing::FakeCopyTimer timer(m);
  timer.uplink_of = {{0, 0}, {1, 0}};  // only GPU0+GPU1 share (60 / 2 = 30); 2 and 3 run at 50
  timer.uplink_gb_s = 60;
  const Measurements r = run_measurements(timer, caps_of(m), concurrent());
  const ConcurrentGroup& all = r.h2d_concurrent.groups.at(0);
  EXPECT_NEAR(all.per_gpu_gb_s.at(2), 50.0, 1e-6);
  EXPECT_NEAR(all.per_gpu_gb_s.at(0), 30.0, 1e-6);
  // 4 GPUs' bytes over the interval of the slowest (30 GB/s): 4 x 30.
  EXPECT_NEAR(all.gb_s, 120.0, 1e-6);
}

TEST(P2pConcurrent, SocketGroupsOnTheTwoIslandBox) {
  const auto m = testing::two_island_box();
  testing::FakeCopyTimer timer(m);
  const Measurements r = run_measurements(timer, caps_of(m), concurrent());
  const auto& g = r.d2h_concurrent.groups;
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[1].gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g[2].gpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(g[1].shared, "a socket (NVML NODE, or the same NUMA node)");
  EXPECT_NEAR(g[0].gb_s, 400.0, 1e-6);  // no shared limit in the fake: 8 x 50
  EXPECT_NEAR(*g[0].ratio, 1.0, 1e-9);
}

TEST(P2pConcurrent, UngroupedGpusAreOneGroupAndSaySo) {
  auto m = testing::pcie_cns_box();
  m.gpus.resize(2);
  m.gpus[1].numa = 1;
  m.nvml_order = {0, 1};
  m.level.clear();
  m.level[{0, 1}] = m.level[{1, 0}] = nvml::TopologyLevel::System;
  testing::FakeCopyTimer timer(m);
  const Measurements r = run_measurements(timer, caps_of(m), concurrent());
  ASSERT_EQ(r.h2d_concurrent.groups.size(), 1u);
  EXPECT_EQ(r.h2d_concurrent.grouping, "one group: the topology does not group these GPUs");
  EXPECT_EQ(r.h2d_concurrent.groups[0].shared, "all GPUs");
}

TEST(P2pConcurrent, AllGpusBelowOneSwitchSayWhatTheyShare) {
  auto m = testing::pcie_cns_box();
  m.gpus.resize(2);
  m.nvml_order = {0, 1};
  testing::FakeCopyTimer timer(m);
  const Measurements r = run_measurements(timer, caps_of(m), concurrent());
  ASSERT_EQ(r.h2d_concurrent.groups.size(), 1u);
  EXPECT_EQ(r.h2d_concurrent.groups[0].shared, "all GPUs: they share a PCIe switch (NVML PIX/PXB)");
  EXPECT_EQ(r.h2d_concurrent.grouping, "one group: all GPUs: they share a PCIe switch (NVML PIX/PXB)");
}

// Issue 35, 4 x H200 in a VM: NVML calls the GPUs' common ancestor a host bridge (PHB). There
// that bridge is the hypervisor's: the note says so, not that a physical bridge costs the loss.
TEST(P2pConcurrent, InAVmTheSharedBridgeIsTheHypervisorsVirtualOne) {
  auto m = testing::pcie_cns_box();
  for (auto& [pair, level] : m.level) level = nvml::TopologyLevel::HostBridge;
  testing::FakeCopyTimer timer(m);
  CapabilityReport caps = caps_of(m);
  caps.hypervisor_devices = "0000:00:01.0 virtio-blk disk (1af4:1042)";
  const std::string text = text_report(timer, caps);
  EXPECT_NE(text.find("; all GPUs: they share a host bridge / root port (NVML PHB) of the VM's "
                      "virtual PCIe topology\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("these GPUs are in a VM (0000:00:01.0 virtio-blk disk (1af4:1042) are a "
                      "hypervisor's devices): the bridges and ports NVML reports are the "
                      "hypervisor's virtual ones, so the physical cause of a shortfall is not "
                      "visible from inside the VM"),
            std::string::npos)
      << text;
}

TEST(P2pConcurrent, WaivedWithOneGpuOrWhenNotAskedFor) {
  const auto one = testing::single_gpu_box();
  testing::FakeCopyTimer timer(one);
  Measurements r = run_measurements(timer, caps_of(one), concurrent());
  EXPECT_EQ(r.h2d_concurrent.waived, std::string("needs at least 2 GPUs"));
  EXPECT_EQ(r.d2h_concurrent.waived, std::string("needs at least 2 GPUs"));
  EXPECT_TRUE(timer.concurrent_calls.empty());
  const auto four = testing::pcie_cns_box();
  testing::FakeCopyTimer t4(four);
  MeasureOptions o = concurrent();
  o.concurrent = false;
  r = run_measurements(t4, caps_of(four), o);
  EXPECT_EQ(r.h2d_concurrent.waived, std::string("not asked for (--concurrent)"));
  EXPECT_TRUE(t4.concurrent_calls.empty());
}

TEST(P2pConcurrent, TextReportReadsAsARatioOfSingles) {
  const auto m = testing::pcie_cns_box();
  testing::FakeCopyTimer timer(m);
  timer.uplink_of = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};
  timer.uplink_gb_s = 60;
  const std::string text = text_report(timer, caps_of(m));
  EXPECT_NE(text.find("GPU0+GPU1 together: 60.00 GB/s (GPU0 30.00, GPU1 30.00) = 0.60 x the sum "
                      "of their single figures (100.00); a PCIe switch (NVML PIX/PXB)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace gdsb::p2p
