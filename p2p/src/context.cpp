#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <thread>

#include "gdsb/p2p/report.hpp"

extern char** environ;

namespace gdsb::p2p {

namespace {

std::string os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "";
}

}  // namespace

std::string utc_now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

RunContext collect_context() {
  RunContext c;
  c.started_at = utc_now_iso();
  utsname u{};
  if (uname(&u) == 0) {
    c.host = u.nodename;
    c.kernel = u.release;
  }
  c.os = os_pretty_name();
  c.cpu_model = cpu_model();
  c.cpus = static_cast<int>(std::thread::hardware_concurrency());
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    if (kv.rfind("CUDA_", 0) != 0 && kv.rfind("CUFILE_", 0) != 0) continue;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) c.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return c;
}

}  // namespace gdsb::p2p
