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
  // A net device, a bond or VLAN expanded to the ports under it.
  void add_netdev(const std::string& name, const std::string& how, int depth = 0);
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
