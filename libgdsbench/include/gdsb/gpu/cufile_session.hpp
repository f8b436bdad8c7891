// One run's cuFile state: the process's driver (shared with the runs beside it, see
// cufile_driver.hpp), the run's files registered, and the facts from which the path used
// is judged.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/gpu/cufile_api.hpp"
#include "gdsb/gpu/cufile_driver.hpp"
#include "gdsb/gpu/cufile_errors.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/gpu/path_evidence.hpp"
#include "gdsb/page_cache.hpp"  // page_cache_bytes, which the warning below is about

namespace gdsb::gpu {

class CufileSession {
 public:
  // Takes the driver from `drivers` (opening it if no run holds it) and registers every
  // file; throws RuntimeError with the explanation (error name, cause, hints, quoted log
  // lines) when either fails, and VerificationError when --require-gds is set and the
  // facts already prove compat mode.
  CufileSession(std::shared_ptr<const cufile::CufileApi> api, CufileDrivers& drivers,
                const Workload& w, const FileSet& files, const EvidenceRoots& roots);
  ~CufileSession();
  CufileSession(const CufileSession&) = delete;
  CufileSession& operator=(const CufileSession&) = delete;

  const cufile::CufileApi& api() const { return *api_; }
  cufile::CUfileHandle_t handle(uint32_t file) const { return handles_.at(file); }
  // Workload::open_per_file: the thread that opened `file` registers its descriptor before
  // the first I/O (throws as the constructor does) and deregisters it after the last.
  void register_file(uint32_t file);
  void deregister_file(uint32_t file) noexcept;
  const std::string& file_path(uint32_t file) const { return files_.paths.at(file); }

  // A failed cuFile call, explained; never returns.
  [[noreturn]] void fail(const std::string& call, int code, int cu_err, uint32_t file) const;
  // The message for a negative I/O result (-errno or -(5000+n)) of `call` on `file`.
  std::string explain_io(const std::string& call, long long result, uint32_t file) const;

  void count(IoDir dir) { (dir == IoDir::Read ? reads_ : writes_).fetch_add(1, std::memory_order_relaxed); }
  const DriverProps& props() const { return facts_.props; }
  const std::string& log_dir() const { return facts_.log_dir; }

  // After the workers are gone: which path ran. Throws VerificationError for compat when
  // --require-gds was given.
  PathReport finish();

 private:
  cufile::FailureContext context(const std::string& call, int code, int cu_err,
                                 const std::string& file) const;
  [[noreturn]] void fail_early(const std::string& call, int code, int cu_err, uint32_t file);
  void close_handles() noexcept;
  void close() noexcept;

  std::shared_ptr<const cufile::CufileApi> api_;
  Workload w_;
  FileSet files_;
  EvidenceRoots roots_;
  PathFacts facts_;
  std::shared_ptr<const CufileDriver> driver_;
  std::optional<uint64_t> descriptors_at_failure_;  // counted before a failed setup is undone
  std::vector<cufile::CUfileHandle_t> handles_;
  std::atomic<uint64_t> reads_{0}, writes_{0};
  std::vector<uint64_t> cached_before_;  // page-cache bytes of each file at the start
};

// The warning a cuFile run gets when a file opened with O_DIRECT gained page-cache pages
// during the run (cuFile's compat mode did buffered I/O: its figures are not the
// storage's), or, in compat mode, when much of the file was cached before the run (the
// compat batch API reads through the page cache, measured on the GPU machine, so its
// reads may come from there). "Much": at least 16 MiB and 10% of the file.
std::optional<std::string> page_cache_warning(const std::string& path, uint64_t file_bytes,
                                              uint64_t before, uint64_t after, bool compat);

}  // namespace gdsb::gpu
