// hwloc XML inputs, complete: GPU names (hwloc's GPUModel, else pci.ids), each link's
// recorded bandwidth (pci_link_speed), InfiniBand HCAs of class 0c06 as NICs. Recordings
// in tests/topo/fixtures/real (SOURCES.md); every expectation was read off the XML.
#include <filesystem>
#include <sstream>

#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/render.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;

bool have_pci_ids() {
  return fs::exists("/usr/share/misc/pci.ids") || fs::exists("/usr/share/hwdata/pci.ids");
}

Outcome hwloc(const std::string& file, bool names) {
  CollectOptions o = offline();
  o.lookup_names = names;
  return evaluate_snapshot(collect_hwloc_xml(kReal / file, o));
}

std::string tree_of(const Outcome& o) {
  std::ostringstream out;
  render_tree(out, o.snapshot, *o.view);
  return out.str();
}

// NVIDIA DGX-2 (nvidiaDGX2.xml): 16 Tesla V100-SXM3-32GB-H whose GPUModel sits on the
// nvml<N> OS device only (no PCIVendor/PCIDevice info anywhere in the file), every GPU at
// pci_link_speed 15.753846 (Gen3 x16: 16 lanes x 8 GT/s x 128/130 / 8), the NVSwitches
// (10de:1ac2) at 1.000000.
constexpr const char* kDgx2Gpus[] = {
    "0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0",
    "0000:57:00.0", "0000:59:00.0", "0000:5c:00.0", "0000:5e:00.0",
    "0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",
    "0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0"};

TEST(TopoHwlocDgx2, GpuNamesFromGpuModelAndLinkBandwidths) {
  const auto o = hwloc("dgx2-hwloc.xml", false);
  ASSERT_EQ(o.view->gpus().size(), 16u);
  const std::string tree = tree_of(o);
  for (const char* bdf : kDgx2Gpus) {
    const Device* g = o.snapshot.find(bdf);
    ASSERT_NE(g, nullptr) << bdf;
    EXPECT_EQ(g->role, Role::Gpu) << bdf;
    EXPECT_EQ(display_name(o.snapshot, *g), "Tesla V100-SXM3-32GB-H") << bdf;
    ASSERT_TRUE(g->recorded_link_gb_s.has_value()) << bdf;
    EXPECT_NEAR(*g->recorded_link_gb_s, 15.753846, 1e-5) << bdf;
    EXPECT_NE(tree.find(std::string(bdf).substr(5) + " Tesla V100-SXM3-32GB-H [gpu] 15.75 GB/s link"),
              std::string::npos)
        << bdf << "\n" << tree;
  }
  for (const Device* sw : o.snapshot.with_role(Role::NvSwitch)) {
    ASSERT_TRUE(sw->recorded_link_gb_s.has_value()) << sw->bdf;
    EXPECT_NEAR(*sw->recorded_link_gb_s, 1.0, 1e-6) << sw->bdf;
  }
  const CheckResult* link = o.titled("link", "PCIe link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, Verdict::Waived);  // no speed/width: nothing to judge
  EXPECT_TRUE(contains(link->evidence,
                       "0000:34:00.0 (gpu): 15.75 GB/s per direction (hwloc pci_link_speed)"));
}

TEST(TopoHwlocDgx2, OtherDevicesNamedFromTheIdDatabase) {
  if (!have_pci_ids()) GTEST_SKIP() << "no pci.ids installed (ci/install-deps.sh installs it)";
  const auto o = hwloc("dgx2-hwloc.xml", true);
  // The GPUs keep hwloc's product name; the root port above the first GPU (2b:00.0,
  // 8086:2030, no name in the file) gets pci.ids' name.
  EXPECT_EQ(display_name(o.snapshot, *o.snapshot.find("0000:34:00.0")), "Tesla V100-SXM3-32GB-H");
  const std::string port = display_name(o.snapshot, *o.snapshot.find("0000:2b:00.0"));
  EXPECT_NE(port.find("Sky Lake-E PCI Express Root Port A"), std::string::npos) << port;
}

// HP ProLiant SL390s G7 (hwloc's 24em64t-2n6c2t-pci.xml): two sockets; three Tesla M2070
// (10de:06d2, class 0302, no GPUModel, no PCIDevice info: pci.ids names it "GF100GL [Tesla
// M2070]") at 06:00.0 under root port 00:07.0 on NUMA node 0, and at 11:00.0 and 14:00.0
// under root ports 10:07.0 and 10:03.0 on NUMA node 1, each at pci_link_speed 4.000000; a
// Mellanox ConnectX VPI (15b3:6746) of class 0c06 at 05:00.0 with ib0, eth2 and mlx4_0, at
// 2.000000; two Intel 82576 gigabit ports (04:00.0/.1, eth0/eth1) at 0.200000; sda on the
// ICH10 SATA controller. No NVMe.
TEST(TopoHwlocSl390s, InfinibandIsADataNicAndLinksAreRecorded) {
  const auto o = hwloc("hwloc-24em64t-2n6c2t-pci.xml", false);
  const struct {
    const char* bdf;
    int numa;
  } gpus[] = {{"0000:06:00.0", 0}, {"0000:11:00.0", 1}, {"0000:14:00.0", 1}};
  ASSERT_EQ(o.view->gpus().size(), 3u);
  for (const auto& g : gpus) {
    const Device* d = o.snapshot.find(g.bdf);
    ASSERT_NE(d, nullptr) << g.bdf;
    EXPECT_EQ(d->role, Role::Gpu) << g.bdf;
    EXPECT_EQ(d->numa_node, g.numa) << g.bdf;
    ASSERT_TRUE(d->recorded_link_gb_s.has_value()) << g.bdf;
    EXPECT_NEAR(*d->recorded_link_gb_s, 4.0, 1e-6) << g.bdf;
    EXPECT_EQ(display_name(o.snapshot, *d), "[10de:06d2]") << g.bdf;  // names not looked up
  }
  const Device* ib = o.snapshot.find("0000:05:00.0");
  ASSERT_NE(ib, nullptr);
  EXPECT_EQ(ib->class_id(), 0x0c06);
  EXPECT_EQ(ib->role, Role::Nic);
  EXPECT_TRUE(is_data_nic(*ib));
  EXPECT_EQ(ib->net_devices, (std::vector<std::string>{"eth2", "ib0"}));
  EXPECT_NEAR(ib->recorded_link_gb_s.value_or(0), 2.0, 1e-6);
  for (const char* lom : {"0000:04:00.0", "0000:04:00.1"}) {
    const Device* d = o.snapshot.find(lom);
    ASSERT_NE(d, nullptr) << lom;
    EXPECT_EQ(d->role, Role::Nic) << lom;
    EXPECT_NEAR(d->recorded_link_gb_s.value_or(0), 0.2, 1e-6) << lom;
    EXPECT_EQ(d->name, "82576 Gigabit Network Connection") << lom;  // hwloc's PCIDevice
  }
  EXPECT_TRUE(o.snapshot.with_role(Role::Nvme).empty());
  const CheckResult* link = o.titled("link", "PCIe link");
  ASSERT_NE(link, nullptr);
  EXPECT_TRUE(contains(link->evidence,
                       "0000:05:00.0 (nic): 2.00 GB/s per direction (hwloc pci_link_speed)"));
  EXPECT_TRUE(contains(link->evidence,
                       "0000:11:00.0 (gpu): 4.00 GB/s per direction (hwloc pci_link_speed)"));
}

TEST(TopoHwlocSl390s, GpuNamesFromTheIdDatabase) {
  if (!have_pci_ids()) GTEST_SKIP() << "no pci.ids installed (ci/install-deps.sh installs it)";
  const auto o = hwloc("hwloc-24em64t-2n6c2t-pci.xml", true);
  const std::string tree = tree_of(o);
  for (const char* bdf : {"0000:06:00.0", "0000:11:00.0", "0000:14:00.0"}) {
    const std::string name = display_name(o.snapshot, *o.snapshot.find(bdf));
    EXPECT_NE(name.find("Tesla M2070"), std::string::npos) << bdf << ": " << name;
    EXPECT_NE(tree.find(std::string(bdf).substr(5) + " " + name + " [gpu] 4.00 GB/s link"),
              std::string::npos)
        << tree;
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
