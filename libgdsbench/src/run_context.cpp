#include "gdsb/run_context.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

extern char** environ;  // POSIX; read once, never modified

namespace gdsb {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\"");
  const auto last = s.find_last_not_of(" \t\"\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, last - first + 1);
}

std::string os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) return trim(line.substr(12));
  }
  return "unknown";
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    // x86 says "model name", arm64 often only "CPU part"; keep the first that exists.
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

bool env_name_allowed(std::string_view name) {
  return name.rfind("CUFILE_", 0) == 0 || name.rfind("CUDA_", 0) == 0;
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  if (std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return "1970-01-01T00:00:00Z";
  return buf;
}

RunContext collect_context() {
  RunContext c;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) c.host = host;
  utsname u{};
  if (uname(&u) == 0) c.kernel = u.release;
  c.os = os_pretty_name();
  c.cpu_model = cpu_model_name();
  c.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  c.started_at = utc_now_iso8601();
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = entry.substr(0, eq);
    if (env_name_allowed(name)) c.env.emplace(std::string(name), std::string(entry.substr(eq + 1)));
  }
  return c;
}

void to_json(nlohmann::json& j, const RunContext& c) {
  j = nlohmann::json{{"host", c.host},           {"kernel", c.kernel}, {"os", c.os},
                     {"cpu_model", c.cpu_model}, {"cpus", c.cpus},     {"started_at", c.started_at},
                     {"ended_at", c.ended_at},   {"env", c.env}};
  if (!c.versions.empty()) j["versions"] = c.versions;
  if (!c.cufile_json.empty()) {
    j["cufile_json"] = c.cufile_json;
    j["cufile"] = c.cufile;
  }
  if (!c.gpus.empty()) {
    auto& gpus = j["gpus"] = nlohmann::json::array();
    for (const auto& g : c.gpus)
      gpus.push_back({{"pci_bus_id", g.pci_bus_id}, {"name", g.name}, {"max_link", g.max_link}, {"vbios", g.vbios}});
  }
}

}  // namespace gdsb
