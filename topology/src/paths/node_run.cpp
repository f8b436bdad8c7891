#include "gdsb/topo/node_run.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "gdsb/error.hpp"
#include "gdsb/topo/path_model.hpp"
#include "gdsb/units.hpp"

namespace gdsb::topo {
namespace {

constexpr uint64_t kMiB = 1ULL << 20;
constexpr uint64_t kMinSize = 16 * kMiB;

uint64_t free_bytes(const std::string& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0)
    throw RuntimeError("cannot use directory " + dir + ": " + std::strerror(errno));
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

}  // namespace

void lay_out_node(NodePlan& plan, const Snapshot* snapshot, const NodeLayoutOptions& o) {
  std::optional<TopologyView> view;
  std::optional<PathModel> model;
  if (snapshot != nullptr) {
    view.emplace(*snapshot);
    model.emplace(*view);
  }
  std::vector<std::string> bus_ids;
  for (const auto& n : plan.gpus) bus_ids.push_back(n.pci_bus_id);
  const std::vector<GpuPlan> gpu_plans = model ? plan_node(*model, bus_ids) : std::vector<GpuPlan>{};
  for (std::size_t i = 0; i < plan.gpus.size(); ++i) {
    NodeGpu& n = plan.gpus[i];
    if (i < gpu_plans.size()) n.topo = gpu_plans[i];
    const bool local = !o.recorded && !o.shared_only && !n.topo.directory.empty() &&
                       ::access(n.topo.directory.c_str(), W_OK) == 0;
    n.directory = local ? n.topo.directory : o.shared_dir;
    if (local)
      n.directory_note = n.topo.directory_note;
    else if (o.shared_only)
      n.directory_note = o.shared_option + ", given for every GPU";
    else if (!n.topo.directory.empty() && !o.recorded)
      n.directory_note = n.topo.directory + " is not writable here: the shared directory";
    else
      n.directory_note = n.topo.directory_note.empty() ? plan.topology_note : n.topo.directory_note;
  }
  if (!model) {
    plan.ceiling.limited_by = plan.topology_note;
    return;
  }
  std::vector<PathModel::GpuReads> reads;
  for (const auto& n : plan.gpus) {
    std::vector<std::string> sources =
        o.recorded ? n.topo.sources
                   : directory_sources(*snapshot, std::filesystem::absolute(n.directory).lexically_normal().string());
    reads.push_back({n.topo.gpu, sources});
  }
  plan.ceiling = model->reads_ceiling(reads);
}

uint64_t node_file_size(const NodePlan& plan, uint64_t want, const std::string& dir_option,
                        const std::string& size_option) {
  std::map<std::string, int> users;
  for (const auto& n : plan.gpus) {
    if (::access(n.directory.c_str(), W_OK) != 0)
      throw RuntimeError("cannot write in " + n.directory + " (GPU " + std::to_string(n.index) + "): " +
                         std::strerror(errno) + "; give " + dir_option + " DIR");
    ++users[n.directory];
  }
  uint64_t size = want;
  for (const auto& [dir, n] : users) {
    const uint64_t fits = free_bytes(dir) / 2 / static_cast<uint64_t>(n);
    size = std::min<uint64_t>(size, fits - fits % kMiB);
    if (size < std::min(want, kMinSize))
      throw RuntimeError("not enough free space in " + dir + " for " + std::to_string(n) + " GPU file(s) of " +
                         format_size(std::min(want, kMinSize)) + "; give " + dir_option +
                         " DIR with more room or a smaller " + size_option);
  }
  return size;
}

uint32_t node_threads(std::size_t gpus) {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<uint32_t>(std::clamp<long>(cpus / static_cast<long>(std::max<std::size_t>(gpus, 1)), 1, 4));
}

NodeRun::NodeRun(const Runner& runner, NodePlan& plan, const std::string& prefix) : runner_(runner), plan_(plan) {
  for (auto& n : plan_.gpus) {
    n.file = files_.add(n.directory + "/" + prefix + "." + std::to_string(::getpid()) + ".gpu" +
                        std::to_string(n.index) + ".tmp");
    readers_.push_back({n.index, n.file});
  }
}

bool NodeRun::write_files(const std::atomic<bool>* stop, const std::function<void(const NodeGpu&)>& before_each) {
  for (const auto& n : plan_.gpus) {
    if (before_each) before_each(n);
    if (!write_scratch_file(runner_, n.file, plan_.file_size, stop)) return false;
  }
  return true;
}

const NodeMode& NodeRun::read(XferType x, NodeReadOptions o) {
  o.file_size = plan_.file_size;
  plan_.modes.push_back(read_at_once(runner_, readers_, x, o));
  return plan_.modes.back();
}

}  // namespace gdsb::topo
