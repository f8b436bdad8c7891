#include "slurm_drain.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "deadline_child.hpp"
#include "gdsb/error.hpp"

namespace gdsb::topo_app {

std::string find_on_path(const std::string& program, const std::string& path_env) {
  std::size_t start = 0;
  while (start <= path_env.size()) {
    std::size_t end = path_env.find(':', start);
    if (end == std::string::npos) end = path_env.size();
    const std::string dir = end > start ? path_env.substr(start, end - start) : ".";  // "" is the cwd
    const std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return {};
}

std::string slurm_node_name(const std::string& slurmd_nodename) {
  if (!slurmd_nodename.empty()) return slurmd_nodename;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) throw RuntimeError(std::string("gethostname: ") + std::strerror(errno));
  const std::string h = host;
  return h.substr(0, h.find('.'));
}

void slurm_drain(const std::string& scontrol, const std::string& node, const std::string& reason, double seconds) {
  std::vector<std::string> args{"scontrol", "update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw RuntimeError(std::string("--slurm-drain: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::execv(scontrol.c_str(), argv.data());
    ::_exit(127);
  }
  // scontrol waits on slurmctld, which may not answer: it gets what is left of the deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw RuntimeError(std::string("--slurm-drain: waitpid: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_and_reap(pid, kReapGrace);  // an scontrol in uninterruptible sleep is left behind
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3g", seconds);
      throw RuntimeError("--slurm-drain: " + scontrol + " update NodeName=" + node + " did not finish within " +
                         secs + " s (killed); the node was not drained (is slurmctld reachable?)");
    }
    ::usleep(10000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                            : "was killed by signal " + std::to_string(WTERMSIG(status));
  throw RuntimeError("--slurm-drain: " + scontrol + " update NodeName=" + node + " " + how +
                     "; the node was not drained (is slurmctld reachable, and is this run as root or SlurmUser?)");
}

}  // namespace gdsb::topo_app
