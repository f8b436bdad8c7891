// The runner: owns threads, queue depth, offsets, timing and statistics for one job, and
// drives a TransferPath's workers. It never prints; progress goes to a callback.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gdsb/result.hpp"
#include "gdsb/transfer_path.hpp"
#include "gdsb/workload.hpp"

namespace gdsb {

struct Progress {
  double elapsed_s = 0;    // since the measured interval (or warm-up) began
  double planned_s = 0;    // the job's planned duration; 0 when it runs one pass of unknown length
  uint64_t bytes = 0;      // so far in this interval
  uint64_t ops = 0;
  double recent_gib_s = 0; // throughput over the last progress interval
  bool warming_up = false;
};

struct RunOptions {
  // Called every progress_interval on the thread that called run(), which monitors the
  // workers while they run; never from a worker thread.
  std::function<void(const Progress&)> on_progress;
  std::chrono::milliseconds progress_interval{500};
  const std::atomic<bool>* stop = nullptr;  // set (e.g. by SIGINT) to stop workers cleanly
  // Files this job created in an earlier run (its untimed fill, in this process or on another
  // rank): its own, written again on every file system, whether or not it keeps gdsbench's
  // xattr mark (NFSv3, VAST and BeeGFS by default keep no user xattrs).
  std::vector<std::string> job_files;
};

class Runner {
 public:
  explicit Runner(const PathRegistry& paths) : paths_(paths) {}

  // Whether w can run here: the path exists and its probe passes. Does no I/O.
  Availability probe(const Workload& w) const;

  // Runs w (every repetition). A path that cannot run gives status Waived with the reason;
  // a bad workload throws UsageError, an I/O or system failure throws RuntimeError naming
  // the path and the system error, a verification mismatch throws VerificationError.
  // If *stop is set, returns what was measured so far with interrupted = true.
  // Files: opened by the runner (O_DIRECT when the path needs it), created for writes and
  // marked with the xattr user.gdsbench.created; writes never go to a block device nor to
  // an existing file that is neither one of options.job_files nor marked, unless
  // w.allow_overwrite (UsageError otherwise).
  // Safe to call from several threads at once (jobs that run together).
  RunResult run(const Workload& w, const RunOptions& options = {}) const;

 private:
  const PathRegistry& paths_;
};

// The paths compiled into this build, listed explicitly: CPU paths always, GPU paths
// when built with CUDA (their probes say what is missing at run time).
PathRegistry make_default_registry();

}  // namespace gdsb
