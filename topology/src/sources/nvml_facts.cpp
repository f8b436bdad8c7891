#include "gdsb/topo/nvml_facts.hpp"

#include <array>
#include <cstring>
#include <map>
#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"

namespace gdsb::topo {
namespace {

template <class T>
std::optional<int> as_int(const nvml::Result<T>& r) {
  return r.ok() ? std::optional<int>(static_cast<int>(r.value)) : std::nullopt;
}

class NvmlGpuFacts final : public GpuFactsProvider {
 public:
  explicit NvmlGpuFacts(std::unique_ptr<nvml::Library> lib) : lib_(std::move(lib)) {
    // NVML and sysfs spell bus ids differently ("00000000:03:00.0"): join on the
    // normalized form, never on the index.
    const auto count = lib_->device_count();
    for (unsigned i = 0; count.ok() && i < count.value; ++i) {
      const auto handle = lib_->device_by_index(i);
      if (!handle.ok()) continue;
      const auto bus = lib_->bus_id(handle.value);
      if (bus.ok()) by_bdf_[bus.value] = {handle.value, static_cast<int>(i)};
    }
  }

  std::string name() const override { return "nvml"; }

  std::optional<GpuFacts> facts_for(const Device& gpu) const override {
    const auto it = by_bdf_.find(nvml::normalize_bus_id(gpu.bdf));
    if (it == by_bdf_.end()) return std::nullopt;  // a GPU NVML does not manage (vfio, MIG)
    const nvml::Device d = it->second.handle;
    GpuFacts f;
    f.source = "nvml";
    f.nvml_index = it->second.index;
    if (const auto u = lib_->uuid(d); u.ok()) f.uuid = u.value;
    if (const auto n = lib_->name(d); n.ok()) f.name = n.value;
    if (const auto m = lib_->memory_info(d); m.ok()) f.memory_bytes = m.value.total;
    if (const auto b = lib_->bar1_memory_info(d); b.ok()) {
      f.bar1_total_bytes = b.value.bar1_total;
      f.bar1_used_bytes = b.value.bar1_used;
    }
    f.pcie_cur_gen = as_int(lib_->curr_pcie_link_generation(d));
    f.pcie_cur_width = as_int(lib_->curr_pcie_link_width(d));
    f.pcie_max_gen = as_int(lib_->max_pcie_link_generation(d));
    f.pcie_max_width = as_int(lib_->max_pcie_link_width(d));
    if (const auto nodes = lib_->memory_affinity_nodes(d); nodes.ok() && nodes.value.size() == 1)
      f.numa_node = static_cast<int>(nodes.value.front());
    f.nvlinks = read_nvlinks(*lib_, d);
    return f;
  }

  std::optional<GpuErrorCounters> errors_for(const Device& gpu) const override {
    const auto it = by_bdf_.find(nvml::normalize_bus_id(gpu.bdf));
    if (it == by_bdf_.end()) return std::nullopt;
    return read_gpu_errors(*lib_, it->second.handle);
  }

  std::vector<GpuPairFacts> pair_facts(const std::vector<const Device*>& gpus) const override {
    static constexpr std::array<std::pair<nvml::P2PCapsIndex, const char*>, 5> kCaps{
        {{nvml::P2PCapsIndex::Read, "read"},
         {nvml::P2PCapsIndex::Write, "write"},
         {nvml::P2PCapsIndex::NvLink, "nvlink"},
         {nvml::P2PCapsIndex::Atomics, "atomics"},
         {nvml::P2PCapsIndex::Pci, "pci"}}};
    std::vector<GpuPairFacts> out;
    for (const Device* a : gpus) {
      for (const Device* b : gpus) {
        const auto ha = by_bdf_.find(nvml::normalize_bus_id(a->bdf));
        const auto hb = by_bdf_.find(nvml::normalize_bus_id(b->bdf));
        if (a == b || ha == by_bdf_.end() || hb == by_bdf_.end()) continue;
        GpuPairFacts p{a->bdf, b->bdf, {}, {}};
        for (const auto& [cap, key] : kCaps)
          if (const auto st = lib_->p2p_status(ha->second.handle, hb->second.handle, cap); st.ok())
            p.p2p[key] = std::string(nvml::p2p_status_code(st.value));
        if (const auto lv = lib_->common_ancestor(ha->second.handle, hb->second.handle); lv.ok())
          p.common_ancestor = std::string(nvml::topology_level_name(lv.value));
        out.push_back(std::move(p));
      }
    }
    return out;
  }

 private:
  struct Handle {
    nvml::Device handle;
    int index;  // NVML's enumeration index (dcgm-exporter's `gpu`)
  };
  std::unique_ptr<nvml::Library> lib_;
  std::map<std::string, Handle> by_bdf_;
};

}  // namespace

// Every link NVML answers for (it answers NOT_SUPPORTED past the GPU's last link, and
// for every link of a GPU without NVLink: then the list is empty, a fact).
std::optional<std::vector<NvLink>> read_nvlinks(const nvml::Library& lib, nvml::Device d) {
  std::vector<NvLink> out;
  bool answered = false;
  for (unsigned i = 0; i < nvml::kNvLinkMaxLinks; ++i) {
    const auto active = lib.nvlink_active(d, i);
    if (active.rc == nvml::kErrorFunctionNotFound) return std::nullopt;
    answered = answered || active.ok() || active.rc == nvml::kErrorNotSupported ||
               active.rc == nvml::kErrorInvalidArgument;
    if (!active.ok()) continue;
    NvLink l;
    l.link = static_cast<int>(i);
    l.active = active.value;
    if (l.active) {
      if (const auto r = lib.nvlink_remote_pci_info(d, i); r.ok())
        l.remote = nvml::normalize_bus_id(
            std::string_view(r.value.bus_id, strnlen(r.value.bus_id, nvml::kPciBusIdBufferSize)));
      const auto t = lib.nvlink_remote_device_type(d, i);
      l.remote_type = std::string(
          nvml::nvlink_device_type_name(t.ok() ? t.value : nvml::NvLinkDeviceType::Unknown));
    }
    out.push_back(std::move(l));
  }
  if (!answered) return std::nullopt;
  return out;
}

NvmlFactsOpening open_nvml_gpu_facts(const std::string& lib_path) {
  NvmlFactsOpening out;
  try {
    out.provider = std::make_unique<NvmlGpuFacts>(nvml::Library::open(lib_path));
  } catch (const Error& e) {
    out.unavailable_reason = e.what();
  }
  return out;
}

}  // namespace gdsb::topo
