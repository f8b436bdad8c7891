// gdsb-topo --health on the HGX H100 recording with kernel logs that span a reboot, a
// known-good file saved with a log that already held an Xid, a --state whose drain failed,
// NVIDIA's newest catalog rows and a log still being written (issue 42). The logs are in
// fixtures/real/kernel-logs (SOURCES.md); what each test expects was read off their lines:
// the HGX's GPUs are on buses 19 3b 4c 5d 9b bb cb db; the reboot logs hold Xid 79 on cb:00
// at Dec 2 10:43:35 in the first boot and none in the second; xid48-kern.log one Xid 48 on
// cb:00 at 10:43:35; gpud's PR 46 log Xid 13 x3 and Xid 109 at 11:43:14 on cb:00, one boot.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "topo_cli_util.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;
const fs::path kLogs = kReal / "kernel-logs";
const std::string kHgx = (kReal / "hgx-h100-lspci-vvv.txt").string();
const std::string kOk = "gdsb: ok, 8 GPUs, 8 drives, 12 data NICs as expected\n";

class HealthBoots : public ::testing::Test {
 protected:
  fixture::TempDir dir;
  std::string known = (dir.path() / "known.json").string();
  void SetUp() override { ASSERT_EQ(cli({"--lspci-text", kHgx, "--save-fingerprint", known}).rc, 0); }
  CliRun health(const std::string& log, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--health", "--expect", known, "--lspci-text", kHgx, "--kernel-log", log};
    args.insert(args.end(), more.begin(), more.end());
    return cli(args);
  }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir.path() / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // A stand-in scontrol first on PATH: `body` is its shell script after the shebang.
  void scontrol(const std::string& body) {
    fs::create_directories(dir.path() / "bin");
    const fs::path exe = dir.path() / "bin" / "scontrol";
    fs::remove(exe);
    std::ofstream(exe) << "#!/bin/sh\n" << body << "\n";
    ::chmod(exe.c_str(), 0755);
  }
  std::string path_env() const { return (dir.path() / "bin").string() + ":/usr/bin:/bin"; }
};

// Issue 42's case: Xid 79 on cb:00.0 before the second "Linux version" line, all 8 GPUs after.
TEST_F(HealthBoots, AnXidOfAnEarlierBootIsHistoryAndNeverDrains) {
  const fs::path argv = dir.path() / "scontrol.argv";
  scontrol("for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + argv.string() + "'");
  ScopedEnv path("PATH", path_env());
  for (const char* name : {"reboot-xid79-kern.log", "reboot-xid79-journalctl.log",
                           "reboot-xid79-journalctl-monotonic.log", "reboot-xid79-journalctl-export.log"}) {
    SCOPED_TRACE(name);
    const CliRun r = health((kLogs / name).string(), {"--slurm-drain"});
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("drain"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.rfind(kOk, 0), 0u) << r.out;
    EXPECT_NE(r.out.find("gdsb: history: GPU 0000:cb:00.0 Xid 79 (fallen off the bus) "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(", in an earlier boot: not judged\n"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(argv));  // Slurm is not called
  }
  const CliRun r = health((kLogs / "reboot-xid79-kern.log").string());
  EXPECT_EQ(r.out, kOk + "gdsb: history: GPU 0000:cb:00.0 Xid 79 (fallen off the bus) at 10:43:35, in an earlier "
                         "boot: not judged\n");
}

// The same Xid 79 in the boot that runs now (the log cut before the reboot) drains.
TEST_F(HealthBoots, TheSameXidInThisBootDrains) {
  std::istringstream in(read_all(kLogs / "reboot-xid79-kern.log"));
  std::string line, first_boot;
  for (int i = 0; i < 3 && std::getline(in, line); ++i) first_boot += line + "\n";
  const CliRun r = health(write("first-boot.log", first_boot));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("gdsb: GPU 0000:cb:00.0 Xid 79 (fallen off the bus) at 10:43:35: drain, reboot\n"),
            std::string::npos)
      << r.out;
}

// A known-good file saved with a log that already held an Xid 48: that Xid is history at the
// next check; one after the file, in the same boot, drains.
TEST_F(HealthBoots, AnXidFromBeforeTheKnownGoodFileIsHistory) {
  const std::string before = (kLogs / "xid48-kern.log").string();
  const std::string good = (dir.path() / "good-with-log.json").string();
  ASSERT_EQ(cli({"--lspci-text", kHgx, "--kernel-log", before, "--save-fingerprint", good}).rc, 0);
  const std::string later = read_all(before) +
                            "Dec  2 11:15:02 worker4 kernel: [242241.104511] nvidia-peermem nv_get_p2p_free_callback:127 "
                            "ERROR detected invalid context, skipping further processing\n";
  CliRun r = cli({"--health", "--expect", good, "--lspci-text", kHgx, "--kernel-log", write("later.log", later),
                  "--slurm-drain"});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out, kOk + "gdsb: history: GPU 0000:cb:00.0 Xid 48 (double-bit ECC error) at 10:43:35, before the "
                         "known-good file: not judged\n");
  // The same Xid again after the file: its last record is new, so it is judged.
  std::string again = later;
  const std::string xid = read_all(before).substr(read_all(before).rfind("Dec  2 10:43:35"));
  again += "Dec  2 11:20:40" + xid.substr(15, xid.find('[') - 15) + "[242579.880127]" + xid.substr(xid.find(']') + 1);
  r = cli({"--health", "--expect", good, "--lspci-text", kHgx, "--kernel-log", write("again.log", again)});
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("gdsb: GPU 0000:cb:00.0 Xid 48 (double-bit ECC error) x2, last at 11:20:40: drain, reset the "
                       "GPU; service if it recurs\n"),
            std::string::npos)
      << r.out;
  // The known-good file of another boot (the log's first line is another boot's) is no baseline.
  std::string other = read_all(before);
  other.replace(0, 15, "Nov 30 07:12:44");
  r = cli({"--health", "--expect", good, "--lspci-text", kHgx, "--kernel-log", write("other.log", other)});
  EXPECT_EQ(r.rc, 3) << r.out;
}

// --state moves only when the verdict was delivered: a failed or hung scontrol leaves the
// Xid 109 to the next check, which reports and drains it; after a drain that succeeded the
// next check does not report it again.
TEST_F(HealthBoots, AFaultWhoseDrainFailedIsReportedAgain) {
  const std::string log = (kLogs / "gpud-pr46-xid13-xid109-dmesg-T.log").string();
  const std::string state = (dir.path() / "state.json").string();
  const fs::path argv = dir.path() / "scontrol.argv";
  ScopedEnv path("PATH", path_env());
  ScopedEnv node("SLURMD_NODENAME", "gpu-node-07");
  scontrol("echo 'slurm_update error: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  CliRun r = health(log, {"--state", state, "--slurm-drain"});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("exited with status 1; the node was not drained"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(state));
  scontrol("exec sleep 60");
  const auto start = std::chrono::steady_clock::now();
  r = health(log, {"--state", state, "--slurm-drain", "--timeout", "2"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 4.0);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("did not finish within"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(state));
  scontrol("for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + argv.string() + "'");
  r = health(log, {"--state", state, "--slurm-drain"});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_EQ(read_all(argv), "update\nNodeName=gpu-node-07\nState=DRAIN\nReason=gdsb: GPU 0000:cb:00.0 Xid 109 "
                            "(context switch timeout) at 11:43:14: drain, reset the GPU\n");
  EXPECT_TRUE(fs::exists(state));
  fs::remove(argv);
  r = health(log, {"--state", state, "--slurm-drain"});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out, kOk);
  EXPECT_FALSE(fs::exists(argv));
}

// A state file of the first schema (a /dev/kmsg cursor of a boot) is read as that cursor and
// replaced by the check's position.
TEST_F(HealthBoots, AFirstSchemaStateFileIsReadAndReplaced) {
  const std::string state =
      write("state.json", "{\"schema\": \"gdsbench.health-state/1\", \"boot_id\": \"4e0c\", \"reported_seq\": 5}\n");
  const CliRun r = health((kLogs / "xid48-kern.log").string(), {"--state", state});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;  // another boot's cursor hides nothing
  EXPECT_NE(read_all(state).find("\"schema\": \"gdsbench.health-state/2\""), std::string::npos) << read_all(state);
}

TEST_F(HealthBoots, ADamagedStateFileIsAUsageErrorNamingIt) {
  const std::string state = write("state.json", "{\"schema\": \"gdsbench.health-state/2\", \"position\": 7}\n");
  const CliRun r = health((kLogs / "xid48-kern.log").string(), {"--state", state});
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--state " + state + ": damaged"), std::string::npos) << r.err;
}

// NVIDIA's newest catalog rows, in the record format of this driver generation (gpud's PR 46
// line with the code changed): 167 and 171/172 drain as the catalog's words say.
TEST_F(HealthBoots, TheNewestCatalogRowsAreKnown) {
  const std::string frame = "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): ";
  CliRun r = health(write("167.log", frame + "167, pid='<unknown>', name=<unknown>, PCIE_FATAL_TIMEOUT\n"));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("gdsb: GPU 0000:cb:00.0 Xid 167 (PCIe fatal timeout) at 11:43:14: drain, reset the GPU\n"),
            std::string::npos)
      << r.out;
  r = health(write("171.log", frame + "48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error\n" +
                                  frame + "171, pid='<unknown>', name=<unknown>, DRAM\n" + frame +
                                  "172, pid='<unknown>', name=<unknown>, SRAM\n"));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("Xid 171 (uncorrectable DRAM error, with Xid 48) at 11:43:14: drain, reset the GPU; service "
                       "if it recurs\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Xid 172 (uncorrectable SRAM error, with Xid 48) at 11:43:14: drain"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not in NVIDIA's"), std::string::npos) << r.out;
  // An Xid of an older GPU generation, "Unused" since Ampere, is named so and warned of.
  r = health((kLogs / "pastebin-xJaypMZt-old-xid-syslog.log").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("0000:01:00.0 Xid 3 (unused since Ampere)"), std::string::npos) << r.out;
}

// A log still being written: its last line, without a newline, is read (it used to fail the
// check closed, exit 3, with the Xid on it unread).
TEST_F(HealthBoots, ALastLineWithoutNewlineIsRead) {
  std::string text = read_all(kLogs / "gpud-pr46-xid13-xid109-dmesg-T.log");
  ASSERT_EQ(text.back(), '\n');
  text.pop_back();
  CliRun r = health(write("open.log", text));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_EQ(r.out.rfind("gdsb: GPU 0000:cb:00.0 Xid 109 (context switch timeout) at 11:43:14: drain, reset the GPU\n", 0),
            0u)
      << r.out;
  // Only Xid 13 (a warning): the check passes, as with the newline.
  std::istringstream in(text);
  std::string line, head;
  for (int i = 0; i < 4 && std::getline(in, line); ++i) head += (i ? "\n" : "") + line;
  r = health(write("warn.log", head));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("gdsb: warning: GPU 0000:cb:00.0 Xid 13 (graphics engine exception) x3"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::topo::testing
