// -x 0 GPU_DIRECT (cuFileRead/Write, synchronous) and -x 5 GPU_DIRECT_ASYNC
// (cuFileReadAsync/WriteAsync, one CUDA stream registered with cuFileStreamRegister per slot).
#include <deque>

#include "cufile_path_common.hpp"

namespace gdsb::gpu {
namespace {

class GpuDirectWorker final : public detail::CufileWorkerCore {
 public:
  GpuDirectWorker(GpuService& svc, const Workload& w, const FileSet& files, CufileSession& s,
                  CompletionWait /*synchronous: nothing to wait for*/)
      : CufileWorkerCore(svc, w, files, s, CompletionWait::Event, std::max<uint32_t>(1, w.iodepth),
                         "-x 0") {}

  void submit(std::span<const IoRequest> requests) override {
    begin_submit(requests);
    for (const IoRequest& r : requests) {
      void* buf = slot_buffer(r.slot);
      const auto off = static_cast<off_t>(r.offset);
      const bool read = r.dir == IoDir::Read;
      const ssize_t n = read ? api().read(session_.handle(r.file), buf, r.length, off, 0)
                             : api().write(session_.handle(r.file), buf, r.length, off, 0);
      done_.push_back(complete_io(read ? "cuFileRead" : "cuFileWrite", r.dir, r.file, r.tag, n));
    }
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    std::size_t n = 0;
    while (n < out.size() && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    return end_reap(n, min_complete);
  }

 private:
  std::deque<IoCompletion> done_;
};

// Each slot has its own registered stream: the calls of one stream run one after the
// other, so with one stream per thread --iodepth added no concurrency (issue 11).
class GpuDirectAsyncWorker final : public detail::CufileWorkerCore {
 public:
  GpuDirectAsyncWorker(GpuService& svc, const Workload& w, const FileSet& files, CufileSession& s,
                       CompletionWait completion)
      : CufileWorkerCore(svc, w, files, s, completion, std::max<uint32_t>(1, w.iodepth), "-x 5"),
        slots_(depth()) {
    // Block: the wait covers a storage I/O, long enough that a sleeping wait costs no
    // throughput and saves the core a spinning one would burn.
    for (uint32_t i = 0; i < depth(); ++i) events_.emplace_back(svc, EventWait::Block);
    // A failed registration throws; the streams made so far are deregistered with streams_.
    for (uint32_t i = 0; i < depth(); ++i) streams_.push_back(std::make_unique<detail::RegisteredStream>(svc, s));
  }

  void submit(std::span<const IoRequest> requests) override {
    begin_submit(requests);
    for (const IoRequest& r : requests) {
      Slot& slot = slots_[r.slot];
      if (slot.busy) throw std::logic_error("-x 5: slot resubmitted before it completed");
      slot.args = AsyncArgs{r.length, static_cast<off_t>(r.offset), 0, 0};
      const StreamHandle stream = streams_[r.slot]->handle();
      AsyncArgs& a = slot.args;
      const auto fn = r.dir == IoDir::Read ? api().read_async : api().write_async;
      const cufile::CUfileError_t e = fn(session_.handle(r.file), slot_buffer(r.slot), &a.size,
                                         &a.file_offset, &a.buf_offset, &a.done, stream.raw);
      if (e.err != cufile::kSuccess) session_.fail(call_name(r.dir), e.err, e.cu_err, r.file);
      svc_.record(events_[r.slot].handle(), stream);
      slot.busy = true;
      slot.tag = r.tag;
      slot.file = r.file;
      slot.dir = r.dir;
      order_.push_back(r.slot);
    }
  }

  // Requests on different streams finish in any order: take every finished one (oldest
  // first), then, while fewer than min_complete, wait for the oldest on its own event.
  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    begin_reap();
    std::size_t n = 0;
    const auto take = [&](std::deque<uint32_t>::iterator it) {
      Slot& slot = slots_[*it];
      slot.busy = false;
      out[n++] = complete_io(call_name(slot.dir), slot.dir, slot.file, slot.tag, slot.args.done);
      return order_.erase(it);
    };
    for (auto it = order_.begin(); it != order_.end() && n < out.size();) {
      it = svc_.query(events_[*it].handle()) ? take(it) : std::next(it);
    }
    while (n < min_complete && n < out.size() && !order_.empty()) {
      svc_.wait(events_[order_.front()].handle());
      take(order_.begin());
    }
    return end_reap(n, min_complete);
  }

 private:
  // The arguments of an async call are read when the stream executes it, so they live
  // per slot until the request completes.
  struct AsyncArgs {
    std::size_t size = 0;
    off_t file_offset = 0;
    off_t buf_offset = 0;
    ssize_t done = 0;
  };
  struct Slot {
    AsyncArgs args;
    bool busy = false;
    uint64_t tag = 0;
    uint32_t file = 0;
    IoDir dir = IoDir::Read;
  };
  static const char* call_name(IoDir d) { return d == IoDir::Read ? "cuFileReadAsync" : "cuFileWriteAsync"; }

  std::vector<Slot> slots_;
  std::vector<Event> events_;
  std::deque<uint32_t> order_;  // slots in flight, oldest first
  // Last: destroyed first, so every stream drains before the events and arguments it uses go.
  std::vector<std::unique_ptr<detail::RegisteredStream>> streams_;
};

}  // namespace

std::unique_ptr<TransferPath> make_gpu_direct_path(GpuPathDeps deps) {
  return std::make_unique<detail::CufilePath<GpuDirectWorker>>(std::move(deps), XferType::GpuDirect,
                                                               detail::CufileNeeds::Basic);
}

std::unique_ptr<TransferPath> make_gpu_direct_async_path(GpuPathDeps deps) {
  return std::make_unique<detail::CufilePath<GpuDirectAsyncWorker>>(
      std::move(deps), XferType::GpuDirectAsync, detail::CufileNeeds::Stream);
}

}  // namespace gdsb::gpu
