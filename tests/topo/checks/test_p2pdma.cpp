// cuFile's P2PDMA mode judged fact by fact (issue 43): a ready node, then each prerequisite
// changed alone names exactly that prerequisite and its fix; the project's H200 VM as recorded.
// Expected facts are read off the recordings (fixtures/real/SOURCES.md, "P2PDMA readiness").
#include <gtest/gtest.h>

#include <functional>

#include "gdsb/topo/p2pdma.hpp"
#include "p2pdma_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

P2pdmaReadiness readiness_of(const fixture::Machine& m) {
  fixture::TempDir dir;
  fixture::write_sysfs(m, dir.path());
  return p2pdma_readiness(collect_sysfs_root(dir.path(), offline()));
}

std::vector<std::string> missing_names(const P2pdmaReadiness& r) {
  std::vector<std::string> out;
  for (const P2pdmaFact* f : r.with(FactState::Missing)) out.push_back(f->name);
  return out;
}

TEST(TopoP2pdma, ReadyNodeMeetsEveryFact) {
  const fixture::Machine m = p2pdma_ready_node();
  const P2pdmaReadiness r = readiness_of(m);
  for (const P2pdmaFact& f : r.facts)
    EXPECT_EQ(f.state, FactState::Met) << f.name << ": " << f.evidence;
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.verdict(), "P2PDMA ready");
  EXPECT_EQ(r.fact("kernel PCI P2PDMA")->evidence, "/proc/kallsyms has p2pdma_pgmap_ops");
  EXPECT_EQ(r.fact("GPU model")->evidence,
            "10de:2330 GH100 [H100 SXM5 80GB]: H100 is on the list");
  EXPECT_NE(r.fact("GPU kernel module")->evidence.find("Open Kernel Module for x86_64  580.159.04"),
            std::string::npos);
  // Through the check: a pass that says so first, and nvidia-fs not needed.
  const Outcome o = run_sysfs(m);
  const CheckResult* c = o.titled("gds-stack", "P2PDMA mode");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::Pass);
  EXPECT_EQ(c->evidence.front(), "P2PDMA ready");
  EXPECT_EQ(o.titled("gds-stack", "nvidia-fs")->verdict, Verdict::Pass);
  EXPECT_TRUE(any_contains(o.titled("gds-stack", "nvidia-fs")->evidence, "P2PDMA mode is ready"));
}

struct OneChange {
  const char* fact;        // the one prerequisite the change takes away
  const char* fix;         // a part of its exact fix
  const char* evidence;    // a part of its evidence
  std::function<void(fixture::Machine&)> change;
};

// Each change is one recorded fact put in place of the ready node's.
const std::vector<OneChange>& changes() {
  static const std::vector<OneChange> kChanges = {
      {"kernel PCI P2PDMA", "CONFIG_PCI_P2PDMA=y",
       "/proc/kallsyms has no p2pdma_pgmap_ops; /proc/config.gz: CONFIG_PCI_P2PDMA is not set",
       [](fixture::Machine& m) {  // the H200 VM's kallsyms lines and config.gz
         m.host.files["proc/kallsyms"] = h200_recording("kallsyms-p2pdma.txt");
         m.host.files["proc/config.gz"] = h200_recording("config-p2pdma.gz");
       }},
      {"GPU kernel module", "install the open GPU kernel modules 565 or newer",
       "384.98  Thu Oct 26 15:16:01 PDT 2017 (the proprietary module)",
       [](fixture::Machine& m) {  // dylanaraps/neofetch issue 876
         m.host.files["proc/driver/nvidia/version"] =
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017\n"
             "GCC version:  gcc version 7.2.0 (Ubuntu 7.2.0-8ubuntu3) \n";
       }},
      {"GPU kernel module", "install the open GPU kernel modules 565 or newer",
       "525.60.11  Release Build  (archlinux-builder@localhost) (open, older than 565)",
       [](fixture::Machine& m) {  // nix-community/nixGL issue 121
         m.host.files["proc/driver/nvidia/version"] =
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
             "(archlinux-builder@localhost)  \nGCC version:  gcc version 12.2.0 (GCC) \n";
       }},
      {"driver registry",
       "options nvidia NVreg_RegistryDwords=\"RMForceStaticBar1=1;RmForceDisableIomapWC=1\"' > "
       "/etc/modprobe.d/nvidia-p2pdma.conf, then update-initramfs -u",
       "RegistryDwords: \"\": RMForceStaticBar1 and RmForceDisableIomapWC not set to 1",
       [](fixture::Machine& m) {  // the H200 VM's own params
         m.host.files["proc/driver/nvidia/params"] = h200_recording("proc-driver-nvidia-params.txt");
       }},
      {"NVMe native multipath", "options nvme_core multipath=N",
       "/sys/module/nvme_core/parameters/multipath: Y",
       [](fixture::Machine& m) { m.host.files["sys/module/nvme_core/parameters/multipath"] = "Y\n"; }},
      {"NVMe native multipath", "nvme_core loaded", "/sys/module/nvme_core absent",
       [](fixture::Machine& m) {  // as on the H200 VM: no nvme_core in /sys/module
         m.host.files.erase("sys/module/nvme_core/parameters/multipath");
       }},
      {"GPU model", "A100, A40, L4, L40S, H100, H200, B100, B200 and B300 only",
       "10de:2329: not on the list",
       [](fixture::Machine& m) {  // pci.ids: 2329 GH100 [H20], a variant the list does not name
         for (auto& d : m.devs)
           if (d.vendor == 0x10de) d.device = 0x2329;
       }},
      {"platform", "not supported on Grace Hopper", "aarch64, Grace CPU (CPU part 0xd4f)",
       [](fixture::Machine& m) {
         m.host.cpu_vendor = "0x41";
         m.host.cpu_part = "0xd4f";
       }},
      {"storage layout", "put the data on a file system directly on a local NVMe namespace",
       "/data on md RAID0 md127 (raid0) over nvme0n1",
       [](fixture::Machine& m) {
         m.host.mounts = {"/dev/md127 /data xfs rw,relatime 0 0", "proc /proc proc rw 0 0"};
         m.host.blocks = {{"nvme0n1", "", {}, "", ""}, {"md127", "", {"nvme0n1"}, "", "raid0"}};
       }},
      {"cufile.json use_pci_p2pdma", "set \"properties\": {\"use_pci_p2pdma\": true} in /etc/cufile.json",
       "/etc/cufile.json: properties.use_pci_p2pdma false",
       [](fixture::Machine& m) {
         m.host.cufile_json = R"({ "properties": { "use_pci_p2pdma": false } })";
       }},
  };
  return kChanges;
}

TEST(TopoP2pdma, EachPrerequisiteTakenAloneNamesExactlyItAndItsFix) {
  for (const OneChange& c : changes()) {
    fixture::Machine m = p2pdma_ready_node();
    c.change(m);
    const P2pdmaReadiness r = readiness_of(m);
    EXPECT_EQ(missing_names(r), std::vector<std::string>{c.fact}) << c.evidence;
    EXPECT_EQ(r.verdict(), std::string("P2PDMA not ready: ") + c.fact);
    const P2pdmaFact* f = r.fact(c.fact);
    EXPECT_NE(f->fix.find(c.fix), std::string::npos) << f->fix;
    EXPECT_NE(f->evidence.find(c.evidence), std::string::npos) << f->evidence;
    // Through the check: one failure whose remedy is that fix alone.
    const Outcome o = run_sysfs(m);
    const CheckResult* p = o.titled("gds-stack", "P2PDMA mode");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->verdict, Verdict::Fail) << c.evidence;
    EXPECT_EQ(p->remedy, std::string(c.fact) + ": " + f->fix);
    EXPECT_EQ(p->evidence.front(), r.verdict());
  }
}

TEST(TopoP2pdma, GenericP2pdmaSymbolIsNotKernelSupport) {
  // The H200 VM's kallsyms has dma_pci_p2pdma_supported (a DMA symbol built without
  // CONFIG_PCI_P2PDMA) and no p2pdma_pgmap_ops: missing even without the configuration.
  fixture::Machine m = p2pdma_ready_node();
  m.host.files["proc/kallsyms"] = h200_recording("kallsyms-p2pdma.txt");
  const P2pdmaReadiness r = readiness_of(m);
  EXPECT_EQ(r.fact("kernel PCI P2PDMA")->state, FactState::Missing);
  EXPECT_EQ(r.fact("kernel PCI P2PDMA")->evidence, "/proc/kallsyms has no p2pdma_pgmap_ops");
}

TEST(TopoP2pdma, TheH200VmAsRecorded) {
  // Read off h200-vm-p2pdma/: no p2pdma_pgmap_ops and "# CONFIG_PCI_P2PDMA is not set"; the open
  // module 580.159.04; RegistryDwords ""; no nvme_core in /sys/module; 10de:2335 (H200);
  // use_pci_p2pdma false in the shipped cufile.json.
  const fixture::Machine m = h200_vm_recorded();
  const P2pdmaReadiness r = readiness_of(m);
  EXPECT_EQ(r.verdict(),
            "P2PDMA not ready: kernel PCI P2PDMA, driver registry, NVMe native multipath, "
            "cufile.json use_pci_p2pdma");
  EXPECT_EQ(r.fact("GPU kernel module")->state, FactState::Met);
  EXPECT_EQ(r.fact("GPU model")->evidence, "10de:2335 GH100 [H200 SXM 141GB]: H200 is on the list");
  EXPECT_EQ(r.fact("kernel PCI P2PDMA")->evidence,
            "/proc/kallsyms has no p2pdma_pgmap_ops; /proc/config.gz: CONFIG_PCI_P2PDMA is not set");
  EXPECT_EQ(r.fact("driver registry")->evidence,
            "/proc/driver/nvidia/params RegistryDwords: \"\": RMForceStaticBar1 and "
            "RmForceDisableIomapWC not set to 1");
  // Virtio storage only: GDS does not apply, so the result is a fact, its facts all listed.
  const Outcome o = run_sysfs(m);
  const CheckResult* c = o.titled("gds-stack", "P2PDMA mode");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::Waived);
  EXPECT_EQ(c->evidence.size(), 9U);
}

TEST(TopoP2pdma, ModuleFlavourAndVersionFromTheVersionLine) {
  // nixGL issue 220: a 590 open build wrote "Open Kernel x86_64 Kernel Module".
  auto k = nvidia_kernel_module("NVIDIA UNIX Open Kernel x86_64 Kernel Module  590.48.01  Mon Dec  8 11:22:45 UTC 2025");
  EXPECT_EQ(k.flavour, NvidiaKernelModule::Open);
  EXPECT_EQ(k.version, "590.48.01");
  EXPECT_EQ(k.major, 590);
  // nixGL issue 186: Ubuntu 24.04 nvidia-driver-565-open, the first release the guide accepts.
  k = nvidia_kernel_module("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024");
  EXPECT_EQ(k.flavour, NvidiaKernelModule::Open);
  EXPECT_EQ(k.major, 565);
  k = nvidia_kernel_module("NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017");
  EXPECT_EQ(k.flavour, NvidiaKernelModule::Proprietary);
  EXPECT_EQ(k.version, "384.98");
  EXPECT_EQ(nvidia_kernel_module("").flavour, NvidiaKernelModule::Unknown);
}

TEST(TopoP2pdma, InputsWithoutHostFactsAreUnknownNotReady) {
  // A PCI-only input: nothing host-side was read, so the verdict says what is unknown.
  fixture::Machine m = p2pdma_ready_node();
  m.host.write_proc = false;
  m.host.files.clear();
  const P2pdmaReadiness r = readiness_of(m);
  EXPECT_FALSE(r.ready());
  EXPECT_TRUE(r.with(FactState::Missing).empty());
  EXPECT_EQ(r.verdict().rfind("P2PDMA readiness unknown: kernel PCI P2PDMA, GPU kernel module", 0), 0U)
      << r.verdict();
}

TEST(TopoP2pdma, SnapshotKeepsTheFacts) {
  fixture::TempDir dir, out;
  fixture::write_sysfs(h200_vm_recorded(), dir.path());
  const Snapshot s = collect_sysfs_root(dir.path(), offline());
  save_snapshot(s, out.path());
  const Snapshot back = load_snapshot(out.path());
  EXPECT_EQ(back.machine.p2pdma, s.machine.p2pdma);
  EXPECT_EQ(p2pdma_readiness(back).verdict(), p2pdma_readiness(s).verdict());
}

}  // namespace
}  // namespace gdsb::topo::testing
