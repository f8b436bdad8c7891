// gdsb-topo --save-fingerprint / --health on the real 8x H100 HGX recording (lspci -vvv), with
// faults made by editing a copy of the text as a failing machine would show them. Expected
// values were read off the recording (see test_real_machines.cpp for what it holds): GPUs
// on buses 19 3b 4c 5d 9b bb cb db, each Gen5 x16; NVMe drives on the bus below each GPU's;
// data NICs: a ConnectX-7 on the bus after each GPU's, and the two functions of a ConnectX-6
// Dx after GPUs 0 and 4 (12); the two BCM5720 gigabit ports (01:00.0/1) are management NICs.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/topo/health.hpp"
#include "topo_cli_util.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The words of the fact whose key reads `key` ("GPU 0000:19:00.0 link"), "" when absent.
std::string fact(const FactMap& f, const std::string& key) {
  for (const auto& [k, v] : f)
    if (key_text(k) == key) return value_text(v);
  return "";
}

// The recording split into device stanzas (lspci separates them by a blank line).
class Hgx {
 public:
  Hgx() {
    std::istringstream in(read_all(fs::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt"));
    std::string line, cur;
    while (std::getline(in, line)) {
      if (line.empty()) {
        if (!cur.empty()) stanzas_.push_back(cur);
        cur.clear();
        continue;
      }
      cur += line + "\n";
    }
    if (!cur.empty()) stanzas_.push_back(cur);
  }
  std::string& stanza(const std::string& bdf) {
    for (auto& s : stanzas_)
      if (s.rfind(bdf + " ", 0) == 0) return s;
    throw std::runtime_error("no stanza " + bdf);
  }
  void remove(const std::string& bdf) { stanzas_.erase(stanzas_.begin() + (&stanza(bdf) - stanzas_.data())); }
  void replace(const std::string& bdf, const std::string& from, const std::string& to) {
    std::string& s = stanza(bdf);
    const auto at = s.find(from);
    if (at == std::string::npos) throw std::runtime_error(bdf + " has no " + from);
    s.replace(at, from.size(), to);
  }
  // Another function of a device: its stanza again under a new address.
  void copy(const std::string& bdf, const std::string& to) {
    std::string s = stanza(bdf);
    s.replace(0, bdf.size(), to);
    stanzas_.push_back(s);
  }
  fs::path write(const fs::path& p) const {
    std::ofstream out(p);
    for (const auto& s : stanzas_) out << s << "\n";
    return p;
  }

 private:
  std::vector<std::string> stanzas_;
};

bool have_pci_ids() { return fs::exists("/usr/share/misc/pci.ids") || fs::exists("/usr/share/hwdata/pci.ids"); }

// A stand-in scontrol in dir/bin that writes its arguments, one a line, to the returned file.
fs::path fake_scontrol(const fs::path& dir) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  const fs::path record = dir / "scontrol.argv";
  std::ofstream(bin / "scontrol") << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '"
                                  << record.string() << "'\n";
  ::chmod((bin / "scontrol").c_str(), 0755);
  return record;
}

class TopoHealth : public ::testing::Test {
 protected:
  fixture::TempDir dir;
  Hgx hgx;
  fs::path good_json = dir.path() / "good.json";
  void SetUp() override {
    const fs::path text = hgx.write(dir.path() / "hgx.txt");
    const CliRun r = cli({"--lspci-text", text.string(), "--save-fingerprint", good_json.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  CliRun health(const Hgx& h, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--lspci-text", h.write(dir.path() / "now.txt").string(), "--health", "--expect",
                                  good_json.string()};
    args.insert(args.end(), more.begin(), more.end());
    return cli(args);
  }
};

TEST_F(TopoHealth, TheRecordingMatchesItsOwnFingerprint) {
  const auto doc = nlohmann::json::parse(read_all(good_json));
  EXPECT_EQ(doc["schema"], "gdsbench.fingerprint/2");
  EXPECT_EQ(doc["counts"]["gpus"], 8);
  EXPECT_EQ(doc["counts"]["drives"], 8);
  const FactMap f = load_fingerprint(good_json.string(), "--expect");
  EXPECT_EQ(fact(f, "GPU 0000:19:00.0"), "present");
  EXPECT_EQ(fact(f, "GPU 0000:19:00.0 link"), "Gen5 x16");
  EXPECT_EQ(fact(f, "GPU 0000:19:00.0 NUMA node"), "0");
  EXPECT_EQ(fact(f, "GPU 0000:db:00.0 NUMA node"), "1");
  EXPECT_EQ(fact(f, "GPU 0000:19:00.0 BAR1"), "131072 MiB");  // Region 2, 128G
  EXPECT_EQ(fact(f, "GPU 0000:19:00.0 driver"), "nvidia");
  EXPECT_EQ(fact(f, "NVMe 0000:18:00.0 link"), "Gen4 x4");
  EXPECT_NE(fact(f, "port 0000:82:00.0 ACS").find("RR+CR"), std::string::npos);
  EXPECT_EQ(fact(f, "NIC 0000:01:00.0"), "");  // BCM5720 gigabit: management, no known-good fact
  // The typed value, not only its words: GPU 19:00.0's LnkCap and LnkSta, 32GT/s x16.
  const auto link = f.at({FactKind::Gpu, *PciAddress::parse("0000:19:00.0"), Fact::Link});
  EXPECT_EQ(std::get<LinkFact>(link), (LinkFact{32.0, 16, 16}));
  if (have_pci_ids()) {
    // Data NICs are told by their ids, which a recording without -nn gives only through pci.ids.
    EXPECT_EQ(doc["counts"]["data_nics"], 12);
    EXPECT_EQ(fact(f, "GPU 0000:19:00.0 device"), "10de:2330");
    EXPECT_EQ(fact(f, "NIC 0000:1a:00.0 link"), "Gen5 x16");
  }
  const CliRun r = health(hgx);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_EQ(r.out.rfind("gdsb: ok, 8 GPUs, 8 drives, ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("as expected"), std::string::npos);
}

TEST_F(TopoHealth, ALinkAtX8IsOneLineNamingTheGpu) {
  hgx.replace("19:00.0", "LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", "LnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)");
  const CliRun r = health(hgx);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:19:00.0 link Gen5 x8 of x16, expected Gen5 x16\n");
}

TEST_F(TopoHealth, AGoneGpuIsOneLine) {
  hgx.remove("19:00.0");
  const CliRun r = health(hgx);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:19:00.0 absent, expected present\n");
}

TEST_F(TopoHealth, AnAcsRedirectOnAGpuSwitchPortIsNamed) {
  // 18:00.0's upstream bridge, the switch port above GPU0's drive (all ACSCtl bits '-').
  const CliRun base = health(hgx);
  ASSERT_EQ(base.rc, 0);
  const std::string port = "17:00.0";
  hgx.replace(port, "ReqRedir- CmpltRedir-", "ReqRedir+ CmpltRedir+");
  const CliRun r = health(hgx);
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.out.find("gdsb: port 0000:17:00.0 ACS RR+CR, expected off"), std::string::npos) << r.out;
}

TEST_F(TopoHealth, AGigabitNicIsNoDifferenceAndANewDataNicIs) {
  hgx.copy("01:00.1", "01:00.2");  // a third BCM5720 port: management
  CliRun r = health(hgx);
  EXPECT_EQ(r.rc, 0) << r.out;
  if (!have_pci_ids()) GTEST_SKIP() << "no pci.ids: a ConnectX named only in words is not known as a data NIC";
  hgx.copy("1a:00.0", "1a:00.1");  // a second ConnectX-7 function
  r = health(hgx);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: NIC 0000:1a:00.1 present, expected absent\n");
}

TEST_F(TopoHealth, BadExpectFilesAreUsageErrorsNamingThem) {
  const fs::path missing = dir.path() / "nope.json";
  CliRun r = cli({"--lspci-text", (dir.path() / "hgx.txt").string(), "--health", "--expect", missing.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--expect " + missing.string()), std::string::npos) << r.err;
  const fs::path junk = dir.path() / "junk.json";
  std::ofstream(junk) << "{\"schema\": \"gdsbench.topo/1\"}";
  r = cli({"--lspci-text", (dir.path() / "hgx.txt").string(), "--health", "--expect", junk.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(junk.string()), std::string::npos);
  EXPECT_NE(r.err.find("gdsbench.fingerprint/2"), std::string::npos) << r.err;
  EXPECT_EQ(cli({"--lspci-text", "x", "--health"}).rc, 2);  // --health needs --expect
  // No report option with the fingerprint modes: they run no checks to report.
  EXPECT_EQ(cli({"--lspci-text", "x", "--health", "--expect", "y", "--json", "z"}).rc, 2);
  EXPECT_EQ(cli({"--lspci-text", "x", "--save-fingerprint", "y", "--html", "z"}).rc, 2);
  EXPECT_EQ(cli({"--lspci-text", "x", "--openmetrics", "z"}).rc, 2);  // only with --health
  // --timeout: 0.1 to 3600 s; anything else is named.
  for (const char* bad : {"0", "-1", "soon", "4000"}) {
    const CliRun t = cli({"--lspci-text", "x", "--health", "--expect", "y", "--timeout", bad});
    EXPECT_EQ(t.rc, 2) << bad;
    EXPECT_NE(t.err.find("--timeout"), std::string::npos) << bad << ": " << t.err;
  }
  EXPECT_THROW(load_fingerprint(missing.string(), "--expect"), UsageError);
}

TEST_F(TopoHealth, AKnownGoodFileIsNeverReplacedUnasked) {
  const std::string before = read_all(good_json);
  CliRun r = cli({"--lspci-text", (dir.path() / "hgx.txt").string(), "--save-fingerprint", good_json.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--allow-overwrite"), std::string::npos);
  EXPECT_EQ(read_all(good_json), before);
  r = cli({"--lspci-text", (dir.path() / "hgx.txt").string(), "--save-fingerprint", good_json.string(),
           "--allow-overwrite"});
  EXPECT_EQ(r.rc, 0);
}

TEST_F(TopoHealth, SlurmDrainRunsScontrolWithTheFirstDifference) {
  const fs::path record = fake_scontrol(dir.path());
  ScopedEnv path("PATH", (dir.path() / "bin").string() + ":/usr/bin:/bin");
  ScopedEnv node("SLURMD_NODENAME", "gpu-node-07");
  CliRun r = health(hgx, {"--slurm-drain"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_FALSE(fs::exists(record));  // healthy: Slurm is not called
  hgx.replace("19:00.0", "Width x16 (ok)", "Width x8 (downgraded)");
  r = health(hgx, {"--slurm-drain"});
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_EQ(read_all(record),
            "update\nNodeName=gpu-node-07\nState=DRAIN\nReason=gdsb: GPU 0000:19:00.0 link Gen5 x8 of x16, expected Gen5 x16\n");
}

TEST_F(TopoHealth, SlurmDrainWithoutScontrolSaysSo) {
  ScopedEnv path("PATH", (dir.path() / "empty").string());
  const CliRun r = health(hgx, {"--slurm-drain"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("scontrol not found on PATH (" + (dir.path() / "empty").string() + ")"), std::string::npos)
      << r.err;
}

TEST_F(TopoHealth, OpenMetricsFileIsReplacedByRenameOnEveryRun) {
  // A device's samples carry dcgm-exporter's pci_bus_id (NVML's form of the address: 8-digit
  // domain, upper-case hex) and Hostname ($NODE_NAME on Kubernetes), so dashboards join them.
  ScopedEnv node("NODE_NAME", "gpu-node-07");
  const std::string gpu19 = R"({bdf="0000:19:00.0",pci_bus_id="00000000:19:00.0",Hostname="gpu-node-07",kind="gpu"})";
  const fs::path prom = dir.path() / "gdsb.prom";
  CliRun r = health(hgx, {"--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string text = read_all(prom);
  EXPECT_NE(text.find("\ngdsb_health_problems 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gdsb_health_pcie_link_width" + gpu19 + " 16\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  hgx.replace("19:00.0", "Width x16 (ok)", "Width x8 (downgraded)");
  r = health(hgx, {"--openmetrics", prom.string()});  // our own file: replaced without asking
  ASSERT_EQ(r.rc, 3) << r.err;
  text = read_all(prom);
  EXPECT_NE(text.find("\ngdsb_health_problems 1\n"), std::string::npos);
  EXPECT_NE(text.find("gdsb_health_pcie_link_width" + gpu19 + " 8\n"), std::string::npos);
  EXPECT_NE(text.find("gdsb_health_expected_pcie_link_width" + gpu19 + " 16\n"),
            std::string::npos);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find("gdsb-tmp"), std::string::npos) << e.path();
  const fs::path foreign = dir.path() / "other.prom";
  std::ofstream(foreign) << "node_foo 1\n";
  r = health(hgx, {"--openmetrics", foreign.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(read_all(foreign), "node_foo 1\n");
}

// The same facts from a recorded sysfs tree and from a snapshot of it; a GPU link at x8 in the
// tree (fixture_builder: make_box(1, 1, 1, 1, 1) puts its GPU on bus 3, below root port 00:01.0,
// switch 01:00.0 and port 02:00.0, at speed code 5 = Gen5, x16).
TEST(TopoHealthInputs, SysfsTreeAndItsSnapshotAlike) {
  fixture::TempDir dir;
  auto box = fixture::make_box(1, 1, 1, 1, 1);
  fixture::write_sysfs(box, dir.path() / "good");
  const std::string fp = (dir.path() / "fp.json").string();
  ASSERT_EQ(cli({"--sysfs-root", (dir.path() / "good").string(), "--save-fingerprint", fp, "--no-hwloc"}).rc, 0);
  ASSERT_EQ(cli({"--sysfs-root", (dir.path() / "good").string(), "--save-snapshot", (dir.path() / "snap").string(),
                 "-q", "--no-hwloc"}).rc, 0);
  CliRun r = cli({"--from-snapshot", (dir.path() / "snap").string(), "--health", "--expect", fp});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "gdsb: ok, 1 GPU, 1 drive, 1 data NIC as expected\n");
  fixture::find(box, "0000:03:00.0")->cur_width = 8;
  fixture::write_sysfs(box, dir.path() / "x8");
  r = cli({"--sysfs-root", (dir.path() / "x8").string(), "--health", "--expect", fp, "--no-hwloc"});
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:03:00.0 link Gen5 x8 of x16, expected Gen5 x16\n");
}


// Issue 24, mutation 5: the HGX node with every GPU idle at Gen1, as NVIDIA GPUs drop their
// link when idle (LnkSta 2.5GT/s on the GPU and on the switch port above it; LnkCap stays
// 32GT/s), checked against the fingerprint saved under load. A person reading it sees a
// healthy idle node: ok, exit 0, and --slurm-drain does not call Slurm.
TEST_F(TopoHealth, GpusIdleAtGen1AreHealthy) {
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  const fs::path record = dir.path() / "scontrol.argv";
  std::ofstream(bin / "scontrol") << "#!/bin/sh\necho \"$@\" > '" << record.string() << "'\n";
  ::chmod((bin / "scontrol").c_str(), 0755);
  ScopedEnv path("PATH", bin.string() + ":/usr/bin:/bin");
  ScopedEnv slurm("SLURMD_NODENAME", "gpu-node-07");  // the metrics' Hostname
  const std::string gpu19 = R"({bdf="0000:19:00.0",pci_bus_id="00000000:19:00.0",Hostname="gpu-node-07",kind="gpu"})";
  // GPU -> the PEX890xx downstream port above it (its "Bus: secondary=" in the recording).
  const std::vector<std::pair<std::string, std::string>> gpus{{"19:00.0", "17:01.0"}, {"3b:00.0", "39:01.0"},
                                                              {"4c:00.0", "4a:01.0"}, {"5d:00.0", "5b:01.0"},
                                                              {"9b:00.0", "99:01.0"}, {"bb:00.0", "b9:01.0"},
                                                              {"cb:00.0", "c9:01.0"}, {"db:00.0", "d9:01.0"}};
  for (const auto& [gpu, port] : gpus)
    for (const std::string& bdf : {gpu, port})
      hgx.replace(bdf, "LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", "LnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)");
  const fs::path prom = dir.path() / "idle.prom";
  const CliRun r = health(hgx, {"--slurm-drain", "--openmetrics", prom.string()});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("gdsb: ok, 8 GPUs, 8 drives, ", 0), 0u) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_FALSE(fs::exists(record));
  // The metrics give the GPU's trained capability too, not its idle rate.
  const std::string text = read_all(prom);
  EXPECT_NE(text.find("gdsb_health_pcie_link_transfers_per_second" + gpu19 + " 32000000000\n"),
            std::string::npos)
      << text;
}

// The capability comparison still sees a GPU that cannot train to Gen5 (LnkCap Gen4: a
// riser, a BIOS setting), and lanes lost are lanes lost at any speed.
TEST_F(TopoHealth, AGpuThatCannotReachGen5OrLostLanesIsStillOneLine) {
  hgx.replace("19:00.0", "LnkCap:\tPort #0, Speed 32GT/s, Width x16", "LnkCap:\tPort #0, Speed 16GT/s, Width x16");
  hgx.replace("19:00.0", "LnkSta:\tSpeed 32GT/s (ok)", "LnkSta:\tSpeed 16GT/s (downgraded)");
  CliRun r = health(hgx);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:19:00.0 link Gen4 x16, expected Gen5 x16\n");
  Hgx idle_narrow;
  idle_narrow.replace("3b:00.0", "LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)",
                      "LnkSta:\tSpeed 2.5GT/s (downgraded), Width x8 (downgraded)");
  r = health(idle_narrow);
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:3b:00.0 link Gen5 x8 of x16, expected Gen5 x16\n");
}

// A fact not available is absent, never the value "not available": a recording (or
// --no-nvml) has no VBIOS and no CUDA driver, and says so only where a known-good file holds
// one: one line "cannot read X now (why)", a note, since the operator chose the input.
TEST_F(TopoHealth, FactsNotAvailableAreAbsentAndCannotReadIsOneNote) {
  const FactMap good = load_fingerprint(good_json.string(), "--expect");
  for (const auto& [k, v] : good) {
    EXPECT_NE(k.fact, Fact::Vbios) << key_text(k);
    EXPECT_NE(k.fact, Fact::CudaDriver) << key_text(k);
    EXPECT_NE(value_text(v), "not available") << key_text(k);
  }
  FactMap with_nvml = good;
  const FactKey vbios{FactKind::Gpu, *PciAddress::parse("0000:19:00.0"), Fact::Vbios};
  with_nvml[vbios] = std::string("96.00.74.00.01");
  const fs::path saved = dir.path() / "with-nvml.json";
  std::ofstream(saved) << fingerprint_document(with_nvml, {}).dump(1);
  const CliRun r = cli({"--lspci-text", hgx.write(dir.path() / "now.txt").string(), "--health", "--expect", saved.string()});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("gdsb: ok, 8 GPUs", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\ngdsb: cannot read GPU 0000:19:00.0 VBIOS now (a recording holds no NVML facts)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(lines(r.out), 2) << r.out;
}

// Files of schema /1 (facts as "key": "text", "not available" for what NVML did not give)
// are still read, with the same verdicts.
TEST_F(TopoHealth, Version1FilesAreStillRead) {
  const FactMap good = load_fingerprint(good_json.string(), "--expect");
  nlohmann::json v1{{"schema", "gdsbench.fingerprint/1"}, {"facts", fact_texts(good)}};
  v1["facts"]["CUDA driver"] = "not available";
  v1["facts"]["GPU 0000:19:00.0 VBIOS"] = "not available";
  const fs::path old = dir.path() / "v1.json";
  std::ofstream(old) << v1.dump(1);
  EXPECT_EQ(load_fingerprint(old.string(), "--expect"), good);
  CliRun r = cli({"--lspci-text", hgx.write(dir.path() / "now.txt").string(), "--health", "--expect", old.string()});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  v1["facts"]["GPU 0000:19:00.0 colour"] = "green";
  std::ofstream(old) << v1.dump(1);
  r = cli({"--lspci-text", (dir.path() / "now.txt").string(), "--health", "--expect", old.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown fact \"GPU 0000:19:00.0 colour\""), std::string::npos) << r.err;
}

std::string metric(const std::string& text, const std::string& name) {
  const auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return "";
  const auto start = at + name.size() + 2;
  return text.substr(start, text.find('\n', start) - start);
}

// A check that cannot be made fails closed: the metrics file says so (collected 0, problems
// >= 1), replacing the last green, for a collection error and for a bad known-good file.
TEST_F(TopoHealth, ACheckThatCannotBeMadeWritesFailingMetrics) {
  const fs::path prom = dir.path() / "gdsb.prom";
  CliRun r = health(hgx, {"--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(metric(read_all(prom), "gdsb_health_collected"), "1");
  EXPECT_EQ(metric(read_all(prom), "gdsb_health_problems"), "0");
  const fs::path gone = dir.path() / "no-such-recording.txt";
  r = cli({"--lspci-text", gone.string(), "--health", "--expect", good_json.string(), "--openmetrics", prom.string()});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;  // not known good: a failed check (issue 34)
  std::string text = read_all(prom);
  EXPECT_EQ(metric(text, "gdsb_health_collected"), "0") << text;
  EXPECT_EQ(metric(text, "gdsb_health_problems"), "1") << text;
  EXPECT_NE(text.find(gone.string()), std::string::npos) << text;  // the problem names the input
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  ASSERT_EQ(health(hgx, {"--openmetrics", prom.string()}).rc, 0);
  const fs::path junk = dir.path() / "junk.json";
  std::ofstream(junk) << "{}";
  r = cli({"--lspci-text", (dir.path() / "now.txt").string(), "--health", "--expect", junk.string(), "--openmetrics",
           prom.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(metric(read_all(prom), "gdsb_health_collected"), "0");
  EXPECT_EQ(metric(read_all(prom), "gdsb_health_problems"), "1");
}

// An error while collecting (here a recording that cannot be read) cannot decide the check:
// it fails closed, the node drained with the error as the reason (issue 34; it skipped the
// drain and exited 1 before). A usage error in the options, before collection, stays exit 2.
TEST_F(TopoHealth, ACollectionErrorFailsClosedAndDrains) {
  const fs::path record = fake_scontrol(dir.path());
  ScopedEnv path("PATH", (dir.path() / "bin").string() + ":/usr/bin:/bin");
  ScopedEnv node("SLURMD_NODENAME", "gpu-node-07");
  const fs::path gone = dir.path() / "no-such-recording.txt";
  CliRun r = cli({"--lspci-text", gone.string(), "--health", "--expect", good_json.string(), "--slurm-drain"});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("gdsb: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(gone.string()), std::string::npos) << r.out;
  const std::string argv = read_all(record);
  EXPECT_NE(argv.find("State=DRAIN\nReason=gdsb: "), std::string::npos) << argv;
  EXPECT_NE(argv.find(gone.string()), std::string::npos) << argv;
  fs::remove(record);
  r = cli({"--lspci-text", gone.string(), "--health", "--expect", (dir.path() / "none.json").string(), "--slurm-drain"});
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(record));
}

// Live with the fake NVML (two H200 at 00:06.0 and 00:07.0): a known-good file saved while
// it answers, then checked while it fails.
class TopoHealthLiveNvml : public ::testing::Test {
 protected:
  fixture::TempDir dir;
  fs::path good = dir.path() / "good.json";
  fs::path prom = dir.path() / "gdsb.prom";
  void SetUp() override {
    const CliRun r = cli({"--save-fingerprint", good.string(), "--nvml-lib", GDSB_FAKE_NVML, "--no-hwloc"});
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  CliRun check(std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--health", "--expect", good.string(), "--nvml-lib", GDSB_FAKE_NVML,
                                  "--no-hwloc", "--openmetrics", prom.string()};
    args.insert(args.end(), more.begin(), more.end());
    return cli(args);
  }
};

TEST_F(TopoHealthLiveNvml, AHungNvmlFailsWithinTheTimeoutNamingNvmlAndTheGpu) {
  const FactMap f = load_fingerprint(good.string(), "--expect");
  EXPECT_EQ(fact(f, "NVIDIA driver"), "580.159.04");  // what the fake NVML answers
  ASSERT_EQ(check().rc, 0);
  ScopedEnv hang("GDSB_FAKE_NVML_FAULT", "hang");  // nvmlDeviceGetVbiosVersion never returns
  const auto start = std::chrono::steady_clock::now();
  const CliRun r = check({"--timeout", "2"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_LT(took, 4.0);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:00:06.0 NVML: no answer within 2 s (--timeout; a hung driver?)\n");
  const std::string text = read_all(prom);
  EXPECT_EQ(metric(text, "gdsb_health_collected"), "0") << text;
  EXPECT_EQ(metric(text, "gdsb_health_problems"), "1") << text;
}

TEST_F(TopoHealthLiveNvml, AnNvmlErrorIsTheFirstDifferenceAndDrains) {
  const fs::path record = fake_scontrol(dir.path());
  ScopedEnv path("PATH", (dir.path() / "bin").string() + ":/usr/bin:/bin");
  ScopedEnv node("SLURMD_NODENAME", "gpu-node-07");
  ScopedEnv lost("GDSB_FAKE_NVML_FAULT", "lost");  // NVML_ERROR_GPU_IS_LOST
  CliRun r = check({"--slurm-drain"});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  // The shim adds NVML's name of the code to nvmlErrorString's words.
  const std::string lost_line = "gdsb: GPU 0000:00:06.0 NVML: GPU is lost (NVML_ERROR_GPU_IS_LOST)";
  EXPECT_EQ(r.out.rfind(lost_line + "\n", 0), 0u) << r.out;
  EXPECT_EQ(read_all(record), "update\nNodeName=gpu-node-07\nState=DRAIN\nReason=" + lost_line + "\n");
  EXPECT_EQ(metric(read_all(prom), "gdsb_health_collected"), "0");
  ScopedEnv unknown("GDSB_FAKE_NVML_FAULT", "unknown");
  r = check();
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "gdsb: GPU 0000:00:06.0 NVML: Unknown Error (NVML_ERROR_UNKNOWN)\n");
}

// --health asks NVML once for what the facts need: one session, no P2P pair matrix, no
// NVLink remote walk, and hwloc (on here) kept from opening NVML, CUDA or OpenCL itself.
TEST_F(TopoHealthLiveNvml, OneNvmlSessionWithoutPairMatrixOrNvlinkWalk) {
  const fs::path log = dir.path() / "nvml.log";
  ScopedEnv logging("GDSB_FAKE_NVML_LOG", log.string());
  const CliRun r = cli({"--health", "--expect", good.string(), "--nvml-lib", GDSB_FAKE_NVML});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  const std::string calls = read_all(log);
  EXPECT_EQ(lines(calls), 1) << calls;
  EXPECT_EQ(calls.rfind("init HWLOC_COMPONENTS=-nvml,-cuda,-opencl,-rsmi", 0), 0u) << calls;
  EXPECT_EQ(calls.find("p2p"), std::string::npos) << calls;
  EXPECT_EQ(calls.find("remote"), std::string::npos) << calls;
}

// --save-fingerprint runs under the same deadline and writes nothing when it passes.
TEST_F(TopoHealthLiveNvml, AHungNvmlWritesNoFingerprint) {
  ScopedEnv hang("GDSB_FAKE_NVML_FAULT", "hang");
  const fs::path other = dir.path() / "other.json";
  const CliRun r = cli({"--save-fingerprint", other.string(), "--nvml-lib", GDSB_FAKE_NVML, "--no-hwloc", "--timeout", "1"});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("GPU 0000:00:06.0 NVML: no answer within 1 s"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(other));
}

// NVML gone on a node whose known-good file holds the driver version: a problem, not a note.
TEST_F(TopoHealthLiveNvml, ADriverThatCannotBeReadNowIsAProblem) {
  const CliRun r = cli({"--health", "--expect", good.string(), "--nvml-lib", (dir.path() / "none.so").string(),
                        "--no-hwloc"});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("gdsb: cannot read NVIDIA driver now ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("none.so"), std::string::npos) << r.out;
}

// scontrol waiting on a slurmctld that does not answer is killed at the deadline.
TEST_F(TopoHealthLiveNvml, AHungScontrolIsKilledAtTheDeadline) {
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "scontrol") << "#!/bin/sh\nexec sleep 60\n";
  ::chmod((bin / "scontrol").c_str(), 0755);
  ScopedEnv path("PATH", bin.string() + ":/usr/bin:/bin");
  ScopedEnv node("SLURMD_NODENAME", "gpu-node-07");
  ScopedEnv lost("GDSB_FAKE_NVML_FAULT", "lost");
  const auto start = std::chrono::steady_clock::now();
  const CliRun r = check({"--slurm-drain", "--timeout", "2"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_LT(took, 4.0);
  EXPECT_NE(r.err.find("did not finish within"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the node was not drained"), std::string::npos) << r.err;
  EXPECT_EQ(metric(read_all(prom), "gdsb_health_collected"), "0");
}

}  // namespace
}  // namespace gdsb::topo::testing
