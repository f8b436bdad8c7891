#include "gdsb/report/output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gdsb/error.hpp"

namespace gdsb::report {
namespace fs = std::filesystem;

bool is_gdsbench_output(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.empty()) return true;  // an empty file holds nothing to lose
  if (head.find(kGeneratorMark) != std::string::npos) return true;
  // JSON documents: nlohmann sorts keys, so "schema" may come late; scan a larger head.
  if (head.front() == '{') {
    std::string more(1 << 20, '\0');
    in.read(more.data(), static_cast<std::streamsize>(more.size()));
    more.resize(static_cast<std::size_t>(in.gcount()));
    head += more;
    return head.find("\"schema\":\"gdsbench.") != std::string::npos ||
           head.find("\"schema\": \"gdsbench.") != std::string::npos;
  }
  return false;
}

void check_output_path(const std::string& path, bool allow_overwrite) {
  if (path.empty()) throw UsageError("an output file name is empty");
  const fs::path p(path);
  std::error_code ec;
  const auto parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw UsageError(path + ": cannot write: directory " + parent.string() + " does not exist");
  }
  if (fs::is_directory(p, ec)) throw UsageError(path + ": is a directory, expected a file name");
  if (!fs::exists(p, ec) || allow_overwrite) return;
  if (!is_gdsbench_output(path)) {
    throw UsageError(path +
                     ": exists and is not a gdsbench report; refusing to overwrite it "
                     "(choose another name or pass --allow-overwrite)");
  }
}

void write_output_atomic(const std::string& path, std::string_view content, bool allow_overwrite) {
  check_output_path(path, allow_overwrite);
  const std::string tmp = path + "." + std::to_string(::getpid()) + ".gdsb-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RuntimeError(path + ": cannot create " + tmp + ": " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      const int err = errno;
      out.close();
      std::remove(tmp.c_str());
      throw RuntimeError(path + ": write failed: " + std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw RuntimeError(path + ": cannot rename " + tmp + " into place: " + std::strerror(err));
  }
}

}  // namespace gdsb::report
