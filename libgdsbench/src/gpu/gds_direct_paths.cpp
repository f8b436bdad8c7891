// -x 0 GPU_DIRECT (cuFileRead/Write, synchronous) and -x 5 GPU_DIRECT_ASYNC
// (cuFileReadAsync/WriteAsync on a CUDA stream registered with cuFileStreamRegister).
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

// The arguments of an async call are read when the stream executes it, so they live
// per slot until the request completes.
struct AsyncArgs {
  std::size_t size = 0;
  off_t file_offset = 0;
  off_t buf_offset = 0;
  ssize_t done = 0;
};

class GpuDirectAsyncWorker final : public detail::CufileWorkerCore {
 public:
  GpuDirectAsyncWorker(GpuService& svc, const Workload& w, const FileSet& files, CufileSession& s,
                       CompletionWait completion)
      : CufileWorkerCore(svc, w, files, s, completion, std::max<uint32_t>(1, w.iodepth), "-x 5"),
        stream_(svc),
        args_(depth()),
        busy_(depth(), false),
        tags_(depth()),
        files_of_(depth()),
        dirs_(depth()) {
    // Block: the wait covers a storage I/O, long enough that a sleeping wait costs no
    // throughput and saves the core a spinning one would burn.
    for (uint32_t i = 0; i < depth(); ++i) events_.emplace_back(svc, EventWait::Block);
    const cufile::CUfileError_t e = s.api().stream_register(stream_.handle().raw, 0);
    if (e.err != cufile::kSuccess) s.fail("cuFileStreamRegister", e.err, e.cu_err, UINT32_MAX);
  }

  ~GpuDirectAsyncWorker() override {
    try {
      svc_.sync(stream_.handle());
    } catch (...) {
    }
    api().stream_deregister(stream_.handle().raw);
  }

  void submit(std::span<const IoRequest> requests) override {
    begin_submit(requests);
    for (const IoRequest& r : requests) {
      if (busy_[r.slot]) throw std::logic_error("-x 5: slot resubmitted before it completed");
      AsyncArgs& a = args_[r.slot];
      a = AsyncArgs{r.length, static_cast<off_t>(r.offset), 0, 0};
      const auto fn = r.dir == IoDir::Read ? api().read_async : api().write_async;
      const cufile::CUfileError_t e = fn(session_.handle(r.file), slot_buffer(r.slot), &a.size,
                                         &a.file_offset, &a.buf_offset, &a.done, stream_.handle().raw);
      if (e.err != cufile::kSuccess) session_.fail(call_name(r.dir), e.err, e.cu_err, r.file);
      svc_.record(events_[r.slot].handle(), stream_.handle());
      busy_[r.slot] = true;
      tags_[r.slot] = r.tag;
      files_of_[r.slot] = r.file;
      dirs_[r.slot] = r.dir;
      order_.push_back(r.slot);
    }
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    begin_reap();
    std::size_t n = 0;
    // One stream: requests complete in submission order.
    while (n < out.size() && !order_.empty()) {
      const uint32_t slot = order_.front();
      if (n >= min_complete && !svc_.query(events_[slot].handle())) break;
      svc_.wait(events_[slot].handle());
      order_.pop_front();
      busy_[slot] = false;
      out[n++] = complete_io(call_name(dirs_[slot]), dirs_[slot], files_of_[slot], tags_[slot],
                             args_[slot].done);
    }
    return end_reap(n, min_complete);
  }

 private:
  static const char* call_name(IoDir d) { return d == IoDir::Read ? "cuFileReadAsync" : "cuFileWriteAsync"; }

  Stream stream_;
  std::vector<Event> events_;
  std::vector<AsyncArgs> args_;
  std::vector<bool> busy_;
  std::vector<uint64_t> tags_;
  std::vector<uint32_t> files_of_;
  std::vector<IoDir> dirs_;
  std::deque<uint32_t> order_;
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
