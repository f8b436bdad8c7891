#include "gdsb/gpu/gpu_paths.hpp"

#include <cstdlib>
#include <map>
#include <mutex>

#include "gdsb/env_choice.hpp"
#include "gdsb/gpu/cuda_service.hpp"

namespace gdsb::gpu {

CompletionWait parse_completion_wait(const char* text) {
  return parse_env_choice<CompletionWait>(
      "GDSB_CUFILE_COMPLETION", text,
      {{"event", CompletionWait::Event, "wait only for the request's own event"},
       {"device", CompletionWait::Device, "also wait for the whole GPU after each cuFile completion"}});
}

CopyTiming parse_copy_timing(const char* text) {
  return parse_env_choice<CopyTiming>(
      "GDSB_COPY_TIMING", text,
      {{"events", CopyTiming::Events, "time each -x 2/3/4 copy with CUDA events and the host clock"},
       {"host", CopyTiming::Host, "time -x 2/3/4 copies with the host clock only"}});
}

GpuPathDeps default_gpu_path_deps() {
  GpuPathDeps d;
  d.copy_timing = parse_copy_timing(std::getenv("GDSB_COPY_TIMING"));
  d.completion = parse_completion_wait(std::getenv("GDSB_CUFILE_COMPLETION"));
  d.service = std::shared_ptr<GpuService>(make_cuda_service());
  // One load per library path for the life of the paths (probes are called often).
  struct Cache {
    std::mutex mu;
    std::map<std::string, cufile::LoadResult> results;
  };
  auto cache = std::make_shared<Cache>();
  d.load_cufile = [cache](const Workload& w) {
    const std::string lib = cufile::choose_library(w.cufile_library, std::getenv("GDSB_CUFILE_LIB"));
    std::lock_guard lk(cache->mu);
    auto it = cache->results.find(lib);
    if (it == cache->results.end()) it = cache->results.emplace(lib, cufile::load_cufile(lib)).first;
    return it->second;
  };
  d.staging = make_engine_staging_io;
  return d;
}

namespace {

// Every GPU path's report names the GPU by its PCI bus id: -d is a CUDA index, which
// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER renumber, so a reader of the report could
// not otherwise tell which GPU ran. One wrapper, so no path can forget it.
class RecordsGpuBusId final : public TransferPath {
 public:
  RecordsGpuBusId(std::unique_ptr<TransferPath> inner, std::shared_ptr<GpuService> svc)
      : inner_(std::move(inner)), svc_(std::move(svc)) {}
  XferType type() const override { return inner_->type(); }
  Availability probe(const Workload& w) const override { return inner_->probe(w); }
  bool needs_odirect(const Workload& w) const override { return inner_->needs_odirect(w); }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) override {
    return std::make_unique<Run>(inner_->start(w, files), svc_, w.gpu);
  }

 private:
  class Run final : public PathRun {
   public:
    Run(std::unique_ptr<PathRun> inner, std::shared_ptr<GpuService> svc, int gpu)
        : inner_(std::move(inner)), svc_(std::move(svc)), gpu_(gpu) {}
    std::unique_ptr<PathWorker> make_worker(uint32_t thread_index) override {
      return inner_->make_worker(thread_index);
    }
    PathReport finish() override {
      PathReport r = inner_->finish();
      // No usable GPU (-x 4's host-only part): no GPU ran, none is named.
      if (r.gpu_pci_bus_id.empty() && svc_ && svc_->probe().ok && gpu_ >= 0 &&
          gpu_ < svc_->device_count())
        r.gpu_pci_bus_id = svc_->properties(gpu_).pci_bus_id;
      return r;
    }

   private:
    std::unique_ptr<PathRun> inner_;
    std::shared_ptr<GpuService> svc_;
    int gpu_;
  };
  std::unique_ptr<TransferPath> inner_;
  std::shared_ptr<GpuService> svc_;
};

}  // namespace

void add_gpu_paths(PathRegistry& registry) { add_gpu_paths(registry, default_gpu_path_deps()); }

void add_gpu_paths(PathRegistry& registry, const GpuPathDeps& deps) {
  for (auto* make : {make_gpu_direct_path, make_cpu_gpu_path, make_cpu_async_gpu_path,
                     make_cpu_cached_gpu_path, make_gpu_direct_async_path, make_gpu_batch_path,
                     make_gpu_batch_stream_path})
    registry.add(std::make_unique<RecordsGpuBusId>(make(deps), deps.service));
}

}  // namespace gdsb::gpu
