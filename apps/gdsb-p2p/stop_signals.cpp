#include "stop_signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <ctime>

namespace gdsb::p2p {
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
  const timespec tick{0, 100'000'000};  // how often done_ is noticed
  while (!done_.load()) {
    if (sigtimedwait(&set, nullptr, &tick) < 0) continue;
    if (stop_.exchange(true)) {
      static constexpr char kMsg[] = "\ngdsb-p2p: interrupted twice, exiting now\n";
      [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
      _exit(130);
    }
    static constexpr char kMsg[] =
        "\ngdsb-p2p: interrupted; stopping after the current case (again to quit now)\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  }
}

}  // namespace gdsb::p2p
