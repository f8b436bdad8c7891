// NIC roles: data NICs (InfiniBand, RDMA Ethernet families, 25 Gb/s or more) against
// management NICs (1/10 GbE, virtual), from the IDs and classes pci.ids gives these parts.
#include <gtest/gtest.h>

#include "gdsb/topo/nic_role.hpp"

namespace gdsb::topo {
namespace {

Device nic(uint16_t vendor, uint16_t device, uint32_t class_code,
           std::optional<int> mbps = std::nullopt) {
  Device d;
  d.bdf = "0000:01:00.0";
  d.vendor = vendor;
  d.device = device;
  d.class_code = class_code;
  d.net_speed_mbps = mbps;
  d.role = classify_role(d);
  return d;
}

TEST(NicRole, InfiniBandInEitherClassIsData) {
  // ConnectX-7 as lspci shows it on the HGX recording (Infiniband controller [0207]).
  EXPECT_EQ(classify_nic(nic(0x15b3, 0x1021, 0x020700)).role, NicRole::Data);
  // hwloc and older pci.ids put InfiniBand under serial bus (0c06): still a NIC, and data.
  Device ib = nic(0x1234, 0x5678, 0x0c0600);
  EXPECT_EQ(ib.role, Role::Nic);
  EXPECT_EQ(classify_nic(ib).role, NicRole::Data);
  EXPECT_NE(classify_nic(ib).why.find("0c06"), std::string::npos);
}

TEST(NicRole, RdmaEthernetFamiliesAreData) {
  EXPECT_EQ(classify_nic(nic(0x15b3, 0x101d, 0x020000)).role, NicRole::Data);  // ConnectX-6 Dx
  EXPECT_EQ(classify_nic(nic(0x14e4, 0x1750, 0x020000)).role, NicRole::Data);  // BCM57508
  EXPECT_EQ(classify_nic(nic(0x8086, 0x1592, 0x020000)).role, NicRole::Data);  // E810-C
  EXPECT_EQ(classify_nic(nic(0x1d0f, 0xefa1, 0x020000)).role, NicRole::Data);  // EFA
}

TEST(NicRole, GigabitAndTenGigabitPortsAreManagement) {
  // BCM5720 (14e4:165f), the HGX recording's LOM ports.
  const NicClass c = classify_nic(nic(0x14e4, 0x165f, 0x020000));
  EXPECT_EQ(c.role, NicRole::Management);
  EXPECT_EQ(classify_nic(nic(0x8086, 0x1521, 0x020000, 1000)).role, NicRole::Management);  // I350
  EXPECT_EQ(classify_nic(nic(0x8086, 0x1572, 0x020000, 10000)).role, NicRole::Management);  // X710
  EXPECT_EQ(classify_nic(nic(0x1af4, 0x1041, 0x020000)).role, NicRole::Management);  // virtio-net
  EXPECT_NE(classify_nic(nic(0x1af4, 0x1041, 0x020000)).why.find("virtio-net NIC"),
            std::string::npos);
}

TEST(NicRole, AMeasuredLinkOf25GbsOrMoreIsData) {
  const NicClass c = classify_nic(nic(0x1111, 0x2222, 0x020000, 100000));
  EXPECT_EQ(c.role, NicRole::Data);
  ASSERT_TRUE(c.network_gb_s);
  EXPECT_DOUBLE_EQ(*c.network_gb_s, 12.5);
  EXPECT_EQ(classify_nic(nic(0x1111, 0x2222, 0x020000, 10000)).role, NicRole::Management);
}

TEST(NicRole, NonNicsAreNotData) {
  Device gpu = nic(0x10de, 0x2330, 0x030200);
  EXPECT_FALSE(is_data_nic(gpu));
}

}  // namespace
}  // namespace gdsb::topo
