#include "gdsb/p2p/service_layers.hpp"

#include <chrono>
#include <functional>

#include "gdsb/error.hpp"

namespace gdsb::p2p {
namespace {

using Clock = std::chrono::steady_clock;

class ServiceCudaLayer final : public CudaLayer {
 public:
  explicit ServiceCudaLayer(std::shared_ptr<gpu::GpuService> s) : s_(std::move(s)) {}
  Availability probe() override { return s_->probe(); }
  int device_count() override { return s_->device_count(); }
  CudaDeviceProps properties(int device) override {
    const gpu::DeviceProperties p = s_->properties(device);
    return {p.name, p.pci_bus_id, p.cc_major, p.cc_minor, p.total_memory};
  }
  bool can_access_peer(int, int) override { return false; }
  CudaP2PAttributes p2p_attributes(int, int) override { return {}; }

 private:
  std::shared_ptr<gpu::GpuService> s_;
};

// Buffers of one timed case, released by the destructor.
class Buffers {
 public:
  Buffers(gpu::GpuService& s, std::size_t bytes) : s_(s), bytes_(bytes) {}
  ~Buffers() {
    for (const auto& a : device_) s_.release(a);
    for (void* p : pinned_) s_.free_pinned(p);
    for (auto st : streams_) s_.destroy_stream(st);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void* device(int gpu) {
    s_.use_device(gpu);
    device_.push_back(s_.allocate(MemType::CudaMalloc, bytes_));
    return device_.back().ptr;
  }
  void* pinned() {
    pinned_.push_back(s_.alloc_pinned(bytes_));
    return pinned_.back();
  }
  gpu::StreamHandle stream() {
    streams_.push_back(s_.create_stream());
    return streams_.back();
  }

 private:
  gpu::GpuService& s_;
  std::size_t bytes_;
  std::vector<gpu::Allocation> device_;
  std::vector<void*> pinned_;
  std::vector<gpu::StreamHandle> streams_;
};

class ServiceCopyTimer final : public CopyTimer {
 public:
  explicit ServiceCopyTimer(std::shared_ptr<gpu::GpuService> s) : s_(std::move(s)) {}
  Availability probe() override { return s_->probe(); }

  std::vector<double> time_case(const CopyCase& c, int warmups, int repetitions) override {
    if (c.engine == CopyEngine::Sm)
      throw RuntimeError("SM copies are not available through the GPU service");
    Buffers b(*s_, c.bytes);
    std::vector<std::function<void()>> enqueue;  // one copy of the case per call
    using K = CopyKind;
    if (c.kind == K::HostToDevice || c.kind == K::DeviceToHost) {
      const int gpu = c.kind == K::HostToDevice ? c.dst : c.src;
      void* dev = b.device(gpu);
      void* host = b.pinned();
      const auto st = b.stream();
      const bool h2d = c.kind == K::HostToDevice;
      enqueue.push_back([=, this] {
        s_->copy_async(h2d ? dev : host, h2d ? host : dev, c.bytes,
                       h2d ? gpu::CopyDir::HostToDevice : gpu::CopyDir::DeviceToHost, st);
      });
      syncs_ = {st};
    } else {
      // Staged through pinned host memory: src -> host, then host -> dst, on one stream;
      // bidirectional cases run the reverse direction on a second stream at the same time.
      syncs_.clear();
      const int directions = c.kind == K::PeerBidir ? 2 : 1;
      for (int d = 0; d < directions; ++d) {
        const int from = d == 0 ? c.src : c.dst, to = d == 0 ? c.dst : c.src;
        void* src = b.device(from);
        void* dst = b.device(to);
        void* host = b.pinned();
        const auto st = b.stream();
        enqueue.push_back([=, this] {
          s_->copy_async(host, src, c.bytes, gpu::CopyDir::DeviceToHost, st);
          s_->copy_async(dst, host, c.bytes, gpu::CopyDir::HostToDevice, st);
        });
        syncs_.push_back(st);
      }
    }
    std::vector<double> out;
    for (int r = 0; r < warmups + repetitions; ++r) {
      const auto t0 = Clock::now();
      for (int l = 0; l < c.loops; ++l)
        for (auto& e : enqueue) e();
      for (auto st : syncs_) s_->sync(st);
      const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r >= warmups) out.push_back(sec);
    }
    return out;
  }

  std::vector<double> time_plain_memcpy(CopyKind kind, int gpu, std::uint64_t bytes,
                                        int repetitions) override {
    Buffers b(*s_, bytes);
    void* dev = b.device(gpu);
    void* host = b.pinned();
    const bool h2d = kind == CopyKind::HostToDevice;
    std::vector<double> out;
    for (int r = 0; r < repetitions; ++r) {
      const auto t0 = Clock::now();
      s_->copy(h2d ? dev : host, h2d ? host : dev, bytes,
               h2d ? gpu::CopyDir::HostToDevice : gpu::CopyDir::DeviceToHost);
      out.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return out;
  }

  // gdsb-cluster does not ask for the concurrent case; the service has no common timeline.
  ConcurrentSamples time_concurrent(CopyKind, const std::vector<ConcurrentGpu>&,
                                         std::uint64_t, int, int, int) override {
    throw RuntimeError("concurrent copies are not available through the GPU service");
  }

 private:
  std::shared_ptr<gpu::GpuService> s_;
  std::vector<gpu::StreamHandle> syncs_;
};

}  // namespace

std::unique_ptr<CudaLayer> make_service_cuda_layer(std::shared_ptr<gpu::GpuService> service) {
  return std::make_unique<ServiceCudaLayer>(std::move(service));
}

std::unique_ptr<CopyTimer> make_service_copy_timer(std::shared_ptr<gpu::GpuService> service) {
  return std::make_unique<ServiceCopyTimer>(std::move(service));
}

}  // namespace gdsb::p2p
