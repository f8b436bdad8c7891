// Invariants of the one transport decision (issue 34 acceptance): the TCP twin of every RDMA
// mount recording of the fixtures fails no platform check; renaming a NIC or adding a gigabit
// management NIC changes no verdict. The relations are the invariants themselves, never a copy
// of an earlier output. The recordings: issue 25's NFS v4.1 line, the GDS configuration guide's
// four NFSv3 mounts, prometheus/procfs's "NFS xprt over rdma proto", EXAScaler's o2ib NIDs, an
// NVMe-over-RDMA namespace (fixtures/real/SOURCES.md, "Network storage").
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gdsb/topo/network_storage.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

struct Recording {
  std::string name;
  std::vector<std::string> mounts;
  std::string nvme_transport;  // "rdma": the mount stands on an NVMe-oF namespace
};

std::vector<Recording> rdma_recordings() {
  return {
      {"issue 25 NFS v4.1",
       {"10.10.1.5:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
        "namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,clientaddr=10.10.1.21,"
        "local_lock=none,addr=10.10.1.5 0 0"},
       ""},
      {"configuration guide 6.1",
       {"192.168.0.10:/mnt/nfs_10/10 /mnt/nfs/ib9/data/0 nfs rw,relatime,vers=3,rsize=1048576,"
        "wsize=1048576,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
        "mountaddr=192.168.0.10,mountvers=3,mountproto=tcp,local_lock=none,addr=192.168.0.10 0 0",
        "192.168.1.11:/mnt/nfs_11/11 /mnt/nfs/ib8/data/1 nfs rw,relatime,vers=3,rsize=1048576,"
        "wsize=1048576,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
        "mountaddr=192.168.1.11,mountvers=3,mountproto=tcp,local_lock=none,addr=192.168.1.11 0 0"},
       ""},
      {"prometheus/procfs mountstats",
       {"<nfsserver>:<nfsmount> <mountpoint> nfs ro,vers=3,rsize=1048576,wsize=1048576,"
        "namlen=255,acregmin=120,acregmax=120,acdirmin=120,acdirmax=120,hard,nocto,forcerdirplus,"
        "proto=rdma,nconnect=16,port=20049,timeo=600,retrans=2,sec=sys,mountaddr=172.16.40.20,"
        "mountvers=3,mountport=0,mountproto=tcp,local_lock=none 0 0"},
       ""},
      {"EXAScaler o2ib NIDs", {"192.168.12.10@o2ib:192.168.12.11@o2ib:/lustre /lustre lustre rw 0 0"}, ""},
      {"NVMe over RDMA namespace", {"/dev/nvme11n1 /mnt/nvmf xfs rw,relatime 0 0"}, "rdma"},
  };
}

// The same mount over TCP: NFS's netid, LNet's type, the NVMe-oF controller's transport.
std::string tcp_twin(std::string line) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"proto=rdma,", "proto=tcp,"}, {"port=20049,", ""}, {"@o2ib", "@tcp"}})
    for (size_t at; (at = line.find(from)) != std::string::npos;) line.replace(at, from.size(), to);
  return line;
}

void add_nvme(Snapshot& s, const std::string& transport) {
  if (transport.empty()) return;
  NetworkFacts& n = s.machine.network;
  n.nvme_known = true;
  n.nvme_controllers.push_back({"nvme11", transport, "traddr=10.10.1.75,trsvcid=4420",
                                "nqn.2020-12.com.smartx:system:sub1", "", {"nvme11n1"}});
}

TEST(TopoInvariantsTransport, TcpTwinOfEveryRdmaMountRecordingFailsNoPlatformCheck) {
  for (const Recording& r : rdma_recordings()) {
    SCOPED_TRACE(r.name);
    std::vector<std::string> twin;
    for (const auto& l : r.mounts) twin.push_back(tcp_twin(l));
    if (r.nvme_transport.empty()) {  // NVMe-oF: the controller differs, not the line
      ASSERT_NE(twin, r.mounts);
    }
    // The twin on an Ethernet node (no RDMA device; neither nvidia-peermem nor DMA-BUF).
    Snapshot eth = hgx_ethernet_node(twin);
    add_nvme(eth, r.nvme_transport.empty() ? "" : "tcp");
    for (const NetworkMount& nm : network_mounts(eth))
      EXPECT_EQ(nm.transport.kind, TransportKind::Socket) << nm.mount->target;
    const Outcome o = evaluate_snapshot(std::move(eth));
    EXPECT_EQ(failed_checks(o), "");
    EXPECT_NE(o.report.verdict, Verdict::Fail);

    // On the RDMA node (the HGX network, kernel 4.15 without nvidia-peermem: an RDMA mount
    // there fails the registration), the twin gets no RDMA verdict at all; the RDMA original
    // does (so the invariant is not vacuous).
    auto rdma_node = [&](const std::vector<std::string>& mounts, const std::string& transport) {
      Snapshot s = hgx_with_network(mounts);
      s.machine.kernel_release = "4.15.0-46-generic";
      add_nvme(s, transport);
      return evaluate_snapshot(std::move(s));
    };
    const Outcome twin_o = rdma_node(twin, r.nvme_transport.empty() ? "" : "tcp");
    EXPECT_NE(twin_o.worst("rdma-stack"), Verdict::Fail) << failed_checks(twin_o);
    const Outcome orig = rdma_node(r.mounts, r.nvme_transport);
    EXPECT_EQ(orig.worst("rdma-stack"), Verdict::Fail) << "the RDMA original";
  }
}

// Every verdict of a node: each check result's, each network mount's engagement and transport.
std::vector<std::string> verdicts(const Snapshot& s) {
  std::vector<std::string> out;
  for (const NetworkMount& nm : network_mounts(s))
    out.push_back(nm.mount->target + " " + std::string(engage_name(nm.engage)) + " " +
                  std::string(transport_kind_name(nm.transport.kind)));
  const Outcome o = evaluate_snapshot(Snapshot(s));
  for (const auto& c : o.report.checks)
    out.push_back(c.id + " / " + c.title + ": " + std::string(verdict_name(c.verdict)));
  out.push_back("report: " + std::string(verdict_name(o.report.verdict)));
  return out;
}

// `from` renamed `to` in every fact that names a net device.
void rename_nic(Snapshot& s, const std::string& from, const std::string& to) {
  NetworkFacts& n = s.machine.network;
  for (NetInterface& i : n.interfaces) {
    if (i.name == from) i.name = to;
    if (i.parent == from) i.parent = to;
    for (auto& l : i.lower)
      if (l == from) l = to;
  }
  for (RdmaDevice& d : n.rdma_devices)
    for (RdmaPort& p : d.ports)
      if (p.netdev == from) p.netdev = to;
  for (Route& r : n.routes)
    if (r.dev == from) r.dev = to;
  for (size_t at; (at = n.lnet_networks.find(from + ",")) != std::string::npos ||
                  (at = n.lnet_networks.find(from + ")")) != std::string::npos;)
    n.lnet_networks.replace(at, from.size(), to);
}

// A gigabit management port on the board's BCM5720 (01:00.0) with its own subnet and the
// default route, as the "Kernel Routing Tables" notes' node has it.
void add_management_nic(Snapshot& s, const std::string& name) {
  NetworkFacts& n = s.machine.network;
  NetInterface m;
  m.name = name;
  m.bdf = "0000:01:00.0";
  m.operstate = "up";
  m.speed_mbps = 1000;
  m.type = 1;
  m.addresses = {"172.30.0.17/24"};
  n.interfaces.push_back(m);
  n.routes.push_back({"0.0.0.0/0", "172.30.0.1", name, 100});
  n.routes.push_back({"172.30.0.0/24", "", name, 100});
}

TEST(TopoInvariantsTransport, RenamingANicOrAddingAManagementNicChangesNoVerdict) {
  const std::string lustre_tcp = "192.168.0.7@tcp:/scratch /scratch lustre rw,flock,lazystatfs 0 0";
  std::vector<std::pair<std::string, std::function<Snapshot()>>> nodes;
  for (const Recording& r : rdma_recordings()) {
    nodes.emplace_back(r.name + " over RDMA", [r] {
      Snapshot s = hgx_with_network(r.mounts);
      s.machine.network.lnet_networks = "o2ib0(ib0,ib1)";
      add_nvme(s, r.nvme_transport);
      return s;
    });
    nodes.emplace_back(r.name + " twin on Ethernet", [r] {
      std::vector<std::string> twin;
      for (const auto& l : r.mounts) twin.push_back(tcp_twin(l));
      Snapshot s = hgx_ethernet_node(twin);
      add_nvme(s, r.nvme_transport.empty() ? "" : "tcp");
      return s;
    });
  }
  nodes.emplace_back("Lustre over TCP on Ethernet", [&] { return hgx_ethernet_node({lustre_tcp}); });
  for (const auto& [name, make] : nodes) {
    SCOPED_TRACE(name);
    const std::vector<std::string> base = verdicts(make());
    const std::string nic = make().machine.network.interfaces.front().name;  // ib0 or eno1
    Snapshot renamed = make();
    rename_nic(renamed, nic, "enp26s0np0");
    EXPECT_EQ(verdicts(renamed), base) << "renamed " << nic;
    Snapshot managed = make();
    add_management_nic(managed, "eno8303");
    EXPECT_EQ(verdicts(managed), base) << "management NIC added";
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
