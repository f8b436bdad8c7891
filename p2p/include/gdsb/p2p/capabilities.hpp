// The capability pipeline: reads the CUDA, NVML and PCIe topology layers once and produces
// plain data (GPUs, pairs, named matrices, waivers). Judging and printing read only this.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gdsb/p2p/layers.hpp"
#include "gdsb/p2p/pcie_source.hpp"

namespace gdsb::p2p {

struct Waiver {
  std::string what;
  std::string reason;
};

// A string matrix as stored in gdsbench.p2p/1 "matrices".
struct Matrix {
  std::vector<std::pair<std::string, std::string>> legend;  // code -> meaning, in order
  std::vector<std::string> rows;
  std::vector<std::string> cols;
  std::vector<std::vector<std::string>> cells;
};

struct GpuInfo {
  int index = 0;  // CUDA ordinal; the NVML index when CUDA is unavailable
  std::string bdf;
  std::string name;
  std::optional<int> nvml_index;
  std::optional<PcieLink> pcie;      // maximum trainable link (the theoretical figure)
  std::optional<PcieLink> pcie_cur;  // as read now
  std::optional<int> nvlinks;        // active NVLink links; nullopt without NVML
  std::optional<int> numa_node;
  std::optional<int> cc_major;
  std::optional<int> cc_minor;
};

inline constexpr int kNvmlCapCount = 5;  // READ, WRITE, NVLINK, ATOMICS, PCI

struct PairCaps {
  int a = 0;  // indices into CapabilityReport::gpus
  int b = 0;
  std::optional<bool> cuda_access;
  std::optional<CudaP2PAttributes> cuda_attr;
  std::array<std::optional<nvml::P2PStatus>, kNvmlCapCount> nvml{};
  std::optional<nvml::TopologyLevel> level;
  std::optional<int> nvlinks;
  std::string topology;       // "NV18", "PIX", ... ; "" when unknown
  std::optional<bool> direct; // direct P2P usable (CUDA's answer, else NVML read+write)
  std::string verdict;        // one short line
};

struct CapabilityReport {
  std::vector<GpuInfo> gpus;
  std::vector<PairCaps> pairs;  // ordered pairs a != b, row-major
  std::vector<PciePair> peers;  // GPU x NVMe/NIC
  std::string pcie_source;      // description of the PCIe topology source
  std::string gpu_source;       // "cuda", "nvml" (live) or "recorded: " + the input
  std::vector<std::string> nvswitches;  // NVSwitch BDFs the PCIe source shows
  std::vector<std::pair<std::string, Matrix>> matrices;  // in print order
  std::vector<Waiver> waived;
  // Set when neither CUDA, NVML nor the PCIe input shows an NVIDIA GPU: gdsb-topo's
  // "GDS not applicable on this node: no NVIDIA GPU" (issue 29).
  std::string applicability;
  // GpuTree::hypervisor_devices: the GPUs sit in a VM's virtual PCIe topology, so NVML's
  // levels (PIX..SYS) are the hypervisor's and the physical links are not visible.
  std::string hypervisor_devices;

  const PairCaps* pair(int a, int b) const;
  const Matrix* matrix(const std::string& name) const;
};

std::string gpu_label(int index);  // "GPU0"

CapabilityReport collect_capabilities(CudaLayer& cuda, NvmlLayer& nvml, PcieTopologySource& pcie);

}  // namespace gdsb::p2p
