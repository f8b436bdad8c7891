#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/kernel_log.hpp"
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

namespace {

Snapshot collect_pci(const InputSources& in, const CollectOptions& opt) {
  if (!in.sysfs_root.empty()) return collect_sysfs_root(in.sysfs_root, opt);
  if (!in.pci_dump.empty()) return collect_pci_dump(in.pci_dump, opt);
  if (!in.lspci_text.empty()) return collect_lspci_text(in.lspci_text, opt);
  if (!in.hwloc_xml.empty()) return collect_hwloc_xml(in.hwloc_xml, opt);
  if (!in.from_snapshot.empty()) return load_snapshot(in.from_snapshot);
  Snapshot s = collect_live(opt);
  if (opt.use_nvml && !s.with_role(Role::Gpu).empty()) {
    NvmlFactsOpening nv = open_nvml_gpu_facts(opt.nvml_lib);
    if (nv.provider) {
      apply_gpu_facts(s, *nv.provider);
      for (const Device* g : s.with_role(Role::Gpu))
        if (auto e = nv.provider->errors_for(*g)) s.faults.gpu_errors[g->bdf] = std::move(*e);
    } else {
      s.notes.push_back("GPU facts (BAR1, memory, links) not read: " + nv.unavailable_reason);
      s.faults.gpu_errors_unread = nv.unavailable_reason;
    }
  } else if (!opt.use_nvml) {
    s.faults.gpu_errors_unread = "--no-nvml";
  }
  return s;
}

}  // namespace

Snapshot collect_from(const InputSources& in, const CollectOptions& opt) {
  Snapshot s = collect_pci(in, opt);
  // The kernel log: a file given goes with any input (and replaces a snapshot's); live reads
  // /dev/kmsg; a recording without one says so.
  if (!opt.kernel_log.empty()) {
    s.faults.kernel_log = read_kernel_log_file(opt.kernel_log);
    s.faults.kernel_log_unread.clear();
  } else if (in.live() && opt.read_kmsg) {
    try {
      s.faults.kernel_log = read_kmsg(opt.kmsg_path, opt.kmsg_after_seq);
      s.faults.kernel_log->boot_id = s.faults.boot_id;
    } catch (const RuntimeError& e) {
      s.faults.kernel_log_unread = e.what();
    }
  } else if (in.live()) {
    s.faults.kernel_log_unread = "not read (asked not to)";
  } else if (!s.faults.kernel_log && s.faults.kernel_log_unread.empty()) {
    s.faults.kernel_log_unread = "the recording holds no kernel log (add --kernel-log FILE)";
  }
  if (!in.live() && in.from_snapshot.empty() && s.faults.gpu_errors_unread.empty())
    s.faults.gpu_errors_unread = "a recording holds no NVML facts";
  return s;
}

}  // namespace gdsb::topo
