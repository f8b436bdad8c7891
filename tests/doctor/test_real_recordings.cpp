// gdsb-doctor on recordings of real machines (fixtures/SOURCES.md, tests/topo/fixtures/real/
// SOURCES.md): the H100 VM's own reports offline, and the cross-tool consistency of the doctor
// with gdsb-topo on every recording of the corpus (one path model, so the doctor's hardware
// hops are the inputs of gdsb-topo's ceilings, and no doctor finding contradicts a check).
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "doctor_test_util.hpp"
#include "gdsb/doctor/render.hpp"
#include "gdsb/doctor/topo_json_reader.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::doctor::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kDoc = GDSB_DOCTOR_FIXTURES;
const fs::path kTopo = GDSB_TOPO_REAL_FIXTURES;

topo::CollectOptions offline() {
  topo::CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  return o;
}

nlohmann::json load(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// The H100 VM's recorded reports (real/h100-vm, written by the old gdsb-topo of tree
// 5beabe2). Read off them: io-x1-I0.json storage alone (-x 1, O_DIRECT) reads ~1.1 GB/s;
// topo.json holds one H100 at 00:06.0 (Gen5 x16) and only virtio disks vda (00:01.0) and
// vdb (00:02.0); p2p.json pinned H2D ~54.6 GB/s.
Diagnosis h100_vm(Figures& f) {
  Platform p = platform_from_topo_json(load(kDoc / "real/h100-vm/topo.json"), "topo.json");
  for (const char* io : {"io-x1-I0.json", "io-x0-I0.json", "io-x2-I0.json"})
    add_io_document(f, load(kDoc / "real/h100-vm" / io), io);
  add_p2p_document(f, load(kDoc / "real/h100-vm/p2p.json"), "p2p.json");
  return diagnose(&p, f);
}

TEST(DoctorRealH100Vm, CeilingAndExpectedFiguresStayAtTheMeasuredStorage) {
  Figures f;
  const Diagnosis d = h100_vm(f);
  const double storage = 1.1 * 1.3;  // the measured storage alone, 30% tolerance
  ASSERT_EQ(d.gpus.size(), 1U);
  const GpuDiagnosis& g = d.gpus[0];
  ASSERT_TRUE(g.ceiling_gb_s);
  EXPECT_LE(*g.ceiling_gb_s, storage) << g.binding;
  EXPECT_EQ(g.source_kind, "virtual");
  EXPECT_FALSE(g.p2p_possible);
  bool storage_hop = false, hypervisor = false;
  for (const auto& h : g.hops) {
    storage_hop = storage_hop || (h.kind == topo::HopKind::StorageAlone && h.measured);
    hypervisor = hypervisor || (h.kind == topo::HopKind::Hypervisor && h.device == "0000:00:01.0");
  }
  EXPECT_TRUE(storage_hop);
  EXPECT_TRUE(hypervisor);
  for (const auto& x : d.findings) {
    EXPECT_EQ(x.fix.find("modprobe nvidia-fs"), std::string::npos) << x.title;
    if (x.expected_gb_s) {
      EXPECT_LE(*x.expected_gb_s, storage) << x.title;
    }
  }
  // The first line names the virtual storage and the measured figure.
  EXPECT_NE(d.headline.find("virtual storage"), std::string::npos) << d.headline;
  EXPECT_NE(d.headline.find("0000:00:01.0 vda"), std::string::npos) << d.headline;
  EXPECT_NE(d.headline.find("storage alone reads 1.1 GB/s"), std::string::npos) << d.headline;
  EXPECT_FALSE(d.has_problem());  // exit 0 (docs/gdsb-doctor.md: no certain/likely cause)
  EXPECT_EQ(g.ceiling_unknown, "") << "storage alone measured the hypervisor's disk";
}

// The same VM without a storage read (gdsb-doctor without --io-dir, issue 43): the hypervisor
// hop has no rate (topo.json: virtio disks only) and only the pinned H2D copy (p2p.json,
// 54.6 GB/s) bounds the GPU: its ceiling is an upper bound, never what the platform allows.
TEST(DoctorRealH100Vm, UnknownStorageMakesTheCeilingAnUpperBound) {
  Platform p = platform_from_topo_json(load(kDoc / "real/h100-vm/topo.json"), "topo.json");
  Figures f;
  add_p2p_document(f, load(kDoc / "real/h100-vm/p2p.json"), "p2p.json");
  const Diagnosis d = diagnose(&p, f);
  ASSERT_EQ(d.gpus.size(), 1U);
  const GpuDiagnosis& g = d.gpus[0];
  ASSERT_TRUE(g.ceiling_gb_s);
  EXPECT_NEAR(*g.ceiling_gb_s, 54.63, 0.01);
  EXPECT_EQ(g.ceiling_unknown, "the storage's rate");
  std::ostringstream text;
  render_text(text, d);
  EXPECT_NE(text.str().find("GPU0 (0000:00:06.0) has no measured read; its ceiling is at most ~54.6 GB/s (host link "
                            "54.6 GB/s measured), the storage's rate unknown.\n"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("allows"), std::string::npos) << text.str();
  const nlohmann::json j = to_json(d, f, {});
  EXPECT_EQ(j["gpus"][0]["ceiling_unknown"].get<std::string>(), "the storage's rate");
  EXPECT_EQ(j["gpu_groups"][0]["ceiling"].get<std::string>(),
            "at most ~54.6 GB/s each (host link 54.6 GB/s measured), the storage's rate unknown");

  // A cuFile read without storage alone: its share of an upper bound, the storage's rate unknown.
  Figures with_read;
  add_p2p_document(with_read, load(kDoc / "real/h100-vm/p2p.json"), "p2p.json");
  add_io_document(with_read, load(kDoc / "real/h100-vm/io-x0-I0.json"), "io-x0-I0.json");
  const Diagnosis r = diagnose(&p, with_read);
  std::string notes;
  for (const auto& n : r.notes) notes += n + "\n";
  EXPECT_NE(notes.find("of its ceiling of at most ~54.6 GB/s, the storage's rate unknown; no rule found"),
            std::string::npos)
      << notes;
}

struct Recording {
  std::string name;
  topo::Snapshot snapshot;
};

// Every recording of the corpus, by the kind its name says (as tests/topo's oracles walk
// it): `*-lspci-*xxx*` dumps, other `*-lspci-*` text, `*.xml` hwloc, snapshot directories.
// A recording added to tests/topo/fixtures/real is covered without a code change.
std::vector<Recording> corpus() {
  std::vector<Recording> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kTopo)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string n = f.filename().string();
    const bool lspci = n.find("-lspci-") != std::string::npos;
    if (lspci && n.find("xxx") != std::string::npos)
      out.push_back({n, topo::collect_pci_dump(f, offline())});
    else if (lspci)
      out.push_back({n, topo::collect_lspci_text(f, offline())});
    else if (f.extension() == ".xml")
      out.push_back({n, topo::collect_hwloc_xml(f)});
    else if (fs::exists(f / "snapshot" / "snapshot.json"))
      out.push_back({n, topo::load_snapshot(f / "snapshot")});
    else if (fs::exists(f / "snapshot.json"))
      out.push_back({n, topo::load_snapshot(f)});
  }
  // The corpus this test was written against: the HGX, QEMU, H100 VM, DGX-2 recordings
  // and those the oracles added; fewer means the walk broke.
  EXPECT_GE(out.size(), 15u);
  return out;
}

// The doctor's hardware hops of a GPU equal the hops gdsb-topo's ceiling of that GPU's best
// source read (kind, device, figure), computed independently from the same snapshot.
TEST(DoctorCrossTool, HopsAreTheInputsOfGdsbTopoCeilingsOnEveryRecording) {
  for (auto& rec : corpus()) {
    const topo::Snapshot copy = rec.snapshot;
    const topo::TopologyView view(copy);
    const topo::PathModel model(view);
    Platform p = platform_from_snapshot(std::move(rec.snapshot), rec.name);
    const Diagnosis d = diagnose(&p, Figures{});
    for (const auto& g : d.gpus) {
      std::vector<Hop> hw;
      for (const auto& h : g.hops)
        if (!h.measured) hw.push_back(h);
      const auto kind = model.best_kind(g.bdf);
      if (!kind) {
        EXPECT_TRUE(hw.empty()) << rec.name << " " << g.bdf;
        continue;
      }
      const topo::Ceiling c = model.gpu_ceiling(g.bdf, *kind);
      ASSERT_EQ(hw.size(), c.hops.size()) << rec.name << " " << g.bdf;
      for (size_t i = 0; i < hw.size(); ++i) {
        EXPECT_EQ(hw[i].kind, c.hops[i].kind) << rec.name;
        EXPECT_EQ(hw[i].device, c.hops[i].device) << rec.name;
        EXPECT_EQ(hw[i].gb_s, c.hops[i].gb_s) << rec.name << " " << hw[i].what;
      }
      EXPECT_EQ(g.ceiling_gb_s, c.gb_s) << rec.name << " " << g.bdf;
    }
  }
}

// A doctor finding about the platform names a device that gdsb-topo's matching check also
// flags (fail or warn) on the same input; a topo check that passes is never contradicted.
TEST(DoctorCrossTool, NoFindingContradictsAGdsbTopoCheck) {
  const std::map<std::string, std::string> kCheckOf{{"acs-redirect", "acs-redirect"},
                                                    {"link", "link"},
                                                    {"locality", "pair-locality"},
                                                    {"iommu", "iommu"},
                                                    {"bar1", "bar1"}};
  for (auto& rec : corpus()) {
    Platform p = platform_from_snapshot(std::move(rec.snapshot), rec.name);
    Figures f = figures_of({cufile_run(1.0, nvfs_facts(true), 16)});
    const Diagnosis d = diagnose(&p, f);
    for (const auto& x : d.findings) {
      auto it = kCheckOf.find(x.rule);
      if (it == kCheckOf.end()) continue;
      bool flagged = false;
      for (const auto* c : p.checks_with(it->second)) {
        if (c->verdict != topo::Verdict::Fail && c->verdict != topo::Verdict::Warn) continue;
        for (const auto& dev : x.devices)
          flagged = flagged || std::find(c->devices.begin(), c->devices.end(), dev) !=
                                   c->devices.end();
      }
      EXPECT_TRUE(flagged) << rec.name << ": doctor " << x.rule << " (" << x.title
                           << ") without a failing gdsb-topo " << it->second << " check";
    }
    // Not applicable on gdsb-topo's side: the doctor never promises GDS fixes.
    if (p.model->gds_applicable()) continue;
    for (const auto& x : d.findings)
      EXPECT_EQ(x.fix.find("modprobe nvidia-fs"), std::string::npos) << rec.name << x.title;
  }
}

// Issue 29: the QEMU guest of the corpus (tests/topo/fixtures/real, an `lspci -v` with two
// virtio disks and a virtio NIC, no NVIDIA GPU) as the doctor's topology. Its verdict is
// gdsb-topo's, in the same words, in text and JSON.
TEST(DoctorRealNoNvidiaGpu, VerdictIsGdsbTopos) {
  Platform p = platform_from_snapshot(
      topo::collect_lspci_text(kTopo / "qemu-vm-virtio-lspci-v.txt", offline()), "qemu");
  ASSERT_TRUE(p.view->gpus().empty());
  const Figures f;
  const Diagnosis d = diagnose(&p, f);
  EXPECT_EQ(d.not_applicable, topo::kNoNvidiaGpu);
  std::ostringstream text;
  render_text(text, d);
  EXPECT_NE(text.str().find("Verdict: GDS not applicable on this node: no NVIDIA GPU\n"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("no certain or likely cause"), std::string::npos) << text.str();
  const nlohmann::json j = to_json(d, f, DocumentMeta{});
  EXPECT_EQ(j["verdict"], "not_applicable");
  EXPECT_EQ(j["applicability"], "GDS not applicable on this node: no NVIDIA GPU");
}

// The same recording with a GPU present (the H100 VM's reports): no such verdict.
TEST(DoctorRealNoNvidiaGpu, AGpuNodeIsNotCalledSo) {
  Figures f;
  const Diagnosis d = h100_vm(f);
  EXPECT_TRUE(d.not_applicable.empty());
}

}  // namespace
}  // namespace gdsb::doctor::testing
