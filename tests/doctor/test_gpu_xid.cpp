// gdsb-doctor names an Xid on the GPU under test as a cause (issue 42: no input ignored),
// through the command lines a user runs: gdsb-topo --lspci-text on the HGX H100 recording
// (tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt, GPU6 is 0000:cb:00.0) with a real kernel
// log, --json; gdsb-io's document of a read on a GPU; gdsb-doctor --topo --io. The log: the
// Xid 79 record of NVIDIA/open-gpu-kernel-modules issue 1151 (kernel-logs/SOURCES.md) moved
// onto GPU6's address (2b:00 -> cb:00, nothing else changed): "fallen off the bus" at 19:02:39.
#include <fstream>
#include <sstream>

#include "doctor_cli_util.hpp"
#include "doctor_test_util.hpp"
#include "gdsb/report/document.hpp"
#include "gdsb/report/io_document.hpp"

namespace gdsb::doctor::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;

class DoctorGpuXid : public ::testing::Test {
 protected:
  fx::TempDir dir;
  std::string path(const std::string& name) { return (dir.path() / name).string(); }
  std::string topo_json(bool with_log) {
    std::ifstream in(kReal / "kernel-logs/ogkm1151-xid79-journalctl.log");
    std::stringstream text;
    text << in.rdbuf();
    std::string log = text.str();
    for (size_t at = log.find("0000:2b:00"); at != std::string::npos; at = log.find("0000:2b:00", at))
      log.replace(at, 10, "0000:cb:00");
    std::ofstream(path("xid79-cb.log")) << log;
    const std::string out = path(with_log ? "topo-xid.json" : "topo.json");
    std::vector<std::string> args{"--lspci-text", (kReal / "hgx-h100-lspci-vvv.txt").string(), "--json", out, "-q"};
    if (with_log) args.insert(args.end(), {"--kernel-log", path("xid79-cb.log")});
    const auto r = gdsb_topo(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return out;
  }
  // One cuFile read of 1 GiB/s on the GPU at `bdf`.
  std::string io_json(const std::string& bdf) {
    RunResult r = run(XferType::GpuDirect, 1.0, "gds");
    r.path.gpu_pci_bus_id = bdf;
    const std::string out = path("io-" + bdf.substr(5, 2) + ".json");
    const std::vector<RunResult> runs{r};
    std::ofstream(out) << report::io_document({"gdsb-io", "0.1.0"}, {"gdsb-io"}, {}, runs, false).dump(2);
    return out;
  }
  static std::vector<nlohmann::json> findings(const std::string& doctor_json, const std::string& rule) {
    std::vector<nlohmann::json> out;
    const auto doc = report::load_document(doctor_json);
    for (const auto& f : doc.json.at("findings"))
      if (f.at("rule").get<std::string>() == rule) out.push_back(f);
    return out;
  }
};

TEST_F(DoctorGpuXid, AnXid79OnTheGpuUnderTestIsNamedAsTheCause) {
  const auto r = doctor({"--topo", topo_json(true), "--io", io_json("0000:cb:00.0"), "--json", path("d.json")});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;  // a likely cause
  const std::string title = "GPU6 0000:cb:00.0 Xid 79 (fallen off the bus) at 19:02:39: its figure is not a path problem";
  EXPECT_NE(r.out.find(title), std::string::npos) << r.out;
  const auto f = findings(path("d.json"), "gpu-xid");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].at("title").get<std::string>(), title);
  EXPECT_EQ(f[0].at("confidence").get<std::string>(), "likely");
  EXPECT_NE(f[0].at("fix").get<std::string>().find("reboot"), std::string::npos);
}

TEST_F(DoctorGpuXid, AGpuNotUnderTestOrNoLogGivesNoXidFinding) {
  // The same log, the read on GPU0 (0000:19:00.0): GPU6 is not under test.
  auto r = doctor({"--topo", topo_json(true), "--io", io_json("0000:19:00.0"), "--json", path("d0.json")});
  EXPECT_TRUE(r.rc == 0 || r.rc == 3) << r.err;
  EXPECT_TRUE(findings(path("d0.json"), "gpu-xid").empty());
  // GPU6 under test, the recording without the log.
  r = doctor({"--topo", topo_json(false), "--io", io_json("0000:cb:00.0"), "--json", path("d6.json")});
  EXPECT_TRUE(r.rc == 0 || r.rc == 3) << r.err;
  EXPECT_TRUE(findings(path("d6.json"), "gpu-xid").empty());
}

}  // namespace
}  // namespace gdsb::doctor::testing
