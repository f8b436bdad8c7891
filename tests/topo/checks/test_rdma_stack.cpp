// The GPUDirect RDMA stack check (issue 25 part 4) on facts of real machines: each snapshot's
// network facts are copied from a public recording (origins in fixtures/real/SOURCES.md,
// "GPUDirect RDMA stack"), and every expectation was written by reading that recording.
// The PCI side is the HGX H100 recording (GPUs with ConnectX NICs: GDS applies) unless said.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;

// prometheus/procfs mountstats_test.go, "NFS xprt over rdma proto": an NFSv3 mount with
// proto=rdma, port 20049, as a line of /proc/mounts (names as anonymised there). `proto`
// replaces rdma where a test needs the same export over TCP.
Mount nfs_mount(const std::string& proto = "rdma") {
  Mount m;
  m.source = "<nfsserver>:<nfsmount>";
  m.target = "<mountpoint>";
  m.fstype = "nfs";
  m.options =
      "ro,vers=3,rsize=1048576,wsize=1048576,namlen=255,acregmin=120,acregmax=120,acdirmin=120,"
      "acdirmax=120,hard,nocto,forcerdirplus,proto=" +
      proto +
      ",nconnect=16,port=20049,timeo=600,retrans=2,sec=sys,mountaddr=172.16.40.20,mountvers=3,"
      "mountport=0,mountproto=tcp,local_lock=none";
  return m;
}

Snapshot hgx_with_host() {
  Snapshot s = collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline());
  Machine& m = s.machine;
  m.proc_known = true;
  m.nvidia_fs_loaded = true;
  m.udev_present = true;
  m.cufile.path = "/etc/cufile.json";
  m.cufile.found = true;
  return s;
}

const CheckResult& result(const Outcome& o, const std::string& title_part) {
  const CheckResult* r = o.titled("rdma-stack", title_part);
  if (r == nullptr) throw std::runtime_error("no rdma-stack result titled " + title_part);
  return *r;
}

std::string all_text(const CheckResult& r) {
  std::string t = r.reason + "\n" + r.consequence + "\n" + r.remedy + "\n";
  for (const auto& e : r.evidence) t += e + "\n";
  return t;
}

// leptonai/gpud PR #39 (an H100 node; the HGX recording is from the same project): lsmod shows
// nvidia_peermem, ib_core used by rdma_cm, ib_ipoib, nvidia_peermem, iw_cm, ib_umad,
// rdma_ucm, ib_uverbs, mlx5_ib, ib_cm, and nvidia. No kernel release in the paste.
TEST(TopoRdmaStack, PeermemLoadedRegistersGpuMemoryForTheNfsRdmaMount) {
  Snapshot s = hgx_with_host();
  NetworkFacts& n = s.machine.network;
  n.modules_known = true;
  n.modules = {"ib_cm",   "ib_core", "ib_ipoib",       "ib_umad", "ib_uverbs", "iw_cm",
               "mlx5_ib", "nvidia",  "nvidia_peermem", "rdma_cm", "rdma_ucm"};
  s.machine.mounts = {nfs_mount()};
  const auto o = evaluate_snapshot(std::move(s));
  const CheckResult& r = result(o, "registration");
  EXPECT_EQ(r.verdict, Verdict::Pass) << all_text(r);
  EXPECT_NE(all_text(r).find("/proc/modules: nvidia_peermem loaded"), std::string::npos);
  // The paste has no kernel release: DMA-BUF is not judged, and not needed.
  EXPECT_EQ(all_text(r).find("DMA-BUF usable"), std::string::npos) << all_text(r);
  // rpcrdma is not in the paste, nor nvidia-fs's own view: NFS over RDMA is named unusable.
  const CheckResult& fsr = result(o, "file-system drivers");
  EXPECT_NE(all_text(fsr).find("NFS over RDMA: not usable (rpcrdma not loaded"), std::string::npos)
      << all_text(fsr);
}

// The project's H100 VM, read on 2026-11-26 (fixtures/real/h100-vm/rdma-stack-2026-11-26.txt):
// kernel 6.18.44, the open GPU kernel module 580.159.04, /proc/modules nvidia and nvidia_uvm
// only. On the HGX PCI side with the NFS-over-RDMA mount: DMA-BUF carries GPUDirect RDMA.
const char* kVmKernel = "6.18.44-fc-v657-gpu";
const char* kVmDriver =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
    "(nixbld@)  ";

TEST(TopoRdmaStack, DmaBufWithoutPeermemOnTheOpenModuleAndAKernelOf5_12OrNewer) {
  Snapshot s = hgx_with_host();
  s.machine.kernel_release = kVmKernel;
  NetworkFacts& n = s.machine.network;
  n.modules_known = true;
  n.modules = {"nvidia", "nvidia_uvm"};
  n.nvidia_driver_version = kVmDriver;
  s.machine.mounts = {nfs_mount()};
  const auto o = evaluate_snapshot(std::move(s));
  const CheckResult& r = result(o, "registration");
  EXPECT_EQ(r.verdict, Verdict::Pass) << all_text(r);
  const std::string t = all_text(r);
  EXPECT_NE(t.find("no nvidia_peermem"), std::string::npos) << t;
  EXPECT_NE(t.find("kernel 6.18.44-fc-v657-gpu (>= 5.12"), std::string::npos) << t;
  EXPECT_NE(t.find("580.159.04  Release Build  (nixbld@) (open GPU kernel module)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("DMA-BUF usable"), std::string::npos) << t;
}

// Mellanox/nv_peer_memory issue #46: Ubuntu 18.04, kernel 4.15.0-46-generic, `lsmod | grep
// nv_peer` prints nothing (nv_peer_mem not loaded after a reboot; nvidia_peermem did not exist
// before R470). Kernel 4.15 is older than DMA-BUF's 5.12. Neither way is there.
Snapshot neither_peermem_nor_dmabuf() {
  Snapshot s = hgx_with_host();
  s.machine.kernel_release = "4.15.0-46-generic";
  s.machine.network.modules_known = true;
  s.machine.network.modules = {};
  return s;
}

TEST(TopoRdmaStack, NeitherWithAnNfsOverRdmaMountFailsNamingBoth) {
  Snapshot s = neither_peermem_nor_dmabuf();
  s.machine.mounts = {nfs_mount()};
  const auto o = evaluate_snapshot(std::move(s));
  const CheckResult& r = result(o, "registration");
  ASSERT_EQ(r.verdict, Verdict::Fail) << all_text(r);
  EXPECT_NE(r.consequence.find("nvidia-peermem"), std::string::npos) << r.consequence;
  EXPECT_NE(r.consequence.find("kernel 4.15.0-46-generic is older than 5.12"), std::string::npos)
      << r.consequence;
  EXPECT_NE(r.consequence.find("<mountpoint> nfs (<nfsserver>:<nfsmount>)"), std::string::npos)
      << r.consequence;
  EXPECT_NE(r.remedy.find("modprobe nvidia-peermem"), std::string::npos) << r.remedy;
  EXPECT_NE(r.remedy.find("DMA-BUF"), std::string::npos) << r.remedy;
  EXPECT_EQ(o.report.verdict, Verdict::Fail);
}

TEST(TopoRdmaStack, NeitherWithoutANetworkMountIsAFactNotAFailure) {
  Snapshot s = neither_peermem_nor_dmabuf();
  // The same NFS export over TCP is no GPUDirect RDMA mount: nothing needs either.
  s.machine.mounts = {nfs_mount("tcp")};
  const auto o = evaluate_snapshot(std::move(s));
  const CheckResult& r = result(o, "registration");
  EXPECT_EQ(r.verdict, Verdict::Waived) << all_text(r);
  EXPECT_NE(r.reason.find("neither nvidia-peermem nor DMA-BUF"), std::string::npos) << r.reason;
  for (const auto* c : o.results("rdma-stack"))
    EXPECT_NE(c->verdict, Verdict::Fail) << c->title << ": " << all_text(*c);
}

// deepseek-ai/3FS issue #39: ibstat of mlx5_0 (MT4125, ConnectX-6 Dx) port 1: State Down,
// Physical state Disabled, Link layer Ethernet, Rate 100; the 3FS log's ibdev2netdev line
// "mlx5_0 port 1 ==> ens1f0np0 (Down)". The recording shows no address: 10.10.1.21/24 on
// ens1f0np0 and the cufile.json list naming it are this test's input. The second listed
// address is on no interface of the node.
// The HGX node with one RDMA port bound to one interface holding 10.10.1.21/24, and
// cufile.json listing `listed`.
Snapshot node_with_port(const std::string& netdev, const RdmaPort& port,
                        std::vector<std::string> listed) {
  Snapshot s = hgx_with_host();
  NetworkFacts& n = s.machine.network;
  n.net_known = n.rdma_known = true;
  NetInterface iface;
  iface.name = netdev;
  iface.addresses = {"10.10.1.21/24"};
  n.interfaces = {iface};
  RdmaDevice mlx;
  mlx.name = "mlx5_0";
  mlx.ports = {port};
  n.rdma_devices = {mlx};
  s.machine.cufile.rdma_dev_addr_list = std::move(listed);
  return s;
}

TEST(TopoRdmaStack, AListedAddressOnADownPortIsNamed) {
  Snapshot s = node_with_port(
      "ens1f0np0", RdmaPort{1, "Ethernet", "DOWN", "Disabled", "100 Gb/sec", 100.0, "ens1f0np0"},
      {"10.10.1.21", "10.10.1.22"});
  const auto o = evaluate_snapshot(std::move(s));
  const CheckResult& r = result(o, "rdma_dev_addr_list");
  ASSERT_EQ(r.verdict, Verdict::Warn) << all_text(r);
  EXPECT_NE(
      r.consequence.find("10.10.1.21 (properties) -> ens1f0np0 -> mlx5_0 port 1: DOWN (Disabled)"),
      std::string::npos)
      << r.consequence;
  EXPECT_NE(r.consequence.find("10.10.1.22 (properties): no interface of this node has this "
                               "address"),
            std::string::npos)
      << r.consequence;
  // The port itself is a fact: down, and no mount reads over RDMA here.
  const CheckResult& p = result(o, "RDMA ports");
  EXPECT_EQ(p.verdict, Verdict::Waived) << all_text(p);
  EXPECT_NE(all_text(p).find("ACTIVE 0, not ACTIVE 1"), std::string::npos) << all_text(p);
}

// The same port ACTIVE (stackhpc/ansible-slurm-appliance PR #988: mlx5_0 port 1 state
// "4: ACTIVE", phys_state "5: LinkUp", rate "100 Gb/sec (4X EDR)"): the address resolves, Pass.
TEST(TopoRdmaStack, AListedAddressOnAnActivePortPasses) {
  Snapshot s = node_with_port(
      "ib0", RdmaPort{1, "InfiniBand", "ACTIVE", "LinkUp", "100 Gb/sec (4X EDR)", 100.0, "ib0"},
      {"10.10.1.21"});
  const auto o = evaluate_snapshot(std::move(s));
  const CheckResult& r = result(o, "rdma_dev_addr_list");
  EXPECT_EQ(r.verdict, Verdict::Pass) << all_text(r);
  EXPECT_NE(all_text(r).find("10.10.1.21 (properties) -> ib0 -> mlx5_0 port 1: ACTIVE (LinkUp), "
                             "100 Gb/sec (4X EDR)"),
            std::string::npos)
      << all_text(r);
  EXPECT_EQ(result(o, "RDMA ports").verdict, Verdict::Pass);
}

// The project's H100 VM as recorded on 2026-11-26, on its own saved snapshot (2026-11-24):
// no nvidia_peermem, /sys/class/infiniband empty, rdma_dev_addr_list [ ], libcufile_rdma.so.1
// loads (dlopen). GDS does not apply there (virtual storage and NIC): facts only.
TEST(TopoRdmaStack, TheGpuVmShowsItsFactsAndFailsNothing) {
  Snapshot s = load_snapshot(kReal / "h100-vm" / "snapshot");
  ASSERT_FALSE(s.machine.cufile_rdma) << "a snapshot older than the probe records no answer";
  s.machine.kernel_release = kVmKernel;
  NetworkFacts& n = s.machine.network;
  n.modules_known = n.rdma_known = n.net_known = true;
  n.modules = {"nvidia", "nvidia_uvm"};
  n.nvidia_driver_version = kVmDriver;
  s.machine.cufile.rdma_dev_addr_list = std::vector<std::string>{};
  s.machine.cufile_rdma = gpu::cufile::LibraryProbe{"libcufile_rdma.so.1", true, ""};
  const auto o = evaluate_snapshot(std::move(s));
  ASSERT_FALSE(o.report.gds_applicable);
  for (const auto* c : o.results("rdma-stack"))
    EXPECT_NE(c->verdict, Verdict::Fail) << c->title << ": " << all_text(*c);
  EXPECT_EQ(result(o, "registration").verdict, Verdict::Pass);  // DMA-BUF is there
  const CheckResult& lib = result(o, "user-space RDMA library");
  EXPECT_EQ(lib.verdict, Verdict::Pass);
  EXPECT_NE(all_text(lib).find("dlopen(libcufile_rdma.so.1): loaded"), std::string::npos);
  const CheckResult& list = result(o, "rdma_dev_addr_list");
  EXPECT_EQ(list.verdict, Verdict::Waived);
  EXPECT_NE(all_text(list).find("properties.rdma_dev_addr_list []"), std::string::npos)
      << all_text(list);
  const CheckResult& ports = result(o, "RDMA ports");
  EXPECT_EQ(ports.verdict, Verdict::Waived);
  EXPECT_EQ(ports.reason, "no RDMA device on this node");
  // The library loads but nothing lists a NIC: user-space RDMA is not usable.
  EXPECT_NE(all_text(result(o, "file-system drivers"))
                .find("user-space RDMA: not usable (library loads, rdma_dev_addr_list empty"),
            std::string::npos);
}

// An input without host facts (the lspci text alone) judges nothing.
TEST(TopoRdmaStack, AnInputWithoutHostFactsIsWaivedOnce) {
  const auto o = evaluate_snapshot(collect_lspci_text(kReal / "hgx-h100-lspci-vvv.txt", offline()));
  ASSERT_EQ(o.results("rdma-stack").size(), 1U);
  EXPECT_EQ(o.results("rdma-stack").front()->verdict, Verdict::Waived);
}

// The probe's answer travels with a saved snapshot, and a snapshot without it replays as
// "not probed".
TEST(TopoRdmaStack, TheProbeAnswerIsSavedAndReplayed) {
  Snapshot s = hgx_with_host();
  s.machine.cufile_rdma = gpu::cufile::LibraryProbe{
      "libcufile_rdma.so.1", false,
      "libcufile_rdma.so.1: cannot open shared object file: No such file or directory"};
  const Snapshot back = snapshot_from_json(snapshot_json(s, true), "test");
  ASSERT_TRUE(back.machine.cufile_rdma);
  EXPECT_FALSE(back.machine.cufile_rdma->loaded);
  EXPECT_EQ(back.machine.cufile_rdma->error, s.machine.cufile_rdma->error);
  const auto o = evaluate_snapshot(Snapshot(back));
  const CheckResult& lib = result(o, "user-space RDMA library");
  EXPECT_EQ(lib.verdict, Verdict::Waived);
  EXPECT_NE(all_text(lib).find("cannot open shared object file"), std::string::npos);

  Snapshot old = hgx_with_host();
  const auto o2 = evaluate_snapshot(snapshot_from_json(snapshot_json(old, true), "old"));
  EXPECT_NE(result(o2, "user-space RDMA library").reason.find("not probed"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::topo::testing
