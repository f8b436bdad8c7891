#include "gdsb/gpu/cufile_session.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gdsb/error.hpp"

namespace gdsb::gpu {

namespace {
constexpr const char* kConfigEnv = "CUFILE_ENV_PATH_JSON";
}

CufileSession::CufileSession(std::shared_ptr<const cufile::CufileApi> api, const Workload& w,
                             const FileSet& files, const EvidenceRoots& roots)
    : api_(std::move(api)), w_(w), files_(files), roots_(roots) {
  facts_.library = api_->library;
  facts_.config = read_cufile_config(cufile_config_path(std::getenv(kConfigEnv)));
  facts_.env_force_compat = parse_bool_env(std::getenv("CUFILE_FORCE_COMPAT_MODE"));
  facts_.before = read_nvfs(roots_.nvfs_dir);
  if (files_.odirect) {
    for (int fd : files_.fds) cached_before_.push_back(page_cache_bytes(fd).value_or(0));
  }
  if (w_.require_gds) {
    if (auto why = compat_certain_before_run(facts_)) {
      throw VerificationError("--require-gds: cuFile can only run in compat mode here: " + *why);
    }
  }
  if (roots_.private_log) make_private_log();
  try {
    const cufile::CUfileError_t e = api_->driver_open();
    if (e.err != cufile::kSuccess) fail_early("cuFileDriverOpen", e.err, e.cu_err, UINT32_MAX);
    driver_open_ = true;
    if (api_->driver_get_properties != nullptr) {
      // Room to spare in case a newer library writes a longer structure.
      alignas(8) unsigned char raw[sizeof(cufile::CUfileDrvProps_t) + 256] = {};
      auto* p = reinterpret_cast<cufile::CUfileDrvProps_t*>(raw);
      if (api_->driver_get_properties(p).err == cufile::kSuccess) {
        facts_.props.known = true;
        facts_.props.nvfs_major = p->nvfs.major_version;
        facts_.props.nvfs_minor = p->nvfs.minor_version;
        facts_.props.allow_compat = (p->nvfs.dcontrolflags >> cufile::kControlAllowCompatMode) & 1U;
        facts_.props.p2p_supported = (p->fflags >> cufile::kFeatureP2p) & 1U;
        facts_.props.batch_supported = (p->fflags >> cufile::kFeatureBatchIo) & 1U;
        facts_.props.streams_supported = (p->fflags >> cufile::kFeatureStreams) & 1U;
      }
    }
    for (uint32_t i = 0; i < files_.fds.size(); ++i) {
      cufile::CUfileDescr_t d{};
      d.type = cufile::kHandleTypeOpaqueFd;
      d.handle.fd = files_.fds[i];
      cufile::CUfileHandle_t h = nullptr;
      const cufile::CUfileError_t r = api_->handle_register(&h, &d);
      if (r.err != cufile::kSuccess) fail_early("cuFileHandleRegister", r.err, r.cu_err, i);
      handles_.push_back(h);
    }
    facts_.handles_registered = true;
  } catch (...) {
    close();
    throw;
  }
}

CufileSession::~CufileSession() { close(); }

void CufileSession::fail_early(const std::string& call, int code, int cu_err, uint32_t file) {
  // Close the driver first: cuFile writes out its log lines by then.
  for (auto h : handles_) api_->handle_deregister(h);
  handles_.clear();
  if (driver_open_) api_->driver_close();
  driver_open_ = false;
  fail(call, code, cu_err, file);
}

void CufileSession::close() noexcept {
  for (auto h : handles_) api_->handle_deregister(h);
  handles_.clear();
  if (driver_open_) api_->driver_close();
  driver_open_ = false;
  restore_env();
  if (!log_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(log_dir_, ec);
    log_dir_.clear();
  }
}

void CufileSession::make_private_log() {
  std::string parent = roots_.tmp_dir;
  if (parent.empty()) {
    const char* t = std::getenv("TMPDIR");
    parent = t != nullptr && *t != '\0' ? t : "/tmp";
  }
  std::string templ = parent + "/gdsb-cufile-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return;  // cuFile then logs where it always does
  log_dir_ = templ;
  const std::string cfg = log_dir_ + "/cufile.json";
  {
    std::ofstream out(cfg);
    out << private_cufile_config(facts_.config, log_dir_, roots_.log_level);
    if (!out) return;
  }
  facts_.log_dir = log_dir_;
  const char* old = std::getenv(kConfigEnv);
  had_env_ = old != nullptr;
  if (had_env_) old_env_ = old;
  env_saved_ = true;
  // cuFile reads its configuration from this variable when the driver opens; it is
  // restored when the session ends (the only process-wide state gdsbench changes).
  ::setenv(kConfigEnv, cfg.c_str(), 1);
}

void CufileSession::restore_env() noexcept {
  if (!env_saved_) return;
  if (had_env_) {
    ::setenv(kConfigEnv, old_env_.c_str(), 1);
  } else {
    ::unsetenv(kConfigEnv);
  }
  env_saved_ = false;
}

cufile::FailureContext CufileSession::context(const std::string& call, int code, int cu_err,
                                              const std::string& file) const {
  cufile::FailureContext c;
  c.call = call;
  c.file = file;
  c.code = code;
  c.cu_err = cu_err;
  c.nvfs_loaded = facts_.before.loaded;
  if (!log_dir_.empty()) c.log_lines = relevant_log_lines(log_dir_);
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
  if (!log_dir_.empty()) facts_.log_lines = relevant_log_lines(log_dir_);
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
