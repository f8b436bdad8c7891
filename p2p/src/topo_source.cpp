#include "gdsb/p2p/topo_source.hpp"

#include <utility>

#include "gdsb/error.hpp"

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
    pairs_ = pairs_from_topology(view);
    if (view.gpus().empty()) {
      why_empty_ = description_ + ": no NVIDIA GPU on the PCIe bus";
    } else if (view.peers().empty()) {
      why_empty_ = description_ + ": no NVMe drive or NIC on the PCIe bus";
    }
  }
  Availability probe() override {
    return why_empty_.empty() ? Availability::yes() : Availability::no(why_empty_);
  }
  std::string description() override { return description_; }
  std::vector<PciePair> pairs() override { return pairs_; }

 private:
  topo::Snapshot snapshot_;
  std::string description_;
  std::vector<PciePair> pairs_;
  std::string why_empty_;
};

}  // namespace

std::vector<PciePair> pairs_from_topology(const topo::TopologyView& view) {
  const topo::Snapshot& s = view.snapshot();
  std::vector<PciePair> out;
  for (const topo::Pair& p : view.pairs()) {
    PciePair q;
    q.gpu = p.gpu;
    q.peer = p.peer;
    q.role = p.peer_role == topo::Role::Nic ? PeerRole::Nic : PeerRole::Nvme;
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
