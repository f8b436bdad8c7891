// Network storage, end to end (issue 25): for each network mount (NFS, Lustre, WekaFS, IBM
// Storage Scale, BeeGFS, a file system on an NVMe-oF namespace) whether GDS can engage on
// it, from the evidence the node shows (transport, modules, cufile.json), and which NICs
// carry it (the server's address, the node's routes, the net device, its PCI function and
// RDMA port). One reading for gdsb-topo's file-system check, the path model's network
// ceilings and gdsb-doctor. docs/gdsb-topo.md cites the document behind every rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/topo/mount_transport.hpp"

namespace gdsb::topo {

// Whether GDS can engage on a mount. Unknown where the node shows nothing decisive; never
// Yes without evidence.
enum class Engage { Yes, No, Unknown };
std::string_view engage_name(Engage e);  // "yes", "no", "unknown"

// One NIC port that carries a mount's traffic.
struct MountCarrier {
  std::string netdev;    // "ib0"; "" where only the RDMA device is known
  std::string bdf;       // the NIC's PCI function; "" for a virtual net device
  std::string rdma_dev;  // "mlx5_0"; "" where the net device has no RDMA device
  int rdma_port = 0;     // 0 unknown
  // How it was found, each way once, "; " between: "route to 10.10.1.5 (10.10.1.0/24 dev
  // ib0)", "localports=ib0", "src_addr=10.10.1.21", "lnet o2ib0(ib0)", "cufile.json
  // rdma_dev_addr_list 10.10.1.21"; a bond's ports add " via bond0".
  std::string how;
  std::string rdma_state;  // the RDMA port's state ("ACTIVE", "DOWN"), "" without one
  // Its PCIe locality to every GPU (TopologyView pair labels), in GPU order; empty where the
  // NIC's PCI function is not in the input.
  struct GpuLocality {
    std::string gpu;    // BDF
    std::string label;  // "GPU0"
    PathLabel path = PathLabel::Sys;
  };
  std::vector<GpuLocality> gpus;
  // The GPU cuFile pairs with this NIC: the nearest by closer() (the ranking of
  // TopologyView::best_for_peer); "" where `gpus` is empty.
  std::string nearest_gpu;
};

struct NetworkMount {
  const Mount* mount = nullptr;
  std::string kind;       // "NFS", "Lustre", "WekaFS", "IBM Storage Scale", "BeeGFS",
                          // "NVMe-oF", or the fstype of a file system no GDS document lists
  // RDMA or sockets, decided once by mount_transport(): every verdict reads it from here.
  MountTransport transport;
  std::vector<std::string> servers;  // addresses or NIDs the mount names
  Engage engage = Engage::Unknown;
  std::string why;          // the evidence for `engage`, one sentence
  std::string what_to_run;  // Unknown: the command that would decide it
  // No: how GDS could engage ("remount over RDMA: mount -o proto=rdma,port=20049 ..."); the
  // one wording gdsb-topo's remedy and gdsb-doctor's fix both use.
  std::string remedy;
  std::vector<MountCarrier> carriers;  // empty: not found (carriers_note says why)
  std::string carriers_note;
  // The node has no RDMA device (/sys/class/infiniband read and empty): GDS can engage on no
  // network mount here. A fact of the node's hardware, not a fault of this mount: the
  // file-system check does not fail on it, as it does not on a node without NVMe.
  bool node_without_rdma = false;
};

// Every data mount that reaches its data over a network, in mount order: the network file
// systems (those GDS lists and those it does not: cifs, ceph, network FUSE clients) and the
// mounts on NVMe-oF namespaces. `view` gives the carriers' GPU locality; without one it is
// built from `s`.
std::vector<NetworkMount> network_mounts(const Snapshot& s, const TopologyView* view = nullptr);

// The NetworkMount of `m` (by address) among `mounts`, nullptr when it is not one.
const NetworkMount* find_network_mount(const std::vector<NetworkMount>& mounts, const Mount& m);

// The route this node takes to `addr`, as the kernel's lookup does under the default rules
// (local table, then main): an address the node holds, or a loopback one, goes out "lo"; any
// other, the main table's longest prefix, then lowest metric. nullopt where no route reaches
// it or `addr` is no IP address. The carriers' route step ("route to ...") is this lookup.
std::optional<Route> route_to(const NetworkFacts& n, const std::string& addr);

// One carrier for people: "ib0 (0000:1a:00.0; mlx5_0 port 1 ACTIVE; route to 10.10.1.5
// (10.10.1.0/24 dev ib0)): GPU0 PIX, GPU1 NODE, ...; cuFile pairs it with GPU0 (PIX)".
std::string describe_carrier(const MountCarrier& c);

}  // namespace gdsb::topo
