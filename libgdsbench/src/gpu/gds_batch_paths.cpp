// -x 6 GPU_BATCH and -x 7 GPU_BATCH_STREAM: the cuFile batch API. The worker's depth is
// the batch size (-B, else --iodepth when > 1, else kDefaultBatchSize). Requests that
// arrive while a batch is in flight wait until it has drained, then go out together as
// the next batch (one cuFileBatchIOSubmit), which is how gdsio drives the API.
// -x 7 (undocumented by NVIDIA) additionally orders every batch with a CUDA stream
// registered with cuFileStreamRegister: a write batch is submitted only after the stream
// has drained, and each completed read batch is followed by an event on the stream.
#include <ctime>
#include <deque>

#include "cufile_path_common.hpp"

namespace gdsb::gpu {
namespace {

uint32_t batch_depth(const Workload& w) {
  if (w.batch_size > 0) return w.batch_size;
  if (w.iodepth > 1) return w.iodepth;
  return kDefaultBatchSize;
}

template <bool WithStream>
class BatchWorker final : public detail::CufileWorkerCore {
 public:
  BatchWorker(GpuService& svc, const Workload& w, const FileSet& files, CufileSession& s,
              CompletionWait completion)
      : CufileWorkerCore(svc, w, files, s, completion, batch_depth(w), "batch"),
        params_(depth()),
        events_(depth()),
        slots_(depth()) {
    const cufile::CUfileError_t e = s.api().batch_setup(&batch_, depth());
    if (e.err != cufile::kSuccess) s.fail("cuFileBatchIOSetUp", e.err, e.cu_err, UINT32_MAX);
    if constexpr (WithStream) {
      done_event_ = std::make_unique<Event>(svc, EventWait::Block);
      try {
        stream_ = std::make_unique<detail::RegisteredStream>(svc, s);
      } catch (...) {
        s.api().batch_destroy(batch_);
        throw;
      }
    }
  }

  ~BatchWorker() override {
    if (in_flight_ > 0 && api().batch_cancel != nullptr) api().batch_cancel(batch_);
    api().batch_destroy(batch_);
    stream_.reset();  // drained and deregistered after the batch, as before
  }

  void submit(std::span<const IoRequest> requests) override {
    begin_submit(requests);
    for (const IoRequest& r : requests) pending_.push_back(r);
    if (in_flight_ == 0) flush();
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    begin_reap();
    std::size_t n = 0;
    while (n < out.size()) {
      if (in_flight_ == 0) {
        if (pending_.empty()) break;
        flush();
      }
      const bool must_wait = n < min_complete;
      unsigned nr = static_cast<unsigned>(std::min<std::size_t>(out.size() - n, in_flight_));
      const unsigned min_nr = must_wait ? 1U : 0U;
      timespec timeout{must_wait ? 30 : 0, 0};
      const cufile::CUfileError_t e =
          api().batch_get_status(batch_, min_nr, &nr, events_.data(), &timeout);
      if (e.err != cufile::kSuccess) session_.fail("cuFileBatchIOGetStatus", e.err, e.cu_err, UINT32_MAX);
      for (unsigned i = 0; i < nr; ++i) out[n++] = complete(events_[i]);
      if (nr == 0 && !must_wait) break;
      if (in_flight_ == 0) after_batch();
    }
    return end_reap(n, min_complete);
  }

 private:
  struct SlotInfo {
    uint64_t tag = 0;
    uint32_t file = 0;
    IoDir dir = IoDir::Read;
  };

  void flush() {
    if (pending_.empty()) return;
    const auto n = static_cast<unsigned>(std::min<std::size_t>(pending_.size(), depth()));
    bool any_write = false;
    for (unsigned i = 0; i < n; ++i) {
      const IoRequest& r = pending_[i];
      cufile::CUfileIOParams_t& p = params_[i];
      p = cufile::CUfileIOParams_t{};
      p.mode = cufile::kBatchMode;
      p.u.batch.devPtr_base = slot_buffer(r.slot);
      p.u.batch.file_offset = static_cast<off_t>(r.offset);
      p.u.batch.devPtr_offset = 0;
      p.u.batch.size = r.length;
      p.fh = session_.handle(r.file);
      p.opcode = r.dir == IoDir::Read ? cufile::kOpRead : cufile::kOpWrite;
      p.cookie = reinterpret_cast<void*>(static_cast<uintptr_t>(r.slot));
      slots_[r.slot] = SlotInfo{r.tag, r.file, r.dir};
      any_write = any_write || r.dir == IoDir::Write;
    }
    if constexpr (WithStream) {
      if (any_write) svc_.sync(stream_->handle());  // data produced on the stream is ready
    }
    const cufile::CUfileError_t e = api().batch_submit(batch_, n, params_.data(), 0);
    if (e.err != cufile::kSuccess) {
      session_.fail("cuFileBatchIOSubmit", e.err, e.cu_err, pending_.front().file);
    }
    pending_.erase(pending_.begin(), pending_.begin() + n);
    in_flight_ = n;
  }

  IoCompletion complete(const cufile::CUfileIOEvents_t& ev) {
    const auto slot = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ev.cookie));
    const SlotInfo& info = slots_.at(slot);
    --in_flight_;
    const auto ret = static_cast<long long>(static_cast<ssize_t>(ev.ret));
    if (ev.status != cufile::kStatusComplete || ret < 0) {
      const long long code = ret < 0 ? ret : -5035;  // CU_FILE_BATCH_SUBMIT_FAILED
      throw RuntimeError(session_.explain_io(
          "cuFile batch " + std::string(info.dir == IoDir::Read ? "read" : "write") +
              " (status " + std::to_string(ev.status) + ")",
          code, info.file));
    }
    return complete_io("cuFile batch", info.dir, info.file, info.tag, ret);
  }

  void after_batch() {
    if constexpr (WithStream) {
      svc_.record(done_event_->handle(), stream_->handle());  // consumers on the stream may go
    }
  }

  std::vector<cufile::CUfileIOParams_t> params_;
  std::vector<cufile::CUfileIOEvents_t> events_;
  std::vector<SlotInfo> slots_;
  std::deque<IoRequest> pending_;
  cufile::CUfileBatchHandle_t batch_ = nullptr;
  std::size_t in_flight_ = 0;
  std::unique_ptr<Event> done_event_;
  std::unique_ptr<detail::RegisteredStream> stream_;  // after the event: drained before it goes
};

}  // namespace

std::unique_ptr<TransferPath> make_gpu_batch_path(GpuPathDeps deps) {
  return std::make_unique<detail::CufilePath<BatchWorker<false>>>(
      std::move(deps), XferType::GpuBatch, detail::CufileNeeds::Batch);
}

std::unique_ptr<TransferPath> make_gpu_batch_stream_path(GpuPathDeps deps) {
  return std::make_unique<detail::CufilePath<BatchWorker<true>>>(
      std::move(deps), XferType::GpuBatchStream, detail::CufileNeeds::BatchStream);
}

}  // namespace gdsb::gpu
