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

// How requests reach the kernel: Batch (the default: every request queued since the last
// enter goes in one io_uring_enter) or Each (one io_uring_enter per request, as fio does
// with its default iodepth_batch_submit=1). GDSB_IO_URING_SUBMIT=batch|each; nullptr or
// "" -> Batch.
enum class UringSubmit { Batch, Each };
UringSubmit parse_uring_submit(const char* text);

std::unique_ptr<HostIoWorker> make_io_uring_worker(const HostIoOptions& options,
                                                   const FileSet& files);

}  // namespace gdsb::detail
