// NvmlLayer over the gdsb::nvml shim.
#include "gdsb/error.hpp"
#include "gdsb/p2p/layers.hpp"
#include "gdsb/topo/nvlink.hpp"
#include "gdsb/topo/nvml_facts.hpp"

namespace gdsb::p2p {

namespace {

class RealNvmlLayer final : public NvmlLayer {
 public:
  explicit RealNvmlLayer(const std::string& path) {
    try {
      lib_ = nvml::Library::open(path);
    } catch (const RuntimeError& e) {
      reason_ = e.what();
    }
  }

  Availability probe() override {
    if (!lib_) return Availability::no(reason_);
    const auto count = lib_->device_count();
    if (!count.ok()) return Availability::no("nvmlDeviceGetCount_v2: " + lib_->error_string(count.rc));
    return Availability::yes();
  }

  std::vector<NvmlGpu> gpus() override {
    if (!lib_) return {};
    if (!loaded_) load();
    return gpus_;
  }

  std::optional<nvml::P2PStatus> p2p_status(int a, int b, nvml::P2PCapsIndex cap) override {
    return lib_->p2p_status(handle(a), handle(b), cap).get();
  }

  std::optional<nvml::TopologyLevel> common_ancestor(int a, int b) override {
    return lib_->common_ancestor(handle(a), handle(b)).get();
  }

  // The one NV# rule, topo::nvlink_pair (gdsb/topo/nvlink.hpp), over the links NVML gave
  // for every GPU and NVML's P2P NVLink status of this pair, as a snapshot records them.
  int nvlinks_between(int a, int b) override {
    if (!loaded_) load();
    const std::string& bdf_a = gpus_.at(static_cast<std::size_t>(a)).bdf;
    const std::string& bdf_b = gpus_.at(static_cast<std::size_t>(b)).bdf;
    topo::GpuPairFacts pair{bdf_a, bdf_b, {}, {}};
    if (const auto nv = p2p_status(a, b, nvml::P2PCapsIndex::NvLink))
      pair.p2p["nvlink"] = std::string(nvml::p2p_status_code(*nv));
    nvlink_facts_.gpu_pairs = {std::move(pair)};
    const auto links = topo::nvlink_pair(nvlink_facts_, bdf_a, bdf_b);
    return links ? links->links : 0;
  }

 private:
  nvml::Device handle(int index) {
    if (!loaded_) load();
    return handles_.at(static_cast<std::size_t>(index));
  }

  void load() {
    loaded_ = true;
    const unsigned n = lib_->device_count().value;
    for (unsigned i = 0; i < n; ++i) {
      const auto h = lib_->device_by_index(i);
      if (!h.ok()) {
        throw RuntimeError("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) +
                           "): " + lib_->error_string(h.rc));
      }
      NvmlGpu g;
      g.bdf = lib_->bus_id(h.value).value;
      g.name = lib_->name(h.value).value;
      const auto mg = lib_->max_pcie_link_generation(h.value);
      const auto mw = lib_->max_pcie_link_width(h.value);
      if (mg.ok() && mw.ok()) g.max_link = PcieLink{static_cast<int>(mg.value), static_cast<int>(mw.value)};
      const auto cg = lib_->curr_pcie_link_generation(h.value);
      const auto cw = lib_->curr_pcie_link_width(h.value);
      if (cg.ok() && cw.ok()) g.cur_link = PcieLink{static_cast<int>(cg.value), static_cast<int>(cw.value)};
      // The host node the GPU hangs off (as nvidia-smi's NUMA Affinity), when it is one.
      const auto nodes = lib_->memory_affinity_nodes(h.value);
      if (nodes.ok() && nodes.value.size() == 1) g.numa_node = static_cast<int>(nodes.value.front());
      const auto bar1 = lib_->bar1_memory_info(h.value);
      if (bar1.ok()) g.bar1_total = bar1.value.bar1_total;
      topo::GpuFacts facts;
      facts.nvlinks = topo::read_nvlinks(*lib_, h.value);
      nvlink_facts_.gpu_facts[g.bdf] = std::move(facts);
      g.nvlinks_active = topo::nvlinks_active(nvlink_facts_, g.bdf).value_or(0);
      handles_.push_back(h.value);
      gpus_.push_back(std::move(g));
    }
  }

  std::unique_ptr<nvml::Library> lib_;
  std::string reason_;
  bool loaded_ = false;
  std::vector<nvml::Device> handles_;
  std::vector<NvmlGpu> gpus_;
  topo::Snapshot nvlink_facts_;  // gpu_facts: NVML's NVLink links of every GPU, by bdf
};

class UnavailableNvmlLayer final : public NvmlLayer {
 public:
  explicit UnavailableNvmlLayer(std::string reason) : reason_(std::move(reason)) {}
  Availability probe() override { return Availability::no(reason_); }
  std::vector<NvmlGpu> gpus() override { return {}; }
  std::optional<nvml::P2PStatus> p2p_status(int, int, nvml::P2PCapsIndex) override { return {}; }
  std::optional<nvml::TopologyLevel> common_ancestor(int, int) override { return {}; }
  int nvlinks_between(int, int) override { return 0; }

 private:
  std::string reason_;
};

}  // namespace

std::unique_ptr<NvmlLayer> make_nvml_layer(const std::string& library_path) {
  return std::make_unique<RealNvmlLayer>(library_path);
}

std::unique_ptr<NvmlLayer> make_unavailable_nvml_layer(std::string reason) {
  return std::make_unique<UnavailableNvmlLayer>(std::move(reason));
}

}  // namespace gdsb::p2p
