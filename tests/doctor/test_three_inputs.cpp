// Doctor on its own JSON: every rule scenario runs three ways through the real command
// lines, and the three diagnoses must be identical (issue 19):
//   direct    gdsb-doctor --sysfs-root ROOT: gdsb-topo's collector over a recorded tree,
//             the snapshot live.cpp diagnoses (platform_from_snapshot of the collector);
//   topo JSON gdsb-topo --sysfs-root ROOT --json T, then gdsb-doctor --topo T;
//   snapshot  gdsb-topo --sysfs-root ROOT --save-snapshot S, then gdsb-doctor --from-snapshot S.
// Black box: a scenario in, the gdsbench.doctor/1 document out. Each scenario also names the
// finding it must give (written from the scenario, not from the tool), so three identical
// but empty diagnoses cannot pass.
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include "doctor_cli_util.hpp"
#include "doctor_test_util.hpp"
#include "gdsb/report/document.hpp"

namespace gdsb::doctor::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Expect {
  std::string rule;        // "" : no certain or likely finding (verdict ok)
  std::string confidence;  // "certain", "likely", "possible"
  std::string title_has;   // part of the title, "" for any
};

struct Scenario {
  std::string name;
  std::function<fx::Machine()> machine;
  std::vector<RunResult> runs;
  json p2p = nullptr;
  std::optional<Expect> expect;  // nullopt: only the three must agree
};

// What a diagnosis says, without the parts that name the inputs themselves (argv, inputs,
// context, the runs' echo): verdict, per-GPU hops and ceilings, every finding in rank order.
json verdict_of(const json& doc) {
  return {{"verdict", doc.at("verdict")},
          {"gpus", doc.at("gpus")},
          {"findings", doc.at("findings")},
          {"notes", doc.at("notes")},
          {"storage", doc.at("storage")},
          {"nothing_wrong", doc.at("nothing_wrong")}};
}

class DoctorThreeInputs : public ::testing::Test {
 protected:
  fx::TempDir dir;

  std::string path(const std::string& name) const { return (dir.path() / name).string(); }

  // The recorded inputs (io and p2p documents) every way shares.
  std::vector<std::string> figures_args(const Scenario& s) {
    const std::string io = path(s.name + "-io.json");
    std::ofstream(io) << report::io_document({"gdsb-io", "0.1.0"}, {"gdsb-io"}, {}, s.runs, false)
                             .dump(2);
    std::vector<std::string> args{"--io", io};
    if (!s.p2p.is_null()) {
      const std::string p = path(s.name + "-p2p.json");
      std::ofstream(p) << s.p2p.dump(2);
      args.insert(args.end(), {"--p2p", p});
    }
    return args;
  }

  json diagnose_cli(const std::string& tag, std::vector<std::string> topology,
                    const std::vector<std::string>& figures, int& rc) {
    const std::string out = path(tag + "-doctor.json");
    topology.insert(topology.end(), figures.begin(), figures.end());
    topology.insert(topology.end(), {"--json", out});
    const CliRun r = doctor(topology);
    rc = r.rc;
    EXPECT_TRUE(r.rc == 0 || r.rc == 3) << tag << ": " << r.err << r.out;
    return r.rc == 0 || r.rc == 3 ? verdict_of(report::load_document(out).json) : json();
  }

  // Runs the three ways over one recorded topology source (`source` is gdsb-topo's option
  // and its path: --sysfs-root ROOT, --lspci-text FILE, --from-snapshot DIR) and checks
  // that they agree; returns the direct diagnosis.
  json three_ways(const std::string& name, const std::vector<std::string>& source,
                  const std::vector<std::string>& figures) {
    const std::string topo_json = path(name + "-topo.json");
    const std::string snap = path(name + "-snapshot");
    std::vector<std::string> args = source;
    args.insert(args.end(), {"--json", topo_json, "--save-snapshot", snap, "-q"});
    const CliRun t = gdsb_topo(args);
    EXPECT_TRUE(t.rc == 0 || t.rc == 3) << name << ": " << t.err;
    int rc_direct = 0, rc_json = 0, rc_snap = 0;
    const json direct = diagnose_cli(name + "-direct", source, figures, rc_direct);
    const json from_json = diagnose_cli(name + "-json", {"--topo", topo_json}, figures, rc_json);
    const json from_snap = diagnose_cli(name + "-snap", {"--from-snapshot", snap}, figures, rc_snap);
    EXPECT_EQ(from_json.dump(1), direct.dump(1)) << name << ": --topo JSON differs from direct";
    EXPECT_EQ(from_snap.dump(1), direct.dump(1)) << name << ": snapshot differs from direct";
    EXPECT_EQ(rc_json, rc_direct) << name;
    EXPECT_EQ(rc_snap, rc_direct) << name;
    return direct;
  }

  void check(const Scenario& s) {
    SCOPED_TRACE(s.name);
    const fs::path root = dir.path() / (s.name + "-root");
    fx::write_sysfs(s.machine(), root);
    const json d = three_ways(s.name, {"--sysfs-root", root.string()}, figures_args(s));
    if (!s.expect) return;
    const Expect& e = *s.expect;
    if (e.rule.empty()) {
      EXPECT_EQ(d.at("verdict"), "ok") << d.dump(1);
      return;
    }
    bool found = false;
    for (const auto& f : d.at("findings"))
      if (f.at("rule") == e.rule && f.at("confidence") == e.confidence &&
          contains(f.at("title").get<std::string>(), e.title_has))
        found = true;
    EXPECT_TRUE(found) << "no " << e.confidence << " " << e.rule << " finding with '"
                       << e.title_has << "' in " << d.at("findings").dump(1);
  }
};

RunResult gds(double gib_s, uint32_t threads = 16) {
  return cufile_run(gib_s, nvfs_facts(true), threads);
}

fx::Machine box() { return fx::make_box(1, 1, 1, 2, 0); }  // GPU 03:00.0, NVMe 04/05:00.0

fx::Machine with_gpu_bars(std::map<int, uint64_t> bars) {
  auto m = box();
  fx::find(m, "0000:03:00.0")->bars = std::move(bars);
  return m;
}

// Two sockets; socket 0 has lost its drives, so GPU0's nearest NVMe sit under socket 1.
fx::Machine drives_on_the_other_root_complex() {
  auto m = fx::make_box(2, 1, 1, 2, 0);
  std::erase_if(m.devs, [](const fx::Dev& d) {
    return d.bdf == "0000:04:00.0" || d.bdf == "0000:05:00.0" || d.bdf == "0000:02:01.0" ||
           d.bdf == "0000:02:02.0";
  });
  return m;
}

constexpr uint64_t kMiB = 1ULL << 20;

TEST_F(DoctorThreeInputs, Bar1TooSmall) {
  // BAR0 32-bit (index 0 and 1 both listed), BAR1 at resource 1: 256 MiB, the legacy window.
  check({"bar1", [] { return with_gpu_bars({{0, 16 * kMiB}, {1, 256 * kMiB}, {3, 32 * kMiB}}); },
         {cufile_run(2.0, nvfs_facts(false))}, nullptr, Expect{"bar1", "certain", "BAR1 too small"}});
}

TEST_F(DoctorThreeInputs, Bar1SmallButALargeBarElsewhere) {
  // BAR1 (resource 1) is 64 MiB while resource 3 lists 32 GiB: the doctor keeps the bar1
  // result only as possible (register numbering), which needs the BARs from every input.
  check({"bar1-elsewhere",
         [] { return with_gpu_bars({{0, 16 * kMiB}, {1, 64 * kMiB}, {3, 32ULL << 30}}); },
         {cufile_run(2.0, nvfs_facts(false))}, nullptr,
         Expect{"bar1", "possible", "BAR1 too small"}});
}

TEST_F(DoctorThreeInputs, AcsRedirectOnTheSwitchPorts) {
  check({"acs",
         [] {
           auto m = box();
           fx::find(m, "0000:02:01.0")->acs_ctl = 0x001d;
           fx::find(m, "0000:02:02.0")->acs_ctl = 0x001d;
           return m;
         },
         {gds(5.0)}, nullptr, Expect{"acs-redirect", "certain", "0000:02:01.0"}});
}

TEST_F(DoctorThreeInputs, GpuLinkTrainedNarrow) {
  check({"link",
         [] {
           auto m = fx::make_box(1, 1, 1, 4, 0);
           fx::find(m, "0000:03:00.0")->cur_width = 4;
           return m;
         },
         {gds(14.0)}, nullptr, Expect{"link", "certain", ""}});
}

TEST_F(DoctorThreeInputs, LocalitySys) {
  check({"sys", drives_on_the_other_root_complex, {gds(4.0)}, nullptr,
         Expect{"locality", "likely", "different sockets (SYS)"}});
}

TEST_F(DoctorThreeInputs, LocalityNode) {
  // The same box with both root complexes on NUMA node 0: one socket, two host bridges.
  check({"node",
         [] {
           auto m = drives_on_the_other_root_complex();
           for (auto& d : m.devs) d.numa = 0;
           m.host.numa_nodes = 1;
           return m;
         },
         {gds(4.0)}, nullptr, Expect{"locality", "likely", "different root complexes (NODE)"}});
}

TEST_F(DoctorThreeInputs, SharedUplink) {
  check({"uplink",
         [] {
           auto m = fx::make_box(1, 1, 1, 4, 0);
           for (const char* bdf : {"0000:01:00.0", "0000:00:01.0"}) {  // Gen5 x4 uplink
             auto* d = fx::find(m, bdf);
             d->max_width = d->cur_width = 4;
           }
           return m;
         },
         {run(XferType::CpuOnly, 14.2), run(XferType::CpuGpu, 13.9)}, nullptr,
         Expect{"shared-uplink", "likely", "0000:01:00.0"}});
}

TEST_F(DoctorThreeInputs, SingleDriveOfFour) {
  check({"single", [] { return fx::make_box(1, 1, 1, 4, 0); },
         {run(XferType::CpuOnly, 7.0), cufile_run(6.9, nvfs_facts(true), 16)}, nullptr,
         Expect{"single-drive", "likely", "where 4 drives are near GPU0"}});
}

TEST_F(DoctorThreeInputs, NumaBounce) {
  RunResult x2 = run(XferType::CpuGpu, 4.0);
  x2.workload.numa_node = 1;  // GPU0 sits on node 0
  x2.path.gpu_pci_bus_id = "0000:03:00.0";  // gdsb-io records the GPU of each run
  check({"numa", [] { return fx::make_box(2, 1, 1, 2, 0); }, {run(XferType::CpuOnly, 13.0), x2},
         p2p_doc(50.0, 49.0, "0000:03:00.0"), Expect{"numa-bounce", "likely", ""}});
}

TEST_F(DoctorThreeInputs, CompatNvidiaFsNotLoaded) {
  check({"nvfs",
         [] {
           auto m = fx::make_box(1, 1, 1, 2, 1);
           m.host.nvidia_fs = false;
           return m;
         },
         {run(XferType::CpuOnly, 13.5), run(XferType::CpuGpu, 9.0),
          cufile_run(2.4, no_nvfs_facts())},
         nullptr, Expect{"compat-mode", "certain", "nvidia-fs is not loaded"}});
}

TEST_F(DoctorThreeInputs, CompatUdevMissingKnownOnlyFromThePlatform) {
  // cuFile's log names no udev problem: the missing /run/udev/data is the platform's fact.
  check({"udev",
         [] {
           auto m = box();
           m.host.udev = false;
           return m;
         },
         {cufile_run(1.5, nvfs_facts(false))}, nullptr,
         Expect{"compat-mode", "certain", "udev database is missing"}});
}

TEST_F(DoctorThreeInputs, CompatOnAFileSystemThatIsNotGdsCapable) {
  check({"tmpfs",
         [] {
           auto m = box();
           m.host.mounts = {"tmpfs /raid tmpfs rw 0 0"};
           return m;
         },
         {cufile_run(2.0, nvfs_facts(false))}, nullptr,
         Expect{"compat-mode", "likely", "file system tmpfs is not GDS-capable"}});
}

TEST_F(DoctorThreeInputs, CompatOnExt4) {
  // The data mode's source changes with issue 19 (/proc/fs/ext4); whatever the rule says,
  // it must say it the same from every input.
  check({"ext4",
         [] {
           auto m = box();
           m.host.mounts = {"/dev/md0 /raid ext4 rw,relatime 0 0", "proc /proc proc rw 0 0"};
           return m;
         },
         {cufile_run(2.0, nvfs_facts(false))}, nullptr, std::nullopt});
}

TEST_F(DoctorThreeInputs, PageCacheAboveEveryDrive) {
  RunResult cached = run(XferType::CpuOnly, 40.0, "page-cache");
  cached.workload.odirect = false;
  check({"cache", box, {cached}, nullptr,
         Expect{"page-cache", "certain", "page cache serves the reads"}});
}

TEST_F(DoctorThreeInputs, IommuTranslating) {
  check({"iommu",
         [] {
           auto m = box();
           for (auto& [group, type] : m.host.iommu_groups) type = "DMA-FQ";
           m.host.cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p2 ro intel_iommu=on";
           return m;
         },
         {gds(6.0)}, nullptr, Expect{"iommu", "likely", ""}});
}

TEST_F(DoctorThreeInputs, WorkloadLimit) {
  RunResult small = cufile_run(2.0, nvfs_facts(true), 1);
  RunResult big = cufile_run(13.5, nvfs_facts(true), 16);
  big.workload.io_size = 4ULL << 20;
  check({"threads", box, {small, big}, nullptr, Expect{"workload-limit", "certain", "1 thread"}});
}

TEST_F(DoctorThreeInputs, HealthyBoxAtItsCeiling) {
  check({"healthy", box, {gds(14.2)}, nullptr, Expect{"", "", ""}});
}

TEST_F(DoctorThreeInputs, FlatVmWithVirtualStorage) {
  check({"vm", fx::make_flat_vm,
         {run(XferType::CpuOnly, 1.0), cufile_run(0.95, no_nvfs_facts())}, nullptr, std::nullopt});
}

// A report whose embedded model is damaged is an error naming the file and the field,
// never a diagnosis from half a topology.
TEST_F(DoctorThreeInputs, DamagedEmbeddedSnapshotIsARuntimeErrorNamingTheFile) {
  const fs::path root = dir.path() / "damaged-root";
  fx::write_sysfs(box(), root);
  const std::string t = path("damaged-topo.json");
  ASSERT_EQ(gdsb_topo({"--sysfs-root", root.string(), "--json", t, "-q"}).rc, 0);
  json doc = report::load_document(t).json;
  doc["snapshot"]["devices"][0].erase("bars");
  std::ofstream(t) << doc.dump();
  const CliRun r = doctor({"--topo", t});
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(contains(r.err, "damaged-topo.json")) << r.err;
  EXPECT_TRUE(contains(r.err, "\"snapshot\" is damaged")) << r.err;
}

// The real 8x H100 HGX `lspci -vvv` recording (fixtures/SOURCES.md): direct from the text,
// through gdsb-topo's JSON and through a snapshot. GDS at the drive's Gen4 x4 ceiling.
TEST_F(DoctorThreeInputs, RealHgxH100Recording) {
  Scenario s{"hgx", nullptr, {run(XferType::CpuOnly, 7.3), gds(7.2)},
             p2p_doc(53.1, 52.4, "0000:19:00.0"), std::nullopt};
  const json d = three_ways("hgx", {"--lspci-text", GDSB_DOCTOR_FIXTURES "/hgx-h100-lspci-vvv.txt"},
                            figures_args(s));
  ASSERT_EQ(d.at("gpus").size(), 8U);
  EXPECT_EQ(d.at("gpus").at(0).at("bdf"), "0000:19:00.0");
}

// The project's own H100 VM (fixtures/real/h100-vm, SOURCES.md there): its snapshot was
// collected live on the VM, so "direct" is the live collection itself; with the VM's own
// gdsb-io and gdsb-p2p reports.
TEST_F(DoctorThreeInputs, RealH100VmSnapshot) {
  const std::string vm = GDSB_DOCTOR_FIXTURES "/real/h100-vm/";
  const json d = three_ways(
      "h100-vm", {"--from-snapshot", vm + "snapshot"},
      {"--io", vm + "io-x1-I0.json", vm + "io-x0-I0.json", vm + "io-x2-I0.json", "--p2p",
       vm + "p2p.json"});
  ASSERT_EQ(d.at("gpus").size(), 1U);
}

}  // namespace
}  // namespace gdsb::doctor::testing
