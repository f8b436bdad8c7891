// The GPU transfer paths of gdsio: -x 0/2/3/4/5/6/7 as TransferPath classes.
//
// Register them with add_gpu_paths(registry) (make_default_registry does, in every
// build). Every dependency is passed in GpuPathDeps, so tests run the same classes on the
// host-memory fake GPU, a fake cuFile and fixture files.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gdsb/gpu/cufile_api.hpp"
#include "gdsb/gpu/cufile_driver.hpp"
#include "gdsb/gpu/gpu_service.hpp"
#include "gdsb/gpu/staging_io.hpp"
#include "gdsb/transfer_path.hpp"

namespace gdsb::gpu {

// Where the evidence of the path used is read from (fixtures in tests).
struct EvidenceRoots {
  std::string nvfs_dir = "/proc/driver/nvidia-fs";
  std::string mountinfo = "/proc/self/mountinfo";
  std::string udev_root = "/run/udev";
  std::string tmp_dir;           // private cuFile log directory parent; "" = $TMPDIR or /tmp
  bool private_log = true;       // point cuFile's log at a private directory
  std::string log_level = "INFO";  // used unless cufile.json or CUFILE_LOGGING_LEVEL sets one
};

using CufileLoader = std::function<cufile::LoadResult(const Workload&)>;

// What a -x 5/6/7 completion waits for after cuFile reported it: Event (the default) only
// the request's own event (-x 5, -x 7) or batch status (-x 6); Device adds a device-wide
// synchronization (kCompletionSync's history below), which also waits for other threads'
// work. Environment variable GDSB_CUFILE_COMPLETION=event|device, so the GPU benchmark
// measures both in one build (bench/gpu-issue11.sh). Measured on the H100 (2026-11-23,
// docs/PERFORMANCE.md): -x 5 1 MiB reads with Event ran at 1.01 x -x 1 on the same disk
// (honest), with Device at 0.61; -x 6/-x 7 exceeded the disk in both modes (page cache,
// which CufileSession now detects), so the device sync bought nothing and cost 2-3.6x.
enum class CompletionWait : uint8_t { Device, Event };
// nullptr or "" -> Event; "device" / "event"; anything else is a UsageError naming the
// variable and the accepted values.
CompletionWait parse_completion_wait(const char* text);

// How -x 2/3/4 time the copy phase of an I/O (docs/gpu-paths.md, "Phases"): Events (the
// default) records a CUDA timing event before each copy, so the report has the DMA's own
// GPU time beside the host time the thread waited; Host keeps only the host clocks (one
// event record less per copy, to measure what the timing costs). Environment variable
// GDSB_COPY_TIMING=events|host.
enum class CopyTiming : uint8_t { Events, Host };
// nullptr or "" -> Events; "events" / "host"; anything else is a UsageError naming the
// variable and the accepted values.
CopyTiming parse_copy_timing(const char* text);

struct GpuPathDeps {
  std::shared_ptr<GpuService> service;
  CufileLoader load_cufile;
  StagingFactory staging;  // THE SEAM: storage I/O of -x 2/3/4 (see staging_io.hpp)
  EvidenceRoots roots;
  CompletionWait completion = CompletionWait::Event;  // -x 5/6/7
  CopyTiming copy_timing = CopyTiming::Events;        // -x 2/3/4
  // The cuFile driver, opened once for all the runs of the paths made from these deps
  // (copies share it): jobs on several GPUs run at the same time (cufile_driver.hpp).
  std::shared_ptr<CufileDrivers> cufile_drivers = std::make_shared<CufileDrivers>();
};

// CUDA service, dlopen of libcufile (workload.cufile_library, env GDSB_CUFILE_LIB, then
// libcufile.so.0; loaded once per library path), the engine's host I/O worker for staging (make_engine_staging_io).
GpuPathDeps default_gpu_path_deps();

std::unique_ptr<TransferPath> make_cpu_gpu_path(GpuPathDeps deps);          // -x 2
std::unique_ptr<TransferPath> make_cpu_cached_gpu_path(GpuPathDeps deps);   // -x 4
std::unique_ptr<TransferPath> make_cpu_async_gpu_path(GpuPathDeps deps);    // -x 3
std::unique_ptr<TransferPath> make_gpu_direct_path(GpuPathDeps deps);       // -x 0
std::unique_ptr<TransferPath> make_gpu_direct_async_path(GpuPathDeps deps); // -x 5
std::unique_ptr<TransferPath> make_gpu_batch_path(GpuPathDeps deps);        // -x 6
std::unique_ptr<TransferPath> make_gpu_batch_stream_path(GpuPathDeps deps); // -x 7

// Adds -x 0, 2, 3, 4, 5, 6, 7 with default_gpu_path_deps() (or the given deps). -x 4 is
// the project's only CPU_CACHED_GPU: page cache then a copy to the GPU when the service
// says a GPU is usable; otherwise its host part alone, reported as "page-cache (host
// only)" with a warning naming the service's reason (issue 2 needs -x 4 without a GPU).
// Adding the paths initialises nothing: the service probes CUDA on first use.
void add_gpu_paths(PathRegistry& registry);
void add_gpu_paths(PathRegistry& registry, const GpuPathDeps& deps);

// Completion of -x 5/6/7 requests includes a device-wide synchronization (kCompletionSync)
// unless GpuPathDeps::completion is CompletionWait::Event.
// Why: on the H100 test machine (cuFile 1.15 in compat mode) one-thread runs of -x 5/6/7
// measured 20-120 GiB/s, above the 51 GiB/s PCIe ceiling and far above the disk, while the
// disk statistics showed the whole file read during the pass: cuFile's completion (event
// after cuFileReadAsync, batch status COMPLETE) came before its internal GPU work, which
// then ran inside the next blocking CUDA call (our -V copies, outside the timed region).
// Waiting for the device before reporting a completion keeps that work inside the I/O's
// latency. (The effect of this synchronization was not yet re-measured there.)
inline constexpr bool kCompletionSync = true;

// Default I/O depth of the batch types when -B is not given.
inline constexpr uint32_t kDefaultBatchSize = 32;
// Chunk size of the -x 3 pipeline: an I/O larger than this is split into chunks whose
// copies overlap the storage I/O of the next chunk. Smaller I/Os are not split: their copies
// overlap the storage I/O of the next request (depth >= 2), and splitting a 1 MiB O_DIRECT
// read into smaller synchronous reads cost more storage latency than it hid copy time
// (measured on the GPU test machine, docs/PERFORMANCE.md).
inline constexpr std::size_t kAsyncChunkBytes = 1024 * 1024;

}  // namespace gdsb::gpu
