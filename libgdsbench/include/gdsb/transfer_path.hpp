// A transfer path moves bytes between a file and a buffer, and nothing else: the runner
// owns threads, queue depth, offsets, timing and statistics. Three layers:
//   TransferPath  stateless; probe() says whether it can run here and why not.
//   PathRun       one job's shared state (driver opened, file handles registered).
//   PathWorker    one per runner thread, used only by that thread; submit/reap model,
//                 so synchronous paths (depth 1) and queued ones (io_uring, cuFile batch,
//                 pipelined bounce buffers) share one runner loop.
// Paths are listed explicitly in make_default_registry(): no static self-registration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gdsb/result.hpp"
#include "gdsb/workload.hpp"

namespace gdsb {

class PhaseRecorder;  // gdsb/io_phases.hpp

struct Availability {
  bool ok = true;
  std::string reason;  // why not, in words a user can act on
  static Availability yes() { return {}; }
  static Availability no(std::string why) { return {false, std::move(why)}; }
};

enum class IoDir : uint8_t { Read, Write };

struct IoRequest {
  uint64_t tag = 0;     // the runner's id, echoed in the completion
  uint32_t file = 0;    // index into FileSet
  uint64_t offset = 0;  // bytes from the start of the file
  uint32_t length = 0;  // bytes
  IoDir dir = IoDir::Read;
  uint32_t slot = 0;    // buffer slot in [0, PathWorker::depth())
};

struct IoCompletion {
  uint64_t tag = 0;
  int64_t result = 0;  // bytes moved (>= 0), or -errno
};

// The files of one run, opened by the runner (O_DIRECT unless the path or -O 1 says no).
// With Workload::open_per_file the runner opens them one at a time inside the measured
// interval instead: a thread's files then share one descriptor number (fds[f] is the same
// for every file of the thread), which the thread points at the file it reads (dup3) and
// back at /dev/null when done. Workers that copied fds keep working; a table that holds
// the open files themselves (io_uring's fixed files) must not be used then.
struct FileSet {
  std::vector<std::string> paths;
  std::vector<int> fds;
  bool odirect = true;
  bool open_per_file = false;
  int idle_fd = -1;  // open_per_file: /dev/null, where a thread's number points between files
};

class PathWorker {
 public:
  virtual ~PathWorker() = default;
  // How many requests may be in flight at once; slots are 0..depth()-1, each io_size bytes.
  virtual uint32_t depth() const = 0;
  virtual void submit(std::span<const IoRequest> requests) = 0;
  // Stores finished requests into out; blocks until at least min_complete are available.
  virtual std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) = 0;
  // Host-side access to a slot's data, for write patterns and read verification. For GPU
  // buffers these copy; they are called outside the timed region of an I/O.
  virtual void load_slot(uint32_t slot, std::span<const std::byte> data) = 0;
  virtual void read_slot(uint32_t slot, std::span<std::byte> out) = 0;
  // Paths that time the phases of an I/O (the bounce-buffer paths) return their recorder;
  // the runner resets it when the measured interval starts and reads it when it ends, on
  // the worker's thread.
  virtual PhaseRecorder* phases() { return nullptr; }
  // Workload::open_per_file: the runner calls register_file after it opened `file` (its
  // descriptor is fds[file]) and before its first I/O, and deregister_file after its last
  // I/O completed and before it closes it; both timed as the file's own costs. Paths that
  // register files (cuFile handles) do it here; the others have nothing to do.
  virtual void register_file(uint32_t /*file*/) {}
  virtual void deregister_file(uint32_t /*file*/) {}
};

class PathRun {
 public:
  virtual ~PathRun() = default;
  virtual std::unique_ptr<PathWorker> make_worker(uint32_t thread_index) = 0;
  // Called once after all workers are gone: which path really ran and why we think so.
  virtual PathReport finish() = 0;
};

class TransferPath {
 public:
  virtual ~TransferPath() = default;
  virtual XferType type() const = 0;
  // Cheap and without side effects visible to the user; safe to call for the survey.
  virtual Availability probe(const Workload& w) const = 0;
  // Whether the runner must open files with O_DIRECT for this workload.
  virtual bool needs_odirect(const Workload& w) const = 0;
  virtual std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) = 0;
};

class PathRegistry {
 public:
  void add(std::unique_ptr<TransferPath> path);
  TransferPath* find(XferType t) const;  // nullptr when no such path is compiled in
  const std::vector<std::unique_ptr<TransferPath>>& all() const { return paths_; }

 private:
  std::vector<std::unique_ptr<TransferPath>> paths_;
};

}  // namespace gdsb
