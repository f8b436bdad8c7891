// Recordings of real machines (tests/topo/fixtures/real, origins in SOURCES.md there) and
// the GPU test machines described in /work/shared/GPU-MACHINE.md. Every expectation below
// was written by reading the recording, not from gdsb-topo's output.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/path_model.hpp"
#include "gdsb/topo/render.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;


Outcome hgx(bool names) {
  CollectOptions o = offline();
  o.lookup_names = names;
  return evaluate_snapshot(collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", o));
}

TEST(TopoRealHgxH100, GpusDrivesAndLabels) {
  auto o = hgx(false);
  ASSERT_EQ(o.view->gpus().size(), 8U);
  EXPECT_EQ(o.snapshot.with_role(Role::Nvme).size(), 8U);
  for (size_t i = 0; i < 8; ++i) {
    const HgxGpu& g = kHgx[i];
    EXPECT_EQ(o.view->gpus()[i]->bdf, g.gpu);
    EXPECT_EQ(o.snapshot.find(g.gpu)->numa_node, g.numa) << g.gpu;
    const Pair* n = o.view->pair(g.gpu, g.nvme);
    ASSERT_NE(n, nullptr) << g.gpu;
    EXPECT_EQ(n->label, PathLabel::Pix) << g.gpu;
    EXPECT_EQ(n->p2pdma, P2pdmaMap::BusAddr) << g.gpu;
    EXPECT_EQ(o.view->pair(g.gpu, g.nic)->label, PathLabel::Pix) << g.gpu;
    // Another GPU's drive: other socket for GPU0 x drive of GPU4, same socket otherwise.
    EXPECT_EQ(o.view->pair(g.gpu, kHgx[(i + 4) % 8].nvme)->label, PathLabel::Sys) << g.gpu;
    EXPECT_EQ(o.view->pair(g.gpu, kHgx[i ^ 1].nvme)->label, PathLabel::Node) << g.gpu;
  }
  // The PEX890xx upstream port above GPU0, its root port, the redirecting PMC port.
  EXPECT_EQ(o.snapshot.find("0000:16:00.0")->role, Role::SwitchUpstream);
  EXPECT_EQ(o.snapshot.find("0000:15:01.0")->role, Role::RootPort);
  EXPECT_TRUE(acs_redirects(*o.snapshot.find("0000:82:00.0")));
}

TEST(TopoRealHgxH100, ChecksPassAsAHumanReadsThem) {
  auto o = hgx(false);
  EXPECT_EQ(o.worst("acs-redirect"), Verdict::Pass);  // redirect only above the NVSwitches
  EXPECT_EQ(o.worst("iommu"), Verdict::Waived);       // lspci text holds no IOMMU mode
  EXPECT_EQ(o.worst("gds-stack"), Verdict::Waived);   // nor host facts
  EXPECT_EQ(o.worst("link"), Verdict::Pass);
  EXPECT_EQ(o.worst("numa"), Verdict::Pass);
  EXPECT_EQ(o.worst("pair-locality"), Verdict::Pass);
  // NVMe and data NIC per GPU, and one result listing the BCM5720 management ports.
  ASSERT_EQ(o.results("pair-locality").size(), 17U);
  const CheckResult* mgmt = o.titled("pair-locality", "management NICs");
  ASSERT_NE(mgmt, nullptr);
  EXPECT_EQ(mgmt->devices, (std::vector<std::string>{"0000:01:00.0", "0000:01:00.1"}));
  for (const auto& g : kHgx) {
    const CheckResult* r = nullptr;
    for (const auto* c : o.results("pair-locality"))
      if (c->title.find("NVMe") != std::string::npos && c->devices.front() == g.gpu) r = c;
    ASSERT_NE(r, nullptr) << g.gpu;
    EXPECT_TRUE(contains(r->devices, g.nvme)) << g.gpu;
  }
  auto bar1 = o.results("bar1");
  ASSERT_EQ(bar1.size(), 8U);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(bar1[i]->verdict, Verdict::Pass) << kHgx[i].gpu;
    EXPECT_EQ(bar1[i]->devices.front(), kHgx[i].gpu);
    EXPECT_NE(bar1[i]->evidence.front().find("BAR1 (resource 2, prefetchable) 131072 MiB"),
              std::string::npos)
        << bar1[i]->evidence.front();
  }
  EXPECT_EQ(o.report.verdict, Verdict::Pass);
  std::string line = platform_verification_line(o.report);
  EXPECT_EQ(line.rfind("Platform verification: succeeded: ", 0), 0U) << line;
  // iommu, gds-stack, rdma-stack (no host facts in lspci text), mgmt NICs
  EXPECT_NE(line.find("4 waived"), std::string::npos) << line;
}

TEST(TopoRealHgxH100, CeilingsPerGpuAndNodeWide) {
  auto o = hgx(false);
  const double drive = 4 * 1.969;  // Gen4 x4
  ASSERT_EQ(o.report.ceilings.size(), 8U);
  for (size_t i = 0; i < 8; ++i) {
    const Ceiling& c = o.report.ceilings[i];
    ASSERT_TRUE(c.gb_s) << c.limited_by;
    EXPECT_NEAR(*c.gb_s, drive, 0.01);  // one drive below each GPU's switch
    EXPECT_EQ(c.peers, std::vector<std::string>{kHgx[i].nvme});
  }
  ASSERT_TRUE(o.report.node_nvme.gb_s) << o.report.node_nvme.limited_by;
  EXPECT_EQ(o.report.node_nvme.peers.size(), 8U);
  EXPECT_NEAR(*o.report.node_nvme.gb_s, 8 * drive, 0.05);  // no shared link binds
  // Remote GDS into GPU1 through its ConnectX-7: Gen5 x16 on both ends.
  ASSERT_TRUE(o.report.nic_ceilings[1].gb_s);
  EXPECT_NEAR(*o.report.nic_ceilings[1].gb_s, 16 * 3.938, 0.05);
}

TEST(TopoRealHgxH100, NamesInFullFromTheIdDatabase) {
  if (!fs::exists("/usr/share/misc/pci.ids") && !fs::exists("/usr/share/hwdata/pci.ids"))
    GTEST_SKIP() << "no pci.ids installed (ci/install-deps.sh installs it)";
  auto o = hgx(true);
  const Device* g = o.snapshot.find("0000:19:00.0");
  EXPECT_EQ(g->vendor, 0x10de);
  EXPECT_EQ(g->device, 0x2330);  // "Device 2330" in the recording
  EXPECT_NE(g->name.find("H100"), std::string::npos) << g->name;
  EXPECT_EQ(g->name.find("(rev"), std::string::npos) << g->name;
  // An NVMe name is kept whole, without lspci's (prog-if ...) suffix.
  EXPECT_EQ(o.snapshot.find("0000:4b:00.0")->name,
            "Intel Corporation NVMe DC SSD [3DNAND, Sentinel Rock Controller]");
  EXPECT_EQ(o.snapshot.find("0000:00:00.0")->vendor, 0x8086);  // from the vendor's name
}

// The HGX recording was taken without -nn, so IDs come from names. pci.ids of 2018-10-24 to
// 2021-03-15 names 14e4:165f "NetXtreme BCM5720 2-port Gigabit Ethernet PCIe", the recording
// "NetXtreme BCM5720 Gigabit Ethernet PCIe" (fixtures/real/pci-ids-2021.03.11-excerpt.ids,
// SOURCES.md). Read off both: no vendor whose name starts "Broadcom Inc. and subsidiaries
// NetXtreme ..." lists that device, so the LOM ports' IDs are unknown; 1166 "Broadcom" (whose
// device 0000 is a CMIC-LE host bridge) was a wrong ID. The ConnectX-7 is named alike in
// both (15b3:1021); "NVIDIA Corporation Device 2330" names its vendor exactly (10de).
TEST(TopoRealHgxH100, ANameTheIdDatabaseGivesOtherwiseLeavesTheIdsUnknown) {
  CollectOptions o = offline();
  o.lookup_names = true;
  o.pci_ids_path = (kReal / "pci-ids-2021.03.11-excerpt.ids").string();
  auto out = evaluate_snapshot(collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", o));
  for (const char* lom : {"0000:01:00.0", "0000:01:00.1"}) {
    const Device* d = out.snapshot.find(lom);
    ASSERT_NE(d, nullptr) << lom;
    EXPECT_EQ(d->vendor, 0) << lom;
    EXPECT_EQ(pci_ids_text(*d), "unknown") << lom;
    EXPECT_EQ(d->role, Role::Nic) << lom;  // its class is in the text
    EXPECT_EQ(classify_nic(*d).role, NicRole::Management) << lom;
  }
  const Device* cx7 = out.snapshot.find(kHgx[0].nic);
  EXPECT_EQ(pci_ids_text(*cx7), "15b3:1021");
  EXPECT_EQ(classify_nic(*cx7).role, NicRole::Data);
  const Device* gpu = out.snapshot.find(kHgx[0].gpu);
  EXPECT_EQ(pci_ids_text(*gpu), "10de:2330");
  EXPECT_EQ(out.view->gpus().size(), 8U);
  // What the report prints of the LOM ports: "unknown", never an ID of another vendor.
  std::ostringstream rendered;
  TextOptions verbose;
  verbose.verbose = true;
  render_text(rendered, out.snapshot, *out.view, out.report, verbose);
  const std::string text = rendered.str();
  EXPECT_EQ(text.find("1166:"), std::string::npos);
  // The two LOM ports share one why, said once for both (issue 27).
  EXPECT_NE(text.find("0000:01:00.0, 0000:01:00.1: vendor:device unknown, so no known InfiniBand"),
            std::string::npos)
      << text;
  bool said = false;
  for (const auto& n : out.snapshot.notes)
    said = said || n.find("their vendor:device IDs are unknown") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TopoRealHgxH100, MissingIdDatabaseIsSaidOnce) {
  CollectOptions o = offline();
  o.lookup_names = true;
  o.pci_ids_path = "/nonexistent/pci.ids";
  Snapshot s = collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", o);
  size_t notes = 0;
  for (const auto& n : s.notes) notes += n.find("/nonexistent/pci.ids not readable") != std::string::npos;
  EXPECT_EQ(notes, 1U);
  EXPECT_EQ(s.find("0000:19:00.0")->name, "NVIDIA Corporation Device 2330");
}

// The GPU test machines (GPU-MACHINE.md): Firecracker VMs, flat bus 00, virtio disks
// 1af4:1042 and NIC 1af4:1041, H100 10de:2330 or two H200 10de:2335 at 06.0 and 07.0.
fixture::Machine h200_vm() {
  fixture::Machine m = fixture::make_flat_vm();
  for (auto& d : m.devs)
    if (d.vendor == 0x10de) {
      d.device = 0x2335;
      d.bars = {{0, 16ULL << 20}, {2, 256ULL << 30}, {4, 32ULL << 20}};  // 64-bit BAR0
    }
  fixture::Dev second = *fixture::find(m, "0000:00:06.0");
  second.bdf = "0000:00:07.0";
  m.devs.push_back(second);
  fixture::Dev vdb = *fixture::find(m, "0000:00:02.0");
  vdb.bdf = "0000:00:04.0";
  vdb.block = {"vdb"};
  m.devs.push_back(vdb);
  return m;
}

TEST(TopoGpuTestMachine, VirtioIsVirtualStorageAndNothingFailsFalsely) {
  auto o = run_sysfs(h200_vm());
  ASSERT_EQ(o.view->gpus().size(), 2U);
  EXPECT_EQ(o.snapshot.find("0000:00:02.0")->role, Role::Storage);
  EXPECT_EQ(o.snapshot.find("0000:00:04.0")->role, Role::Storage);
  EXPECT_EQ(o.view->virtual_devices().size(), 3U);  // vda, vdb, eth0
  EXPECT_TRUE(o.view->peers().empty());
  EXPECT_EQ(o.worst("pair-locality"), Verdict::Waived);
  // The waiver names the virtual devices; why they have no P2P path is said where the
  // virtual devices are listed (issue 27).
  const std::string& waiver = o.results("pair-locality").front()->reason;
  EXPECT_NE(waiver.find("only virtual ones ("), std::string::npos) << waiver;
  EXPECT_NE(waiver.find("0000:00:02.0"), std::string::npos) << waiver;
  EXPECT_NE(virtual_device_reason(*o.snapshot.find("0000:00:02.0")).find("virtio-blk"),
            std::string::npos);
  EXPECT_EQ(o.worst("bar1"), Verdict::Pass);
  EXPECT_NE(o.results("bar1").front()->evidence.front().find("262144 MiB"), std::string::npos);
  EXPECT_EQ(o.worst("link"), Verdict::Pass);
  EXPECT_EQ(o.worst("acs-redirect"), Verdict::Waived);
  // Only the true failures of these VMs: no nvidia-fs, no udev database.
  for (const auto& c : o.report.checks)
    if (c.verdict == Verdict::Fail) {
      EXPECT_EQ(c.id, "gds-stack") << c.title;
    }
  ASSERT_EQ(o.report.ceilings.size(), 2U);
  EXPECT_FALSE(o.report.ceilings[0].gb_s);
  EXPECT_NE(o.report.ceilings[0].limited_by.find("storage here is virtual"), std::string::npos);
  EXPECT_NE(o.report.node_nvme.limited_by.find("virtio-blk"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::topo::testing

namespace gdsb::topo::testing {
namespace {

// QEMU/KVM guest from an LKML post (SOURCES.md): `lspci -v` without ids. Read off it:
// 00:01.0 virtio-net, 00:02.0 virtio-vsock, 00:03.0 virtio-console, 00:04.0 and 00:05.0
// virtio-blk ("SCSI storage controller: Red Hat, Inc. Virtio 1.0 block device"); no GPU,
// no PCIe capability, no NVMe. Expected: two virtual disks and a virtual NIC, no GDS
// peer, every check waived, no ceiling figure, and with no NVIDIA GPU on the bus
// "GDS not applicable on this node: no NVIDIA GPU" (issue 29).
TEST(TopoRealQemuVm, VirtioDisksAreVirtualStorageAndNothingIsVerified) {
  if (!fs::exists("/usr/share/misc/pci.ids") && !fs::exists("/usr/share/hwdata/pci.ids"))
    GTEST_SKIP() << "no pci.ids installed: without -nn the IDs come from the names";
  CollectOptions opt = offline();
  opt.lookup_names = true;
  auto o = evaluate_snapshot(collect_lspci_text(kReal / "qemu-vm-virtio-lspci-v.txt", opt));
  ASSERT_EQ(o.snapshot.devices.size(), 5U);
  for (const char* disk : {"0000:00:04.0", "0000:00:05.0"}) {
    const Device* d = o.snapshot.find(disk);
    EXPECT_EQ(d->vendor, 0x1af4) << disk;
    EXPECT_EQ(d->device, 0x1042) << disk;
    EXPECT_EQ(d->role, Role::Storage) << disk;
    EXPECT_NE(virtual_device_reason(*d).find("virtio-blk"), std::string::npos);
  }
  EXPECT_EQ(o.snapshot.find("0000:00:01.0")->role, Role::Nic);
  EXPECT_EQ(o.view->virtual_devices().size(), 3U);
  EXPECT_TRUE(o.view->gpus().empty());
  EXPECT_TRUE(o.view->peers().empty());
  for (const auto& c : o.report.checks) EXPECT_EQ(c.verdict, Verdict::Waived) << c.id;
  // No NVIDIA GPU on the recorded bus: GDS does not apply (issue 29).
  EXPECT_EQ(platform_verification_line(o.report),
            "Platform verification: GDS not applicable on this node: no NVIDIA GPU");
  EXPECT_FALSE(o.report.node_nvme.gb_s);
  EXPECT_NE(o.report.node_nvme.limited_by.find("no GPU"), std::string::npos);
}

// Issue 29: the recordings of the corpus with no NVIDIA GPU (read from each file: no
// vendor 10de function in any). fujitsu-p8010 has Intel's GM965 VGA, hwloc-96em64t a
// Radeon VGA and hwloc-192em64t a non-NVIDIA VGA: another vendor's GPU is no GDS target.
// GDS is "not applicable: no NVIDIA GPU", nothing fails, and no check offers a remedy.
Snapshot recorded(const std::string& file) {
  const fs::path p = kReal / file;
  if (p.extension() == ".xml") return collect_hwloc_xml(p, offline());
  if (file.find("-lspci-v.txt") != std::string::npos) return collect_lspci_text(p, offline());
  return collect_pci_dump(p, offline());
}

TEST(TopoRealNoNvidiaGpu, GdsIsNotApplicableAndNothingFails) {
  for (const char* file :
       {"fsl-p2020-lspci-nnxxxx.txt", "fujitsu-p8010-lspci-xxxx.txt",
        "gigabyte-ich7-lspci-vvvxxxx.txt", "ibm-pcix-domains-lspci-xxx.txt",
        "qemu-vm-virtio-lspci-v.txt", "hwloc-16intel64-manyVFs.xml",
        "hwloc-192em64t-24n8c2t.xml", "hwloc-96em64t-4n4d3ca2co-pci.xml"}) {
    SCOPED_TRACE(file);
    const Outcome o = evaluate_snapshot(recorded(file));
    EXPECT_FALSE(o.snapshot.devices.empty());
    EXPECT_TRUE(o.view->gpus().empty());
    EXPECT_FALSE(o.report.gds_applicable);
    EXPECT_EQ(o.report.applicability, kNoNvidiaGpu);
    EXPECT_EQ(platform_verification_line(o.report),
              "Platform verification: GDS not applicable on this node: no NVIDIA GPU");
    for (const auto& c : o.report.checks) {
      EXPECT_NE(c.verdict, Verdict::Fail) << c.id << ": " << c.consequence;
      EXPECT_NE(c.verdict, Verdict::Warn) << c.id << ": " << c.consequence;
    }
  }
}

// A GPU the bus shows without any driver facts (an lspci dump: no NVML, no driver) is
// still a GPU: GDS could apply once the driver is there, so the verdict is not "no NVIDIA
// GPU". asus-p6t6 holds a GeForce 210 (GT218) at 06:00.0; the Lenovo dump an MX150
// (10de:1d10) at 02:00.0; hwloc-64intel64 two 10de:11ba VGA functions.
TEST(TopoRealNvidiaGpuWithoutDriverFacts, KeepsItsChecks) {
  for (const char* file : {"asus-p6t6-x58-lspci-xxxx.txt",
                           "lenovo-mx150-thunderbolt-lspci-vvvxxxx.txt",
                           "hwloc-64intel64-3g2n+2n-irregulargroups+pci.xml"}) {
    SCOPED_TRACE(file);
    const Outcome o = evaluate_snapshot(recorded(file));
    EXPECT_FALSE(o.view->gpus().empty());
    EXPECT_NE(o.report.applicability, kNoNvidiaGpu);
    EXPECT_EQ(platform_verification_line(o.report).find("no NVIDIA GPU"), std::string::npos);
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
