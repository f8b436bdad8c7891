// The file systems GPUDirect Storage can use, and what it needs of each: one table read by
// gdsb-topo's file-system check, gdsb-doctor's compat-mode rule and gdsb-io's cuFile error
// hints (docs/gdsb-topo.md cites the NVIDIA documents behind each row).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gdsb::storage {

// How a file system's data reaches the GPU.
enum class Reach {
  LocalDrive,  // a block device: the drive DMAs into GPU memory (NVMe, NVMe-oF)
  Network,     // a NIC RDMAs into GPU memory: needs a data NIC near the GPU
  Unstated     // cuFile names it, NVIDIA's documents do not say how its data travels
};

struct GdsFileSystem {
  std::string_view type;       // as /proc/mounts names it: "ext4", "nfs4", "lustre"
  Reach reach = Reach::Unstated;
  bool nvidia_fs = false;      // GDS through the nvidia-fs kernel module
  bool p2pdma = false;         // GDS through kernel PCI P2PDMA (no nvidia-fs)
  std::string_view condition;  // what else GDS needs of it, "" when nothing
  std::string_view source;     // the NVIDIA document that says so
};

// Every file system GDS can use, in the order NVIDIA's documents list them.
const std::vector<GdsFileSystem>& gds_file_systems();

// The row of `type` (exact match), or nullptr: GDS cannot use it (cuFile falls back to
// compat mode, or fails with 5008 without it).
const GdsFileSystem* gds_file_system(std::string_view type);

// The table as one line for messages: "ext4 (data=ordered), xfs, nfs (over RDMA), ...".
std::string gds_file_system_list();

}  // namespace gdsb::storage
