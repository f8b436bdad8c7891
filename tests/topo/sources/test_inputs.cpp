// Offline inputs other than sysfs trees: lspci -xxxx dumps (libpci dump method), lspci
// -vvv text, saved snapshots, and bad inputs of every kind.
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/topo/render.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

fs::path write(const fixture::TempDir& dir, const std::string& name, const std::string& text) {
  fs::path p = dir.path() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

Outcome run_dump(const fixture::Machine& m, size_t bytes) {
  fixture::TempDir dir;
  return evaluate_snapshot(
      collect_pci_dump(write(dir, "dump.txt", fixture::lspci_dump(m, bytes)), offline()));
}

TEST(TopoDump, SameTreeAndPairsAsSysfs) {
  auto m = fixture::make_box(2, 1, 1, 2, 1);
  auto sys = run_sysfs(m);
  auto dump = run_dump(m, 4096);
  EXPECT_EQ(dump.snapshot.kind, SourceKind::PciDump);
  ASSERT_EQ(dump.snapshot.devices.size(), sys.snapshot.devices.size());
  for (size_t i = 0; i < sys.snapshot.devices.size(); ++i) {
    EXPECT_EQ(dump.snapshot.devices[i].bdf, sys.snapshot.devices[i].bdf);
    EXPECT_EQ(dump.snapshot.devices[i].parent, sys.snapshot.devices[i].parent)
        << sys.snapshot.devices[i].bdf;
    EXPECT_EQ(dump.snapshot.devices[i].role, sys.snapshot.devices[i].role)
        << sys.snapshot.devices[i].bdf;
  }
  ASSERT_EQ(dump.view->pairs().size(), sys.view->pairs().size());
  for (size_t i = 0; i < sys.view->pairs().size(); ++i) {
    const Pair& a = sys.view->pairs()[i];
    const Pair& b = dump.view->pairs()[i];
    EXPECT_EQ(a.distance, b.distance);
    EXPECT_EQ(a.acs_redirect_ports, b.acs_redirect_ports);
    if (a.label <= PathLabel::Phb) {
      EXPECT_EQ(a.label, b.label);
    }
  }
  EXPECT_EQ(dump.worst("acs-redirect"), Verdict::Pass);
  EXPECT_EQ(dump.worst("link"), Verdict::Pass);
  // A dump has no host facts: those checks are waived, not guessed.
  EXPECT_EQ(dump.worst("iommu"), Verdict::Waived);
  EXPECT_EQ(dump.worst("gds-stack"), Verdict::Waived);
  EXPECT_EQ(dump.worst("bar1"), Verdict::Waived);
}

TEST(TopoDump, AcsRedirectFoundInDump) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  fixture::find(m, "0000:02:01.0")->acs_ctl = 0x002c;  // RR CR EC
  auto o = run_dump(m, 4096);
  EXPECT_EQ(o.worst("acs-redirect"), Verdict::Fail);
  EXPECT_NE(o.titled("acs-redirect", "0000:02:01.0"), nullptr);
}

TEST(TopoDump, DumpWithoutExtendedSpaceWaivesAcs) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  fixture::find(m, "0000:02:01.0")->acs_ctl = 0x001d;
  for (size_t bytes : {256U, 64U}) {
    auto o = run_dump(m, bytes);
    EXPECT_EQ(o.worst("acs-redirect"), Verdict::Waived) << bytes;
    EXPECT_EQ(o.view->pair("0000:03:00.0", "0000:04:00.0")->label, PathLabel::Pix) << bytes;
  }
}

TEST(TopoDump, BadDumpsGiveClearErrors) {
  fixture::TempDir dir;
  EXPECT_THROW(collect_pci_dump(dir.path() / "missing.txt", offline()), RuntimeError);
  EXPECT_THROW(
      collect_pci_dump(write(dir, "garbage.txt", "hello world\nthis is not lspci\n"), offline()),
      RuntimeError);
  EXPECT_THROW(collect_pci_dump(write(dir, "empty.txt", ""), offline()), RuntimeError);
  std::string full = fixture::lspci_dump(fixture::make_box(1, 1, 1, 1, 0), 4096);
  for (size_t cut : {full.size() / 2, full.size() / 3 + 7, size_t{40}}) {
    auto p = write(dir, "cut.txt", full.substr(0, cut));
    try {
      auto o = evaluate_snapshot(collect_pci_dump(p, offline()));
      EXPECT_FALSE(o.snapshot.devices.empty());
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.txt"), std::string::npos);
    }
  }
}

constexpr const char* kTicketText =
    R"(00:01.0 PCI bridge: Intel Corporation Device 352a (rev 04) (prog-if 00 [Normal decode])
	Bus: primary=00, secondary=01, subordinate=04, sec-latency=0
	Capabilities: [40] Express (v2) Root Port (Slot+), MSI 00
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <16us
		LnkSta:	Speed 32GT/s, Width x16
	Capabilities: [148 v1] Access Control Services
		ACSCap:	SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
		ACSCtl:	SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
	NUMA node: 0
	IOMMU group: 1
	Kernel driver in use: pcieport

01:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)
	Bus: primary=01, secondary=02, subordinate=04, sec-latency=0
	Capabilities: [68] Express (v2) Upstream Port, MSI 00
		LnkCap:	Port #0, Speed 32GT/s, Width x16
		LnkSta:	Speed 32GT/s, Width x16
02:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)
	Bus: primary=02, secondary=03, subordinate=03, sec-latency=0
	Capabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
		LnkCap:	Port #0, Speed 32GT/s, Width x16
		LnkSta:	Speed 32GT/s, Width x16
	Capabilities: [200 v1] Access Control Services
		ACSCap:	SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
		ACSCtl:	SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
02:01.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)
	Bus: primary=02, secondary=04, subordinate=04, sec-latency=0
	Capabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
		LnkCap:	Port #0, Speed 32GT/s, Width x16
		LnkSta:	Speed 16GT/s (downgraded), Width x4 (downgraded)
	Capabilities: [200 v1] Access Control Services
		ACSCap:	SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
		ACSCtl:	SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
03:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
	Region 0: Memory at e2000000 (32-bit, non-prefetchable) [size=16M]
	Region 1: Memory at 38000000000 (64-bit, prefetchable) [size=128G]
	Capabilities: [60] Express (v2) Endpoint, MSI 00
		LnkCap:	Port #0, Speed 32GT/s, Width x16
		LnkSta:	Speed 32GT/s, Width x16
	NUMA node: 0
	Kernel driver in use: nvidia
04:00.0 Non-Volatile memory controller: Samsung Electronics Co Ltd NVMe SSD Controller PM174X (prog-if 02 [NVM Express])
	Capabilities: [70] Express (v2) Endpoint, MSI 00
		LnkCap:	Port #0, Speed 16GT/s, Width x4, ASPM L1
		LnkSta:	Speed 16GT/s, Width x4
	NUMA node: 0
	Kernel driver in use: nvme
)";

TEST(TopoLspciText, TicketTextRebuildsTreeAndFindsAcs) {
  fixture::TempDir dir;
  auto o = evaluate_snapshot(collect_lspci_text(write(dir, "ticket.txt", kTicketText)));
  const Snapshot& s = o.snapshot;
  ASSERT_EQ(s.devices.size(), 6U);
  EXPECT_EQ(s.find("0000:03:00.0")->role, Role::Gpu);
  EXPECT_EQ(s.find("0000:04:00.0")->role, Role::Nvme);
  EXPECT_EQ(s.find("0000:04:00.0")->parent, "0000:02:01.0");
  EXPECT_EQ(s.find("0000:02:01.0")->parent, "0000:01:00.0");
  EXPECT_EQ(s.find("0000:01:00.0")->role, Role::SwitchUpstream);
  EXPECT_EQ(s.find("0000:00:01.0")->iommu_group, 1);
  const Pair* p = o.view->pair("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(p->label, PathLabel::Pix);
  EXPECT_EQ(p->acs_redirect_ports, std::vector<std::string>{"0000:02:01.0"});
  EXPECT_EQ(o.worst("acs-redirect"), Verdict::Fail);
  // The NVMe drive's own link is fine; the fixture's downgraded DSP link is seen from below.
  EXPECT_EQ(o.worst("link"), Verdict::Pass);
  // A 128 GiB BAR1 passes without NVML (the memory size is not compared, and says so).
  EXPECT_EQ(o.worst("bar1"), Verdict::Pass);
  EXPECT_NE(o.results("bar1").front()->evidence.front().find("131072 MiB"), std::string::npos);
  EXPECT_EQ(o.worst("iommu"), Verdict::Waived);
}

TEST(TopoLspciText, WithoutRootAcsIsWaived) {
  std::string text = kTicketText;
  for (size_t pos;
       (pos = text.find("Capabilities: [200 v1] Access Control Services")) != std::string::npos;)
    text.replace(pos, 46, "Capabilities: <access denied>");
  fixture::TempDir dir;
  auto o = evaluate_snapshot(collect_lspci_text(write(dir, "user.txt", text)));
  EXPECT_EQ(o.worst("acs-redirect"), Verdict::Waived);
}

TEST(TopoLspciText, NumericIdsAndDomainsFromNnAndD) {
  fixture::TempDir dir;
  auto s = collect_lspci_text(
      write(dir, "nn.txt",
            "0001:c1:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] "
            "[10de:2330] (rev a1)\n"
            "\tRegion 1: Memory at 38000000000 (64-bit, prefetchable) [size=64G]\n"
            "0001:c2:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd Device "
            "[144d:a80a]\n"));
  const Device* g = s.find("0001:c1:00.0");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->vendor, 0x10de);
  EXPECT_EQ(g->device, 0x2330);
  EXPECT_EQ(g->class_id(), 0x0302);
  EXPECT_EQ(g->role, Role::Gpu);
  ASSERT_EQ(g->bars.size(), 1U);
  EXPECT_EQ(g->bars[0].size, 64ULL << 30);
  EXPECT_TRUE(g->bars[0].prefetchable);
  EXPECT_EQ(s.find("0001:c2:00.0")->role, Role::Nvme);
}

TEST(TopoLspciText, GarbageIsAClearError) {
  fixture::TempDir dir;
  EXPECT_THROW(collect_lspci_text(write(dir, "g.txt", "nothing here\n\tLnkSta: Speed 8GT/s\n")),
               RuntimeError);
  EXPECT_THROW(collect_lspci_text(dir.path() / "missing"), RuntimeError);
}

nlohmann::json comparable(const Outcome& o) {
  auto j = to_json(o.snapshot, *o.view, o.report, RunContext{});
  j.erase("source");
  j["snapshot"].erase("recorded_from");  // the input again, as "source"
  return j;
}

TEST(TopoSnapshot, SaveThenLoadGivesTheSameReport) {
  auto m = fixture::make_box(2, 1, 1, 2, 1);
  fixture::find(m, "0000:02:01.0")->acs_ctl = 0x001d;
  fixture::TempDir tree, snap;
  fixture::write_sysfs(m, tree.path());
  Snapshot s = collect_sysfs_root(tree.path(), offline());
  apply_gpu_facts(s, FixedMemory(80ULL << 30));
  save_snapshot(s, snap.path() / "snap");
  auto a = evaluate_snapshot(s);
  auto b = evaluate_snapshot(load_snapshot(snap.path() / "snap"));
  EXPECT_EQ(b.snapshot.kind, SourceKind::Snapshot);
  EXPECT_EQ(comparable(a), comparable(b));
  EXPECT_EQ(b.snapshot.find("0000:02:01.0")->config, s.find("0000:02:01.0")->config);
}

TEST(TopoSnapshot, SavingReplacesASnapshotNeverAForeignFileAndLeavesNoTemporary) {
  fixture::TempDir tree, ours, theirs;
  fixture::write_sysfs(fixture::make_box(1, 1, 1, 1, 1), tree.path());
  const Snapshot s = collect_sysfs_root(tree.path(), offline());
  save_snapshot(s, ours.path());
  save_snapshot(s, ours.path());  // an earlier snapshot is ours to replace
  EXPECT_EQ(load_snapshot(ours.path()).devices.size(), s.devices.size());
  for (const auto& e : fs::directory_iterator(ours.path()))
    EXPECT_EQ(e.path().filename(), "snapshot.json") << "left behind: " << e.path();
  const fs::path foreign = write(theirs, "snapshot.json", "precious\n");
  try {
    save_snapshot(s, theirs.path());
    ADD_FAILURE() << "a foreign snapshot.json was overwritten";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--allow-overwrite"), std::string::npos) << e.what();
  }
  std::string kept;
  std::getline(std::ifstream(foreign), kept);
  EXPECT_EQ(kept, "precious");
  save_snapshot(s, theirs.path(), /*allow_overwrite=*/true);
  EXPECT_EQ(load_snapshot(theirs.path()).devices.size(), s.devices.size());
}

TEST(TopoSnapshot, DamagedSnapshotsAreClearErrors) {
  fixture::TempDir dir;
  EXPECT_THROW(load_snapshot(dir.path() / "none"), RuntimeError);
  write(dir, "snapshot.json", R"({"schema": "gdsbench.topo-snapshot/1", "devices": [{"bdf": 3}]})");
  EXPECT_THROW(load_snapshot(dir.path()), RuntimeError);
  write(dir, "snapshot.json", R"({"schema": "something-else"})");
  EXPECT_THROW(load_snapshot(dir.path()), RuntimeError);
}

TEST(TopoSysfs, BadTreesAreErrorsOrWaivers) {
  fixture::TempDir dir;
  EXPECT_THROW(collect_sysfs_root(dir.path(), offline()), RuntimeError);
  // A device directory with nothing readable in it: collected with unknowns, no crash.
  fs::create_directories(dir.path() / "sys/bus/pci/devices/0000:00:01.0");
  write(dir, "sys/bus/pci/devices/0000:00:01.0/config", "\x01\x02");
  auto o = evaluate_snapshot(collect_sysfs_root(dir.path(), offline()));
  EXPECT_EQ(o.snapshot.devices.size(), 1U);
  EXPECT_EQ(o.report.verdict, Verdict::Pass);  // only waivers: nothing known to be wrong
  EXPECT_EQ(o.worst("gds-stack"), Verdict::Waived);
}

}  // namespace
}  // namespace gdsb::topo::testing
