// The recordings of network_recordings.hpp, values as the pastes show them.
#include "network_recordings.hpp"

#include <cstdio>

namespace gdsb::topo::fixture {
namespace {

// A ConnectX function as an endpoint on its own root bus (the pastes show no PCI tree).
Dev& add_nic(Machine& m, const std::string& bdf, uint16_t device, uint32_t cls) {
  Dev d;
  d.bdf = bdf;
  d.vendor = 0x15b3;
  d.device = device;
  d.class_code = cls;
  d.port_type = 0;
  d.max_speed = d.cur_speed = 4;
  d.max_width = d.cur_width = 16;
  d.driver = "mlx5_core";
  m.devs.push_back(d);
  return m.devs.back();
}

}  // namespace

Machine nccl489_two_hdr_ports() {
  Machine m;
  add_nic(m, "0000:1b:00.0", 0x101b, 0x020700);
  add_nic(m, "0000:1c:00.0", 0x101b, 0x020700);
  m.host.network.ibdevs = {
      {"mlx5_0", "0000:1b:00.0", "", "",
       {{1, "InfiniBand", "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)", "fe80:0000:0000:0000:043f:7203:00f8:03ce", ""}}},
      {"mlx5_1", "0000:1c:00.0", "", "",
       {{1, "InfiniBand", "1: DOWN", "3: Disabled", "10 Gb/sec (4X)", "fe80:0000:0000:0000:043f:7203:00fc:8334", ""}}},
  };
  return m;
}

Machine imbue_h100_ibdev2netdev() {
  Machine m;
  struct Row {
    const char* ibdev;
    const char* netdev;
    bool up;
    bool ethernet;
  };
  // ibdev2netdev | column -t, with the poster's comments (CX-7 infiniband, CX-6 *ethernet*).
  const Row rows[] = {
      {"mlx5_0", "ibp26s0", false, false},        {"mlx5_1", "enp27s0f0np0", true, true},
      {"mlx5_10", "ibp204s0", false, false},      {"mlx5_11", "ibp220s0", false, false},
      {"mlx5_2", "enp27s0f1np1", false, true},    {"mlx5_3", "ibp60s0", false, false},
      {"mlx5_4", "ibp77s0", false, false},        {"mlx5_5", "ibp94s0", false, false},
      {"mlx5_6", "ibp156s0", false, false},       {"mlx5_7", "enp157s0f0np0", true, true},
      {"mlx5_8", "enp157s0f1np1", false, true},   {"mlx5_9", "ibp188s0", false, false},
  };
  for (const Row& r : rows) {
    unsigned bus = 0, slot = 0, fn = 0;
    const std::string nd = r.netdev;
    if (std::sscanf(nd.c_str(), "enp%us%uf%u", &bus, &slot, &fn) != 3) std::sscanf(nd.c_str(), "ibp%us%u", &bus, &slot);
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:%02x.%u", bus, slot, fn);
    // ConnectX-7 (15b3:1021) InfiniBand controller; ConnectX-6 Dx (15b3:101d) Ethernet.
    add_nic(m, bdf, r.ethernet ? 0x101d : 0x1021, r.ethernet ? 0x020000 : 0x020700);
    m.host.network.netdevs.push_back({nd, bdf, r.up ? "up" : "down", "", "", 0, 0, 0, {}, ""});
    IbPort port;
    port.link_layer = r.ethernet ? "Ethernet" : "InfiniBand";
    m.host.network.ibdevs.push_back({r.ibdev, bdf, "", "", {port}});
  }
  return m;
}

Machine stepmesh_two_roce_ports() {
  Machine m;
  // ConnectX-7 (15b3:1021) Ethernet functions: chosen, the paste names no adapter.
  add_nic(m, "0000:0e:00.0", 0x1021, 0x020000);
  add_nic(m, "0000:47:00.0", 0x1021, 0x020000);
  Network& n = m.host.network;
  n.netdevs = {{"ens108np0", "0000:0e:00.0", "up", "94:6d:ae:eb:f0:5e", "", 1500, 1, 0, {}, ""},
               {"ens110np0", "0000:47:00.0", "up", "94:6d:ae:ec:18:fe", "", 1500, 1, 0, {}, ""}};
  IbPort p0, p3;
  p0.link_layer = p3.link_layer = "Ethernet";
  p0.ndev = "ens108np0";
  p3.ndev = "ens110np0";
  n.ibdevs = {{"mlx5_0", "0000:0e:00.0", "", "", {p0}}, {"mlx5_3", "0000:47:00.0", "", "", {p3}}};
  n.route = "ens108np0\t001F1FAC\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
  const std::string trie =
      "  +-- 0.0.0.0/0 1 0 0\n"
      "     +-- 172.31.31.0/24 2 0 2\n"
      "        |-- 172.31.31.0\n"
      "           /24 link UNICAST\n"
      "        |-- 172.31.31.1\n"
      "           /32 host LOCAL\n"
      "        |-- 172.31.31.255\n"
      "           /32 link BROADCAST\n";
  n.fib_trie = "Main:\n" + trie + "Local:\n" + trie;
  // ifindex 2 and 5 as `ip addr` numbers them; scope 20 link, flags 80 permanent.
  n.if_inet6 =
      "fe80000000000000966daefffeebf05e 02 40 20 80 ens108np0\n"
      "fe80000000000000966daefffeec18fe 05 40 20 80 ens110np0\n";
  const std::string zero = "00000000000000000000000000000000";
  n.ipv6_route =
      "fe800000000000000000000000000000 40 " + zero + " 00 " + zero + " 00000100 00000001 00000000 00000001 ens110np0\n" +
      "fe800000000000000000000000000000 40 " + zero + " 00 " + zero + " 00000100 00000001 00000000 00000001 ens108np0\n" +
      "fe80000000000000966daefffeebf05e 80 " + zero + " 00 " + zero + " 00000000 00000002 00000000 80200001 ens108np0\n" +
      "fe80000000000000966daefffeec18fe 80 " + zero + " 00 " + zero + " 00000000 00000002 00000000 80200001 ens110np0\n" +
      "ff000000000000000000000000000000 08 " + zero + " 00 " + zero + " 00000100 00000003 00000000 00000001 ens108np0\n" +
      zero + " 00 " + zero + " 00 " + zero + " ffffffff 00000001 00000000 00200200       lo\n";
  return m;
}

Machine nvmecli1785_rdma_multipath() {
  Machine m;
  add_nic(m, "0000:1b:00.0", 0x101b, 0x020700);
  m.host.network.nvme = {{"nvme7", "rdma", "traddr=192.168.0.50,trsvcid=4420", "", "", {"nvme7c7n1"}},
                         {"nvme31", "rdma", "traddr=192.168.1.51,trsvcid=4420", "", "", {"nvme7c31n1"}},
                         {"nvme8", "rdma", "traddr=192.168.0.50,trsvcid=4420", "", "", {}}};
  return m;
}

}  // namespace gdsb::topo::fixture
