// The CPU transfer paths: storage to host memory, no GPU involved.
//   -x 1 CPU_ONLY        O_DIRECT (unless -O 1) into page-aligned host buffers.
//   -x 4 CPU_CACHED_GPU  is one path, in gdsb::gpu (make_cpu_cached_gpu_path): page cache,
//                        then a copy to the GPU as gdsio. Where no GPU is usable it runs
//                        only the storage-to-host part, through start_page_cache_host_run
//                        below, and the report says so and why.
// Both submit through psync or io_uring (gdsb/host_io.hpp).
#pragma once

#include <memory>
#include <string>

#include "gdsb/transfer_path.hpp"

namespace gdsb {

std::unique_ptr<TransferPath> make_cpu_only_path();
// The host part of -x 4 alone: files opened without O_DIRECT, storage I/O into host
// memory, no GPU copy. Reports path_used "page-cache (host only)" and a warning that names
// why_no_gpu_copy (e.g. the GPU service probe's reason).
std::unique_ptr<PathRun> start_page_cache_host_run(const Workload& w, const FileSet& files,
                                                   std::string why_no_gpu_copy);

// Shared probe of the CPU paths: whether the workload's submission engine works here.
Availability probe_host_engine(const Workload& w);

}  // namespace gdsb
