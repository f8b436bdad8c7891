#include "gdsb/gpu/fake_gpu_service.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include "gdsb/error.hpp"

namespace gdsb::gpu {

// An event completes when the stream reaches the point where it was recorded.
struct FakeGpuService::FakeEvent {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;
  uint64_t completed = 0;
  std::string error;  // set when the stream failed before reaching the record
  EventWait how = EventWait::Spin;
  bool timing = false;
  std::chrono::steady_clock::time_point completed_at{};  // of the last completed record
};

struct FakeGpuService::FakeStream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> ops;
  bool running_op = false;
  bool stop = false;
  std::string error;  // sticky, like a CUDA stream error
  std::thread worker;

  FakeStream() : worker([this] { loop(); }) {}
  ~FakeStream() {
    {
      std::lock_guard lk(mu);
      stop = true;
    }
    cv.notify_all();
    worker.join();
  }
  FakeStream(const FakeStream&) = delete;
  FakeStream& operator=(const FakeStream&) = delete;

  void push(std::function<void()> op) {
    {
      std::lock_guard lk(mu);
      ops.push_back(std::move(op));
    }
    cv.notify_all();
  }
  void drain() {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return ops.empty() && !running_op; });
  }
  void loop() {
    std::unique_lock lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return stop || !ops.empty(); });
      if (ops.empty()) return;  // stop requested and nothing left
      auto op = std::move(ops.front());
      ops.pop_front();
      running_op = true;
      lk.unlock();
      op();
      lk.lock();
      running_op = false;
      cv.notify_all();
    }
  }
};

FakeGpuService::FakeGpuService(FakeGpuOptions options) : opt_(options) {}

FakeGpuService::~FakeGpuService() {
  std::vector<std::shared_ptr<FakeStream>> streams;
  {
    std::lock_guard lk(mu_);
    streams.swap(streams_);
  }
  streams.clear();  // joins the workers outside the lock
}

Availability FakeGpuService::probe() {
  if (opt_.devices <= 0) return Availability::no("no GPU (fake service configured with 0 devices)");
  return Availability::yes();
}

DeviceProperties FakeGpuService::properties(int device) {
  if (device < 0 || device >= opt_.devices) {
    throw RuntimeError("fake GPU: no device " + std::to_string(device));
  }
  DeviceProperties p;
  p.index = device;
  p.name = "Fake GPU";
  // An address a real bus could hold, in fixed-width lower-case hex so that text order is
  // index order: "0000:00:0" + decimal gave GPU 10 "0000:00:010.0", no PCI address, sorted
  // between GPUs 1 and 2. A device number has 5 bits, so GPU 32 and up sit on bus 01.
  // GPUs 0-9 keep the ids they always had ("0000:00:03.0").
  const auto n = static_cast<unsigned>(device);
  char bus_id[32];
  (void)std::snprintf(bus_id, sizeof bus_id, "0000:%02x:%02x.0", n / 32, n % 32);
  p.pci_bus_id = bus_id;
  p.total_memory = 1ULL << 30;
  p.cc_major = 9;
  return p;
}

void FakeGpuService::use_device(int device) {
  if (device < 0 || device >= opt_.devices) {
    throw RuntimeError("fake GPU: cannot use device " + std::to_string(device));
  }
}

Allocation FakeGpuService::allocate(MemType type, std::size_t bytes) {
  std::lock_guard lk(mu_);
  if (opt_.fail_allocation_at >= 0 &&
      alloc_seq_++ == static_cast<uint64_t>(opt_.fail_allocation_at)) {
    throw RuntimeError("fake GPU: allocation of " + std::to_string(bytes) +
                       " bytes failed: GPU out of memory (injected)");
  }
  Allocation a;
  a.type = type;
  a.bytes = bytes;
  a.on_device = type == MemType::CudaMalloc || type == MemType::CuMem;
  const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
  a.ptr = std::aligned_alloc(4096, std::max<std::size_t>(rounded, 4096));
  if (a.ptr == nullptr) throw RuntimeError("fake GPU: host allocation failed");
  std::memset(a.ptr, 0xA5, bytes);  // like cudaMalloc, contents are undefined: not zero
  const bool pinned_host = type == MemType::CudaMallocHost;
  if (a.on_device || pinned_host) {
    ranges_[static_cast<const std::byte*>(a.ptr)] = Range{bytes, a.on_device};
  }
  ++stats_.allocations_live;
  return a;
}

void FakeGpuService::release(const Allocation& a) noexcept {
  std::lock_guard lk(mu_);
  ranges_.erase(static_cast<const std::byte*>(a.ptr));
  std::free(a.ptr);
  --stats_.allocations_live;
}

void* FakeGpuService::alloc_pinned(std::size_t bytes) {
  void* p = std::aligned_alloc(4096, std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096));
  if (p == nullptr) throw RuntimeError("fake GPU: pinned allocation failed");
  std::lock_guard lk(mu_);
  ranges_[static_cast<const std::byte*>(p)] = Range{bytes, false};
  ++stats_.pinned_live;
  return p;
}

void FakeGpuService::free_pinned(void* p) noexcept {
  std::lock_guard lk(mu_);
  ranges_.erase(static_cast<const std::byte*>(p));
  std::free(p);
  --stats_.pinned_live;
}

void FakeGpuService::register_host(void* p, std::size_t bytes) {
  std::lock_guard lk(mu_);
  auto [it, fresh] = registered_.emplace(static_cast<const std::byte*>(p), bytes);
  if (!fresh) throw RuntimeError("fake GPU: host memory registered twice (cudaErrorHostMemoryAlreadyRegistered)");
  ++stats_.registered_live;
}

void FakeGpuService::unregister_host(void* p) noexcept {
  std::lock_guard lk(mu_);
  if (registered_.erase(static_cast<const std::byte*>(p)) > 0) --stats_.registered_live;
}

StreamHandle FakeGpuService::create_stream() {
  auto s = std::make_shared<FakeStream>();
  StreamHandle h{s.get()};
  std::lock_guard lk(mu_);
  streams_.push_back(std::move(s));
  ++stats_.streams_live;
  return h;
}

void FakeGpuService::destroy_stream(StreamHandle s) noexcept {
  std::shared_ptr<FakeStream> victim;
  {
    std::lock_guard lk(mu_);
    auto it = std::find_if(streams_.begin(), streams_.end(),
                           [&](const auto& p) { return p.get() == s.raw; });
    if (it == streams_.end()) return;
    victim = std::move(*it);
    streams_.erase(it);
    --stats_.streams_live;
  }
  victim.reset();  // runs what is queued, then joins
}

EventHandle FakeGpuService::create_event(EventWait how) {
  std::lock_guard lk(mu_);
  ++stats_.events_live;
  auto* ev = new FakeEvent();
  ev->how = how;
  return EventHandle{ev};
}

EventHandle FakeGpuService::create_timing_event(EventWait how) {
  const EventHandle h = create_event(how);
  static_cast<FakeEvent*>(h.raw)->timing = true;
  std::lock_guard lk(mu_);
  ++stats_.timing_events_live;
  return h;
}

std::optional<double> FakeGpuService::elapsed_us(EventHandle start, EventHandle end) {
  // As cudaEventElapsedTime: both must be timing events whose records completed.
  std::chrono::steady_clock::time_point t[2];
  const EventHandle ev[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    auto* e = static_cast<FakeEvent*>(ev[i].raw);
    std::lock_guard lk(e->mu);
    if (!e->timing) throw RuntimeError("fake GPU: elapsed time of an event without timing (cudaErrorInvalidResourceHandle)");
    if (e->recorded == 0 || e->completed < e->recorded) {
      throw RuntimeError("fake GPU: elapsed time of an event not yet completed (cudaErrorNotReady)");
    }
    t[i] = e->completed_at;
  }
  {
    std::lock_guard lk(mu_);
    ++stats_.elapsed_queries;
  }
  return std::chrono::duration<double, std::micro>(t[1] - t[0]).count();
}

void FakeGpuService::destroy_event(EventHandle e) noexcept {
  std::lock_guard lk(mu_);
  --stats_.events_live;
  auto* ev = static_cast<FakeEvent*>(e.raw);
  if (ev->timing) --stats_.timing_events_live;
  delete ev;
}

void FakeGpuService::record(EventHandle e, StreamHandle s) {
  auto* ev = static_cast<FakeEvent*>(e.raw);
  auto* st = static_cast<FakeStream*>(s.raw);
  uint64_t gen = 0;
  {
    std::lock_guard lk(ev->mu);
    gen = ++ev->recorded;
  }
  st->push([ev, st, gen] {
    std::string err;
    {
      std::lock_guard lk(st->mu);
      err = st->error;
    }
    std::lock_guard lk(ev->mu);
    ev->completed = std::max(ev->completed, gen);
    ev->completed_at = std::chrono::steady_clock::now();
    if (!err.empty()) ev->error = err;
    ev->cv.notify_all();
  });
}

bool FakeGpuService::query(EventHandle e) {
  auto* ev = static_cast<FakeEvent*>(e.raw);
  std::lock_guard lk(ev->mu);
  if (!ev->error.empty()) throw RuntimeError("fake GPU: " + ev->error);
  return ev->completed >= ev->recorded;
}

void FakeGpuService::wait(EventHandle e) {
  auto* ev = static_cast<FakeEvent*>(e.raw);
  {
    std::lock_guard lk(mu_);
    ++(ev->how == EventWait::Block ? stats_.blocking_waits : stats_.spin_waits);
  }
  std::unique_lock lk(ev->mu);
  ev->cv.wait(lk, [&] { return ev->completed >= ev->recorded; });
  if (!ev->error.empty()) throw RuntimeError("fake GPU: " + ev->error);
}

void FakeGpuService::sync(StreamHandle s) {
  auto* st = static_cast<FakeStream*>(s.raw);
  st->drain();
  std::lock_guard lk(st->mu);
  if (!st->error.empty()) throw RuntimeError("fake GPU: " + st->error);
}

void FakeGpuService::sync_device() {
  // Shared ownership: another thread may destroy its stream while this one waits on it
  // (a worker that failed tears down while another reaps); the last owner joins it.
  std::vector<std::shared_ptr<FakeStream>> all;
  {
    std::lock_guard lk(mu_);
    ++stats_.device_syncs;
    all = streams_;
  }
  for (const auto& s : all) sync(StreamHandle{s.get()});
}

const FakeGpuService::Range* FakeGpuService::find_range(const void* p) const {
  const auto* b = static_cast<const std::byte*>(p);
  auto it = ranges_.upper_bound(b);
  if (it == ranges_.begin()) return nullptr;
  --it;
  if (b < it->first + it->second.bytes) return &it->second;
  return nullptr;
}

bool FakeGpuService::pinned_locked(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const std::byte*>(p);
  if (const Range* r = find_range(p); r != nullptr && !r->device) return true;
  auto it = registered_.upper_bound(b);
  if (it == registered_.begin()) return false;
  --it;
  return b >= it->first && b + bytes <= it->first + it->second;
}

bool FakeGpuService::is_device_pointer(const void* p) const {
  std::lock_guard lk(mu_);
  const Range* r = find_range(p);
  return r != nullptr && r->device;
}

void FakeGpuService::check_copy(void* dst, const void* src, std::size_t bytes, CopyDir dir,
                                bool async) const {
  std::lock_guard lk(mu_);
  const void* dev = dir == CopyDir::HostToDevice ? dst : src;
  const void* host = dir == CopyDir::HostToDevice ? src : dst;
  const Range* r = find_range(dev);
  if (r == nullptr || !r->device) {
    throw RuntimeError("fake GPU: copy direction wrong: device side is not device memory");
  }
  const Range* hr = find_range(host);
  if (hr != nullptr && hr->device) {
    throw RuntimeError("fake GPU: copy direction wrong: host side is device memory");
  }
  if (async && opt_.require_pinned_async && !pinned_locked(host, bytes)) {
    throw RuntimeError("fake GPU: async copy from pageable host memory (would not overlap)");
  }
}

void FakeGpuService::copy(void* dst, const void* src, std::size_t bytes, CopyDir dir) {
  check_copy(dst, src, bytes, dir, false);
  std::memcpy(dst, src, bytes);
  std::lock_guard lk(mu_);
  ++stats_.sync_copies;
  (dir == CopyDir::HostToDevice ? stats_.bytes_h2d : stats_.bytes_d2h) += bytes;
}

void FakeGpuService::copy_pageable(void* dst, const void* src, std::size_t bytes, CopyDir dir) {
  check_copy(dst, src, bytes, dir, false);
  {
    std::lock_guard lk(mu_);
    if (pinned_locked(dir == CopyDir::HostToDevice ? src : dst, bytes)) {
      throw RuntimeError("fake GPU: pageable copy from pinned or registered host memory");
    }
  }
  std::memcpy(dst, src, bytes);
  std::lock_guard lk(mu_);
  ++stats_.pageable_copies;
  (dir == CopyDir::HostToDevice ? stats_.pageable_bytes_h2d : stats_.pageable_bytes_d2h) += bytes;
}

void FakeGpuService::copy_async(void* dst, const void* src, std::size_t bytes, CopyDir dir,
                                StreamHandle s) {
  check_copy(dst, src, bytes, dir, true);
  auto* st = static_cast<FakeStream*>(s.raw);
  const auto* host = static_cast<const std::byte*>(dir == CopyDir::HostToDevice ? src : dst);
  bool fail = false;
  {
    std::lock_guard lk(mu_);
    fail = opt_.fail_async_copy_at >= 0 &&
           async_seq_ == static_cast<uint64_t>(opt_.fail_async_copy_at);
    ++async_seq_;
    ++stats_.async_copies;
    (dir == CopyDir::HostToDevice ? stats_.bytes_h2d : stats_.bytes_d2h) += bytes;
    busy_.emplace(host, bytes);
  }
  const auto delay = opt_.copy_delay;
  st->push([this, st, dst, src, bytes, host, fail, delay] {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    bool skip = false;
    {
      std::lock_guard lk(st->mu);
      if (fail && st->error.empty()) st->error = "injected async copy failure (cudaErrorLaunchFailure)";
      skip = !st->error.empty();
    }
    if (!skip) std::memcpy(dst, src, bytes);
    std::lock_guard lk(mu_);
    auto it = busy_.find(host);
    while (it != busy_.end() && it->first == host && it->second != bytes) ++it;
    if (it != busy_.end() && it->first == host) busy_.erase(it);
  });
}

void FakeGpuService::launch_host_func(StreamHandle s, std::function<void()> fn) {
  static_cast<FakeStream*>(s.raw)->push(std::move(fn));
}

bool FakeGpuService::host_range_busy(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const std::byte*>(p);
  std::lock_guard lk(mu_);
  for (const auto& [start, len] : busy_) {
    if (start < b + bytes && b < start + len) return true;
  }
  return false;
}

uint64_t FakeGpuService::pending_async_copies() const {
  std::lock_guard lk(mu_);
  return busy_.size();
}

FakeGpuStats FakeGpuService::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

}  // namespace gdsb::gpu
