// Issue 42 through gdsb-topo's command line, on the HGX H100 recording (fixtures/real/
// hgx-h100-lspci-vvv.txt: GPUs on buses 19 3b 4c 5d 9b bb cb db, GPU6 is cb) with real kernel
// logs (fixtures/real/kernel-logs/SOURCES.md). Expected lines are written from the logs:
// - no input ignored: the platform check shows the faults of the --kernel-log it was given
//   (FAULTS in text, "faults" in JSON), each once, with what --health does with it. gpud's
//   PR 46 excerpt names cb: Xid 13 three times at 11:43:09, process name=<unknown> (an
//   application's fault: warn),
//   Xid 109 at 11:43:14 (context switch timeout: drain, reset the GPU); 5 lines, 4 records.
// - a GPU of the node that fell off the bus and left PCI (its stanza removed from the
//   recording), with the Xid 79 record of NVIDIA/open-gpu-kernel-modules issue 1151 moved
//   onto its address (2b:00 -> cb:00, nothing else changed): "missing", critical, whether the
//   known-good file is gdsb-topo's (with its hw_baseline) or one without (gdsb-cluster's).
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "topo_cli_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;
const std::string kHgx = (kReal / "hgx-h100-lspci-vvv.txt").string();

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

class FaultsSection : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gdsb-faults-section-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // The HGX recording without GPU6's stanza (lspci -vvv: one blank-line separated block a function).
  std::string hgx_without_cb() {
    const std::string text = slurp(kHgx);
    const size_t at = text.find("\ncb:00.0 ");
    EXPECT_NE(at, std::string::npos);
    const size_t end = text.find("\n\n", at + 1);
    return write("hgx-without-cb.txt", text.substr(0, at) + text.substr(end));
  }
  std::string xid79_on_cb() {
    return write("xid79-cb.log", replace_all(slurp(kReal / "kernel-logs/ogkm1151-xid79-journalctl.log"),
                                             "0000:2b:00", "0000:cb:00"));
  }
  fs::path dir_;
};

TEST_F(FaultsSection, PlatformCheckShowsEachFaultOnceWithWhatHealthDoes) {
  const std::string log = (kReal / "kernel-logs/gpud-pr46-xid13-xid109-dmesg-T.log").string();
  const std::string json = (dir_ / "topo.json").string();
  const CliRun r = cli({"--lspci-text", kHgx, "--kernel-log", log, "--json", json});
  EXPECT_EQ(r.rc, 0) << r.err;  // the faults do not change the platform verdict: --health drains
  const std::string section = " =======\n FAULTS:\n =======\n kernel log: --kernel-log " + log +
                              " (dmesg -T, 5 lines, 4 Xid records)\n";
  EXPECT_EQ(count(r.out, section), 1u) << r.out;
  EXPECT_EQ(count(r.out, " [DRAIN]  GPU 0000:cb:00.0 Xid 109 (context switch timeout) at 11:43:14: drain, reset the "
                         "GPU\n"),
            1u)
      << r.out;
  EXPECT_EQ(count(r.out, " [WARN]   GPU 0000:cb:00.0 Xid 13 (graphics engine exception) x3, last at 11:43:09 "
                         "(<unknown>): restart the application\n"),
            1u)
      << r.out;
  EXPECT_EQ(count(r.out, "Xid 109"), 1u);
  EXPECT_EQ(count(r.out, "Xid 13 "), 1u);
  // In the order data flows: after the checks, before the ceilings.
  EXPECT_LT(r.out.find(" CHECKS:"), r.out.find(" FAULTS:"));
  EXPECT_LT(r.out.find(" FAULTS:"), r.out.find(" CEILINGS:"));
  const auto doc = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(doc.at("faults").size(), 2u) << doc.at("faults").dump();
  const auto& drain = doc["faults"][0];
  EXPECT_EQ(drain.at("health").get<std::string>(), "drain");
  EXPECT_EQ(drain.at("severity").get<std::string>(), "critical");
  EXPECT_EQ(drain.at("kind").get<std::string>(), "xid");
  EXPECT_EQ(drain.at("xid").get<int>(), 109);
  EXPECT_EQ(drain.at("bdf").get<std::string>(), "0000:cb:00.0");
  EXPECT_EQ(drain.at("when").get<std::string>(), "11:43:14");
  const auto& warn = doc["faults"][1];
  EXPECT_EQ(warn.at("health").get<std::string>(), "warn");
  EXPECT_EQ(warn.at("xid").get<int>(), 13);
  EXPECT_EQ(warn.at("count").get<int>(), 3);
  EXPECT_EQ(warn.at("action").get<std::string>(), "restart the application");
}

TEST_F(FaultsSection, ALogWithoutFaultIsSaidAndNoLogNoSection) {
  const std::string log = (kReal / "kernel-logs/dasharo815-aer-no-nvrm-dmesg-T.log").string();
  CliRun r = cli({"--lspci-text", kHgx, "--kernel-log", log});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(" FAULTS:\n =======\n kernel log: --kernel-log " + log +
                       " (dmesg -T, 9 lines, 0 Xid records)\n no fault\n"),
            std::string::npos)
      << r.out;
  r = cli({"--lspci-text", kHgx});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("FAULTS"), std::string::npos);  // a recording without a kernel log: nothing to show
}

TEST_F(FaultsSection, AGpuThatLeftThePciBusIsMissingAgainstEitherKnownGoodFile) {
  const std::string known = (dir_ / "known.json").string();
  ASSERT_EQ(cli({"--lspci-text", kHgx, "--save-fingerprint", known}).rc, 0);
  // gdsb-cluster's class files carry the facts alone, without gdsb-topo's hw_baseline.
  auto doc = nlohmann::json::parse(slurp(known));
  ASSERT_TRUE(doc.contains("hw_baseline"));
  doc.erase("hw_baseline");
  const std::string facts_only = write("facts-only.json", doc.dump(1));
  const std::string sick = hgx_without_cb(), log = xid79_on_cb();
  for (const std::string& expect : {known, facts_only}) {
    const CliRun r = cli({"--health", "--expect", expect, "--lspci-text", sick, "--kernel-log", log});
    EXPECT_EQ(r.rc, 3) << expect << "\n" << r.out << r.err;
    // The cause first, then the difference it makes.
    EXPECT_EQ(r.out.find("gdsb: GPU 0000:cb:00.0 missing: Xid 79 (fallen off the bus) at 19:02:39: drain, reboot\n"), 0u)
        << expect << "\n" << r.out;
    EXPECT_EQ(r.out.find("not a GPU of this node"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("GPU 0000:cb:00.0 absent"), std::string::npos) << r.out;
  }
  // Without a known-good file the platform check cannot place the address (the log is a
  // file, the GPU gone): it says so, as a warning, and still shows it.
  const CliRun r = cli({"--lspci-text", sick, "--kernel-log", log});
  EXPECT_NE(r.out.find(" [WARN]   0000:cb:00.0 Xid 79 (fallen off the bus) at 19:02:39: not a GPU of this node"),
            std::string::npos)
      << r.out;
}

TEST_F(FaultsSection, AKernelLogThatCannotBeReadIsANamedError) {
  const CliRun r = cli({"--lspci-text", kHgx, "--kernel-log", (dir_ / "none.log").string()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("--kernel-log " + (dir_ / "none.log").string() + ": cannot be opened"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace gdsb::topo::testing
