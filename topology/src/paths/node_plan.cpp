#include "gdsb/topo/node_plan.hpp"

#include <algorithm>

#include "gdsb/nvml.hpp"
#include "gdsb/topo/mounts.hpp"

namespace gdsb::topo {
namespace {

// Mounts no benchmark writes a scratch file into, even where they lie on a GPU's drive.
bool system_mount(const std::string& target) {
  return target == "/" || path_within(target, "/boot") || path_within(target, "/usr") ||
         path_within(target, "/var") || path_within(target, "/etc");
}

// The block devices of the PCI devices `sources`.
std::vector<std::string> drives_of(const Snapshot& s, const std::vector<std::string>& sources) {
  std::vector<std::string> out;
  for (const auto& bdf : sources)
    if (const Device* d = s.find(bdf))
      for (const auto& b : d->block_devices) out.push_back(b);
  return out;
}

// A mount whose every drive is one of `drives` (its own file system, not one spread over
// other GPUs' drives); the first by mount point.
const Mount* local_mount(const Machine& m, const std::vector<std::string>& drives) {
  const Mount* best = nullptr;
  for (const Mount& mt : m.mounts) {
    if (system_mount(mt.target)) continue;
    const auto stack = block_stack(m, mt);
    if (!stack || stack->drives.empty()) continue;
    const bool own = std::all_of(stack->drives.begin(), stack->drives.end(), [&](const std::string& dv) {
      return std::any_of(drives.begin(), drives.end(), [&](const std::string& d) { return is_on_disk(dv, d); });
    });
    if (own && (best == nullptr || mt.target < best->target)) best = &mt;
  }
  return best;
}

}  // namespace

std::vector<GpuPlan> plan_node(const PathModel& model, const std::vector<std::string>& gpus) {
  const Snapshot& s = model.view().snapshot();
  std::vector<GpuPlan> out;
  for (const std::string& id : gpus) {
    GpuPlan p;
    const std::string bdf = nvml::normalize_bus_id(id);
    const auto& known = model.view().gpus();
    const auto it = std::find_if(known.begin(), known.end(), [&](const Device* d) { return d->bdf == bdf; });
    if (it == known.end()) {
      p.directory_note = "the GPU is not in the topology input: the shared directory";
      p.ceiling.limited_by = "the GPU is not in the topology input";
      out.push_back(p);
      continue;
    }
    p.gpu = bdf;
    p.kind = model.best_kind(bdf);
    if (!p.kind) {
      p.directory_note = "no drive, data NIC or virtual disk reaches it in this input: the shared directory";
      p.ceiling.gpu = bdf;
      p.ceiling.limited_by = "no data source in this input";
      out.push_back(p);
      continue;
    }
    for (const DataPath* d : model.nearest(bdf, *p.kind)) p.sources.push_back(d->source);
    p.drives = drives_of(s, p.sources);
    p.ceiling = model.gpu_ceiling(bdf, *p.kind);
    if (*p.kind != DataSource::LocalNvme) {
      p.directory_note = std::string(*p.kind == DataSource::DataNic ? "reads through data NICs"
                                                                   : "reads virtual disks") +
                         ": the shared directory";
    } else if (p.drives.empty()) {
      p.directory_note = "its nearest drive has no block device in this input: the shared directory";
    } else if (const Mount* mt = local_mount(s.machine, p.drives)) {
      p.directory = mt->target;
      p.directory_note = mt->target + " (" + mt->fstype + " on " + block_stack(s.machine, *mt)->describe() +
                         "), its nearest drive";
    } else {
      p.directory_note = "no file system of its own on its nearest drive: the shared directory";
    }
    out.push_back(p);
  }
  return out;
}

std::vector<std::string> directory_sources(const Snapshot& s, const std::string& dir) {
  std::vector<std::string> out;
  const Mount* mt = mount_holding(s.machine.mounts, dir);
  if (mt == nullptr) return out;
  const auto stack = block_stack(s.machine, *mt);
  if (!stack) return out;
  for (const Device& d : s.devices)
    for (const auto& b : d.block_devices)
      for (const auto& drive : stack->drives)
        if (is_on_disk(drive, b) && std::find(out.begin(), out.end(), d.bdf) == out.end()) out.push_back(d.bdf);
  return out;
}

}  // namespace gdsb::topo
