#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/p2p/report.hpp"

namespace gdsb::p2p {

namespace {

bool is_earlier_report(const std::string& path) {
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.value("schema", "") == kSchema;
}

}  // namespace

void check_json_target(const std::string& path, bool allow_overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  if (fs::is_directory(path, ec)) throw UsageError("--json " + path + " is a directory");
  if (!allow_overwrite && !is_earlier_report(path)) {
    throw UsageError("--json " + path + " exists and is not a gdsbench.p2p/1 report; "
                     "pass --allow-overwrite to replace it or choose another file");
  }
}

void write_json_file(const std::string& path, const nlohmann::json& doc, bool allow_overwrite) {
  check_json_target(path, allow_overwrite);
  const std::string tmp = path + "." + std::to_string(getpid()) + ".gdsb-tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) {
      throw RuntimeError("--json " + path + ": cannot create " + tmp + ": " + std::strerror(errno));
    }
    out << doc.dump(2) << '\n';
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw RuntimeError("--json " + path + ": writing " + tmp + " failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw RuntimeError("--json " + path + ": rename from " + tmp + " failed: " + why);
  }
}

}  // namespace gdsb::p2p
