// SIGINT/SIGTERM handling without a global flag: the signals are blocked in every thread
// (set up before any worker exists) and one watcher thread waits for them with
// sigtimedwait and sets an atomic owned by this object. The runner polls it through
// RunOptions::stop. A second signal ends the process at once with 130.
#pragma once

#include <signal.h>

#include <atomic>
#include <thread>

namespace gdsb::io {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& flag() const { return stop_; }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  void watch();

  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  sigset_t old_mask_{};
  std::thread watcher_;
};

}  // namespace gdsb::io
