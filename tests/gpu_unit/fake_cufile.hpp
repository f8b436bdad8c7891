// A fake libcufile for tests: a CufileApi table whose functions do POSIX I/O into the
// fake GPU's memory (host memory), run async calls on the fake GPU's streams, and record
// every call so tests can check the sequence each -x type makes. The C function table
// cannot carry state, so one FakeCufile at a time is "current" (test-only state).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gdsb/gpu/cufile_api.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"

namespace gdsb::gpu::testing {

struct FakeCufileOptions {
  int driver_open_error = 0;      // CUfileOpError returned by cuFileDriverOpen
  int handle_register_error = 0;  // ... by cuFileHandleRegister
  int buf_register_error = 0;
  int stream_register_fail_at = -1;  // the n-th cuFileStreamRegister (0-based) returns 5022
  bool stream_api = true;         // export cuFileReadAsync & co
  bool batch_api = true;          // export cuFileBatchIO*
  int fail_io_at = -1;            // the n-th I/O (0-based, any API) returns fail_io_result
  long long fail_io_result = -5044;
  std::string log_dir_line;       // written to <logging.dir>/cufile.log at driver open
  // What cuFileDriverGetProperties reports in nvfs.dstatusflags (CUfileDriverStatusFlags
  // bits, e.g. 1 << kStatusNvmeP2p) and in fflags beside the batch and stream bits.
  unsigned dstatusflags = 0;
  unsigned extra_fflags = 0;
  // When > 0: an async I/O, once its stream runs it, waits until this many async I/Os are
  // running at once (or, the first time that takes 2 s, gives up and stops waiting), so a
  // test sees how many a path really keeps in flight (async_peak_running), not by timing.
  unsigned async_rendezvous = 0;
  std::chrono::microseconds async_delay{0};  // each async I/O takes at least this long
  // When > 0: cuFileHandleRegister waits until this many handles are registered at once
  // (giving up after 2 s), so runs on several GPUs are sure to overlap in the driver.
  unsigned handle_rendezvous = 0;
};

class FakeCufile {
 public:
  FakeCufile(FakeGpuService& gpu, FakeCufileOptions options = {});
  ~FakeCufile();
  FakeCufile(const FakeCufile&) = delete;
  FakeCufile& operator=(const FakeCufile&) = delete;

  std::shared_ptr<const cufile::CufileApi> api() const { return api_; }
  std::vector<std::string> calls() const;
  // Calls without repeats of the same name in a row ("Read" x 16 -> one "Read").
  std::vector<std::string> call_sequence() const;
  int live_handles() const;
  int live_buffers() const;
  int live_batches() const;
  int live_streams() const;
  // Distinct streams cuFileReadAsync/WriteAsync were called on, and the most async I/Os
  // that ran on their streams at the same time.
  int async_streams_used() const;
  unsigned async_peak_running() const;
  bool driver_open() const;
  int driver_opens() const;  // cuFileDriverOpen calls that succeeded
  // What a real libcufile does not survive, as seen: the driver opened again while open,
  // closed while files or buffers are registered, or used (properties, registration)
  // while closed. The crash of issue 35 was one of these on 4 GPUs.
  std::vector<std::string> misuse() const;

  // Used by the C functions.
  struct State;
  static State& current();

 private:
  std::shared_ptr<cufile::CufileApi> api_;
  std::unique_ptr<State> state_;
};

}  // namespace gdsb::gpu::testing
