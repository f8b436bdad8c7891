// Approval tests (issue 27): the text output of gdsb-topo and gdsb-doctor on the recorded
// H100 VM, the HGX lspci recording and one hwloc machine, compared with reviewed golden
// files in this folder. A mismatch prints a unified diff; GDSB_UPDATE_GOLDEN=1 rewrites the
// files instead (then review `git diff tests/golden`). Every golden output is also held to
// "each fact once": no sentence repeats within one output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "doctor_cli_util.hpp"

namespace gdsb::doctor::testing {
namespace {

namespace fs = std::filesystem;

const std::string kSrc = GDSB_SOURCE_DIR;
const fs::path kGolden = GDSB_GOLDEN_DIR;

std::string src(const std::string& rel) { return kSrc + "/" + rel; }

struct Case {
  std::string name;  // golden file: <name>.txt
  bool doctor;       // gdsb-doctor, else gdsb-topo
  std::vector<std::string> args;
  int rc;  // the exit code the recording gives
};

const std::string kVm = "tests/doctor/fixtures/real/h100-vm/";
const std::string kReal = "tests/topo/fixtures/real/";

std::vector<Case> cases() {
  return {
      {"topo-h100-vm", false, {"--from-snapshot", src(kReal + "h100-vm/snapshot")}, 0},
      {"topo-hgx-h100", false, {"--lspci-text", src(kReal + "hgx-h100-lspci-vvv.txt")}, 0},
      {"topo-hwloc-24em64t", false, {"--hwloc-xml", src(kReal + "hwloc-24em64t-2n6c2t-pci.xml")},
       3},
      {"doctor-h100-vm",
       true,
       {"--topo", src(kVm + "topo.json"), "--io", src(kVm + "io-x0-I0.json"), "--io",
        src(kVm + "io-x1-I0.json"), "--io", src(kVm + "io-x2-I0.json"), "--p2p",
        src(kVm + "p2p.json")},
       0},
      {"doctor-hgx-h100", true, {"--lspci-text", src(kReal + "hgx-h100-lspci-vvv.txt")}, 0},
      {"doctor-hwloc-24em64t",
       true,
       {"--hwloc-xml", src(kReal + "hwloc-24em64t-2n6c2t-pci.xml")},
       0},
  };
}

// The output with the build machine's source path cut to the repository-relative path.
std::string run(const Case& c) {
  const CliRun r = c.doctor ? doctor(c.args) : gdsb_topo(c.args);
  EXPECT_EQ(r.rc, c.rc) << c.name << ": " << r.err;
  std::string out = r.out;
  for (size_t at; (at = out.find(kSrc + "/")) != std::string::npos;)
    out.erase(at, kSrc.size() + 1);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string unified_diff(const fs::path& golden, const std::string& actual) {
  const fs::path tmp = fs::temp_directory_path() /
                       ("gdsb-golden-" + std::to_string(::getpid()) + "-" +
                        golden.filename().string());
  std::ofstream(tmp, std::ios::binary) << actual;
  std::string text;
  const std::string cmd = "diff -u --label 'tests/golden/" + golden.filename().string() +
                          "' --label actual '" + golden.string() + "' '" + tmp.string() +
                          "' 2>&1";
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    ::pclose(p);
  }
  fs::remove(tmp);
  return text.empty() ? "(diff -u unavailable; actual output:)\n" + actual : text;
}

TEST(Golden, OutputsMatchTheReviewedFiles) {
  const char* update = std::getenv("GDSB_UPDATE_GOLDEN");
  for (const auto& c : cases()) {
    const std::string actual = run(c);
    const fs::path file = kGolden / (c.name + ".txt");
    if (update && std::string(update) == "1") {
      std::ofstream(file, std::ios::binary) << actual;
      continue;
    }
    ASSERT_TRUE(fs::exists(file)) << file << " is missing: run with GDSB_UPDATE_GOLDEN=1 and "
                                  << "review the new file";
    const std::string golden = slurp(file);
    EXPECT_TRUE(golden == actual) << c.name << " differs from " << file.filename()
                              << " (GDSB_UPDATE_GOLDEN=1 rewrites it; review the diff):\n"
                              << unified_diff(file, actual);
  }
}

// The sentences of one output that the "each fact once" rule judges. The rule: the output
// is split at line ends and at ". "; a sentence's leading label (`reason:`, `- `, `Note:`
// ...) is dropped; table rows (the PCIe tree, the matrices, banners) and fragments shorter
// than 40 characters are ignored, and so is a reference to what an earlier part said
// ("as for GPU0", "as for acs-redirect: ..."): it names the fact's one place instead of
// repeating it. Every remaining sentence must occur once.
std::vector<std::string> sentences(const std::string& text) {
  static const std::vector<std::string> kLabels = {
      "- ", "reason: ", "consequence: ", "remedy: ", "evidence: ", "fix: ",
      "expected after the fix: ", "note: ", "Note: ", "Storage: ", "Diagnosis: ", "Verdict: "};
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    line = line.substr(first);
    // Table rows: tree branches, root-complex rows, banners, matrix rows and headers.
    if (line.rfind("+-", 0) == 0 || line.rfind("\\-", 0) == 0 || line.rfind("| ", 0) == 0 ||
        line.rfind("-[", 0) == 0 || line.rfind("==", 0) == 0 ||
        line.find("   ") != std::string::npos)
      continue;
    for (size_t from = 0; from < line.size();) {
      size_t end = line.find(". ", from);
      if (end == std::string::npos) end = line.size();
      std::string s = line.substr(from, end - from);
      from = end + 2;
      for (const auto& l : kLabels)
        if (s.rfind(l, 0) == 0) s = s.substr(l.size());
      if (s.size() >= 40 && s.find("as for ") == std::string::npos) out.push_back(s);
    }
  }
  return out;
}

TEST(Golden, NoSentenceRepeatsWithinAnOutput) {
  for (const auto& c : cases()) {
    std::map<std::string, int> seen;
    for (const auto& s : sentences(run(c))) ++seen[s];
    for (const auto& [s, n] : seen) EXPECT_EQ(n, 1) << c.name << " says " << n << " times: " << s;
  }
}

// gdsb-doctor: one headline, and per GPU one hop list in the order data flows (storage,
// its link, switches and bridges, host, GPU link), each hop kind once. The order is the
// issue's, written out here, not read from the renderer.
TEST(Golden, DoctorHasOneHeadlineAndHopsInFlowOrder) {
  const std::vector<std::string> order = {"hypervisor",    "network",     "storage alone",
                                          "drive link",    "NIC link",    "switch uplink",
                                          "bridge link",   "host link",   "GPU link"};
  for (const auto& c : cases()) {
    if (!c.doctor) continue;
    const std::string out = run(c);
    std::istringstream in(out);
    int headlines = 0;
    std::vector<std::string> kinds;  // of the current GPU's list
    const auto check_list = [&] {
      size_t last = 0;
      for (size_t i = 0; i < kinds.size(); ++i) {
        const auto at = std::find(order.begin(), order.end(), kinds[i]);
        ASSERT_NE(at, order.end()) << c.name << ": unknown hop " << kinds[i];
        const size_t rank = static_cast<size_t>(at - order.begin());
        EXPECT_TRUE(i == 0 || rank > last)
            << c.name << ": hop " << kinds[i] << " after " << kinds[i - 1] << "\n" << out;
        last = rank;
      }
      kinds.clear();
    };
    for (std::string line; std::getline(in, line);) {
      headlines += line.rfind("Diagnosis:", 0) == 0;
      if (line.rfind("  hop ", 0) == 0)
        kinds.push_back(line.substr(6, line.find(':') - 6));
      else
        check_list();
    }
    check_list();
    EXPECT_EQ(headlines, 1) << c.name << "\n" << out;
  }
}

// The rule catches what it is for: the old gdsb-topo's repeated waiver reason.
TEST(Golden, TheRepeatRuleSeesARepeatedReason) {
  const std::string reason =
      "reason: no PCIe NVMe drive or NIC: only virtual ones (0000:00:01.0 vda), and GDS P2P is "
      "not possible with them\n";
  const auto s = sentences(" [WAIVED] numa: x\n           " + reason + " [WAIVED] acs: y\n" +
                           "           " + reason + "   +-00:01.0 Red Hat, Inc. Virtio 1.0 "
                           "block device [storage] vda\n");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], s[1]);
}

}  // namespace
}  // namespace gdsb::doctor::testing
