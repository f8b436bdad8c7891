// Which NICs carry a network mount (issue 25): its servers' routes, local addresses, net
// devices (bonds and VLANs to their ports), RDMA ports, and cufile.json's own lists. Internal
// to topology: network_storage.cpp judges, network_carriers.cpp finds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gdsb/topo/network_storage.hpp"

namespace gdsb::topo::net {

// Pieces of `s` between any of `seps`, empty ones dropped.
std::vector<std::string> split(const std::string& s, const std::string& seps);
std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
// A mount's options as key -> value ("" for a flag); a repeated key keeps its last value.
std::map<std::string, std::string> mount_options(const std::string& options);
// VAST's address lists (remoteports=, localports=): "a~b~c", ranges "first-last"; IPv4 ranges
// expand (capped: a VIP pool is tens of addresses), anything else stays as written.
std::vector<std::string> expand_ports(const std::string& spec);
bool is_ip_address(const std::string& text);  // IPv4 or IPv6, "[...]" and "%zone" allowed
// The NIDs of a Lustre source, "10.0.0.1@o2ib:10.0.0.2@o2ib:/fs" -> {"10.0.0.1@o2ib", ...}.
std::vector<std::string> lustre_nids(const std::string& source);

// What a net device stands on, down to the ports that carry its traffic, each a leaf: the
// device itself where an RDMA port is bound to it (RdmaPort::netdev, ibdev2netdev's pairing; a
// RoCE LAG bond is one port); an IPoIB partition child's parent (its `parent` file; a child
// recorded without one: the single RDMA port of its PCI function, whose `device` link the
// child shares); a bond's or VLAN's lower devices; else the device itself, without RDMA. The
// one resolution the carriers and the rdma-stack check both use.
struct NetLeaf {
  std::string netdev;                   // the port's net device ("ib0", "eth01")
  const NetInterface* iface = nullptr;  // that interface; nullptr where the input lacks it
  const RdmaDevice* rdma = nullptr;     // nullptr: no RDMA port under this leaf
  const RdmaPort* port = nullptr;
  std::string via;                      // " via bond0", " via ib0.8001": each level passed
};
std::vector<NetLeaf> net_leaves(const NetworkFacts& n, const std::string& netdev);

// One entry of cufile.json's rdma_dev_addr_list on this node: a local address (what NVIDIA's
// documents list: "Each IP address corresponds to an IB device"), else an RDMA device's name,
// else a net device's name (the cuObject client guide allows names). The one reading of the
// list's entries, for the carriers and the rdma-stack check alike.
struct CufileEntry {
  enum Kind { Address, RdmaDeviceName, NetDeviceName, NotFound } kind = NotFound;
  const NetInterface* iface = nullptr;  // Address, NetDeviceName
  const RdmaDevice* rdma = nullptr;     // RdmaDeviceName
};
CufileEntry resolve_cufile_entry(const NetworkFacts& n, const std::string& entry);

// Collects the carriers of one mount, each once, with every way it was found.
class CarrierFinder {
 public:
  explicit CarrierFinder(const Snapshot& s) : net_(s.machine.network) {}

  // The net device whose route reaches `server` (longest prefix, then lowest metric).
  void by_route(const std::string& server);
  // The net device that owns local address `addr` (localports=, src_addr=, rdma_dev_addr_list).
  bool by_local_address(const std::string& addr, const std::string& how);
  // An entry of cufile.json's rdma_dev_addr_list: a local address, an RDMA device or a net
  // device (the cuObject client guide allows names as well as addresses).
  void by_cufile_entry(const std::string& entry, const std::string& key);
  // A net device, expanded to the ports under it (net_leaves).
  void add_netdev(const std::string& name, const std::string& how);
  bool has_interface(const std::string& name) const { return interface(name) != nullptr; }
  std::vector<MountCarrier> take() { return std::move(carriers_); }

 private:
  const NetInterface* interface(const std::string& name) const;
  static MountCarrier carrier_of_port(const RdmaDevice& d, const RdmaPort& p);
  void add(MountCarrier c, const std::string& how);

  const NetworkFacts& net_;
  std::vector<MountCarrier> carriers_;
};

// cuFile's own list of RDMA NICs for this mount: its mount_table entry, else its file
// system's list, else the global one (the shipped cufile.json's fs section, most specific
// first).
void add_cufile_carriers(CarrierFinder& f, const CufileSettings& c, const std::string& fs_key,
                         const Mount& m);
// The carrier's PCIe locality to every GPU and the GPU cuFile pairs it with (the nearest).
void add_locality(MountCarrier& c, const Snapshot& s, const TopologyView& v);

}  // namespace gdsb::topo::net
