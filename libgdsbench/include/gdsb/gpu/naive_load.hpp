// The naive checkpoint load a framework does without GDS (torch.load(f) then .cuda(), or
// safetensors' CPU load then .to("cuda")): each whole shard read with buffered read(2)
// through the page cache into ordinary pageable memory (new[], neither pinned nor
// registered), then one synchronous pageable copy per tensor to the GPU, which CUDA
// stages through its own pinned buffers. It is a model of a framework, not a transfer
// path: it owns its loop (whole files, per-tensor copies), so the runner's slot model
// does not fit. A job runs it with the job-file key naive_load=1 (docs/gdsb-io.md).
#pragma once

#include <atomic>
#include <cstdint>

#include "gdsb/gpu/gpu_service.hpp"
#include "gdsb/result.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::gpu {

struct NaiveLoadFacts {
  uint64_t files = 0;
  uint64_t bytes_read = 0;  // whole files, headers included, by read(2)
  uint64_t read_calls = 0;
  bool buffered = true;       // every descriptor read had no O_DIRECT (fcntl F_GETFL)
  uint64_t copies = 0;        // copy_pageable() calls to the GPU
  uint64_t bytes_copied = 0;  // tensor bytes (= the run's bytes)
  uint64_t tensors = 0;       // tensors found in safetensors headers
  uint64_t whole_files = 0;   // files that were not safetensors: copied as one block from -o
  uint64_t file_bytes = 0;    // sizes of the files together
  // Page-cache bytes of the files just before the load (mmap + mincore, the helper the
  // cuFile paths use); cached_known false when the kernel could not tell for a file.
  uint64_t cached_before = 0;
  bool cached_known = true;
  bool gpu = true;  // false: no GPU usable, only the reads into pageable memory ran
};

// Adds f to into: counts summed, flags (buffered, cached_known, gpu) true only if both are.
void accumulate(NaiveLoadFacts& into, const NaiveLoadFacts& f);

struct NaiveLoad {
  // status, reason, bytes (tensor bytes), t0/end on the wall clock, evidence; an op is one
  // file loaded (read whole and its tensors copied), its latency that file's time.
  RunResult run;
  NaiveLoadFacts facts;
};

// Loads the files of w.file_list (round-robin over w.threads threads) to GPU w.gpu. Device
// memory for every file is allocated before the clock starts and held to the end (the GPU
// holds the whole checkpoint); with w.verify the GPU's bytes are copied back after the
// clock and checked against the -V pattern (tensor byte at file offset o holds the pattern
// of o). Without a usable GPU (svc.probe()) only the reads run, reported as such.
// Throws UsageError for a job it cannot model (no file list, not a read).
NaiveLoad naive_load(GpuService& svc, const Workload& w, const std::atomic<bool>* stop = nullptr);

}  // namespace gdsb::gpu
