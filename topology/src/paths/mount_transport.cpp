// A network mount's transport, decided once (gdsb/topo/mount_transport.hpp says why). The
// names each file system uses for its transports are tables below, each with its source.
#include "gdsb/topo/mount_transport.hpp"

#include <cctype>
#include <set>

#include "gdsb/topo/mounts.hpp"
#include "network_carriers.hpp"

namespace gdsb::topo {

std::string_view transport_kind_name(TransportKind k) {
  switch (k) {
    case TransportKind::Rdma: return "rdma";
    case TransportKind::Socket: return "socket";
    case TransportKind::Other: return "other";
    case TransportKind::Unknown: break;
  }
  return "unknown";
}

namespace {

struct TransportRow {
  std::string_view name;
  TransportKind kind;
};
using enum TransportKind;

// nfs(5), "Transport methods": the netid of proto= is tcp, udp or rdma, and tcp6, udp6 or
// rdma6 over IPv6; the kernel prints it as proto= in /proc/mounts. The udp, tcp and rdma
// flags are alternatives to proto=udp, proto=tcp and proto=rdma.
constexpr TransportRow kNfsNetids[] = {{"rdma", Rdma},   {"rdma6", Rdma}, {"tcp", Socket},
                                       {"tcp6", Socket}, {"udp", Socket}, {"udp6", Socket}};
// LNet's network types, the part of a NID after '@' less its number (Lustre Operations
// Manual, "Understanding Lustre Networking" and lnet/klnds): o2ib is o2iblnd (verbs RDMA over
// InfiniBand, RoCE or iWARP), tcp is socklnd; kfi (kfilnd, libfabric) and gni (gnilnd, Cray
// Gemini/Aries) are fabrics the GDS documents do not name.
constexpr TransportRow kLnetTypes[] = {
    {"o2ib", Rdma}, {"tcp", Socket}, {"kfi", Other}, {"gni", Other}};
// /sys/class/nvme/<ctrl>/transport of a fabrics controller, as drivers/nvme/host names them
// (nvme-rdma, nvme-tcp, nvme-fc).
constexpr TransportRow kNvmeTransports[] = {{"rdma", Rdma}, {"tcp", Socket}, {"fc", Other}};

template <size_t N>
TransportKind kind_of(const TransportRow (&table)[N], const std::string& name) {
  for (const TransportRow& r : table)
    if (r.name == name) return r.kind;
  return name.empty() ? Unknown : Other;
}

MountTransport nfs(const Mount& mount) {
  const auto o = net::mount_options(mount.options);
  MountTransport t;
  if (const auto it = o.find("proto"); it != o.end()) {
    t.name = it->second;
    t.evidence = "proto=" + t.name;
  } else {
    for (const char* flag : {"rdma", "tcp", "udp"})
      if (o.count(flag) && o.at(flag).empty()) {
        t.name = flag;
        t.evidence = std::string("the ") + flag + " option";
      }
  }
  t.kind = kind_of(kNfsNetids, t.name);
  return t;
}

// "o2ib1" -> "o2ib": the network type without its number.
std::string lnet_type(std::string net) {
  while (!net.empty() && std::isdigit(static_cast<unsigned char>(net.back()))) net.pop_back();
  return net;
}

// The network types this node's LNet configures: "o2ib0(ib0,ib1),tcp0(eth0)" -> o2ib, tcp.
std::set<std::string> local_lnet_types(const std::string& networks) {
  std::set<std::string> out;
  for (const std::string& item : net::split(networks, ",")) {
    const std::string name = item.substr(0, item.find('('));
    if (name.find(')') == std::string::npos && !name.empty()) out.insert(lnet_type(name));
  }
  return out;
}

MountTransport lustre(const Machine& m, const Mount& mount) {
  std::set<std::string> types;
  for (const std::string& nid : net::lustre_nids(mount.source))
    if (const auto at = nid.find('@'); at != std::string::npos)
      types.insert(lnet_type(nid.substr(at + 1)));
  MountTransport t;
  t.name = net::join(std::vector<std::string>(types.begin(), types.end()), ",");
  t.evidence = "LNet NIDs " + net::join(net::lustre_nids(mount.source));
  if (types.size() > 1 && !m.network.lnet_networks.empty()) {
    // The client reaches the servers over the networks its own LNet configures.
    std::set<std::string> reachable;
    for (const std::string& type : local_lnet_types(m.network.lnet_networks))
      if (types.count(type)) reachable.insert(type);
    if (reachable.size() == 1) {
      t.name = *reachable.begin();
      t.evidence += ", of which this node's LNet (" + m.network.lnet_networks + ") has " + t.name;
      types = reachable;
    }
  }
  std::set<TransportKind> kinds;
  for (const std::string& type : types) kinds.insert(kind_of(kLnetTypes, type));
  t.kind = kinds.size() == 1 ? *kinds.begin() : Unknown;
  return t;
}

// WekaFS, IBM Storage Scale and BeeGFS pick RDMA or not in their clients, out of sight of
// /proc/mounts; a node without an RDMA device has only sockets.
MountTransport chosen_by_client(const Machine& m, const Mount& mount) {
  MountTransport t;
  if (mount.fstype == "wekafs")
    for (const std::string& opt : net::split(mount.options, ","))
      if (opt == "net=udp") {
        // WEKA "Mount filesystems": net=udp mounts in UDP mode (no DPDK, no RDMA).
        t.kind = Socket;
        t.name = "udp";
        t.evidence = "net=udp (WEKA's UDP mode)";
        return t;
      }
  if (m.network.rdma_known && m.network.rdma_devices.empty()) {
    t.kind = Socket;
    t.name = "tcp";
    t.evidence = "this node has no RDMA device (/sys/class/infiniband is empty)";
  }
  return t;
}

}  // namespace

const NvmeController* fabric_controller(const Machine& m, const Mount& mount) {
  const auto stack = block_stack(m, mount);
  if (!stack) return nullptr;
  for (const std::string& drive : stack->drives)
    for (const NvmeController& c : m.network.nvme_controllers)
      for (const std::string& ns : c.namespaces)
        if (c.transport != "pcie" && c.transport != "loop" && is_on_disk(drive, ns)) return &c;
  return nullptr;
}

MountTransport mount_transport(const Machine& m, const Mount& mount) {
  const std::string& t = mount.fstype;
  if (t == "nfs" || t == "nfs4") return nfs(mount);
  if (t == "lustre") return lustre(m, mount);
  if (t == "wekafs" || t == "gpfs" || t == "beegfs") return chosen_by_client(m, mount);
  if (const NvmeController* c = fabric_controller(m, mount))
    return {kind_of(kNvmeTransports, c->transport), c->transport,
            c->name + " transport " + c->transport};
  return {};
}

}  // namespace gdsb::topo
