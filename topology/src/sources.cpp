#include <utility>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/nvml_facts.hpp"

namespace gdsb::topo {

bool InputSources::live() const {
  return sysfs_root.empty() && pci_dump.empty() && lspci_text.empty() && hwloc_xml.empty() &&
         from_snapshot.empty();
}

std::string InputSources::description() const {
  if (!sysfs_root.empty()) return "--sysfs-root " + sysfs_root;
  if (!pci_dump.empty()) return "--pci-dump " + pci_dump;
  if (!lspci_text.empty()) return "--lspci-text " + lspci_text;
  if (!hwloc_xml.empty()) return "--hwloc-xml " + hwloc_xml;
  if (!from_snapshot.empty()) return "--from-snapshot " + from_snapshot;
  return "live";
}

Snapshot collect_from(const InputSources& in, const CollectOptions& opt) {
  if (!in.sysfs_root.empty()) return collect_sysfs_root(in.sysfs_root, opt);
  if (!in.pci_dump.empty()) return collect_pci_dump(in.pci_dump, opt);
  if (!in.lspci_text.empty()) return collect_lspci_text(in.lspci_text, opt);
  if (!in.hwloc_xml.empty()) return collect_hwloc_xml(in.hwloc_xml, opt);
  if (!in.from_snapshot.empty()) return load_snapshot(in.from_snapshot);
  Snapshot s = collect_live(opt);
  if (opt.use_nvml && !s.with_role(Role::Gpu).empty()) {
    NvmlFactsOpening nv = open_nvml_gpu_facts(opt.nvml_lib);
    if (nv.provider)
      apply_gpu_facts(s, *nv.provider);
    else
      s.notes.push_back("GPU facts (BAR1, memory, links) not read: " + nv.unavailable_reason);
  }
  return s;
}

}  // namespace gdsb::topo
