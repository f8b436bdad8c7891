// What one job does: a plain value, filled by the CLI or a job file, read by the runner.
// Round-trips through JSON (to_json/from_json) so reports carry the full workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gdsb {

// gdsio's -x values. The numbers are part of the CLI contract.
enum class XferType : int {
  GpuDirect = 0,       // GPUD: cuFileRead/Write
  CpuOnly = 1,         // CPUONLY: O_DIRECT into aligned host memory
  CpuGpu = 2,          // CPU_GPU: host bounce buffer, then a synchronous copy
  CpuAsyncGpu = 3,     // CPU_ASYNC_GPU: bounce buffers, copies overlapped with storage I/O
  CpuCachedGpu = 4,    // CPU_CACHED_GPU: page cache (no O_DIRECT)
  GpuDirectAsync = 5,  // GPUD_ASYNC: cuFileReadAsync/WriteAsync on a stream
  GpuBatch = 6,        // GPU_BATCH: cuFile batch API
  GpuBatchStream = 7,  // GPU_BATCH_STREAM: batch API bound to a stream
};
inline constexpr int kXferTypeCount = 8;

std::string_view xfer_label(XferType t);  // gdsio's output label, e.g. "GPUD", "CPUONLY"
std::string_view xfer_name(XferType t);   // long name, e.g. "gpu_direct", "cpu_only"
// Accepts the number ("0".."7"), the long name or the gdsio label, case-insensitive.
std::optional<XferType> parse_xfer_type(std::string_view text);
bool xfer_uses_gpu(XferType t);     // every type except CpuOnly
bool xfer_uses_cufile(XferType t);  // 0, 5, 6, 7

// gdsio's -I values.
enum class IoPattern : int { Read = 0, Write = 1, RandRead = 2, RandWrite = 3 };
std::string_view pattern_label(IoPattern p);  // "READ", "WRITE", "RANDREAD", "RANDWRITE"
bool pattern_is_random(IoPattern p);
bool pattern_is_write(IoPattern p);

// gdsio's -m values (GPU memory types; 2-4 only with the cuFile types).
enum class MemType : int { CudaMalloc = 0, CuMem = 1, CudaMallocHost = 2, Malloc = 3, Mmap = 4 };
std::string_view mem_type_name(MemType m);

// How CPU-side storage I/O is submitted.
enum class SubmitEngine { Psync, IoUring };
std::string_view engine_name(SubmitEngine e);

struct Workload {
  std::string name;                  // job name ("" for the command line job)
  std::string file;                  // -f: one file shared by all threads
  std::string directory;             // -D: one file per thread, DIR/gdsio.N
  int gpu = 0;                       // -d
  std::optional<int> numa_node;      // -n
  MemType mem_type = MemType::CudaMalloc;  // -m
  uint32_t threads = 1;              // -w
  uint64_t file_size = 0;            // -s, bytes (per file)
  uint64_t start_offset = 0;         // -o, bytes
  uint64_t io_size = 0;              // -i, bytes (ranges are expanded into one job per size)
  XferType xfer = XferType::CpuOnly; // -x
  IoPattern pattern = IoPattern::Read;  // -I
  std::optional<uint32_t> mixed_read_percent;  // -M: percent of ops that read
  double runtime_s = 0;              // -T: run for this long; 0 = one pass over the data
  uint64_t seed = 0;                 // -k
  bool unaligned_random = false;     // -U
  uint64_t random_alignment = 4096;  // -a, bytes
  bool fill_random = false;          // -R
  bool refill_every_write = false;   // -F
  bool skip_buffer_register = false; // -b
  bool verify = false;               // -V
  uint32_t batch_size = 0;           // -B (0 = the path's default)
  bool enable_nvlinks = false;       // -p
  bool odirect = true;               // -O 1 turns it off
  SubmitEngine engine = SubmitEngine::Psync;  // --engine
  uint32_t iodepth = 1;              // --iodepth (io_uring, and per-thread depth of async paths)
  double warmup_s = 0;               // --warmup
  uint32_t repeat = 1;               // --repeat
  bool allow_overwrite = false;      // --allow-overwrite
  bool require_gds = false;          // --require-gds
  std::string cufile_library;        // --cufile-lib ("" = default search, env GDSB_CUFILE_LIB)
  // gdsbench job-model extensions (job-file keys filelist, fsync, request_blocks, workload):
  std::string file_list;             // a text file naming the data files, one per line
                                     // (relative names: from the list's directory); threads
                                     // take them round-robin, each file read or written whole
  bool fsync = false;                // each thread fsyncs the files it wrote before its
                                     // measured interval ends (time to durable)
  uint32_t request_blocks = 1;       // I/Os per request: consecutive blocks of a thread form
                                     // one request, whose latency is first submit to last done
  std::string preset;                // the --workload preset that wrote this job ("" = none)
  bool naive_load = false;           // the framework-style naive load of the files (job key
                                     // naive_load=1; gdsb/gpu/naive_load.hpp), not the runner
  bool open_per_file = false;        // reads of a file list as a data loader does them (job key
                                     // open_per_file=1): each thread opens, registers (cuFile),
                                     // reads, deregisters and closes each file in turn inside
                                     // the measured interval; one file open per thread

  // The files the run touches: {file} for -f, the list's entries with file_list, DIR/gdsio.N
  // for each thread with -D. Throws RuntimeError when the list cannot be read.
  std::vector<std::string> resolved_files() const;
};

void to_json(nlohmann::json& j, const Workload& w);
void from_json(const nlohmann::json& j, Workload& w);

}  // namespace gdsb
