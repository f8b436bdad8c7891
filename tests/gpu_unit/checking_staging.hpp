// A StagingIo wrapper for tests: delegates to the engine staging I/O and, at each storage
// submission, records whether an async copy was still pending (overlap happened) and
// whether the staging bytes about to be used were still being copied (a hazard).
#pragma once

#include <cerrno>
#include <chrono>
#include <memory>
#include <thread>

#include "gdsb/gpu/fake_gpu_service.hpp"
#include <string>

#include "gdsb/gpu/staging_io.hpp"

namespace gdsb::gpu::testing {

struct StagingProbe {
  uint64_t submits = 0;
  uint64_t submits_while_copy_pending = 0;  // storage I/O overlapped a copy
  uint64_t hazards = 0;                     // staging bytes in use by a pending copy
  int64_t fail_at = -1;                     // the n-th storage I/O completes with -EIO
  uint32_t max_in_flight = 0;
  std::chrono::microseconds submit_delay{0};  // each storage I/O takes at least this long
};

class CheckingStaging final : public StagingIo {
 public:
  CheckingStaging(std::unique_ptr<StagingIo> inner, FakeGpuService& gpu, StagingProbe& probe)
      : inner_(std::move(inner)), gpu_(gpu), probe_(probe) {}
  uint32_t depth() const override { return inner_->depth(); }
  std::size_t slot_bytes() const override { return inner_->slot_bytes(); }
  std::byte* slot(uint32_t i) override { return inner_->slot(i); }
  uint32_t in_flight() const override { return inner_->in_flight(); }
  std::string describe() const override { return "checked " + inner_->describe(); }
  void submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      if (probe_.submit_delay.count() > 0) std::this_thread::sleep_for(probe_.submit_delay);
      if (gpu_.pending_async_copies() > 0) ++probe_.submits_while_copy_pending;
      if (gpu_.host_range_busy(slot(r.slot), r.length)) ++probe_.hazards;
      if (probe_.fail_at >= 0 && probe_.submits == static_cast<uint64_t>(probe_.fail_at)) {
        failed_.push_back(r.tag);
      } else {
        inner_->submit(std::span<const IoRequest>(&r, 1));
      }
      ++probe_.submits;
    }
    probe_.max_in_flight = std::max(probe_.max_in_flight, in_flight());
  }
  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    std::size_t n = 0;
    while (!failed_.empty() && n < out.size()) {
      out[n++] = IoCompletion{failed_.back(), -EIO};
      failed_.pop_back();
    }
    return n + inner_->reap(out.subspan(n), min_complete > n ? min_complete - n : 0);
  }

 private:
  std::unique_ptr<StagingIo> inner_;
  FakeGpuService& gpu_;
  StagingProbe& probe_;
  std::vector<uint64_t> failed_;
};

}  // namespace gdsb::gpu::testing
