// Where each GPU of a node reads from when they all read at once (gdsb-io's node mode,
// issue 35): the GPU's nearest sources in the path model, a file system mounted on its own
// nearest drives (so that every GPU reads through its local path), and its ceiling; the
// shared directory is the fallback, with the reason. Reads one Snapshot; runs nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {

struct GpuPlan {
  std::string gpu;  // BDF as the input has it; "" when the GPU is not in the input
  std::optional<DataSource> kind;    // what it reads from best
  std::vector<std::string> sources;  // its nearest sources of that kind (BDFs)
  std::vector<std::string> drives;   // their block devices ("nvme3n1")
  // A mount point on its own nearest drives, "" when none is mounted (then the shared
  // directory); `directory_note` says which mount and why, or why none.
  std::string directory;
  std::string directory_note;
  Ceiling ceiling;  // PathModel::gpu_ceiling for `kind`
};

// One plan a GPU, in the order given. `gpus` are PCI bus ids as CUDA reports them
// ("0000:19:00.0"; case and a short domain do not matter).
std::vector<GpuPlan> plan_node(const PathModel& model, const std::vector<std::string>& gpus);

// The sources a directory's data comes from: the PCI devices under the block devices of
// the mount that holds it (a partition, LVM or md RAID down to its drives), or the virtual
// disk; empty where the input does not show them (network and memory file systems, a
// recording without mounts).
std::vector<std::string> directory_sources(const Snapshot& s, const std::string& dir);

}  // namespace gdsb::topo
