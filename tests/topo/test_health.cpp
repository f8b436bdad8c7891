// gdsb-topo --save-fingerprint / --health on the real 8x H100 HGX recording (lspci -vvv), with
// faults made by editing a copy of the text as a failing machine would show them. Expected
// values were read off the recording (see test_real_machines.cpp for what it holds): GPUs
// on buses 19 3b 4c 5d 9b bb cb db, each Gen5 x16; NVMe drives on the bus below each GPU's;
// data NICs: a ConnectX-7 on the bus after each GPU's, and the two functions of a ConnectX-6
// Dx after GPUs 0 and 4 (12); the two BCM5720 gigabit ports (01:00.0/1) are management NICs.
#include <sys/stat.h>

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

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Sets an environment variable for one scope (PATH, SLURMD_NODENAME), then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

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
  EXPECT_EQ(doc["schema"], "gdsbench.fingerprint/1");
  EXPECT_EQ(doc["counts"]["gpus"], 8);
  EXPECT_EQ(doc["counts"]["drives"], 8);
  const auto& f = doc["facts"];
  EXPECT_EQ(f["GPU 0000:19:00.0"], "present");
  EXPECT_EQ(f["GPU 0000:19:00.0 link"], "Gen5 x16");
  EXPECT_EQ(f["GPU 0000:19:00.0 NUMA node"], "0");
  EXPECT_EQ(f["GPU 0000:db:00.0 NUMA node"], "1");
  EXPECT_EQ(f["GPU 0000:19:00.0 BAR1"], "131072 MiB");  // Region 2, 128G
  EXPECT_EQ(f["GPU 0000:19:00.0 driver"], "nvidia");
  EXPECT_EQ(f["NVMe 0000:18:00.0 link"], "Gen4 x4");
  EXPECT_EQ(f["port 0000:82:00.0 ACS"].get<std::string>().find("RR+CR") != std::string::npos, true);
  EXPECT_FALSE(f.contains("NIC 0000:01:00.0"));  // BCM5720 gigabit: management, no known-good fact
  if (have_pci_ids()) {
    // Data NICs are told by their ids, which a recording without -nn gives only through pci.ids.
    EXPECT_EQ(doc["counts"]["data_nics"], 12);
    EXPECT_EQ(f["GPU 0000:19:00.0 device"], "10de:2330");
    EXPECT_EQ(f["NIC 0000:1a:00.0 link"], "Gen5 x16");
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
  EXPECT_EQ(r.out, "gdsb: GPU 0000:19:00.0 link Gen5 x8, expected Gen5 x16\n");
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
  EXPECT_NE(r.err.find("gdsbench.fingerprint/1"), std::string::npos) << r.err;
  EXPECT_EQ(cli({"--lspci-text", "x", "--health"}).rc, 2);  // --health needs --expect
  // No report option with the fingerprint modes: they run no checks to report.
  EXPECT_EQ(cli({"--lspci-text", "x", "--health", "--expect", "y", "--json", "z"}).rc, 2);
  EXPECT_EQ(cli({"--lspci-text", "x", "--save-fingerprint", "y", "--html", "z"}).rc, 2);
  EXPECT_EQ(cli({"--lspci-text", "x", "--openmetrics", "z"}).rc, 2);  // only with --health
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
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  const fs::path record = dir.path() / "scontrol.argv";
  {
    std::ofstream s(bin / "scontrol");
    s << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" << record.string() << "'\n";
  }
  ::chmod((bin / "scontrol").c_str(), 0755);
  ScopedEnv path("PATH", bin.string() + ":/usr/bin:/bin");
  ScopedEnv node("SLURMD_NODENAME", "gpu-node-07");
  CliRun r = health(hgx, {"--slurm-drain"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_FALSE(fs::exists(record));  // healthy: Slurm is not called
  hgx.replace("19:00.0", "Width x16 (ok)", "Width x8 (downgraded)");
  r = health(hgx, {"--slurm-drain"});
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_EQ(read_all(record),
            "update\nNodeName=gpu-node-07\nState=DRAIN\nReason=gdsb: GPU 0000:19:00.0 link Gen5 x8, expected Gen5 x16\n");
}

TEST_F(TopoHealth, SlurmDrainWithoutScontrolSaysSo) {
  ScopedEnv path("PATH", (dir.path() / "empty").string());
  const CliRun r = health(hgx, {"--slurm-drain"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("scontrol not found on PATH (" + (dir.path() / "empty").string() + ")"), std::string::npos)
      << r.err;
}

TEST_F(TopoHealth, OpenMetricsFileIsReplacedByRenameOnEveryRun) {
  const fs::path prom = dir.path() / "gdsb.prom";
  CliRun r = health(hgx, {"--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string text = read_all(prom);
  EXPECT_NE(text.find("\ngdsb_health_problems 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gdsb_health_pcie_link_width{bdf=\"0000:19:00.0\",kind=\"gpu\"} 16\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  hgx.replace("19:00.0", "Width x16 (ok)", "Width x8 (downgraded)");
  r = health(hgx, {"--openmetrics", prom.string()});  // our own file: replaced without asking
  ASSERT_EQ(r.rc, 3) << r.err;
  text = read_all(prom);
  EXPECT_NE(text.find("\ngdsb_health_problems 1\n"), std::string::npos);
  EXPECT_NE(text.find("gdsb_health_pcie_link_width{bdf=\"0000:19:00.0\",kind=\"gpu\"} 8\n"), std::string::npos);
  EXPECT_NE(text.find("gdsb_health_expected_pcie_link_width{bdf=\"0000:19:00.0\",kind=\"gpu\"} 16\n"),
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
  EXPECT_EQ(r.out, "gdsb: GPU 0000:03:00.0 link Gen5 x8, expected Gen5 x16\n");
}

}  // namespace
}  // namespace gdsb::topo::testing
