// Where each GPU reads in gdsb-io's node mode (gdsb/topo/node_plan.hpp) and the ceiling of
// GPUs reading at once (PathModel::reads_ceiling), on the recorded HGX H100. Expectations
// read off the recording (hgx_recording.hpp): GPU i beside its own Gen4 x4 NVMe drive
// (7.877 GB/s per direction: 16 GT/s x 4 lanes x 128/130 / 8).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>

#include "gdsb/topo/node_plan.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

const std::filesystem::path kReal = GDSB_TOPO_REAL_FIXTURES;
constexpr double kDrive = 16.0 * 4 * 128 / 130 / 8;  // GB/s

Snapshot hgx() { return collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline()); }

TEST(NodePlanHgx, EightGpusEachOnItsOwnDriveSumEightDriveLinks) {
  const Snapshot s = hgx();
  const TopologyView v(s);
  const PathModel m(v);
  std::vector<PathModel::GpuReads> reads;
  for (const auto& g : kHgx) reads.push_back({g.gpu, {g.nvme}});
  const Ceiling c = m.reads_ceiling(reads);
  ASSERT_TRUE(c.gb_s) << c.limited_by;
  EXPECT_NEAR(*c.gb_s, 8 * kDrive, 0.01);  // 63.0, not one GPU's 7.9
  EXPECT_EQ(c.peers.size(), 8U);
  // One drive read by two GPUs caps their sum at its link.
  const Ceiling shared = m.reads_ceiling({{kHgx[0].gpu, {kHgx[0].nvme}}, {kHgx[1].gpu, {kHgx[0].nvme}}});
  ASSERT_TRUE(shared.gb_s) << shared.limited_by;
  EXPECT_NEAR(*shared.gb_s, kDrive, 0.01);
  // A GPU the input does not hold is named, not counted.
  const Ceiling partial = m.reads_ceiling({{kHgx[0].gpu, {kHgx[0].nvme}}, {"0000:ee:00.0", {kHgx[1].nvme}}});
  ASSERT_TRUE(partial.gb_s);
  EXPECT_NEAR(*partial.gb_s, kDrive, 0.01);
  EXPECT_NE(partial.limited_by.find("not counted, no path in this input: 0000:ee:00.0"), std::string::npos)
      << partial.limited_by;
}

// GPU3's drive (5c:00.0, nvme3n1) carries its own ext4 at /mnt/nvme3; a RAID 0 over all
// eight drives at /raid belongs to no GPU alone; the root file system is never used.
TEST(NodePlanHgx, AGpuReadsAFileSystemOfItsOwnDriveElseTheSharedDirectory) {
  Snapshot s = hgx();
  std::vector<std::string> all;
  for (std::size_t i = 0; i < std::size(kHgx); ++i) {
    const std::string name = "nvme" + std::to_string(i) + "n1";
    for (auto& d : s.devices)
      if (d.bdf == kHgx[i].nvme) d.block_devices = {name};
    BlockDevice b;
    b.name = name;
    s.machine.block_devices.push_back(b);
    all.push_back(name);
  }
  BlockDevice md;
  md.name = "md127";
  md.slaves = all;
  md.md_level = "raid0";
  s.machine.block_devices.push_back(md);
  BlockDevice part;
  part.name = "nvme0n1p1";
  part.parent = "nvme0n1";
  s.machine.block_devices.push_back(part);
  for (const auto& [source, target, fstype] : {std::tuple{"/dev/nvme0n1p1", "/", "ext4"},
                                              std::tuple{"/dev/md127", "/raid", "ext4"},
                                              std::tuple{"/dev/nvme3n1", "/mnt/nvme3", "xfs"}}) {
    Mount mt;
    mt.source = source;
    mt.target = target;
    mt.fstype = fstype;
    mt.options = "rw";
    s.machine.mounts.push_back(mt);
  }
  const TopologyView v(s);
  const PathModel m(v);
  std::vector<std::string> gpus;
  for (const auto& g : kHgx) gpus.push_back(g.gpu);
  gpus.push_back("00000000:EE:00.0");  // as NVML writes a bus id; not in this input
  const auto plans = plan_node(m, gpus);
  ASSERT_EQ(plans.size(), 9U);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(plans[i].gpu, kHgx[i].gpu);
    ASSERT_EQ(plans[i].sources, std::vector<std::string>{kHgx[i].nvme});
    EXPECT_EQ(plans[i].drives, std::vector<std::string>{"nvme" + std::to_string(i) + "n1"});
    ASSERT_TRUE(plans[i].ceiling.gb_s);
    EXPECT_NEAR(*plans[i].ceiling.gb_s, kDrive, 0.01);
    if (i == 3) {
      EXPECT_EQ(plans[i].directory, "/mnt/nvme3");
      EXPECT_NE(plans[i].directory_note.find("xfs on nvme3n1"), std::string::npos) << plans[i].directory_note;
    } else {
      EXPECT_EQ(plans[i].directory, "") << i;  // GPU0's drive holds only "/"; /raid is everyone's
      EXPECT_NE(plans[i].directory_note.find("no file system of its own"), std::string::npos);
    }
  }
  EXPECT_EQ(plans[8].gpu, "");
  EXPECT_NE(plans[8].directory_note.find("the GPU is not in the topology input"), std::string::npos);
  // /raid's data comes from all eight drives: eight GPUs reading it are capped by them.
  EXPECT_EQ(directory_sources(s, "/raid/scratch").size(), 8U);
  EXPECT_EQ(directory_sources(s, "/mnt/nvme3"), std::vector<std::string>{kHgx[3].nvme});
  EXPECT_EQ(directory_sources(s, "/home/user"), std::vector<std::string>{kHgx[0].nvme});  // on "/"
}

}  // namespace
}  // namespace gdsb::topo::testing
