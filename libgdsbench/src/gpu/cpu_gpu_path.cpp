// -x 2 CPU_GPU and -x 4 CPU_CACHED_GPU: storage I/O into a pinned host staging slot, then
// a copy to the GPU that the worker waits for (writes: copy from the GPU, then storage I/O).
// The copies go on the worker's own non-blocking stream and the worker waits on its own
// event: cudaMemcpy on the legacy default stream serialised every thread's copies in the
// process (issue 11: -x 2 at 8 threads ran at a third of -x 1). -x 4 is the
// same data path through the page cache (files opened without O_DIRECT); where no GPU is
// usable, -x 4 runs only its host part (the engine's page-cache run) and says why.
#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "gdsb/cpu_paths.hpp"
#include "gdsb/io_phases.hpp"
#include "path_common.hpp"
#include "../worker_loop.hpp"  // gdsb::detail::now_ns, the runner's clock

namespace gdsb::gpu {
namespace {

class CpuGpuWorker final : public PathWorker {
 public:
  CpuGpuWorker(GpuService& svc, const Workload& w, const FileSet& files, const StagingFactory& f,
               CopyTiming timing, std::string* describe, std::mutex* describe_mutex)
      : svc_(svc),
        bind_(svc, w.gpu),
        io_size_(w.io_size),
        nfiles_(files.fds.size()),
        depth_(std::max<uint32_t>(1, w.iodepth)),
        staging_(f(files, StagingSpec{depth_, w.io_size, w.numa_node, w.engine,
                                      !w.skip_buffer_register})),
        gpu_(svc, w.mem_type, depth_, w.io_size),
        stream_(svc),
        copied_(svc, EventWait::Spin, event_timing(timing)),
        tags_(depth_),
        phases_(depth_ == 1) {
    if (timing == CopyTiming::Events) copy_start_.emplace(svc, EventWait::Spin, EventTiming::On);
    for (uint32_t i = 0; i < depth_; ++i) pins_.emplace_back(svc, staging_->slot(i), io_size_);
    const std::lock_guard lock(*describe_mutex);
    if (describe->empty()) *describe = staging_->describe();
  }

  uint32_t depth() const override { return depth_; }

  void submit(std::span<const IoRequest> requests) override {
    bind_.enter();
    detail::check_requests(requests, depth_, io_size_, nfiles_);
    staged_.clear();
    for (const IoRequest& r : requests) {
      if (r.dir == IoDir::Write) {
        copy(staging_->slot(r.slot), gpu_.at(r.slot), r.length, CopyDir::DeviceToHost);
      }
      IoRequest s = r;
      s.tag = r.slot;  // staging completions name the slot; the runner's tag is kept here
      tags_[r.slot] = {r.tag, r.dir, 0};
      staged_.push_back(s);
    }
    // The storage phase starts here: after the write copies, before the pread/pwrite (psync
    // does them inside submit) or the io_uring submission.
    const uint64_t t = gdsb::detail::now_ns();
    for (const IoRequest& r : requests) tags_[r.slot].storage_start = t;
    staging_->submit(staged_);
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    bind_.enter();
    const std::size_t n = staging_->reap(out, min_complete);
    const uint64_t landed = n > 0 ? gdsb::detail::now_ns() : 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto slot = static_cast<uint32_t>(out[i].tag);
      const auto [tag, dir, storage_start] = tags_.at(slot);
      phases_.storage(landed - storage_start);
      if (dir == IoDir::Read && out[i].result > 0) {
        copy(gpu_.at(slot), staging_->slot(slot), static_cast<std::size_t>(out[i].result),
             CopyDir::HostToDevice);
      }
      out[i].tag = tag;
    }
    return n;
  }

  void load_slot(uint32_t slot, std::span<const std::byte> data) override {
    bind_.enter();
    gpu_.load(slot, data);
  }
  void read_slot(uint32_t slot, std::span<std::byte> out) override {
    bind_.enter();
    gpu_.read(slot, out);
  }
  PhaseRecorder* phases() override { return &phases_; }

 private:
  static EventTiming event_timing(CopyTiming t) {
    return t == CopyTiming::Events ? EventTiming::On : EventTiming::Off;
  }

  // The bytes are at dst on return; the staging slot is pinned, so the copy is a DMA on
  // this worker's stream that no other thread's copy waits behind. Spin: a copy of one
  // I/O takes tens of microseconds, less than a sleeping wait's wake-up costs.
  // Phases: the host time from queueing the copy to seeing its event (what the thread
  // waited) and, with timing events, the GPU time between the events around the copy.
  void copy(void* dst, const void* src, std::size_t bytes, CopyDir dir) {
    const uint64_t t0 = gdsb::detail::now_ns();
    if (copy_start_) svc_.record(copy_start_->handle(), stream_.handle());
    svc_.copy_async(dst, src, bytes, dir, stream_.handle());
    svc_.record(copied_.handle(), stream_.handle());
    svc_.wait(copied_.handle());
    phases_.copy(gdsb::detail::now_ns() - t0);
    if (copy_start_) {
      if (const auto us = svc_.elapsed_us(copy_start_->handle(), copied_.handle())) {
        phases_.dma(static_cast<uint64_t>(std::max(0.0, *us) * 1000.0));
      }
    }
  }

  struct Pending {
    uint64_t tag = 0;
    IoDir dir = IoDir::Read;
    uint64_t storage_start = 0;  // ns, when its storage I/O was handed to the staging
  };
  GpuService& svc_;
  detail::ThreadBinding bind_;
  uint64_t io_size_;
  std::size_t nfiles_;
  uint32_t depth_;
  std::unique_ptr<StagingIo> staging_;
  detail::SlotBuffers gpu_;
  Stream stream_;
  Event copied_;
  std::vector<HostRegistration> pins_;  // destroyed before staging_ (declared after it)
  std::optional<Event> copy_start_;  // CopyTiming::Events: recorded before each copy
  std::vector<Pending> tags_;
  std::vector<IoRequest> staged_;
  PhaseRecorder phases_;
};

class CpuGpuRun final : public PathRun {
 public:
  CpuGpuRun(GpuPathDeps deps, const Workload& w, const FileSet& files, bool cached)
      : deps_(std::move(deps)), w_(w), files_(files), cached_(cached) {}
  std::unique_ptr<PathWorker> make_worker(uint32_t) override {
    return std::make_unique<CpuGpuWorker>(*deps_.service, w_, files_, deps_.staging,
                                          deps_.copy_timing, &staging_describe_, &mutex_);
  }
  PathReport finish() override {
    PathReport r;
    r.path_used = path_used_name(cached_ ? PathUsed::PageCache : PathUsed::Posix);
    r.evidence.push_back(std::string(cached_ ? "buffered" : "O_DIRECT") +
                         " storage I/O into pinned host staging buffers, each copy to or from "
                         "GPU " + std::to_string(w_.gpu) +
                         " on the thread's own CUDA stream, waited for before the I/O completes");
    const std::lock_guard lock(mutex_);
    if (!staging_describe_.empty()) r.evidence.push_back("storage I/O by " + staging_describe_);
    return r;
  }

 private:
  GpuPathDeps deps_;
  Workload w_;
  FileSet files_;
  bool cached_;
  std::mutex mutex_;
  std::string staging_describe_;
};

class CpuGpuPath final : public TransferPath {
 public:
  CpuGpuPath(GpuPathDeps deps, bool cached) : deps_(std::move(deps)), cached_(cached) {}
  XferType type() const override { return cached_ ? XferType::CpuCachedGpu : XferType::CpuGpu; }
  Availability probe(const Workload& w) const override {
    if (cached_) {
      // -x 4 runs without a GPU too (its host part): only the engine and -m must work.
      const Availability host = probe_host_engine(w);
      if (!host.ok) return host;
      if (!deps_.service->probe().ok) return check_mem_type(w.xfer, w.mem_type);
    }
    return detail::probe_gpu(*deps_.service, w);
  }
  bool needs_odirect(const Workload& w) const override { return !cached_ && w.odirect; }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) override {
    if (cached_) {
      const Availability gpu = deps_.service->probe();
      if (!gpu.ok) return start_page_cache_host_run(w, files, gpu.reason);
    }
    const Availability a = probe(w);
    if (!a.ok) {
      if (check_mem_type(w.xfer, w.mem_type).ok) throw RuntimeError(a.reason);
      throw UsageError(a.reason);
    }
    return std::make_unique<CpuGpuRun>(deps_, w, files, cached_);
  }

 private:
  GpuPathDeps deps_;
  bool cached_;
};

}  // namespace

std::unique_ptr<TransferPath> make_cpu_gpu_path(GpuPathDeps deps) {
  return std::make_unique<CpuGpuPath>(std::move(deps), false);
}
std::unique_ptr<TransferPath> make_cpu_cached_gpu_path(GpuPathDeps deps) {
  return std::make_unique<CpuGpuPath>(std::move(deps), true);
}

}  // namespace gdsb::gpu
