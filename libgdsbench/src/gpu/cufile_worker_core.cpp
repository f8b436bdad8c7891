// The shared part of the cuFile workers (-x 0/5/6/7), declared in cufile_path_common.hpp.
#include <algorithm>

#include "cufile_path_common.hpp"

namespace gdsb::gpu::detail {

CufileWorkerCore::CufileWorkerCore(GpuService& svc, const Workload& w, const FileSet& files,
                                   CufileSession& s, CompletionWait completion, uint32_t depth,
                                   const char* label)
    : svc_(svc),
      session_(s),
      completion_(completion),
      label_(label),
      bind_(svc, w.gpu),
      io_size_(w.io_size),
      nfiles_(files.fds.size()),
      depth_(depth),
      bufs_(svc, w, depth_, s) {}

void CufileWorkerCore::load_slot(uint32_t slot, std::span<const std::byte> data) {
  bind_.enter();
  bufs_.slots().load(slot, data);
}

void CufileWorkerCore::read_slot(uint32_t slot, std::span<std::byte> out) {
  bind_.enter();
  bufs_.slots().read(slot, out);
}

void CufileWorkerCore::begin_submit(std::span<const IoRequest> requests) {
  bind_.enter();
  check_requests(requests, depth_, io_size_, nfiles_);
}

IoCompletion CufileWorkerCore::complete_io(const char* call, IoDir dir, uint32_t file,
                                           uint64_t tag, long long result) {
  // A negative result explained by name (the runner would only see an errno).
  if (result < 0) throw RuntimeError(session_.explain_io(call, result, file));
  session_.count(dir);
  return IoCompletion{tag, result};
}

std::size_t CufileWorkerCore::end_reap(std::size_t n, std::size_t min_complete) {
  if (n < min_complete) {
    throw std::logic_error(std::string(label_) + ": reap waits for more than was submitted");
  }
  if (kCompletionSync && completion_ == CompletionWait::Device && n > 0) {
    svc_.sync_device();  // see gpu_paths.hpp
  }
  return n;
}

}  // namespace gdsb::gpu::detail
