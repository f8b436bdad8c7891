#include "gdsb/p2p/topo_source.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/pcie.hpp"
#include "gdsb/topo/nvlink.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::p2p {
namespace {

MapType map_type(topo::P2pdmaMap m) {
  switch (m) {
    case topo::P2pdmaMap::BusAddr: return MapType::BusAddr;
    case topo::P2pdmaMap::ThruHostBridge: return MapType::ThruHostBridge;
    case topo::P2pdmaMap::NotSupported: return MapType::NotSupported;
  }
  return MapType::NotSupported;
}

class SnapshotSource final : public PcieTopologySource {
 public:
  SnapshotSource(topo::Snapshot s, std::string description)
      : snapshot_(std::move(s)), description_(std::move(description)) {
    // The view points into snapshot_, which this object owns and never moves again.
    const topo::TopologyView view(snapshot_);
    const topo::PathModel model(view);
    pairs_ = pairs_from_topology(model);
    tree_ = gpu_tree_from_topology(view);
    if (model.no_nvidia_gpu()) tree_.applicability = model.applicability();
    if (view.gpus().empty()) {
      why_empty_ = description_ + ": no NVIDIA GPU on the PCIe bus";
    } else if (pairs_.empty()) {
      why_empty_ = description_ + ": no NVMe drive or data NIC on the PCIe bus";
    }
  }
  Availability probe() override {
    return why_empty_.empty() ? Availability::yes() : Availability::no(why_empty_);
  }
  std::string description() override { return description_; }
  std::vector<PciePair> pairs() override { return pairs_; }
  GpuTree gpu_tree() override { return tree_; }

 private:
  topo::Snapshot snapshot_;
  std::string description_;
  std::vector<PciePair> pairs_;
  GpuTree tree_;
  std::string why_empty_;
};

TreeGpu tree_gpu(const topo::TopologyView& view, const topo::Device& d) {
  const topo::Snapshot& s = view.snapshot();
  TreeGpu g;
  g.bdf = d.bdf;
  g.numa_node = view.numa_of(d);
  g.nvlinks = topo::nvlinks_active(s, d.bdf);
  const auto f = s.gpu_facts.find(d.bdf);
  const topo::GpuFacts* facts = f == s.gpu_facts.end() ? nullptr : &f->second;
  g.name = topo::display_name(s, d);
  if (facts && facts->pcie_max_gen && facts->pcie_max_width)
    g.link = PcieLink{*facts->pcie_max_gen, *facts->pcie_max_width};
  else if (d.link && d.link->max_width > 0)
    g.link = PcieLink{gts_to_generation(d.link->max_speed_gts), d.link->max_width};
  if (facts && facts->pcie_cur_gen && facts->pcie_cur_width)
    g.link_cur = PcieLink{*facts->pcie_cur_gen, *facts->pcie_cur_width};
  else if (d.link && d.link->cur_width > 0)
    g.link_cur = PcieLink{gts_to_generation(d.link->cur_speed_gts), d.link->cur_width};
  return g;
}

void recorded_nvml(const topo::Snapshot& s, TreeGpuPair& p, bool& recorded) {
  static constexpr const char* kCaps[] = {"read", "write", "nvlink", "atomics", "pci"};
  for (const topo::GpuPairFacts& f : s.gpu_pairs) {
    if (f.a != p.a || f.b != p.b) continue;
    for (std::size_t c = 0; c < p.nvml.size(); ++c) {
      const auto it = f.p2p.find(kCaps[c]);
      if (it != f.p2p.end()) p.nvml[c] = nvml::p2p_status_from_code(it->second);
      recorded = recorded || p.nvml[c].has_value();
    }
    p.nvml_level = nvml::topology_level_from_name(f.common_ancestor);
  }
}

}  // namespace

// PCI vendors whose devices only a hypervisor presents (virtio, QEMU, VMware): their presence
// makes the tree a VM's. Cloud disks (Amazon EBS, Google PD) are left out: bare-metal
// instances show them too, on a physical tree.
namespace {
constexpr uint16_t kHypervisorVendors[] = {0x1af4, 0x1b36, 0x15ad};

std::string hypervisor_devices(const topo::TopologyView& view) {
  std::string out;
  for (const topo::Device* d : view.virtual_devices())
    if (std::find(std::begin(kHypervisorVendors), std::end(kHypervisorVendors), d->vendor) !=
        std::end(kHypervisorVendors))
      out += (out.empty() ? "" : ", ") + d->bdf + " " + topo::virtual_device_kind(*d);
  return out;
}
}  // namespace

GpuTree gpu_tree_from_topology(const topo::TopologyView& view) {
  const topo::Snapshot& s = view.snapshot();
  GpuTree t;
  t.hypervisor_devices = hypervisor_devices(view);
  for (const topo::Device* sw : s.with_role(topo::Role::NvSwitch)) t.nvswitches.push_back(sw->bdf);
  for (const topo::Device* g : view.gpus()) {
    t.gpus.push_back(tree_gpu(view, *g));
    if (t.nvlink_source.empty() && topo::has_nvlink_facts(s, g->bdf))
      t.nvlink_source = s.gpu_facts.at(g->bdf).source;
  }
  for (const topo::Device* a : view.gpus()) {
    for (const topo::Device* b : view.gpus()) {
      if (a == b) continue;
      TreeGpuPair p;
      p.a = a->bdf;
      p.b = b->bdf;
      p.pcie_label = std::string(topo::path_label_name(view.classify(*a, *b).label));
      if (const auto nv = topo::nvlink_pair(s, a->bdf, b->bdf)) {
        p.nvlinks = nv->links;
        p.through_nvswitch = nv->through_nvswitch;
        if (nv->bandwidth_mbps) p.nvlink_mbps = *nv->bandwidth_mbps;
      }
      recorded_nvml(s, p, t.nvml_recorded);
      t.pairs.push_back(std::move(p));
    }
  }
  return t;
}

std::vector<PciePair> pairs_from_topology(const topo::PathModel& model) {
  // The pairs GDS can use, from the one path model: every GPU with each PCIe NVMe drive
  // and each data NIC (management NICs and virtual disks are no GDS peers).
  const topo::Snapshot& s = model.view().snapshot();
  std::vector<PciePair> out;
  for (const topo::DataPath& path : model.paths()) {
    if (!path.pair) continue;  // virtual storage: no PCIe pair
    const topo::Pair& p = *path.pair;
    PciePair q;
    q.gpu = p.gpu;
    q.peer = p.peer;
    q.role = path.kind == topo::DataSource::DataNic ? PeerRole::Nic : PeerRole::Nvme;
    q.label = std::string(topo::path_label_name(p.label));
    q.p2pdma = map_type(p.p2pdma);
    q.distance = p.distance;
    q.acs_redirect_ports = p.acs_redirect_ports;
    if (const topo::Device* d = s.find(p.peer)) {
      if (!d->block_devices.empty()) {
        q.peer_name = d->block_devices.front();
      } else if (!d->net_devices.empty()) {
        q.peer_name = d->net_devices.front();
      }
    }
    out.push_back(std::move(q));
  }
  return out;
}

std::unique_ptr<PcieTopologySource> make_snapshot_source(topo::Snapshot snapshot,
                                                         std::string description) {
  return std::make_unique<SnapshotSource>(std::move(snapshot), std::move(description));
}

std::unique_ptr<PcieTopologySource> collect_topology_source(const topo::InputSources& sources,
                                                            const topo::CollectOptions& options) {
  const std::string what = sources.live() ? "live PCIe snapshot (sysfs)" : sources.description();
  if (!sources.live()) return make_snapshot_source(topo::collect_from(sources, options), what);
  try {
    return make_snapshot_source(topo::collect_from(sources, options), what);
  } catch (const std::exception& e) {
    // This machine's sysfs could not be read (a container without /sys, ...): the GPU side
    // still works, only the GPU x NVMe/NIC matrices are waived.
    return std::make_unique<UnavailablePcieTopologySource>(what + " could not be collected: " +
                                                           e.what());
  }
}

}  // namespace gdsb::p2p
