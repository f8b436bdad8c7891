#include "gdsb/topo/analysis.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {

std::string_view path_label_name(PathLabel l) {
  static constexpr std::array<std::string_view, 5> kNames{"PIX", "PXB", "PHB", "NODE", "SYS"};
  return kNames[static_cast<size_t>(l)];
}

std::string_view p2pdma_map_name(P2pdmaMap m) {
  static constexpr std::array<std::string_view, 3> kNames{"BUS_ADDR", "THRU_HOST_BRIDGE",
                                                          "NOT_SUPPORTED"};
  return kNames[static_cast<size_t>(m)];
}

bool acs_redirects(const Device& d) { return d.acs && (d.acs->ctl & kAcsRedirectMask) != 0; }

std::optional<double> capable_link_gts(const Snapshot& s, const Device& d) {
  if (!d.link || d.link->max_speed_gts <= 0) return std::nullopt;
  double speed = d.link->max_speed_gts;
  if (const Device* p = d.parent.empty() ? nullptr : s.find(d.parent);
      p && p->link && p->link->max_speed_gts > 0)
    speed = std::min(speed, p->link->max_speed_gts);
  return speed;
}

TopologyView::TopologyView(const Snapshot& s) : s_(s) {
  gpus_ = s.with_role(Role::Gpu);
  // Paravirtual and emulated drives and NICs are no GDS peers: the hypervisor moves
  // their data (virtual_devices() lists them for the reports).
  for (Role r : {Role::Nvme, Role::Nic})
    for (const Device* d : s.with_role(r))
      if (virtual_device_reason(*d).empty()) peers_.push_back(d);
  for (Role r : {Role::Storage, Role::Nvme, Role::Nic})  // storage first: it is what GDS reads
    for (const Device* d : s.with_role(r))
      if (!virtual_device_reason(*d).empty()) virtual_.push_back(d);
  for (const Device* g : gpus_)
    for (const Device* p : peers_) pairs_.push_back(classify(*g, *p));
}

std::vector<const Device*> TopologyView::ancestors(const Device& d) const {
  std::vector<const Device*> out;
  const Device* cur = &d;
  for (int guard = 0; guard < 64 && !cur->parent.empty(); ++guard) {
    const Device* p = s_.find(cur->parent);
    if (!p || std::find(out.begin(), out.end(), p) != out.end() || p == &d) break;
    out.push_back(p);
    cur = p;
  }
  return out;
}

std::optional<int> TopologyView::package_of(const Device& d) const {
  if (d.package) return d.package;
  for (const Device* a : ancestors(d))
    if (a->package) return a->package;
  return std::nullopt;
}

std::optional<int> TopologyView::numa_of(const Device& d) const {
  if (d.numa_node) return d.numa_node;
  for (const Device* a : ancestors(d))
    if (a->numa_node) return a->numa_node;
  // sysfs says -1 (VMs, some BIOSes): NVML's memory affinity of a GPU is the next best.
  if (auto f = s_.gpu_facts.find(d.bdf); f != s_.gpu_facts.end()) return f->second.numa_node;
  return std::nullopt;
}

bool TopologyView::cpu_supports_p2pdma() const {
  const Machine& m = s_.machine;
  return m.arch == "x86_64" && m.cpu_vendor == "AuthenticAMD" && m.cpu_family >= 0x17;
}

bool TopologyView::host_bridges_whitelisted(const Device& a, const Device& b,
                                            bool& cpu_unknown) const {
  // drivers/pci/p2pdma.c: the host bridge device is function 00.0 of the root bus.
  struct Entry {
    uint16_t device;
    bool same_bridge_only;
  };
  static constexpr std::array<Entry, 10> kIntel{{{0x3c00, true},
                                                 {0x3c01, true},
                                                 {0x2f00, true},
                                                 {0x2f01, true},
                                                 {0x2030, false},
                                                 {0x2031, false},
                                                 {0x2032, false},
                                                 {0x2033, false},
                                                 {0x2020, false},
                                                 {0x09a2, false}}};
  cpu_unknown = !s_.machine.proc_known;
  const Device* ha = s_.find(a.root_complex + ":00.0");
  const Device* hb = s_.find(b.root_complex + ":00.0");
  auto entry = [](const Device* h) -> const Entry* {
    if (!h || h->vendor != 0x8086) return nullptr;
    for (const auto& e : kIntel)
      if (e.device == h->device) return &e;
    return nullptr;
  };
  const Entry* ea = entry(ha);
  const Entry* eb = entry(hb);
  if (!ea || !eb) return false;
  if ((ea->same_bridge_only || eb->same_bridge_only) && ha != hb) return false;
  return true;
}

Pair TopologyView::classify(const Device& gpu, const Device& peer) const {
  Pair p;
  p.gpu = gpu.bdf;
  p.peer = peer.bdf;
  p.peer_role = peer.role;
  // The kernel walks from the provider (the peer: NVMe or NIC memory) and the client.
  std::vector<const Device*> a_chain{&peer}, b_chain{&gpu};
  for (const Device* x : ancestors(peer)) a_chain.push_back(x);
  for (const Device* x : ancestors(gpu)) b_chain.push_back(x);
  auto note = [&](const Device* x) {
    p.path.push_back(x->bdf);
    if (acs_redirects(*x)) p.acs_redirect_ports.push_back(x->bdf);
    if (!x->ext_config_readable && x->role != Role::Gpu && x->role != Role::Nvme &&
        x->role != Role::Nic)
      p.acs_unknown_ports.push_back(x->bdf);
  };
  size_t ia = 0, ib = 0;
  bool common = false;
  for (ia = 0; ia < a_chain.size() && !common; ++ia) {
    auto it = std::find(b_chain.begin(), b_chain.end(), a_chain[ia]);
    if (it != b_chain.end()) {
      common = true;
      ib = static_cast<size_t>(it - b_chain.begin());
      for (size_t k = 0; k <= ia; ++k) note(a_chain[k]);
      for (size_t k = 0; k < ib; ++k) note(b_chain[k]);
      p.distance = static_cast<int>(ia + ib);
      p.common_bridge = a_chain[ia]->bdf;
    }
  }
  bool redirect = !p.acs_redirect_ports.empty();
  if (!common) {
    p.distance = static_cast<int>(a_chain.size() + b_chain.size());
    p.acs_redirect_ports.clear();  // the kernel ignores ACS when nothing is shared
    p.acs_unknown_ports.clear();
  }
  if (common && !redirect) {
    p.p2pdma = P2pdmaMap::BusAddr;
    p.p2pdma_reason = "common upstream bridge " + p.common_bridge + " without ACS redirect";
    if (!p.acs_unknown_ports.empty())
      p.p2pdma_reason += " (ACS unreadable on " + std::to_string(p.acs_unknown_ports.size()) +
                         " port(s): assumes none redirects)";
  } else {
    bool cpu_unknown = false;
    std::string why =
        common ? "ACS redirect on " + p.acs_redirect_ports.front() : "no common upstream bridge";
    if (cpu_supports_p2pdma()) {
      p.p2pdma = P2pdmaMap::ThruHostBridge;
      p.p2pdma_reason = why + "; AMD Zen (family >= 0x17) routes P2P through the host bridge";
    } else if (host_bridges_whitelisted(peer, gpu, cpu_unknown)) {
      p.p2pdma = P2pdmaMap::ThruHostBridge;
      p.p2pdma_reason = why + "; host bridges are on the kernel's Intel whitelist";
    } else {
      p.p2pdma = P2pdmaMap::NotSupported;
      p.p2pdma_reason = why + "; host bridge not whitelisted and CPU not AMD Zen" +
                        (cpu_unknown ? " (CPU unknown in this input)" : "");
    }
  }
  // nvidia-smi style label.
  if (common) {
    size_t ic = ia - 1;  // index of the common bridge in the peer's chain
    const Device* c = a_chain[ic];
    // Bridges crossed: the peer's side up to and including the common one, plus the
    // GPU's side below it. One switch = downstream, upstream, downstream port.
    size_t bridges = ic + ib - 1;
    bool one_switch = (c->role == Role::SwitchUpstream && bridges == 3) || bridges <= 1;
    p.label = one_switch ? PathLabel::Pix : PathLabel::Pxb;
  } else if (gpu.root_complex == peer.root_complex && !gpu.root_complex.empty()) {
    p.label = PathLabel::Phb;
  } else {
    // Two NUMA nodes, or two CPU packages (a package may have no memory, hence no NUMA
    // node, of its own): the path crosses the socket interconnect.
    auto na = numa_of(gpu), nb = numa_of(peer);
    auto pa = package_of(gpu), pb = package_of(peer);
    p.label = (na && nb && *na != *nb) || (pa && pb && *pa != *pb) ? PathLabel::Sys
                                                                   : PathLabel::Node;
  }
  return p;
}

const Pair* TopologyView::pair(const std::string& gpu, const std::string& peer) const {
  for (const auto& p : pairs_)
    if (p.gpu == gpu && p.peer == peer) return &p;
  return nullptr;
}

bool closer(const Pair& a, const Pair& b) {
  if (a.label != b.label) return a.label < b.label;
  if (a.acs_redirect_ports.empty() != b.acs_redirect_ports.empty())
    return a.acs_redirect_ports.empty();
  return a.distance < b.distance;
}

const Pair* TopologyView::best_for_peer(const std::string& peer) const {
  const Pair* best = nullptr;
  for (const auto& p : pairs_)
    if (p.peer == peer && (!best || closer(p, *best))) best = &p;
  return best;
}

std::vector<const Pair*> TopologyView::best_for_gpu(const std::string& gpu, Role peer_role) const {
  std::vector<const Pair*> out;
  for (const auto& p : pairs_) {
    if (p.gpu != gpu || p.peer_role != peer_role) continue;
    if (out.empty() || closer(p, *out.front()))
      out.assign(1, &p);
    else if (!closer(*out.front(), p))
      out.push_back(&p);
  }
  return out;
}

std::string TopologyView::gpu_label(const std::string& bdf) const {
  for (size_t i = 0; i < gpus_.size(); ++i)
    if (gpus_[i]->bdf == bdf) return "GPU" + std::to_string(i);
  return bdf;
}

}  // namespace gdsb::topo
