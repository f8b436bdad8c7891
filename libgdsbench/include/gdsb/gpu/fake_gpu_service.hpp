// A host-memory stand-in for the CUDA service, for tests without a GPU. "Device" memory is
// host memory tracked as such, so copies in the wrong direction are caught; every stream
// is a worker thread executing its operations in order, so asynchronous copies really run
// later and overlap whatever the caller does meanwhile. Hooks make hazards visible
// (host_range_busy: is a pending copy still reading or writing these bytes?) and inject
// failures.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gdsb/gpu/gpu_service.hpp"

namespace gdsb::gpu {

struct FakeGpuOptions {
  int devices = 1;
  std::chrono::microseconds copy_delay{0};  // each async copy sleeps this long first
  int64_t fail_async_copy_at = -1;  // the n-th async copy (0-based) fails on its stream
  int64_t fail_allocation_at = -1;  // the n-th allocate() throws "out of memory"
  bool require_pinned_async = true;  // async copies from pageable memory are an error
};

struct FakeGpuStats {
  uint64_t async_copies = 0;
  uint64_t sync_copies = 0;
  uint64_t bytes_h2d = 0;
  uint64_t bytes_d2h = 0;
  uint64_t device_syncs = 0;
  uint64_t allocations_live = 0;
  uint64_t pinned_live = 0;
  uint64_t registered_live = 0;
  uint64_t streams_live = 0;
  uint64_t events_live = 0;
  uint64_t spin_waits = 0;      // wait() on an EventWait::Spin event
  uint64_t blocking_waits = 0;  // wait() on an EventWait::Block event
  uint64_t pageable_copies = 0;    // copy_pageable() calls (counted apart from sync_copies)
  uint64_t pageable_bytes_h2d = 0;
  uint64_t pageable_bytes_d2h = 0;
  uint64_t timing_events_live = 0;
  uint64_t elapsed_queries = 0;
};

class FakeGpuService final : public GpuService {
 public:
  explicit FakeGpuService(FakeGpuOptions options = {});
  ~FakeGpuService() override;
  FakeGpuService(const FakeGpuService&) = delete;
  FakeGpuService& operator=(const FakeGpuService&) = delete;

  std::string name() const override { return "fake"; }
  Availability probe() override;
  int device_count() override { return opt_.devices; }
  DeviceProperties properties(int device) override;
  void use_device(int device) override;

  Allocation allocate(MemType type, std::size_t bytes) override;
  void release(const Allocation& a) noexcept override;
  void* alloc_pinned(std::size_t bytes) override;
  void free_pinned(void* p) noexcept override;
  void register_host(void* p, std::size_t bytes) override;
  void unregister_host(void* p) noexcept override;

  StreamHandle create_stream() override;
  void destroy_stream(StreamHandle s) noexcept override;
  EventHandle create_event(EventWait how) override;
  EventHandle create_timing_event(EventWait how) override;
  // Host time between the points where the two events' streams reached their records.
  std::optional<double> elapsed_us(EventHandle start, EventHandle end) override;
  void destroy_event(EventHandle e) noexcept override;
  void record(EventHandle e, StreamHandle s) override;
  bool query(EventHandle e) override;
  void wait(EventHandle e) override;
  void sync(StreamHandle s) override;
  void sync_device() override;

  void copy(void* dst, const void* src, std::size_t bytes, CopyDir dir) override;
  // Throws when the host side is pinned or registered: the naive load must model pageable
  // memory.
  void copy_pageable(void* dst, const void* src, std::size_t bytes, CopyDir dir) override;
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyDir dir,
                  StreamHandle s) override;

  // Test hooks.
  // Runs fn on stream s after everything enqueued before (cudaLaunchHostFunc); the fake
  // cuFile uses it for cuFileReadAsync/WriteAsync.
  void launch_host_func(StreamHandle s, std::function<void()> fn);
  // Whether a queued or running async copy touches host bytes [p, p+bytes).
  bool host_range_busy(const void* p, std::size_t bytes) const;
  uint64_t pending_async_copies() const;
  bool is_device_pointer(const void* p) const;
  FakeGpuStats stats() const;

 private:
  struct FakeStream;
  struct FakeEvent;
  struct Range {
    std::size_t bytes;
    bool device;
  };
  void check_copy(void* dst, const void* src, std::size_t bytes, CopyDir dir, bool async) const;
  const Range* find_range(const void* p) const;  // caller holds mu_
  bool pinned_locked(const void* p, std::size_t bytes) const;

  FakeGpuOptions opt_;
  mutable std::mutex mu_;
  std::map<const std::byte*, Range> ranges_;    // allocations (device or pinned host)
  std::map<const std::byte*, std::size_t> registered_;
  std::multimap<const std::byte*, std::size_t> busy_;  // host ranges of pending async copies
  // shared: sync_device holds each stream while waiting on it, even if its owner destroys it
  std::vector<std::shared_ptr<FakeStream>> streams_;
  FakeGpuStats stats_;
  uint64_t async_seq_ = 0;
  uint64_t alloc_seq_ = 0;
};

}  // namespace gdsb::gpu
