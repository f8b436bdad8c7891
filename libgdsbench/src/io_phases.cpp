#include "gdsb/io_phases.hpp"

namespace gdsb {
namespace {

PhaseTime phase_time(const LatencyHistogram& h) {
  PhaseTime p;
  p.count = h.count();
  if (p.count > 0) p.us = h.summary();
  return p;
}

}  // namespace

void PhaseRecorder::reset() noexcept {
  storage_.reset();
  copy_.reset();
  dma_.reset();
  wait_.reset();
}

void PhaseRecorder::merge(const PhaseRecorder& other) noexcept {
  storage_.merge(other.storage_);
  copy_.merge(other.copy_);
  dma_.merge(other.dma_);
  wait_.merge(other.wait_);
  synchronous_ = synchronous_ && other.synchronous_;
}

IoPhases PhaseRecorder::summary(uint32_t threads, const Measurement& m) const {
  IoPhases p;
  p.storage = phase_time(storage_);
  p.copy = phase_time(copy_);
  p.dma = phase_time(dma_);
  p.wait = phase_time(wait_);
  const double storage_s = storage_.mean_ns() * 1e-9;
  const double copy_s = copy_.mean_ns() * 1e-9;
  if (synchronous_ && m.ops > 0 && storage_s > 0) {
    const double bytes_per_io = static_cast<double>(m.bytes) / static_cast<double>(m.ops);
    p.storage_gib_s = static_cast<double>(threads) * bytes_per_io / storage_s / (1024.0 * 1024.0 * 1024.0);
    p.sync_ceiling_gib_s = p.storage_gib_s * storage_s / (storage_s + copy_s);
  }
  return p;
}

}  // namespace gdsb
