// GPU facts from NVML (libnvidia-ml.so.1 loaded at run time through gdsb::nvml): product
// name, memory and BAR1 size, current and maximum PCIe generation and width, closest NUMA
// node. Used for live collection only; recorded inputs replay the facts they recorded.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/nvml.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

struct NvmlFactsOpening {
  std::unique_ptr<GpuFactsProvider> provider;  // null when NVML cannot be used here
  std::string unavailable_reason;              // why, naming NVML
};

// Loads NVML (lib_path "" = libnvidia-ml.so.1) and indexes its GPUs by PCI bus id. Never
// throws: a machine without the driver gets a null provider and the reason.
NvmlFactsOpening open_nvml_gpu_facts(const std::string& lib_path);

// The NVLink links of one GPU as NVML reports them (state, remote PCI id and remote device
// type of each link NVML answers for), the facts topo::nvlink_pair judges. nullopt when this
// NVML has no NVLink queries; an empty list is a fact (a GPU without NVLink).
std::optional<std::vector<NvLink>> read_nvlinks(const nvml::Library& lib, nvml::Device d);

}  // namespace gdsb::topo
