// The part every cuFile type (-x 0/5/6/7) shares: probe (GPU, memory type, libcufile and
// the symbols the type needs), the run with its CufileSession, and registered buffers.
#pragma once

#include <memory>

#include "gdsb/gpu/cufile_session.hpp"
#include "path_common.hpp"

namespace gdsb::gpu::detail {

enum class CufileNeeds { Basic, Stream, Batch, BatchStream };

inline Availability probe_cufile(const GpuPathDeps& deps, const Workload& w, CufileNeeds needs,
                                 std::shared_ptr<const cufile::CufileApi>* api_out = nullptr) {
  Availability a = probe_gpu(*deps.service, w);
  if (!a.ok) return a;
  const cufile::LoadResult lr = deps.load_cufile(w);
  if (!lr.api) return Availability::no(lr.error);
  std::vector<std::string> missing;
  if (needs == CufileNeeds::Stream || needs == CufileNeeds::BatchStream) {
    missing = lr.api->missing_stream_symbols();
  }
  if (needs == CufileNeeds::Batch || needs == CufileNeeds::BatchStream) {
    for (auto& m : lr.api->missing_batch_symbols()) missing.push_back(m);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return Availability::no("the loaded " + lr.api->library + " lacks " + list + " (" +
                            (needs == CufileNeeds::Stream ? "stream API: GDS 1.7 / CUDA 12.2 or newer"
                                                          : "batch API: GDS 1.6 / CUDA 12.0 or newer") +
                            ")");
  }
  if (api_out != nullptr) *api_out = lr.api;
  return Availability::yes();
}

// Buffers of the -m type, registered with cuFileBufRegister unless -b.
class RegisteredSlots {
 public:
  RegisteredSlots(GpuService& svc, const Workload& w, uint32_t depth, CufileSession& session)
      : session_(session), slots_(svc, w.mem_type, depth, w.io_size, w.numa_node) {
    if (w.skip_buffer_register) return;
    for (uint32_t i = 0; i < depth; ++i) {
      const cufile::CUfileError_t e = session.api().buf_register(slots_.at(i), w.io_size, 0);
      if (e.err != cufile::kSuccess) {
        deregister();
        session.fail("cuFileBufRegister", e.err, e.cu_err, UINT32_MAX);
      }
      registered_.push_back(slots_.at(i));
    }
  }
  ~RegisteredSlots() { deregister(); }
  RegisteredSlots(const RegisteredSlots&) = delete;
  RegisteredSlots& operator=(const RegisteredSlots&) = delete;
  SlotBuffers& slots() { return slots_; }

 private:
  void deregister() noexcept {
    for (void* p : registered_) session_.api().buf_deregister(p);
    registered_.clear();
  }
  CufileSession& session_;
  SlotBuffers slots_;
  std::vector<void*> registered_;
};

// A CUDA stream registered with cuFileStreamRegister (flags 0: offsets and sizes are read
// when the stream executes the call) for a worker's life; destruction drains the stream,
// then cuFileStreamDeregister.
class RegisteredStream {
 public:
  RegisteredStream(GpuService& svc, CufileSession& session)
      : svc_(svc), session_(session), stream_(svc) {
    const cufile::CUfileError_t e = session.api().stream_register(stream_.handle().raw, 0);
    if (e.err != cufile::kSuccess) session.fail("cuFileStreamRegister", e.err, e.cu_err, UINT32_MAX);
  }
  ~RegisteredStream() {
    try {
      svc_.sync(stream_.handle());
    } catch (...) {
    }
    session_.api().stream_deregister(stream_.handle().raw);
  }
  RegisteredStream(const RegisteredStream&) = delete;
  RegisteredStream& operator=(const RegisteredStream&) = delete;
  StreamHandle handle() const { return stream_.handle(); }

 private:
  GpuService& svc_;
  CufileSession& session_;
  Stream stream_;
};

// What every cuFile worker (-x 0/5/6/7) shares: the thread binding, the registered slot
// buffers, request checks, per-I/O result accounting and the completion tail. A worker
// derives from it and keeps only its own submit/reap (sync calls, async calls on streams,
// batches). Defined in cufile_worker_core.cpp.
class CufileWorkerCore : public PathWorker {
 public:
  uint32_t depth() const final { return depth_; }
  void load_slot(uint32_t slot, std::span<const std::byte> data) final;
  void read_slot(uint32_t slot, std::span<std::byte> out) final;
  void register_file(uint32_t file) final {
    bind_.enter();
    session_.register_file(file);
  }
  void deregister_file(uint32_t file) final { session_.deregister_file(file); }

 protected:
  // label names the type in logic errors ("-x 5"); completion is how reap() waits
  // (-x 0 is synchronous and passes CompletionWait::Event: nothing to wait for).
  CufileWorkerCore(GpuService& svc, const Workload& w, const FileSet& files, CufileSession& s,
                   CompletionWait completion, uint32_t depth, const char* label);

  // Binds the thread (first call) and checks the requests against slots, size and files.
  void begin_submit(std::span<const IoRequest> requests);
  void begin_reap() { bind_.enter(); }
  // One finished I/O: a negative result is explained by call and file, a good one counted.
  IoCompletion complete_io(const char* call, IoDir dir, uint32_t file, uint64_t tag,
                           long long result);
  // The end of every reap: fewer than min_complete is a runner bug; with
  // GDSB_CUFILE_COMPLETION=device the GPU is synchronised after cuFile reported them.
  std::size_t end_reap(std::size_t n, std::size_t min_complete);

  void* slot_buffer(uint32_t slot) { return bufs_.slots().at(slot); }
  const cufile::CufileApi& api() const { return session_.api(); }

  GpuService& svc_;
  CufileSession& session_;

 private:
  CompletionWait completion_;
  const char* label_;
  ThreadBinding bind_;
  uint64_t io_size_;
  std::size_t nfiles_;
  uint32_t depth_;
  RegisteredSlots bufs_;
};

// A run of a cuFile type: the session lives as long as the run.
template <typename Worker>
class CufileRun final : public PathRun {
 public:
  CufileRun(GpuPathDeps deps, const Workload& w, const FileSet& files,
            std::shared_ptr<const cufile::CufileApi> api)
      : deps_(std::move(deps)), w_(w), files_(files),
        session_(std::make_unique<CufileSession>(std::move(api), *deps_.cufile_drivers, w_, files_,
                                                  deps_.roots)) {}
  std::unique_ptr<PathWorker> make_worker(uint32_t) override {
    return std::make_unique<Worker>(*deps_.service, w_, files_, *session_, deps_.completion);
  }
  PathReport finish() override {
    PathReport r = session_->finish();
    if (w_.xfer != XferType::GpuDirect) {
      r.evidence.push_back(deps_.completion == CompletionWait::Device
                               ? "completions wait for the whole GPU after cuFile reports them "
                                 "(GDSB_CUFILE_COMPLETION=device)"
                               : "completions wait only for the request's own event or batch "
                                 "status (GDSB_CUFILE_COMPLETION=event)");
    }
    return r;
  }

 private:
  GpuPathDeps deps_;
  Workload w_;
  FileSet files_;
  std::unique_ptr<CufileSession> session_;
};

template <typename Worker>
class CufilePath final : public TransferPath {
 public:
  CufilePath(GpuPathDeps deps, XferType type, CufileNeeds needs)
      : deps_(std::move(deps)), type_(type), needs_(needs) {}
  XferType type() const override { return type_; }
  Availability probe(const Workload& w) const override { return probe_cufile(deps_, w, needs_); }
  bool needs_odirect(const Workload& w) const override { return w.odirect; }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) override {
    if (const Availability m = check_mem_type(w.xfer, w.mem_type); !m.ok) throw UsageError(m.reason);
    std::shared_ptr<const cufile::CufileApi> api;
    require(probe_cufile(deps_, w, needs_, &api));
    deps_.service->use_device(w.gpu);  // cuFileDriverOpen uses the current device
    return std::make_unique<CufileRun<Worker>>(deps_, w, files, std::move(api));
  }

 private:
  GpuPathDeps deps_;
  XferType type_;
  CufileNeeds needs_;
};

}  // namespace gdsb::gpu::detail
