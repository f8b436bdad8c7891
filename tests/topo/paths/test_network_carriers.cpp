// Which RDMA port carries a mount (issue 34 items 8 and 9): an IPoIB partition child tied to its
// port, and cufile.json's rdma_dev_addr_list read one way by the carriers and the rdma-stack
// check. Ports, GIDs and rates are real recordings (network_recordings.hpp; fixtures/real/
// SOURCES.md); the layout of a partition child is the kernel's (Documentation/infiniband/
// ipoib: "echo 0x8001 > /sys/class/net/ib0/create_child ... creates ib0.8001 ... the main
// interface for a subinterface is in 'parent'"; ipoib_vlan.c's parent attribute; the child's
// device is its parent's PCI function). Expected values are worked out by hand from those.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "hgx_recording.hpp"
#include "network_recordings.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// NVIDIA/nccl issue 489's node (mlx5_0 port 1 ACTIVE, 200 Gb/sec (4X HDR), GID 0
// fe80::043f:7203:00f8:03ce; mlx5_1 DOWN) with IPoIB on mlx5_0: ib0 on the default partition
// (10.10.1.21/24) and its child ib0.8001 on P_Key 0x8001 (10.20.0.21/16), both 20-byte IPoIB
// addresses ending in the port GUID, as an IPoIB address does (a QPN, then the port's GID). An
// NFS-over-RDMA mount whose server, 10.20.0.5, sits on the child's partition. `with_parent`:
// whether the child's `parent` file is recorded.
fixture::Machine ipoib_child_node(bool with_parent) {
  fixture::Machine m = fixture::nccl489_two_hdr_ports();
  const std::string gid = "fe:80:00:00:00:00:00:00:04:3f:72:03:00:f8:03:ce";
  fixture::NetDev ib0{"ib0", "0000:1b:00.0", "up", "00:00:10:49:" + gid, "", 2044, 32, 0, {}, ""};
  fixture::NetDev child{"ib0.8001", "0000:1b:00.0", "up", "00:00:10:4a:" + gid, "", 2044, 32, 0,
                        {}, with_parent ? "ib0" : ""};
  fixture::Network& n = m.host.network;
  n.netdevs = {ib0, child};
  // /proc/net/route as the kernel writes the two connected routes (hex, network byte order).
  n.route =
      "ib0\t00010A0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
      "ib0.8001\t0000140A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";
  n.fib_trie =
      "Local:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 10.10.1.21\n        /32 host LOCAL\n"
      "     |-- 10.20.0.21\n        /32 host LOCAL\n";
  n.modules = "rpcrdma 315392 0 - Live 0x0000000000000000\n";
  m.host.mounts = {
      "10.20.0.5:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
      "namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,clientaddr=10.20.0.21,"
      "local_lock=none,addr=10.20.0.5 0 0"};
  m.host.cufile_json = R"({"properties": {"rdma_dev_addr_list": ["10.20.0.21"]}})";
  return m;
}

Snapshot collect(const fixture::Machine& m, const fixture::TempDir& dir) {
  fixture::write_sysfs(m, dir.path());
  return collect_sysfs_root(dir.path(), offline());
}

// Item 8: the route to the server leaves through ib0.8001, which no RDMA port names (ibdev2netdev
// pairs mlx5_0 port 1 with ib0, the first device whose address ends in the port GUID). The child
// stands on its parent's port: mlx5_0 port 1, ACTIVE, so GDS engages; the same where the
// recording lacks `parent` (the child's PCI function has that one RDMA port).
TEST(TopoNetworkCarriers, AnIpoibPartitionChildIsCarriedByItsParentsPort) {
  for (bool with_parent : {true, false}) {
    SCOPED_TRACE(with_parent ? "parent recorded" : "no parent file");
    fixture::TempDir dir;
    const Snapshot s = collect(ipoib_child_node(with_parent), dir);
    const NetworkFacts& n = s.machine.network;
    ASSERT_EQ(n.interfaces.size(), 2U);
    EXPECT_EQ(n.interfaces[1].name, "ib0.8001");
    EXPECT_EQ(n.interfaces[1].parent, with_parent ? "ib0" : "");
    EXPECT_EQ(n.interfaces[1].bdf, "0000:1b:00.0");
    EXPECT_EQ(n.rdma_devices[0].ports[0].netdev, "ib0");
    const auto v = network_mounts(s);
    ASSERT_EQ(v.size(), 1U);
    ASSERT_EQ(v[0].carriers.size(), 1U);
    const MountCarrier& c = v[0].carriers[0];
    EXPECT_EQ(c.netdev, "ib0");
    EXPECT_EQ(c.rdma_dev, "mlx5_0");
    EXPECT_EQ(c.rdma_port, 1);
    EXPECT_EQ(c.rdma_state, "ACTIVE");
    EXPECT_EQ(c.bdf, "0000:1b:00.0");
    EXPECT_NE(c.how.find("route to 10.20.0.5 (10.20.0.0/16 dev ib0.8001) via ib0.8001"),
              std::string::npos)
        << c.how;
    EXPECT_EQ(v[0].engage, Engage::Yes) << v[0].why;

    // cuFile's list names the child's address: the check follows it to the same port.
    const Outcome o = evaluate_snapshot(Snapshot(s));
    const CheckResult* r = o.titled("rdma-stack", "rdma_dev_addr_list");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->verdict, Verdict::Pass) << r->consequence;
    EXPECT_TRUE(any_contains(r->evidence, "10.20.0.21 (properties) -> ib0.8001 -> ib0 -> mlx5_0 "
                                          "port 1: ACTIVE (LinkUp), 200 Gb/sec (4X HDR)"));
  }
}

// Item 9: one reading of rdma_dev_addr_list. Entries may be local addresses or RDMA or net
// device names (GDS troubleshooting guide, "User-Space RDMA Counters"; the cuObject client
// guide's "RDMA Multipathing" names devices). On the HGX network (hgx_recording.hpp: mlx5_0..7
// ==> ib0..7, mlx5_4 and mlx5_5 Down) a list of ib0's address, mlx5_4 by name and ib2 by name:
// the carriers of a GPFS mount (which cuFile's list carries) and the check's lines name the
// same three ports, and the check warns of mlx5_4, DOWN.
TEST(TopoNetworkCarriers, RdmaDevAddrListIsReadOneWay) {
  Snapshot s = hgx_with_network({"store04 /mnt/nobackup gpfs rw,relatime 0 0"});
  s.machine.cufile.rdma_dev_addr_list = std::vector<std::string>{"10.10.1.21", "mlx5_4", "ib2"};
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 1U);
  std::vector<std::string> carried;
  for (const auto& c : v[0].carriers)
    carried.push_back(c.rdma_dev + " port " + std::to_string(c.rdma_port) + ": " + c.rdma_state);
  EXPECT_EQ(carried, (std::vector<std::string>{"mlx5_0 port 1: ACTIVE", "mlx5_4 port 1: DOWN",
                                               "mlx5_2 port 1: ACTIVE"}));
  const Outcome o = evaluate_snapshot(std::move(s));
  const CheckResult* r = o.titled("rdma-stack", "rdma_dev_addr_list");
  ASSERT_TRUE(r);
  EXPECT_TRUE(any_contains(r->evidence, "10.10.1.21 (properties) -> ib0 -> mlx5_0 port 1: ACTIVE"));
  EXPECT_TRUE(any_contains(r->evidence, "mlx5_4 (properties) -> mlx5_4 port 1: DOWN"));
  EXPECT_TRUE(any_contains(r->evidence, "ib2 (properties) -> ib2 -> mlx5_2 port 1: ACTIVE"));
  EXPECT_EQ(r->verdict, Verdict::Warn);
  EXPECT_NE(r->consequence.find("mlx5_4 (properties) -> mlx5_4 port 1: DOWN"), std::string::npos)
      << r->consequence;
  EXPECT_EQ(r->consequence.find("ib2"), std::string::npos) << r->consequence;
  EXPECT_EQ(r->consequence.find("no interface"), std::string::npos) << r->consequence;
}

// Item 8: a multipath route, recorded in a network namespace of this project's VM with iproute2
// as the oracle (fixtures/real/ecmp-netns: 10.50.0.0/16 and fd50::/64 over d0 and d1). The
// expected next hops are read off `ip -j route show` there. IPv6: /proc/net/ipv6_route lists each
// next hop, so both carry a mount of a server there. IPv4: /proc/net/route shows d0 alone, and
// the carrier says that it is the first next hop only.
TEST(TopoNetworkCarriers, EcmpRoutesGiveEveryNextHopOrSayTheFirstOnly) {
  const fs::path rec = fs::path(GDSB_TOPO_REAL_FIXTURES) / "ecmp-netns";
  const auto oracle4 = nlohmann::json::parse(read_text(rec / "ip-j-route.json"));
  const auto oracle6 = nlohmann::json::parse(read_text(rec / "ip-j-6-route.json"));
  auto nexthops = [](const nlohmann::json& routes, const std::string& dst) {
    std::vector<std::string> out;
    for (const auto& r : routes)
      if (r.at("dst") == dst)
        for (const auto& h : r.at("nexthops")) out.push_back(h.at("dev").get<std::string>());
    return out;
  };
  ASSERT_EQ(nexthops(oracle4, "10.50.0.0/16"), (std::vector<std::string>{"d0", "d1"}));
  ASSERT_EQ(nexthops(oracle6, "fd50::/64"), (std::vector<std::string>{"d0", "d1"}));

  fixture::TempDir root;
  for (const char* f : {"route", "ipv6_route", "fib_trie", "if_inet6"})
    fixture::write_file(root.path() / "proc/net" / f,
                        read_text(rec / (std::string("proc-net-") + f)));
  for (const char* dev : {"d0", "d0p", "d1", "d1p"}) {
    fixture::write_file(root.path() / "sys/class/net" / dev / "operstate", "up\n");
    fixture::write_file(root.path() / "sys/class/net" / dev / "type", "1\n");
  }
  fixture::write_file(root.path() / "proc/mounts",
                      "10.50.0.7:/export /mnt/v4 nfs4 rw,vers=4.1,proto=tcp,addr=10.50.0.7 0 0\n"
                      "[fd50::7]:/export /mnt/v6 nfs4 rw,vers=4.1,proto=tcp6,addr=fd50::7 0 0\n");
  Snapshot s;
  s.machine = collect_machine(root.path(), false, offline());
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 2U);
  ASSERT_EQ(v[0].carriers.size(), 1U);
  EXPECT_EQ(v[0].carriers[0].netdev, "d0");
  EXPECT_EQ(v[0].carriers[0].how,
            "route to 10.50.0.7 (10.50.0.0/16 via 10.1.0.1 dev d0; /proc/net/route shows a "
            "multipath route's first next hop only)");
  std::vector<std::string> v6;
  for (const auto& c : v[1].carriers) v6.push_back(c.netdev);
  EXPECT_EQ(v6, nexthops(oracle6, "fd50::/64"));
  ASSERT_EQ(v[1].carriers.size(), 2U);
  EXPECT_EQ(v[1].carriers[1].how,
            "route to fd50::7 (fd50::/64, next hop 2 of 2: via fd02::1 dev d1)");
}

}  // namespace
}  // namespace gdsb::topo::testing
