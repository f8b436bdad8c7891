#include "gdsb/gpu/cufile_errors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gdsb/gds_storage.hpp"
#include "gdsb/gpu/path_evidence.hpp"

namespace gdsb::gpu::cufile {
namespace {

bool any_line_has(const std::vector<std::string>& lines, std::string_view needle) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
    auto it = std::search(l.begin(), l.end(), needle.begin(), needle.end(), [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
    return it != l.end();
  });
}

bool is_one_of(int code, std::initializer_list<int> codes) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

}  // namespace

const std::vector<ErrorInfo>& error_table() {
  static const std::vector<ErrorInfo> kTable = {
      {5001, "CU_FILE_DRIVER_NOT_INITIALIZED", "cuFileDriverOpen was not called or failed"},
      {5002, "CU_FILE_DRIVER_INVALID_PROPS", "an invalid property was set on the cuFile driver"},
      {5003, "CU_FILE_DRIVER_UNSUPPORTED_LIMIT", "a driver limit was set outside its range"},
      {5004, "CU_FILE_DRIVER_VERSION_MISMATCH", "libcufile and the nvidia-fs module differ in version"},
      {5005, "CU_FILE_DRIVER_VERSION_READ_ERROR", "the nvidia-fs version could not be read"},
      {5006, "CU_FILE_DRIVER_CLOSING", "the driver is being closed while I/O was issued"},
      {5007, "CU_FILE_PLATFORM_NOT_SUPPORTED", "this platform (OS, CPU or kernel) is not supported by GDS"},
      {5008, "CU_FILE_IO_NOT_SUPPORTED", "the file system or file cannot do GDS I/O (unsupported file system, not a regular file, O_APPEND/O_NONBLOCK, compressed or encrypted)"},
      {5009, "CU_FILE_DEVICE_NOT_SUPPORTED", "this GPU is not supported by GDS"},
      {5010, "CU_FILE_NVFS_DRIVER_ERROR", "the nvidia-fs kernel module returned an error"},
      {5011, "CU_FILE_CUDA_DRIVER_ERROR", "a CUDA driver call inside cuFile failed (see cu_err)"},
      {5012, "CU_FILE_CUDA_POINTER_INVALID", "the buffer is not a valid CUDA pointer"},
      {5013, "CU_FILE_CUDA_MEMORY_TYPE_INVALID", "the buffer's memory type cannot be used for GDS"},
      {5014, "CU_FILE_CUDA_POINTER_RANGE_ERROR", "the I/O runs past the end of the registered buffer"},
      {5015, "CU_FILE_CUDA_CONTEXT_MISMATCH", "the buffer belongs to another CUDA context or GPU"},
      {5016, "CU_FILE_INVALID_MAPPING_SIZE", "the buffer size is invalid for mapping"},
      {5017, "CU_FILE_INVALID_MAPPING_RANGE", "the buffer range cannot be mapped"},
      {5018, "CU_FILE_INVALID_FILE_TYPE", "the file type is not supported (not a regular file or block device)"},
      {5019, "CU_FILE_INVALID_FILE_OPEN_FLAG", "the file was opened with flags cuFile refuses (O_APPEND, O_NONBLOCK, ...)"},
      {5020, "CU_FILE_DIO_NOT_SET", "the file was not opened with O_DIRECT"},
      {5022, "CU_FILE_INVALID_VALUE", "an argument is invalid (size, offset or alignment)"},
      {5023, "CU_FILE_MEMORY_ALREADY_REGISTERED", "the buffer is already registered"},
      {5024, "CU_FILE_MEMORY_NOT_REGISTERED", "the buffer was not registered"},
      {5025, "CU_FILE_PERMISSION_DENIED", "no permission to use the nvidia-fs device or the file"},
      {5026, "CU_FILE_DRIVER_ALREADY_OPEN", "the driver is already open"},
      {5027, "CU_FILE_HANDLE_NOT_REGISTERED", "the file handle could not be registered or was not"},
      {5028, "CU_FILE_HANDLE_ALREADY_REGISTERED", "the file handle is already registered"},
      {5029, "CU_FILE_DEVICE_NOT_FOUND", "the GPU was not found"},
      {5030, "CU_FILE_INTERNAL_ERROR", "an internal cuFile error (the log says more)"},
      {5031, "CU_FILE_GETNEWFD_FAILED", "a new file descriptor could not be obtained"},
      {5033, "CU_FILE_NVFS_SETUP_ERROR", "nvidia-fs setup failed"},
      {5034, "CU_FILE_IO_DISABLED", "I/O is disabled by configuration"},
      {5035, "CU_FILE_BATCH_SUBMIT_FAILED", "the batch submission failed"},
      {5036, "CU_FILE_GPU_MEMORY_PINNING_FAILED", "GPU memory could not be pinned (BAR1 space exhausted)"},
      {5037, "CU_FILE_BATCH_FULL", "the batch has no free entries"},
      {5038, "CU_FILE_ASYNC_NOT_SUPPORTED", "asynchronous I/O is not supported here"},
      {5039, "CU_FILE_INTERNAL_BATCH_SETUP_ERROR", "internal error setting up a batch"},
      {5040, "CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR", "internal error submitting a batch"},
      {5041, "CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR", "internal error reading batch status"},
      {5042, "CU_FILE_INTERNAL_BATCH_CANCEL_ERROR", "internal error cancelling a batch"},
      {5043, "CU_FILE_NOMEM_ERROR", "out of memory inside cuFile"},
      {5044, "CU_FILE_IO_ERROR", "the storage I/O itself failed"},
      {5045, "CU_FILE_INTERNAL_BUF_REGISTER_ERROR", "internal error registering a buffer"},
      {5046, "CU_FILE_HASH_OPR_ERROR", "internal hash table error"},
      {5047, "CU_FILE_INVALID_CONTEXT_ERROR", "no valid CUDA context on the calling thread"},
      {5048, "CU_FILE_NVFS_INTERNAL_DRIVER_ERROR", "internal nvidia-fs error"},
      {5049, "CU_FILE_BATCH_NOCOMPAT_ERROR", "the batch API cannot run in compat mode here"},
  };
  return kTable;
}

const ErrorInfo* find_error(int code) {
  if (code > 0 && code < 5000) code += 5000;
  const auto& t = error_table();
  auto it = std::find_if(t.begin(), t.end(), [&](const ErrorInfo& e) { return e.code == code; });
  return it == t.end() ? nullptr : &*it;
}

std::string error_label(int code) {
  if (const ErrorInfo* e = find_error(code)) {
    return std::string(e->name) + " (" + std::to_string(e->code) + ")";
  }
  // cuFile passes an errno through, negated (cuFileDriverOpen gave -22 for a configuration
  // it refused, on 4 x H100 with CUDA 13.0).
  if (code < 0 && code > -4096 && strerrorname_np(-code) != nullptr)
    return std::string(strerrorname_np(-code)) + " (" + std::to_string(code) + ")";
  return "unknown cuFile error " + std::to_string(code);
}

std::string io_result_label(long long result) {
  if (result >= 0) return std::to_string(result) + " bytes";
  const long long v = -result;
  if (v > 5000) return error_label(static_cast<int>(v));
  const int err = static_cast<int>(v);
  return std::string(strerrorname_np(err) != nullptr ? strerrorname_np(err) : "errno") + " (" +
         std::strerror(err) + ")";
}

constexpr long long kDefaultPerBufferCacheKb = 1024;

std::vector<Hint> select_hints(const FailureContext& c) {
  std::vector<Hint> out;
  const int code = c.code > 0 && c.code < 5000 ? c.code + 5000 : c.code;
  const bool registering = c.call == "cuFileHandleRegister";
  const bool udev_in_log = any_line_has(c.log_lines, "udev");
  const std::string fs = c.fs_type.empty() ? std::string() : " (" + c.fs_type + ")";
  const std::string file = c.file.empty() ? std::string("the file") : c.file;
  // Checked on this file, not inferred from a file system's name.
  const bool no_block_device = c.block_device.has_value() && !*c.block_device;
  if (registering && no_block_device) {
    out.push_back({"no-block-device",
                   file + " lies on device " + c.device + fs +
                       ", which is no block device (/sys/dev/block/" + c.device +
                       " does not exist): cuFile finds a file's file system through the udev "
                       "record of its block device, so it cannot register this file. Put the "
                       "file on ext4 or xfs on a block device (NVMe), or read it through a CPU "
                       "path (-x 1, -x 2)"});
  }
  if (registering && !no_block_device && (is_one_of(code, {5027, 5030, 5008}) || udev_in_log) &&
      // The hint says the record is missing: only where the check of this file found it so
      // (a cuFile log line about udev with the record present is cuFile's own lookup, which
      // the log lines quoted below show; issue 24).
      (!c.udev_database_present || !c.udev_record_present)) {
    std::string where = c.udev_record.empty() ? "/run/udev/data" : c.udev_record;
    out.push_back({"no-udev",
                   std::string(kNoUdevHint) + where +
                       (c.udev_database_present ? " is missing" : " is missing: this machine has no udev database (typical in containers and VMs)") +
                       "; handle registration fails without it. Expose the host's /run/udev "
                       "(e.g. docker -v /run/udev:/run/udev:ro) or run where udev runs."});
  }
  if (c.call == "cuFileDriverOpen" && c.code == -EINVAL && !c.config_path.empty()) {
    // cuFile refuses a configuration whose direct I/O size is below its per-buffer cache
    // ("directIO size should be greater than or equal to PerBufferCacheSize", its log, seen
    // with max_direct_io_size_kb 64); per_buffer_cache_size_kb is 1024 in the cufile.json
    // NVIDIA ships.
    const long long cache = c.per_buffer_cache_size_kb.value_or(kDefaultPerBufferCacheKb);
    if (c.max_direct_io_size_kb && *c.max_direct_io_size_kb < cache) {
      out.push_back({"config-direct-io-below-cache",
                     c.config_path + ": properties.max_direct_io_size_kb is " +
                         std::to_string(*c.max_direct_io_size_kb) + ", below properties.per_buffer_cache_size_kb (" +
                         std::to_string(cache) +
                         (c.per_buffer_cache_size_kb ? "" : ", cuFile's default") +
                         "), which cuFile refuses: set per_buffer_cache_size_kb to at most " +
                         std::to_string(*c.max_direct_io_size_kb) + ", or raise max_direct_io_size_kb"});
    } else {
      out.push_back({"config-refused", "cuFile refused its configuration file " + c.config_path +
                                           " (CUFILE_ENV_PATH_JSON, else /etc/cufile.json): the lines cuFile "
                                           "printed before this one name the key"});
    }
  }
  // An O_DIRECT open that failed with EINVAL is the file system refusing O_DIRECT (open(2));
  // either the failed call was that open, or the open tried on the file here.
  const bool open_refused = c.call == "open" && c.errno_value == EINVAL;
  if (open_refused || c.odirect_open_errno == EINVAL) {
    out.push_back({"odirect-refused",
                   "an O_DIRECT open of " + file + " failed here with EINVAL: the file system" +
                       fs + " refuses O_DIRECT; put the file on ext4 or xfs, or use -x 4 (page "
                       "cache) or -O 1 for a CPU path"});
  } else if (is_one_of(code, {5019, 5020}) && c.odirect_open_errno == 0) {
    out.push_back({"odirect-accepted",
                   "an O_DIRECT open of " + file + " succeeded here, so the file system" + fs +
                       " accepts O_DIRECT: the descriptor handed to cuFile lacked it or had "
                       "flags cuFile refuses"});
  }
  if (is_one_of(code, {5008, 5018}) && !c.fs_type.empty() &&
      storage::gds_file_system(c.fs_type) == nullptr) {
    out.push_back({"fs-not-supported",
                   "file system " + c.fs_type +
                       " is not supported by GDS (supported: " + storage::gds_file_system_list() +
                       "); with allow_compat_mode cuFile would fall back to POSIX I/O"});
  }
  // The error codes, or nvidia-fs's own record of the failed BAR1 accounting, read as a
  // record: a line that only mentions BAR1 (a configuration dump, a user's note) is no
  // evidence (issue 24, as the doctor's bar1 rule).
  const bool bar_record = std::any_of(c.log_lines.begin(), c.log_lines.end(), [](const std::string& l) {
    const auto r = parse_log_record(l);
    return r && r->message.rfind("Inc-bar-usage failed", 0) == 0;
  });
  if (code == 5036 || code == 5045 || bar_record) {
    out.push_back({"bar1-exhausted",
                   "pinning GPU memory for DMA failed: the GPU's BAR1 aperture is probably "
                   "exhausted (nvidia-smi -q -d MEMORY shows BAR1 used/total); use fewer "
                   "threads or smaller -i, or skip registration with -b"});
  }
  // cuFile opens a descriptor of its own for every registered file; where the process has
  // none left it says CU_FILE_GETNEWFD_FAILED and logs "Too many open files" (4 x H100,
  // issue 35: a 9,950-file list under a hard limit of 20,000).
  if (code == 5031 || c.errno_value == EMFILE || any_line_has(c.log_lines, "Too many open files")) {
    std::string counts;
    if (c.descriptors_open && c.descriptor_limit)
      counts = " (" + std::to_string(*c.descriptors_open) + " open of a limit of " +
               std::to_string(*c.descriptor_limit) + ")";
    out.push_back({"descriptors",
                   "the process ran out of file descriptors" + counts +
                       ": every registered file takes two, gdsbench's and cuFile's own, and CUDA "
                       "and cuFile hold more the more GPUs the node has; use fewer files or "
                       "raise the hard limit (ulimit -Hn, systemd LimitNOFILE, Slurm's "
                       "PropagateResourceLimits)"});
  }
  if (code == 5043 || c.cu_err == 2 /* CUDA_ERROR_OUT_OF_MEMORY */) {
    out.push_back({"gpu-oom", "out of memory (GPU or host pinned memory): lower -w, -i or -B"});
  }
  if ((code == 5011 && (c.cu_err == 803 || c.cu_err == 804 || c.cu_err == 222)) ||
      any_line_has(c.log_lines, "driver version is insufficient") ||
      any_line_has(c.log_lines, "cuda driver version")) {
    out.push_back({"cuda-driver-too-old",
                   "the CUDA driver is too old for this libcufile: update the NVIDIA driver "
                   "or use the libcufile of the CUDA version the driver supports"});
  }
  if (is_one_of(code, {5004, 5005, 5010, 5033, 5048})) {
    out.push_back({"nvfs-driver",
                   std::string("the nvidia-fs kernel module ") +
                       (c.nvfs_loaded ? "reported an error (see dmesg and /proc/driver/nvidia-fs/stats)"
                                      : "is not loaded (modprobe nvidia-fs) or does not match libcufile")});
  }
  if (is_one_of(code, {5007, 5009})) {
    out.push_back({"platform", "this GPU or platform cannot do GDS; cuFile can only run in "
                               "compat mode here (properties.allow_compat_mode in cufile.json)"});
  }
  if (code == 5025) {
    out.push_back({"permission", "permission denied: the user needs access to the file and "
                                 "to /dev/nvidia-fs* (or run as root)"});
  }
  if (code == 5047 || code == 5015) {
    out.push_back({"cuda-context", "cuFile was called on a thread without the right CUDA "
                                   "context (a gdsbench bug: please report it)"});
  }
  return out;
}

std::string describe_failure(const FailureContext& c) {
  std::string msg = c.call + (c.file.empty() ? std::string() : " on " + c.file) + " failed: ";
  if (c.code != 0) {
    msg += error_label(c.code);
    if (const ErrorInfo* e = find_error(c.code)) msg += ": " + std::string(e->cause);
    if (c.cu_err != 0) msg += " (CUresult " + std::to_string(c.cu_err) + ")";
  } else if (c.errno_value != 0) {
    msg += io_result_label(-static_cast<long long>(c.errno_value));
  }
  for (const Hint& h : select_hints(c)) msg += "\n  hint: " + h.text;
  if (!c.log_lines.empty()) {
    msg += "\n  cuFile log:";
    for (const auto& l : c.log_lines) msg += "\n    " + l;
  }
  return msg;
}

}  // namespace gdsb::gpu::cufile
