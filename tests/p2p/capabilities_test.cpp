// The capability pipeline against fake CUDA/NVML/PCIe layers: expected matrices per box.
#include <gtest/gtest.h>

#include "fake_layers.hpp"
#include "gdsb/p2p/capabilities.hpp"

namespace gdsb::p2p {
namespace {

using testing::FakeCudaLayer;
using testing::FakeNvmlLayer;
using Rows = std::vector<std::vector<std::string>>;

CapabilityReport collect(const testing::FakeMachine& m, std::string cuda_off = "",
                         std::string nvml_off = "", std::vector<PciePair> peers = {}) {
  FakeCudaLayer cuda(m, std::move(cuda_off));
  FakeNvmlLayer nvml(m, std::move(nvml_off));
  StaticPcieTopologySource pcie("fixture", std::move(peers));
  return collect_capabilities(cuda, nvml, pcie);
}

bool waived(const CapabilityReport& r, const std::string& what) {
  for (const auto& w : r.waived) {
    if (w.what == what) return true;
  }
  return false;
}

TEST(P2pCapabilities, TwoNvlinkIslandsGiveTheTopologyMatrix) {
  const CapabilityReport r = collect(testing::two_island_box());
  ASSERT_EQ(r.gpus.size(), 8u);
  const Matrix* topo = r.matrix("topology");
  ASSERT_NE(topo, nullptr);
  const std::string in = "NV6";
  const std::string x = "SYS";
  const Rows expected = {
      {"X", in, in, in, x, x, x, x}, {in, "X", in, in, x, x, x, x},
      {in, in, "X", in, x, x, x, x}, {in, in, in, "X", x, x, x, x},
      {x, x, x, x, "X", in, in, in}, {x, x, x, x, in, "X", in, in},
      {x, x, x, x, in, in, "X", in}, {x, x, x, x, in, in, in, "X"}};
  EXPECT_EQ(topo->cells, expected);
  EXPECT_EQ(topo->rows.front(), "GPU0");
  EXPECT_EQ(topo->cols.back(), "GPU7");
}

TEST(P2pCapabilities, NvmlIsJoinedToCudaOrdinalsByBusId) {
  // The fake NVML enumerates in reverse; GPU0 must still get GPU0's NVML facts.
  const CapabilityReport r = collect(testing::two_island_box());
  EXPECT_EQ(r.gpus[0].bdf, "0000:18:00.0");
  EXPECT_EQ(r.gpus[0].nvml_index, 7);
  EXPECT_EQ(r.gpus[0].numa_node, 0);
  EXPECT_EQ(r.gpus[7].numa_node, 1);
  EXPECT_EQ(r.gpus[0].nvlinks, 18);  // 3 peers x 6 links
  EXPECT_EQ(r.gpus[0].pcie, (PcieLink{5, 16}));
}

TEST(P2pCapabilities, IslandVerdictsNameTheLink) {
  const CapabilityReport r = collect(testing::two_island_box());
  EXPECT_EQ(r.pair(0, 1)->verdict, "P2P over NVLink (6 links)");
  EXPECT_EQ(r.pair(0, 4)->verdict, "P2P over PCIe (SYS)");
  const Matrix* nvlink = r.matrix("nvml_nvlink");
  ASSERT_NE(nvlink, nullptr);
  EXPECT_EQ(nvlink->cells[0][1], "OK");
  EXPECT_EQ(nvlink->cells[0][4], "NS");
  EXPECT_EQ(r.matrix("cuda_perf_rank")->cells[0][1], "0");
  EXPECT_EQ(r.matrix("cuda_perf_rank")->cells[0][4], "1");
  EXPECT_TRUE(r.waived.empty());
}

TEST(P2pCapabilities, PcieBoxShowsCnsAcrossSockets) {
  const CapabilityReport r = collect(testing::pcie_cns_box());
  const Rows topo = {{"X", "PIX", "SYS", "SYS"},
                     {"PIX", "X", "SYS", "SYS"},
                     {"SYS", "SYS", "X", "PIX"},
                     {"SYS", "SYS", "PIX", "X"}};
  EXPECT_EQ(r.matrix("topology")->cells, topo);
  const Rows read = {{"X", "OK", "CNS", "CNS"},
                     {"OK", "X", "CNS", "CNS"},
                     {"CNS", "CNS", "X", "OK"},
                     {"CNS", "CNS", "OK", "X"}};
  EXPECT_EQ(r.matrix("nvml_read")->cells, read);
  EXPECT_EQ(r.matrix("nvml_pci")->cells, read);
  const Rows access = {{"X", "Y", "N", "N"}, {"Y", "X", "N", "N"}, {"N", "N", "X", "Y"}, {"N", "N", "Y", "X"}};
  EXPECT_EQ(r.matrix("cuda_access")->cells, access);
  EXPECT_EQ(r.pair(0, 2)->verdict, "no P2P: the chipset does not support P2P (CNS) across SYS");
  EXPECT_EQ(r.pair(0, 1)->verdict, "P2P over PCIe (PIX)");
  EXPECT_FALSE(*r.pair(1, 3)->direct);
}

TEST(P2pCapabilities, PeerMatricesComeFromThePcieSeam) {
  const CapabilityReport r = collect(testing::pcie_cns_box(), "", "", testing::pcie_box_peers());
  const Matrix* map = r.matrix("p2pdma");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->cols, (std::vector<std::string>{"nvme0 0000:19:00.0", "mlx5_0 0000:1a:00.0"}));
  const Rows expected = {{"BUS_ADDR", "THRU_HOST_BRIDGE"},
                         {"BUS_ADDR", "-"},
                         {"NOT_SUPPORTED", "-"},
                         {"NOT_SUPPORTED", "-"}};
  EXPECT_EQ(map->cells, expected);
  EXPECT_EQ(r.matrix("peer_topology")->cells[2][0], "SYS");
  EXPECT_NE(gds_direct_verdict(r.peers[4]).find("ACS redirects at 0000:16:01.0"), std::string::npos);
}

TEST(P2pCapabilities, SingleGpuHasOneByOneMatrices) {
  const CapabilityReport r = collect(testing::single_gpu_box());
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_TRUE(r.pairs.empty());
  EXPECT_EQ(r.matrix("topology")->cells, (Rows{{"X"}}));
  EXPECT_EQ(r.matrix("nvml_read")->cells, (Rows{{"X"}}));
}

TEST(P2pCapabilities, NoDriverWaivesEveryGpuColumnWithTheReason) {
  const CapabilityReport r =
      collect(testing::pcie_cns_box(), "cudaErrorInsufficientDriver: no driver",
              "NVML library libnvidia-ml.so.1 could not be loaded", testing::pcie_box_peers());
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_EQ(r.matrix("topology"), nullptr);
  EXPECT_EQ(r.matrix("cuda_access"), nullptr);
  ASSERT_TRUE(waived(r, "cuda"));
  ASSERT_TRUE(waived(r, "nvml"));
  EXPECT_EQ(r.waived[0].reason, "cudaErrorInsufficientDriver: no driver");
  // The PCIe side still answers from the topology source, rows named by bus id.
  EXPECT_EQ(r.peers.size(), 5u);
  const Matrix* map = r.matrix("p2pdma");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->rows, (std::vector<std::string>{"0000:17:00.0", "0000:18:00.0", "0000:85:00.0",
                                                 "0000:86:00.0"}));
  EXPECT_EQ(map->cells[0], (std::vector<std::string>{"BUS_ADDR", "THRU_HOST_BRIDGE"}));
}

TEST(P2pCapabilities, NvmlAloneStillGivesTopologyAndStatus) {
  const CapabilityReport r = collect(testing::pcie_cns_box(), "disabled by --no-cuda");
  ASSERT_EQ(r.gpus.size(), 4u);
  EXPECT_TRUE(waived(r, "cuda_access"));
  EXPECT_NE(r.matrix("topology"), nullptr);
  EXPECT_EQ(r.pair(0, 1)->direct, true);   // from NVML read+write
  EXPECT_EQ(r.pair(0, 2)->direct, false);
}

TEST(P2pCapabilities, CudaAloneWaivesNvmlMatrices) {
  const CapabilityReport r = collect(testing::two_island_box(), "", "disabled by --no-nvml");
  ASSERT_EQ(r.gpus.size(), 8u);
  EXPECT_EQ(r.matrix("topology"), nullptr);
  EXPECT_TRUE(waived(r, "topology"));
  EXPECT_TRUE(waived(r, "nvml_read"));
  EXPECT_EQ(r.pair(0, 1)->verdict, "P2P (link type unknown: NVML waived)");
  EXPECT_FALSE(r.gpus[0].nvlinks.has_value());
}

TEST(P2pCapabilities, MissingTopologySourceIsWaived) {
  testing::FakeMachine m = testing::single_gpu_box();
  FakeCudaLayer cuda(m);
  FakeNvmlLayer nvml(m);
  UnavailablePcieTopologySource pcie("no topology source here");
  const CapabilityReport r = collect_capabilities(cuda, nvml, pcie);
  ASSERT_TRUE(waived(r, "p2pdma"));
  EXPECT_EQ(r.matrix("p2pdma"), nullptr);
}

}  // namespace
}  // namespace gdsb::p2p
