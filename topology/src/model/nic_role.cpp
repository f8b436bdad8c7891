#include "gdsb/topo/nic_role.hpp"

#include <array>
#include <cstdio>

namespace gdsb::topo {
namespace {

// Ethernet families with RDMA (RoCE or iWARP) and GPUDirect RDMA support in their drivers,
// by PCI vendor and a device-ID range (inclusive). Ranges follow pci.ids.
struct Family {
  uint16_t vendor, first, last;
  std::string_view name;
};
constexpr std::array<Family, 10> kRdmaFamilies{{
    {0x15b3, 0x0000, 0xffff, "NVIDIA/Mellanox ConnectX or BlueField (RoCE)"},
    {0x14e4, 0x16c0, 0x16ef, "Broadcom NetXtreme-C/E (RoCE, bnxt_re)"},
    {0x14e4, 0x1750, 0x177f, "Broadcom NetXtreme-E BCM575xx (RoCE, bnxt_re)"},
    {0x8086, 0x1591, 0x159b, "Intel E810 (RoCE/iWARP, irdma)"},
    {0x8086, 0x188a, 0x1893, "Intel E823 (RoCE/iWARP, irdma)"},
    {0x1077, 0x8070, 0x8090, "QLogic/Marvell FastLinQ 45000 (RoCE/iWARP)"},
    {0x1077, 0x1634, 0x1664, "QLogic/Marvell FastLinQ 41000 (RoCE/iWARP)"},
    {0x1425, 0x6400, 0x64ff, "Chelsio T6 (iWARP)"},
    {0x1d0f, 0xefa0, 0xefaf, "Amazon EFA (SRD RDMA)"},
    {0x17db, 0x0500, 0x05ff, "HPE Slingshot (Cassini)"},
}};


}  // namespace

std::string_view nic_role_name(NicRole r) { return r == NicRole::Data ? "data" : "management"; }

NicClass classify_nic(const Device& d) {
  NicClass c;
  if (d.role != Role::Nic) {
    c.why = "not a NIC";
    return c;
  }
  if (d.net_speed_mbps && *d.net_speed_mbps > 0) c.network_gb_s = *d.net_speed_mbps / 8000.0;
  if (auto v = virtual_device_reason(d); !v.empty()) {
    c.why = "virtual NIC: " + v.substr(0, v.find(")") + 1);
    return c;
  }
  if (d.class_id() == 0x0207 || d.class_id() == 0x0c06) {
    c.role = NicRole::Data;
    c.why = "InfiniBand (class " + std::string(d.class_id() == 0x0207 ? "0207" : "0c06") + ")";
    return c;
  }
  for (const auto& f : kRdmaFamilies)
    if (d.vendor == f.vendor && d.device >= f.first && d.device <= f.last) {
      c.role = NicRole::Data;
      c.why = std::string(f.name) + " " + pci_ids_text(d);
      return c;
    }
  if (d.net_speed_mbps && *d.net_speed_mbps >= 25000) {
    c.role = NicRole::Data;
    c.why = std::to_string(*d.net_speed_mbps / 1000) + " Gb/s network link (25 Gb/s or more)";
    return c;
  }
  // IDs that were not established are said so, never printed as an ID.
  const std::string ids = d.vendor != 0 ? pci_ids_text(d) + " is no"
                                        : "vendor:device unknown, so no known";
  if (d.net_speed_mbps && *d.net_speed_mbps > 0)
    c.why = std::to_string(*d.net_speed_mbps) + " Mb/s network link (10 GbE or less), " + ids +
            " RDMA family";
  else
    c.why = ids + " InfiniBand or RDMA Ethernet family and its network rate is not "
            "recorded (management or 10 GbE class)";
  return c;
}

}  // namespace gdsb::topo
