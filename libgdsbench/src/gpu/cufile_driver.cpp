#include "gdsb/gpu/cufile_driver.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "gdsb/error.hpp"
#include "gdsb/gpu/cufile_errors.hpp"
#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu {

namespace {
constexpr const char* kConfigEnv = "CUFILE_ENV_PATH_JSON";
}

CufileDriver::CufileDriver(std::shared_ptr<const cufile::CufileApi> api, const EvidenceRoots& roots)
    : api_(std::move(api)) {
  config_ = read_cufile_config(cufile_config_path(std::getenv(kConfigEnv)));
  if (roots.private_log) make_private_log(roots);
  const cufile::CUfileError_t e = api_->driver_open();
  if (e.err != cufile::kSuccess) {
    // cuFile has written its log lines by the time the call returns: quote them.
    cufile::FailureContext c;
    c.call = "cuFileDriverOpen";
    c.code = e.err;
    c.cu_err = e.cu_err;
    c.nvfs_loaded = read_nvfs(roots.nvfs_dir).loaded;
    if (config_.found) {
      c.config_path = config_.path;
      c.max_direct_io_size_kb = config_.max_direct_io_size_kb;
      c.per_buffer_cache_size_kb = config_.per_buffer_cache_size_kb;
    }
    if (!log_dir_.empty()) c.log_lines = relevant_log_lines(log_dir_);
    const std::string why = cufile::describe_failure(c);
    restore_env();
    std::error_code ec;
    if (!log_dir_.empty()) std::filesystem::remove_all(log_dir_, ec);
    throw RuntimeError(why);
  }
  if (api_->driver_get_properties != nullptr) {
    // Room to spare in case a newer library writes a longer structure.
    alignas(8) unsigned char raw[sizeof(cufile::CUfileDrvProps_t) + 256] = {};
    auto* p = reinterpret_cast<cufile::CUfileDrvProps_t*>(raw);
    if (api_->driver_get_properties(p).err == cufile::kSuccess) {
      props_.known = true;
      props_.nvfs_major = p->nvfs.major_version;
      props_.nvfs_minor = p->nvfs.minor_version;
      props_.allow_compat = (p->nvfs.dcontrolflags >> cufile::kControlAllowCompatMode) & 1U;
      props_.p2p_supported = (p->fflags >> cufile::kFeatureP2p) & 1U;
      props_.nvme_p2p_supported = (p->nvfs.dstatusflags >> cufile::kStatusNvmeP2p) & 1U;
      props_.batch_supported = (p->fflags >> cufile::kFeatureBatchIo) & 1U;
      props_.streams_supported = (p->fflags >> cufile::kFeatureStreams) & 1U;
    }
  }
}

CufileDriver::~CufileDriver() {
  api_->driver_close();
  restore_env();
  if (!log_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(log_dir_, ec);
  }
}

void CufileDriver::make_private_log(const EvidenceRoots& roots) {
  std::string parent = roots.tmp_dir;
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
    out << private_cufile_config(config_, log_dir_, roots.log_level);
    if (!out) return;
  }
  const char* old = std::getenv(kConfigEnv);
  had_env_ = old != nullptr;
  if (had_env_) old_env_ = old;
  env_saved_ = true;
  // cuFile reads its configuration from this variable when the driver opens; it is
  // restored when the driver closes, after the last run that used it.
  ::setenv(kConfigEnv, cfg.c_str(), 1);
}

void CufileDriver::restore_env() noexcept {
  if (!env_saved_) return;
  if (had_env_) {
    ::setenv(kConfigEnv, old_env_.c_str(), 1);
  } else {
    ::unsetenv(kConfigEnv);
  }
  env_saved_ = false;
}

struct CufileDrivers::State {
  struct Open {
    const cufile::CufileApi* library;
    std::unique_ptr<CufileDriver> driver;
    int users = 0;
  };
  std::mutex mutex;
  std::vector<Open> open;

  void release(const cufile::CufileApi* library) {
    const std::lock_guard lock(mutex);
    const auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) { return o.library == library; });
    if (it != open.end() && --it->users == 0) open.erase(it);  // closes the driver, under the lock
  }
};

CufileDrivers::CufileDrivers() : state_(std::make_shared<State>()) {}

CufileConfig CufileDrivers::user_config() const {
  const std::lock_guard lock(state_->mutex);
  if (!state_->open.empty()) return state_->open.front().driver->config();
  return read_cufile_config(cufile_config_path(std::getenv(kConfigEnv)));
}

std::shared_ptr<const CufileDriver> CufileDrivers::acquire(const std::shared_ptr<const cufile::CufileApi>& api,
                                                           const EvidenceRoots& roots) {
  const std::lock_guard lock(state_->mutex);
  auto it = std::find_if(state_->open.begin(), state_->open.end(),
                         [&](const State::Open& o) { return o.library == api.get(); });
  if (it == state_->open.end()) {
    state_->open.push_back({api.get(), std::make_unique<CufileDriver>(api, roots), 0});
    it = std::prev(state_->open.end());
  }
  ++it->users;
  const cufile::CufileApi* library = api.get();
  return {it->driver.get(), [state = state_, library](const CufileDriver*) { state->release(library); }};
}

}  // namespace gdsb::gpu
