// gdsb-topo --health --npd: the line node-problem-detector keeps and the options' bad inputs.
// The protocol run end to end, as NPD runs it, is npd_plugin_test.py (ctest topo_npd_plugin).
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "npd_plugin.hpp"
#include "topo_cli_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
using topo_app::npd_line;

TEST(NpdLine, ShortAddressesAndNoSlurmWords) {
  // hw_faults_judge.cpp's words for Xid 79 on the HGX's GPU cb:00.0.
  EXPECT_EQ(npd_line("GPU 0000:cb:00.0 Xid 79 (fallen off the bus) at 11:43:14: drain, reboot", 0),
            "GPU cb:00.0 Xid 79 (fallen off the bus) at 11:43:14: reboot");
  // Another domain keeps its address whole; a number that merely starts with 0000: is no address.
  EXPECT_EQ(npd_line("GPU 0001:cb:00.0 absent, expected present", 0),
            "GPU 0001:cb:00.0 absent, expected present");
  EXPECT_EQ(npd_line("seq 10000:cb:00.0", 0), "seq 10000:cb:00.0");
}

TEST(NpdLine, OneLineOfAtMost80Bytes) {
  EXPECT_EQ(npd_line("  a\nb\tc \n", 0), "a b c");
  const std::string longer(100, 'x');
  EXPECT_EQ(npd_line(longer, 0), std::string(77, 'x') + "...");
  EXPECT_EQ(npd_line(longer, 3), std::string(77 - 10, 'x') + "... (+3 more)");
  EXPECT_EQ(npd_line(longer, 3).size(), 80u);
  // A two-byte character across the cut is left out whole, never halved.
  const std::string umlaut = std::string(76, 'x') + "\xc3\xa4" + std::string(10, 'y');
  EXPECT_EQ(npd_line(umlaut, 0), std::string(76, 'x') + "...");
  EXPECT_EQ(npd_line("short", 2), "short (+2 more)");
}

class NpdCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gdsb-npd-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(NpdCli, BadOptionsWithNpdAreAProblemForNpd) {
  // NPD reads exit 2 as Unknown: under --npd a command line that cannot run fails closed.
  CliRun r = cli({"--npd", "--expect", "x.json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out.rfind("not checked: usage: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("--health"), std::string::npos) << r.out;
  EXPECT_LE(r.out.size(), 81u);
  r = cli({"--health", "--npd", "--expect", "x.json", "--state", (dir_ / "s.json").string()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("--state"), std::string::npos) << r.out;
  r = cli({"--health", "--npd", "--expect", "x.json", "--slurm-drain"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("--slurm-drain"), std::string::npos) << r.out;
  // Without --npd they are ordinary usage errors.
  r = cli({"--npd-kind", "hardware"});
  EXPECT_EQ(r.rc, 2);
  r = cli({"--npd-unchecked-unknown"});
  EXPECT_EQ(r.rc, 2);
}

TEST_F(NpdCli, MissingKnownGoodFileIsNotCheckedAndOnlyOneLineOnStdout) {
  const std::string absent = (dir_ / "absent.json").string();
  CliRun r = cli({"--health", "--npd", "--expect", absent, "--lspci-text",
                  std::string(GDSB_TOPO_REAL_FIXTURES) + "/hgx-h100-lspci-vvv.txt"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out.rfind("not checked: ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.err.find(absent), std::string::npos) << r.err;  // the report, for NPD's log
  r = cli({"--health", "--npd", "--npd-unchecked-unknown", "--expect", absent, "--lspci-text",
           std::string(GDSB_TOPO_REAL_FIXTURES) + "/hgx-h100-lspci-vvv.txt"});
  EXPECT_EQ(r.rc, 2);
}

}  // namespace
}  // namespace gdsb::topo::testing
