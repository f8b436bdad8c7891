// SIGINT/SIGTERM during --measure without a global flag (the same scheme as gdsb-io): the
// signals are blocked in this thread before any other thread exists (the CUDA runtime
// starts its own), and one watcher thread takes them with sigtimedwait and sets an atomic
// this object owns. run_measurements checks it between cases. A second signal ends the
// process at once with 130.
#pragma once

#include <signal.h>

#include <atomic>
#include <thread>

namespace gdsb::p2p {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& flag() const { return stop_; }
  bool stopped() const { return stop_.load(); }

 private:
  void watch();

  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  sigset_t old_mask_{};
  std::thread watcher_;
};

}  // namespace gdsb::p2p
