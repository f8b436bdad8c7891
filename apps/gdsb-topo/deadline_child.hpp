// Work that may block forever (an NVML ioctl on a hung driver, a stuck sysfs read) run in a
// forked child under a deadline: the child reports each step it starts and its result over a
// pipe, and is killed (SIGKILL) when the deadline passes. The caller learns which step did
// not return. POSIX fork: the child runs only the given work and leaves with _exit.
// No child outlasts the deadline by more than kReapGrace (STYLE 19): a child in
// uninterruptible sleep (a hung driver's ioctl, a frozen cgroup, a dead NFS server) does not
// die on SIGKILL until it wakes, so it is left behind, not waited for. It stays a child of
// this process, which exits soon after; the kernel then hands it to init (or the nearest
// subreaper), which reaps it whenever it finally dies.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace gdsb::topo_app {

struct ChildOutcome {
  enum class Status { Done, Failed, TimedOut, Died } status = Status::Died;
  std::string result;     // Done: what the work returned
  std::string error;      // Failed: the exception's message; Died: how the child ended
  char error_kind = 'R';  // Failed: 'U' UsageError, 'R' RuntimeError/other, 'F' a fault (work's own)
  std::string last_step;  // the last step the child started ("GPU 0000:19:00.0 NVML")
  bool left_behind = false;  // did not end within kReapGrace of its SIGKILL (see above)
};

// How long a killed child is waited for before it is left behind.
inline constexpr double kReapGrace = 0.25;

// SIGKILLs pid and reaps it within `seconds`: its wait status, or nullopt when it did not
// end in time (left behind, as above).
std::optional<int> kill_and_reap(pid_t pid, double seconds);

// `work` receives a function to call before each step that may block, and returns its
// result text. It throws to fail: `classify` maps the exception to a kind letter.
using StepFn = std::function<void(const std::string&)>;
ChildOutcome run_with_deadline(const std::function<std::string(const StepFn&)>& work,
                               const std::function<char(const std::exception&)>& classify, double seconds);

}  // namespace gdsb::topo_app
