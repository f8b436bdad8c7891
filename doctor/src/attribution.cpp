#include "attribution.hpp"

#include <algorithm>
#include <cctype>

#include "gdsb/nvml.hpp"

namespace gdsb::doctor::detail {
namespace {

// CUDA_VISIBLE_DEVICES as PCI-order indices ("3,1"); nullopt when an entry is no index
// (a UUID, a MIG instance): then only the recorded bus id can tell the GPU.
std::optional<std::vector<int>> visible_indices(const std::string& v) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at <= v.size()) {
    const std::size_t comma = std::min(v.find(',', at), v.size());
    const std::string item = v.substr(at, comma - at);
    if (item.empty() || item.size() > 4) return std::nullopt;
    for (char c : item)
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    out.push_back(std::stoi(item));
    at = comma + 1;
  }
  return out;
}

}  // namespace

RunGpu place_run(const RunResult& r, const CudaOrdering& ordering,
                 const std::vector<std::string>& pci_gpus) {
  RunGpu out;
  const int d = r.workload.gpu;
  if (!r.path.gpu_pci_bus_id.empty()) {
    out.bdf = nvml::normalize_bus_id(r.path.gpu_pci_bus_id);
    return out;
  }
  if (pci_gpus.empty()) {
    out.cuda_index = d;
    return out;
  }
  if (pci_gpus.size() == 1) {
    out.bdf = pci_gpus.front();
    return out;
  }
  const std::string no_id = "it records no GPU PCI bus id (a report of gdsb-io before issue 24) and ";
  if (ordering.device_order != "PCI_BUS_ID") {
    out.unplaced = no_id + "CUDA_DEVICE_ORDER was " +
                   (ordering.device_order ? *ordering.device_order : std::string("not set")) +
                   ", so CUDA numbered the " + std::to_string(pci_gpus.size()) +
                   " GPUs fastest first, not in PCI order";
    return out;
  }
  std::vector<int> order;
  if (ordering.visible_devices) {
    const auto v = visible_indices(*ordering.visible_devices);
    if (!v) {
      out.unplaced = no_id + "CUDA_VISIBLE_DEVICES=" + *ordering.visible_devices +
                     " names GPUs by something other than their PCI-order index";
      return out;
    }
    order = *v;
  } else {
    for (int i = 0; i < static_cast<int>(pci_gpus.size()); ++i) order.push_back(i);
  }
  const auto at = static_cast<std::size_t>(d);
  if (d < 0 || at >= order.size() || order[at] >= static_cast<int>(pci_gpus.size())) {
    out.unplaced = no_id + "-d " + std::to_string(d) + " is no GPU of the " +
                   std::to_string(pci_gpus.size()) + " the platform lists" +
                   (ordering.visible_devices
                        ? " under CUDA_VISIBLE_DEVICES=" + *ordering.visible_devices
                        : std::string());
    return out;
  }
  out.bdf = pci_gpus[static_cast<std::size_t>(order[at])];
  return out;
}

RunGpu place_run(const Figures& figures, const Platform* platform, const RunResult& r) {
  std::vector<std::string> pci_gpus;
  if (platform)
    for (const topo::Device* g : platform->view->gpus()) pci_gpus.push_back(g->bdf);
  CudaOrdering ordering;
  const RunResult* first = figures.runs.data();
  if (&r >= first && &r < first + figures.runs.size()) {
    const auto i = static_cast<std::size_t>(&r - first);
    if (i < figures.run_ordering.size()) ordering = figures.run_ordering[i];
  }
  return place_run(r, ordering, pci_gpus);
}

}  // namespace gdsb::doctor::detail
