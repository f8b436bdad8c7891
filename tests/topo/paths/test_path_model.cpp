// The path model (gdsb/topo/path_model.hpp) and the verdicts that read it, on recordings of
// real machines (tests/topo/fixtures/real, origins in SOURCES.md there). Every expectation
// was written by reading the recording, not from the tool's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gdsb/topo/path_model.hpp"
#include "gdsb/topo/render.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;

// The HGX board as read off the lspci text (hgx_recording.hpp): each GPU shares a PEX890xx
// switch with one Gen4 x4 NVMe; 01:00.0 and 01:00.1 are the BCM5720 gigabit LOM ports
// under root port 00:1c.? of socket 0.
constexpr const char* kBcm[] = {"0000:01:00.0", "0000:01:00.1"};

// The recording with every Mellanox (ConnectX-7 and ConnectX-6 Dx) stanza removed: the
// only NICs left are the two BCM5720 gigabit ports.
fs::path hgx_without_connectx(const fs::path& dir) {
  std::ifstream in(kReal / "hgx-h100-lspci-vvv.txt");
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str(), out, stanza;
  std::istringstream lines(text);
  std::string line;
  const auto flush = [&] {
    if (stanza.find("Mellanox") == std::string::npos ||
        stanza.find("Ethernet controller") == std::string::npos)
      out += stanza;
    stanza.clear();
  };
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '\t') flush();  // a new device header
    stanza += line + "\n";
  }
  flush();
  fs::path p = dir / "hgx-no-connectx.txt";
  std::ofstream(p) << out;
  return p;
}

// The HGX recording with its ConnectX-7 at `slot` (single-port, one function .0) made a
// dual-port card, as a real dual-port ConnectX-7 (2x200GbE, PCIe 5.0 x16) shows it: a
// second PCI function `slot`.1 in the same slot, a copy of the first function's stanza.
// `lnksta`, when given, replaces both functions' link status line (the card in a slower
// slot).
fs::path hgx_dual_port(const fs::path& dir, const std::string& slot, const std::string& lnksta) {
  std::ifstream in(kReal / "hgx-h100-lspci-vvv.txt");
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  const std::string head = "\n" + slot + ".0 ";
  const size_t begin = text.find(head) + 1;
  const size_t end = text.find("\n\n", begin) + 2;  // a blank line ends the stanza
  std::string port0 = text.substr(begin, end - begin);
  const auto edit = [&port0](const std::string& from, const std::string& to) {
    port0.replace(port0.find(from), from.size(), to);
  };
  if (!lnksta.empty()) edit("LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", lnksta);
  // The dual-port model's VPD (MCX755106AS-HEAT), same width and PCIe generation.
  edit("400GbE / NDR IB (default mode), Single-port OSFP", "200GbE / NDR200 IB, Dual-port QSFP112");
  edit("[PN] Part number: MCX75310AAS-NEAT", "[PN] Part number: MCX755106AS-HEAT");
  std::string port1 = port0;
  port1.replace(0, slot.size() + 2, slot + ".1");
  edit("Next Function: 0", "Next Function: 1");  // ARI: function 0 points at function 1
  fs::path p = dir / "hgx-dual-port.txt";
  std::ofstream(p) << text.substr(0, begin) << port0 << port1 << text.substr(end);
  return p;
}

// Each port's network link as /sys/class/net/<if>/speed reports it (Mb/s); lspci text
// records none.
Snapshot with_port_speeds(Snapshot s, const std::string& slot, int port0_mbps, int port1_mbps) {
  for (auto& d : s.devices) {
    if (d.bdf == "0000:" + slot + ".0") d.net_speed_mbps = port0_mbps;
    if (d.bdf == "0000:" + slot + ".1") d.net_speed_mbps = port1_mbps;
  }
  return s;
}

bool names(const CheckResult& r, const std::string& bdf) {
  return std::find(r.devices.begin(), r.devices.end(), bdf) != r.devices.end();
}

TEST(PathModelHgx, WithoutConnectXTheGigabitPortsAreNeverJudged) {
  fixture::TempDir dir;
  auto o = evaluate_snapshot(collect_lspci_text(hgx_without_connectx(dir.path()), offline()));
  ASSERT_EQ(o.view->gpus().size(), 8U);
  EXPECT_EQ(o.snapshot.with_role(Role::Nic).size(), 2U);  // the two BCM5720 ports
  const PathModel m(*o.view);
  EXPECT_TRUE(m.data_nics().empty());
  ASSERT_EQ(m.management_nics().size(), 2U);
  EXPECT_TRUE(m.gds_applicable()) << m.applicability();
  // No FAIL or WARN comes from (or names) a BCM5720 port.
  for (const auto& c : o.report.checks) {
    if (c.verdict != Verdict::Fail && c.verdict != Verdict::Warn) continue;
    for (const char* bcm : kBcm) EXPECT_FALSE(names(c, bcm)) << c.id << ": " << c.title;
  }
  // The ports are listed as information.
  const CheckResult* mgmt = o.titled("pair-locality", "management NICs");
  ASSERT_NE(mgmt, nullptr);
  EXPECT_EQ(mgmt->verdict, Verdict::Waived);
  for (const char* bcm : kBcm) EXPECT_TRUE(names(*mgmt, bcm));
  // GDS from the local NVMe is still judged: each GPU and the drive below its switch, PIX.
  for (const auto& g : kHgx) {
    const CheckResult* r = nullptr;
    for (const auto* c : o.results("pair-locality"))
      if (c->title.find("nearest NVMe") != std::string::npos && c->devices.front() == g.gpu)
        r = c;
    ASSERT_NE(r, nullptr) << g.gpu;
    EXPECT_EQ(r->verdict, Verdict::Pass) << g.gpu;
    EXPECT_TRUE(names(*r, g.nvme)) << g.gpu;
    EXPECT_EQ(o.titled("pair-locality", "nearest data NIC"), nullptr);
  }
  EXPECT_EQ(o.report.verdict, Verdict::Pass);
  // No remote ceiling from management ports.
  for (const auto& c : o.report.nic_ceilings) EXPECT_FALSE(c.gb_s) << c.limited_by;
  EXPECT_FALSE(o.report.node_nic.gb_s);
  EXPECT_NE(o.report.node_nic.limited_by.find("no data NIC"), std::string::npos);
}

TEST(PathModelHgx, FullRecordingPathsHopsAndNicBasis) {
  auto o = evaluate_snapshot(collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline()));
  const PathModel m(*o.view);
  EXPECT_TRUE(m.gds_applicable());
  // Eight ConnectX-7 and four ConnectX-6 Dx functions are data NICs; the BCM5720 ports are not.
  EXPECT_EQ(m.data_nics().size(), 12U);
  EXPECT_EQ(m.management_nics().size(), 2U);
  for (const auto& g : kHgx) {
    auto near = m.nearest(g.gpu, DataSource::LocalNvme);
    ASSERT_EQ(near.size(), 1U) << g.gpu;
    const DataPath& p = *near.front();
    EXPECT_EQ(p.source, g.nvme);
    EXPECT_TRUE(p.p2p);
    // Drive (Gen4 x4) and GPU (Gen5 x16) own links; the common bridge is the PEX downstream
    // side, so no uplink is crossed.
    ASSERT_EQ(p.hops.size(), 2U) << g.gpu;
    EXPECT_EQ(p.hops[0].kind, HopKind::DriveLink);
    EXPECT_EQ(p.hops[0].source, CapacitySource::PcieLink);
    EXPECT_NEAR(*p.hops[0].gb_s, 4 * 1.969, 0.01);
    EXPECT_EQ(p.hops[1].kind, HopKind::GpuLink);
    EXPECT_NEAR(*p.hops[1].gb_s, 16 * 3.938, 0.05);
    // The ceiling's inputs are exactly these hops.
    const Ceiling c = m.gpu_ceiling(g.gpu, DataSource::LocalNvme);
    ASSERT_EQ(c.hops.size(), 2U);
    EXPECT_EQ(c.hops[0].device, g.nvme);
    EXPECT_EQ(c.hops[1].device, g.gpu);
    EXPECT_TRUE(m.is_data_nic(g.nic));
  }
  // lspci text records no network speed: the remote ceiling says it used the PCIe rate.
  EXPECT_EQ(o.report.node_nic.basis, "PCIe line rate");
  EXPECT_NE(o.report.node_nic.limited_by.find("PCIe line rate"), std::string::npos);
}

// Issue 25: the remote ceiling read "by 3 nearest data NIC(s) ...: 0000:19:00.0 (gpu) Gen5 x16,
// 0000:1b:00.0 (nic)", naming GPU0 as if it were one of the NICs. Read off the recording:
// GPU0 (19:00.0) shares its switch with the ConnectX-7 at 1a:00.0 and the two ConnectX-6 Dx
// functions 1b:00.0 and 1b:00.1. The ceiling names those three NICs, and the GPU only as
// its link ("GPU link 0000:19:00.0").
TEST(PathModelHgx, RemoteCeilingNamesItsNicsAndNeverAGpuAsOne) {
  auto o = evaluate_snapshot(collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline()));
  const PathModel m(*o.view);
  const Ceiling c = m.gpu_ceiling(kHgx[0].gpu, DataSource::DataNic);
  EXPECT_EQ(c.peers, (std::vector<std::string>{"0000:1a:00.0", "0000:1b:00.0", "0000:1b:00.1"}));
  const std::string& t = c.limited_by;
  EXPECT_NE(t.find("3 nearest data NICs (0000:1a:00.0, 0000:1b:00.0, 0000:1b:00.1)"),
            std::string::npos) << t;
  for (size_t at = t.find(kHgx[0].gpu); at != std::string::npos; at = t.find(kHgx[0].gpu, at + 1))
    EXPECT_EQ(t.substr(at < 9 ? 0 : at - 9, 9), "GPU link ") << t;
  EXPECT_NE(t.find("GPU link 0000:19:00.0"), std::string::npos) << t;
  // One NIC is one NIC, not "NIC(s)".
  const Ceiling one = m.gpu_ceiling(kHgx[1].gpu, DataSource::DataNic);
  EXPECT_NE(one.limited_by.find("1 nearest data NIC (0000:3c:00.0)"), std::string::npos)
      << one.limited_by;
}

// The HGX recording with the RDMA port facts a live read adds (/sys/class/infiniband):
// GPU1's ConnectX-7 (3c:00.0, Gen5 x16, PIX) as mlx5_1 port 1 at "400 Gb/sec (4X NDR)", the
// rate a ConnectX-7 NDR port trains at. By hand: 400 Gb/s = 50 GB/s, below the NIC's and
// GPU's Gen5 x16 links (~63.0 GB/s), so the port's rate bounds GPU1's remote reads; at half
// rate (200 Gb/s) it bounds them at 25 GB/s; with the port DOWN the NIC carries nothing and
// the ceiling says so, without a figure. A mount carried by that NIC alone gets the same.
TEST(PathModelHgx, RdmaPortRateBoundsTheNicAndADownPortCarriesNothing) {
  const auto with_port = [](const std::string& state, double gbps, const std::string& rate) {
    Snapshot s = collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline());
    RdmaDevice r;
    r.name = "mlx5_1";
    r.bdf = kHgx[1].nic;
    RdmaPort p;
    p.port = 1;
    p.link_layer = "InfiniBand";
    p.state = state;
    p.phys_state = state == "ACTIVE" ? "LinkUp" : "Disabled";
    p.rate = rate;
    p.rate_gbps = gbps;
    r.ports.push_back(p);
    s.machine.network.rdma_devices.push_back(r);
    return evaluate_snapshot(std::move(s));
  };
  {
    auto o = with_port("ACTIVE", 400, "400 Gb/sec (4X NDR)");
    const PathModel m(*o.view);
    const Ceiling c = m.gpu_ceiling(kHgx[1].gpu, DataSource::DataNic);
    ASSERT_TRUE(c.gb_s) << c.limited_by;
    EXPECT_NEAR(*c.gb_s, 50.0, 0.01);
    EXPECT_NE(c.limited_by.find("network 0000:3c:00.0 mlx5_1 port 1 400 Gb/sec (4X NDR) 50.0 GB/s"), std::string::npos)
        << c.limited_by;
    const Ceiling mount = m.carriers_ceiling({kHgx[1].nic}, kHgx[1].gpu);
    ASSERT_TRUE(mount.gb_s) << mount.limited_by;
    EXPECT_NEAR(*mount.gb_s, 50.0, 0.01);
  }
  {
    auto o = with_port("ACTIVE", 200, "200 Gb/sec (4X HDR)");
    const Ceiling c = PathModel(*o.view).gpu_ceiling(kHgx[1].gpu, DataSource::DataNic);
    ASSERT_TRUE(c.gb_s);
    EXPECT_NEAR(*c.gb_s, 25.0, 0.01);
  }
  {
    auto o = with_port("DOWN", 400, "400 Gb/sec (4X NDR)");
    const PathModel m(*o.view);
    EXPECT_TRUE(m.gds_applicable());  // the hardware path is still there
    EXPECT_EQ(m.down_nics(), std::vector<std::string>{kHgx[1].nic});
    const Ceiling c = m.gpu_ceiling(kHgx[1].gpu, DataSource::DataNic);
    EXPECT_FALSE(c.gb_s);
    EXPECT_NE(c.limited_by.find("RDMA ports down on 0000:3c:00.0"), std::string::npos)
        << c.limited_by;
    const Ceiling mount = m.carriers_ceiling({kHgx[1].nic}, kHgx[1].gpu);
    EXPECT_FALSE(mount.gb_s);
    EXPECT_NE(mount.limited_by.find("its RDMA ports are down"), std::string::npos);
    // Node-wide, the eleven other data NICs still count; the down one is named.
    const Ceiling node = m.node_ceiling(DataSource::DataNic);
    ASSERT_TRUE(node.gb_s);
    EXPECT_EQ(node.peers.size(), 11U);
    EXPECT_NE(node.limited_by.find("RDMA ports down: 0000:3c:00.0"), std::string::npos);
  }
}

// Carriers of one mount, node-wide: GPU0's two ConnectX-6 Dx functions (1b:00.0 and 1b:00.1,
// one Gen4 x16 card: 16 x 1.969 = ~31.5 GB/s shared) and GPU4's (9d:00.0): each into its
// nearest GPU, the shared card link caps the first two together, ~63.0 GB/s in all; a
// BCM5720 gigabit port given as a carrier is named, not counted.
TEST(PathModelHgx, CarriersCeilingSumsTheCarriersUnderTheirSharedLinks) {
  auto o = evaluate_snapshot(collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline()));
  const PathModel m(*o.view);
  const Ceiling c =
      m.carriers_ceiling({"0000:1b:00.0", "0000:1b:00.1", "0000:9d:00.0", kBcm[0]}, "");
  ASSERT_TRUE(c.gb_s) << c.limited_by;
  EXPECT_NEAR(*c.gb_s, 2 * 16 * 1.969, 0.1);
  EXPECT_EQ(c.peers.size(), 3U);
  EXPECT_NE(c.limited_by.find(std::string(kBcm[0]) + " (not a data NIC)"), std::string::npos)
      << c.limited_by;
}

// Mutation of the HGX recording: GPU1 (3b:00.0) with its ConnectX-7 (3c:00.0, Gen5 x16 below
// the same PEX890xx switch, PIX) as a dual-port 2x200 Gb/s card. Read by hand: each port
// carries 200 Gb/s = 25 GB/s on its own network link, both share the slot's PCIe link
// (Gen5 x16: 16 x 3.938 = ~63.0 GB/s) and GPU1's Gen5 x16 link (~63.0 GB/s): the remote
// ceiling is both ports, 50 GB/s. In a Gen4 x16 slot (16 x 1.969 = ~31.5 GB/s) the PCIe
// link caps it there.
TEST(PathModelHgx, DualPortNicCountsBothPortsCappedByItsPcieLink) {
  const std::string gpu = kHgx[1].gpu, slot = "3c:00";
  fixture::TempDir dir;
  auto o = evaluate_snapshot(with_port_speeds(
      collect_lspci_text(hgx_dual_port(dir.path(), slot, ""), offline()), slot, 200000, 200000));
  const PathModel m(*o.view);
  EXPECT_EQ(m.data_nics().size(), 13U);  // the recording's 12 and the added port
  const Ceiling c = m.gpu_ceiling(gpu, DataSource::DataNic);
  ASSERT_EQ(c.peers.size(), 2U) << c.limited_by;
  EXPECT_EQ(c.peers[0], "0000:3c:00.0");
  EXPECT_EQ(c.peers[1], "0000:3c:00.1");
  EXPECT_EQ(c.basis, "network rate");
  ASSERT_TRUE(c.gb_s) << c.limited_by;
  EXPECT_NEAR(*c.gb_s, 50.0, 0.01) << c.limited_by;
  // One network hop per port, one PCIe link hop for the slot.
  size_t network = 0, nic_link = 0;
  for (const auto& h : c.hops) {
    network += h.kind == HopKind::Network;
    nic_link += h.kind == HopKind::NicLink;
  }
  EXPECT_EQ(network, 2U);
  EXPECT_EQ(nic_link, 1U);
  // The report's remote ceiling for GPU1 is the same figure.
  bool reported = false;
  for (const auto& rc : o.report.nic_ceilings)
    if (rc.gpu == gpu) {
      reported = true;
      ASSERT_TRUE(rc.gb_s);
      EXPECT_NEAR(*rc.gb_s, 50.0, 0.01);
    }
  EXPECT_TRUE(reported);

  // The same card in a Gen4 x16 slot: 50 GB/s of ports, ~31.5 GB/s of PCIe.
  fixture::TempDir gen4;
  auto slow = evaluate_snapshot(with_port_speeds(
      collect_lspci_text(hgx_dual_port(gen4.path(), slot,
                                       "LnkSta:\tSpeed 16GT/s (downgraded), Width x16 (ok)"),
                         offline()),
      slot, 200000, 200000));
  const Ceiling capped = PathModel(*slow.view).gpu_ceiling(gpu, DataSource::DataNic);
  ASSERT_TRUE(capped.gb_s) << capped.limited_by;
  EXPECT_NEAR(*capped.gb_s, 16 * 1.969, 0.05) << capped.limited_by;
  EXPECT_NE(capped.limited_by.find("0000:3c:00.0 (nic) Gen4 x16"), std::string::npos)
      << capped.limited_by;
}

// The ports of one card need not run at one speed: port 0 trained at 100 Gb/s (12.5 GB/s),
// port 1 at 200 Gb/s (25 GB/s). Both count, each at its own rate: 37.5 GB/s.
TEST(PathModelHgx, DualPortNicPortsAtDifferentSpeedsEachCountTheirOwn) {
  const std::string slot = "3c:00";
  fixture::TempDir dir;
  auto o = evaluate_snapshot(with_port_speeds(
      collect_lspci_text(hgx_dual_port(dir.path(), slot, ""), offline()), slot, 100000, 200000));
  const Ceiling c = PathModel(*o.view).gpu_ceiling(kHgx[1].gpu, DataSource::DataNic);
  ASSERT_TRUE(c.gb_s) << c.limited_by;
  EXPECT_NEAR(*c.gb_s, 37.5, 0.01) << c.limited_by;
}

// A link speed the PCIe table does not know (a generation newer than the table: the
// decoder records 0 GT/s for its speed code) is unknown capacity, never 0 GB/s. Mutation of
// the HGX recording: GPU1's drive 3a:00.0 at such a speed; and the PEX downstream port
// above GPU2 (4c:00.0) too, whose own link stays Gen5 x16.
// The link check on the same edit: an unknown current speed is no downgrade, so a link at
// full width with a speed code the table does not know fails nothing and reads no
// "0.0 GB/s"; a lost lane on such a link still fails, without a made-up figure.
TEST(PathModelHgx, UnknownLinkSpeedIsNoFailedLinkAndNoZeroFigure) {
  Snapshot s = collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline());
  for (auto& d : s.devices)
    if (d.bdf == kHgx[1].nvme && d.link) d.link->cur_speed_gts = 0;
  auto o = evaluate_snapshot(s);
  for (const auto* r : o.results("link")) {
    EXPECT_EQ(std::find(r->devices.begin(), r->devices.end(), kHgx[1].nvme), r->devices.end())
        << r->title;
    EXPECT_EQ(r->consequence.find("0.0 of"), std::string::npos) << r->consequence;
  }
  for (auto& d : s.devices)
    if (d.bdf == kHgx[1].nvme && d.link) d.link->cur_width = 2;
  auto lost = evaluate_snapshot(std::move(s));
  bool named = false;
  for (const auto* r : lost.results("link"))
    if (std::find(r->devices.begin(), r->devices.end(), kHgx[1].nvme) != r->devices.end()) {
      named = true;
      EXPECT_EQ(r->verdict, Verdict::Fail);
      EXPECT_NE(r->consequence.find("2 of 4 lanes trained"), std::string::npos) << r->consequence;
      EXPECT_EQ(r->consequence.find("GB/s per direction"), std::string::npos) << r->consequence;
    }
  EXPECT_TRUE(named);
}

TEST(PathModelHgx, UnknownLinkSpeedIsUnknownCapacityNotZero) {
  Snapshot s = collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline());
  const std::string gpu2_port = s.find(kHgx[2].gpu)->parent;
  for (auto& d : s.devices)
    if ((d.bdf == kHgx[1].nvme || d.bdf == gpu2_port) && d.link)
      d.link->cur_speed_gts = d.link->max_speed_gts = 0;
  auto o = evaluate_snapshot(std::move(s));
  const PathModel m(*o.view);
  // GPU1: its drive's link is unknown, so is the ceiling; the hop says so.
  const auto near = m.nearest(kHgx[1].gpu, DataSource::LocalNvme);
  ASSERT_EQ(near.size(), 1U);
  EXPECT_TRUE(near.front()->unknown_capacity);
  EXPECT_FALSE(near.front()->hops.front().gb_s);
  EXPECT_EQ(near.front()->hops.front().source, CapacitySource::Unknown);
  EXPECT_NE(near.front()->hops.front().what.find("unknown"), std::string::npos);
  const Ceiling c1 = m.gpu_ceiling(kHgx[1].gpu, DataSource::LocalNvme);
  EXPECT_FALSE(c1.gb_s) << *c1.gb_s;
  EXPECT_EQ(c1.limited_by.rfind("capacity unknown in this input: 0000:3a:00.0 (nvme) x4", 0), 0U)
      << c1.limited_by;
  const auto json = hops_json(c1.hops);
  EXPECT_TRUE(json.at(0).at("gb_s").is_null()) << json.dump();
  // The node-wide NVMe figure cannot sum an unknown drive.
  EXPECT_FALSE(m.node_ceiling(DataSource::LocalNvme).gb_s);
  // GPU2: an unknown speed at the far end caps nothing; its drive (Gen4 x4) binds.
  const Ceiling c2 = m.gpu_ceiling(kHgx[2].gpu, DataSource::LocalNvme);
  ASSERT_TRUE(c2.gb_s) << c2.limited_by;
  EXPECT_NEAR(*c2.gb_s, 4 * 1.969, 0.01) << c2.limited_by;
  // No figure anywhere reads 0 GB/s.
  for (const auto& c : o.report.ceilings) EXPECT_TRUE(!c.gb_s || *c.gb_s > 0) << c.gpu;
}

// The project's H100 VM (h100-vm/snapshot, SOURCES.md): one H100 at 00:06.0, storage only
// virtio-blk vda (00:01.0, the ext4 root) and vdb (00:02.0, squashfs), a virtio-net eth0,
// no nvidia-fs.
TEST(PathModelH100Vm, VirtualStorageMakesGdsNotApplicable) {
  auto o = evaluate_snapshot(load_snapshot(kReal / "h100-vm" / "snapshot"));
  const PathModel m(*o.view);
  EXPECT_FALSE(m.gds_applicable());
  EXPECT_EQ(m.applicability().rfind("GDS not applicable on this node: ", 0), 0U);
  EXPECT_NE(m.applicability().find("0000:00:01.0 vda"), std::string::npos) << m.applicability();
  EXPECT_NE(m.applicability().find("virtio-blk"), std::string::npos);
  const auto virt = m.nearest("0000:00:06.0", DataSource::Virtual);
  ASSERT_EQ(virt.size(), 2U);
  EXPECT_FALSE(virt.front()->p2p);
  EXPECT_EQ(virt.front()->hops.front().kind, HopKind::Hypervisor);
  EXPECT_FALSE(virt.front()->hops.front().gb_s);
  EXPECT_EQ(m.best_kind("0000:00:06.0"), DataSource::Virtual);
  // nvidia-fs absent is a fact, not a failure; nothing fails; the verdict line says why.
  EXPECT_FALSE(o.report.gds_applicable);
  for (const auto& c : o.report.checks) EXPECT_NE(c.verdict, Verdict::Fail) << c.title;
  const CheckResult* nvfs = o.titled("gds-stack", "nvidia-fs");
  ASSERT_NE(nvfs, nullptr);
  EXPECT_EQ(nvfs->verdict, Verdict::Waived);
  const std::string line = platform_verification_line(o.report);
  EXPECT_EQ(line.rfind("Platform verification: GDS not applicable on this node: ", 0), 0U) << line;
  // The ext4 root on virtio vda is not called GDS-capable.
  const CheckResult* fsr = o.titled("gds-stack", "file systems");
  ASSERT_NE(fsr, nullptr);
  bool root = false;
  for (const auto& e : fsr->evidence)
    if (e.rfind("/ ext4 (/dev/vda)", 0) == 0) {
      root = true;
      EXPECT_EQ(e.find("GDS-capable"), std::string::npos) << e;
      EXPECT_NE(e.find("virtual storage 0000:00:01.0 vda"), std::string::npos) << e;
    }
  EXPECT_TRUE(root);
}

// The H100 VM with its virtio-net eth0 (00:03.0) listed before the virtio-blk disks: the
// "virtual storage" sentence describes a disk (virtio-blk), never the virtual NIC, which
// only the data NIC sentence after it names. (At 62ae123 TopologyView's storage-first order
// hid the sentence's front() of all virtual devices; the model now picks the disk itself.)
TEST(PathModelH100Vm, VirtualStorageSentenceDescribesTheDiskNotTheVirtualNic) {
  Snapshot s = load_snapshot(kReal / "h100-vm" / "snapshot");
  const auto nic = std::find_if(s.devices.begin(), s.devices.end(),
                                [](const Device& d) { return d.bdf == "0000:00:03.0"; });
  ASSERT_NE(nic, s.devices.end());
  std::rotate(s.devices.begin(), nic, nic + 1);  // eth0 first
  auto o = evaluate_snapshot(std::move(s));
  const PathModel m(*o.view);
  const std::string& a = m.applicability();
  const std::string storage = a.substr(0, a.find(", and no data NIC"));
  EXPECT_NE(storage.find("the only storage is virtual (0000:00:01.0 vda, 0000:00:02.0 vdb: "
                         "virtio-blk disk (1af4:1042)"),
            std::string::npos)
      << a;
  EXPECT_EQ(storage.find("virtio-net"), std::string::npos) << a;
  EXPECT_NE(a.find("0000:00:03.0 eth0: virtual NIC: virtio-net NIC (1af4:1041)"), std::string::npos)
      << a;
}

}  // namespace
}  // namespace gdsb::topo::testing
