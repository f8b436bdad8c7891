// Pieces shared by the GPU paths (private to src/gpu).
#pragma once

#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/gpu/gpu_service.hpp"
#include "gdsb/gpu/staging_io.hpp"
#include "gdsb/host_buffer.hpp"

namespace gdsb::gpu::detail {

// Driver, device index and memory type: what every GPU type needs.
inline Availability probe_gpu(GpuService& svc, const Workload& w) {
  Availability a = svc.probe();
  if (!a.ok) return a;
  const int n = svc.device_count();
  if (w.gpu < 0 || w.gpu >= n) {
    return Availability::no("-d " + std::to_string(w.gpu) + ": no such GPU (this machine has " +
                            std::to_string(n) + ", indices 0.." + std::to_string(n - 1) + ")");
  }
  return check_mem_type(w.xfer, w.mem_type);
}

inline void require(const Availability& a) {
  if (!a.ok) throw RuntimeError(a.reason);
}

// Binds the calling thread once to the GPU (CUDA's current device is per thread). -n is
// not handled here: the runner binds every worker thread to the node's CPUs before it
// creates the thread's PathWorker (the engine's NumaBinding, src/numa.cpp).
class ThreadBinding {
 public:
  ThreadBinding(GpuService& svc, int gpu) : svc_(svc), gpu_(gpu) { svc_.use_device(gpu_); }
  void enter() {
    if (bound_) return;
    svc_.use_device(gpu_);
    bound_ = true;
  }

 private:
  GpuService& svc_;
  int gpu_;
  bool bound_ = false;
};

// depth() buffers of io_size bytes of the -m memory type, with host access for
// load_slot/read_slot.
class SlotBuffers {
 public:
  SlotBuffers(GpuService& svc, MemType type, uint32_t depth, std::size_t bytes,
              std::optional<int> numa = std::nullopt)
      : svc_(svc) {
    for (uint32_t i = 0; i < depth; ++i) {
      bufs_.emplace_back(svc, type, bytes);
      // -n: host memory types (-m 3/4, not yet touched) go to the node; device memory and
      // cudaMallocHost pages are placed by CUDA.
      if (numa && (type == MemType::Malloc || type == MemType::Mmap)) {
        bind_memory_to_node(bufs_.back().data(), bytes, *numa);
      }
    }
  }
  uint32_t depth() const { return static_cast<uint32_t>(bufs_.size()); }
  std::size_t bytes() const { return bufs_.empty() ? 0 : bufs_[0].size(); }
  std::byte* at(uint32_t slot) { return bufs_.at(slot).data(); }
  const DeviceBuffer& buffer(uint32_t slot) const { return bufs_.at(slot); }

  void load(uint32_t slot, std::span<const std::byte> data) {
    check(slot, data.size());
    if (bufs_[slot].allocation().on_device) {
      svc_.copy(bufs_[slot].data(), data.data(), data.size(), CopyDir::HostToDevice);
    } else {
      std::memcpy(bufs_[slot].data(), data.data(), data.size());
    }
  }
  void read(uint32_t slot, std::span<std::byte> out) {
    check(slot, out.size());
    if (bufs_[slot].allocation().on_device) {
      svc_.copy(out.data(), bufs_[slot].data(), out.size(), CopyDir::DeviceToHost);
    } else {
      std::memcpy(out.data(), bufs_[slot].data(), out.size());
    }
  }

 private:
  void check(uint32_t slot, std::size_t n) const {
    if (slot >= bufs_.size() || n > bufs_[slot].size()) {
      throw std::logic_error("GPU slot access outside slot " + std::to_string(slot));
    }
  }
  GpuService& svc_;
  std::vector<DeviceBuffer> bufs_;
};

inline void check_requests(std::span<const IoRequest> reqs, uint32_t depth, uint64_t io_size,
                           std::size_t nfiles) {
  for (const auto& r : reqs) {
    if (r.slot >= depth || r.length > io_size || r.file >= nfiles) {
      throw std::logic_error("I/O request outside the worker's slots, size or files");
    }
  }
}

}  // namespace gdsb::gpu::detail
