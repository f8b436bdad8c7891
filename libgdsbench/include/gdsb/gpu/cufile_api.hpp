// cuFile, loaded at run time (kvikio style): dlopen("libcufile.so.0") and a typed table of
// function pointers filled by dlsym. cufile.h is not needed at build time: the few types
// are declared here with the layout of the public header (GDS 1.x; C enums are int).
// A missing optional symbol leaves its pointer null; the paths that need it are waived.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace gdsb::gpu::cufile {

struct CUfileError_t {
  int err = 0;     // CUfileOpError: 0 success, 5000 + n otherwise
  int cu_err = 0;  // CUresult when err is CU_FILE_CUDA_DRIVER_ERROR
};

using CUfileHandle_t = void*;
using CUfileBatchHandle_t = void*;
using CUstream = void*;

inline constexpr int kSuccess = 0;
inline constexpr int kHandleTypeOpaqueFd = 1;  // CU_FILE_HANDLE_TYPE_OPAQUE_FD
inline constexpr int kBatchMode = 1;           // CUFILE_BATCH
inline constexpr int kOpRead = 0;              // CUFILE_READ
inline constexpr int kOpWrite = 1;             // CUFILE_WRITE

// CUfileStatus_t of a batch entry.
inline constexpr int kStatusWaiting = 0x01;
inline constexpr int kStatusPending = 0x02;
inline constexpr int kStatusInvalid = 0x04;
inline constexpr int kStatusCanceled = 0x08;
inline constexpr int kStatusComplete = 0x10;
inline constexpr int kStatusTimeout = 0x20;
inline constexpr int kStatusFailed = 0x40;

struct CUfileDescr_t {
  int type = kHandleTypeOpaqueFd;
  union {
    int fd;
    void* handle;
  } handle{};
  const void* fs_ops = nullptr;
};

struct CUfileIOParams_t {
  int mode = kBatchMode;  // must be first
  union {
    struct {
      void* devPtr_base;
      off_t file_offset;
      off_t devPtr_offset;
      std::size_t size;
    } batch;
  } u{};
  CUfileHandle_t fh = nullptr;
  int opcode = kOpRead;
  void* cookie = nullptr;
};

struct CUfileIOEvents_t {
  void* cookie = nullptr;
  int status = 0;
  std::size_t ret = 0;  // bytes done, or a negative error stored in a size_t
};

struct CUfileDrvProps_t {
  struct {
    unsigned int major_version;
    unsigned int minor_version;
    std::size_t poll_thresh_size;
    std::size_t max_direct_io_size;
    unsigned int dstatusflags;
    unsigned int dcontrolflags;
  } nvfs;
  unsigned int fflags;
  unsigned int max_device_cache_size;
  unsigned int per_buffer_cache_size;
  unsigned int max_device_pinned_mem_size;
  unsigned int max_batch_io_size;
  unsigned int max_batch_io_timeout_msecs;
};

// Bits of CUfileDrvProps_t (bit numbers, as in cufile.h).
inline constexpr unsigned kControlUsePollMode = 0;     // dcontrolflags
inline constexpr unsigned kControlAllowCompatMode = 1;
inline constexpr unsigned kFeatureDynRouting = 0;      // fflags
inline constexpr unsigned kFeatureBatchIo = 1;
inline constexpr unsigned kFeatureStreams = 2;
inline constexpr unsigned kFeatureParallelIo = 3;
// CU_FILE_P2P_SUPPORTED, "PCI P2PDMA support": in the current cuFile API reference
// (docs.nvidia.com/gpudirect-storage/api-reference-guide), absent from GDS 1.15's cufile.h.
inline constexpr unsigned kFeatureP2p = 4;
// CU_FILE_NVME_P2P_SUPPORTED (nvfs.dstatusflags), "Support for NVMe using PCI P2PDMA":
// GDS 1.13 to 1.15 report P2PDMA here (1.15's cufile.h, the H200 machines'); the current
// API reference calls it deprecated in favour of kFeatureP2p.
inline constexpr unsigned kStatusNvmeP2p = 11;

// The table. Required: driver open/close, handle and buffer registration, read/write.
struct CufileApi {
  std::string library;  // the path given to dlopen
  CUfileError_t (*driver_open)() = nullptr;
  CUfileError_t (*driver_close)() = nullptr;  // cuFileDriverClose_v2 when present
  CUfileError_t (*driver_get_properties)(CUfileDrvProps_t*) = nullptr;
  CUfileError_t (*get_version)(int*) = nullptr;
  CUfileError_t (*handle_register)(CUfileHandle_t*, CUfileDescr_t*) = nullptr;
  void (*handle_deregister)(CUfileHandle_t) = nullptr;
  CUfileError_t (*buf_register)(const void*, std::size_t, int) = nullptr;
  CUfileError_t (*buf_deregister)(const void*) = nullptr;
  ssize_t (*read)(CUfileHandle_t, void*, std::size_t, off_t, off_t) = nullptr;
  ssize_t (*write)(CUfileHandle_t, const void*, std::size_t, off_t, off_t) = nullptr;
  // Optional: stream API (GDS >= 1.7).
  CUfileError_t (*read_async)(CUfileHandle_t, void*, std::size_t*, off_t*, off_t*, ssize_t*,
                              CUstream) = nullptr;
  CUfileError_t (*write_async)(CUfileHandle_t, void*, std::size_t*, off_t*, off_t*, ssize_t*,
                               CUstream) = nullptr;
  CUfileError_t (*stream_register)(CUstream, unsigned) = nullptr;
  CUfileError_t (*stream_deregister)(CUstream) = nullptr;
  // Optional: batch API (GDS >= 1.6).
  CUfileError_t (*batch_setup)(CUfileBatchHandle_t*, unsigned) = nullptr;
  CUfileError_t (*batch_submit)(CUfileBatchHandle_t, unsigned, CUfileIOParams_t*,
                                unsigned) = nullptr;
  CUfileError_t (*batch_get_status)(CUfileBatchHandle_t, unsigned, unsigned*, CUfileIOEvents_t*,
                                    timespec*) = nullptr;
  CUfileError_t (*batch_cancel)(CUfileBatchHandle_t) = nullptr;
  void (*batch_destroy)(CUfileBatchHandle_t) = nullptr;

  bool has_stream_api() const {
    return read_async != nullptr && write_async != nullptr && stream_register != nullptr &&
           stream_deregister != nullptr;
  }
  bool has_batch_api() const {
    return batch_setup != nullptr && batch_submit != nullptr && batch_get_status != nullptr &&
           batch_destroy != nullptr;
  }
  // Symbols a type needs that this library lacks, e.g. "cuFileReadAsync".
  std::vector<std::string> missing_stream_symbols() const;
  std::vector<std::string> missing_batch_symbols() const;
};

// Where to look: workload.cufile_library, else env GDSB_CUFILE_LIB, else "libcufile.so.0".
std::string choose_library(const std::string& from_workload, const char* from_env);

struct LoadResult {
  std::shared_ptr<const CufileApi> api;  // null when loading failed
  std::string error;                     // why, in words a user can act on
};

// dlopen + dlsym. The handle stays open for the life of the process (libcufile must not
// be unloaded while its threads run), so this is called once per run, not per I/O.
LoadResult load_cufile(const std::string& library);

// cuFile's user-space RDMA library (gdscheck -p's "rdma library"): libcufile loads it itself
// when cufile.json lists RDMA NICs (rdma_dev_addr_list). It needs libibverbs, librdmacm and
// libmlx5, so it may be installed and still not load.
inline constexpr const char* kCufileRdmaLibrary = "libcufile_rdma.so.1";

// Whether a run-time-loaded library loads here, and dlerror's words when not.
struct LibraryProbe {
  std::string library;  // the name given to dlopen
  bool loaded = false;
  std::string error;    // "" when loaded
};

// dlopen of `library` with the same flags as load_cufile. A loaded library stays loaded for
// the life of the process (as libcufile does: its threads must not outlive their code).
LibraryProbe probe_library(const std::string& library);

}  // namespace gdsb::gpu::cufile
