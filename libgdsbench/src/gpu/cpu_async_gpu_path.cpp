// -x 3 CPU_ASYNC_GPU: the -x 2 data path, pipelined. Each GPU slot owns C pinned staging
// chunks (C = io_size / kAsyncChunkBytes, rounded up; 1 for I/Os up to 1 MiB). A read issues the storage I/O of
// chunk k, and as soon as it lands its host-to-device copy is queued on the worker's CUDA
// stream, so the copy of chunk k overlaps the storage I/O of chunk k+1 and of the next
// request; the request completes when an event recorded after its last copy fires. A write
// queues all device-to-host copies at once and writes chunk k to storage once its event
// fires. Staging chunks are reused only after the request that used them completed.
//
// Phases (docs/gpu-paths.md): a read's storage phase runs from its submission until its
// last chunk landed, its copy phase from then until that chunk's copy finished: on the GPU's
// clock with timing events (the GPU time from a marker before the last copy to the
// completion event), else when the thread first saw the event done (checked after every
// storage completion). Not until the thread reaped it: with psync the chunks of the next
// request are read inside submit(), and a copy phase to the reap counted those reads as
// copy (31 ms per 4 MiB I/O against -x 2's 0.12 ms on the H200 machine, issue 43). A
// write's copy phase runs until its last chunk's copy finished and went to storage, its
// storage phase from then on. The DMA is the sum of each chunk's copy on the GPU (a marker
// before it, its event after), never the span from the first copy to the last, which
// holds the storage reads of the chunks between.
// Wait: the time the thread blocked on a copy with no storage I/O in flight (a slot, hence
// its staging chunks, still busy with a copy), charged to the request it waited for.
#include <algorithm>
#include <optional>

#include "../worker_loop.hpp"  // gdsb::detail::now_ns, the runner's clock
#include "gdsb/io_phases.hpp"
#include "path_common.hpp"

namespace gdsb::gpu {
namespace {

struct SlotState {
  bool busy = false;
  uint64_t tag = 0;
  uint64_t seq = 0;
  IoDir dir = IoDir::Read;
  uint32_t file = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  uint32_t chunks = 0;
  uint32_t storage_done = 0;     // chunks whose storage I/O completed
  uint32_t writes_submitted = 0; // write chunks handed to storage
  bool event_recorded = false;   // read: the completion event is queued
  int64_t error = 0;             // first negative storage result
  uint64_t bytes = 0;
  uint64_t submitted_ns = 0;
  uint64_t switched_ns = 0;      // read: last chunk landed; write: last chunk went to storage
  uint64_t wait_ns = 0;
  uint64_t copy_seen_ns = 0;     // read: when the thread first saw the completion event done
  uint32_t copies = 0;           // copies queued (chunks with data), each timed with Events
  uint32_t last_copied = 0;      // the chunk of the last copy queued
};

class CpuAsyncGpuWorker final : public PathWorker {
 public:
  CpuAsyncGpuWorker(GpuService& svc, const Workload& w, const FileSet& files,
                    const StagingFactory& f, CopyTiming timing)
      : svc_(svc),
        bind_(svc, w.gpu),
        io_size_(w.io_size),
        nfiles_(files.fds.size()),
        depth_(std::max<uint32_t>(2, w.iodepth)),
        chunk_(std::min<std::size_t>(w.io_size, kAsyncChunkBytes)),
        per_slot_(static_cast<uint32_t>((w.io_size + chunk_ - 1) / chunk_)),
        staging_(f(files, StagingSpec{depth_ * per_slot_, chunk_, w.numa_node,
                                      w.engine, !w.skip_buffer_register})),
        gpu_(svc, w.mem_type, depth_, w.io_size),
        stream_(svc),
        slots_(depth_),
        timed_(timing == CopyTiming::Events),
        phases_(false) {
    const EventTiming t = timed_ ? EventTiming::On : EventTiming::Off;
    for (uint32_t i = 0; i < depth_ * per_slot_; ++i) {
      pins_.emplace_back(svc, staging_->slot(i), chunk_);
      chunk_events_.emplace_back(svc, EventWait::Spin, t);
      if (timed_) chunk_start_events_.emplace_back(svc, EventWait::Spin, t);
    }
    for (uint32_t i = 0; i < depth_; ++i) done_events_.emplace_back(svc, EventWait::Spin, t);
    scratch_.resize(depth_ * per_slot_);
    chunk_copied_.resize(depth_ * per_slot_);
  }

  ~CpuAsyncGpuWorker() override {
    try {
      svc_.sync(stream_.handle());  // no copy may outlive the buffers
    } catch (...) {
    }
  }

  uint32_t depth() const override { return depth_; }

  void submit(std::span<const IoRequest> requests) override {
    bind_.enter();
    detail::check_requests(requests, depth_, io_size_, nfiles_);
    const uint64_t now = gdsb::detail::now_ns();
    for (const IoRequest& r : requests) {
      SlotState& s = slots_[r.slot];
      if (s.busy) throw std::logic_error("-x 3: slot resubmitted before it completed");
      s = SlotState{};
      s.busy = true;
      s.tag = r.tag;
      s.seq = next_seq_++;
      s.dir = r.dir;
      s.file = r.file;
      s.offset = r.offset;
      s.length = r.length;
      s.chunks = static_cast<uint32_t>((r.length + chunk_ - 1) / chunk_);
      s.submitted_ns = now;
      for (uint32_t k = 0; k < per_slot_; ++k) chunk_copied_[chunk_index(r.slot, k)] = false;
      if (s.chunks == 0) {  // zero-length request: completes at once
        s.switched_ns = now;
        s.event_recorded = true;
        svc_.record(done_events_[r.slot].handle(), stream_.handle());
        continue;
      }
      if (r.dir == IoDir::Read) {
        for (uint32_t k = 0; k < s.chunks; ++k) {
          submit_storage(r.slot, k, IoDir::Read);
          pump();  // queue the copy of what already landed before the next storage I/O
        }
      } else {
        for (uint32_t k = 0; k < s.chunks; ++k) {
          const uint32_t c = chunk_index(r.slot, k);
          copy_chunk(r.slot, c, staging_->slot(c), gpu_.at(r.slot) + k * chunk_, chunk_len(s, k),
                     CopyDir::DeviceToHost);
        }
        pump();
      }
    }
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    bind_.enter();
    std::size_t n = 0;
    for (;;) {
      pump();
      n += collect(out.subspan(n));
      if (n >= min_complete || n == out.size()) return n;
      block_once();
    }
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
  // Queues one chunk's copy on the stream, between its timing marker (Events) and its event.
  void copy_chunk(uint32_t slot, uint32_t c, void* dst, const void* src, std::size_t bytes, CopyDir dir) {
    if (timed_) svc_.record(chunk_start_events_[c].handle(), stream_.handle());
    svc_.copy_async(dst, src, bytes, dir, stream_.handle());
    svc_.record(chunk_events_[c].handle(), stream_.handle());
    ++slots_[slot].copies;
    slots_[slot].last_copied = c;
  }

  // GPU microseconds of chunk c's copy (its events have completed).
  double chunk_dma_us(uint32_t c) {
    return std::max(0.0, svc_.elapsed_us(chunk_start_events_[c].handle(), chunk_events_[c].handle()).value_or(0.0));
  }

  // The request in slot is complete: its phases, at time now.
  void record_phases(uint32_t slot, uint64_t now) {
    SlotState& s = slots_[slot];
    if (s.dir == IoDir::Read) {
      phases_.storage(s.switched_ns - s.submitted_ns);
      uint64_t copy_ns = (s.copy_seen_ns != 0 ? s.copy_seen_ns : now) - s.switched_ns;
      if (timed_ && s.copies > 0) {  // the last chunk's marker to the completion event
        if (const auto us = svc_.elapsed_us(chunk_start_events_[s.last_copied].handle(), done_events_[slot].handle()))
          copy_ns = static_cast<uint64_t>(std::max(0.0, *us) * 1000.0);
      }
      phases_.copy(copy_ns);
    } else {
      phases_.copy(s.switched_ns - s.submitted_ns);
      phases_.storage(now - s.switched_ns);
    }
    phases_.wait(s.wait_ns);
    if (timed_ && s.copies > 0) {
      double us = 0;
      for (uint32_t k = 0; k < s.chunks; ++k) {
        // A read chunk that brought no data (an error, or the file's end) was not copied.
        if (s.dir == IoDir::Write || chunk_copied_[chunk_index(slot, k)]) us += chunk_dma_us(chunk_index(slot, k));
      }
      phases_.dma(static_cast<uint64_t>(us * 1000.0));
    }
  }

  uint32_t chunk_index(uint32_t slot, uint32_t k) const { return slot * per_slot_ + k; }
  uint32_t chunk_len(const SlotState& s, uint32_t k) const {
    return static_cast<uint32_t>(std::min<uint64_t>(chunk_, s.length - uint64_t{k} * chunk_));
  }

  void submit_storage(uint32_t slot, uint32_t k, IoDir dir) {
    const SlotState& s = slots_[slot];
    IoRequest q;
    q.tag = chunk_index(slot, k);
    q.slot = chunk_index(slot, k);
    q.file = s.file;
    q.offset = s.offset + uint64_t{k} * chunk_;
    q.length = chunk_len(s, k);
    q.dir = dir;
    staging_->submit(std::span<const IoRequest>(&q, 1));
    ++staging_in_flight_;
  }

  // A storage I/O of a chunk finished.
  void on_storage(uint32_t c, int64_t result) {
    const uint32_t slot = c / per_slot_;
    const uint32_t k = c % per_slot_;
    SlotState& s = slots_[slot];
    ++s.storage_done;
    if (result < 0) {
      if (s.error == 0) s.error = result;
    } else {
      s.bytes += static_cast<uint64_t>(result);
      if (s.dir == IoDir::Read && result > 0 && s.error == 0) {
        copy_chunk(slot, c, gpu_.at(slot) + uint64_t{k} * chunk_, staging_->slot(c),
                   static_cast<std::size_t>(result), CopyDir::HostToDevice);
        chunk_copied_[c] = true;
      }
    }
    if (s.dir == IoDir::Read && s.storage_done == s.chunks) {
      svc_.record(done_events_[slot].handle(), stream_.handle());
      s.event_recorded = true;
      s.switched_ns = gdsb::detail::now_ns();
    }
  }

  // Moves every request forward as far as it can go without blocking.
  void pump() {
    if (staging_in_flight_ > 0) {
      const std::size_t n = staging_->reap(scratch_, 0);
      staging_in_flight_ -= static_cast<uint32_t>(n);
      for (std::size_t i = 0; i < n; ++i) {
        on_storage(static_cast<uint32_t>(scratch_[i].tag), scratch_[i].result);
      }
    }
    for (uint32_t slot = 0; slot < depth_; ++slot) {
      SlotState& s = slots_[slot];
      // A read whose copy finished while the thread read other chunks: when it was first seen.
      if (s.busy && s.dir == IoDir::Read && s.event_recorded && s.copy_seen_ns == 0 &&
          svc_.query(done_events_[slot].handle()))
        s.copy_seen_ns = gdsb::detail::now_ns();
      if (!s.busy || s.dir != IoDir::Write) continue;
      while (s.writes_submitted < s.chunks &&
             svc_.query(chunk_events_[chunk_index(slot, s.writes_submitted)].handle())) {
        submit_storage(slot, s.writes_submitted++, IoDir::Write);
        if (s.writes_submitted == s.chunks) s.switched_ns = gdsb::detail::now_ns();
      }
    }
  }

  bool complete(uint32_t slot) {
    const SlotState& s = slots_[slot];
    if (!s.busy) return false;
    if (s.dir == IoDir::Write) return s.storage_done == s.chunks && s.writes_submitted == s.chunks;
    return s.event_recorded && svc_.query(done_events_[slot].handle());
  }

  // Completed requests, oldest first.
  std::size_t collect(std::span<IoCompletion> out) {
    std::size_t n = 0;
    uint64_t now = 0;
    while (n < out.size()) {
      int best = -1;
      for (uint32_t slot = 0; slot < depth_; ++slot) {
        if (complete(slot) && (best < 0 || slots_[slot].seq < slots_[static_cast<uint32_t>(best)].seq)) {
          best = static_cast<int>(slot);
        }
      }
      if (best < 0) break;
      SlotState& s = slots_[static_cast<uint32_t>(best)];
      if (now == 0) now = gdsb::detail::now_ns();
      record_phases(static_cast<uint32_t>(best), now);
      out[n++] = IoCompletion{s.tag, s.error != 0 ? s.error : static_cast<int64_t>(s.bytes)};
      s.busy = false;
    }
    return n;
  }

  // Waits for the next thing that can make progress.
  void block_once() {
    if (staging_in_flight_ > 0) {
      const std::size_t n = staging_->reap(scratch_, 1);
      staging_in_flight_ -= static_cast<uint32_t>(n);
      for (std::size_t i = 0; i < n; ++i) {
        on_storage(static_cast<uint32_t>(scratch_[i].tag), scratch_[i].result);
      }
      return;
    }
    int oldest = -1;
    for (uint32_t slot = 0; slot < depth_; ++slot) {
      if (slots_[slot].busy &&
          (oldest < 0 || slots_[slot].seq < slots_[static_cast<uint32_t>(oldest)].seq)) {
        oldest = static_cast<int>(slot);
      }
    }
    if (oldest < 0) throw std::logic_error("-x 3: reap waits for more than was submitted");
    const auto slot = static_cast<uint32_t>(oldest);
    SlotState& s = slots_[slot];
    const uint64_t t0 = gdsb::detail::now_ns();
    if (s.dir == IoDir::Read) {
      svc_.wait(done_events_[slot].handle());
    } else if (s.writes_submitted < s.chunks) {
      svc_.wait(chunk_events_[chunk_index(slot, s.writes_submitted)].handle());
    }
    s.wait_ns += gdsb::detail::now_ns() - t0;
  }

  GpuService& svc_;
  detail::ThreadBinding bind_;
  uint64_t io_size_;
  std::size_t nfiles_;
  uint32_t depth_;
  std::size_t chunk_;
  uint32_t per_slot_;
  std::unique_ptr<StagingIo> staging_;
  detail::SlotBuffers gpu_;
  Stream stream_;
  std::vector<HostRegistration> pins_;
  std::vector<Event> chunk_events_;
  std::vector<Event> done_events_;         // per slot: after its last copy (timed with Events)
  std::vector<Event> chunk_start_events_;  // per chunk, before its copy (Events only)
  std::vector<bool> chunk_copied_;         // read: the chunk's copy was queued
  std::vector<SlotState> slots_;
  std::vector<IoCompletion> scratch_;
  uint32_t staging_in_flight_ = 0;
  uint64_t next_seq_ = 0;
  bool timed_;
  PhaseRecorder phases_;
};

class CpuAsyncGpuRun final : public PathRun {
 public:
  CpuAsyncGpuRun(GpuPathDeps deps, const Workload& w, const FileSet& files)
      : deps_(std::move(deps)), w_(w), files_(files) {}
  std::unique_ptr<PathWorker> make_worker(uint32_t) override {
    return std::make_unique<CpuAsyncGpuWorker>(*deps_.service, w_, files_, deps_.staging,
                                               deps_.copy_timing);
  }
  PathReport finish() override {
    PathReport r;
    r.path_used = path_used_name(PathUsed::Posix);
    const std::size_t chunk = std::min<std::size_t>(w_.io_size, kAsyncChunkBytes);
    r.evidence.push_back(
        "O_DIRECT storage I/O into pinned staging chunks of " + std::to_string(chunk) +
        " bytes, copies queued on a CUDA stream of GPU " + std::to_string(w_.gpu) +
        " overlapping the next storage I/O, " + std::to_string(std::max<uint32_t>(2, w_.iodepth)) +
        " requests in flight per thread");
    return r;
  }

 private:
  GpuPathDeps deps_;
  Workload w_;
  FileSet files_;
};

class CpuAsyncGpuPath final : public TransferPath {
 public:
  explicit CpuAsyncGpuPath(GpuPathDeps deps) : deps_(std::move(deps)) {}
  XferType type() const override { return XferType::CpuAsyncGpu; }
  Availability probe(const Workload& w) const override { return detail::probe_gpu(*deps_.service, w); }
  bool needs_odirect(const Workload& w) const override { return w.odirect; }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) override {
    if (const Availability m = check_mem_type(w.xfer, w.mem_type); !m.ok) throw UsageError(m.reason);
    detail::require(probe(w));
    return std::make_unique<CpuAsyncGpuRun>(deps_, w, files);
  }

 private:
  GpuPathDeps deps_;
};

}  // namespace

std::unique_ptr<TransferPath> make_cpu_async_gpu_path(GpuPathDeps deps) {
  return std::make_unique<CpuAsyncGpuPath>(std::move(deps));
}

}  // namespace gdsb::gpu
