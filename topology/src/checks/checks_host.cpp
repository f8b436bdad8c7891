// Host-side checks: IOMMU mode, BAR1 size, NUMA locality.
#include <cstdio>
#include <map>
#include <sstream>

#include "check_util.hpp"
#include "gdsb/topo/checks.hpp"

namespace gdsb::topo {
namespace {

std::string mib(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f MiB", static_cast<double>(bytes) / (1 << 20));
  return b;
}

bool translated(const std::string& type) { return type == "DMA" || type == "DMA-FQ"; }

class IommuCheck final : public Check {
 public:
  std::string id() const override { return "iommu"; }
  std::string title() const override { return "IOMMU mode"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    const Machine& m = ctx.snapshot.machine;
    if (!m.iommu_known)
      return {waived(id(), title(),
                     "the " + std::string(source_kind_name(ctx.snapshot.kind)) +
                         " input has no /sys/kernel/iommu_groups or /sys/class/iommu")};
    CheckResult r = make(id(), title(), Verdict::Pass);
    std::istringstream cmd(m.cmdline);
    std::string tok, keys;
    while (cmd >> tok)
      if (tok.rfind("intel_iommu=", 0) == 0 || tok.rfind("amd_iommu=", 0) == 0 ||
          tok.rfind("iommu=", 0) == 0 || tok.rfind("iommu.", 0) == 0)
        keys += (keys.empty() ? "" : " ") + tok;
    r.evidence.push_back("/proc/cmdline IOMMU keys: " +
                         (keys.empty() ? std::string("none") : keys));
    std::map<std::string, int> by_type;
    for (const auto& [g, t] : m.iommu_group_types) ++by_type[t];
    if (m.iommu_group_types.empty()) {
      r.title = "IOMMU off";
      r.evidence.push_back("/sys/kernel/iommu_groups is empty, /sys/class/iommu has " +
                           std::to_string(m.iommu_units.size()) + " unit(s)");
      return {r};
    }
    std::string types;
    for (const auto& [t, n] : by_type)
      types += (types.empty() ? "" : ", ") + std::to_string(n) + " " + t;
    r.evidence.push_back("/sys/kernel/iommu_groups/*/type: " + types);
    // What matters is the groups of the devices GDS moves data between.
    std::vector<const Device*> subjects = ctx.view.gpus();
    for (const Device* p : ctx.view.peers())
      if (p->role == Role::Nvme || ctx.model.is_data_nic(p->bdf)) subjects.push_back(p);
    bool any_translated = false;
    for (const Device* d : subjects) {
      if (!d->iommu_group) continue;
      auto it = m.iommu_group_types.find(*d->iommu_group);
      std::string t = it == m.iommu_group_types.end() ? "unknown" : it->second;
      r.devices.push_back(d->bdf);
      r.evidence.push_back(d->bdf + " (" + std::string(role_name(d->role)) + ") in group " +
                           std::to_string(*d->iommu_group) + ": " + t);
      any_translated = any_translated || translated(t);
    }
    if (subjects.empty())
      for (const auto& [g, t] : m.iommu_group_types)
        any_translated = any_translated || translated(t);
    r.title = any_translated ? "IOMMU translating DMA" : "IOMMU in passthrough (identity)";
    if (!any_translated) return {r};
    if (is_grace(m)) {
      r.evidence.push_back(
          "NVIDIA Grace CPU: GDS is validated with the IOMMU translating (SMMUv3)");
      return {r};
    }
    r.verdict = Verdict::Warn;
    r.consequence =
        "every P2P and DMA transaction goes through IOMMU translation: GDS throughput is capped "
        "and ACS forces P2P through the root complex";
    r.remedy =
        is_x86(m)
            ? std::string(m.cpu_vendor == "AuthenticAMD" ? "amd_iommu=on " : "intel_iommu=on ") +
                  "iommu=pt on the kernel command line (GRUB_CMDLINE_LINUX, update-grub, reboot)"
            : "iommu.passthrough=1 on the kernel command line";
    return {r};
  }
};

class Bar1Check final : public Check {
 public:
  std::string id() const override { return "bar1"; }
  std::string title() const override { return "GPU BAR1 size vs GPU memory"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    if (ctx.view.gpus().empty()) return {waived(id(), title(), "no NVIDIA GPU found")};
    std::vector<CheckResult> out;
    for (const Device* g : ctx.view.gpus()) {
      std::string t = ctx.view.gpu_label(g->bdf) + " BAR1";
      auto f = ctx.snapshot.gpu_facts.find(g->bdf);
      const GpuFacts* facts = f == ctx.snapshot.gpu_facts.end() ? nullptr : &f->second;
      // The driver's BAR1 size (NVML) is what cuFile can map; it wins over the PCI resource.
      const bool nvml_bar1 = facts && facts->bar1_total_bytes;
      if (!g->bars_known && !nvml_bar1) {
        out.push_back(waived(id(), t,
                             "BAR sizes are not in this input (sysfs `resource` or lspci Region "
                             "lines) and NVML gave no BAR1 size"));
        out.back().devices.push_back(g->bdf);
        continue;
      }
      Bar nvml_bar{1, nvml_bar1 ? *facts->bar1_total_bytes : 0, true, true};
      const Bar* bar1 = nvml_bar1 ? &nvml_bar : second_memory_bar(*g);
      CheckResult r = make(id(), t, Verdict::Pass);
      r.devices.push_back(g->bdf);
      if (!bar1) {
        r.verdict = Verdict::Fail;
        r.evidence.push_back(g->bdf + ": BAR1 (resource index " +
                             std::to_string(bar1_resource_index(*g)) + ") is unassigned");
        r.consequence =
            "GDS cannot map GPU memory for P2P without BAR1: cuFile runs in compat mode";
        r.remedy = "enable Above 4G Decoding and Resizable BAR in the BIOS";
        out.push_back(std::move(r));
        continue;
      }
      if (nvml_bar1) {
        std::string used =
            facts->bar1_used_bytes ? ", " + mib(*facts->bar1_used_bytes) + " used" : "";
        r.evidence.push_back(g->bdf + " BAR1 " + mib(bar1->size) + used + " (" + facts->source +
                             (facts->name.empty() ? "" : ", " + facts->name) + ")");
      } else {
        r.evidence.push_back(g->bdf + " BAR1 (resource " + std::to_string(bar1->index) + ", " +
                             (bar1->prefetchable ? "" : "non-") + "prefetchable) " +
                             mib(bar1->size));
      }
      // A plain value rather than std::optional: GCC 12 at -O3 reports a false
      // -Wmaybe-uninitialized on the optional's payload here.
      const uint64_t mem = facts && facts->memory_bytes ? *facts->memory_bytes : 0;
      constexpr uint64_t kTiny = 256ULL << 20;
      if (bar1->size <= kTiny) {
        r.verdict = Verdict::Fail;
        r.consequence = "a " + mib(bar1->size) +
                        " BAR1 limits pinned GDS buffers to a few MiB per GPU: cuFile "
                        "falls back to bounce buffers";
        r.remedy =
            "enable Above 4G Decoding / Resizable BAR in the BIOS (or select the large-BAR1 "
            "profile "
            "with nvidia-smi/displaymodeselector)";
        if (mem > 0) r.evidence.push_back("GPU memory " + mib(mem) + " (" + facts->source + ")");
      } else if (mem > 0) {
        r.evidence.push_back("GPU memory " + mib(mem) + " (" + facts->source + ")");
        if (bar1->size < mem) {
          r.verdict = Verdict::Warn;
          r.consequence = "BAR1 is smaller than GPU memory: at most " + mib(bar1->size) +
                          " of GPU buffers can be registered with cuFile at once";
          r.remedy = "enable Resizable BAR in the BIOS, or register smaller buffers";
        }
      } else {
        // Without NVML the memory size is unknown, but a BAR1 far above the 256 MiB legacy
        // window means large BAR1 is enabled (the driver sizes it to the memory on data
        // center GPUs): passes, saying what was not compared.
        r.evidence.push_back("GPU memory size unknown without NVML: BAR1 is a large BAR (above "
                             "the 256 MiB legacy window), not compared with the memory size");
      }
      out.push_back(std::move(r));
    }
    return out;
  }
};

class NumaCheck final : public Check {
 public:
  std::string id() const override { return "numa"; }
  std::string title() const override { return "NUMA locality of GPUs and their drives/NICs"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    if (auto w = waive_without_pairs(ctx, id(), title())) return {*w};
    const Snapshot& s = ctx.snapshot;
    if (s.machine.numa_nodes == 1) {
      CheckResult r = make(id(), title(), Verdict::Pass);
      r.evidence.push_back("one NUMA node: every device is local");
      return {r};
    }
    std::vector<CheckResult> out;
    CheckResult ok = make(id(), title(), Verdict::Pass);
    for (const Device* g : ctx.view.gpus()) {
      auto gn = ctx.view.numa_of(*g);
      if (!gn) {
        out.push_back(waived(id(), ctx.view.gpu_label(g->bdf) + " NUMA node",
                             "NUMA node of " + g->bdf + " unknown"));
        continue;
      }
      CheckResult r = make(id(),
                           ctx.view.gpu_label(g->bdf) + " on NUMA node " + std::to_string(*gn) +
                               " with remote drives/NICs",
                           Verdict::Warn);
      r.devices.push_back(g->bdf);
      for (DataSource kind : {DataSource::LocalNvme, DataSource::DataNic})
        for (const DataPath* path : ctx.model.nearest(g->bdf, kind)) {
          const Pair* p = path->pair;
          const Role role = p->peer_role;
          auto pn = ctx.view.numa_of(*s.find(p->peer));
          std::string line = p->peer + " (" + std::string(role_name(role)) + ") on node " +
                             (pn ? std::to_string(*pn) : std::string("?"));
          if (pn && *pn != *gn) {
            r.devices.push_back(p->peer);
            r.evidence.push_back(line);
          } else {
            ok.evidence.push_back(ctx.view.gpu_label(g->bdf) + " node " + std::to_string(*gn) +
                                  ": " + line);
          }
        }
      if (r.devices.size() > 1) {
        r.consequence =
            "bounce buffers and CPU threads on the wrong node add a socket hop to the CPU path";
        r.remedy = "run with the GPU's node: gdsb-io -n " + std::to_string(*gn) +
                   " or numactl --cpunodebind=" + std::to_string(*gn) +
                   " --membind=" + std::to_string(*gn);
        out.push_back(std::move(r));
      }
    }
    if (out.empty()) out.push_back(std::move(ok));
    return out;
  }
};

}  // namespace

std::unique_ptr<Check> make_iommu_check() { return std::make_unique<IommuCheck>(); }
std::unique_ptr<Check> make_bar1_check() { return std::make_unique<Bar1Check>(); }
std::unique_ptr<Check> make_numa_check() { return std::make_unique<NumaCheck>(); }

}  // namespace gdsb::topo
