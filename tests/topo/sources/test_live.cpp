// This machine (label integration): must not crash, must give valid JSON, and a saved
// snapshot must replay to the same report. hwloc's own XML export feeds --hwloc-xml.
#include <hwloc.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/topo/ext4_mode.hpp"
#include "gdsb/topo/render.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

nlohmann::json report_json(const Outcome& o) {
  auto j = to_json(o.snapshot, *o.view, o.report, RunContext{});
  j.erase("source");
  j.erase("notes");
  j["snapshot"].erase("recorded_from");  // the input again, as "source"
  j["snapshot"].erase("notes");
  return j;
}

TEST(TopoLive, CollectsAndEvaluatesThisMachine) {
  CollectOptions opt;
  auto o = evaluate_snapshot(collect_live(opt));
  EXPECT_FALSE(o.snapshot.devices.empty());
  EXPECT_TRUE(o.snapshot.machine.proc_known);
  EXPECT_FALSE(o.snapshot.machine.kernel_release.empty());
  auto j = report_json(o);
  auto again = nlohmann::json::parse(j.dump());
  EXPECT_EQ(again["schema"], "gdsbench.topo/1");
  EXPECT_EQ(again["checks"].size(), o.report.checks.size());
}

// Every entry of this machine's /sys/class/block is collected, each partition with the disk
// whose directory holds it, and a /dev/ source of a mount resolves to a device listed there.
TEST(TopoLive, BlockDevicesOfThisMachine) {
  CollectOptions opt;
  const Snapshot s = collect_live(opt);
  std::error_code ec;
  size_t entries = 0;
  for (fs::directory_iterator it("/sys/class/block", ec), end; !ec && it != end; it.increment(ec))
    ++entries;
  ASSERT_EQ(s.machine.block_devices.size(), entries);
  for (const BlockDevice& b : s.machine.block_devices) {
    const bool partition = fs::exists(fs::path("/sys/class/block") / b.name / "partition");
    EXPECT_EQ(!b.parent.empty(), partition) << b.name;
    if (partition) {
      EXPECT_TRUE(fs::exists(fs::path("/sys/class/block") / b.parent / b.name)) << b.name;
    }
  }
}

// The live collector tries to load cuFile's user-space RDMA library and the snapshot keeps the
// answer. Where it is absent (CI: no GDS installed) the fact says why and fails nothing; on
// the GPU VM it loads (fixtures/real/h100-vm/rdma-stack-2026-11-26.txt).
TEST(TopoLive, CufileRdmaLibraryIsProbedAndStatedAsAFact) {
  CollectOptions opt;
  Snapshot live = collect_live(opt);
  ASSERT_TRUE(live.machine.cufile_rdma);
  const gpu::cufile::LibraryProbe p = *live.machine.cufile_rdma;
  EXPECT_EQ(p.library, "libcufile_rdma.so.1");
  if (!p.loaded) {
    EXPECT_NE(p.error.find("libcufile_rdma.so.1"), std::string::npos) << p.error;
  } else {
    EXPECT_TRUE(p.error.empty()) << p.error;
  }
  auto o = evaluate_snapshot(std::move(live));
  const CheckResult* lib = o.titled("rdma-stack", "user-space RDMA library");
  ASSERT_NE(lib, nullptr);
  EXPECT_NE(lib->verdict, Verdict::Fail);
  ASSERT_FALSE(lib->evidence.empty());
  EXPECT_EQ(lib->evidence.front(), "dlopen(libcufile_rdma.so.1): " +
                                       (p.loaded ? std::string("loaded")
                                                 : "not loaded (" + p.error + ")"));
}

TEST(TopoLive, SnapshotReplaysToTheSameReport) {
  CollectOptions opt;
  Snapshot live = collect_live(opt);
  fixture::TempDir dir;
  save_snapshot(live, dir.path());
  auto a = evaluate_snapshot(std::move(live));
  auto b = evaluate_snapshot(load_snapshot(dir.path()));
  EXPECT_EQ(report_json(a), report_json(b));
}

TEST(TopoLive, HwlocXmlExportOfThisMachineHasItsPciDevices) {
  hwloc_topology_t t = nullptr;
  ASSERT_EQ(hwloc_topology_init(&t), 0);
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  ASSERT_EQ(hwloc_topology_load(t), 0);
  fixture::TempDir dir;
  auto xml = (dir.path() / "topo.xml").string();
  ASSERT_EQ(hwloc_topology_export_xml(t, xml.c_str(), 0), 0);
  hwloc_topology_destroy(t);
  auto o = evaluate_snapshot(collect_hwloc_xml(xml));
  CollectOptions opt;
  Snapshot live = collect_live(opt);
  EXPECT_EQ(live.devices.empty(), o.snapshot.devices.empty());
  for (const auto& d : o.snapshot.devices) {
    const Device* l = live.find(d.bdf);
    ASSERT_NE(l, nullptr) << d.bdf;
    EXPECT_EQ(l->vendor, d.vendor) << d.bdf;
    EXPECT_EQ(l->role == Role::Gpu, d.role == Role::Gpu) << d.bdf;
  }
  EXPECT_EQ(o.worst("link"), Verdict::Waived);
  EXPECT_THROW(collect_hwloc_xml(dir.path() / "missing.xml"), Error);
}

// Each ext4 mount of this machine: the kernel's options file is found (the device name
// resolved from the mount point) and the data mode read from it, never left unknown.
TEST(TopoLive, Ext4DataModeOfThisMachinesMounts) {
  const Machine m = collect_machine("/", true, CollectOptions{});
  int ext4 = 0;
  for (const auto& mt : m.mounts) {
    if (mt.fstype != "ext4") continue;
    const fs::path file = fs::path("/proc/fs/ext4") / mt.ext4_dev / "options";
    if (mt.ext4_dev.empty() || !fs::exists(file)) continue;  // e.g. a bind mount's source
    ++ext4;
    ASSERT_TRUE(mt.ext4_options.has_value()) << mt.target;
    std::ifstream in(file);
    std::string line, data;
    while (std::getline(in, line))
      if (line.rfind("data=", 0) == 0) data = line.substr(5);
    const Ext4Mode mode = ext4_data_mode(mt);
    if (!data.empty()) {
      EXPECT_EQ(ext4_data_mode_name(mode.mode), data) << mt.target;
    } else {
      EXPECT_TRUE(mode.mode == Ext4DataMode::NoJournal || mode.mode == Ext4DataMode::Ordered)
          << mt.target << ": " << mode.evidence;
    }
  }
  if (ext4 == 0 && fs::is_directory("/proc/fs/ext4") && !fs::is_empty("/proc/fs/ext4")) {
    bool mounted = false;
    for (const auto& mt : m.mounts) mounted = mounted || mt.fstype == "ext4";
    EXPECT_FALSE(mounted) << "ext4 mounted, but no mount's /proc/fs/ext4/<dev> was found";
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
