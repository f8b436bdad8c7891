#include "gdsb/gpu/cufile_session.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "../run_files.hpp"
#include "gdsb/error.hpp"

namespace gdsb::gpu {

CufileSession::CufileSession(std::shared_ptr<const cufile::CufileApi> api, CufileDrivers& drivers,
                             const Workload& w, const FileSet& files, const EvidenceRoots& roots)
    : api_(std::move(api)), w_(w), files_(files), roots_(roots) {
  facts_.library = api_->library;
  facts_.env_force_compat = parse_bool_env(std::getenv("CUFILE_FORCE_COMPAT_MODE"));
  facts_.before = read_nvfs(roots_.nvfs_dir);
  if (files_.odirect && !files_.open_per_file) {
    for (int fd : files_.fds) cached_before_.push_back(page_cache_bytes(fd).value_or(0));
  }
  facts_.config = drivers.user_config();
  if (w_.require_gds) {
    if (auto why = compat_certain_before_run(facts_)) {
      throw VerificationError("--require-gds: cuFile can only run in compat mode here: " + *why);
    }
  }
  driver_ = drivers.acquire(api_, roots_);  // opened once for every run of the process
  facts_.props = driver_->props();
  facts_.log_dir = driver_->log_dir();
  try {
    if (files_.open_per_file) {
      handles_.assign(files_.fds.size(), nullptr);  // each registered by its thread, in turn
    } else {
      for (uint32_t i = 0; i < files_.fds.size(); ++i) {
        handles_.push_back(nullptr);
        register_file(i);
      }
    }
    facts_.handles_registered = true;
  } catch (...) {
    close();
    throw;
  }
}

CufileSession::~CufileSession() { close(); }

void CufileSession::register_file(uint32_t file) {
  cufile::CUfileDescr_t d{};
  d.type = cufile::kHandleTypeOpaqueFd;
  d.handle.fd = files_.fds.at(file);
  cufile::CUfileHandle_t h = nullptr;
  const cufile::CUfileError_t r = api_->handle_register(&h, &d);
  if (r.err != cufile::kSuccess) fail_early("cuFileHandleRegister", r.err, r.cu_err, file);
  handles_.at(file) = h;
}

void CufileSession::deregister_file(uint32_t file) noexcept {
  if (handles_[file] != nullptr) api_->handle_deregister(handles_[file]);
  handles_[file] = nullptr;
}

void CufileSession::fail_early(const std::string& call, int code, int cu_err, uint32_t file) {
  descriptors_at_failure_ = detail::open_descriptor_count();  // before deregistering closes cuFile's
  // Per file, only this thread's file: the others belong to threads still running.
  if (!files_.open_per_file) close_handles();
  fail(call, code, cu_err, file);
}

void CufileSession::close_handles() noexcept {
  for (uint32_t i = 0; i < handles_.size(); ++i) deregister_file(i);
  handles_.clear();
}

void CufileSession::close() noexcept {
  close_handles();
  driver_.reset();  // the last run to end closes the driver
}

cufile::FailureContext CufileSession::context(const std::string& call, int code, int cu_err,
                                              const std::string& file) const {
  cufile::FailureContext c;
  c.call = call;
  c.file = file;
  c.code = code;
  c.cu_err = cu_err;
  c.nvfs_loaded = facts_.before.loaded;
  if (!facts_.log_dir.empty()) c.log_lines = relevant_log_lines(facts_.log_dir);
  const uint64_t open_fds = descriptors_at_failure_ ? *descriptors_at_failure_ : detail::open_descriptor_count();
  if (rlimit rl{}; open_fds > 0 && ::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    c.descriptors_open = open_fds;
    c.descriptor_limit = rl.rlim_cur;
  }
  if (!file.empty()) {
    const FileFacts ff = file_facts(file, roots_.mountinfo, roots_.udev_root);
    c.fs_type = ff.fs_type;
    c.udev_record = ff.udev_record;
    c.udev_database_present = ff.udev_database_present;
    c.udev_record_present = ff.udev_record_present;
    c.device = ff.device;
    c.block_device = ff.block_device;
    c.odirect_open_errno = ff.odirect_open_errno;
  }
  return c;
}

void CufileSession::fail(const std::string& call, int code, int cu_err, uint32_t file) const {
  const std::string path = file < files_.paths.size() ? files_.paths[file] : std::string();
  throw RuntimeError(cufile::describe_failure(context(call, code, cu_err, path)));
}

std::string CufileSession::explain_io(const std::string& call, long long result,
                                      uint32_t file) const {
  const std::string path = file < files_.paths.size() ? files_.paths[file] : std::string();
  cufile::FailureContext c = context(call, 0, 0, path);
  if (-result > 5000) {
    c.code = static_cast<int>(-result);
  } else {
    c.errno_value = static_cast<int>(-result);
  }
  return cufile::describe_failure(c);
}

std::optional<std::string> page_cache_warning(const std::string& path, uint64_t file_bytes,
                                              uint64_t before, uint64_t after, bool compat) {
  const auto much = [&](uint64_t b) { return b >= (uint64_t{16} << 20) && b * 10 >= file_bytes; };
  const uint64_t grew = after > before ? after - before : 0;
  if (much(grew)) {
    return "the page cache gained " + std::to_string(grew >> 20) + " MiB of " + path +
           " during the run although it was opened with O_DIRECT: cuFile did buffered I/O "
           "(compat mode), so these figures are the page cache's, not the storage's "
           "(compare -x 1 on the same file)";
  }
  if (compat && much(before)) {
    return std::to_string(before >> 20) + " MiB of " + path +
           " were in the page cache when the run began: in compat mode cuFile may read "
           "through the page cache (its batch API does), so these figures may be the cache's; "
           "drop the cache first (sync; echo 3 > /proc/sys/vm/drop_caches)";
  }
  return std::nullopt;
}

PathReport CufileSession::finish() {
  facts_.after = read_nvfs(roots_.nvfs_dir);
  facts_.reads = reads_.load();
  facts_.writes = writes_.load();
  if (!facts_.log_dir.empty()) facts_.log_lines = relevant_log_lines(facts_.log_dir);
  PathReport r = decide_path(facts_);
  // Opened with O_DIRECT, as gdsio does: pages that appeared in the page cache during the
  // run came from cuFile doing buffered I/O, and the figure is the cache's, not storage's.
  for (std::size_t i = 0; i < cached_before_.size() && i < files_.fds.size(); ++i) {
    struct stat st {};
    const auto after = page_cache_bytes(files_.fds[i]);
    if (!after || ::fstat(files_.fds[i], &st) != 0) continue;
    const std::string& path = files_.paths.at(i);
    if (auto warn = page_cache_warning(path, static_cast<uint64_t>(st.st_size), cached_before_[i],
                                       *after, path_used_of(r.path_used) == PathUsed::Compat)) {
      r.warnings.push_back(*warn);
    }
    r.evidence.push_back("page cache of " + path + ": " + std::to_string(cached_before_[i] >> 20) +
                         " MiB before the run, " + std::to_string(*after >> 20) + " MiB after");
  }
  close();
  if (w_.require_gds && path_used_of(r.path_used) == PathUsed::Compat) {
    throw VerificationError("--require-gds: " + r.warnings.front());
  }
  return r;
}

}  // namespace gdsb::gpu
