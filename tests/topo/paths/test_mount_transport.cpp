// A network mount's transport, decided once (gdsb/topo/mount_transport.hpp, issue 34 items 1
// and 2), and every verdict that rests on it. Mount lines are real recordings or the issue's
// own (tests/topo/fixtures/real/SOURCES.md, "Network storage" and "Transport"); the expected
// verdicts are read off the documents docs/gdsb-topo.md cites, not off the tool's output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gdsb/topo/network_storage.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

// Issue 34's mount: Lustre over LNet TCP, as /proc/mounts prints a Lustre client's line.
const std::string kLustreTcp = "192.168.0.7@tcp:/scratch /scratch lustre rw,flock,lazystatfs 0 0";
// WekaFS (GDS troubleshooting guide 10.3's source), IBM Storage Scale (ansible issue 24644),
// BeeGFS (a cluster's df, with the client's cfgFile=): their clients pick the transport.
const std::vector<std::string> kChosenByClient = {
    "172.16.8.1/fs01 /mnt/weka wekafs rw,relatime,num_cores=2 0 0",
    "store04 /mnt/nobackup gpfs rw,relatime 0 0",
    "beegfs_nodev /fast beegfs rw,relatime,cfgFile=/etc/beegfs/beegfs-client.conf 0 0"};

// Item 1: a node without RDMA reads its network storage over TCP. That is no RDMA verdict:
// the rdma-stack results are facts, the file-system result says GDS reaches no network
// storage here, and the platform does not fail (gdsb-topo's exit 0).
TEST(TopoMountTransport, EthernetNodeWithTcpStorageFailsNoPlatformCheck) {
  std::vector<std::vector<std::string>> cases = {{kLustreTcp}};
  for (const auto& m : kChosenByClient) cases.push_back({m});
  cases.push_back(kChosenByClient);
  cases.back().push_back(kLustreTcp);
  for (const auto& mounts : cases) {
    SCOPED_TRACE(mounts.front() + (mounts.size() > 1 ? " and the others" : ""));
    const Snapshot s = hgx_ethernet_node(mounts);
    for (const NetworkMount& nm : network_mounts(s)) {
      EXPECT_EQ(nm.transport.kind, TransportKind::Socket) << nm.mount->target;
      EXPECT_EQ(nm.engage, Engage::No) << nm.why;
      EXPECT_TRUE(nm.node_without_rdma);
    }
    const Outcome o = evaluate_snapshot(hgx_ethernet_node(mounts));
    EXPECT_NE(o.report.verdict, Verdict::Fail) << failed_checks(o);
    EXPECT_EQ(failed_checks(o), "");
    const CheckResult* reg = o.titled("rdma-stack", "registration");
    const CheckResult* ports = o.titled("rdma-stack", "RDMA ports");
    ASSERT_TRUE(reg && ports);
    EXPECT_EQ(reg->verdict, Verdict::Waived);
    EXPECT_NE(reg->reason.find("no mount here reads its data over RDMA"), std::string::npos)
        << reg->reason;
    EXPECT_EQ(ports->verdict, Verdict::Waived);
    EXPECT_EQ(ports->reason, "no RDMA device on this node");
    const CheckResult* fsr = o.titled("gds-stack", "file systems");
    ASSERT_TRUE(fsr);
    EXPECT_EQ(fsr->verdict, Verdict::Waived);
    EXPECT_NE(fsr->reason.find("over TCP and the node has no RDMA device"), std::string::npos)
        << fsr->reason;
  }
}

// The same Lustre line names its transport: "LNet over TCP", never an RDMA port.
TEST(TopoMountTransport, LustreTcpNidsAreTcpWhateverTheNode) {
  const Snapshot s = hgx_with_network({kLustreTcp});  // eight ConnectX-7 IB ports
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].transport.kind, TransportKind::Socket);
  EXPECT_EQ(v[0].transport.name, "tcp");
  EXPECT_EQ(v[0].transport.evidence, "LNet NIDs 192.168.0.7@tcp");
  EXPECT_FALSE(v[0].node_without_rdma);
  const Outcome o = evaluate_snapshot(hgx_with_network({kLustreTcp}));
  for (const auto* r : o.results("rdma-stack"))
    EXPECT_EQ(r->consequence.find("/scratch"), std::string::npos) << r->title;
}

// Item 2: nfs(5)'s netids over IPv6 are tcp6, udp6 and rdma6 (RFC 5665; nfs-utils commit
// a77ca5c6 taught mount.nfs "rdma" and "rdma6"). Issue 25's v4.1 mount with its addresses moved
// to IPv6 (fd00::5 the server, fd00::21/64 on ib0), as the kernel prints an IPv6 source.
std::string nfs_v6(const std::string& proto) {
  return "[fd00::5]:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
         "namlen=255,hard,proto=" +
         proto + (proto.rfind("rdma", 0) == 0 ? ",port=20049" : "") +
         ",timeo=600,retrans=2,sec=sys,clientaddr=fd00::21,local_lock=none,addr=fd00::5 0 0";
}

Snapshot v6_node(const std::string& proto) {
  Snapshot s = hgx_with_network({nfs_v6(proto)});
  s.machine.network.interfaces[0].addresses.push_back("fd00::21/64");
  s.machine.network.routes.push_back({"fd00::/64", "", "ib0", 256});
  return s;
}

TEST(TopoMountTransport, NfsOverRdmaOnIpv6IsRdma) {
  const auto v = network_mounts(v6_node("rdma6"));
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].transport.kind, TransportKind::Rdma);
  EXPECT_EQ(v[0].transport.name, "rdma6");
  EXPECT_EQ(v[0].servers, std::vector<std::string>{"fd00::5"});
  // ib0 (mlx5_0 port 1 ACTIVE) carries it, nvidia-fs is loaded: GDS engages.
  EXPECT_EQ(v[0].engage, Engage::Yes) << v[0].why;
  ASSERT_EQ(v[0].carriers.size(), 1U);
  EXPECT_EQ(v[0].carriers[0].netdev, "ib0");
  EXPECT_TRUE(v[0].remedy.empty());

  // The rdma-stack check counts it as reading over RDMA: without nvidia-peermem or DMA-BUF
  // (nv_peer_memory #46's kernel 4.15), the registration fails naming it.
  Snapshot s = v6_node("rdma6");
  s.machine.kernel_release = "4.15.0-46-generic";
  const Outcome o = evaluate_snapshot(std::move(s));
  const CheckResult* reg = o.titled("rdma-stack", "registration");
  ASSERT_TRUE(reg);
  EXPECT_EQ(reg->verdict, Verdict::Fail);
  EXPECT_NE(reg->consequence.find("/mnt/data nfs4 ([fd00::5]:/datasets)"), std::string::npos)
      << reg->consequence;
  const CheckResult* fsr = o.titled("gds-stack", "file systems");
  ASSERT_TRUE(fsr);
  EXPECT_EQ(fsr->verdict, Verdict::Pass);
  EXPECT_TRUE(any_contains(fsr->evidence, "GDS-capable (NFS: proto=rdma6,port=20049,vers=4.1"));
}

// Its TCP twin over IPv6 is TCP, and the remount keeps the IPv6 netid.
TEST(TopoMountTransport, NfsOverTcp6IsTcpAndTheRemedyKeepsIpv6) {
  const auto v = network_mounts(v6_node("tcp6"));
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].transport.kind, TransportKind::Socket);
  EXPECT_EQ(v[0].engage, Engage::No);
  EXPECT_NE(v[0].remedy.find("mount -o proto=rdma6,port=20049,vers=4.1 [fd00::5]:/datasets"),
            std::string::npos)
      << v[0].remedy;
}

// Lustre NIDs on two LNet networks: the client uses the one its own LNet configures
// (/sys/module/lnet/parameters/networks); without that file the transport is not known.
TEST(TopoMountTransport, LustreOnTwoNetworksTakesTheNodesLnet) {
  const std::string two = "192.168.12.10@o2ib:192.168.0.7@tcp:/lustre /lustre lustre rw 0 0";
  Snapshot s = hgx_with_network({two});
  EXPECT_EQ(network_mounts(s)[0].transport.kind, TransportKind::Unknown);
  s.machine.network.lnet_networks = "tcp0(ib0)";
  EXPECT_EQ(network_mounts(s)[0].transport.kind, TransportKind::Socket);
  s.machine.network.lnet_networks = "o2ib0(ib1,ib2,ib3,ib4,ib6,ib7,ib8,ib9)";
  EXPECT_EQ(network_mounts(s)[0].transport.kind, TransportKind::Rdma);
  EXPECT_EQ(network_mounts(s)[0].transport.name, "o2ib");
}

// WEKA's UDP mode (WEKA "Mount filesystems": net=udp mounts without DPDK or RDMA) on a node
// with RDMA NICs: a socket transport, no RDMA verdict rests on it.
TEST(TopoMountTransport, WekaUdpModeIsASocketTransport) {
  const std::string weka = "172.16.8.1/fs01 /mnt/weka wekafs rw,relatime,num_cores=2,net=udp 0 0";
  const auto v = network_mounts(hgx_with_network({weka}));
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].transport.kind, TransportKind::Socket);
  EXPECT_EQ(v[0].transport.evidence, "net=udp (WEKA's UDP mode)");
  EXPECT_EQ(v[0].engage, Engage::No);
  EXPECT_TRUE(v[0].carriers.empty());  // udp names a mode, not a NIC
}

// Principle 17: the transport is read in one function. No source of the tools outside
// topology/src/paths/mount_transport.cpp names a netid, an LNet type or reads proto= (comments aside).
TEST(TopoMountTransport, TheTransportIsReadInOneFunction) {
  const fs::path root = fs::path(GDSB_TOPO_REAL_FIXTURES).parent_path().parent_path().parent_path()
                            .parent_path();
  const std::regex decision(R"re("(rdma6?|tcp6?|udp6?|o2ib|proto)")re");
  std::vector<std::string> found;
  int files = 0;
  for (const char* dir : {"topology", "doctor", "cluster", "apps", "libgdsbench", "reports"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      ++files;
      std::ifstream in(e.path());
      int no = 0;
      for (std::string line; std::getline(in, line);) {
        ++no;
        const auto first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
        if (const auto trailing = line.find("  //"); trailing != std::string::npos)
          line.resize(trailing);  // a trailing comment
        if (std::regex_search(line, decision))
          found.push_back(fs::relative(e.path(), root).string() + ":" + std::to_string(no));
      }
    }
  }
  EXPECT_GT(files, 50);
  for (const auto& f : found)
    EXPECT_EQ(f.rfind("topology/src/paths/mount_transport.cpp:", 0), 0U) << f;
}

}  // namespace
}  // namespace gdsb::topo::testing
