#include "gdsb/topo/run_storage.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gdsb/topo/mounts.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::topo {
namespace {

namespace fs = std::filesystem;

std::string dev_text(dev_t d) { return std::to_string(major(d)) + ":" + std::to_string(minor(d)); }

bool same(const RunStorage& a, const RunStorage& b) {
  return a.fs_type == b.fs_type && a.source == b.source && a.mount_point == b.mount_point && a.dev == b.dev;
}

}  // namespace

std::optional<RunStorage> path_storage(const std::string& path, const std::vector<Mount>& mounts) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
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
  const Mount* m = mount_holding(mounts, real.string());
  if (m == nullptr) return std::nullopt;
  s.fs_type = m->fstype;
  s.source = m->source;
  s.mount_point = m->target;
  s.dev = dev_text(st.st_dev);
  return s;
}

std::optional<RunStorage> run_storage(const Workload& w, const std::vector<Mount>& mounts) {
  std::vector<std::string> files;
  try {
    files = w.resolved_files();
  } catch (const std::exception&) {
    return std::nullopt;  // a file list that cannot be read: its run failed and says why
  }
  std::optional<RunStorage> out;
  for (const auto& f : files) {
    auto s = path_storage(f, mounts);
    if (!s) return std::nullopt;
    if (out && !same(*out, *s)) return std::nullopt;  // files on several file systems: no one storage
    out = std::move(s);
  }
  return out;
}

void add_run_storage(std::vector<RunResult>& runs) {
  const std::vector<topo::Mount> mounts = read_mounts("/");
  for (auto& r : runs) r.storage = run_storage(r.workload, mounts);
}

}  // namespace gdsb::topo
