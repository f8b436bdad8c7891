// The doctor on network storage (issue 25): "stuck at 12 GB/s" on a network mount, named
// with its evidence, a fix and the figure after it. The node is the HGX recording with the
// network of the GDS configuration guide's NFS client (hgx_recording.hpp: ibdev2netdev
// mlx5_0..7 ==> ib0..7, mlx5_4/5 Down, laid on the eight ConnectX-7s; the guide's node is a
// DGX-2, whose ports are 100 Gb/s EDR, so each Up port here reads "100 Gb/sec (4X EDR)").
// Issue 25's mount 10.10.1.5:/datasets on /mnt/data routes through ib0 (0000:1a:00.0).
// Every expected figure below is worked out by hand from those facts.
#include "doctor_test_util.hpp"
#include "gdsb/topo/collect.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::doctor::testing {
namespace {

const std::string kNfs =
    "10.10.1.5:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
    "namlen=255,hard,proto=PROTO,timeo=600,retrans=2,sec=sys,clientaddr=10.10.1.21,"
    "local_lock=none,addr=10.10.1.5";

topo::Snapshot node(const std::string& proto, const std::string& ib0_rate = "100 Gb/sec (4X EDR)") {
  topo::Snapshot s = topo::testing::hgx_with_host_facts(true, topo::testing::offline());
  s.machine.network = topo::testing::hgx_network();
  for (auto& d : s.machine.network.rdma_devices)
    for (auto& p : d.ports) {
      p.rate = d.name == "mlx5_0" ? ib0_rate : "100 Gb/sec (4X EDR)";
      p.rate_gbps = std::stod(p.rate);
    }
  std::string line = kNfs;
  line.replace(line.find("PROTO"), 5, proto + (proto == "rdma" ? ",port=20049" : ""));
  std::istringstream f(line);
  topo::Mount m;
  f >> m.source >> m.target >> m.fstype >> m.options;
  s.machine.mounts.push_back(m);
  return s;
}

// Storage alone (-x 1, O_DIRECT) on the mount: one file per thread under /mnt/data.
RunResult alone_on_mount(double gb_s) {
  RunResult r = run(XferType::CpuOnly, gb_s * 1e9 / 1073741824.0);
  r.workload.file.clear();
  r.workload.directory = "/mnt/data";
  return r;
}

Diagnosis diagnose_node(topo::Snapshot s, const std::vector<RunResult>& runs) {
  Platform p = platform_from_snapshot(std::move(s), "hgx");
  Figures f = figures_of(runs);
  return diagnose(&p, f);
}

// The example: storage alone 11.8 GB/s through ib0 alone, 100 Gb/s = 12.5 GB/s, i.e.
// 94% of one rail. The node's data NICs that are up: six ConnectX-7 ports (ib4, ib5 down) at
// 12.5 GB/s = 75 GB/s, and the two ConnectX-6 Dx cards (1b:00.0/.1 into GPU0, 9d:00.0/.1 into
// GPU4), no network rate recorded, each at its Gen4 x16 link 16 x 1.969 = 31.5 GB/s: 138 GB/s
// with every rail in use (GPU0's Gen5 x16 link, ~63 GB/s, carries its 12.5 + 31.5).
TEST(DoctorNetworkStorage, StorageAloneAtOneRailOfMany) {
  const Diagnosis d = diagnose_node(node("rdma"), {alone_on_mount(11.8)});
  ASSERT_FALSE(d.findings.empty());
  const Finding* f = &d.findings.front();  // the first finding: the rail
  EXPECT_EQ(f->rule, "network-storage");
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_EQ(f->title.find("Storage alone 11.8 GB/s = 94% of one 100 Gb/s rail (ib0 0000:1a:00.0): "
                          "/mnt/data rides 1 of 10 data NICs"),
            0U)
      << f->title;
  EXPECT_TRUE(contains(f->fix, "nconnect=16")) << f->fix;
  EXPECT_TRUE(contains(f->fix, "localports=ib0,ib1,ib2,ib3,ib6,ib7")) << f->fix;
  EXPECT_TRUE(contains(f->fix, "rdma_dev_addr_list")) << f->fix;
  ASSERT_TRUE(f->expected_gb_s);
  EXPECT_NEAR(*f->expected_gb_s, 75.0 + 2 * 16 * 1.969, 0.2);
  EXPECT_NEAR(f->impact_gb_s, *f->expected_gb_s - 11.8, 0.1);
  EXPECT_TRUE(any_contains(f->evidence, "carried by ib0 0000:1a:00.0: route to 10.10.1.5"));
}

// The same storage figure at half of ib0's capacity is no rail limit: not named.
TEST(DoctorNetworkStorage, StorageFarBelowItsRailIsNotCalledRailBound) {
  const Diagnosis d = diagnose_node(node("rdma"), {alone_on_mount(6.0)});
  EXPECT_EQ(find_rule(d, "network-storage"), nullptr);
}

// NFS over TCP: GDS cannot engage; the fix is proto=rdma, and over RDMA ib0 carries 12.5 GB/s.
TEST(DoctorNetworkStorage, TcpWhereRdmaWouldApply) {
  const Diagnosis d = diagnose_node(node("tcp"), {alone_on_mount(2.9)});
  ASSERT_FALSE(d.findings.empty());
  const Finding* f = &d.findings.front();
  EXPECT_EQ(f->rule, "network-storage");
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(contains(f->title, "GDS cannot engage on /mnt/data (NFS over tcp)")) << f->title;
  EXPECT_TRUE(contains(f->fix, "proto=rdma,port=20049")) << f->fix;
  ASSERT_TRUE(f->expected_gb_s);
  EXPECT_NEAR(*f->expected_gb_s, 12.5, 0.01);
}

// ib0 trained at 2X (50 Gb/s) while its peers run 100: the port is named first (certain: the
// reads run at 94% of what it carries), before the rails; at 100 Gb/s the mount gets
// 6.25 GB/s more, 12.5 GB/s.
TEST(DoctorNetworkStorage, CarrierPortBelowItsPeers) {
  const Diagnosis d = diagnose_node(node("rdma", "50 Gb/sec (2X EDR)"), {alone_on_mount(5.9)});
  ASSERT_FALSE(d.findings.empty());
  const Finding* f = &d.findings.front();
  EXPECT_TRUE(contains(f->title, "NIC 0000:1a:00.0 (mlx5_0) port 1")) << f->title;
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(contains(f->title, "runs at 50 Gb/s, its peers at 100 Gb/s")) << f->title;
  EXPECT_TRUE(any_contains(f->evidence, "rate 50 Gb/sec (2X EDR)"));
  EXPECT_TRUE(contains(f->fix, "mlxlink -d mlx5_0 -p 1")) << f->fix;
  ASSERT_TRUE(f->expected_gb_s);
  EXPECT_NEAR(*f->expected_gb_s, 12.5, 0.01);
}

// A cuFile run on GPU4 (9b:00.0, socket 1) reading the mount that ib0 (socket 0) carries: SYS.
// GPU4's own ConnectX-7 (ib4) is down, so the fix names the ConnectX-6 Dx under its switch.
TEST(DoctorNetworkStorage, CarrierOnTheOtherSocketFromTheGpu) {
  RunResult gpu = cufile_run(9.0, nvfs_facts(true), 8);
  gpu.workload.file.clear();
  gpu.workload.directory = "/mnt/data";
  gpu.path.gpu_pci_bus_id = topo::testing::kHgx[4].gpu;
  const Diagnosis d = diagnose_node(node("rdma"), {gpu});
  ASSERT_FALSE(d.findings.empty());
  const Finding* f = &d.findings.front();
  EXPECT_TRUE(contains(f->title, "is on the other socket from GPU4 (SYS)")) << f->title;
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_TRUE(contains(f->title, "the NIC carrying /mnt/data (0000:1a:00.0)")) << f->title;
  EXPECT_TRUE(contains(f->fix, "0000:9d:00.0 (PIX)")) << f->fix;
}

// Neither nvidia-peermem nor DMA-BUF (Mellanox/nv_peer_memory#46: kernel 4.15, nothing
// loaded) under an NFS-over-RDMA mount: gdsb-topo's rdma-stack check fails, the doctor says
// it for certain.
TEST(DoctorNetworkStorage, NoPeermemNorDmaBufUnderAnRdmaMount) {
  topo::Snapshot s = node("rdma");
  s.machine.kernel_release = "4.15.0-46-generic";
  s.machine.network.modules = {};
  const Diagnosis d = diagnose_node(std::move(s), {alone_on_mount(11.8)});
  ASSERT_FALSE(d.findings.empty());
  const Finding* f = &d.findings.front();
  EXPECT_EQ(f->rule, "rdma-stack") << f->title;
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(contains(f->fix, "modprobe nvidia-peermem")) << f->fix;
}

// Issue 34 item 2: NFS over RDMA on IPv6 is proto=rdma6 (nfs(5); RFC 5665's netid). Issue 25's
// mount with its addresses moved to IPv6 (fd00::5 the server, fd00::21/64 on ib0). It reads
// over RDMA: the doctor names the one rail it rides, never "GDS cannot engage".
TEST(DoctorNetworkStorage, NfsOverRdmaOnIpv6IsRdma) {
  topo::Snapshot s = node("rdma");
  s.machine.mounts.clear();
  s.machine.mounts.push_back(topo::testing::mount_line(
      "[fd00::5]:/datasets /mnt/data nfs4 rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,"
      "namlen=255,hard,proto=rdma6,port=20049,timeo=600,retrans=2,sec=sys,clientaddr=fd00::21,"
      "local_lock=none,addr=fd00::5 0 0"));
  s.machine.network.interfaces[0].addresses.push_back("fd00::21/64");
  s.machine.network.routes.push_back({"fd00::/64", "", "ib0", 256});
  const Diagnosis d = diagnose_node(std::move(s), {alone_on_mount(11.8)});
  for (const Finding& f : d.findings)
    EXPECT_FALSE(contains(f.title, "GDS cannot engage")) << f.title;
  const Finding* rail = find_rule(d, "network-storage");
  ASSERT_NE(rail, nullptr);
  EXPECT_TRUE(contains(rail->title, "/mnt/data rides 1 of 10 data NICs")) << rail->title;
}

// Issue 34 item 7: the mount holding the run's directory, from /proc/mounts as the kernel
// writes it and the collector reads it. A systemd automount with the NFS mount on top of it at
// the same target (aws/efs-utils issue 73's `mount` listing: autofs first, nfs4 after): the NFS
// mount serves the path. A mount point with a space, "\040" in the file (issue 34's
// "/mnt/my data"): found by the directory the run names.
std::vector<topo::Mount> mounts_read_from(const std::string& proc_mounts) {
  topo::fixture::TempDir root;
  topo::fixture::write_file(root.path() / "proc/mounts", proc_mounts);
  return topo::collect_machine(root.path(), false, topo::testing::offline()).mounts;
}

TEST(DoctorNetworkStorage, TheRunsMountIsTheOneOnTopAndItsNameIsDecoded) {
  std::string nfs = kNfs;
  nfs.replace(nfs.find("PROTO"), 5, "tcp");
  const std::string autofs =
      "systemd-1 /mnt/data autofs rw,relatime,fd=46,pgrp=1,timeout=0,minproto=5,maxproto=5,"
      "direct,pipe_ino=17585 0 0\n";
  std::string spaced = nfs;
  spaced.replace(spaced.find("/mnt/data"), 9, "/mnt/my\\040data");
  struct Case {
    std::string proc_mounts, run_dir, title;
  };
  for (const Case& c : {Case{autofs + nfs + " 0 0\n", "/mnt/data",
                             "GDS cannot engage on /mnt/data (NFS over tcp)"},
                        Case{spaced + " 0 0\n", "/mnt/my data",
                             "GDS cannot engage on /mnt/my data (NFS over tcp)"}}) {
    SCOPED_TRACE(c.run_dir);
    topo::Snapshot s = node("tcp");
    s.machine.mounts = mounts_read_from(c.proc_mounts);
    RunResult r = alone_on_mount(2.9);
    r.workload.directory = c.run_dir;
    const Diagnosis d = diagnose_node(std::move(s), {r});
    const Finding* f = find_rule(d, "network-storage");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(contains(f->title, c.title)) << f->title;
  }
}

}  // namespace
}  // namespace gdsb::doctor::testing
