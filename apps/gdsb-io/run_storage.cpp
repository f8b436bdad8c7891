#include "run_storage.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gdsb/topo/mounts.hpp"

namespace gdsb::io {
namespace {

namespace fs = std::filesystem;

std::string dev_text(dev_t d) { return std::to_string(major(d)) + ":" + std::to_string(minor(d)); }

bool same(const RunStorage& a, const RunStorage& b) {
  return a.fs_type == b.fs_type && a.source == b.source && a.mount_point == b.mount_point && a.dev == b.dev;
}

// The storage of one file, or nullopt when neither it nor any directory above it is there,
// or no mount holds it.
std::optional<RunStorage> file_storage(const std::string& file, const std::vector<topo::Mount>& mounts) {
  std::error_code ec;
  fs::path p = fs::absolute(file, ec);
  if (ec) return std::nullopt;
  struct stat st {};
  while (::stat(p.c_str(), &st) != 0) {
    if (!p.has_relative_path()) return std::nullopt;
    p = p.parent_path();
  }
  RunStorage s;
  const fs::path real = fs::canonical(p, ec);
  if (S_ISBLK(st.st_mode)) {  // -f /dev/nvme0n1: the device is the storage, no file system
    s.source = ec ? p.string() : real.string();
    s.dev = dev_text(st.st_rdev);
    return s;
  }
  if (ec) return std::nullopt;
  // mount_holding wants the path the kernel sees: symbolic links resolved (canonical).
  const topo::Mount* m = topo::mount_holding(mounts, real.string());
  if (m == nullptr) return std::nullopt;
  s.fs_type = m->fstype;
  s.source = m->source;
  s.mount_point = m->target;
  s.dev = dev_text(st.st_dev);
  return s;
}

}  // namespace

std::optional<RunStorage> run_storage(const Workload& w, const std::vector<topo::Mount>& mounts) {
  std::vector<std::string> files;
  try {
    files = w.resolved_files();
  } catch (const std::exception&) {
    return std::nullopt;  // a file list that cannot be read: its run failed and says why
  }
  std::optional<RunStorage> out;
  for (const auto& f : files) {
    auto s = file_storage(f, mounts);
    if (!s) return std::nullopt;
    if (out && !same(*out, *s)) return std::nullopt;  // files on several file systems: no one storage
    out = std::move(s);
  }
  return out;
}

void add_run_storage(std::vector<RunResult>& runs) {
  const std::vector<topo::Mount> mounts = topo::read_mounts("/");
  for (auto& r : runs) r.storage = run_storage(r.workload, mounts);
}

}  // namespace gdsb::io
