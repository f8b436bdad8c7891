// The device-side capability sources of gdsb-p2p, each behind a small interface so the
// whole pipeline runs against fakes in tests (tests/p2p/fake_layers.hpp):
//   CudaLayer  the CUDA runtime's view: device list, PCI bus ids, peer access, P2P attributes.
//   NvmlLayer  NVML's view: P2P status codes, NVLink links, topology level, PCIe links.
// A layer that cannot work here says so in probe(); its matrices are then waived.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/nvml.hpp"
#include "gdsb/transfer_path.hpp"  // gdsb::Availability

namespace gdsb::p2p {

struct CudaDeviceProps {
  std::string name;
  std::string bdf;  // normalized "0000:00:06.0"
  int cc_major = 0;
  int cc_minor = 0;
  unsigned long long total_memory = 0;
};

// cudaDeviceGetP2PAttribute for one ordered pair (src -> dst).
struct CudaP2PAttributes {
  int performance_rank = 0;      // cudaDevP2PAttrPerformanceRank (lower is better)
  bool access_supported = false; // cudaDevP2PAttrAccessSupported
  bool native_atomics = false;   // cudaDevP2PAttrNativeAtomicSupported
  bool cuda_array_access = false;  // cudaDevP2PAttrCudaArrayAccessSupported
};

class CudaLayer {
 public:
  virtual ~CudaLayer() = default;
  virtual Availability probe() = 0;  // e.g. "no CUDA driver (cudaErrorInsufficientDriver)"
  virtual int device_count() = 0;
  virtual CudaDeviceProps properties(int device) = 0;
  virtual bool can_access_peer(int device, int peer) = 0;
  virtual CudaP2PAttributes p2p_attributes(int src, int dst) = 0;
};

struct PcieLink {
  int gen = 0;    // 1..6
  int width = 0;  // lanes
  bool operator==(const PcieLink&) const = default;
};

struct NvmlGpu {
  std::string bdf;  // normalized
  std::string name;
  std::optional<PcieLink> max_link;  // nvmlDeviceGetMaxPcieLinkGeneration/Width
  std::optional<PcieLink> cur_link;  // current; idle GPUs may train down to Gen1
  std::optional<int> numa_node;  // nearest host NUMA node (nvmlDeviceGetMemoryAffinity)
  std::optional<unsigned long long> bar1_total;
  int nvlinks_active = 0;  // active NVLink links of this GPU, to any remote
};

class NvmlLayer {
 public:
  virtual ~NvmlLayer() = default;
  virtual Availability probe() = 0;
  virtual std::vector<NvmlGpu> gpus() = 0;  // in NVML index order
  // nullopt when the query itself failed (not when it answered "not supported").
  virtual std::optional<nvml::P2PStatus> p2p_status(int a, int b, nvml::P2PCapsIndex cap) = 0;
  virtual std::optional<nvml::TopologyLevel> common_ancestor(int a, int b) = 0;
  // Active NVLink links joining a and b (nvidia-smi topo -m's NV#), by the one rule of
  // gdsb/topo/nvlink.hpp: direct links, else through NVSwitch the smaller of the two GPUs'
  // links into the fabric (a remote of unknown type counts when NVML's P2P NVLink is OK).
  virtual int nvlinks_between(int a, int b) = 0;
};

// The real layers. Without the CUDA toolkit at build time make_cuda_layer() returns a
// layer whose probe() says so. make_nvml_layer never throws: a missing library or
// driver becomes its probe() reason.
std::unique_ptr<CudaLayer> make_cuda_layer();
std::unique_ptr<NvmlLayer> make_nvml_layer(const std::string& library_path = "");
// A layer that is unavailable for a stated reason (--no-cuda, --no-nvml).
std::unique_ptr<CudaLayer> make_unavailable_cuda_layer(std::string reason);
std::unique_ptr<NvmlLayer> make_unavailable_nvml_layer(std::string reason);

}  // namespace gdsb::p2p
