// The p2p capability pipeline offline on gdsb-topo's fixtures: sysfs trees and lspci dumps
// built by tests/topo/fixture_builder, read by gdsb::topo's collectors through gdsb-p2p's
// PCIe source, asserted as the p2pdma and peer_topology matrices.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fixture_builder.hpp"
#include "gdsb/error.hpp"
#include "gdsb/p2p/capabilities.hpp"
#include "gdsb/p2p/topo_source.hpp"
#include "p2p_cli.hpp"

namespace gdsb::p2p {
namespace {

namespace fx = gdsb::topo::fixture;

constexpr const char* kGpu0 = "0000:03:00.0";
constexpr const char* kNvme0 = "0000:04:00.0";

topo::CollectOptions offline() {
  topo::CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  o.use_nvml = false;
  return o;
}

CapabilityReport pipeline(const topo::InputSources& in) {
  auto cuda = make_unavailable_cuda_layer("no GPU in this test");
  auto nvml = make_unavailable_nvml_layer("no GPU in this test");
  auto pcie = collect_topology_source(in, offline());
  return collect_capabilities(*cuda, *nvml, *pcie);
}

CapabilityReport from_tree(const fx::Machine& m) {
  fx::TempDir dir;
  fx::write_sysfs(m, dir.path());
  topo::InputSources in;
  in.sysfs_root = dir.path().string();
  return pipeline(in);
}

// The cell of a GPU row and a peer column (name + BDF). Without CUDA/NVML the GPUs are
// the ones the PCIe input shows, numbered in bus order: the row of BDF gpu is its label.
std::string cell(const CapabilityReport& r, const std::string& matrix, const std::string& gpu,
                 const std::string& peer) {
  const Matrix* m = r.matrix(matrix);
  if (m == nullptr) return "<no " + matrix + ">";
  std::string row = gpu;
  for (const GpuInfo& g : r.gpus)
    if (g.bdf == gpu) row = gpu_label(g.index);
  for (std::size_t i = 0; i < m->rows.size(); ++i) {
    if (m->rows[i] != row) continue;
    for (std::size_t j = 0; j < m->cols.size(); ++j) {
      if (m->cols[j].find(peer) != std::string::npos) return m->cells[i][j];
    }
  }
  return "<no cell " + gpu + " x " + peer + ">";
}

const PciePair* find_pair(const CapabilityReport& r, const std::string& gpu,
                          const std::string& peer) {
  for (const PciePair& p : r.peers) {
    if (p.gpu == gpu && p.peer == peer) return &p;
  }
  return nullptr;
}

TEST(P2pTopoPipeline, HealthyBoxIsBusAddressAndPix) {
  const CapabilityReport r = from_tree(fx::make_box(1, 1, 1, 1, 1));
  ASSERT_EQ(r.peers.size(), 2u);
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, kNvme0), "BUS_ADDR");
  EXPECT_EQ(cell(r, "peer_topology", kGpu0, kNvme0), "PIX");
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, "0000:05:00.0"), "BUS_ADDR");
  const Matrix* m = r.matrix("p2pdma");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->cols.front(), std::string("nvme0n1 ") + kNvme0);
  const PciePair* p = find_pair(r, kGpu0, kNvme0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->role, PeerRole::Nvme);
  EXPECT_EQ(p->distance, 4);
  EXPECT_TRUE(p->acs_redirect_ports.empty());
  EXPECT_NE(gds_direct_verdict(*p).find("GDS direct: peer-to-peer below a common switch"),
            std::string::npos);
  EXPECT_NE(r.pcie_source.find("--sysfs-root"), std::string::npos);
}

TEST(P2pTopoPipeline, AcsRedirectGoesThroughTheWhitelistedHostBridge) {
  auto m = fx::make_box(1, 1, 1, 2, 0);
  fx::find(m, "0000:02:01.0")->acs_ctl = 0x001d;  // RR CR on the port above nvme0
  const CapabilityReport r = from_tree(m);
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, kNvme0), "THRU_HOST_BRIDGE");  // 8086:2020 whitelisted
  EXPECT_EQ(cell(r, "peer_topology", kGpu0, kNvme0), "PIX");       // the path is unchanged
  EXPECT_EQ(find_pair(r, kGpu0, kNvme0)->acs_redirect_ports,
            std::vector<std::string>{"0000:02:01.0"});
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, "0000:05:00.0"), "BUS_ADDR");  // nvme1's port is clean
}

TEST(P2pTopoPipeline, AcsRedirectBelowAnUnlistedHostBridgeIsNotSupported) {
  auto m = fx::make_box(1, 1, 1, 1, 0);
  fx::find(m, "0000:02:01.0")->acs_ctl = 0x001d;
  fx::find(m, "0000:00:00.0")->device = 0x1234;  // Intel, but not on the kernel's list
  const CapabilityReport r = from_tree(m);
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, kNvme0), "NOT_SUPPORTED");
  EXPECT_NE(gds_direct_verdict(*find_pair(r, kGpu0, kNvme0)).find("ACS redirects at 0000:02:01.0"),
            std::string::npos);
}

TEST(P2pTopoPipeline, DifferentSocketsAreSys) {
  auto m = fx::make_box(2, 1, 1, 1, 0);  // GPU only on socket 0, NVMe only on socket 1
  std::erase_if(m.devs, [](const fx::Dev& d) {
    return d.bdf == "0000:83:00.0" || d.bdf == kNvme0;
  });
  const CapabilityReport r = from_tree(m);
  EXPECT_EQ(cell(r, "peer_topology", kGpu0, "0000:84:00.0"), "SYS");
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, "0000:84:00.0"), "THRU_HOST_BRIDGE");
  EXPECT_EQ(find_pair(r, kGpu0, "0000:84:00.0")->distance, 8);
}

TEST(P2pTopoPipeline, LspciDumpGivesTheSameMatrix) {
  fx::TempDir dir;
  const auto file = dir.path() / "lspci-xxxx.txt";
  std::ofstream(file) << fx::lspci_dump(fx::make_box(1, 1, 1, 1, 0), 4096);
  topo::InputSources in;
  in.pci_dump = file.string();
  const CapabilityReport r = pipeline(in);
  EXPECT_EQ(cell(r, "p2pdma", kGpu0, kNvme0), "BUS_ADDR");
  EXPECT_EQ(cell(r, "peer_topology", kGpu0, kNvme0), "PIX");
}

TEST(P2pTopoPipeline, NoGpuOrNoPeerWaivesTheMatrixWithTheReason) {
  auto m = fx::make_box(1, 1, 0, 1, 0);
  CapabilityReport r = from_tree(m);
  EXPECT_EQ(r.matrix("p2pdma"), nullptr);
  ASSERT_FALSE(r.waived.empty());
  EXPECT_EQ(r.waived.back().what, "p2pdma");
  EXPECT_NE(r.waived.back().reason.find("no NVIDIA GPU"), std::string::npos);
  r = from_tree(fx::make_box(1, 1, 1, 0, 0));
  EXPECT_EQ(r.matrix("p2pdma"), nullptr);
  // Management NICs are no GDS peers: the reason names data NICs (the path model's pairs).
  EXPECT_NE(r.waived.back().reason.find("no NVMe drive or data NIC"), std::string::npos);
}

TEST(P2pTopoPipeline, RecordedInputThatCannotBeReadThrowsNamingIt) {
  topo::InputSources in;
  in.lspci_text = "/nonexistent/lspci-vvv.txt";
  try {
    (void)collect_topology_source(in, offline());
    FAIL() << "no exception";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/lspci-vvv.txt"), std::string::npos);
  }
}

TEST(P2pTopoPipeline, RunP2pFromASysfsTreeWritesTheMatrixIntoTheJson) {
  fx::TempDir dir;
  fx::write_sysfs(fx::make_box(1, 1, 1, 1, 0), dir.path() / "tree");
  P2POptions o;
  o.no_cuda = true;
  o.no_nvml = true;
  o.quiet = true;
  o.sources.sysfs_root = (dir.path() / "tree").string();
  o.json_path = (dir.path() / "p2p.json").string();
  Backends b = make_backends(o);
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(run_p2p(o, b, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(std::ifstream(o.json_path));
  const auto& m = j["matrices"]["p2pdma"];
  // The GPU the tree shows, numbered as nvidia-smi would (no CUDA/NVML in this run).
  EXPECT_EQ(m["rows"][0], "GPU0");
  EXPECT_EQ(j["gpus"][0]["bdf"], kGpu0);
  EXPECT_EQ(m["cells"][0][0], "BUS_ADDR");
  EXPECT_EQ(j["matrices"]["peer_topology"]["cells"][0][0], "PIX");
}

}  // namespace
}  // namespace gdsb::p2p
