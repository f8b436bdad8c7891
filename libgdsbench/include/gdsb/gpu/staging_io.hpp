// Storage I/O into host staging slots, for the bounce-buffer paths -x 2/3/4.
//
// THE SEAM TO THE ENGINE: this interface has the shape of the engine's host I/O worker
// (issue 2: psync or io_uring over aligned host slots, with each slot's host pointer).
// The GPU paths take a StagingFactory; make_posix_staging_io below is a minimal private
// pread/pwrite implementation used until the engine's worker is wired in by an adapter
// (see docs/gpu-paths.md, "Seam"). Nothing else in gdsb::gpu does storage I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "gdsb/transfer_path.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::gpu {

class StagingIo {
 public:
  virtual ~StagingIo() = default;
  virtual uint32_t depth() const = 0;
  virtual std::size_t slot_bytes() const = 0;
  // Host memory of slot i, slot_bytes() long, 4 KiB aligned, valid for the object's life.
  virtual std::byte* slot(uint32_t i) = 0;
  // IoRequest.slot indexes this object's slots; tag is echoed in the completion.
  virtual void submit(std::span<const IoRequest> requests) = 0;
  // Blocks until at least min_complete completions are available; min_complete = 0 polls.
  virtual std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) = 0;
  // Requests submitted and not yet reaped.
  virtual uint32_t in_flight() const = 0;
};

struct StagingSpec {
  uint32_t depth = 1;
  std::size_t slot_bytes = 0;
  std::optional<int> numa_node;  // -n: slots' memory bound to this node
  SubmitEngine engine = SubmitEngine::Psync;
};

using StagingFactory =
    std::function<std::unique_ptr<StagingIo>(const FileSet& files, const StagingSpec& spec)>;

// pread/pwrite on the calling thread, complete on return from submit(); full transfers
// (short reads retried until EOF). Ignores spec.engine.
std::unique_ptr<StagingIo> make_posix_staging_io(const FileSet& files, const StagingSpec& spec);

// Binds [p, p+bytes) to NUMA node `node` (mbind, MPOL_BIND); false when the kernel refuses.
bool bind_memory_to_node(void* p, std::size_t bytes, int node);
// Restricts the calling thread to the CPUs of NUMA node `node`; throws RuntimeError
// naming the node when it has no CPUs or does not exist.
void bind_thread_to_node(int node);

}  // namespace gdsb::gpu
