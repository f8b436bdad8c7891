// Per-phase timing of the bounce-buffer paths (-x 2/3/4): how long each I/O spent in its
// storage I/O, in its copy to or from the GPU (host clock and, where the GPU service can
// time events, the DMA itself) and, for -x 3, blocked on a copy. One recorder per
// PathWorker, written only by its thread: recording is the histograms' O(1) increments, no
// allocation or lock. The runner resets it when the measured interval starts, merges the
// threads' recorders when it ends and stores the summary in Measurement::phases.
#pragma once

#include <cstdint>

#include "gdsb/histogram.hpp"
#include "gdsb/result.hpp"

namespace gdsb {

class PhaseRecorder {
 public:
  // synchronous: storage then copy, one I/O at a time per thread (-x 2/-x 4 at depth 1),
  // so the summary can derive the synchronous ceiling.
  explicit PhaseRecorder(bool synchronous) : synchronous_(synchronous) {}

  void storage(uint64_t ns) noexcept { storage_.record(ns); }
  void copy(uint64_t ns) noexcept { copy_.record(ns); }
  void dma(uint64_t ns) noexcept { dma_.record(ns); }
  void wait(uint64_t ns) noexcept { wait_.record(ns); }

  bool synchronous() const noexcept { return synchronous_; }
  void reset() noexcept;
  void merge(const PhaseRecorder& other) noexcept;
  // threads and the measured bytes/ops give the derived rates of IoPhases.
  IoPhases summary(uint32_t threads, const Measurement& m) const;

 private:
  bool synchronous_;
  LatencyHistogram storage_;
  LatencyHistogram copy_;
  LatencyHistogram dma_;
  LatencyHistogram wait_;
};

}  // namespace gdsb
