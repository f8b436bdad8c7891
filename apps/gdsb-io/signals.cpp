#include "signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <ctime>

namespace gdsb::io {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

StopSignals::StopSignals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  watcher_ = std::thread([this] { watch(); });
}

StopSignals::~StopSignals() {
  done_.store(true);
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void StopSignals::watch() {
  const sigset_t set = stop_set();
  const timespec tick{0, 100'000'000};  // how often to notice done_
  while (!done_.load()) {
    if (sigtimedwait(&set, nullptr, &tick) < 0) continue;
    if (stop_.exchange(true)) {
      // Second signal: the user wants out now.
      static constexpr char msg[] = "\ngdsb-io: interrupted twice, exiting without cleanup\n";
      [[maybe_unused]] const auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
      _exit(130);
    }
  }
}

}  // namespace gdsb::io
