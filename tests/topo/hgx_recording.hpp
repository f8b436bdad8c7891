// The 8x H100 HGX recording (tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt) as read by
// hand, shared by the tests that judge it (test_real_machines.cpp, test_path_model.cpp).
#pragma once

#include <string>

#include "gdsb/topo/model.hpp"

#ifdef GDSB_TOPO_REAL_FIXTURES
#include <filesystem>
#include <sstream>
#include <vector>

#include "gdsb/topo/collect.hpp"
#include "topo_test_util.hpp"
#endif

namespace gdsb::topo::testing {

// 8x H100 SXM5 HGX (Dell, two Sapphire Rapids sockets), leptonai/gpud lspci -vvv.
// Read off the text: GPU i sits on bus b under a Broadcom PEX890xx switch (upstream port
// b-3, downstream ports b-2:00..03,1f) with one NVMe on bus b-1 (Gen4 x4 drive on a Gen5
// x4 port) and one ConnectX-7 on bus b+1 (Gen5 x16); GPUs 0 and 4 also have a ConnectX-6
// Dx (two functions, Gen4 x16) on b+2. Every PEX890xx and root port shows ACSCtl all '-'.
// ReqRedir+/CmpltRedir+ is set only on the PMC-Sierra ports 82:00.0-82:03.0 above the
// four NVSwitch bridges (10de:22a3): no GPU, drive or NIC below them. BAR0 is 64-bit
// (Region 0, 16M), so BAR1 is Region 2, 128G, on each GPU. NUMA node 0 for GPUs 0-3,
// node 1 for GPUs 4-7. Links: all GPUs Gen5 x16 (ok).
struct HgxGpu {
  const char *gpu, *nvme, *nic;
  int numa;
};
inline constexpr HgxGpu kHgx[] = {{"0000:19:00.0", "0000:18:00.0", "0000:1a:00.0", 0},
                                  {"0000:3b:00.0", "0000:3a:00.0", "0000:3c:00.0", 0},
                                  {"0000:4c:00.0", "0000:4b:00.0", "0000:4d:00.0", 0},
                                  {"0000:5d:00.0", "0000:5c:00.0", "0000:5e:00.0", 0},
                                  {"0000:9b:00.0", "0000:9a:00.0", "0000:9c:00.0", 1},
                                  {"0000:bb:00.0", "0000:ba:00.0", "0000:bc:00.0", 1},
                                  {"0000:cb:00.0", "0000:ca:00.0", "0000:cc:00.0", 1},
                                  {"0000:db:00.0", "0000:da:00.0", "0000:dc:00.0", 1}};

// NVIDIA GDS Benchmarking and Configuration Guide, section 6.1: `ibdev2netdev` on the NFS
// client, mlx5_0..mlx5_9 ==> ib0..ib9, mlx5_4 and mlx5_5 Down. Its first eight ports are laid
// on the HGX recording's eight ConnectX-7 functions in PCI order (GPU i's NIC is ib<i>).
inline NetworkFacts hgx_network() {
  NetworkFacts n;
  n.net_known = n.rdma_known = n.modules_known = true;
  for (int i = 0; i < 8; ++i) {
    const bool up = i != 4 && i != 5;
    const std::string ib = "ib" + std::to_string(i);
    NetInterface iface;
    iface.name = ib;
    iface.bdf = kHgx[i].nic;
    iface.operstate = up ? "up" : "down";
    iface.type = 32;  // ARPHRD_INFINIBAND
    n.interfaces.push_back(iface);
    RdmaDevice d;
    d.name = "mlx5_" + std::to_string(i);
    d.bdf = kHgx[i].nic;
    d.ports.push_back({1, "InfiniBand", up ? "ACTIVE" : "DOWN", up ? "LinkUp" : "Disabled",
                       "", std::nullopt, ib});
    n.rdma_devices.push_back(d);
  }
  // Issue 25's storage network: the NFS server 10.10.1.5 on ib0's /24.
  n.interfaces[0].addresses = {"10.10.1.21/24"};
  n.routes.push_back({"10.10.1.0/24", "", "ib0", 0});
  n.modules = {"ib_core", "mlx5_ib", "rpcrdma"};
  return n;
}

#ifdef GDSB_TOPO_REAL_FIXTURES
// The recording with the host facts a node of that fleet has (its `lspci -vvv` has none):
// kernel 6.8, a udev database, /etc/cufile.json, and nvidia-fs as asked (without it the node
// uses kernel P2PDMA). The tests add the mounts, block devices and network they judge.
inline Snapshot hgx_with_host_facts(bool nvidia_fs, const CollectOptions& o) {
  Snapshot s = collect_lspci_text(
      std::filesystem::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt", o);
  Machine& m = s.machine;
  m.proc_known = true;
  m.kernel_release = "6.8.0-45-generic";
  m.nvidia_fs_loaded = nvidia_fs;
  m.udev_present = true;
  m.cufile.path = "/etc/cufile.json";
  m.cufile.found = true;
  m.cufile.use_pci_p2pdma = !nvidia_fs;
  if (!nvidia_fs) {
    // The rest of what P2PDMA mode needs (issue 43), as a ready node shows it: the kallsyms
    // line of NVIDIA/gds-nvidia-fs issue 75, the open module of the project's H200 VM, the
    // guide's registry value and multipath N (fixtures/real/SOURCES.md, "P2PDMA readiness").
    m.arch = "x86_64";
    m.p2pdma.kallsyms_pgmap_ops = true;
    m.p2pdma.registry_dwords = "RMForceStaticBar1=1;RmForceDisableIomapWC=1;";
    m.p2pdma.nvme_multipath = "N";
    m.network.nvidia_driver_version =
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)";
  }
  return s;
}

// A line of /proc/mounts ("src target fstype options 0 0") as the collector reads it.
inline Mount mount_line(const std::string& line) {
  std::istringstream f(line);
  Mount m;
  f >> m.source >> m.target >> m.fstype >> m.options;
  return m;
}

// The recording with host facts, these mounts and hgx_network(): issue 25's network node.
inline Snapshot hgx_with_network(const std::vector<std::string>& mounts, bool nvidia_fs = true) {
  Snapshot s = hgx_with_host_facts(nvidia_fs, offline());
  for (const auto& l : mounts) s.machine.mounts.push_back(mount_line(l));
  s.machine.network = hgx_network();
  return s;
}

// The gigabit management port of the recording (BCM5720 at 01:00.0), first among the
// interfaces, with the `ip route` of a real node whose management network is eno1 ("Kernel
// Routing Tables" notes; SOURCES.md, "Network storage").
inline void add_management_port(NetworkFacts& n) {
  NetInterface eno1;
  eno1.name = "eno1";
  eno1.bdf = "0000:01:00.0";
  eno1.operstate = "up";
  eno1.speed_mbps = 1000;
  eno1.type = 1;
  eno1.addresses = {"7.151.164.166/25"};
  n.interfaces.insert(n.interfaces.begin(), eno1);
  n.routes.push_back({"0.0.0.0/0", "7.151.164.131", "eno1", 100});
  n.routes.push_back({"7.0.0.0/8", "7.151.164.131", "eno1", 65024000});
  n.routes.push_back({"7.151.164.128/25", "", "eno1", 100});
}

// An Ethernet GPU node: the HGX recording's PCI side and host facts, with the network of a node
// whose NICs carry no RDMA (/sys/class/infiniband read and empty) and the management routing
// table of the "Kernel Routing Tables" notes (eno1 on the board's BCM5720, 01:00.0; the default
// route reaches every server). Mellanox/nv_peer_memory issue #46's kernel and lsmod: Linux
// 4.15.0-46-generic, no peer-memory module; so neither nvidia-peermem nor DMA-BUF, the case
// where an RDMA verdict would fail the node.
inline Snapshot hgx_ethernet_node(const std::vector<std::string>& mounts) {
  Snapshot s = hgx_with_host_facts(true, offline());
  s.machine.kernel_release = "4.15.0-46-generic";
  for (const auto& l : mounts) s.machine.mounts.push_back(mount_line(l));
  NetworkFacts& n = s.machine.network;
  n.net_known = n.rdma_known = n.modules_known = true;
  add_management_port(n);
  n.modules = {"ksocklnd", "lnet", "lustre", "nvidia"};
  return s;
}

#endif

}  // namespace gdsb::topo::testing
