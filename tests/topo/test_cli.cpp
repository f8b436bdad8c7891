// gdsb-topo command line: exit codes, messages, JSON file handling.
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "hgx_recording.hpp"
#include "p2pdma_recording.hpp"
#include "topo_cli_util.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

class TopoCli : public ::testing::Test {
 protected:
  fixture::TempDir dir;
  fs::path tree(const fixture::Machine& m, const std::string& name) {
    fs::path root = dir.path() / name;
    fixture::write_sysfs(m, root);
    return root;
  }
};

TEST_F(TopoCli, ExitCodesFollowTheVerdict) {
  auto healthy = fixture::make_box(1, 1, 1, 1, 0);
  // BAR1 stays waived without NVML; everything else passes.
  EXPECT_EQ(cli({"--sysfs-root", tree(healthy, "ok").string(), "-q"}).rc, 0);
  auto acs = healthy;
  fixture::find(acs, "0000:02:01.0")->acs_ctl = 0x001d;
  CliRun r = cli({"--sysfs-root", tree(acs, "acs").string()});
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.out.find("Platform verification: failed"), std::string::npos);
  EXPECT_NE(r.out.find("ACS-REDIRECT(RR CR)"), std::string::npos);  // tree mark
  auto translated = healthy;
  for (auto& [g, t] : translated.host.iommu_groups) t = "DMA";
  fs::path t = tree(translated, "dma");
  EXPECT_EQ(cli({"--sysfs-root", t.string()}).rc, 0);
  EXPECT_EQ(cli({"--sysfs-root", t.string(), "--warn-as-error"}).rc, 3);
}

// Issue 19 acceptance: a recorded root whose /proc/mounts says only "ext4 rw,relatime" and
// whose /proc/fs/ext4/<dev>/options says data=ordered gives no data-mode finding; the same
// root with data=writeback names it.
TEST_F(TopoCli, Ext4DataModeFromTheKernelsOptionsFile) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  m.host.mounts = {"/dev/nvme0n1p1 /data ext4 rw,relatime 0 0", "proc /proc proc rw 0 0"};
  m.host.jbd2 = {"nvme0n1p1-8"};
  m.host.ext4_options = {{"nvme0n1p1", "rw\nerrors=remount-ro\ncommit=5\ndata=ordered\n"}};
  CliRun ok = cli({"--sysfs-root", tree(m, "ordered").string()});
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_EQ(ok.out.find("lacks data=ordered"), std::string::npos) << ok.out;
  EXPECT_EQ(ok.out.find("ext4 data="), std::string::npos) << ok.out;
  m.host.ext4_options = {{"nvme0n1p1", "rw\nerrors=remount-ro\ncommit=5\ndata=writeback\n"}};
  CliRun wb = cli({"--sysfs-root", tree(m, "writeback").string()});
  EXPECT_EQ(wb.rc, 3) << wb.out;  // the only data mount cannot serve GDS
  EXPECT_NE(wb.out.find("ext4 data=writeback: GDS supports ext4 in ordered mode only"),
            std::string::npos)
      << wb.out;
}

TEST_F(TopoCli, UsageAndCollectionErrors) {
  EXPECT_EQ(cli({"--no-such-option"}).rc, 2);
  EXPECT_EQ(cli({"--pci-dump", "a", "--lspci-text", "b"}).rc, 2);
  CliRun r = cli({"--pci-dump", (dir.path() / "missing.txt").string()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("missing.txt"), std::string::npos);
  EXPECT_EQ(cli({"--from-snapshot", dir.path().string()}).rc, 1);
  EXPECT_EQ(cli({"--help"}).rc, 0);
}

// An input holding one PCI address twice is refused (exit 1), naming the file and both
// lines: the QEMU recording (64 lines) with its 00:04.0 stanza (lines 40-51) appended
// after a blank line 65, so the copy starts on line 66.
TEST_F(TopoCli, OneAddressTwiceIsRefusedNamingBothLines) {
  std::ifstream in(std::string(GDSB_TOPO_REAL_FIXTURES) + "/qemu-vm-virtio-lspci-v.txt");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 64U);
  ASSERT_EQ(lines[39].rfind("00:04.0 SCSI storage controller", 0), 0U);
  const fs::path twice = dir.path() / "twice.txt";
  {
    std::ofstream out(twice);
    for (const auto& l : lines) out << l << '\n';
    out << '\n';
    for (size_t i = 39; i < 51; ++i) out << lines[i] << '\n';
  }
  const CliRun r = cli({"--lspci-text", twice.string()});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(twice.string() + ": PCI address 0000:00:04.0 is recorded twice (line 40 and line 66)"),
            std::string::npos)
      << r.err;
}

// Issue 43: the P2PDMA facts through the command line, text and JSON: the ready node exits 0
// and says so; with the H200 VM's own params (RegistryDwords "") it exits 3 naming the registry
// and its modprobe.d line, and the JSON carries every fact.
TEST_F(TopoCli, P2pdmaReadinessInTextAndJson) {
  CliRun ok = cli({"--sysfs-root", tree(p2pdma_ready_node(), "ready").string()});
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("[PASS]   gds-stack: P2PDMA mode (GDS without nvidia-fs)\n           - P2PDMA ready\n"),
            std::string::npos) << ok.out;
  fixture::Machine m = p2pdma_ready_node();
  m.host.files["proc/driver/nvidia/params"] = h200_recording("proc-driver-nvidia-params.txt");
  const fs::path out = dir.path() / "registry.json";
  CliRun r = cli({"--sysfs-root", tree(m, "registry").string(), "--json", out.string()});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("- P2PDMA not ready: driver registry\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("remedy: driver registry: echo 'options nvidia NVreg_RegistryDwords="
                       "\"RMForceStaticBar1=1;RmForceDisableIomapWC=1\"' > /etc/modprobe.d/"
                       "nvidia-p2pdma.conf, then update-initramfs -u -k $(uname -r) (Ubuntu) or "
                       "dracut -f (RHEL/SLES), and reboot\n"),
            std::string::npos) << r.out;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  const auto& p = j.at("p2pdma");
  EXPECT_EQ(p.at("verdict").get<std::string>(), "P2PDMA not ready: driver registry");
  EXPECT_FALSE(p.at("ready").get<bool>());
  ASSERT_EQ(p.at("facts").size(), 8U);
  for (const auto& f : p.at("facts"))
    EXPECT_EQ(f.at("state").get<std::string>(),
              f.at("name").get<std::string>() == "driver registry" ? "missing" : "met")
        << f.dump();
}

TEST_F(TopoCli, JsonReportFollowsTheContract) {
  fs::path root = tree(fixture::make_box(1, 1, 1, 1, 1), "box");
  fs::path out = dir.path() / "topo.json";
  ASSERT_EQ(cli({"--sysfs-root", root.string(), "--json", out.string(), "-q"}).rc, 0);
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "gdsbench.topo/1");
  EXPECT_EQ(j["tool"]["name"], "gdsb-topo");
  EXPECT_EQ(j["source"]["kind"], "sysfs-root");
  EXPECT_EQ(j["verdict"], "pass");
  for (const char* k : {"argv", "context", "interrupted", "devices", "checks", "pairs", "ceilings"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k :
       {"host", "kernel", "os", "cpu_model", "cpus", "started_at", "ended_at", "env"})
    EXPECT_TRUE(j["context"].contains(k)) << k;
  const auto& gpu = *std::find_if(j["devices"].begin(), j["devices"].end(),
                                  [](const auto& d) { return d["role"] == "gpu"; });
  EXPECT_EQ(gpu["vendor"], "10de");
  EXPECT_EQ(gpu["class"], "0302");
  EXPECT_EQ(gpu["link"]["max_width"], 16);
  const auto& dsp = *std::find_if(j["devices"].begin(), j["devices"].end(),
                                  [](const auto& d) { return d["role"] == "switch_downstream"; });
  EXPECT_EQ(dsp["acs"]["cap"], "0x007f");
  EXPECT_EQ(j["pairs"][0]["label"], "PIX");
  EXPECT_EQ(j["pairs"][0]["p2pdma"], "BUS_ADDR");
  for (const auto& c : j["checks"])
    for (const char* k :
         {"id", "title", "verdict", "devices", "evidence", "consequence", "remedy", "reason"})
      EXPECT_TRUE(c.contains(k)) << k;
  EXPECT_FALSE(fs::exists(out.string() + ".gdsb-tmp"));
  // Replacing our own report is fine; an unrelated file needs --allow-overwrite.
  EXPECT_EQ(cli({"--sysfs-root", root.string(), "--json", out.string(), "-q"}).rc, 0);
  fs::path other = dir.path() / "notes.txt";
  std::ofstream(other) << "precious";
  CliRun r = cli({"--sysfs-root", root.string(), "--json", other.string(), "-q"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--allow-overwrite"), std::string::npos);
  std::ifstream keep(other);
  std::string kept;
  std::getline(keep, kept);
  EXPECT_EQ(kept, "precious");
  EXPECT_EQ(
      cli({"--sysfs-root", root.string(), "--json", other.string(), "-q", "--allow-overwrite"}).rc,
      0);
}

TEST_F(TopoCli, HtmlReportIsWrittenAndForeignFilesAreKept) {
  fs::path root = tree(fixture::make_box(1, 1, 1, 1, 1), "html-box");
  fs::path page = dir.path() / "topo.html";
  ASSERT_EQ(cli({"--sysfs-root", root.string(), "--html", page.string(), "-q"}).rc, 0);
  std::ifstream in(page);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("gdsbench.topo/1"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  // An unrelated file is refused before anything runs, and kept as it was.
  fs::path other = dir.path() / "page.html";
  std::ofstream(other) << "precious";
  CliRun r = cli({"--sysfs-root", root.string(), "--html", other.string(), "-q"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--allow-overwrite"), std::string::npos);
  std::ifstream keep(other);
  std::string kept;
  std::getline(keep, kept);
  EXPECT_EQ(kept, "precious");
}

TEST_F(TopoCli, SaveSnapshotKeepsAForeignSnapshotJsonUnlessAllowed) {
  fs::path root = tree(fixture::make_box(1, 1, 1, 1, 1), "snap-box");
  fs::path snap = dir.path() / "theirs";
  fs::create_directories(snap);
  std::ofstream(snap / "snapshot.json") << "precious";
  CliRun r = cli({"--sysfs-root", root.string(), "--save-snapshot", snap.string(), "-q"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--allow-overwrite"), std::string::npos) << r.err;
  std::string kept;
  std::getline(std::ifstream(snap / "snapshot.json"), kept);
  EXPECT_EQ(kept, "precious");
  EXPECT_EQ(cli({"--sysfs-root", root.string(), "--save-snapshot", snap.string(), "-q",
                 "--allow-overwrite"})
                .rc,
            0);
  EXPECT_EQ(cli({"--from-snapshot", snap.string(), "-q"}).rc, 0);
}

TEST_F(TopoCli, CeilingWithoutAPeerLinkSaysWhyInsteadOfAFigure) {
  // The GPU test machine's shape: one GPU, virtio devices without PCIe link data.
  fs::path root = tree(fixture::make_flat_vm(), "flat-vm");
  CliRun r = cli({"--sysfs-root", root.string()});
  EXPECT_NE(r.out.find("have no ceiling from this input:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("limited to unknown"), std::string::npos) << r.out;
}

TEST_F(TopoCli, SaveSnapshotThenReplayGivesSameJson) {
  fs::path root = tree(fixture::make_box(2, 1, 1, 2, 1), "box");
  fs::path a = dir.path() / "a.json", b = dir.path() / "b.json", snap = dir.path() / "snap";
  ASSERT_EQ(
      cli({"--sysfs-root", root.string(), "--save-snapshot", snap.string(), "--json", a.string()})
          .rc,
      0);
  ASSERT_EQ(cli({"--from-snapshot", snap.string(), "--json", b.string(), "--matrix"}).rc, 0);
  auto ja = nlohmann::json::parse(std::ifstream(a));
  auto jb = nlohmann::json::parse(std::ifstream(b));
  EXPECT_EQ(jb["source"]["kind"], "snapshot");
  for (const char* k : {"devices", "checks", "pairs", "ceilings", "verdict"})
    EXPECT_EQ(ja[k], jb[k]) << k;
}

}  // namespace
}  // namespace gdsb::topo::testing

namespace gdsb::topo::testing {
namespace {

// Acceptance of issue 10 on the recorded 8x H100 HGX (tests/topo/fixtures/real).
TEST_F(TopoCli, RealHgxH100LspciTextExitsZeroWithNamesAndNodeCeiling) {
  const std::string text = std::string(GDSB_TOPO_REAL_FIXTURES) + "/hgx-h100-lspci-vvv.txt";
  fs::path out = dir.path() / "hgx.json";
  CliRun r = cli({"--lspci-text", text, "--json", out.string()});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("Platform verification: succeeded: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[FAIL]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Node-wide GDS reads from all NVMe drives limited to ~63.0 GB/s by 8 NVMe"),
            std::string::npos)
      << r.out;
  // Names are whole: no lspci suffix left, none cut at 48 characters.
  EXPECT_NE(r.out.find("Intel Corporation NVMe DC SSD [3DNAND, Sentinel Rock Controller] [nvme]"),
            std::string::npos);
  EXPECT_EQ(r.out.find("(prog-if"), std::string::npos);
  auto j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["node_ceilings"]["nvme"]["peers"].size(), 8U);
  EXPECT_EQ(j["ceilings"].size(), 8U);
  EXPECT_EQ(j["nic_ceilings"].size(), 8U);
}

// The project's H100 VM snapshot (fixtures/real/h100-vm, SOURCES.md): storage only virtio
// vda/vdb, a virtio NIC, no nvidia-fs. GDS does not apply: exit 0, and the verdict says why.
TEST_F(TopoCli, H100VmSnapshotIsNotApplicableAndExitsZero) {
  const std::string snap = std::string(GDSB_TOPO_REAL_FIXTURES) + "/h100-vm/snapshot";
  CliRun r = cli({"--from-snapshot", snap});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("Platform verification: GDS not applicable on this node: the only "
                       "storage is virtual (0000:00:01.0 vda, 0000:00:02.0 vdb"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("[FAIL]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(/dev/vda): GDS-capable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(/dev/vda): on virtual storage 0000:00:01.0 vda"), std::string::npos);
  fs::path out = dir.path() / "vm.json";
  ASSERT_EQ(cli({"--from-snapshot", snap, "--json", out.string(), "-q"}).rc, 0);
  auto j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["gds_applicable"], false);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["data_paths"].size(), 2U);  // GPU0 x vda, vdb
  EXPECT_EQ(j["data_paths"][0]["kind"], "virtual");
  EXPECT_EQ(j["data_paths"][0]["p2p"], false);
}

TEST_F(TopoCli, NothingVerifiedIsSaidWhenEveryCheckIsWaived) {
  // A recording with only a GPU and no config space detail: every check waives.
  fs::path f = dir.path() / "gpu-only.txt";
  std::ofstream(f) << "01:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)\n";
  CliRun r = cli({"--lspci-text", f.string()});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("Platform verification: nothing verified: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Platform verification: succeeded"), std::string::npos) << r.out;
}

// Issue 29: gdsb-topo live on this machine. CI machines have no GPU: there GDS does not
// apply, gdsb-topo says so in one sentence and exits 0, and nothing FAILs (the nvidia-fs,
// udev and file-system facts are kept as facts). Read from sysfs by the test itself: any
// PCI function of vendor 0x10de and class 0x03xx is an NVIDIA GPU.
bool sysfs_shows_nvidia_gpu() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::string vendor, cls;
    std::ifstream(e.path() / "vendor") >> vendor;
    std::ifstream(e.path() / "class") >> cls;
    if (vendor == "0x10de" && cls.rfind("0x03", 0) == 0) return true;
  }
  return false;
}

TEST_F(TopoCli, LiveWithoutAnNvidiaGpuIsNotApplicableAndExitsZero) {
  if (!fs::exists("/sys/bus/pci/devices")) GTEST_SKIP() << "no /sys/bus/pci on this machine";
  if (sysfs_shows_nvidia_gpu()) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  CliRun r = cli({});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Platform verification: GDS not applicable on this node: no NVIDIA GPU\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("[FAIL]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("modprobe nvidia-fs"), std::string::npos) << r.out;
}

// Issue 34 item 1, at the edge: the Ethernet node (hgx_recording.hpp: no RDMA device, kernel
// 4.15 without nvidia-peermem) with issue 34's Lustre mount over TCP, saved and judged by the
// tool. Before, rdma-stack failed twice and the tool exited 3; the node is fine: exit 0.
TEST(TopoCliTransport, EthernetNodeWithLustreOverTcpExitsZero) {
  fixture::TempDir dir;
  save_snapshot(hgx_ethernet_node({"192.168.0.7@tcp:/scratch /scratch lustre rw,flock,lazystatfs 0 0"}),
                dir.path());
  const CliRun r = cli({"--from-snapshot", dir.path().string()});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("Platform verification: failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/scratch"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gdsb::topo::testing
