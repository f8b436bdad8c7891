// GPU memory, streams, events and copies behind one service interface, so the transfer
// paths never call CUDA directly. Two implementations: the CUDA runtime (cuda_service.hpp,
// compiled only when CMake found the toolkit) and a host-memory fake for tests
// (fake_gpu_service.hpp). Methods throw gdsb::RuntimeError with the CUDA error name and a
// hint; probe() never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "gdsb/transfer_path.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::gpu {

struct DeviceProperties {
  int index = 0;
  std::string name;
  std::string pci_bus_id;  // "0000:00:06.0", lower case
  uint64_t total_memory = 0;
  int cc_major = 0;
  int cc_minor = 0;
};

enum class CopyDir : uint8_t { HostToDevice, DeviceToHost };

// How wait() on an event waits: Spin polls (lowest latency, a core busy; for short copies)
// or Block sleeps until the GPU signals (cudaEventBlockingSync; for waits on storage I/O).
enum class EventWait : uint8_t { Spin, Block };

// Whether an event can be timed: On leaves out cudaEventDisableTiming, so elapsed_us works
// on it (recording it costs a little more; only the phase timing of -x 2/3/4 uses it).
enum class EventTiming : uint8_t { Off, On };

// Opaque handles; for CUDA they hold cudaStream_t / cudaEvent_t.
struct StreamHandle {
  void* raw = nullptr;
};
struct EventHandle {
  void* raw = nullptr;
};

// One buffer of a -m memory type. on_device: the bytes live in GPU memory (types 0, 1).
struct Allocation {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  MemType type = MemType::CudaMalloc;
  bool on_device = true;
  void* detail = nullptr;  // implementation data (cuMem handle, mapping length)
};

class GpuService {
 public:
  virtual ~GpuService() = default;
  virtual std::string name() const = 0;  // "cuda" or "fake"
  // Whether a driver and at least one GPU are usable; the reason names what is missing.
  virtual Availability probe() = 0;
  virtual int device_count() = 0;
  virtual DeviceProperties properties(int device) = 0;
  // Makes `device` current for the calling thread (cudaSetDevice).
  virtual void use_device(int device) = 0;

  virtual Allocation allocate(MemType type, std::size_t bytes) = 0;
  virtual void release(const Allocation& a) noexcept = 0;
  virtual void* alloc_pinned(std::size_t bytes) = 0;  // page-locked host memory
  virtual void free_pinned(void* p) noexcept = 0;
  virtual void register_host(void* p, std::size_t bytes) = 0;  // pin existing host memory
  virtual void unregister_host(void* p) noexcept = 0;

  virtual StreamHandle create_stream() = 0;
  virtual void destroy_stream(StreamHandle s) noexcept = 0;
  virtual EventHandle create_event(EventWait how) = 0;
  virtual void destroy_event(EventHandle e) noexcept = 0;
  virtual void record(EventHandle e, StreamHandle s) = 0;
  virtual bool query(EventHandle e) = 0;  // true once everything before the record ran
  virtual void wait(EventHandle e) = 0;   // blocks the calling thread
  virtual void sync(StreamHandle s) = 0;
  // Waits for all work on the current device, including streams we did not create (cuFile's).
  virtual void sync_device() = 0;
  // An event that elapsed_us can time (cudaEventCreate without cudaEventDisableTiming).
  // The default, for services that cannot time: an ordinary event.
  virtual EventHandle create_timing_event(EventWait how) { return create_event(how); }
  // GPU time from start to end, both timing events recorded on one stream and completed
  // (cudaEventElapsedTime, about 0.5 us resolution); nullopt where the service cannot time.
  virtual std::optional<double> elapsed_us(EventHandle /*start*/, EventHandle /*end*/) {
    return std::nullopt;
  }

  // Synchronous: the bytes are at dst when it returns, also from pageable host memory, so
  // work on any stream (or in cuFile) issued afterwards sees them.
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyDir dir) = 0;
  // Synchronous, from or to ordinary pageable host memory (new/malloc, neither pinned nor
  // registered), as a framework's tensor.cuda() does: CUDA stages the bytes through its own
  // pinned buffers. Its own method so that the naive checkpoint load says what it models
  // and the fake can check that the host side really is pageable.
  virtual void copy_pageable(void* dst, const void* src, std::size_t bytes, CopyDir dir) {
    copy(dst, src, bytes, dir);
  }
  // Ordered on s; host memory must be pinned for the copy to be asynchronous.
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, CopyDir dir,
                          StreamHandle s) = 0;
};

// RAII owners, so a path body reads as a dozen lines.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuService& svc, MemType type, std::size_t bytes)
      : svc_(&svc), a_(svc.allocate(type, bytes)) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept : svc_(std::exchange(o.svc_, nullptr)), a_(o.a_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      svc_ = std::exchange(o.svc_, nullptr);
      a_ = o.a_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }
  std::byte* data() const { return static_cast<std::byte*>(a_.ptr); }
  std::size_t size() const { return a_.bytes; }
  const Allocation& allocation() const { return a_; }

 private:
  void reset() noexcept {
    if (svc_ != nullptr) svc_->release(a_);
    svc_ = nullptr;
  }
  GpuService* svc_ = nullptr;
  Allocation a_;
};

class Stream {
 public:
  explicit Stream(GpuService& svc) : svc_(&svc), h_(svc.create_stream()) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { svc_->destroy_stream(h_); }
  StreamHandle handle() const { return h_; }

 private:
  GpuService* svc_;
  StreamHandle h_;
};

class Event {
 public:
  explicit Event(GpuService& svc, EventWait how = EventWait::Spin,
                 EventTiming timing = EventTiming::Off)
      : svc_(&svc),
        h_(timing == EventTiming::On ? svc.create_timing_event(how) : svc.create_event(how)) {}
  Event(Event&& o) noexcept : svc_(o.svc_), h_(std::exchange(o.h_, EventHandle{})) {}
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (h_.raw != nullptr) svc_->destroy_event(h_);
  }
  EventHandle handle() const { return h_; }

 private:
  GpuService* svc_;
  EventHandle h_;
};

// Pins host memory it does not own (staging slots of the host I/O worker).
class HostRegistration {
 public:
  HostRegistration(GpuService& svc, void* p, std::size_t bytes) : svc_(&svc), p_(p) {
    svc.register_host(p, bytes);
  }
  HostRegistration(HostRegistration&& o) noexcept
      : svc_(o.svc_), p_(std::exchange(o.p_, nullptr)) {}
  HostRegistration& operator=(HostRegistration&&) = delete;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  ~HostRegistration() {
    if (p_ != nullptr) svc_->unregister_host(p_);
  }

 private:
  GpuService* svc_;
  void* p_;
};

// gdsio's rule: -m 2..4 (host memory) only with the cuFile types -x 0/5/6/7.
Availability check_mem_type(XferType x, MemType m);

}  // namespace gdsb::gpu
