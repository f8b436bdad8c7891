#include "deadline_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "gdsb/error.hpp"

namespace gdsb::topo_app {
namespace {

// One message a line: "S step", "D result", "E kind message" (newlines in the text are
// sent as spaces; a result is one JSON line).
void send(int fd, char tag, const std::string& text) {
  std::string line(1, tag);
  line += ' ';
  for (char c : text) line += c == '\n' ? ' ' : c;
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(125);  // the parent is gone
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

std::optional<int> kill_and_reap(pid_t pid, double seconds) {
  ::kill(pid, SIGKILL);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return std::nullopt;  // not our child (any more)
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    ::usleep(5000);
  }
}

ChildOutcome run_with_deadline(const std::function<std::string(const StepFn&)>& work,
                               const std::function<char(const std::exception&)>& classify, double seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw RuntimeError(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw RuntimeError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The child answers over the pipe only. It lets go of the caller's stdout and stderr: a
    // runner that reads them to their end (node-problem-detector's plugin runner, NHC) would
    // otherwise wait for a child left behind in uninterruptible sleep as long as it sleeps,
    // and read the check as timed out (NPD: Unknown) instead of failed.
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      if (null > STDERR_FILENO) ::close(null);
    }
    int rc = 0;
    try {
      const std::string result = work([&](const std::string& step) { send(fds[1], 'S', step); });
      send(fds[1], 'D', result);
    } catch (const std::exception& e) {
      send(fds[1], 'E', std::string(1, classify(e)) + " " + e.what());
      rc = 1;
    }
    ::close(fds[1]);
    ::_exit(rc);
  }
  ::close(fds[1]);
  ChildOutcome out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::string buffer;
  bool finished = false, timed_out = false;
  auto take_lines = [&] {
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (line.size() < 2) continue;
      const std::string text = line.substr(2);
      if (line[0] == 'S') out.last_step = text;
      if (line[0] == 'D') out.status = ChildOutcome::Status::Done, out.result = text, finished = true;
      if (line[0] == 'E' && text.size() >= 2) {
        out.status = ChildOutcome::Status::Failed;
        out.error_kind = text[0];
        out.error = text.substr(2);
        finished = true;
      }
    }
  };
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end: finished or died
    buffer.append(chunk, static_cast<size_t>(n));
    take_lines();
    if (finished) break;
  }
  ::close(fds[0]);
  if (timed_out && !finished) out.status = ChildOutcome::Status::TimedOut;
  // Nothing is left for the child to do once it answered; a child stuck on its way out (a
  // driver's shutdown) or in uninterruptible sleep must not hold the check either.
  const std::optional<int> status = kill_and_reap(pid, kReapGrace);
  out.left_behind = !status;
  if (!finished && !timed_out) {
    out.status = ChildOutcome::Status::Died;
    out.error = !status                ? "closed its pipe without a result and did not end on SIGKILL"
                : WIFSIGNALED(*status) ? "killed by signal " + std::to_string(WTERMSIG(*status))
                                       : "exited with status " + std::to_string(WEXITSTATUS(*status)) +
                                             " without a result";
  }
  return out;
}

}  // namespace gdsb::topo_app
