// Which NICs carry GPUDirect data. A data NIC is InfiniBand (class 0207, or 0c06 in hwloc and
// some lspci), an Ethernet family that does RDMA (RoCE or iWARP: ConnectX, BlueField,
// NetXtreme-E, E810, FastLinQ, Chelsio T6, EFA, Slingshot), or any NIC whose network link runs
// at 25 Gb/s or more. Everything else (1/10 GbE ports, a BMC's NIC, a virtual NIC) is a
// management NIC: listed, never judged for GPU locality, never counted in a remote ceiling.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

enum class NicRole { Data, Management };
std::string_view nic_role_name(NicRole r);  // "data", "management"

struct NicClass {
  NicRole role = NicRole::Management;
  std::string why;  // "InfiniBand (class 0207)", "1000 Mb/s link: 10 GbE or less", ...
  // The network rate in GB/s (1e9 bytes/s per direction) where the input records it
  // (a live net device's speed); nullopt otherwise (then the PCIe line rate bounds it).
  std::optional<double> network_gb_s;
};

// Meaningful for devices of role Nic; any other device is Management with a reason.
NicClass classify_nic(const Device& d);
inline bool is_data_nic(const Device& d) {
  return d.role == Role::Nic && classify_nic(d).role == NicRole::Data;
}

}  // namespace gdsb::topo
