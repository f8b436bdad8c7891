// The CPU transfer paths: storage to host memory, no GPU involved.
//   -x 1 CPU_ONLY        O_DIRECT (unless -O 1) into page-aligned host buffers.
//   -x 4 CPU_CACHED_GPU  through the page cache (never O_DIRECT). gdsio then copies to the
//                        GPU; this build has no GPU service, so only the storage-to-host
//                        part runs and the report says so.
// Both submit through psync or io_uring (gdsb/host_io.hpp).
#pragma once

#include <memory>

#include "gdsb/transfer_path.hpp"

namespace gdsb {

std::unique_ptr<TransferPath> make_cpu_only_path();
std::unique_ptr<TransferPath> make_cpu_cached_path();

// Shared probe of the CPU paths: whether the workload's submission engine works here.
Availability probe_host_engine(const Workload& w);

}  // namespace gdsb
