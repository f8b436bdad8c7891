// Plain, immutable results of one job. The runner produces them; reporters only read.
// Units: bytes and seconds; throughput in GiB/s (base 1024, as gdsio), latency in
// microseconds. docs/metrics.md defines every field once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gdsb/workload.hpp"

namespace gdsb {

// PageCache: the run measured, but the file system kept the data in memory whatever the
// advice (tmpfs, ramfs): its figures are the memory's, shown but kept out of every
// ceiling, comparison and verdict, like any status other than Ok.
enum class RunStatus { Ok, Waived, Failed, PageCache };
std::string_view run_status_name(RunStatus s);  // "ok", "waived", "failed", "page cache"

struct LatencySummary {
  double mean_us = 0, min_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0,
         p9999_us = 0, max_us = 0;
};

// CPU time consumed by the process during the measured interval, as a percentage of the
// whole machine (all online cores = 100%).
// Per I/O: the worker threads' CPU microseconds per completed I/O (fio's usr/sys per job,
// comparable across thread counts). process_*: every thread of the process over the same
// interval (CUDA's and cuFile's helper threads too), percent of the machine.
struct CpuUsage {
  double user_percent = 0;
  double sys_percent = 0;
  double user_us_per_io = 0;
  double sys_us_per_io = 0;
  double process_user_percent = 0;
  double process_sys_percent = 0;
};

// One point per second of the measured interval (the last one may be shorter).
struct TimePoint {
  double t_end_s = 0;  // seconds since the measured interval began
  uint64_t bytes = 0;
  uint64_t ops = 0;
};

// A histogram bucket, as stored in reports: latencies in [lower_us, upper_us).
struct HistogramBucket {
  double lower_us = 0;
  double upper_us = 0;
  uint64_t count = 0;
};

// The data path that really ran. The report stores its name (path_used_name); a reader
// of a report compares this enum, never the text (path_used_of).
enum class PathUsed {
  Unknown,                     // empty, or a name this version does not know
  Posix,                       // "posix": O_DIRECT storage I/O (with -O 1: buffered)
  PageCache,                   // "page-cache": buffered storage I/O, then the GPU copy
  PageCacheHostOnly,           // "page-cache (host only)": -x 4 without a usable GPU
  PageCachePageable,           // "page-cache-pageable": naive load through pageable memory
  PageCachePageableHostOnly,   // "page-cache-pageable (host only)"
  GdsNvfs,                     // "gds-nvfs": GDS peer-to-peer through nvidia-fs
  GdsP2pdma,                   // "gds-p2pdma": GDS peer-to-peer through kernel P2PDMA
  Compat,                      // "compat": cuFile's POSIX fallback through its bounce buffers
};
std::string_view path_used_name(PathUsed p);   // "" for Unknown
PathUsed path_used_of(std::string_view name);  // Unknown for "" and unknown names
bool path_is_gds(PathUsed p);                  // GdsNvfs or GdsP2pdma
bool path_through_page_cache(PathUsed p);      // the PageCache* kinds

// Which data path really ran, and how that was established (issue 3: cuFile compat
// detection). CPU paths report "posix" or "page-cache".
struct PathReport {
  std::string path_used;               // path_used_name() of a PathUsed
  std::vector<std::string> evidence;   // how path_used was established
  std::vector<std::string> warnings;   // printed after the gdsio line
  // The PCI bus id of the GPU the run used ("0000:19:00.0", lower case, as
  // cudaDeviceGetPCIBusId), so a reader maps the CUDA index -d to the GPU whatever
  // CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER did; empty for CPU-only runs and older files.
  std::string gpu_pci_bus_id;
  // The one fact that decided path_used, for cuFile runs (issue 43): "nvidia-fs counters
  // moved ...", "cuFileDriverGetProperties: nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED
  // set, nvidia-fs not loaded", or why compat; empty for other paths and older files.
  std::string decided_by;
};

// Bounce-buffer paths (-x 2/3/4): where the time of each I/O went, over the measured
// interval (docs/gpu-paths.md, "Phases"; docs/metrics.md). Per-I/O durations in
// microseconds; count = I/Os that had the phase (a read that returned 0 bytes copies nothing).
struct PhaseTime {
  uint64_t count = 0;
  LatencySummary us;
};
struct IoPhases {
  PhaseTime storage;  // storage I/O into or out of the host staging buffer (host clock)
  PhaseTime copy;     // host clock: copy queued -> the thread saw it finished
  PhaseTime dma;      // CUDA events around the copy on the worker's stream (count 0: not timed)
  PhaseTime wait;     // -x 3: the thread blocked on a copy, no storage I/O in flight
  // -x 2/-x 4 at --iodepth 1 (storage, then copy, one after the other), else 0:
  // storage_gib_s = threads x mean bytes per I/O / mean storage time (the rate without
  // copies); sync_ceiling_gib_s = storage_gib_s x storage / (storage + copy).
  double storage_gib_s = 0;
  double sync_ceiling_gib_s = 0;
};

// Workload::open_per_file: each file's own costs inside the measured interval, one sample
// per file read whole: open(2) (the descriptor pointed at it included), the path's
// registration of it (cuFile: cuFileHandleRegister; nothing for the other paths), its
// reads (first submit to last completion), deregistration, and close(2) (its last
// reference dropped). The loader's figure (files/s) is files / Measurement::seconds.
struct PerFileCosts {
  uint64_t files = 0;
  LatencySummary open, registration, read, deregistration, close;
};

struct Measurement {
  uint64_t bytes = 0;
  uint64_t ops = 0;
  uint64_t read_ops = 0;
  uint64_t write_ops = 0;
  double seconds = 0;
  double throughput_gib_s = 0;  // bytes / seconds / 2^30
  double iops = 0;
  LatencySummary latency;
  CpuUsage cpu;
  std::vector<TimePoint> timeseries;
  std::vector<HistogramBucket> histogram;  // non-empty buckets only
  // With request_blocks > 1: requests completed and their latency (first submit to last
  // completion of the request's blocks).
  uint64_t requests = 0;
  LatencySummary request_latency;
  double fsync_s = 0;       // with fsync: the longest thread's fsync, inside `seconds`
  double t0_unix_s = 0;     // wall-clock start and end of the measured interval (CLOCK_REALTIME),
  double end_unix_s = 0;    // so that jobs run together can be put on one time line
  std::optional<IoPhases> phases;  // bounce-buffer paths only
  std::optional<PerFileCosts> per_file;  // open_per_file runs only
};

// Opening the run's files and starting the path, measured before the I/O: what a loader
// pays per file (open; for cuFile types also the handle registration inside path start).
struct SetupCost {
  uint64_t files = 0;
  LatencySummary open_latency;  // per open(2)
  double open_s = 0;            // all opens together
  double path_start_s = 0;      // TransferPath::start: driver open, buffer and handle registration
};

// Where a run's data lay: the file system holding its file (or -D directory), as
// /proc/mounts names it, and the file's device number. gdsb-io fills it when it writes a
// document, gdsb-cluster for its --io-dir (gdsb/topo/run_storage.hpp); the runner never does.
// A history keys a series by it (docs/gdsb-report.md, Series): another file system, another series.
struct RunStorage {
  std::string fs_type;      // "ext4", "xfs", "nfs4", "lustre"; "" for a raw block device
  std::string source;       // the mount's source: "/dev/nvme0n1p1", "10.0.0.5:/export"; a raw
                            // block device's own path
  std::string mount_point;  // "/mnt/data"; "" for a raw block device
  std::string dev;          // "259:1": major:minor of the file's st_dev (a block device's st_rdev)
};

struct RunResult {
  Workload workload;
  RunStatus status = RunStatus::Ok;
  std::string reason;              // why waived or failed; empty when ok
  Measurement result;              // the reported figures (median repetition with --repeat)
  std::vector<Measurement> repetitions;  // every repetition, when repeat > 1
  PathReport path;
  SetupCost setup;
  uint64_t verify_errors = 0;
  bool interrupted = false;
  // Share (0..1) of the bytes the run reads that sat in the page cache when it began
  // (mincore, before the path started); none for runs that only write.
  std::optional<double> page_cache_resident_at_start;
  std::string started_at;          // ISO 8601 UTC
  std::string ended_at;
  std::optional<RunStorage> storage;  // none: no file, unknown, or a document of an older version
};

void to_json(nlohmann::json& j, const RunResult& r);
void from_json(const nlohmann::json& j, RunResult& r);

}  // namespace gdsb
