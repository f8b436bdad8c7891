// The PathModel class: its paths from a TopologyView (each a chain of hops: own link, switch
// uplinks, root ports, a NIC port's network rate). The ceilings over them, a flow solve, are
// in path_ceilings.cpp. What the inputs never hold (the socket interconnect, a root complex's
// internal P2P rate, a hypervisor's disk) is named, not invented.
#include "gdsb/topo/path_model.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {

std::string_view capacity_source_name(CapacitySource s) {
  static constexpr std::array<std::string_view, 5> kNames{"pcie-link", "recorded-link",
                                                          "network-rate", "measured", "unknown"};
  return kNames[static_cast<size_t>(s)];
}

std::string_view hop_kind_name(HopKind k) {
  static constexpr std::array<std::string_view, 9> kNames{
      "drive link", "NIC link",   "network",       "switch uplink", "bridge link",
      "GPU link",   "hypervisor", "storage alone", "host link"};
  return kNames[static_cast<size_t>(k)];
}

std::string_view data_source_name(DataSource k) {
  static constexpr std::array<std::string_view, 3> kNames{"nvme", "nic", "virtual"};
  return kNames[static_cast<size_t>(k)];
}

namespace {

HopKind hop_kind(Role r) {
  switch (r) {
    case Role::Gpu:
      return HopKind::GpuLink;
    case Role::Nvme:
      return HopKind::DriveLink;
    case Role::Nic:
      return HopKind::NicLink;
    case Role::SwitchUpstream:
      return HopKind::SwitchUplink;
    default:
      return HopKind::BridgeLink;
  }
}

bool endpoint(Role r) { return r == Role::Gpu || r == Role::Nvme || r == Role::Nic; }

// Functions of one multi-function card (two NIC ports) share its PCIe link: key by slot.
// Each port has its own network link: key by function (the BDF).
std::string slot_of(const std::string& bdf) { return bdf.substr(0, bdf.size() - 2); }

std::string names_of(const Device& d) {
  std::string out;
  for (const auto& b : d.block_devices) out += " " + b;
  for (const auto& n : d.net_devices) out += " " + n;
  return out;
}

std::string gb_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB/s", v);
  return b;
}

// Inputs that show the whole node's devices, whatever they hold: live, a saved snapshot, a
// sysfs tree. An offline recording (a hwloc XML with its I/O filtered, a cut lspci listing)
// may hold only part of it.
bool whole_node_input(SourceKind k) {
  return k == SourceKind::Live || k == SourceKind::Snapshot || k == SourceKind::SysfsRoot;
}

}  // namespace

std::string virtual_device_kind(const Device& d) {
  const std::string v = virtual_device_reason(d);
  const size_t end = v.find("): ");
  return end == std::string::npos ? v : v.substr(0, end + 1);
}

std::optional<PathHop> link_hop(const Snapshot& s, const Device& x) {
  // Root and downstream ports are the far end of the link of the device below them.
  if (x.role == Role::RootPort || x.role == Role::SwitchDownstream) return std::nullopt;
  PathHop h;
  h.kind = hop_kind(x.role);
  h.device = x.bdf;
  h.key = slot_of(x.bdf);
  const std::string head = (endpoint(x.role) ? "" : "uplink ") + x.bdf + " (" +
                           std::string(role_name(x.role)) + ") ";
  const bool has_link = x.link && x.link->cur_width > 0;
  if (has_link) {
    double speed = x.link->cur_speed_gts;
    if (const auto capable = capable_link_gts(s, x); x.role == Role::Gpu && capable)
      speed = *capable;
    // A speed the PCIe table does not know (a newer generation, a reserved code) gives 0.
    if (const double gb = link_gb_s(speed, x.link->cur_width); gb > 0) {
      h.gb_s = gb;
      h.source = CapacitySource::PcieLink;
      h.what = head + link_text(speed, x.link->cur_width) + names_of(x);
      return h;
    }
  }
  if (x.recorded_link_gb_s && *x.recorded_link_gb_s > 0) {
    h.gb_s = *x.recorded_link_gb_s;
    h.source = CapacitySource::RecordedLink;
    h.what = head + gb_text(*x.recorded_link_gb_s) + " (link speed recorded by the input)" +
             names_of(x);
    return h;
  }
  if (has_link) {  // a link whose speed no table here knows: its capacity is unknown, not 0
    h.what = head + "x" + std::to_string(x.link->cur_width) +
             " at a link speed this tool does not know (capacity unknown)" + names_of(x);
    return h;
  }
  return std::nullopt;
}

PathModel::PathModel(const TopologyView& v) : v_(v) {
  const Snapshot& s = v.snapshot();
  for (const Device* d : s.with_role(Role::Nic))
    (classify_nic(*d).role == NicRole::Data ? data_nics_ : management_nics_).push_back(d);

  // One side of a pair: the device's own link and each uplink below the common bridge.
  const auto side = [&](DataPath& path, const Device& d, const std::string& common,
                        const char* dir) {
    std::vector<const Device*> chain{&d};
    for (const Device* a : v.ancestors(d)) chain.push_back(a);
    for (const Device* x : chain) {
      if (x->bdf == common) break;
      if (auto h = link_hop(s, *x)) {
        // A link of unknown capacity on the chain leaves the chain without a ceiling.
        path.unknown_capacity = path.unknown_capacity || !h->gb_s;
        h->key += dir;
        path.hops.push_back(std::move(*h));
      } else if (x == &d) {
        path.unknown_capacity = true;
        path.hops.push_back({hop_kind(d.role), d.bdf, slot_of(d.bdf) + dir, std::nullopt,
                             CapacitySource::Unknown,
                             d.bdf + " (" + std::string(role_name(d.role)) +
                                 ") link width/speed unknown in this input" + names_of(d)});
      }
    }
  };

  for (const Device* g : v.gpus()) {
    for (const Pair& p : v.pairs()) {
      if (p.gpu != g->bdf) continue;
      const Device* peer = s.find(p.peer);
      if (!peer || (peer->role == Role::Nic && !is_data_nic(peer->bdf))) continue;
      DataPath path;
      path.gpu = g->bdf;
      path.source = p.peer;
      path.kind = peer->role == Role::Nvme ? DataSource::LocalNvme : DataSource::DataNic;
      path.pair = &p;
      path.crosses_socket = p.label == PathLabel::Sys;
      path.crosses_host_bridge = p.label >= PathLabel::Phb;
      path.acs_redirect = !p.acs_redirect_ports.empty();
      if (path.kind == DataSource::DataNic) {
        const NicNetwork net = nic_network(s, *peer);
        // Ports all down: the path stays (locality and applicability are the hardware's),
        // but no ceiling counts it (is_down), and the ceilings say so.
        if (net.down &&
            std::find(down_nics_.begin(), down_nics_.end(), peer->bdf) == down_nics_.end())
          down_nics_.push_back(peer->bdf);
        if (net.gb_s)
          path.hops.push_back({HopKind::Network, peer->bdf, peer->bdf + ":net", net.gb_s,
                               CapacitySource::NetworkRate,
                               peer->bdf + " " + net.what + " " + gb_text(*net.gb_s)});
      }
      side(path, *peer, p.common_bridge, ":up");
      side(path, *g, p.common_bridge, ":down");
      path.p2p = true;
      path.why = std::string(path_label_name(p.label)) + ", kernel P2PDMA " +
                 std::string(p2pdma_map_name(p.p2pdma)) + " (" + p.p2pdma_reason + ")";
      if (path.acs_redirect)
        path.why += "; ACS redirect on " + p.acs_redirect_ports.front() +
                    " routes it through the root complex";
      if (path.crosses_socket)
        path.why += "; crosses the CPU socket interconnect";
      else if (path.crosses_host_bridge)
        path.why += "; crosses the host bridge";
      paths_.push_back(std::move(path));
    }
    for (const Device* d : v.virtual_devices()) {
      if (d->role == Role::Nic) continue;  // a virtual NIC carries no storage GDS could read
      DataPath path;
      path.gpu = g->bdf;
      path.source = d->bdf;
      path.kind = DataSource::Virtual;
      path.unknown_capacity = true;
      path.hops.push_back({HopKind::Hypervisor, d->bdf, d->bdf + ":virt", std::nullopt,
                           CapacitySource::Unknown,
                           d->bdf + names_of(*d) + " " + d->name +
                               ": the hypervisor moves its data; no input states its rate"});
      side(path, *g, "", ":down");
      path.why = virtual_device_reason(*d);
      paths_.push_back(std::move(path));
    }
  }

  // Applicability: some GPU with a P2P-capable storage path or data NIC.
  size_t drives = 0, nics = 0;
  for (const Device* d : v.peers()) drives += d->role == Role::Nvme;
  nics = data_nics_.size();
  applicable_ = std::any_of(paths_.begin(), paths_.end(), [](const DataPath& p) { return p.p2p; });
  if (applicable_) {
    applicability_ = "GDS applies: " + std::to_string(v.gpus().size()) + " GPU(s) with a PCIe " +
                     "path to " + std::to_string(drives) + " NVMe drive(s) and " +
                     std::to_string(nics) + " data NIC(s)";
    return;
  }
  if (v.gpus().empty()) {
    // An input that lists the node's PCI devices (live, a snapshot, an lspci dump, a hwloc
    // XML with its I/O) and no NVIDIA GPU among them: GDS has nothing to feed (issue 29). A
    // GPU the bus shows but no driver opens is still a GPU here (PCI class and vendor), so
    // that case keeps its checks. Only an input without a single PCI device leaves it open.
    if (s.devices.empty() && !whole_node_input(s.kind)) {
      applicable_ = true;
      applicability_ = "GDS applicability unknown: no PCI device in this input";
      return;
    }
    applicable_ = false;
    no_nvidia_gpu_ = true;
    applicability_ = std::string(kNoNvidiaGpu);
    return;
  }
  std::string why;
  std::string virt;
  const Device* virtual_storage = nullptr;  // the first virtual disk, never a virtual NIC
  for (const Device* d : v.virtual_devices())
    if (d->role != Role::Nic) {
      virt += (virt.empty() ? "" : ", ") + d->bdf + names_of(*d);
      if (!virtual_storage) virtual_storage = d;
    }
  // An offline recording holding only GPUs (a hwloc XML with its I/O filtered, a cut lspci
  // listing) says nothing about the node's storage: applicability stays open there.
  if (virt.empty() && management_nics_.empty() && v.virtual_devices().empty() &&
      !whole_node_input(s.kind)) {
    applicable_ = true;
    applicability_ = "GDS applicability unknown: no NVMe drive, NIC or virtual disk in this input";
    return;
  }
  if (virtual_storage)
    why = "the only storage is virtual (" + virt + ": " + virtual_device_kind(*virtual_storage) +
          ")";
  else
    why = "no PCIe NVMe drive in this input";
  if (management_nics_.empty()) {
    why += ", and no data NIC";
  } else {
    why += ", and no data NIC (";
    for (size_t i = 0; i < management_nics_.size(); ++i) {
      const Device& n = *management_nics_[i];
      why += (i ? "; " : "") + n.bdf + names_of(n) + ": " + classify_nic(n).why;
    }
    why += ")";
  }
  applicability_ = "GDS not applicable on this node: " + why;
}

bool PathModel::is_data_nic(const std::string& bdf) const {
  return std::any_of(data_nics_.begin(), data_nics_.end(),
                     [&](const Device* d) { return d->bdf == bdf; });
}

std::vector<const DataPath*> PathModel::paths_of(const std::string& gpu) const {
  std::vector<const DataPath*> out;
  for (const auto& p : paths_)
    if (p.gpu == gpu) out.push_back(&p);
  return out;
}

std::vector<const DataPath*> PathModel::nearest(const std::string& gpu, DataSource kind) const {
  std::vector<const DataPath*> out;
  for (const auto& p : paths_) {
    if (p.gpu != gpu || p.kind != kind) continue;
    if (kind == DataSource::Virtual || out.empty()) {
      out.push_back(&p);
    } else if (closer(*p.pair, *out.front()->pair)) {
      out.assign(1, &p);
    } else if (!closer(*out.front()->pair, *p.pair)) {
      out.push_back(&p);
    }
  }
  return out;
}

std::optional<DataSource> PathModel::best_kind(const std::string& gpu) const {
  for (DataSource k : {DataSource::LocalNvme, DataSource::DataNic, DataSource::Virtual})
    if (!nearest(gpu, k).empty()) return k;
  return std::nullopt;
}

bool PathModel::is_down(const std::string& bdf) const {
  return std::find(down_nics_.begin(), down_nics_.end(), bdf) != down_nics_.end();
}

NicNetwork nic_network(const Snapshot& s, const Device& nic) {
  NicNetwork n;
  bool any_port = false, any_active = false, rate_unknown = false;
  double sum = 0;
  for (const RdmaDevice& r : s.machine.network.rdma_devices) {
    if (r.bdf != nic.bdf) continue;
    for (const RdmaPort& p : r.ports) {
      any_port = true;
      if (p.state != "ACTIVE") continue;
      any_active = true;
      if (!p.rate_gbps || *p.rate_gbps <= 0) {  // up, rate unread: the net device may say
        rate_unknown = true;
        continue;
      }
      sum += *p.rate_gbps / 8.0;  // Gb/s to GB/s (1e9 bytes)
      n.what += (n.what.empty() ? "" : ", ") + r.name + " port " + std::to_string(p.port) + " " +
                (p.rate.empty() ? std::to_string(static_cast<int>(*p.rate_gbps)) + " Gb/s" : p.rate);
    }
  }
  if (any_port && !any_active) {
    n.down = true;
    return n;
  }
  if (any_port && !rate_unknown) {
    n.gb_s = sum;
    return n;
  }
  n.what.clear();
  if (auto net = classify_nic(nic).network_gb_s) {
    n.gb_s = net;
    n.what = (nic.net_devices.empty() ? std::string("network link")
                                      : nic.net_devices.front() + " network link");
  }
  return n;
}

}  // namespace gdsb::topo
