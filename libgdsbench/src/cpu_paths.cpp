#include "gdsb/cpu_paths.hpp"

#include <mutex>
#include <string>
#include <utility>

#include "gdsb/host_io.hpp"

namespace gdsb {
namespace {

class HostPathRun final : public PathRun {
 public:
  // why_no_gpu_copy: non-empty for the host-only -x 4 (page cache, no GPU copy).
  HostPathRun(const Workload& w, const FileSet& files, std::string why_no_gpu_copy)
      : files_(files),
        page_cache_path_(!why_no_gpu_copy.empty()),
        why_no_gpu_copy_(std::move(why_no_gpu_copy)) {
    options_.engine = w.engine;
    options_.depth = w.engine == SubmitEngine::IoUring ? w.iodepth : 1;
    options_.slot_bytes = static_cast<uint32_t>(w.io_size);
    options_.numa_node = w.numa_node;
    options_.register_buffers = !w.skip_buffer_register;
  }

  std::unique_ptr<PathWorker> make_worker(uint32_t /*thread_index*/) override {
    auto worker = make_host_io_worker(options_, files_);
    const std::lock_guard lock(mutex_);
    if (description_.empty()) description_ = worker->describe();
    return worker;
  }

  PathReport finish() override {
    PathReport r;
    const std::string how =
        "storage I/O by " +
        (description_.empty() ? std::string(engine_name(options_.engine)) : description_);
    if (page_cache_path_) {
      r.path_used = path_used_name(PathUsed::PageCacheHostOnly);
      r.evidence.push_back("files opened without O_DIRECT: data moves through the page cache");
      r.evidence.push_back(how + " into page-aligned host memory");
      r.warnings.push_back("CPU_CACHED_GPU: the copy to the GPU was not done (" +
                           why_no_gpu_copy_ +
                           "); the figures cover storage to host memory only");
    } else {
      r.path_used = path_used_name(PathUsed::Posix);
      r.evidence.push_back(
          files_.odirect
              ? "files opened with O_DIRECT: data bypasses the page cache"
              : "files opened without O_DIRECT (-O 1): data moves through the page cache");
      r.evidence.push_back(how + " into page-aligned host memory");
    }
    if (options_.numa_node) {
      r.evidence.push_back("host buffers and threads bound to NUMA node " +
                           std::to_string(*options_.numa_node));
    }
    return r;
  }

 private:
  FileSet files_;
  bool page_cache_path_;
  std::string why_no_gpu_copy_;
  HostIoOptions options_;
  std::mutex mutex_;
  std::string description_;
};

class CpuOnlyPath final : public TransferPath {
 public:
  XferType type() const override { return XferType::CpuOnly; }
  Availability probe(const Workload& w) const override { return probe_host_engine(w); }
  bool needs_odirect(const Workload& w) const override { return w.odirect; }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) override {
    return std::make_unique<HostPathRun>(w, files, std::string());
  }
};

}  // namespace

Availability probe_host_engine(const Workload& w) {
  if (w.engine == SubmitEngine::IoUring) return probe_io_uring(w.iodepth);
  return Availability::yes();
}

std::unique_ptr<TransferPath> make_cpu_only_path() { return std::make_unique<CpuOnlyPath>(); }

std::unique_ptr<PathRun> start_page_cache_host_run(const Workload& w, const FileSet& files,
                                                   std::string why_no_gpu_copy) {
  if (why_no_gpu_copy.empty()) why_no_gpu_copy = "no GPU is usable";
  return std::make_unique<HostPathRun>(w, files, std::move(why_no_gpu_copy));
}

}  // namespace gdsb
