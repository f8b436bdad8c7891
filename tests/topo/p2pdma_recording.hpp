// The P2PDMA facts of real machines (fixtures/real/h200-vm-p2pdma/, public pastes; SOURCES.md
// names each), laid on fixture machines: a node ready for cuFile's P2PDMA mode and the
// project's H200 VM as recorded.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "fixture_builder.hpp"

namespace gdsb::topo::testing {

inline std::string h200_recording(const std::string& name) {
  std::ifstream in(std::filesystem::path(GDSB_TOPO_REAL_FIXTURES) / "h200-vm-p2pdma" / name,
                   std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// NVIDIA/gds-nvidia-fs issue 75 (H200, kernel 6.14.0-37-generic): `cat /proc/kallsyms | grep -i
// p2pdma_pgmap_ops`, the line NVIDIA's guide also shows.
inline const char* kIssue75Kallsyms = "0000000000000000 d p2pdma_pgmap_ops\n";
// The registry value of the guide's /etc/modprobe.d/nvidia-p2pdma.conf, as params prints it.
inline const char* kGuideRegistryDwords = "RMForceStaticBar1=1;RmForceDisableIomapWC=1;";

// The H200 VM's /proc/driver/nvidia/params with RegistryDwords set to `value`.
inline std::string h200_params_with(const std::string& value) {
  std::string p = h200_recording("proc-driver-nvidia-params.txt");
  const std::string empty = "RegistryDwords: \"\"";
  p.replace(p.find(empty), empty.size(), "RegistryDwords: \"" + value + "\"");
  return p;
}

// /sys/module as the H200 VM listed it (one directory per name; no nvme_core among them).
inline void h200_sys_module(fixture::Machine& m) {
  std::istringstream names(h200_recording("sys-module-ls.txt"));
  std::string name;
  while (std::getline(names, name))
    if (!name.empty()) m.host.files["sys/module/" + name] = "";
}

// A node P2PDMA mode is ready on: the fixture box (an H100 SXM5, 10de:2330, under a switch with
// one NVMe; x86_64), no nvidia-fs, an xfs data mount on the NVMe drive, and the facts each as
// a real node recorded them: issue 75's kallsyms line, the H200 VM's open module 580.159.04,
// its params with the guide's registry value, multipath N (the guide's expected output),
// use_pci_p2pdma true.
inline fixture::Machine p2pdma_ready_node() {
  fixture::Machine m = fixture::make_box(1, 1, 1, 1, 0);
  m.host.nvidia_fs = false;
  m.host.mounts = {"/dev/nvme0n1p1 /data xfs rw,relatime 0 0", "proc /proc proc rw 0 0"};
  m.host.cufile_json = R"({ "properties": { "use_pci_p2pdma": true } })";
  h200_sys_module(m);
  m.host.files["proc/kallsyms"] = kIssue75Kallsyms;
  m.host.files["proc/driver/nvidia/version"] = h200_recording("proc-driver-nvidia-version.txt");
  m.host.files["proc/driver/nvidia/params"] = h200_params_with(kGuideRegistryDwords);
  m.host.files["sys/module/nvme_core/parameters/multipath"] = "N\n";
  return m;
}

// The project's H200 VM as recorded on 2026-11-28 (h200-vm-p2pdma/): the flat virtio VM with
// its GPU an H200 (nvidia-smi: Device Id 0x233510DE), kernel 6.18.44-fc-v657-gpu, its kallsyms
// lines, config.gz, driver version and params, /sys/module listing and cufile.json.
inline fixture::Machine h200_vm_recorded() {
  fixture::Machine m = fixture::make_flat_vm();
  for (auto& d : m.devs)
    if (d.vendor == 0x10de) d.device = 0x2335;
  std::string release = h200_recording("uname-r.txt");
  while (!release.empty() && release.back() == '\n') release.pop_back();
  m.host.kernel = release;
  m.host.cufile_json = h200_recording("cufile.json");
  h200_sys_module(m);
  m.host.files["proc/kallsyms"] = h200_recording("kallsyms-p2pdma.txt");
  m.host.files["proc/config.gz"] = h200_recording("config-p2pdma.gz");
  m.host.files["proc/driver/nvidia/version"] = h200_recording("proc-driver-nvidia-version.txt");
  m.host.files["proc/driver/nvidia/params"] = h200_recording("proc-driver-nvidia-params.txt");
  return m;
}

}  // namespace gdsb::topo::testing
