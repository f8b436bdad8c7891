// NVML's NVLink state and P2P status, read through the real shim from a stand-in
// libnvidia-ml.so.1 that answers as the 2 x H200 machine did (fake_nvml/fake_nvml.cpp;
// tests/p2p/fixtures/h200x2-nvidia-smi-topo.txt: NV18, P2P read/write/NVLink/atomics OK,
// PCI NS), recorded into a snapshot and replayed by gdsb-p2p and gdsb-topo.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fixture_builder.hpp"
#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/nvlink.hpp"
#include "gdsb/topo/nvml_facts.hpp"
#include "gdsb/topo/render.hpp"
#include "p2p_cli.hpp"

namespace gdsb::p2p {
namespace {

namespace fx = gdsb::topo::fixture;
constexpr const char* kGpu0 = "0000:00:06.0";
constexpr const char* kGpu1 = "0000:00:07.0";

// Sets one of the fake's environment variables; unsets it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// The fake's answer for the far end of the links.
struct RemoteMode : ScopedEnv {
  explicit RemoteMode(const char* mode) : ScopedEnv("GDSB_FAKE_NVML_REMOTE", mode) {}
};

// The two GPUs as the Firecracker VM shows them: flat bus 00, no bridge.
topo::Snapshot h200_box() {
  topo::Snapshot s;
  for (const char* bdf : {kGpu0, kGpu1}) {
    topo::Device d;
    d.bdf = bdf;
    d.vendor = 0x10de;
    d.device = 0x2335;
    d.class_code = 0x030200;
    d.root_complex = "0000:00";
    d.role = topo::Role::Gpu;
    s.devices.push_back(d);
  }
  s.machine.numa_nodes = 1;
  return s;
}

topo::Snapshot h200_with_nvml() {
  topo::Snapshot s = h200_box();
  const topo::NvmlFactsOpening nv = topo::open_nvml_gpu_facts(GDSB_FAKE_NVML);
  EXPECT_TRUE(nv.provider) << nv.unavailable_reason;
  if (nv.provider) topo::apply_gpu_facts(s, *nv.provider);
  return s;
}

TEST(P2pNvlinkSnapshot, NvmlLinksGiveNv18WhateverTheRemoteIsCalled) {
  for (const char* mode : {"switch", "gpu", "unknown"}) {
    RemoteMode m(mode);
    const topo::Snapshot s = h200_with_nvml();
    ASSERT_TRUE(s.gpu_facts.at(kGpu0).nvlinks) << mode;
    EXPECT_EQ(s.gpu_facts.at(kGpu0).nvlinks->size(), 18u) << mode;
    EXPECT_EQ(topo::nvlinks_active(s, kGpu0), 18) << mode;
    const auto pair = topo::nvlink_pair(s, kGpu0, kGpu1);
    ASSERT_TRUE(pair) << mode;
    EXPECT_EQ(pair->links, 18) << mode;
    EXPECT_EQ(pair->through_nvswitch, std::string(mode) != "gpu") << mode;
    ASSERT_EQ(s.gpu_pairs.size(), 2u);
    EXPECT_EQ(s.gpu_pairs[0].p2p.at("read"), "OK");
    EXPECT_EQ(s.gpu_pairs[0].p2p.at("nvlink"), "OK");
    EXPECT_EQ(s.gpu_pairs[0].p2p.at("pci"), "NS");
  }
}

TEST(P2pNvlinkSnapshot, SavedSnapshotReplaysTheNvidiaSmiView) {
  RemoteMode m("switch");
  fx::TempDir dir;
  topo::save_snapshot(h200_with_nvml(), dir.path());
  const topo::Snapshot back = topo::load_snapshot(dir.path());
  ASSERT_TRUE(back.gpu_facts.at(kGpu1).nvlinks);
  EXPECT_EQ(back.gpu_facts.at(kGpu1).nvlinks->at(17).remote_type, "nvswitch");
  EXPECT_EQ(back.gpu_facts.at(kGpu1).nvlinks->at(17).remote, "0000:ff:00.0");

  P2POptions o;
  o.sources.from_snapshot = dir.path().string();
  o.json_path = (dir.path() / "p2p.json").string();
  Backends b = make_backends(o);
  std::ostringstream out, err;
  ASSERT_EQ(run_p2p(o, b, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("NV18"), std::string::npos) << out.str();
  std::ifstream in(o.json_path);
  const auto doc = nlohmann::json::parse(in);
  using Cells = std::vector<std::vector<std::string>>;
  // nvidia-smi topo -m and topo -p2p r/w/n/a/p on that machine.
  EXPECT_EQ(doc["matrices"]["topology"]["cells"].get<Cells>(), (Cells{{"X", "NV18"}, {"NV18", "X"}}));
  for (const char* name : {"nvml_read", "nvml_write", "nvml_nvlink", "nvml_atomics"})
    EXPECT_EQ(doc["matrices"][name]["cells"].get<Cells>(), (Cells{{"X", "OK"}, {"OK", "X"}})) << name;
  EXPECT_EQ(doc["matrices"]["nvml_pci"]["cells"].get<Cells>(), (Cells{{"X", "NS"}, {"NS", "X"}}));
  EXPECT_EQ(doc["gpus"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(doc["gpus"][0]["nvlinks"], 18);
  EXPECT_NE(doc["pairs"][0]["verdict"].get<std::string>().find("NVML P2P read OK, write OK"),
            std::string::npos);
  EXPECT_EQ(doc["pairs"][0]["direct"], true);
}

TEST(P2pNvlinkSnapshot, GdsbTopoPrintsNv18FromTheSnapshot) {
  RemoteMode m("unknown");
  const topo::Snapshot s = h200_with_nvml();
  const topo::TopologyView v(s);
  std::ostringstream out;
  topo::render_nvlink(out, v);
  // The GPU0 row: X, then NV18 for GPU1.
  const std::string text = out.str();
  const auto row = text.find("\n GPU0 ") + 1;
  ASSERT_NE(row, 0u) << text;
  const std::string line = text.substr(row, text.find('\n', row) - row);
  EXPECT_NE(line.find("X   NV18"), std::string::npos) << text;
  EXPECT_NE(out.str().find("from nvml"), std::string::npos) << out.str();
}

TEST(P2pNvlinkSnapshot, LiveGdsbP2pReadsNv18ThroughTheShim) {
  RemoteMode m("switch");
  P2POptions o;
  o.no_cuda = true;
  o.no_hwloc = true;
  o.nvml_lib = GDSB_FAKE_NVML;
  Backends b = make_backends(o);
  std::ostringstream out, err;
  ASSERT_EQ(run_p2p(o, b, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("GPU0     X  NV18"), std::string::npos) << out.str();
}

// The live NVML path and a snapshot of the same NVML judge NV# by the one rule of
// gdsb/topo/nvlink.hpp. Through the switches a pair can use the smaller side's links: with
// 6 of GPU1's 18 links down, nvidia-smi's NV# is 12 both ways (the rule's min(18, 12)).
TEST(P2pNvlinkSnapshot, LiveNvSwitchPairGivesTheTopoRulesNvNumber) {
  using Cells = std::vector<std::vector<std::string>>;
  for (const char* mode : {"switch", "unknown"}) {
    for (const auto& [gpu1_links, nv] : {std::pair{"18", "NV18"}, std::pair{"12", "NV12"}}) {
      RemoteMode m(mode);
      ScopedEnv down("GDSB_FAKE_NVML_GPU1_LINKS", gpu1_links);
      const auto recorded = topo::nvlink_pair(h200_with_nvml(), kGpu0, kGpu1);
      ASSERT_TRUE(recorded) << mode;
      EXPECT_EQ("NV" + std::to_string(recorded->links), nv) << mode << " " << gpu1_links;
      fx::TempDir dir;
      P2POptions o;
      o.no_cuda = true;
      o.no_hwloc = true;
      o.nvml_lib = GDSB_FAKE_NVML;
      o.json_path = (dir.path() / "p2p.json").string();
      Backends b = make_backends(o);
      std::ostringstream out, err;
      ASSERT_EQ(run_p2p(o, b, out, err), 0) << err.str();
      const auto doc = nlohmann::json::parse(std::ifstream(o.json_path));
      EXPECT_EQ(doc["matrices"]["topology"]["cells"].get<Cells>(), (Cells{{"X", nv}, {nv, "X"}}))
          << mode << " " << gpu1_links;
    }
  }
}

// An NVSwitch (NVIDIA, class 0680, as the H100 HGX shows its 22a3) on a root bus, in a
// sysfs tree, an lspci -xxxx dump and a saved snapshot of the same box: always an NVSwitch.
TEST(P2pNvlinkSnapshot, NvSwitchIsRecognisedInEveryInput) {
  fx::Machine m = fx::make_box(1, 1, 1, 1, 0);
  fx::Dev sw;
  sw.bdf = "0000:90:00.0";
  sw.vendor = 0x10de;
  sw.device = 0x22a3;
  sw.class_code = 0x068000;
  m.devs.push_back(sw);
  fx::TempDir dir;
  fx::write_sysfs(m, dir.path() / "tree");
  {
    std::ofstream dump(dir.path() / "dump.txt");
    dump << fx::lspci_dump(m, 4096);
  }
  topo::CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  o.use_nvml = false;
  topo::InputSources tree, dump, snap;
  tree.sysfs_root = (dir.path() / "tree").string();
  dump.pci_dump = (dir.path() / "dump.txt").string();
  topo::save_snapshot(topo::collect_from(tree, o), dir.path() / "snap");
  snap.from_snapshot = (dir.path() / "snap").string();
  for (const topo::InputSources* in : {&tree, &dump, &snap}) {
    const topo::Snapshot s = topo::collect_from(*in, o);
    const topo::Device* d = s.find("0000:90:00.0");
    ASSERT_NE(d, nullptr) << in->description();
    EXPECT_EQ(d->role, topo::Role::NvSwitch) << in->description();
    EXPECT_EQ(topo::role_name(d->role), "nvswitch");
    P2POptions po;
    po.sources = *in;
    po.quiet = false;
    Backends b = make_backends(po);
    std::ostringstream out, err;
    ASSERT_EQ(run_p2p(po, b, out, err), 0) << err.str();
    EXPECT_NE(out.str().find("NVSwitches: 1\n  NVSwitch 0000:90:00.0"), std::string::npos)
        << in->description() << out.str();
  }
}

TEST(P2pNvlinkSnapshot, RecordedInputsRefuseMeasureAndNameAMissingFile) {
  P2POptions o;
  o.sources.hwloc_xml = GDSB_P2P_FIXTURES "/real/dgx2-hwloc.xml";
  o.measure = true;
  Backends b = make_backends(o);
  std::ostringstream out, err;
  EXPECT_EQ(run_p2p(o, b, out, err), 2);
  EXPECT_NE(err.str().find("cannot run on a recorded input (--hwloc-xml"), std::string::npos) << err.str();

  P2POptions missing;
  missing.sources.hwloc_xml = "/nonexistent/topo.xml";
  try {
    make_backends(missing);
    FAIL() << "a missing --hwloc-xml must throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/topo.xml"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gdsb::p2p
