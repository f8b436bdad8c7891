#include "gdsb/gds_storage.hpp"

#include <algorithm>

namespace gdsb::storage {
namespace {

// docs/gdsb-topo.md ("File systems GDS can use") quotes each document.
constexpr std::string_view kNvidiaFs =
    "nvidia-fs driver notes, Key Features (docs.nvidia.com/gpudirect-storage/nvidia_fs)";
constexpr std::string_view kLocal =
    "nvidia-fs driver notes, Key Features; GDS Support for NVMe Drives Using Linux PCI "
    "P2PDMA (docs.nvidia.com/deploy/gds-support-for-nvme)";
constexpr std::string_view kFlags =
    "cufile.h, CUfileDriverStatusFlags_t (SCATEFS_SUPPORTED, VIRTIOFS_SUPPORTED)";

}  // namespace

const std::vector<GdsFileSystem>& gds_file_systems() {
  static const std::vector<GdsFileSystem> kTable = {
      {"ext4", Reach::LocalDrive, true, true, "data=ordered", kLocal},
      {"xfs", Reach::LocalDrive, true, true, "", kLocal},
      {"nfs", Reach::Network, true, false, "over RDMA", kNvidiaFs},
      {"nfs4", Reach::Network, true, false, "over RDMA", kNvidiaFs},
      {"lustre", Reach::Network, true, false, "DDN EXAScaler", kNvidiaFs},
      {"wekafs", Reach::Network, true, false, "", kNvidiaFs},
      {"gpfs", Reach::Network, true, false, "IBM Spectrum Scale", kNvidiaFs},
      {"beegfs", Reach::Network, true, false, "", kNvidiaFs},
      // cuFile reports these as supported; no NVIDIA document says through what.
      {"scatefs", Reach::Unstated, false, false, "", kFlags},
      {"virtiofs", Reach::Unstated, false, false, "", kFlags},
  };
  return kTable;
}

const GdsFileSystem* gds_file_system(std::string_view type) {
  const auto& t = gds_file_systems();
  auto it = std::find_if(t.begin(), t.end(), [&](const GdsFileSystem& f) { return f.type == type; });
  return it == t.end() ? nullptr : &*it;
}

std::string gds_file_system_list() {
  std::string out;
  for (const GdsFileSystem& f : gds_file_systems()) {
    if (!out.empty()) out += ", ";
    out += f.type;
    if (!f.condition.empty()) out += " (" + std::string(f.condition) + ")";
  }
  return out;
}

}  // namespace gdsb::storage
