// Mounts and the storage under them, matched exactly (gdsb/topo/mounts.hpp): mount points at
// a '/' boundary, partitions of their own disk only, device-mapper and md RAID volumes
// followed to their drives. The fleet cases are mutations of the real 8x H100 HGX recording:
// its `lspci -vvv` has no host facts, so each test gives it the mounts and block devices a
// node of that fleet would have and judges them as a person reading them would.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "gdsb/topo/mounts.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

std::vector<Mount> parse_mounts(const std::vector<std::string>& lines) {
  std::vector<Mount> out;
  for (const auto& l : lines) {
    std::istringstream f(l);
    Mount m;
    f >> m.source >> m.target >> m.fstype >> m.options;
    out.push_back(m);
  }
  return out;
}

struct Case {
  const char *a, *b;
  bool expected;
};

TEST(TopoMounts, PathsBelongToAMountPointOnlyAtASlash) {
  for (const Case& c : {Case{"/data1/f", "/data1", true}, {"/data1", "/data1", true},
                        {"/data1/f", "/data1/", true}, {"/data10/f", "/data1", false},
                        {"/snapshots", "/snap", false}, {"/system", "/sys", false},
                        {"/snap/core/1", "/snap", true}, {"/anything", "/", true}})
    EXPECT_EQ(path_within(c.a, c.b), c.expected) << c.a << " within " << c.b;
  const std::vector<Mount> mounts =
      parse_mounts({"/dev/nvme0n1p2 / xfs rw 0 0", "/dev/nvme1n1 /data1 ext4 rw 0 0"});
  ASSERT_NE(mount_holding(mounts, "/data10/f"), nullptr);
  EXPECT_EQ(mount_holding(mounts, "/data10/f")->target, "/");
  EXPECT_EQ(mount_holding(mounts, "/data1/f")->target, "/data1");
  EXPECT_EQ(mount_holding({}, "/data1/f"), nullptr);
}

TEST(TopoMounts, PartitionsBelongToTheirOwnDiskOnly) {
  for (const Case& c : {Case{"nvme1n1", "nvme1n1", true}, {"nvme1n1p2", "nvme1n1", true},
                        {"nvme1n10p1", "nvme1n1", false}, {"nvme1n10", "nvme1n1", false},
                        {"sda1", "sda", true}, {"sdaa1", "sda", false}, {"vda", "", false}})
    EXPECT_EQ(is_on_disk(c.a, c.b), c.expected) << c.a << " on " << c.b;
}

// The HGX recording with host facts: kernel 6.8, udev, nvidia-fs as asked, and the kernel's
// names of its eight drives in PCI order (GPU i's drive is nvme<i>n1).
Outcome hgx_node(const std::vector<std::string>& mounts, std::vector<BlockDevice> blocks,
                 bool nvidia_fs = true) {
  Snapshot s = hgx_with_host_facts(nvidia_fs, offline());
  for (size_t i = 0; i < std::size(kHgx); ++i)
    for (auto& d : s.devices)
      if (d.bdf == kHgx[i].nvme) d.block_devices = {"nvme" + std::to_string(i) + "n1"};
  Machine& m = s.machine;
  m.mounts = parse_mounts(mounts);
  m.block_devices = std::move(blocks);
  return evaluate_snapshot(std::move(s));
}

const CheckResult& file_systems(const Outcome& o) {
  const CheckResult* r = o.titled("gds-stack", "file systems");
  if (!r) throw std::runtime_error("no file-system result");
  return *r;
}

// The system mounts a node has, none of them data.
const std::vector<std::string> kSystem = {
    "proc /proc proc rw 0 0", "sysfs /sys sysfs rw 0 0", "tmpfs /run tmpfs rw 0 0",
    "/dev/nvme0n1p1 /boot/efi vfat rw 0 0", "/dev/loop0 /snap/core20/2318 squashfs ro 0 0"};

std::vector<std::string> with_system(std::vector<std::string> data) {
  data.insert(data.end(), kSystem.begin(), kSystem.end());
  return data;
}

TEST(TopoMountsHgx, MountPointsThatOnlyStartLikeSystemOnesAreData) {
  const auto o = hgx_node(with_system({"/dev/nvme2n1 /snapshots xfs rw 0 0",
                                       "/dev/nvme3n1 /system xfs rw 0 0",
                                       "/dev/nvme4n1 /runs xfs rw 0 0"}),
                          {});
  const CheckResult& r = file_systems(o);
  EXPECT_EQ(r.verdict, Verdict::Pass);
  EXPECT_TRUE(contains(r.evidence, "/snapshots xfs (/dev/nvme2n1): GDS-capable on nvme2n1 "
                                   "(0000:4b:00.0)"));
  EXPECT_TRUE(contains(r.evidence, "/system xfs (/dev/nvme3n1): GDS-capable on nvme3n1 "
                                   "(0000:5c:00.0)"));
  EXPECT_TRUE(contains(r.evidence, "/runs xfs (/dev/nvme4n1): GDS-capable on nvme4n1 "
                                   "(0000:9a:00.0)"));
  EXPECT_EQ(r.evidence.size(), 3U);  // /boot/efi, /snap/..., /proc, /sys, /run are not data
}

TEST(TopoMountsHgx, Data1BesideData10) {
  // nvme1n1 is GPU 1's drive; nvme1n10 is a namespace this input does not show.
  const auto o = hgx_node(with_system({"/dev/nvme1n1p1 /data1 xfs rw 0 0",
                                       "/dev/nvme1n10p1 /data10 xfs rw 0 0"}),
                          {});
  const CheckResult& r = file_systems(o);
  EXPECT_TRUE(contains(r.evidence,
                       "/data1 xfs (/dev/nvme1n1p1): GDS-capable on nvme1n1 (0000:3a:00.0)"));
  EXPECT_TRUE(contains(r.evidence, "/data10 xfs (/dev/nvme1n10p1): GDS-capable (drive "
                                   "nvme1n10p1 is not identified in this input)"));
}

// An LVM volume over two of the node's drives, as `lsblk` shows one (vg-lv on a partition
// and a whole disk; the kernel lists both in /sys/class/block/dm-0/slaves).
std::vector<BlockDevice> lvm_over_two_drives() {
  return {{"dm-0", "", {"nvme0n1p3", "nvme1n1"}, "vg0-data", ""},
          {"nvme0n1", "", {}, "", ""},
          {"nvme0n1p3", "nvme0n1", {}, "", ""},
          {"nvme1n1", "", {}, "", ""}};
}

TEST(TopoMountsHgx, LvmDataMountIsRefused) {
  const auto o =
      hgx_node(with_system({"/dev/mapper/vg0-data /data xfs rw 0 0"}), lvm_over_two_drives());
  const CheckResult& r = file_systems(o);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  ASSERT_EQ(r.evidence.size(), 1U);
  EXPECT_EQ(r.evidence[0],
            "/data xfs (/dev/mapper/vg0-data): on device-mapper volume dm-0 (vg0-data) over "
            "nvme0n1, nvme1n1 (LVM, dm-crypt or multipath): cuFile refuses device-mapper "
            "block devices (\"Unsupported block device\" in its log) and reads the mount in "
            "compat mode");
  // Without /sys/class/block (an older snapshot) the source's name still says device-mapper.
  const auto bare = hgx_node(with_system({"/dev/mapper/vg0-data /data xfs rw 0 0"}), {});
  EXPECT_EQ(file_systems(bare).verdict, Verdict::Fail);
  EXPECT_TRUE(any_contains(file_systems(bare).evidence, "device-mapper volume mapper/vg0-data"));
}

// Software RAID0 over four drives, as a cloud GPU node's setup script builds it (mdadm
// --level 0 over the nvme*n1 drives, mkfs.xfs, mounted on /mnt/resource_nvme).
std::vector<BlockDevice> raid(const std::string& level) {
  return {{"md127", "", {"nvme4n1", "nvme5n1", "nvme6n1", "nvme7n1"}, "", level},
          {"nvme4n1", "", {}, "", ""},
          {"nvme5n1", "", {}, "", ""},
          {"nvme6n1", "", {}, "", ""},
          {"nvme7n1", "", {}, "", ""}};
}

TEST(TopoMountsHgx, MdRaid0NeedsNvidiaFs) {
  const std::vector<std::string> mounts = with_system({"/dev/md127 /mnt/resource_nvme xfs rw 0 0"});
  const auto with_nvfs = hgx_node(mounts, raid("raid0"));
  EXPECT_EQ(file_systems(with_nvfs).verdict, Verdict::Pass);
  EXPECT_TRUE(contains(file_systems(with_nvfs).evidence,
                       "/mnt/resource_nvme xfs (/dev/md127): GDS-capable md md127 (raid0) over "
                       "nvme4n1, nvme5n1, nvme6n1, nvme7n1, on nvme4n1 (0000:9a:00.0), nvme5n1 "
                       "(0000:ba:00.0), nvme6n1 (0000:ca:00.0), nvme7n1 (0000:da:00.0)"));
  // Kernel P2PDMA instead of nvidia-fs: the stack is fine, the RAID0 is not.
  const auto p2pdma = hgx_node(mounts, raid("raid0"), false);
  EXPECT_EQ(p2pdma.titled("gds-stack", "nvidia-fs")->verdict, Verdict::Pass);
  const CheckResult& r = file_systems(p2pdma);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  EXPECT_TRUE(any_contains(r.evidence, "GDS reads md RAID0 through nvidia-fs only (kernel "
                                       "P2PDMA does not support RAID0), and nvidia-fs is not "
                                       "loaded"));
}

TEST(TopoMountsHgx, OtherMdLevelsAreNoVerdict) {
  const auto o = hgx_node(with_system({"/dev/md127 /mnt/resource_nvme xfs rw 0 0"}), raid("raid1"));
  const CheckResult& r = file_systems(o);
  EXPECT_EQ(r.verdict, Verdict::Waived);
  EXPECT_TRUE(any_contains(r.evidence, "on md md127 (raid1) over nvme4n1, nvme5n1, nvme6n1, "
                                       "nvme7n1: the GDS documents name md RAID0 only"));
  EXPECT_FALSE(any_contains(r.evidence, "GDS-capable"));
  // The level unknown (no /sys/class/block): no verdict either.
  const auto bare = hgx_node(with_system({"/dev/md127 /mnt/resource_nvme xfs rw 0 0"}), {});
  EXPECT_EQ(file_systems(bare).verdict, Verdict::Waived);
  EXPECT_TRUE(any_contains(file_systems(bare).evidence, "whose level this input does not show"));
}

TEST(TopoMountsHgx, NetworkFileSystemsNeedNvidiaFsAndTheirNics) {
  const std::vector<std::string> mounts =
      with_system({"10.0.0.5:/datasets /datasets nfs4 rw,proto=rdma,port=20049 0 0"});
  // proto=rdma and nvidia-fs, but this input has no routes or RDMA ports (issue 25): no
  // verdict, never GDS-capable without the NIC that carries it (test_network_storage.cpp
  // gives the node its network).
  const auto with_nvfs = hgx_node(mounts, {});
  EXPECT_EQ(file_systems(with_nvfs).verdict, Verdict::Waived);
  EXPECT_FALSE(any_contains(file_systems(with_nvfs).evidence, "GDS-capable"));
  EXPECT_TRUE(any_contains(file_systems(with_nvfs).evidence,
                           "/datasets nfs4 (10.0.0.5:/datasets): NFS: proto=rdma,port=20049, "
                           "but this input does not show the node's routes and RDMA ports"));
  // On kernel P2PDMA alone (the NVMe path): NFS over RDMA needs nvidia-fs.
  const auto p2pdma = hgx_node(mounts, {}, false);
  const CheckResult& r = file_systems(p2pdma);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  EXPECT_TRUE(contains(r.evidence, "/datasets nfs4 (10.0.0.5:/datasets): NFS: GDS serves nfs4 "
                                   "through nvidia-fs only (not kernel P2PDMA), and nvidia-fs "
                                   "is not loaded; carriers: this input does not show the "
                                   "node's network interfaces and routes"));
}

// The collector reads the same layout from a sysfs tree (the kernel's /sys/class/block
// links, a partition inside its disk, slaves/, dm/name), and a snapshot keeps it.
TEST(TopoMounts, SysfsLayoutIsReadAndKeptInSnapshots) {
  auto m = fixture::make_box(1, 1, 1, 2, 0);  // GPU, drives nvme0n1 and nvme1n1
  m.host.mounts = {"/dev/nvme0n1p2 / xfs rw 0 0", "/dev/mapper/vg0-data /data xfs rw 0 0"};
  m.host.blocks = {{"nvme0n1", "", {}, "", ""},
                   {"nvme0n1p2", "nvme0n1", {}, "", ""},
                   {"nvme0n1p3", "nvme0n1", {}, "", ""},
                   {"nvme1n1", "", {}, "", ""},
                   {"dm-0", "", {"nvme0n1p3", "nvme1n1"}, "vg0-data", ""}};
  fixture::TempDir tree, snap;
  fixture::write_sysfs(m, tree.path());
  const Snapshot live_like = collect_sysfs_root(tree.path(), offline());
  save_snapshot(live_like, snap.path());
  auto judge = [](const Outcome& o) {
    const auto& blocks = o.snapshot.machine.block_devices;
    ASSERT_EQ(blocks.size(), 5U);
    EXPECT_EQ(blocks[0].name, "dm-0");
    EXPECT_EQ(blocks[0].dm_name, "vg0-data");
    EXPECT_EQ(blocks[0].slaves, (std::vector<std::string>{"nvme0n1p3", "nvme1n1"}));
    EXPECT_EQ(blocks[2].name, "nvme0n1p2");
    EXPECT_EQ(blocks[2].parent, "nvme0n1");
    const CheckResult& r = file_systems(o);
    EXPECT_TRUE(any_contains(r.evidence, "/ xfs (/dev/nvme0n1p2): GDS-capable on nvme0n1"));
    EXPECT_TRUE(any_contains(r.evidence, "device-mapper volume dm-0 (vg0-data) over nvme0n1, "
                                         "nvme1n1"));
  };
  judge(evaluate_snapshot(live_like));
  judge(evaluate_snapshot(load_snapshot(snap.path())));
}

// Issue 34 item 7: /proc/mounts as the kernel writes it, read once into the model. Stacked:
// aws/efs-utils issue 73's `mount` of a systemd automount with the EFS mount on top ("systemd-1
// on /efs type autofs", then "127.0.0.1:/ on /efs type nfs4"; the options are as systemd and
// the EFS mount helper set them: chosen, the paste elides them); the NFS mount, added last,
// serves the path. Escaped: a space is "\040" (RedHatInsights/insights-core issue 2069:
// "/dev/sda1 /mnt/first\040disk ext3"), a backslash "\134" (uutils/coreutils issue 5678:
// "/mnt/f\134oo"), and issue 34's own "/mnt/my data".
TEST(TopoMounts, StackedAndEscapedMountPointsResolveAsTheKernelServesThem) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  m.host.mounts = {
      "/dev/nvme0n1p2 / xfs rw 0 0",
      "systemd-1 /efs autofs rw,relatime,fd=46,pgrp=1,timeout=0,minproto=5,maxproto=5,direct,"
      "pipe_ino=17585 0 0",
      "127.0.0.1:/ /efs nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,"
      "noresvport,proto=tcp,port=20049,timeo=600,retrans=2,sec=sys,clientaddr=127.0.0.1,"
      "local_lock=none,addr=127.0.0.1 0 0",
      "/dev/sda1 /mnt/first\\040disk ext3 rw,relatime 0 0",
      "/dev/loop0 /mnt/f\\134oo ext4 rw,relatime 0 0",
      "10.10.1.5:/datasets /mnt/my\\040data nfs4 rw,relatime,vers=4.1,hard,proto=tcp,timeo=600,"
      "retrans=2,sec=sys,clientaddr=10.10.1.21,local_lock=none,addr=10.10.1.5 0 0"};
  fixture::TempDir tree, snap;
  fixture::write_sysfs(m, tree.path());
  const Snapshot s = collect_sysfs_root(tree.path(), offline());
  save_snapshot(s, snap.path());
  for (const Snapshot& x : {s, load_snapshot(snap.path())}) {
    const std::vector<Mount>& mounts = x.machine.mounts;
    ASSERT_EQ(mounts.size(), 6U);
    EXPECT_EQ(mounts[3].target, "/mnt/first disk");
    EXPECT_EQ(mounts[4].target, "/mnt/f\\oo");
    EXPECT_EQ(mounts[5].target, "/mnt/my data");
    const Mount* efs = mount_holding(mounts, "/efs/checkpoints/step1");
    ASSERT_NE(efs, nullptr);
    EXPECT_EQ(efs->fstype, "nfs4");
    EXPECT_EQ(efs->source, "127.0.0.1:/");
    ASSERT_NE(mount_holding(mounts, "/mnt/my data/shard0"), nullptr);
    EXPECT_EQ(mount_holding(mounts, "/mnt/my data/shard0")->source, "10.10.1.5:/datasets");
    EXPECT_EQ(mount_holding(mounts, "/mnt/my data")->source, "10.10.1.5:/datasets");
    EXPECT_EQ(mount_holding(mounts, "/mnt/first disk/a")->source, "/dev/sda1");
    EXPECT_EQ(mount_holding(mounts, "/mnt/f\\oo/x")->source, "/dev/loop0");
    EXPECT_EQ(mount_holding(mounts, "/mnt/my")->target, "/");
  }
  const Outcome o = evaluate_snapshot(Snapshot(s));
  EXPECT_TRUE(any_contains(file_systems(o).evidence, "/mnt/my data nfs4 (10.10.1.5:/datasets): NFS"));
}

TEST(TopoMounts, OctalEscapesDecodeAndAnythingElseStays) {
  EXPECT_EQ(decode_mount_field("a\\040b\\011c\\012d\\134e"), "a b\tc\nd\\e");
  EXPECT_EQ(decode_mount_field("/mnt/plain"), "/mnt/plain");
  // Not an octal escape: kept as written.
  EXPECT_EQ(decode_mount_field("x\\08y\\4z\\"), "x\\08y\\4z\\");
  EXPECT_EQ(decode_mount_field("\\400"), "\\400");  // beyond a byte
}

}  // namespace
}  // namespace gdsb::topo::testing
