// CUDA runtime implementation of GpuService. Linked against cudart_static, which loads
// libcuda.so.1 itself at run time; probe() looks for the driver first so that a machine
// without one gets "no NVIDIA driver" rather than a runtime error code.
#include "gdsb/gpu/cuda_service.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "gdsb/error.hpp"

namespace gdsb::gpu {
namespace {

std::string hint_for(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return "; GPU out of memory: lower -w, -i or --iodepth, or free memory on the GPU";
    case cudaErrorInsufficientDriver:
      return "; the CUDA driver is too old for this build: update the NVIDIA driver";
    case cudaErrorNoDevice: return "; no GPU is visible (check CUDA_VISIBLE_DEVICES)";
    case cudaErrorInvalidDevice: return "; the -d index names no GPU";
    case cudaErrorDevicesUnavailable:
      return "; the GPU is busy or in exclusive-process mode (nvidia-smi -c)";
    case cudaErrorHostMemoryAlreadyRegistered:
      return "; host memory already pinned by someone else";
    default: return "";
  }
}

[[noreturn]] void throw_cuda(cudaError_t e, const std::string& call) {
  throw RuntimeError(call + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")" +
                     hint_for(e));
}

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw_cuda(e, call);
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// Driver entry points for -m 1 (cuMem*), fetched through the runtime so that the binary
// does not link libcuda.
struct CuMemApi {
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressFree) address_free = nullptr;
};

template <typename Fn>
void entry(const char* name, Fn& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || p == nullptr || q != cudaDriverEntryPointSuccess) {
    throw RuntimeError(std::string("-m 1 (cuMem): driver entry point ") + name +
                       " not found; the driver may be too old");
  }
  fn = reinterpret_cast<Fn>(p);
}

struct CuMemDetail {
  CUmemGenericAllocationHandle handle = 0;
  std::size_t size = 0;
};

void check_cu(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) {
    throw RuntimeError(std::string(call) + " failed with CUresult " + std::to_string(r) +
                       (r == CUDA_ERROR_OUT_OF_MEMORY ? "; GPU out of memory" : ""));
  }
}

class CudaService final : public GpuService {
 public:
  ~CudaService() override = default;
  std::string name() const override { return "cuda"; }

  Availability probe() override {
    std::call_once(probe_once_, [this] { probe_result_ = do_probe(); });
    return probe_result_;
  }

  int device_count() override {
    if (!probe().ok) return 0;
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
  }

  DeviceProperties properties(int device) override {
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    DeviceProperties out;
    out.index = device;
    out.name = p.name;
    out.total_memory = p.totalGlobalMem;
    out.cc_major = p.major;
    out.cc_minor = p.minor;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) == cudaSuccess) {
      out.pci_bus_id = bus;
      for (char& c : out.pci_bus_id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
  }

  void use_device(int device) override { check(cudaSetDevice(device), "cudaSetDevice"); }

  Allocation allocate(MemType type, std::size_t bytes) override {
    Allocation a;
    a.type = type;
    a.bytes = bytes;
    a.on_device = type == MemType::CudaMalloc || type == MemType::CuMem;
    switch (type) {
      case MemType::CudaMalloc:
        check(cudaMalloc(&a.ptr, bytes), ("cudaMalloc(" + std::to_string(bytes) + ")").c_str());
        break;
      case MemType::CuMem: a = allocate_cumem(bytes); break;
      case MemType::CudaMallocHost: check(cudaMallocHost(&a.ptr, bytes), "cudaMallocHost"); break;
      case MemType::Malloc:
        a.ptr = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
        if (a.ptr == nullptr) throw RuntimeError("malloc of " + std::to_string(bytes) + " failed");
        break;
      case MemType::Mmap: {
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw RuntimeError("mmap of " + std::to_string(bytes) + " failed");
        a.ptr = p;
        break;
      }
    }
    return a;
  }

  void release(const Allocation& a) noexcept override {
    if (a.ptr == nullptr) return;
    switch (a.type) {
      case MemType::CudaMalloc: cudaFree(a.ptr); break;
      case MemType::CuMem: {
        auto* d = static_cast<CuMemDetail*>(a.detail);
        const auto va = reinterpret_cast<CUdeviceptr>(a.ptr);
        cumem_.unmap(va, d->size);
        cumem_.release(d->handle);
        cumem_.address_free(va, d->size);
        delete d;
        break;
      }
      case MemType::CudaMallocHost: cudaFreeHost(a.ptr); break;
      case MemType::Malloc: std::free(a.ptr); break;
      case MemType::Mmap: ::munmap(a.ptr, a.bytes); break;
    }
  }

  void* alloc_pinned(std::size_t bytes) override {
    void* p = nullptr;
    check(cudaMallocHost(&p, bytes), "cudaMallocHost");
    return p;
  }
  void free_pinned(void* p) noexcept override { cudaFreeHost(p); }
  void register_host(void* p, std::size_t bytes) override {
    check(cudaHostRegister(p, bytes, cudaHostRegisterDefault), "cudaHostRegister");
  }
  void unregister_host(void* p) noexcept override { cudaHostUnregister(p); }

  StreamHandle create_stream() override {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    return StreamHandle{s};
  }
  void destroy_stream(StreamHandle s) noexcept override {
    cudaStreamDestroy(static_cast<cudaStream_t>(s.raw));
  }
  EventHandle create_event(EventWait how) override {
    cudaEvent_t e = nullptr;
    const unsigned flags =
        cudaEventDisableTiming | (how == EventWait::Block ? cudaEventBlockingSync : 0U);
    check(cudaEventCreateWithFlags(&e, flags), "cudaEventCreate");
    return EventHandle{e};
  }
  EventHandle create_timing_event(EventWait how) override {
    cudaEvent_t e = nullptr;
    const unsigned flags = how == EventWait::Block ? cudaEventBlockingSync : cudaEventDefault;
    check(cudaEventCreateWithFlags(&e, flags), "cudaEventCreate");
    return EventHandle{e};
  }
  std::optional<double> elapsed_us(EventHandle start, EventHandle end) override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.raw),
                               static_cast<cudaEvent_t>(end.raw)),
          "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1000.0;
  }
  void destroy_event(EventHandle e) noexcept override {
    cudaEventDestroy(static_cast<cudaEvent_t>(e.raw));
  }
  void record(EventHandle e, StreamHandle s) override {
    check(cudaEventRecord(static_cast<cudaEvent_t>(e.raw), static_cast<cudaStream_t>(s.raw)),
          "cudaEventRecord");
  }
  bool query(EventHandle e) override {
    const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e.raw));
    if (r == cudaErrorNotReady) return false;
    check(r, "cudaEventQuery");
    return true;
  }
  void wait(EventHandle e) override {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(e.raw)), "cudaEventSynchronize");
  }
  void sync(StreamHandle s) override {
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(s.raw)), "cudaStreamSynchronize");
  }
  void sync_device() override { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  void copy(void* dst, const void* src, std::size_t bytes, CopyDir dir) override {
    check(cudaMemcpy(dst, src, bytes, kind(dir)), "cudaMemcpy");
    // From pageable memory, cudaMemcpy may return once the bytes are staged, before the
    // DMA into device memory finished; a copy on another (non-blocking) stream, or cuFile,
    // could then read stale device memory. Measured on the H100: -x 3 writes after
    // load_slot wrote old data. The contract of copy() is "at dst on return".
    if (dir == CopyDir::HostToDevice) {
      check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
    }
  }
  // The same cudaMemcpy (CUDA stages pageable memory through its own pinned buffers) and
  // the same "at dst on return" contract; the method names the naive load's intent.
  void copy_pageable(void* dst, const void* src, std::size_t bytes, CopyDir dir) override {
    copy(dst, src, bytes, dir);
  }
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyDir dir,
                  StreamHandle s) override {
    check(cudaMemcpyAsync(dst, src, bytes, kind(dir), static_cast<cudaStream_t>(s.raw)),
          "cudaMemcpyAsync");
  }

 private:
  static cudaMemcpyKind kind(CopyDir d) {
    return d == CopyDir::HostToDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  }

  static Availability do_probe() {
    // cudart_static dlopens libcuda.so.1 itself; look first to name the missing driver.
    void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) {
      const char* why = ::dlerror();
      return Availability::no(std::string("no NVIDIA driver (libcuda.so.1 not found") +
                              (why != nullptr ? std::string(": ") + why : std::string()) + ")");
    }
    // Keep the handle: the runtime holds its own reference anyway.
    int driver_version = 0;
    int runtime_version = 0;
    cudaDriverGetVersion(&driver_version);
    cudaRuntimeGetVersion(&runtime_version);
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver ||
        (driver_version != 0 && driver_version / 1000 < runtime_version / 1000)) {
      return Availability::no("CUDA driver too old: it supports CUDA " +
                              version_text(driver_version) + ", this build needs CUDA " +
                              version_text(runtime_version) + " (update the NVIDIA driver)");
    }
    if (e != cudaSuccess) {
      return Availability::no(std::string("no GPU (cudaGetDeviceCount: ") + cudaGetErrorName(e) +
                              ": " + cudaGetErrorString(e) + ")");
    }
    if (n == 0) return Availability::no("no GPU (cudaGetDeviceCount found 0 devices)");
    return Availability::yes();
  }

  Allocation allocate_cumem(std::size_t bytes) {
    std::call_once(cumem_once_, [this] {
      entry("cuMemGetAllocationGranularity", cumem_.granularity);
      entry("cuMemCreate", cumem_.create);
      entry("cuMemAddressReserve", cumem_.reserve);
      entry("cuMemMap", cumem_.map);
      entry("cuMemSetAccess", cumem_.set_access);
      entry("cuMemUnmap", cumem_.unmap);
      entry("cuMemRelease", cumem_.release);
      entry("cuMemAddressFree", cumem_.address_free);
    });
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    int rdma = 0;
    cudaDeviceGetAttribute(&rdma, cudaDevAttrGPUDirectRDMASupported, device);
    prop.allocFlags.gpuDirectRDMACapable = rdma != 0 ? 1 : 0;  // cuFile needs it for -m 1
    std::size_t gran = 0;
    check_cu(cumem_.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
             "cuMemGetAllocationGranularity");
    auto* d = new CuMemDetail;
    d->size = (bytes + gran - 1) / gran * gran;
    CUdeviceptr va = 0;
    try {
      check_cu(cumem_.create(&d->handle, d->size, &prop, 0), "cuMemCreate");
      check_cu(cumem_.reserve(&va, d->size, 0, 0, 0), "cuMemAddressReserve");
      check_cu(cumem_.map(va, d->size, 0, d->handle, 0), "cuMemMap");
      CUmemAccessDesc access{};
      access.location = prop.location;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      check_cu(cumem_.set_access(va, d->size, &access, 1), "cuMemSetAccess");
    } catch (...) {
      if (va != 0) cumem_.address_free(va, d->size);
      if (d->handle != 0) cumem_.release(d->handle);
      delete d;
      throw;
    }
    Allocation a;
    a.type = MemType::CuMem;
    a.bytes = bytes;
    a.on_device = true;
    a.ptr = reinterpret_cast<void*>(va);
    a.detail = d;
    return a;
  }

  std::once_flag probe_once_;
  Availability probe_result_;
  std::once_flag cumem_once_;
  CuMemApi cumem_;
};

}  // namespace

bool built_with_cuda() { return true; }
std::unique_ptr<GpuService> make_cuda_service() { return std::make_unique<CudaService>(); }

}  // namespace gdsb::gpu
