#include "gdsb/stop_signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <ctime>

namespace gdsb {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void say(const std::string& text) {
  if (text.empty()) return;
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace

StopSignals::StopSignals(std::string_view tool, std::string_view first_note)
    : second_message_("\n" + std::string(tool) + ": interrupted twice, exiting now\n") {
  if (!first_note.empty()) {
    first_message_ = "\n" + std::string(tool) + ": interrupted; " + std::string(first_note) + "\n";
  }
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
      say(second_message_);
      _exit(130);
    }
    say(first_message_);
  }
}

}  // namespace gdsb
