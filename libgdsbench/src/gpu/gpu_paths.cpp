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

void add_gpu_paths(PathRegistry& registry) { add_gpu_paths(registry, default_gpu_path_deps()); }

void add_gpu_paths(PathRegistry& registry, const GpuPathDeps& deps) {
  registry.add(make_gpu_direct_path(deps));
  registry.add(make_cpu_gpu_path(deps));
  registry.add(make_cpu_async_gpu_path(deps));
  registry.add(make_cpu_cached_gpu_path(deps));
  registry.add(make_gpu_direct_async_path(deps));
  registry.add(make_gpu_batch_path(deps));
  registry.add(make_gpu_batch_stream_path(deps));
}

}  // namespace gdsb::gpu
