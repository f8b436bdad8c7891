// Network mounts (gdsb/topo/network_storage.hpp, issue 25): per mount, whether GDS can engage
// from the evidence the node shows, and which NICs carry it. Mount lines, routes and RDMA
// port states are real recordings (tests/topo/fixtures/real/SOURCES.md, "Network storage");
// the expected verdicts are read off the GDS documents cited in docs/gdsb-topo.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gdsb/topo/network_storage.hpp"
#include "gdsb/topo/render.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

// The HGX recording with host facts, the mounts and its network (hgx_recording.hpp).
Snapshot hgx(const std::vector<std::string>& mounts, bool nvidia_fs = true) {
  return hgx_with_network(mounts, nvidia_fs);
}

// The management port (hgx_recording.hpp) beside the IPoIB network of ib0.
void add_management_nic(Snapshot& s) { add_management_port(s.machine.network); }

NetworkMount only(const std::vector<NetworkMount>& v) {
  if (v.size() != 1) throw std::runtime_error("expected one network mount");
  return v.front();
}

const CheckResult& file_systems(const Outcome& o) {
  const CheckResult* r = o.titled("gds-stack", "file systems");
  if (!r) throw std::runtime_error("no file-system result");
  return *r;
}

// Issue 25's mount: NFS v4.1 over TCP, as /proc/mounts prints it.
const std::string kNfsTcp =
    "10.10.1.5:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
    "namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.10.1.21,"
    "local_lock=none,addr=10.10.1.5 0 0";
const std::string kNfsRdma =
    "10.10.1.5:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
    "namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,clientaddr=10.10.1.21,"
    "local_lock=none,addr=10.10.1.5 0 0";

TEST(TopoNetworkStorage, HgxNfsOverTcpIsNotGdsCapable) {
  const Snapshot s = hgx({kNfsTcp});
  const NetworkMount nm = only(network_mounts(s));
  EXPECT_EQ(nm.kind, "NFS");
  EXPECT_EQ(nm.transport.name, "tcp");
  EXPECT_EQ(nm.servers, std::vector<std::string>{"10.10.1.5"});
  EXPECT_EQ(nm.engage, Engage::No);
  EXPECT_NE(nm.why.find("GDS engages on NFS over RDMA only"), std::string::npos) << nm.why;
  EXPECT_NE(nm.why.find("compat mode"), std::string::npos) << nm.why;
  // It still says which NIC carries it: the route to the server leaves through ib0.
  ASSERT_EQ(nm.carriers.size(), 1U);
  EXPECT_EQ(nm.carriers[0].netdev, "ib0");

  const Outcome o = evaluate_snapshot(hgx({kNfsTcp}));
  const CheckResult& r = file_systems(o);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  ASSERT_EQ(r.evidence.size(), 1U);
  EXPECT_EQ(r.evidence[0].find("/mnt/data nfs4 (10.10.1.5:/datasets): NFS: proto=tcp"), 0U)
      << r.evidence[0];
  EXPECT_FALSE(any_contains(r.evidence, "GDS-capable"));
  // The remount remedy is named, with the mount's own source, target and version.
  EXPECT_EQ(r.remedy.find("remount over RDMA: umount /mnt/data; mount -o proto=rdma,port=20049,"
                          "vers=4.1 10.10.1.5:/datasets /mnt/data"),
            0U)
      << r.remedy;
  // GDS otherwise applies on this node: the platform fails on it, not "not applicable".
  EXPECT_TRUE(o.report.gds_applicable);
  EXPECT_EQ(o.report.verdict, Verdict::Fail);
}

// Issue 25, part 5: the mount's ceiling, in the one path model. ib0 (GPU0's ConnectX-7,
// 1a:00.0, Gen5 x16 = ~63.0 GB/s) at "200 Gb/sec (4X HDR)" (nccl#489's ibstatus rate):
// 200 Gb/s = 25 GB/s binds, node-wide and into GPU0 (PIX); into GPU4 (SYS) the figure is the
// same but the sentence says the socket interconnect is crossed and not bounded here.
TEST(TopoNetworkStorage, MountCeilingIsItsCarriersRateUnderTheirLinks) {
  Snapshot s = hgx({kNfsRdma});
  s.machine.network.rdma_devices[0].ports[0].rate = "200 Gb/sec (4X HDR)";
  s.machine.network.rdma_devices[0].ports[0].rate_gbps = 200;
  const Outcome o = evaluate_snapshot(std::move(s));
  ASSERT_EQ(o.report.mount_ceilings.size(), 1U);
  const auto& mc = o.report.mount_ceilings[0];
  EXPECT_EQ(mc.target, "/mnt/data");
  EXPECT_EQ(mc.kind, "NFS");
  ASSERT_TRUE(mc.node.gb_s) << mc.node.limited_by;
  EXPECT_NEAR(*mc.node.gb_s, 25.0, 0.01);
  EXPECT_EQ(mc.node.peers, std::vector<std::string>{kHgx[0].nic});
  ASSERT_EQ(mc.gpus.size(), 8U);
  EXPECT_EQ(mc.gpus[0].gpu, kHgx[0].gpu);
  ASSERT_TRUE(mc.gpus[0].gb_s);
  EXPECT_NEAR(*mc.gpus[0].gb_s, 25.0, 0.01);
  EXPECT_NE(mc.gpus[4].limited_by.find("socket interconnect"), std::string::npos)
      << mc.gpus[4].limited_by;
  std::ostringstream text;
  TextOptions t;
  render_text(text, o.snapshot, *o.view, o.report, t);
  EXPECT_NE(text.str().find("Reads of /mnt/data (NFS) limited to ~25.0 GB/s by 1 NIC carrying "
                            "it, each into its nearest GPU (0000:1a:00.0) at network rate: "
                            "network 0000:1a:00.0 mlx5_0 port 1 200 Gb/sec (4X HDR) 25.0 GB/s"),
            std::string::npos)
      << text.str();
}

// A TCP mount has the same carriers and ceiling figure (what RDMA would reach), while its
// verdict says GDS cannot engage: the doctor's expected figure after remounting.
TEST(TopoNetworkStorage, TcpMountStillHasItsCarriersCeiling) {
  const Outcome o = evaluate_snapshot(hgx({kNfsTcp}));
  ASSERT_EQ(o.report.mount_ceilings.size(), 1U);
  EXPECT_TRUE(o.report.mount_ceilings[0].node.gb_s) << o.report.mount_ceilings[0].node.limited_by;
}

TEST(TopoNetworkStorage, HgxNfsOverRdmaOnAnActivePortIsCapableAndNamesItsNic) {
  const Snapshot s = hgx({kNfsRdma});
  const NetworkMount nm = only(network_mounts(s));
  EXPECT_EQ(nm.transport.name, "rdma");
  EXPECT_EQ(nm.engage, Engage::Yes) << nm.why;
  ASSERT_EQ(nm.carriers.size(), 1U);
  const MountCarrier& c = nm.carriers[0];
  EXPECT_EQ(c.netdev, "ib0");
  EXPECT_EQ(c.bdf, kHgx[0].nic);
  EXPECT_EQ(c.rdma_dev, "mlx5_0");
  EXPECT_EQ(c.rdma_port, 1);
  EXPECT_EQ(c.how, "route to 10.10.1.5 (10.10.1.0/24 dev ib0)");
  // GPU0's ConnectX-7 sits below GPU0's own PEX890xx switch: PIX to GPU0, NODE to GPUs 1-3
  // (other root complexes of socket 0), SYS to GPUs 4-7; cuFile pairs it with GPU0.
  ASSERT_EQ(c.gpus.size(), 8U);
  EXPECT_EQ(c.gpus[0].path, PathLabel::Pix);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(c.gpus[i].path, PathLabel::Node) << i;
  for (size_t i = 4; i < 8; ++i) EXPECT_EQ(c.gpus[i].path, PathLabel::Sys) << i;
  EXPECT_EQ(c.nearest_gpu, kHgx[0].gpu);

  const Outcome o = evaluate_snapshot(hgx({kNfsRdma}));
  const CheckResult& r = file_systems(o);
  EXPECT_EQ(r.verdict, Verdict::Pass);
  ASSERT_EQ(r.evidence.size(), 1U);
  const std::string& e = r.evidence[0];
  EXPECT_EQ(e.find("/mnt/data nfs4 (10.10.1.5:/datasets): GDS-capable (NFS: proto=rdma,"
                   "port=20049,vers=4.1, nvidia-fs loaded, RDMA port ACTIVE on ib0 (mlx5_0 "
                   "port 1)); carried by ib0 (0000:1a:00.0; mlx5_0 port 1 ACTIVE; route to "
                   "10.10.1.5 (10.10.1.0/24 dev ib0)): GPU0 PIX, GPU1 NODE"),
            0U)
      << e;
  EXPECT_NE(e.find("GPU7 SYS; cuFile pairs it with GPU0 (PIX)"), std::string::npos) << e;
}

TEST(TopoNetworkStorage, RdmaMountOnADownPortOrWithoutNvidiaFsIsNotCapable) {
  Snapshot down = hgx({kNfsRdma});
  down.machine.network.rdma_devices[0].ports[0].state = "DOWN";  // as mlx5_4 in the guide
  const NetworkMount nm = only(network_mounts(down));
  EXPECT_EQ(nm.engage, Engage::No);
  EXPECT_NE(nm.why.find("no NIC that carries it has an ACTIVE RDMA port: ib0 (mlx5_0 port 1 "
                        "DOWN)"),
            std::string::npos)
      << nm.why;
  const Snapshot no_nvfs = hgx({kNfsRdma}, false);
  EXPECT_EQ(only(network_mounts(no_nvfs)).engage, Engage::No);
  EXPECT_EQ(only(network_mounts(no_nvfs)).why,
            "GDS serves nfs4 through nvidia-fs only (not kernel P2PDMA), and nvidia-fs is not "
            "loaded");
}

// NVIDIA's configuration guide, section 6.1: four NFS-over-RDMA mounts of one client, as its
// `mount` prints them. Without the node's network facts nothing decides: Unknown, never Yes.
const std::vector<std::string> kGuideMounts = {
    "192.168.0.10:/mnt/nfs_10/10 /mnt/nfs/ib9/data/0 nfs rw,relatime,vers=3,rsize=1048576,"
    "wsize=1048576,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
    "mountaddr=192.168.0.10,mountvers=3,mountproto=tcp,local_lock=none,addr=192.168.0.10 0 0",
    "192.168.0.11:/mnt/nfs_11/11 /mnt/nfs/ib9/data/1 nfs rw,relatime,vers=3,rsize=1048576,"
    "wsize=1048576,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
    "mountaddr=192.168.0.11,mountvers=3,mountproto=tcp,local_lock=none,addr=192.168.0.11 0 0",
    "192.168.1.10:/mnt/nfs_10/10 /mnt/nfs/ib8/data/0 nfs rw,relatime,vers=3,rsize=1048576,"
    "wsize=1048576,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
    "mountaddr=192.168.1.10,mountvers=3,mountproto=tcp,local_lock=none,addr=192.168.1.10 0 0",
    "192.168.1.11:/mnt/nfs_11/11 /mnt/nfs/ib8/data/1 nfs rw,relatime,vers=3,rsize=1048576,"
    "wsize=1048576,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
    "mountaddr=192.168.1.11,mountvers=3,mountproto=tcp,local_lock=none,addr=192.168.1.11 0 0"};

TEST(TopoNetworkStorage, WithoutNetworkFactsAnRdmaMountIsUnknownWithTheCommandToRun) {
  Snapshot s = hgx(kGuideMounts);
  s.machine.network = {};  // an older snapshot: no interfaces, routes or RDMA ports
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 4U);
  for (const NetworkMount& nm : v) {
    EXPECT_EQ(nm.engage, Engage::Unknown) << nm.mount->target;
    EXPECT_EQ(nm.transport.name, "rdma");
    EXPECT_EQ(nm.what_to_run, "ip route get " + nm.servers.at(0) + "; rdma link (or ibdev2netdev)");
    EXPECT_TRUE(nm.carriers.empty());
    EXPECT_EQ(nm.carriers_note, "this input does not show the node's network interfaces and routes");
  }
  const Outcome o = evaluate_snapshot(std::move(s));
  const CheckResult& r = file_systems(o);
  EXPECT_EQ(r.verdict, Verdict::Waived);  // Unknowns only: no verdict, like an ext4 without journal
  EXPECT_FALSE(any_contains(r.evidence, "GDS-capable"));
  EXPECT_TRUE(any_contains(r.evidence, "(to decide, run: ip route get 192.168.0.10; rdma link"));
}

TEST(TopoNetworkStorage, ReorderingMountsOrAddingAManagementNicChangesNothing) {
  std::vector<std::string> mounts = {kNfsRdma, "store04 /mnt/nobackup gpfs rw,relatime 0 0",
                                     "192.168.12.10@o2ib:192.168.12.11@o2ib:/lustre /lustre "
                                     "lustre rw 0 0"};
  mounts[0].replace(mounts[0].find("/mnt/data"), 9, "/mnt/rdma");
  mounts.push_back(kNfsTcp);
  auto evidence = [](Snapshot s) {
    // EXAScaler's lustre.conf of NVIDIA's troubleshooting guide: LNet names its interfaces.
    s.machine.network.lnet_networks = "o2ib0(ib1,ib2,ib3,ib4,ib6,ib7,ib8,ib9)";
    std::vector<std::string> e = file_systems(evaluate_snapshot(std::move(s))).evidence;
    std::sort(e.begin(), e.end());
    return e;
  };
  const std::vector<std::string> base = evidence(hgx(mounts));
  ASSERT_EQ(base.size(), 4U);
  std::vector<std::string> reversed(mounts.rbegin(), mounts.rend());
  EXPECT_EQ(evidence(hgx(reversed)), base);
  Snapshot with_mgmt = hgx(mounts);
  add_management_nic(with_mgmt);
  EXPECT_EQ(evidence(std::move(with_mgmt)), base);
}

// A mount over RDMA whose server only the management port's default route reaches: the
// mount stands, so another routing table carries it; no verdict, the commands that decide.
TEST(TopoNetworkStorage, RdmaMountRoutedThroughAPortWithoutRdmaIsUnknown) {
  Snapshot s = hgx({kGuideMounts[0]});
  add_management_nic(s);
  const NetworkMount nm = only(network_mounts(s));
  EXPECT_EQ(nm.engage, Engage::Unknown) << nm.why;
  EXPECT_NE(nm.why.find("the main routing table sends its traffic through eno1, which has no "
                        "RDMA device"),
            std::string::npos)
      << nm.why;
  EXPECT_EQ(nm.what_to_run, "ip route get 192.168.0.10; ip rule; rdma link (or ibdev2netdev)");
  ASSERT_EQ(nm.carriers.size(), 1U);
  EXPECT_EQ(nm.carriers[0].how, "route to 192.168.0.10 (0.0.0.0/0 via 7.151.164.131 dev eno1; "
                                "/proc/net/route shows a multipath route's first next hop only)");
}

// The real `ip r s` of a node with eno1 (management) and ib0 (IPoIB): a server inside ib0's
// /21 is also inside eno1's 7.0.0.0/8 and the default route; the longest prefix wins.
TEST(TopoNetworkStorage, LongestPrefixPicksTheCarrierOfALustreNid) {
  Snapshot s = hgx({"7.151.180.10@o2ib:/lustre /lustre lustre rw,flock,lazystatfs 0 0",
                    "7.151.164.20@tcp:/scratch /scratch lustre rw,flock,lazystatfs 0 0"});
  s.machine.network.routes.clear();
  add_management_nic(s);
  s.machine.network.interfaces[1].addresses = {"7.151.181.31/21"};  // ib0
  s.machine.network.routes.push_back({"7.151.176.0/21", "", "ib0", 150});
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 2U);
  EXPECT_EQ(v[0].kind, "Lustre");
  EXPECT_EQ(v[0].transport.name, "o2ib");
  EXPECT_EQ(v[0].engage, Engage::Yes) << v[0].why;
  ASSERT_EQ(v[0].carriers.size(), 1U);
  EXPECT_EQ(v[0].carriers[0].netdev, "ib0");
  EXPECT_EQ(v[0].carriers[0].how, "route to 7.151.180.10 (7.151.176.0/21 dev ib0)");
  // LNet over TCP (ksocklnd) cannot RDMA: not capable, carried by the management port.
  EXPECT_EQ(v[1].transport.name, "tcp");
  EXPECT_EQ(v[1].engage, Engage::No);
  ASSERT_EQ(v[1].carriers.size(), 1U);
  EXPECT_EQ(v[1].carriers[0].netdev, "eno1");
  EXPECT_TRUE(v[1].carriers[0].rdma_dev.empty());
}

// EXAScaler's lustre.conf in NVIDIA's troubleshooting guide (section 8) names the LNet
// interfaces itself; the carriers are those, not a route.
TEST(TopoNetworkStorage, LustreCarriersComeFromLnetNetworks) {
  Snapshot s = hgx({"192.168.12.10@o2ib:192.168.12.11@o2ib:/lustre /lustre lustre rw 0 0"});
  s.machine.network.lnet_networks = "o2ib0(ib1,ib2,ib3,ib4,ib6,ib7,ib8,ib9)";
  const NetworkMount nm = only(network_mounts(s));
  EXPECT_EQ(nm.servers, (std::vector<std::string>{"192.168.12.10@o2ib", "192.168.12.11@o2ib"}));
  std::vector<std::string> names;
  for (const auto& c : nm.carriers) names.push_back(c.netdev);
  // ib8 and ib9 are not on this board: carriers without a PCI function or RDMA port.
  EXPECT_EQ(names, (std::vector<std::string>{"ib1", "ib2", "ib3", "ib4", "ib6", "ib7", "ib8",
                                             "ib9"}));
  EXPECT_EQ(nm.engage, Engage::Yes);  // ib1..ib3, ib6, ib7 are ACTIVE
  EXPECT_NE(nm.carriers[3].how.find("lnet o2ib0(ib4)"), std::string::npos);
  EXPECT_EQ(nm.carriers[3].rdma_state, "DOWN");
  EXPECT_TRUE(nm.carriers[6].bdf.empty());
}

// File systems whose client picks RDMA or TCP out of sight of /proc/mounts: Unknown with the
// command that decides, No where the node has no RDMA device at all.
TEST(TopoNetworkStorage, WekaGpfsBeegfsNeedTheirOwnTools) {
  const std::vector<std::string> mounts = {
      "172.16.8.1/fs01 /mnt/weka wekafs rw,relatime,num_cores=2,net=ib0,net=ib1 0 0",
      "store04 /mnt/nobackup gpfs rw,relatime 0 0",
      "beegfs_nodev /fast beegfs rw,relatime,cfgFile=/etc/beegfs/beegfs-client.conf 0 0"};
  const auto v = network_mounts(hgx(mounts));
  ASSERT_EQ(v.size(), 3U);
  EXPECT_EQ(v[0].kind, "WekaFS");
  EXPECT_EQ(v[1].kind, "IBM Storage Scale");
  EXPECT_EQ(v[2].kind, "BeeGFS");
  for (const auto& nm : v) EXPECT_EQ(nm.engage, Engage::Unknown) << nm.kind;
  EXPECT_NE(v[1].what_to_run.find("mmlsconfig verbsRdma"), std::string::npos);
  EXPECT_NE(v[2].what_to_run.find("beegfs-net"), std::string::npos);
  EXPECT_EQ(v[0].servers, std::vector<std::string>{"172.16.8.1"});
  ASSERT_EQ(v[0].carriers.size(), 2U);  // net=ib0, net=ib1
  EXPECT_EQ(v[0].carriers[1].rdma_dev, "mlx5_1");

  Snapshot no_rdma = hgx(mounts);
  no_rdma.machine.network.rdma_devices.clear();
  for (const auto& nm : network_mounts(no_rdma)) {
    EXPECT_EQ(nm.engage, Engage::No) << nm.kind;
    EXPECT_NE(nm.why.find("no RDMA device"), std::string::npos) << nm.why;
  }
}

// cuFile's own choice of NICs for user-space RDMA file systems: rdma_dev_addr_list.
TEST(TopoNetworkStorage, CufileRdmaDevAddrListNamesCarriers) {
  Snapshot s = hgx({"store04 /mnt/nobackup gpfs rw,relatime 0 0"});
  s.machine.network.interfaces[2].addresses = {"10.10.3.21/24"};
  s.machine.cufile.rdma_dev_addr_list = std::vector<std::string>{"10.10.1.21", "10.10.3.21"};
  const NetworkMount nm = only(network_mounts(s));
  ASSERT_EQ(nm.carriers.size(), 2U);
  EXPECT_EQ(nm.carriers[0].netdev, "ib0");
  EXPECT_EQ(nm.carriers[0].how, "cufile.json rdma_dev_addr_list 10.10.1.21");
  EXPECT_EQ(nm.carriers[1].netdev, "ib2");
  EXPECT_EQ(nm.carriers[1].nearest_gpu, kHgx[2].gpu);
  // A per-file-system list wins over the global one.
  s.machine.cufile.fs_rdma_dev_addr_list["gpfs"] = {"mlx5_3"};
  const NetworkMount per_fs = only(network_mounts(s));
  ASSERT_EQ(per_fs.carriers.size(), 1U);
  EXPECT_EQ(per_fs.carriers[0].netdev, "ib3");
  EXPECT_EQ(per_fs.carriers[0].how, "cufile.json fs.gpfs.rdma_dev_addr_list mlx5_3");
}

// The `fs` section as the GDS package ships /etc/cufile.json (read off the project's H100 VM,
// libcufile-13-0): per file system a commented rdma_dev_addr_list and mount_table. Here the
// lustre ones are uncommented with the shipped example addresses, as an administrator would.
constexpr const char* kCufileJson = R"({
    "properties": {
        // the shipped default
        "rdma_dev_addr_list": [ ],
        "allow_compat_mode": true
    },
    "fs": {
        "generic": { "posix_unaligned_writes" : false },
        "lustre": {
            "posix_gds_min_kb" : 0,
            // if using multiple lustre mounts, provide ip addresses used by respective mount here
            "mount_table" : {
                "/lustre/ai200_01/client" : { "rdma_dev_addr_list" : ["172.172.1.40", "172.172.1.42"] },
                "/lustre/ai200_02/client" : { "rdma_dev_addr_list" : ["172.172.2.40", "172.172.2.42"] }
            }
        },
        "nfs": {
            //"rdma_dev_addr_list" : []
        },
        "gpfs": { "gds_write_support": false, "rdma_dev_addr_list": ["mlx5_3"] }
    }
})";

TEST(TopoNetworkStorage, CufileListsAreReadAndKeptInSnapshots) {
  fixture::TempDir dir, snap;
  std::ofstream(dir.path() / "cufile.json") << kCufileJson;
  const CufileSettings c = read_cufile_json(dir.path() / "cufile.json");
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_TRUE(c.rdma_dev_addr_list.has_value());  // present, empty: not the same as absent
  EXPECT_TRUE(c.rdma_dev_addr_list->empty());
  EXPECT_EQ(c.fs_rdma_dev_addr_list.size(), 1U);  // nfs's list is commented out
  EXPECT_EQ(c.fs_rdma_dev_addr_list.at("gpfs"), std::vector<std::string>{"mlx5_3"});
  EXPECT_EQ(c.mount_rdma_dev_addr_list.at("/lustre/ai200_02/client"),
            (std::vector<std::string>{"172.172.2.40", "172.172.2.42"}));

  // The mount_table entry of a mount names its carriers; another Lustre mount has none.
  Snapshot s = hgx({"192.168.12.10@o2ib:/ai200 /lustre/ai200_02/client lustre rw 0 0",
                    "192.168.12.10@o2ib:/other /lustre/other lustre rw 0 0"});
  s.machine.cufile = c;
  s.machine.network.interfaces[6].addresses = {"172.172.2.40/24"};
  s.machine.network.interfaces[7].addresses = {"172.172.2.42/24"};
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 2U);
  ASSERT_EQ(v[0].carriers.size(), 2U);
  EXPECT_EQ(v[0].carriers[0].netdev, "ib6");
  EXPECT_EQ(v[0].carriers[1].how,
            "cufile.json fs.lustre.mount_table[/lustre/ai200_02/client].rdma_dev_addr_list "
            "172.172.2.42");
  EXPECT_TRUE(v[1].carriers.empty());

  save_snapshot(s, snap.path());
  const Snapshot back = load_snapshot(snap.path());
  EXPECT_EQ(back.machine.cufile.rdma_dev_addr_list, c.rdma_dev_addr_list);
  EXPECT_EQ(back.machine.cufile.fs_rdma_dev_addr_list, c.fs_rdma_dev_addr_list);
  EXPECT_EQ(back.machine.cufile.mount_rdma_dev_addr_list, c.mount_rdma_dev_addr_list);
}

// A snapshot written before these keys were kept still reads: the lists are absent.
TEST(TopoNetworkStorage, OlderSnapshotsReadWithoutCufileLists) {
  const Snapshot s = load_snapshot(fs::path(GDSB_TOPO_REAL_FIXTURES) / "h100-vm" / "snapshot");
  EXPECT_TRUE(s.machine.cufile.found);
  EXPECT_FALSE(s.machine.cufile.rdma_dev_addr_list.has_value());
  EXPECT_TRUE(s.machine.cufile.fs_rdma_dev_addr_list.empty());
  EXPECT_TRUE(network_mounts(s).empty());  // its only data mount is ext4 on virtio-blk
}

// Bonds: a RoCE LAG bond is one RDMA port (`ibdev2netdev`: mlx5_bond_0 port 1 ==> bond0 (Up),
// bond0 over eth01 and eth02, ethtool bus-info 0000:3b:00.0, in a public RoCE setup note); a
// bond without an RDMA device of its own stands for the ports under it. Laid on the HGX
// board: mlx5_bond_0 on GPU1's ConnectX-7 (3c:00.0).
TEST(TopoNetworkStorage, BondsCarryAsTheirRdmaPortOrThroughTheirPorts) {
  Snapshot s = hgx({kNfsRdma});
  NetworkFacts& n = s.machine.network;
  n.routes = {{"10.10.1.0/24", "", "bond0", 0}};
  NetInterface bond;
  bond.name = "bond0";
  bond.operstate = "up";
  bond.type = 1;
  bond.addresses = {"10.10.1.21/24"};
  bond.lower = {"eth01", "eth02"};
  n.interfaces.push_back(bond);
  RdmaDevice lag;
  lag.name = "mlx5_bond_0";
  lag.bdf = kHgx[1].nic;
  lag.ports.push_back({1, "Ethernet", "ACTIVE", "LinkUp", "", std::nullopt, "bond0"});
  n.rdma_devices.push_back(lag);
  const NetworkMount roce = only(network_mounts(s));
  ASSERT_EQ(roce.carriers.size(), 1U);
  EXPECT_EQ(roce.carriers[0].netdev, "bond0");
  EXPECT_EQ(roce.carriers[0].rdma_dev, "mlx5_bond_0");
  EXPECT_EQ(roce.carriers[0].bdf, kHgx[1].nic);
  EXPECT_EQ(roce.carriers[0].nearest_gpu, kHgx[1].gpu);
  EXPECT_EQ(roce.engage, Engage::Yes);

  // The same bond over ib0 and ib1 without a LAG RDMA device: its two ports carry it.
  n.rdma_devices.pop_back();
  n.interfaces.back().lower = {"ib0", "ib1"};
  const NetworkMount ipoib = only(network_mounts(s));
  ASSERT_EQ(ipoib.carriers.size(), 2U);
  EXPECT_EQ(ipoib.carriers[1].netdev, "ib1");
  EXPECT_EQ(ipoib.carriers[1].how, "route to 10.10.1.5 (10.10.1.0/24 dev bond0) via bond0");
}

// VAST's NFS client: remoteports= spreads over a VIP range, localports= binds local ports.
TEST(TopoNetworkStorage, VastMultipathServersAndLocalPorts) {
  Snapshot s = hgx({"172.25.1.1:/ /mnt/vast nfs rw,vers=3,proto=rdma,port=20049,nconnect=16,"
                    "spread_reads,spread_writes,remoteports=172.25.1.1-172.25.1.32,"
                    "localports=ib0~ib1 0 0"});
  const NetworkMount nm = only(network_mounts(s));
  ASSERT_EQ(nm.servers.size(), 32U);
  EXPECT_EQ(nm.servers.back(), "172.25.1.32");
  ASSERT_EQ(nm.carriers.size(), 2U);
  EXPECT_EQ(nm.carriers[0].how, "localports=ib0");
  EXPECT_EQ(nm.carriers[1].netdev, "ib1");
  EXPECT_EQ(nm.engage, Engage::Yes);
  EXPECT_NE(nm.why.find("nconnect=16"), std::string::npos) << nm.why;
}

// NVMe-oF: the controller's transport decides; a file system on an NVMe/TCP namespace is
// not GDS-capable, on an NVMe/RDMA one it is where the port is ACTIVE.
TEST(TopoNetworkStorage, NvmeOfTransportDecides) {
  Snapshot s = hgx({"/dev/nvme11n1 /mnt/nvmf xfs rw,relatime 0 0",
                    "/dev/nvme20n1 /mnt/nvmtcp xfs rw,relatime 0 0"});
  NetworkFacts& n = s.machine.network;
  n.nvme_known = true;
  n.nvme_controllers.push_back(
      {"nvme11", "rdma", "traddr=10.10.1.75,trsvcid=4420", "nqn.2020-12.com.smartx:system:sub1",
       "", {"nvme11n1"}});
  n.nvme_controllers.push_back({"nvme20", "tcp",
                                "traddr=10.10.100.11,trsvcid=1152,src_addr=10.10.1.21", "", "",
                                {"nvme20n1"}});
  const auto v = network_mounts(s);
  ASSERT_EQ(v.size(), 2U);
  EXPECT_EQ(v[0].kind, "NVMe-oF");
  EXPECT_EQ(v[0].engage, Engage::Yes) << v[0].why;
  EXPECT_EQ(v[0].carriers.at(0).netdev, "ib0");
  EXPECT_EQ(v[1].engage, Engage::No);
  EXPECT_NE(v[1].why.find("NVMe/TCP"), std::string::npos) << v[1].why;
  EXPECT_EQ(v[1].carriers.at(0).how, "src_addr=10.10.1.21");
  const Outcome o = evaluate_snapshot(std::move(s));
  const CheckResult& r = file_systems(o);
  EXPECT_TRUE(any_contains(r.evidence, "/mnt/nvmtcp xfs (/dev/nvme20n1): NVMe-oF: NVMe/TCP"));
  EXPECT_TRUE(any_contains(r.evidence, "/mnt/nvmf xfs (/dev/nvme11n1): GDS-capable (NVMe-oF:"));
}

// Network file systems no GDS document lists are data mounts with the reason: a cifs mount
// and a CephFS mount as /proc/mounts showed them in public reports, 3FS's FUSE client as
// open3fs's m3fs README shows it.
TEST(TopoNetworkStorage, UnlistedNetworkFileSystemsAreReportedWithWhy) {
  const std::vector<std::string> mounts = {
      "//RDS/RepositorioSAP /usr/sap/SAPBusinessOne/B1_SHF/Attachments cifs rw,relatime,"
      "vers=3.1.1,cache=strict,upcall_target=app,username=RepositorioSAP,"
      "domain=montedamina.privatcloud.biz,uid=463,noforceuid,gid=462,noforcegid,"
      "addr=10.2.93.165,file_mode=0775,dir_mode=0775,soft,nounix,serverino 0 0",
      "admin@REDACTED.caskd=/ REDACTED ceph rw,relatime,name=admin,secret=<hidden>,"
      "ms_mode=secure,acl,mon_addr=REDACTED:3300/REDACTED:3300,recover_session=clean 0 0",
      "hf3fs.open3fs /mnt/3fs fuse.hf3fs rw,nosuid,nodev,relatime,user_id=0,group_id=0,"
      "default_permissions,allow_other,max_read=1048576 0 0"};
  const auto o = evaluate_snapshot(hgx(mounts));
  const CheckResult& r = file_systems(o);
  ASSERT_EQ(r.evidence.size(), 3U);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  for (const auto& e : r.evidence)
    EXPECT_NE(e.find("is a network file system no GDS document lists"), std::string::npos) << e;
  const auto v = network_mounts(o.snapshot);
  ASSERT_EQ(v.size(), 3U);
  EXPECT_EQ(v[0].servers, std::vector<std::string>{"10.2.93.165"});  // cifs addr=
  EXPECT_EQ(v[0].carriers_note, "no route or local address in this input reaches 10.2.93.165");
  EXPECT_EQ(v[2].kind, "fuse.hf3fs");
}

}  // namespace
}  // namespace gdsb::topo::testing
