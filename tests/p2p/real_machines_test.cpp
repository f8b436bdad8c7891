// Recordings of real machines (tests/p2p/fixtures/real, SOURCES.md) read by gdsb::topo's
// collectors and shown by gdsb-p2p. Every expected value below was written by reading the
// recording: which GPU sits under which PCIe switch and socket, which NVSwitches exist and
// what the NVLinkBandwidth rows hold.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fixture_builder.hpp"
#include "mini_schema.hpp"
#include "p2p_cli.hpp"

#include "gdsb/p2p/capabilities.hpp"
#include "gdsb/p2p/topo_source.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/nvlink.hpp"

namespace gdsb::p2p {
namespace {

namespace fx = gdsb::topo::fixture;

const std::string kReal = GDSB_P2P_FIXTURES "/real/";

CapabilityReport pipeline(const topo::InputSources& in) {
  auto cuda = make_unavailable_cuda_layer("recorded input");
  auto nvml = make_unavailable_nvml_layer("recorded input");
  topo::CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  o.use_nvml = false;
  auto pcie = collect_topology_source(in, o);
  return collect_capabilities(*cuda, *nvml, *pcie);
}

std::string cell(const CapabilityReport& r, const std::string& matrix, int a, int b) {
  const Matrix* m = r.matrix(matrix);
  if (!m) return "<no " + matrix + ">";
  return m->cells.at(static_cast<std::size_t>(a)).at(static_cast<std::size_t>(b));
}

// ---- NVIDIA DGX-2 (dgx2-hwloc.xml) ----------------------------------------------------
// 16 V100 (10de:1db8, class 0302), in PCI bus order. Each pair of GPUs shares a PLX 9781
// switch (e.g. 34:00.0 and 36:00.0 below 32:00.0); two such pairs share the switch above
// (2c:00.0); each root port (2b, 4e on socket 0; ae, d7 on socket 1) holds four GPUs.
const std::vector<std::string> kDgx2Gpus = {
    "0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0",   // root port 2b, socket 0
    "0000:57:00.0", "0000:59:00.0", "0000:5c:00.0", "0000:5e:00.0",   // root port 4e, socket 0
    "0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",   // root port ae, socket 1
    "0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0"};  // root port d7, socket 1
// subtype="NVSwitch"; 66:00.0 reads as [0000:0000] class 0000 in the file, the other
// eleven as 10de:1ac2 class 0680.
const std::vector<std::string> kDgx2Switches = {
    "0000:61:00.0", "0000:62:00.0", "0000:63:00.0", "0000:65:00.0", "0000:66:00.0", "0000:67:00.0",
    "0000:c1:00.0", "0000:c2:00.0", "0000:c3:00.0", "0000:c5:00.0", "0000:c6:00.0", "0000:c7:00.0"};

// GPU i and j: same last-level switch (i/2), same root port (i/4), same socket (i/8).
std::string dgx2_pcie_label(int i, int j) {
  if (i / 2 == j / 2) return "PIX";
  if (i / 4 == j / 4) return "PXB";
  if (i / 8 == j / 8) return "NODE";
  return "SYS";
}

topo::InputSources dgx2() {
  topo::InputSources in;
  in.hwloc_xml = kReal + "dgx2-hwloc.xml";
  return in;
}

TEST(P2pRealMachines, Dgx2SnapshotHasItsNvSwitchesAndNvLinkRows) {
  const topo::Snapshot s = topo::collect_hwloc_xml(kReal + "dgx2-hwloc.xml");
  std::vector<std::string> switches;
  for (const topo::Device* d : s.with_role(topo::Role::NvSwitch)) switches.push_back(d->bdf);
  EXPECT_EQ(switches, kDgx2Switches);
  std::vector<std::string> gpus;
  for (const topo::Device* d : s.with_role(topo::Role::Gpu)) gpus.push_back(d->bdf);
  EXPECT_EQ(gpus, kDgx2Gpus);
  // Each GPU row of NVLinkBandwidth: 25000 MB/s to six distinct NVSwitches, 0 to GPUs.
  for (const std::string& g : kDgx2Gpus) {
    const auto& facts = s.gpu_facts.at(g);
    EXPECT_EQ(facts.name, "Tesla V100-SXM3-32GB-H");
    ASSERT_TRUE(facts.nvlinks) << g;
    std::set<std::string> remotes;
    for (const topo::NvLink& l : *facts.nvlinks) {
      EXPECT_EQ(l.bandwidth_mbps, 25000u) << g;
      EXPECT_EQ(l.count, 1) << g;
      EXPECT_EQ(l.remote_type, "nvswitch") << g << " -> " << l.remote;
      remotes.insert(l.remote);
    }
    EXPECT_EQ(remotes.size(), 6u) << g;
    EXPECT_EQ(topo::nvlinks_active(s, g), 6);
  }
  // GPUs 0..7 reach the switches of socket 0's board (61..67), 8..15 those of c1..c7.
  for (const topo::NvLink& l : *s.gpu_facts.at("0000:34:00.0").nvlinks)
    EXPECT_EQ(l.remote.substr(5, 1), "6") << l.remote;
  for (const topo::NvLink& l : *s.gpu_facts.at("0000:e7:00.0").nvlinks)
    EXPECT_EQ(l.remote.substr(5, 1), "c") << l.remote;
}

TEST(P2pRealMachines, Dgx2ShowsSixteenGpusWithNv6OverTheNvSwitches) {
  const CapabilityReport r = pipeline(dgx2());
  ASSERT_EQ(r.gpus.size(), 16u);
  for (std::size_t i = 0; i < r.gpus.size(); ++i) {
    EXPECT_EQ(r.gpus[i].bdf, kDgx2Gpus[i]);
    EXPECT_EQ(r.gpus[i].name, "Tesla V100-SXM3-32GB-H");
    EXPECT_EQ(r.gpus[i].nvlinks, 6);
    EXPECT_EQ(r.gpus[i].numa_node, i < 8 ? 0 : 1);
  }
  EXPECT_EQ(r.nvswitches, kDgx2Switches);
  EXPECT_EQ(r.gpu_source.rfind("recorded: --hwloc-xml", 0), 0u) << r.gpu_source;
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      EXPECT_EQ(cell(r, "topology", a, b), a == b ? "X" : "NV6") << a << "," << b;
      EXPECT_EQ(cell(r, "pcie_topology", a, b), a == b ? "X" : dgx2_pcie_label(a, b)) << a << "," << b;
    }
  }
  const PairCaps* p = r.pair(0, 15);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->verdict.find("NVLink: 6 links into the NVSwitch fabric (150 GB/s per direction)"),
            std::string::npos) << p->verdict;
  EXPECT_NE(p->verdict.find("PCIe SYS"), std::string::npos) << p->verdict;
  EXPECT_NE(p->verdict.find("P2P support not recorded"), std::string::npos) << p->verdict;
  EXPECT_EQ(r.matrix("nvml_read"), nullptr);  // no NVML answers in an hwloc XML
  bool nvml_waived = false;
  for (const Waiver& w : r.waived) nvml_waived = nvml_waived || w.what == "nvml_read";
  EXPECT_TRUE(nvml_waived);
}

TEST(P2pRealMachines, Dgx2HtmlAndJsonNameTheNvSwitches) {
  fx::TempDir dir;
  P2POptions o;
  o.sources = dgx2();
  o.quiet = true;
  o.json_path = (dir.path() / "p2p.json").string();
  o.html_path = (dir.path() / "p2p.html").string();
  Backends b = make_backends(o);
  std::ostringstream out, err;
  ASSERT_EQ(run_p2p(o, b, out, err), 0) << err.str();
  const auto doc = nlohmann::json::parse(std::ifstream(o.json_path));
  EXPECT_EQ(doc["nvswitches"].get<std::vector<std::string>>(), kDgx2Switches);
  EXPECT_EQ(doc["gpus"].size(), 16u);
  const auto errors = testing::validate(nlohmann::json::parse(std::ifstream(GDSB_P2P_SCHEMA)), doc);
  EXPECT_TRUE(errors.empty()) << errors.front();
  std::ifstream html(o.html_path);
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("NVSwitches: 12"), std::string::npos);
  EXPECT_NE(page.find("<code>0000:66:00.0</code>"), std::string::npos);
}

// ---- IBM Power S822LC "Minsky" (power8-minsky-hwloc.xml) -------------------------------
// 4 P100 (NVLink 1, 20000 MB/s a link): nvml0 0002:01:00.0 and nvml1 0003:01:00.0 on
// socket 0, nvml2 000a:01:00.0 and nvml3 000b:01:00.0 on socket 1, each on its own root
// port. NVLinkBandwidth rows: GPU0-GPU1 40000, GPU2-GPU3 40000, each GPU 40000 to its
// package, nothing else: 2 links per pair, 4 links per GPU.
TEST(P2pRealMachines, MinskyHasNv2PairsAndNvLinkToItsSocket) {
  topo::InputSources in;
  in.hwloc_xml = kReal + "power8-minsky-hwloc.xml";
  const CapabilityReport r = pipeline(in);
  ASSERT_EQ(r.gpus.size(), 4u);
  const std::vector<std::string> bdfs = {"0002:01:00.0", "0003:01:00.0", "000a:01:00.0",
                                         "000b:01:00.0"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.gpus[i].bdf, bdfs[i]);
    EXPECT_EQ(r.gpus[i].name, "Tesla P100-SXM2-16GB");
    EXPECT_EQ(r.gpus[i].nvlinks, 4);  // 2 to the peer GPU + 2 to the CPU
  }
  EXPECT_TRUE(r.nvswitches.empty());
  const std::vector<std::vector<std::string>> topology = {{"X", "NV2", "SYS", "SYS"},
                                                          {"NV2", "X", "SYS", "SYS"},
                                                          {"SYS", "SYS", "X", "NV2"},
                                                          {"SYS", "SYS", "NV2", "X"}};
  // Different root ports, one socket: NODE; different sockets: SYS.
  const std::vector<std::vector<std::string>> pcie = {{"X", "NODE", "SYS", "SYS"},
                                                      {"NODE", "X", "SYS", "SYS"},
                                                      {"SYS", "SYS", "X", "NODE"},
                                                      {"SYS", "SYS", "NODE", "X"}};
  EXPECT_EQ(r.matrix("topology")->cells, topology);
  EXPECT_EQ(r.matrix("pcie_topology")->cells, pcie);
  EXPECT_NE(r.pair(0, 1)->verdict.find("NVLink: 2 links direct (40 GB/s per direction)"),
            std::string::npos) << r.pair(0, 1)->verdict;
  EXPECT_NE(r.pair(0, 2)->verdict.find("no NVLink: PCIe SYS"), std::string::npos);
}

// ---- 8x H100 HGX, lspci -vvv excerpt ----------------------------------------------------
TEST(P2pRealMachines, HgxH100LspciNamesTheNvSwitchesAndSaysNvLinkIsUnknown) {
  topo::InputSources in;
  in.lspci_text = kReal + "hgx-h100-lspci-vvv-excerpt.txt";
  const CapabilityReport r = pipeline(in);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].bdf, "0000:19:00.0");
  EXPECT_EQ(r.gpus[1].bdf, "0000:3b:00.0");
  EXPECT_FALSE(r.gpus[0].nvlinks.has_value());
  const std::vector<std::string> switches = {"0000:83:00.0", "0000:84:00.0", "0000:85:00.0",
                                             "0000:86:00.0"};
  EXPECT_EQ(r.nvswitches, switches);
  // No bridge in the excerpt: no common switch; both GPUs say "NUMA node: 0".
  EXPECT_EQ(cell(r, "topology", 0, 1), "NODE");
  EXPECT_NE(r.pair(0, 1)->verdict.find("NVLink unknown: the input has no NVLink data"),
            std::string::npos) << r.pair(0, 1)->verdict;
  bool said = false;
  for (const Waiver& w : r.waived)
    said = said || (w.what == "nvlink" && w.reason.find("unknown: the input has no NVLink data") == 0);
  EXPECT_TRUE(said);
}

// Issue 35: gdsb-p2p knows when its GPUs sit in a VM. The H100 VM's snapshot
// (tests/topo/fixtures/real/h100-vm, SOURCES.md there), read by hand: virtio-blk disks
// 1af4:1042 at 00:01.0 (vda) and 00:02.0 (vdb), a virtio-net NIC 1af4:1041 at 00:03.0; the
// HGX H100 is bare metal (no virtio, QEMU or VMware device).
TEST(P2pRealMachines, TheVmsVirtualDevicesShowItsPcieTreeIsTheHypervisors) {
  topo::InputSources vm;
  vm.from_snapshot = GDSB_P2P_FIXTURES "/../../topo/fixtures/real/h100-vm/snapshot";
  EXPECT_EQ(pipeline(vm).hypervisor_devices,
            "0000:00:01.0 virtio-blk disk (1af4:1042), 0000:00:02.0 virtio-blk disk (1af4:1042), "
            "0000:00:03.0 virtio-net NIC (1af4:1041)");
  topo::InputSources hgx;
  hgx.lspci_text = kReal + "hgx-h100-lspci-vvv-excerpt.txt";
  EXPECT_EQ(pipeline(hgx).hypervisor_devices, "");
}

TEST(P2pRealMachines, HwlocLinkRateFollowsHwlocsTable) {
  EXPECT_EQ(topo::hwloc_link_rate_mbps(6 * 25000), 25000u);    // V100, NVLink 2
  EXPECT_EQ(topo::hwloc_link_rate_mbps(12 * 25000), 25000u);   // A100, NVLink 3
  EXPECT_EQ(topo::hwloc_link_rate_mbps(18 * 25000), 25000u);   // H100, NVLink 4
  EXPECT_EQ(topo::hwloc_link_rate_mbps(18 * 50000), 50000u);   // Blackwell, NVLink 5
  EXPECT_EQ(topo::hwloc_link_rate_mbps(4 * 20000), 20000u);    // P100, NVLink 1
  EXPECT_EQ(topo::hwloc_link_rate_mbps(12345), std::nullopt);
  EXPECT_EQ(topo::hwloc_link_rate_mbps(0), std::nullopt);
}

}  // namespace
}  // namespace gdsb::p2p
