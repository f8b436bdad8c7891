// cuFile's P2PDMA mode, fact by fact (gdsb/topo/p2pdma.hpp). Each rule below names the line of
// NVIDIA's documents it follows: "GDS Support for NVMe Drives Using Linux PCI P2PDMA" (GSN) and
// the GDS troubleshooting guide, chapter "NVMe P2PDMA Troubleshooting" (TSG 14).
#include "gdsb/topo/p2pdma.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "check_util.hpp"
#include "internal.hpp"
#include "gdsb/topo/mount_transport.hpp"
#include "gdsb/topo/mounts.hpp"

namespace gdsb::topo {
namespace {

// The GPUs NVIDIA lists for P2PDMA mode (TSG 14.2: A100, A40, L4, L40S, H100, H200, B100,
// B200, B300), by PCI device id (vendor 10de) as the PCI ID database names them:
// pciutils/pciids pci.ids, version 2026.08.22 (commit c1c12547d626ebf05fd0223144ad87fab5e95d06).
// Only ids whose pci.ids name is the listed product; variants the list does not name (A800,
// H800, H20, A30, GH200, GB200) are not in it.
struct ListedGpu {
  uint16_t device;
  const char* model;  // the list's name
  const char* pci_ids_name;
};
constexpr ListedGpu kP2pdmaGpus[] = {
    {0x20b0, "A100", "GA100 [A100 SXM4 40GB]"},   {0x20b1, "A100", "GA100 [A100 PCIe 40GB]"},
    {0x20b2, "A100", "GA100 [A100 SXM4 80GB]"},   {0x20b3, "A100", "GA100 [A100-SXM-64GB]"},
    {0x20b5, "A100", "GA100 [A100 PCIe 80GB]"},   {0x20f1, "A100", "GA100 [A100 PCIe 40GB]"},
    {0x2235, "A40", "GA102GL [A40]"},             {0x27b8, "L4", "AD104GL [L4]"},
    {0x26b9, "L40S", "AD102GL [L40S]"},           {0x2321, "H100", "GH100 [H100L 94GB]"},
    {0x2330, "H100", "GH100 [H100 SXM5 80GB]"},   {0x2331, "H100", "GH100 [H100 PCIe]"},
    {0x2336, "H100", "GH100 [H100]"},             {0x2337, "H100", "GH100 [H100 SXM5 64GB]"},
    {0x2338, "H100", "GH100 [H100 SXM5 96GB]"},   {0x2339, "H100", "GH100 [H100 SXM5 94GB]"},
    {0x233d, "H100", "GH100 [H100 96GB]"},        {0x2335, "H200", "GH100 [H200 SXM 141GB]"},
    {0x233b, "H200", "GH100 [H200 NVL]"},         {0x2920, "B100", "GB100 [TS4 / B100]"},
    {0x29bc, "B100", "GB102 [B100]"},             {0x2901, "B200", "GB100 [B200]"},
    {0x2909, "B200", "GB100 [HGX B200 168GB]"},   {0x3182, "B300", "GB110 [B300 SXM6 AC]"},
};

// Grace superchips (GSN 1: "Arm64-based GraceHopper platforms ... are not supported"), by the
// same pci.ids: GH200 and GB200.
constexpr ListedGpu kGraceSuperchips[] = {
    {0x2342, "GH200", "GH100 [GH200 120GB / 480GB]"},
    {0x2348, "GH200", "GH100 [GH200 144G HBM3e]"},
    {0x2941, "GB200", "GB100 [HGX GB200]"},
};

// The open RM modules from this major on (GSN 3.4: "OpenRM version 565.47 or above").
constexpr int kOpenRmMajor = 565;

// The two registry keys of GSN 4 / TSG 14.3, and the modprobe.d line that sets them.
constexpr const char* kRegistryKeys[] = {"RMForceStaticBar1", "RmForceDisableIomapWC"};
constexpr const char* kRegistryFix =
    "echo 'options nvidia NVreg_RegistryDwords=\"RMForceStaticBar1=1;RmForceDisableIomapWC=1\"' "
    "> /etc/modprobe.d/nvidia-p2pdma.conf, then update-initramfs -u -k $(uname -r) (Ubuntu) or "
    "dracut -f (RHEL/SLES), and reboot";
constexpr const char* kInitramfs =
    "update-initramfs -u -k $(uname -r) (Ubuntu) or dracut -f (RHEL/SLES), and reboot";

const ListedGpu* find_in(const auto& table, uint16_t device) {
  for (const ListedGpu& g : table)
    if (g.device == device) return &g;
  return nullptr;
}

std::string hex4(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "%04x", v);
  return b;
}

P2pdmaFact kernel_fact(const Machine& m) {
  const P2pdmaHostFacts& f = m.p2pdma;
  P2pdmaFact r{std::string(kP2pdmaFactNames[0]), FactState::Unknown, "", "", ""};
  std::vector<std::string> ev;
  if (f.kallsyms_pgmap_ops)
    ev.push_back(*f.kallsyms_pgmap_ops ? "/proc/kallsyms has p2pdma_pgmap_ops"
                                       : "/proc/kallsyms has no p2pdma_pgmap_ops");
  if (!f.kernel_config.empty())
    ev.push_back(f.kernel_config_file + ": CONFIG_PCI_P2PDMA " +
                 (f.kernel_config == "y" ? "=y" : "is not set"));
  // The running kernel's symbol table decides (TSG 14.1); its configuration where the table
  // was not read. Either saying no is no.
  const bool no = (f.kallsyms_pgmap_ops && !*f.kallsyms_pgmap_ops) || f.kernel_config == "not set";
  if (no) {
    r.state = FactState::Missing;
    r.why_not = "the kernel has no PCI P2PDMA (CONFIG_PCI_P2PDMA)";
    r.fix = "boot a kernel built with CONFIG_PCI_P2PDMA=y (Ubuntu's 6.2 and newer are), or use "
            "nvidia-fs with the GDS NVMe patches (MLNX_OFED/DOCA) instead of P2PDMA mode";
  } else if (f.kallsyms_pgmap_ops || f.kernel_config == "y") {
    r.state = FactState::Met;
  } else {
    ev.push_back("neither /proc/kallsyms nor the kernel configuration was read (kernel " +
                 (m.kernel_release.empty() ? std::string("unknown") : m.kernel_release) +
                 ": the release alone does not say)");
  }
  for (size_t i = 0; i < ev.size(); ++i) r.evidence += (i ? "; " : "") + ev[i];
  return r;
}

P2pdmaFact module_fact(const Machine& m) {
  P2pdmaFact r{std::string(kP2pdmaFactNames[1]), FactState::Unknown, "", "", ""};
  const std::string& line = m.network.nvidia_driver_version;
  if (line.empty()) {
    r.evidence = "/proc/driver/nvidia/version not read (the NVIDIA driver is not loaded, or the "
                 "input has no /proc)";
    return r;
  }
  const NvidiaKernelModule k = nvidia_kernel_module(line);
  r.evidence = "/proc/driver/nvidia/version: " + line;
  const std::string fix = "install the open GPU kernel modules " + std::to_string(kOpenRmMajor) +
                          " or newer (Ubuntu: nvidia-driver-<version>-open; NVIDIA's installer: "
                          "-m=kernel-open) and reboot";
  if (k.flavour == NvidiaKernelModule::Proprietary) {
    r.state = FactState::Missing;
    r.evidence += " (the proprietary module)";
    r.why_not = "the GPU driver is the proprietary kernel module";
    r.fix = fix;
  } else if (k.flavour == NvidiaKernelModule::Open && k.major >= kOpenRmMajor) {
    r.state = FactState::Met;
    r.evidence += " (open, >= " + std::to_string(kOpenRmMajor) + ")";
  } else if (k.flavour == NvidiaKernelModule::Open && k.major >= 0) {
    r.state = FactState::Missing;
    r.evidence += " (open, older than " + std::to_string(kOpenRmMajor) + ")";
    r.why_not = "the open GPU kernel module " + k.version + " is older than " + std::to_string(kOpenRmMajor);
    r.fix = fix;
  }
  return r;
}

P2pdmaFact registry_fact(const Machine& m) {
  P2pdmaFact r{std::string(kP2pdmaFactNames[2]), FactState::Unknown, "", "", ""};
  if (!m.arch.empty() && !is_x86(m)) {
    r.state = FactState::NotNeeded;
    r.evidence = "platform " + m.arch + ": the registry keys are needed on x86 only";
    return r;
  }
  if (!m.p2pdma.registry_dwords) {
    r.evidence = "/proc/driver/nvidia/params not read";
    return r;
  }
  const std::string& v = *m.p2pdma.registry_dwords;
  r.evidence = "/proc/driver/nvidia/params RegistryDwords: \"" + v + "\"";
  // "KEY=VALUE;KEY=VALUE", keys compared as the driver does (case-insensitively).
  std::map<std::string, std::string> set;
  size_t at = 0;
  while (at <= v.size()) {
    size_t end = v.find(';', at);
    if (end == std::string::npos) end = v.size();
    const std::string item = detail::trim(v.substr(at, end - at));
    if (const size_t eq = item.find('='); eq != std::string::npos) {
      std::string key = item.substr(0, eq);
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      set[key] = detail::trim(item.substr(eq + 1));
    }
    at = end + 1;
  }
  std::vector<std::string> unset;
  for (const char* key : kRegistryKeys) {
    std::string k = key;
    std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto it = set.find(k);
    if (it == set.end() || (it->second != "1" && it->second != "0x1" && it->second != "0x00000001"))
      unset.push_back(key);
  }
  if (unset.empty()) {
    r.state = FactState::Met;
    return r;
  }
  r.state = FactState::Missing;
  std::string names;
  for (size_t i = 0; i < unset.size(); ++i) names += (i ? " and " : "") + unset[i];
  r.evidence += ": " + names + " not set to 1";
  r.why_not = names + (unset.size() > 1 ? " are" : " is") + " not set";
  r.fix = kRegistryFix;
  return r;
}

P2pdmaFact multipath_fact(const Machine& m) {
  P2pdmaFact r{std::string(kP2pdmaFactNames[3]), FactState::Unknown, "", "", ""};
  const auto& v = m.p2pdma.nvme_multipath;
  if (!v) {
    r.evidence = "/sys/module not read";
  } else if (v->empty()) {
    // No NVMe driver at all: P2PDMA mode serves NVMe drives only (GSN 3.2).
    r.state = FactState::Missing;
    r.evidence = "/sys/module/nvme_core absent: this kernel runs no NVMe driver";
    r.why_not = "no NVMe driver (nvme_core) runs";
    r.fix = "P2PDMA mode reads local NVMe drives through the kernel's nvme driver: give the node "
            "NVMe drives (bare metal, or NVMe passthrough into the VM) with nvme_core loaded";
  } else if (*v == "N" || *v == "n" || *v == "0") {
    r.state = FactState::Met;
    r.evidence = "/sys/module/nvme_core/parameters/multipath: " + *v;
  } else {
    r.state = FactState::Missing;
    r.evidence = "/sys/module/nvme_core/parameters/multipath: " + *v +
                 " (native NVMe multipath does not work with PCI P2PDMA)";
    r.why_not = "NVMe native multipath is on";
    r.fix = "echo 'options nvme_core multipath=N' > /etc/modprobe.d/nvme.conf (or nvme_core."
            "multipath=N on the kernel command line), then " + std::string(kInitramfs);
  }
  return r;
}

P2pdmaFact gpu_fact(const Snapshot& s) {
  P2pdmaFact r{std::string(kP2pdmaFactNames[4]), FactState::Unknown, "", "", ""};
  // Each device id once, with how many GPUs have it (a fact common to eight GPUs said once).
  std::map<uint16_t, int> ids;
  for (const Device* g : s.with_role(Role::Gpu))
    if (g->vendor == 0x10de) ++ids[g->device];
  if (ids.empty()) {
    r.evidence = "no NVIDIA GPU in this input";
    return r;
  }
  std::vector<std::string> off;
  for (const auto& [id, n] : ids) {
    const ListedGpu* g = find_in(kP2pdmaGpus, id);
    const std::string who = (n > 1 ? std::to_string(n) + " x " : "") + "10de:" + hex4(id);
    r.evidence += (r.evidence.empty() ? "" : "; ") + who +
                  (g ? " " + std::string(g->pci_ids_name) + ": " + g->model + " is on the list"
                     : ": not on the list");
    if (!g) off.push_back("10de:" + hex4(id));
  }
  r.state = off.empty() ? FactState::Met : FactState::Missing;
  for (size_t i = 0; i < off.size(); ++i)
    r.why_not += (i ? ", " : "GPU ") + off[i] + (i + 1 == off.size() ? " is not on NVIDIA's P2PDMA list" : "");
  if (!off.empty())
    r.fix = "P2PDMA mode runs on A100, A40, L4, L40S, H100, H200, B100, B200 and B300 only; "
            "for this GPU use nvidia-fs (modprobe nvidia-fs, packages nvidia-gds)";
  return r;
}

P2pdmaFact platform_fact(const Snapshot& s) {
  const Machine& m = s.machine;
  P2pdmaFact r{std::string(kP2pdmaFactNames[5]), FactState::Unknown, "", "", ""};
  const ListedGpu* superchip = nullptr;
  for (const Device* g : s.with_role(Role::Gpu))
    if (g->vendor == 0x10de && !superchip) superchip = find_in(kGraceSuperchips, g->device);
  if (is_grace(m) || (superchip && m.arch == "aarch64")) {
    r.state = FactState::Missing;
    r.evidence = "aarch64" + std::string(is_grace(m) ? ", Grace CPU (CPU part 0xd4f)" : "") +
                 (superchip ? ", " + std::string(superchip->model) + " (" + superchip->pci_ids_name + ")"
                            : std::string());
    r.why_not = "the platform is Grace Hopper";
    r.fix = "P2PDMA mode is not supported on Grace Hopper: use nvidia-fs there";
  } else if (m.arch.empty()) {
    r.evidence = "the architecture is not in this input";
  } else {
    r.state = FactState::Met;
    r.evidence = m.arch + (m.cpu_model.empty() ? "" : " (" + m.cpu_model + ")");
  }
  return r;
}

P2pdmaFact storage_fact(const Machine& m) {
  P2pdmaFact r{std::string(kP2pdmaFactNames[6]), FactState::Unknown, "", "", ""};
  if (!m.proc_known) {
    r.evidence = "the mounts are not in this input";
    return r;
  }
  std::vector<std::string> refused;
  for (const Mount& mt : m.mounts) {
    const NvmeController* fabric = fabric_controller(m, mt);
    const auto stack = block_stack(m, mt);
    const bool raid0 = stack && stack->kind == VolumeKind::MdRaid && stack->md_level == "raid0";
    if (fabric)
      refused.push_back(mt.target + " on NVMe-oF (" + fabric->name + " transport " +
                        fabric->transport + ")");
    else if (raid0)
      refused.push_back(mt.target + " on md RAID0 " + stack->describe());
  }
  if (refused.empty()) {
    r.state = FactState::Met;
    r.evidence = "no mount on md RAID0 or NVMe-oF";
    return r;
  }
  r.state = FactState::Missing;
  for (size_t i = 0; i < refused.size(); ++i) r.evidence += (i ? "; " : "") + refused[i];
  r.evidence += " (P2PDMA mode supports neither RAID0 over NVMe nor NVMe-oF)";
  r.why_not = "data on md RAID0 or NVMe-oF";
  r.fix = "serve these mounts through nvidia-fs (it reads md RAID0 and NVMe-oF), or put the data "
          "on a file system directly on a local NVMe namespace";
  return r;
}

P2pdmaFact cufile_fact(const Machine& m) {
  P2pdmaFact r{std::string(kP2pdmaFactNames[7]), FactState::Unknown, "", "", ""};
  if (!m.proc_known) {
    r.evidence = "cufile.json is not in this input";
    return r;
  }
  const CufileSettings& c = m.cufile;
  if (c.found && c.error.empty() && c.use_pci_p2pdma.value_or(false)) {
    r.state = FactState::Met;
    r.evidence = c.path + ": properties.use_pci_p2pdma true";
    return r;
  }
  r.state = FactState::Missing;
  r.evidence = !c.found ? c.path + " not found (use_pci_p2pdma defaults to false)"
               : !c.error.empty()
                   ? c.path + ": " + c.error
                   : c.path + ": properties.use_pci_p2pdma " +
                         (c.use_pci_p2pdma ? "false" : "absent (default false)");
  r.why_not = "cufile.json does not set use_pci_p2pdma";
  r.fix = "set \"properties\": {\"use_pci_p2pdma\": true} in " + c.path +
          " (or the file CUFILE_ENV_PATH_JSON names)";
  return r;
}

}  // namespace

NvidiaKernelModule nvidia_kernel_module(std::string_view line) {
  NvidiaKernelModule k;
  const size_t module = line.find("Kernel Module");
  if (module == std::string_view::npos) return k;
  // The driver's own words for its flavour: "NVIDIA UNIX Open Kernel Module for x86_64" (open
  // modules; some 590 builds wrote "NVIDIA UNIX Open Kernel x86_64 Kernel Module") and "NVIDIA
  // UNIX x86_64 Kernel Module" (proprietary): "Open" before "Kernel Module" is the open one.
  k.flavour = line.substr(0, module).find("Open") != std::string_view::npos
                  ? NvidiaKernelModule::Open
                  : NvidiaKernelModule::Proprietary;
  // The version is the first token after "Kernel Module" that starts with a digit.
  size_t at = module + 13;
  while (at < line.size()) {
    while (at < line.size() && line[at] == ' ') ++at;
    size_t end = line.find(' ', at);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view tok = line.substr(at, end - at);
    if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0]))) {
      k.version = std::string(tok);
      k.major = std::atoi(k.version.c_str());
      break;
    }
    at = end;
  }
  return k;
}

std::string_view fact_state_name(FactState s) {
  switch (s) {
    case FactState::Met: return "met";
    case FactState::Missing: return "missing";
    case FactState::Unknown: return "unknown";
    case FactState::NotNeeded: return "not needed";
  }
  return "unknown";
}

bool P2pdmaReadiness::ready() const {
  return std::all_of(facts.begin(), facts.end(), [](const P2pdmaFact& f) {
    return f.state == FactState::Met || f.state == FactState::NotNeeded;
  });
}

std::vector<const P2pdmaFact*> P2pdmaReadiness::with(FactState s) const {
  std::vector<const P2pdmaFact*> out;
  for (const P2pdmaFact& f : facts)
    if (f.state == s) out.push_back(&f);
  return out;
}

const P2pdmaFact* P2pdmaReadiness::fact(std::string_view name) const {
  for (const P2pdmaFact& f : facts)
    if (f.name == name) return &f;
  return nullptr;
}

std::string P2pdmaReadiness::why_not() const {
  std::string out;
  for (const P2pdmaFact* f : with(FactState::Missing)) out += (out.empty() ? "" : "; ") + f->why_not;
  return out;
}

std::string P2pdmaReadiness::verdict() const {
  if (ready()) return "P2PDMA ready";
  const auto names = [](const std::vector<const P2pdmaFact*>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i]->name;
    return out;
  };
  if (const auto missing = with(FactState::Missing); !missing.empty())
    return "P2PDMA not ready: " + names(missing);
  return "P2PDMA readiness unknown: " + names(with(FactState::Unknown)) + " not read";
}

P2pdmaReadiness p2pdma_readiness(const Snapshot& s) {
  const Machine& m = s.machine;
  return {{kernel_fact(m), module_fact(m), registry_fact(m), multipath_fact(m), gpu_fact(s),
           platform_fact(s), storage_fact(m), cufile_fact(m)}};
}

}  // namespace gdsb::topo
