#include "gdsb/report/report_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"

namespace gdsb::report {
namespace {

std::string sys_error(int err) { return std::strerror(err); }

std::filesystem::path parent_of(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

bool is_gdsbench_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string()) return false;
  return doc["schema"].get<std::string>().rfind("gdsbench.", 0) == 0;
}

void check_report_target(const std::string& path, std::string_view option, bool allow_overwrite) {
  const std::string opt(option);
  if (path.empty()) throw UsageError(opt + ": the report file name is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(opt + " " + path + ": is a directory; name a file");
    if (!S_ISREG(st.st_mode)) {
      throw UsageError(opt + " " + path + ": is not a regular file; refusing to replace it");
    }
    if (!allow_overwrite && !is_gdsbench_report(path)) {
      throw UsageError(opt + " " + path +
                       ": exists and is not a gdsbench report; choose another name or pass "
                       "--allow-overwrite");
    }
  }
  // The directory may be created later (gdsb-report/); refuse only an existing non-directory.
  const auto parent = parent_of(path);
  std::error_code ec;
  if (std::filesystem::exists(parent, ec) && !std::filesystem::is_directory(parent, ec)) {
    throw UsageError(opt + " " + path + ": " + parent.string() + " is not a directory");
  }
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const auto parent = parent_of(path);
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw RuntimeError("cannot create directory " + parent.string() + ": " + ec.message());

  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError("cannot create " + tmp + ": " + sys_error(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw RuntimeError("cannot write " + tmp + ": " + sys_error(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError("cannot write " + tmp + ": " + sys_error(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError("cannot rename " + tmp + " to " + path + ": " + sys_error(err));
  }
}

}  // namespace gdsb::report
