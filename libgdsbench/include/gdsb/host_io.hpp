// Storage I/O into host memory slots, the building block of every CPU-side path:
// -x 1 and -x 4 use it directly; the bounce-buffer GPU paths (-x 2/3) read into these
// slots and copy from slot_data() to the GPU.
//   psync     pread/pwrite from the calling thread, one request after another.
//   io_uring  up to depth() requests in flight, fixed (registered) buffers and files when
//             the kernel allows, batched submission and completion.
// Both retry EINTR/EAGAIN and finish short transfers; a completion's result is the bytes
// moved (short only at end of file) or -errno.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/transfer_path.hpp"
#include "gdsb/workload.hpp"

namespace gdsb {

class HostIoWorker : public PathWorker {
 public:
  // Host address of slot's slot_bytes() bytes; page aligned, valid while the worker lives.
  virtual std::byte* slot_data(uint32_t slot) = 0;
  virtual uint32_t slot_bytes() const = 0;
  // What this worker really uses, for PathReport evidence, e.g.
  // "io_uring depth 32, registered buffers, registered files".
  virtual std::string describe() const = 0;

  void load_slot(uint32_t slot, std::span<const std::byte> data) override;
  void read_slot(uint32_t slot, std::span<std::byte> out) override;
};

struct HostIoOptions {
  SubmitEngine engine = SubmitEngine::Psync;
  uint32_t depth = 1;            // slots and requests in flight (psync: any, runs them in turn)
  uint32_t slot_bytes = 0;       // bytes per slot (the io size)
  std::optional<int> numa_node;  // bind slot memory to this node
  bool register_buffers = true;  // io_uring fixed buffers (-b turns this off)
  // io_uring: the worker is created and used by one thread only (the runner's model);
  // lets the kernel skip cross-thread work (IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN).
  bool single_thread = true;
};

// Submissions may be held until the next reap(), which flushes them before waiting.
// Throws RuntimeError when the engine cannot start (with the system error).
std::unique_ptr<HostIoWorker> make_host_io_worker(const HostIoOptions& options,
                                                  const FileSet& files);
std::unique_ptr<HostIoWorker> make_host_io_worker(SubmitEngine engine, const FileSet& files,
                                                  uint32_t depth, uint32_t slot_bytes,
                                                  std::optional<int> numa_node = std::nullopt);

// Whether io_uring works here (kernel support, seccomp, io_uring_disabled sysctl): sets up
// and tears down a ring of `depth` entries. Says precisely why not, with errno.
Availability probe_io_uring(uint32_t depth);

}  // namespace gdsb
