// CudaLayer over the CUDA runtime (linked statically, so the binary starts without a
// driver and cudaGetDeviceCount says which part is missing).
#include <array>

#include "cuda_check.hpp"
#include "gdsb/gpu/cuda_service.hpp"
#include "gdsb/p2p/layers.hpp"

namespace gdsb::p2p {

namespace {

std::string runtime_version_text() {
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

class CudartLayer final : public CudaLayer {
 public:
  Availability probe() override {
    // The transfer engine's probe first: without a driver every tool says "no NVIDIA driver
    // (...)" in the same words (gdsb-io's waivers, gdsb-doctor's steps, this), issue 27.
    if (const Availability a = gpu::make_cuda_service()->probe(); !a.ok) return a;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess) return Availability::yes();
    std::string why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    if (err == cudaErrorInsufficientDriver) {
      why += " (no NVIDIA driver, or one older than CUDA " + runtime_version_text() + ")";
    } else if (err == cudaErrorNoDevice) {
      why += " (the driver is loaded but sees no GPU)";
    }
    return Availability::no(why);
  }

  int device_count() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
  }

  CudaDeviceProps properties(int device) override {
    cudaDeviceProp prop{};
    GDSB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::array<char, 32> bus{};
    GDSB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device));
    CudaDeviceProps p;
    p.name = prop.name;
    p.bdf = nvml::normalize_bus_id(bus.data());
    p.cc_major = prop.major;
    p.cc_minor = prop.minor;
    p.total_memory = prop.totalGlobalMem;
    return p;
  }

  bool can_access_peer(int device, int peer) override {
    int ok = 0;
    GDSB_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, device, peer));
    return ok != 0;
  }

  CudaP2PAttributes p2p_attributes(int src, int dst) override {
    CudaP2PAttributes a;
    int v = 0;
    GDSB_CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, src, dst));
    a.performance_rank = v;
    GDSB_CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, src, dst));
    a.access_supported = v != 0;
    GDSB_CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, src, dst));
    a.native_atomics = v != 0;
    GDSB_CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrCudaArrayAccessSupported, src, dst));
    a.cuda_array_access = v != 0;
    return a;
  }
};

}  // namespace

std::unique_ptr<CudaLayer> make_cuda_layer() { return std::make_unique<CudartLayer>(); }

}  // namespace gdsb::p2p
