// Context of a gdsb-report run, for the documents it writes (compare). Only CUFILE_* and
// CUDA_* environment variables are recorded, never the whole environment.
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <ctime>
#include <fstream>
#include <thread>

#include "cli.hpp"

extern char** environ;  // NOLINT: POSIX

namespace gdsb::report::cli {
namespace {

std::string os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "";
}

}  // namespace

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

nlohmann::json run_meta(int argc, char** argv, const std::string& started_at) {
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  utsname u{};
  ::uname(&u);
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    if (kv.rfind("CUFILE_", 0) != 0 && kv.rfind("CUDA_", 0) != 0) continue;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  nlohmann::json args = nlohmann::json::array();
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  return {{"tool", {{"name", "gdsb-report"}, {"version", GDSB_VERSION}}},
          {"argv", args},
          {"interrupted", false},
          {"context",
           {{"host", host.data()},
            {"kernel", u.release},
            {"os", os_pretty_name()},
            {"cpu_model", cpu_model()},
            {"cpus", std::thread::hardware_concurrency()},
            {"started_at", started_at},
            {"ended_at", utc_now()},
            {"env", env}}}};
}

}  // namespace gdsb::report::cli
