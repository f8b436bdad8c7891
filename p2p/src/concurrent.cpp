// --concurrent: the groups of GPUs that share an upstream, and the figures of each group's
// GPUs copying to (from) the host at once next to their one-GPU figures.
#include <algorithm>
#include <numeric>

#include "concurrent.hpp"

namespace gdsb::p2p {

namespace {

struct Tier {
  const char* shared;
  bool (*joins)(const CapabilityReport&, const PairCaps&);
};

bool below(const PairCaps& p, nvml::TopologyLevel level) {
  return p.level && static_cast<int>(*p.level) <= static_cast<int>(level);
}

const Tier kTiers[] = {
    {"a PCIe switch (NVML PIX/PXB)",
     [](const CapabilityReport&, const PairCaps& p) { return below(p, nvml::TopologyLevel::Multiple); }},
    {"a host bridge / root port (NVML PHB)",
     [](const CapabilityReport&, const PairCaps& p) { return below(p, nvml::TopologyLevel::HostBridge); }},
    {"a socket (NVML NODE, or the same NUMA node)",
     [](const CapabilityReport& caps, const PairCaps& p) {
       const auto& na = caps.gpus[static_cast<std::size_t>(p.a)].numa_node;
       const auto& nb = caps.gpus[static_cast<std::size_t>(p.b)].numa_node;
       return below(p, nvml::TopologyLevel::Node) || (na && nb && *na == *nb);
     }},
};

// Connected components of the GPUs under `joins`, as sorted index lists.
std::vector<std::vector<int>> components(const CapabilityReport& caps, const Tier& tier) {
  std::vector<int> root(caps.gpus.size());
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](int x) {
    while (root[static_cast<std::size_t>(x)] != x) x = root[static_cast<std::size_t>(x)];
    return x;
  };
  for (const PairCaps& p : caps.pairs) {
    if (tier.joins(caps, p)) root[static_cast<std::size_t>(find(p.a))] = find(p.b);
  }
  std::vector<std::vector<int>> out;
  for (std::size_t r = 0; r < root.size(); ++r) {
    std::vector<int> set;
    for (std::size_t i = 0; i < root.size(); ++i) {
      if (find(static_cast<int>(i)) == static_cast<int>(r)) set.push_back(static_cast<int>(i));
    }
    if (!set.empty()) out.push_back(std::move(set));
  }
  return out;
}

// In a VM, NVML's levels describe the hypervisor's virtual PCIe tree (issue 35): what the
// GPUs share there is virtual, and the physical links behind it are not visible.
std::string shared_text(const CapabilityReport& caps, const Tier& tier) {
  return std::string(tier.shared) +
         (caps.hypervisor_devices.empty() ? "" : " of the VM's virtual PCIe topology");
}

}  // namespace

std::vector<ConcurrentGroup> upstream_groups(const CapabilityReport& caps) {
  std::vector<ConcurrentGroup> out;
  const std::size_t n = caps.gpus.size();
  for (const Tier& tier : kTiers) {
    for (std::vector<int>& set : components(caps, tier)) {
      if (set.size() < 2 || set.size() >= n) continue;
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const ConcurrentGroup& g) { return g.gpus == set; });
      if (seen) continue;
      ConcurrentGroup g;
      g.gpus = std::move(set);
      g.shared = shared_text(caps, tier);
      out.push_back(std::move(g));
    }
  }
  return out;
}

std::string all_gpus_share(const CapabilityReport& caps) {
  for (const Tier& tier : kTiers) {
    if (components(caps, tier).size() == 1) return "all GPUs: they share " + shared_text(caps, tier);
  }
  return "all GPUs";
}

ConcurrentSeries measure_concurrent(CopyTimer& timer, const CapabilityReport& caps,
                                    const MeasureOptions& o, CopyKind kind,
                                    const HostSeries& singles) {
  ConcurrentSeries s;
  if (caps.gpus.size() < 2) {
    s.waived = "needs at least 2 GPUs";
    return s;
  }
  ConcurrentGroup all;
  for (const GpuInfo& g : caps.gpus) all.gpus.push_back(g.index);
  all.shared = all_gpus_share(caps);
  s.groups.push_back(std::move(all));
  std::vector<ConcurrentGroup> sub = upstream_groups(caps);
  for (ConcurrentGroup& g : sub) {
    for (int& i : g.gpus) i = caps.gpus[static_cast<std::size_t>(i)].index;
  }
  if (!sub.empty()) s.grouping = "groups from NVML's common-ancestor level and the GPUs' NUMA nodes";
  else if (s.groups[0].shared != "all GPUs") s.grouping = "one group: " + s.groups[0].shared;
  else s.grouping = "one group: the topology does not group these GPUs";
  s.groups.insert(s.groups.end(), sub.begin(), sub.end());
  if (!caps.hypervisor_devices.empty())
    s.grouping += "; these GPUs are in a VM (" + caps.hypervisor_devices +
                  " are a hypervisor's devices): the bridges and ports NVML reports are the "
                  "hypervisor's virtual ones, so the physical cause of a shortfall is not "
                  "visible from inside the VM";
  const std::uint64_t per_gpu = o.bytes * static_cast<std::uint64_t>(o.loops);
  for (ConcurrentGroup& g : s.groups) {
    std::vector<ConcurrentGpu> gpus;
    double sum = 0;
    bool all_single = true;
    for (int idx : g.gpus) {
      const auto it = std::find_if(caps.gpus.begin(), caps.gpus.end(),
                                   [&](const GpuInfo& x) { return x.index == idx; });
      gpus.push_back({idx, it->numa_node});
      const auto f = std::find_if(singles.items.begin(), singles.items.end(),
                                  [&](const HostFigure& x) { return x.gpu == idx; });
      if (f == singles.items.end()) all_single = false;
      else sum += f->gb_s;
    }
    const ConcurrentSamples cs = timer.time_concurrent(kind, gpus, o.bytes, o.loops, o.warmups,
                                                       o.repetitions);
    const double total = static_cast<double>(per_gpu) * static_cast<double>(gpus.size());
    for (double sec : cs.common_s) g.samples_gb_s.push_back(sec > 0 ? total / sec / 1e9 : 0.0);
    g.gb_s = median(g.samples_gb_s);
    for (const std::vector<double>& own : cs.per_gpu_s) {
      std::vector<double> rates;
      for (double sec : own) rates.push_back(sec > 0 ? static_cast<double>(per_gpu) / sec / 1e9 : 0.0);
      g.per_gpu_gb_s.push_back(median(rates));
    }
    if (all_single && !singles.waived) {
      g.single_sum_gb_s = sum;
      if (sum > 0) g.ratio = g.gb_s / sum;
    }
  }
  return s;
}

}  // namespace gdsb::p2p
