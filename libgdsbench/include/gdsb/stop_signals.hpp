// SIGINT/SIGTERM handling without a global flag, shared by the apps: the signals are
// blocked in the constructing thread before any other thread exists (worker threads and
// the CUDA runtime's own threads inherit the mask), and one watcher thread takes them with
// sigtimedwait and sets an atomic this object owns; work loops poll flag() (for gdsb-io,
// through RunOptions::stop). A second signal ends the process at once with exit code 130.
#pragma once

#include <signal.h>

#include <atomic>
#include <string>
#include <string_view>
#include <thread>

namespace gdsb {

class StopSignals {
 public:
  // tool names the program in the messages; first_note, when not empty, is printed on the
  // first signal ("stopping after the current case").
  explicit StopSignals(std::string_view tool, std::string_view first_note = {});
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& flag() const { return stop_; }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  void watch();

  std::string first_message_;   // written on the first signal (may be empty)
  std::string second_message_;  // written before exiting on the second
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  sigset_t old_mask_{};
  std::thread watcher_;
};

}  // namespace gdsb
