// Network facts read from recorded trees of real nodes (network_recordings.hpp; origins in
// fixtures/real/SOURCES.md, "Network recordings"). Expected values are read off the pastes.
#include <gtest/gtest.h>

#include "gdsb/topo/collect.hpp"
#include "network_recordings.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

Snapshot collect(const fixture::Machine& m, const fixture::TempDir& dir) {
  fixture::write_sysfs(m, dir.path());
  CollectOptions opt;
  opt.lookup_names = false;
  return collect_sysfs_root(dir.path(), opt);
}

const RdmaDevice& rdma(const NetworkFacts& n, const std::string& name) {
  for (const auto& d : n.rdma_devices)
    if (d.name == name) return d;
  throw std::runtime_error("no RDMA device " + name);
}

const NetInterface& netdev(const NetworkFacts& n, const std::string& name) {
  for (const auto& i : n.interfaces)
    if (i.name == name) return i;
  throw std::runtime_error("no net device " + name);
}

TEST(TopoNetworkFacts, Nccl489TwoHdrPortsOneDown) {
  fixture::TempDir dir;
  const NetworkFacts n = collect(fixture::nccl489_two_hdr_ports(), dir).machine.network;
  EXPECT_TRUE(n.rdma_known);
  ASSERT_EQ(n.rdma_devices.size(), 2u);
  const RdmaDevice& up = rdma(n, "mlx5_0");
  EXPECT_EQ(up.bdf, "0000:1b:00.0");
  ASSERT_EQ(up.ports.size(), 1u);
  EXPECT_EQ(up.ports[0].port, 1);
  EXPECT_EQ(up.ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(up.ports[0].state, "ACTIVE");
  EXPECT_EQ(up.ports[0].phys_state, "LinkUp");
  EXPECT_EQ(up.ports[0].rate, "200 Gb/sec (4X HDR)");
  EXPECT_EQ(up.ports[0].rate_gbps, 200.0);
  EXPECT_EQ(up.ports[0].netdev, "");  // the paste shows no IPoIB device
  const RdmaDevice& down = rdma(n, "mlx5_1");
  EXPECT_EQ(down.bdf, "0000:1c:00.0");
  ASSERT_EQ(down.ports.size(), 1u);
  EXPECT_EQ(down.ports[0].state, "DOWN");
  EXPECT_EQ(down.ports[0].phys_state, "Disabled");
  EXPECT_EQ(down.ports[0].rate_gbps, 10.0);
  EXPECT_EQ(down.fw_ver, "");  // not in the paste: not written, read as unknown
}

TEST(TopoNetworkFacts, ImbueH100PortsFindTheirNetDevicesAsIbdev2netdevDid) {
  fixture::TempDir dir;
  const NetworkFacts n = collect(fixture::imbue_h100_ibdev2netdev(), dir).machine.network;
  ASSERT_EQ(n.rdma_devices.size(), 12u);
  // ibdev2netdev's lines: "mlx5_0 port 1 ==> ibp26s0 (Down)", "mlx5_1 port 1 ==> enp27s0f0np0 (Up)", ...
  const std::map<std::string, std::string> want{
      {"mlx5_0", "ibp26s0"},   {"mlx5_1", "enp27s0f0np0"}, {"mlx5_10", "ibp204s0"},     {"mlx5_11", "ibp220s0"},
      {"mlx5_2", "enp27s0f1np1"}, {"mlx5_3", "ibp60s0"},   {"mlx5_4", "ibp77s0"},       {"mlx5_5", "ibp94s0"},
      {"mlx5_6", "ibp156s0"},  {"mlx5_7", "enp157s0f0np0"}, {"mlx5_8", "enp157s0f1np1"}, {"mlx5_9", "ibp188s0"}};
  for (const auto& [dev, nd] : want) {
    const RdmaDevice& d = rdma(n, dev);
    ASSERT_EQ(d.ports.size(), 1u) << dev;
    EXPECT_EQ(d.ports[0].netdev, nd) << dev;
    EXPECT_EQ(d.bdf, netdev(n, nd).bdf) << dev;
  }
  EXPECT_EQ(rdma(n, "mlx5_0").bdf, "0000:1a:00.0");    // ibp26s0: bus 26
  EXPECT_EQ(rdma(n, "mlx5_8").bdf, "0000:9d:00.1");    // enp157s0f1np1: bus 157, function 1
  EXPECT_EQ(rdma(n, "mlx5_1").ports[0].link_layer, "Ethernet");
  EXPECT_EQ(rdma(n, "mlx5_0").ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(rdma(n, "mlx5_0").ports[0].state, "");  // ibdev2netdev without -v shows no port state
  EXPECT_EQ(netdev(n, "enp27s0f0np0").operstate, "up");
  EXPECT_EQ(netdev(n, "enp157s0f0np0").operstate, "up");
  EXPECT_EQ(netdev(n, "ibp26s0").operstate, "down");
  EXPECT_EQ(n.interfaces.size(), 12u);
  EXPECT_FALSE(n.net_known);  // the paste holds no /proc/net: addresses and routes unknown, not none
}

TEST(TopoNetworkFacts, StepMeshAddressesFromTheRecordedProcFiles) {
  fixture::TempDir dir;
  const NetworkFacts n = collect(fixture::stepmesh_two_roce_ports(), dir).machine.network;
  EXPECT_TRUE(n.net_known);
  const NetInterface& a = netdev(n, "ens108np0");
  EXPECT_EQ(a.bdf, "0000:0e:00.0");  // altname enp14s0np0
  EXPECT_EQ(a.mac, "94:6d:ae:eb:f0:5e");
  EXPECT_EQ(a.mtu, 1500);
  EXPECT_EQ(a.addresses, (std::vector<std::string>{"172.31.31.1/24", "fe80::966d:aeff:feeb:f05e/64"}));
  const NetInterface& b = netdev(n, "ens110np0");
  EXPECT_EQ(b.bdf, "0000:47:00.0");  // altname enp71s0np0
  EXPECT_EQ(b.addresses, (std::vector<std::string>{"fe80::966d:aeff:feec:18fe/64"}));
  // The local table's entries of ipv6_route (the addresses, ff00::/8, the null root) are no routes.
  ASSERT_EQ(n.routes.size(), 3u);
  EXPECT_EQ(n.routes[0], (Route{"172.31.31.0/24", "", "ens108np0", 0}));
  EXPECT_EQ(n.routes[1], (Route{"fe80::/64", "", "ens110np0", 256}));
  EXPECT_EQ(n.routes[2], (Route{"fe80::/64", "", "ens108np0", 256}));
  EXPECT_EQ(rdma(n, "mlx5_0").ports.at(0).netdev, "ens108np0");  // RoCE: the GID table's device
  EXPECT_EQ(rdma(n, "mlx5_3").ports.at(0).netdev, "ens110np0");
}

TEST(TopoNetworkFacts, SnapshotKeepsThemAndOlderSnapshotsKnowNone) {
  fixture::TempDir dir;
  const Snapshot s = collect(fixture::imbue_h100_ibdev2netdev(), dir);
  save_snapshot(s, dir.path() / "saved");
  const Snapshot back = load_snapshot(dir.path() / "saved");
  EXPECT_EQ(back.machine.network, s.machine.network);
  fixture::TempDir other;
  const Snapshot stepmesh = collect(fixture::stepmesh_two_roce_ports(), other);
  save_snapshot(stepmesh, other.path() / "saved");
  EXPECT_EQ(load_snapshot(other.path() / "saved").machine.network, stepmesh.machine.network);
  // The H100 VM's snapshot was saved before network facts were recorded.
  const Snapshot old = load_snapshot(fs::path(GDSB_TOPO_REAL_FIXTURES) / "h100-vm/snapshot");
  const NetworkFacts& n = old.machine.network;
  EXPECT_FALSE(n.net_known || n.rdma_known || n.nvme_known || n.modules_known);
  EXPECT_TRUE(n.interfaces.empty() && n.rdma_devices.empty());
}

TEST(TopoNetworkFacts, NvmeOverRdmaPathsNameTheirMultipathNamespace) {
  fixture::TempDir dir;
  const NetworkFacts n = collect(fixture::nvmecli1785_rdma_multipath(), dir).machine.network;
  EXPECT_TRUE(n.nvme_known);
  ASSERT_EQ(n.nvme_controllers.size(), 3u);
  std::map<std::string, const NvmeController*> by_name;
  for (const auto& c : n.nvme_controllers) by_name[c.name] = &c;
  ASSERT_TRUE(by_name.count("nvme7") && by_name.count("nvme31") && by_name.count("nvme8"));
  EXPECT_EQ(by_name["nvme7"]->transport, "rdma");
  EXPECT_EQ(by_name["nvme7"]->address, "traddr=192.168.0.50,trsvcid=4420");
  EXPECT_EQ(by_name["nvme31"]->address, "traddr=192.168.1.51,trsvcid=4420");
  EXPECT_EQ(by_name["nvme7"]->namespaces, std::vector<std::string>{"nvme7n1"});  // nvme list -v: nvme7n1
  EXPECT_EQ(by_name["nvme31"]->namespaces, std::vector<std::string>{"nvme7n1"});
  EXPECT_TRUE(by_name["nvme8"]->namespaces.empty());
  EXPECT_EQ(by_name["nvme7"]->bdf, "");  // a fabrics controller has no PCI function
  fixture::TempDir saved;
  const Snapshot s = collect(fixture::nvmecli1785_rdma_multipath(), saved);
  save_snapshot(s, saved.path() / "saved");
  EXPECT_EQ(load_snapshot(saved.path() / "saved").machine.network.nvme_controllers, s.machine.network.nvme_controllers);
}

TEST(TopoNetworkFacts, ARecordingWithoutTheClassDirectoriesKnowsNothingOfThem) {
  fixture::TempDir dir;
  const NetworkFacts n = collect(fixture::make_flat_vm(), dir).machine.network;
  EXPECT_FALSE(n.rdma_known);  // a recording may just not have copied /sys/class/infiniband
  EXPECT_FALSE(n.nvme_known);
  EXPECT_FALSE(n.net_known);
}

}  // namespace
}  // namespace gdsb::topo::testing
