// gdsb-topo --health with hardware faults (issue 36): the HGX H100 recording with real kernel
// logs (fixtures/real/kernel-logs/SOURCES.md). The HGX's GPUs are on buses 19 3b 4c 5d 9b bb
// cb db; gpud's logs name GPUs cb (Xid 13 x3, then 109 at 11:43:14) and 9b (Xid 119 x5).
#include <unistd.h>

#include <fstream>

#include "topo_cli_util.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;
const std::string kHgx = (kReal / "hgx-h100-lspci-vvv.txt").string();

class HealthFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gdsb-health-faults-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    known_ = (dir_ / "known.json").string();
    ASSERT_EQ(cli({"--lspci-text", kHgx, "--save-fingerprint", known_}).rc, 0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  CliRun health(const std::string& log) {
    return cli({"--health", "--expect", known_, "--lspci-text", kHgx, "--kernel-log", log});
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path dir_;
  std::string known_;
};

TEST_F(HealthFaults, Xid109DrainsAndXid13IsAWarning) {
  const CliRun r = health((kReal / "kernel-logs/gpud-pr46-xid13-xid109-dmesg-T.log").string());
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("gdsb: GPU 0000:cb:00.0 Xid 109 (context switch timeout) at 11:43:14: drain, reset the GPU\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("gdsb: warning: GPU 0000:cb:00.0 Xid 13 (graphics engine exception) x3, last at 11:43:09"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("gdsb: ok"), std::string::npos);
}

TEST_F(HealthFaults, RepeatedXid119IsOneLineWithItsCount) {
  const CliRun r = health((kReal / "kernel-logs/gpud-xid119-dmesg-T.log").string());
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.out.find("gdsb: GPU 0000:9b:00.0 Xid 119 (GSP firmware did not answer) x5, last at 16:30:13: drain, "
                       "reset the GPU\n"),
            std::string::npos)
      << r.out;
}

TEST_F(HealthFaults, Xid13AloneDoesNotDrain) {
  // The first four lines of gpud's PR 46 excerpt: an nvidia-peermem line and Xid 13 three times.
  std::ifstream in(kReal / "kernel-logs/gpud-pr46-xid13-xid109-dmesg-T.log");
  std::string line, text;
  for (int i = 0; i < 4 && std::getline(in, line); ++i) text += line + "\n";
  const CliRun r = health(write("xid13.log", text));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("gdsb: ok, 8 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gdsb: warning: GPU 0000:cb:00.0 Xid 13"), std::string::npos) << r.out;
}

TEST_F(HealthFaults, XidOfAnotherNodesGpuIsNamedAndDoesNotDrain) {
  const CliRun r = health((kReal / "kernel-logs/ogkm1151-xid79-journalctl.log").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("gdsb: warning: 0000:2b:00.0 Xid 79 (fallen off the bus) at 19:02:39: not a GPU of this node"),
            std::string::npos)
      << r.out;
}

TEST_F(HealthFaults, HealthyRecordingHasNoFaultLine) {
  const CliRun r = health((kReal / "kernel-logs/dasharo815-aer-no-nvrm-dmesg-T.log").string());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "gdsb: ok, 8 GPUs, 8 drives, 12 data NICs as expected\n");
}

TEST_F(HealthFaults, BinaryOrCutOffLogIsANamedErrorExit1) {
  const std::string gz = write("dmesg.gz", std::string("\x1f\x8b\x08\x00\x00\x00", 6));
  CliRun r = cli({"--lspci-text", kHgx, "--kernel-log", gz, "-q"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("--kernel-log " + gz + ": byte 0x1f at offset 0 is not text"), std::string::npos) << r.err;
  // Cut inside its Xid record (a last line that parses is read: test_health_boots.cpp).
  const std::string cut = write("cut.log", "[ 5107.644336] NVRM: Xid (PCI:0000:03:00");
  r = cli({"--lspci-text", kHgx, "--kernel-log", cut, "-q"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cut off"), std::string::npos) << r.err;
  // Under --health the same input fails closed: the node is not known good (exit 3).
  r = health(gz);
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.out.find("not text"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gdsb::topo::testing

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

// The QEMU AER recording (fixtures/real/aer-qemu/SOURCES.md) as --sysfs-root trees: the
// known-good file saved before the injections, --health after them. The drive 0000:02:00.0
// counted RxErr 2, BadTLP 1, BadDLLP 1 and one non-fatal CmpltTO in 67.72 s of uptime; the
// NIC 0000:01:00.0 counted nothing (its error sent no message).
class HealthFaultsAerQemu : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gdsb-health-aer-qemu-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    known_ = (dir_ / "known.json").string();
    ASSERT_EQ(cli({"--sysfs-root", tree("before"), "--save-fingerprint", known_}).rc, 0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string tree(const std::string& phase) {
    return (fs::path(GDSB_TOPO_REAL_FIXTURES) / "aer-qemu" / ("sysfs-" + phase)).string();
  }
  fs::path dir_;
  std::string known_;
};

TEST_F(HealthFaultsAerQemu, BeforeIsHealthy) {
  const CliRun r = cli({"--health", "--expect", known_, "--sysfs-root", tree("before")});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("PCIe errors"), std::string::npos) << r.out;
}

TEST_F(HealthFaultsAerQemu, AfterNamesTheDriveItsKindsAndNotTheNic) {
  const CliRun r = cli({"--health", "--expect", known_, "--sysfs-root", tree("after")});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;  // correctable and non-fatal: warnings, no drain
  EXPECT_NE(r.out.find("0000:02:00.0 4 correctable PCIe errors since boot (213/h; most RxErr"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("0000:02:00.0 1 non-fatal uncorrectable PCIe errors since boot (most CmpltTO)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("0000:01:00.0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0000:00:03.0"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gdsb::topo::testing
