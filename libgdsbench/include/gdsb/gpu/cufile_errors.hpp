// cuFile errors that explain themselves: every CUfileOpError by name and number with its
// likely cause, plus specific hints chosen from what is known about the failure (the call,
// the file system, the udev database, cuFile's own log).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gdsb::gpu::cufile {

struct ErrorInfo {
  int code = 0;             // 5000 + n
  std::string_view name;    // "CU_FILE_HANDLE_NOT_REGISTERED"
  std::string_view cause;   // the likely cause, one sentence
};

// The full table of REFERENCE.md section 2, in code order.
const std::vector<ErrorInfo>& error_table();
// Accepts 5000+n or n; nullptr for codes that are not in the table.
const ErrorInfo* find_error(int code);
// "CU_FILE_HANDLE_NOT_REGISTERED (5027)", or "unknown cuFile error 5099".
std::string error_label(int code);
// A negative result of cuFileRead/Write or a batch entry: -errno or -(5000+n).
std::string io_result_label(long long result);

// What is known about one failure; filled by the cuFile session.
struct FailureContext {
  std::string call;   // "cuFileHandleRegister"
  std::string file;   // the path involved, if any
  int code = 0;       // CUfileOpError (5000+n), or 0 when errno is set
  int cu_err = 0;     // CUresult of a CUDA driver error
  int errno_value = 0;
  std::vector<std::string> log_lines;  // cuFile log lines worth quoting (already filtered)
  std::string fs_type;                 // "ext4", "tmpfs", "overlay", ...
  std::string udev_record;             // "/run/udev/data/b254:0" for the file's device
  bool udev_database_present = true;   // /run/udev/data exists
  bool udev_record_present = true;
  bool nvfs_loaded = false;
  // Checked on this file (gdsb/gpu/path_evidence.hpp FileFacts): its device "maj:min",
  // whether that is a block device, and what an O_DIRECT open of it gave (0: it opened).
  std::string device;
  std::optional<bool> block_device;
  std::optional<int> odirect_open_errno;
  // The process's descriptors when the call failed: open (/proc/self/fd) and the soft limit.
  std::optional<uint64_t> descriptors_open, descriptor_limit;
  // cuFileDriverOpen: the configuration file cuFile read (CUFILE_ENV_PATH_JSON, else
  // /etc/cufile.json) and the sizes it sets that cuFile checks against each other.
  std::string config_path;
  std::optional<long long> max_direct_io_size_kb, per_buffer_cache_size_kb;
};

struct Hint {
  std::string id;    // stable key for tests and JSON: "no-udev", "fs-not-supported", ...
  std::string text;  // what happened and what to do
};

std::vector<Hint> select_hints(const FailureContext& c);
// The start of the "no-udev" hint's text, which gdsb-io gives only after checking the
// file's udev record (readers of a report find the hint by it).
inline constexpr std::string_view kNoUdevHint =
    "cuFile identifies the file system through the udev database, and ";
// The full multi-line explanation: call, file, error name and number, likely cause,
// hints, and the quoted log lines.
std::string describe_failure(const FailureContext& c);

}  // namespace gdsb::gpu::cufile
