// Storage I/O into host staging slots, for the bounce-buffer paths -x 2/3/4.
//
// THE SEAM TO THE ENGINE: the GPU paths take a StagingFactory; the one used outside tests
// is make_engine_staging_io, an adapter around the engine's host I/O worker
// (gdsb/host_io.hpp: psync or io_uring over page-aligned host slots), so --engine,
// --iodepth and -n apply to -x 2/3/4 as to -x 1 (docs/gpu-paths.md, "Seam"). Nothing else
// in gdsb::gpu does storage I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

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
  // What really does the storage I/O, for the report's evidence ("io_uring depth 8, ...").
  virtual std::string describe() const = 0;
};

struct StagingSpec {
  uint32_t depth = 1;
  std::size_t slot_bytes = 0;
  std::optional<int> numa_node;  // -n: slots' memory bound to this node
  SubmitEngine engine = SubmitEngine::Psync;
  bool register_buffers = true;  // io_uring fixed buffers (-b turns this off)
};

using StagingFactory =
    std::function<std::unique_ptr<StagingIo>(const FileSet& files, const StagingSpec& spec)>;

// The engine's host I/O worker (make_host_io_worker) behind StagingIo: spec.engine psync or
// io_uring, spec.depth slots in flight, slot memory bound to spec.numa_node. Must be
// created on the thread that uses and destroys it (io_uring single issuer), which is the
// case when a PathWorker creates it in its constructor (the runner calls make_worker on
// the worker's own thread).
std::unique_ptr<StagingIo> make_engine_staging_io(const FileSet& files, const StagingSpec& spec);

}  // namespace gdsb::gpu
