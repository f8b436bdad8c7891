// gdsb-doctor's command line: the acceptance scenario (gdsb-topo's JSON of a switch with
// ACS redirect on the NVMe ports), exit codes, bad inputs, JSON/HTML, compare and gate.
#include <fstream>
#include <sstream>

#include "doctor_cli_util.hpp"
#include "doctor_test_util.hpp"
#include "gdsb/report/compare.hpp"
#include "gdsb/report/gate.hpp"

namespace gdsb::doctor::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class DoctorCli : public ::testing::Test {
 protected:
  fx::TempDir dir;
  // gdsb-topo --sysfs-root on a recorded tree, --json: the document gdsb-doctor --topo reads.
  std::string topo_json(const fx::Machine& m, const std::string& name) {
    fx::write_sysfs(m, dir.path() / name);
    const std::string out = (dir.path() / (name + ".json")).string();
    const auto r = gdsb_topo({"--sysfs-root", (dir.path() / name).string(), "--json", out, "-q"});
    EXPECT_TRUE(r.rc == 0 || r.rc == 3) << r.err;
    return out;
  }
  std::string io_json(const std::vector<RunResult>& runs, const std::string& name) {
    const std::string out = (dir.path() / name).string();
    std::ofstream(out) << report::io_document({"gdsb-io", "0.1.0"}, {"gdsb-io"}, {}, runs, false)
                              .dump(2);
    return out;
  }
  static fx::Machine acs_switch() {
    auto m = fx::make_box(1, 1, 1, 2, 0);
    fx::find(m, "0000:02:01.0")->acs_ctl = 0x001d;
    fx::find(m, "0000:02:02.0")->acs_ctl = 0x001d;
    return m;
  }
};

TEST_F(DoctorCli, AcceptanceAcsRedirectOnTheNvmePortNamesPortAndFixAndExits3) {
  const auto t = topo_json(acs_switch(), "acs");
  const auto i = io_json({cufile_run(5.0, nvfs_facts(true), 16)}, "io.json");
  const auto r = doctor({"--topo", t, "--io", i});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "\nGPU0 (0000:03:00.0) reads at 5.4 GB/s")) << r.out;
  EXPECT_TRUE(contains(r.out, "[certain] ACS redirect on 0000:02:01.0 (switch_downstream)"));
  EXPECT_TRUE(contains(r.out, "setpci -s 0000:02:01.0 ECAP_ACS+6.w=0:2c"));
  EXPECT_TRUE(contains(r.out, "pci=disable_acs_redir=0000:02:01.0;0000:02:02.0"));
}

TEST_F(DoctorCli, HealthyRecordingAtTheCeilingExits0AndWritesJsonAndHtml) {
  const auto t = topo_json(fx::make_box(1, 1, 1, 2, 0), "ok");
  const auto i = io_json({cufile_run(14.2, nvfs_facts(true), 16)}, "io.json");
  const auto j = (dir.path() / "d.json").string();
  const auto h = (dir.path() / "d.html").string();
  const auto r = doctor({"--topo", t, "--io", i, "--json", j, "--html", h});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "Verdict: nothing wrong: GPU0 reads at 15.2 GB/s"));
  const auto doc = report::load_document(j);
  EXPECT_EQ(doc.kind, report::DocKind::Doctor);
  EXPECT_EQ(doc.json.at("verdict"), "ok");
  EXPECT_EQ(doc.json.at("runs").size(), 1U);
  EXPECT_TRUE(contains(slurp(h), "gdsbench doctor"));
}

TEST_F(DoctorCli, CompareAndGateReadDoctorDocumentsBeforeAndAfterTheFix) {
  const auto i_before = io_json({cufile_run(5.0, nvfs_facts(true), 16)}, "io-before.json");
  const auto i_after = io_json({cufile_run(14.2, nvfs_facts(true), 16)}, "io-after.json");
  const auto before = (dir.path() / "before.json").string();
  const auto after = (dir.path() / "after.json").string();
  EXPECT_EQ(doctor({"--topo", topo_json(acs_switch(), "acs"), "--io", i_before, "--json", before}).rc, 3);
  EXPECT_EQ(doctor({"--topo", topo_json(fx::make_box(1, 1, 1, 2, 0), "ok"), "--io", i_after,
                    "--json", after}).rc, 0);
  const auto b = report::load_document(before);
  const auto a = report::load_document(after);
  const auto c = report::compare_documents(b, a, {});
  ASSERT_EQ(c.matches.size(), 1U);
  EXPECT_EQ(c.matches[0].metrics[0].change, report::Change::Better);
  const auto fixed = report::run_gate(b, a, report::default_thresholds());
  EXPECT_FALSE(fixed.failed()) << report::gate_text(fixed);
  EXPECT_TRUE(contains(report::gate_text(fixed), "gate passed"));
  const auto regressed = report::run_gate(a, b, report::default_thresholds());
  EXPECT_TRUE(regressed.failed());
  EXPECT_TRUE(contains(report::gate_text(regressed), "new: [certain] ACS redirect"));
}

// The H100 VM's own recorded reports (fixtures/real/h100-vm, SOURCES.md; topo.json from the
// old gdsb-topo): storage alone reads ~1.1 GB/s from virtio vda. The first line names the
// virtual storage; no certain or likely cause: exit 0 as docs/gdsb-doctor.md says.
TEST_F(DoctorCli, RecordedH100VmNamesVirtualStorageAndExits0) {
  const std::string vm = std::string(GDSB_DOCTOR_FIXTURES) + "/real/h100-vm/";
  const auto r = doctor({"--topo", vm + "topo.json", "--io", vm + "io-x1-I0.json",
                         vm + "io-x0-I0.json", vm + "io-x2-I0.json", "--p2p", vm + "p2p.json"});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("Diagnosis: virtual storage: GPU0 reads from 0000:00:01.0 vda", 0), 0U)
      << r.out;
  EXPECT_NE(r.out.find("storage alone reads 1.1 GB/s"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("~54.6"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("~55"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("modprobe nvidia-fs"), std::string::npos) << r.out;
}

// Issue 35: the HGX recording's eight GPUs (hgx-h100-lspci-vvv.txt, each with one NVMe of its
// own at Gen4 x4) share their hops' kinds and figures. The JSON holds them as one group of
// eight, and the HTML view, drawn from it, says the shared drive link once, not per GPU.
TEST_F(DoctorCli, EightGpusAlikeAreOneGroupInJsonAndHtml) {
  const auto j = (dir.path() / "d.json").string();
  const auto h = (dir.path() / "d.html").string();
  const auto r = doctor({"--lspci-text", std::string(GDSB_DOCTOR_FIXTURES) + "/hgx-h100-lspci-vvv.txt",
                         "--json", j, "--html", h});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  const auto doc = report::load_document(j);
  ASSERT_EQ(doc.json.at("gpu_groups").size(), 1U) << doc.json.dump(1);
  const auto& grp = doc.json.at("gpu_groups").at(0);
  EXPECT_EQ(grp.at("label"), "GPU0-7");
  EXPECT_EQ(grp.at("lines").at(3).at("own"), nlohmann::json::array({"drive link 0000:5c:00.0"}));
  const std::string html = slurp(h);
  std::size_t n = 0;
  for (auto at = html.find("Gen4 x4, each GPU"); at != std::string::npos;
       at = html.find("Gen4 x4, each GPU", at + 1))
    ++n;
  EXPECT_EQ(n, 1U);
  EXPECT_NE(html.find("0000:da:00.0"), std::string::npos);  // GPU7's own drive, on its row
}

// Issue 27 item 5: with no argument the doctor diagnoses this machine without a scratch
// file (topology, stack, host link), says what --io-dir would add, and writes nothing.
TEST_F(DoctorCli, WithoutArgumentsDiagnosesThisMachineAndWritesNothing) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  const auto r = doctor({});
  fs::current_path(cwd);
  EXPECT_TRUE(r.rc == 0 || r.rc == 3) << r.rc << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "[1/6] topology and stack")) << r.out;
  // The storage steps' one reason, said once (issue 35).
  EXPECT_TRUE(contains(r.out, "[4/6] storage alone (-x 1, O_DIRECT), [5/6] CPU bounce (-x 2), "
                              "[6/6] cuFile (-x 0): needs --io-dir DIR"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "Verdict: ")) << r.out;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST_F(DoctorCli, UsageErrors) {
  CliRun r;
  const auto t = topo_json(fx::make_box(1, 1, 1, 2, 0), "ok");
  r = doctor({"--io-dir", dir.path().string(), "--topo", t});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "cannot be combined"));
  r = doctor({"--topo", t, "--lspci-text", t});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(doctor({"--budget", "30s", "--topo", t}).rc, 2);  // --budget needs --io-dir
  r = doctor({"--gpu", "1", "--topo", t});  // --gpu is live only
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--gpu picks the GPU of a live diagnosis")) << r.err;
  r = doctor({"--io-dir", dir.path().string(), "--budget", "2s"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--budget"));
  const auto i = io_json({run(XferType::CpuOnly, 1.0)}, "io.json");
  r = doctor({"--topo", i});  // an io document where a topo one belongs
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--topo")) << r.err;
  EXPECT_TRUE(contains(r.err, "gdsbench.topo/1"));
}

TEST_F(DoctorCli, MissingOrBrokenInputsAreRuntimeErrorsNamingTheFile) {
  auto r = doctor({"--io", (dir.path() / "nope.json").string()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "nope.json"));
  std::ofstream(dir.path() / "half.json") << "{\"schema\": \"gdsbench.io/1\", \"runs\": [";
  r = doctor({"--io", (dir.path() / "half.json").string()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "half.json"));
}

TEST_F(DoctorCli, AForeignFileIsNotOverwritten) {
  const auto i = io_json({run(XferType::CpuOnly, 1.0)}, "io.json");
  const auto mine = dir.path() / "notes.txt";
  std::ofstream(mine) << "my notes\n";
  const auto r = doctor({"--io", i, "--json", mine.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "--allow-overwrite"));
  EXPECT_EQ(slurp(mine), "my notes\n");
}

}  // namespace
}  // namespace gdsb::doctor::testing
