// Internal: the io_uring HostIoWorker (src/io_uring_worker.cpp).
#pragma once

#include <memory>

#include "gdsb/host_io.hpp"

namespace gdsb::detail {

// How a single-issuer ring runs completion task work: Defer (also
// IORING_SETUP_DEFER_TASKRUN, as fio 3.42 sets up its rings; the default) or Coop
// (IORING_SETUP_COOP_TASKRUN only).
// Sqpoll: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL, which the
// kernel does not combine with the task-run flags), so submitting needs no syscall.
// Chosen with GDSB_IO_URING_TASKRUN=coop|defer|sqpoll so a benchmark can compare them in
// one build (bench/gpu-issue11.sh); nullptr or "" -> Defer, anything else -> UsageError.
enum class UringTaskrun { Coop, Defer, Sqpoll };
UringTaskrun parse_uring_taskrun(const char* text);

// Whether a worker's sleep for completions counts as I/O wait: NoIowait (the default,
// IORING_ENTER_NO_IOWAIT where the kernel offers it, as fio) or Iowait.
// GDSB_IO_URING_WAIT=no-iowait|iowait; nullptr or "" -> NoIowait.
enum class UringWait { NoIowait, Iowait };
UringWait parse_uring_wait(const char* text);

// How requests reach the kernel: Each (the default: one io_uring_enter per request, as
// fio does with its default iodepth_batch_submit=1) or Batch (every request queued since
// the last enter in one io_uring_enter). On the virtio disk of the H100 machine, batches
// drew twice fio's interrupts per I/O and ran at 0.92 x fio (median of 21 rounds in three
// calls) against 0.99 for Each; on tmpfs both ran above fio (docs/PERFORMANCE.md).
// GDSB_IO_URING_SUBMIT=each|batch; nullptr or "" -> Each.
enum class UringSubmit { Batch, Each };
UringSubmit parse_uring_submit(const char* text);

std::unique_ptr<HostIoWorker> make_io_uring_worker(const HostIoOptions& options,
                                                   const FileSet& files);

}  // namespace gdsb::detail
