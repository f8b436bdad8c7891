// Mounts and the block devices under them, matched exactly: a path belongs to a mount point
// only at a '/' boundary ("/data10/f" is not under "/data1"), a partition belongs to its own
// disk only ("nvme1n10p1" is not on "nvme1n1"), and a device-mapper or md RAID source is
// followed down to its drives. Used by gdsb-topo's file-system check and gdsb-doctor.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

// Whether `path` is `dir` or lies below it: "/data1/f" and "/data1" are within "/data1",
// "/data10/f" is not; everything is within "/".
bool path_within(std::string_view path, std::string_view dir);

// The mount holding `path`: the longest mount point it lies within, and of mounts stacked on
// one mount point the last in `mounts` (the order of /proc/mounts), the one on top that serves
// it (an NFS mount over the autofs trigger at the same target); nullptr when none. `mounts`
// hold decoded text (decode_mount_field), as every reader of the model does.
const Mount* mount_holding(const std::vector<Mount>& mounts, std::string_view path);

// The mounts of root/proc/mounts ("/" on the live machine), in its order, each field decoded
// (decode_mount_field); empty when the file is absent. The one reader of /proc/mounts: the
// topology collector and the storage of a run (gdsb/topo/run_storage.hpp) both use it.
std::vector<Mount> read_mounts(const std::filesystem::path& root);

// One field of a /proc/mounts line as the text it stands for: the kernel writes space, tab,
// newline and backslash as octal escapes ("\040", "\011", "\012", "\134"; fs/proc_namespace.c
// mangle(), getmntent(3)), so "/mnt/my\040data" is "/mnt/my data". Any "\ooo" is decoded;
// other text is kept. The collectors decode once, into Mount; nothing else decodes.
std::string decode_mount_field(std::string_view field);

// Whether kernel block device `name` is the disk `disk` or one of its partitions
// ("nvme1n1p2" and "nvme1n1" are on "nvme1n1"; "nvme1n10p1" is not; "sda1" is on "sda",
// "sdaa1" is not).
bool is_on_disk(std::string_view name, std::string_view disk);

enum class VolumeKind {
  Disk,          // a drive or a partition of one
  DeviceMapper,  // /dev/mapper/*, /dev/dm-*: LVM, dm-crypt, multipath
  MdRaid         // /dev/md*: Linux software RAID
};

// What a mount's /dev/ source stands on.
struct BlockStack {
  VolumeKind kind = VolumeKind::Disk;
  std::string device;    // kernel name where known ("nvme0n1p1", "dm-0", "md127"), else the
                         // source without "/dev/" ("mapper/vg0-data", "md/fast")
  std::string dm_name;   // device-mapper volume name, "" when not dm or unknown
  std::string md_level;  // "raid0", ...; "" when not md or unknown
  // The disks at the bottom ("nvme0n1", "nvme1n1"; a disk's partition where the input has
  // no /sys/class/block); empty when the input does not show them.
  std::vector<std::string> drives;
  std::string describe() const;  // "dm-0 (vg0-data) over nvme0n1, nvme1n1"
};

// nullopt when the source is no /dev/ node (network, tmpfs, overlay ...).
std::optional<BlockStack> block_stack(const Machine& m, const Mount& mount);

// Reads root/sys/class/block (a partition's disk, slaves, dm/name, md/level).
std::vector<BlockDevice> read_block_devices(const std::filesystem::path& root);

}  // namespace gdsb::topo
