#include "worker_loop.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "gdsb/error.hpp"
#include "gdsb/verify.hpp"

namespace gdsb::detail {
namespace {

constexpr uint64_t kSecondNs = 1000000000ULL;

double seconds_of(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

void ThreadStats::reset() {
  histogram.reset();
  bytes = ops = read_ops = write_ops = end_ns = 0;
  seconds.clear();
  cpu_user_s = cpu_sys_s = 0;
}

ThreadLoop::ThreadLoop(const Workload& w, const OffsetPlan& plan, const std::string& path,
                       PathWorker& worker, LiveCounters& live)
    : w_(w),
      plan_(plan),
      gen_(plan),
      path_(path),
      worker_(worker),
      live_(live),
      depth_(worker.depth()),
      io_size_(static_cast<uint32_t>(w.io_size)),
      verify_(w.verify),
      fill_each_write_(w.verify || w.refill_every_write),
      read_percent_(w.mixed_read_percent),
      default_dir_(pattern_is_write(w.pattern) ? IoDir::Write : IoDir::Read),
      rng_(mix64(w.seed ^ (uint64_t{plan.stream} << 40) ^ 0x5eed)),
      random_fill_state_(mix64(w.seed + plan.stream)),
      free_slots_(depth_),
      inflight_(depth_),
      batch_(depth_),
      completions_(depth_),
      scratch_(io_size_) {
  // Buffers that are not refilled per write get their content once, here.
  const bool writes = default_dir_ == IoDir::Write || read_percent_.has_value();
  if (writes && !fill_each_write_) {
    for (uint32_t s = 0; s < depth_; ++s) {
      if (w.fill_random) {
        fill_random(scratch_, random_fill_state_);
      } else {
        fill_fixed(scratch_);
      }
      worker_.load_slot(s, scratch_);
    }
  }
}

void ThreadLoop::fill_for_write(uint32_t slot, uint64_t offset) {
  if (verify_) {
    fill_pattern(scratch_, offset, w_.seed);
  } else if (w_.fill_random) {
    fill_random(scratch_, random_fill_state_);
  } else {
    fill_fixed(scratch_);
  }
  worker_.load_slot(slot, scratch_);
}

uint32_t ThreadLoop::slot_of(const IoCompletion& c) const {
  const auto slot = static_cast<uint32_t>(c.tag & 0xffffffffU);
  if (slot >= depth_ || inflight_[slot].tag != c.tag) {
    throw RuntimeError("transfer path returned completion tag " + std::to_string(c.tag) +
                       ", which is not in flight (path bug)");
  }
  return slot;
}

void ThreadLoop::fail(const IoCompletion& c, uint32_t slot) const {
  const InFlight& f = inflight_[slot];
  const bool write = f.dir == IoDir::Write;
  const std::string where = path_ + " at offset " + std::to_string(f.offset);
  if (c.result < 0) {
    const int err = static_cast<int>(-c.result);
    std::string msg =
        std::string(write ? "write to " : "read from ") + where + " failed: " + std::strerror(err);
    if (err == ENOSPC) msg += " (the file system is full)";
    throw RuntimeError(msg);
  }
  throw RuntimeError(std::string(write ? "short write to " : "short read from ") + where + ": " +
                     std::to_string(c.result) + " of " + std::to_string(io_size_) +
                     " bytes (the file ends there; is it shorter than -o + -s?)");
}

void ThreadLoop::complete(const IoCompletion& c, uint64_t now, ThreadStats& stats) {
  const uint32_t slot = slot_of(c);
  if (c.result != static_cast<int64_t>(io_size_)) fail(c, slot);
  InFlight& f = inflight_[slot];
  f.tag = ~uint64_t{0};
  if (verify_ && f.dir == IoDir::Read) {
    worker_.read_slot(slot, scratch_);
    check_pattern(scratch_, f.offset, w_.seed, path_);
  }
  stats.histogram.record(now - f.start_ns);
  stats.bytes += io_size_;
  ++stats.ops;
  if (f.dir == IoDir::Read) {
    ++stats.read_ops;
  } else {
    ++stats.write_ops;
  }
  if (now >= next_second_ns_) {
    do {
      stats.seconds.push_back(current_second_);
      current_second_ = {};
      next_second_ns_ += kSecondNs;
    } while (now >= next_second_ns_);
  }
  current_second_.bytes += io_size_;
  ++current_second_.ops;
}

void ThreadLoop::run(uint64_t t0_ns, uint64_t deadline_ns, const StopSignals& stop,
                     ThreadStats& stats) {
  stats.reset();
  stats.seconds.reserve(deadline_ns > t0_ns ? (deadline_ns - t0_ns) / kSecondNs + 2 : 64);
  live_.bytes.store(0, std::memory_order_relaxed);
  live_.ops.store(0, std::memory_order_relaxed);
  rusage ru0{};
  getrusage(RUSAGE_THREAD, &ru0);
  next_second_ns_ = t0_ns + kSecondNs;
  current_second_ = {};
  gen_.start_pass(0);
  const bool time_based = deadline_ns != 0;
  uint32_t free_count = depth_;
  for (uint32_t s = 0; s < depth_; ++s) free_slots_[s] = depth_ - 1 - s;
  uint32_t in_flight = 0;
  bool exhausted = false;
  uint64_t now = now_ns();
  while (true) {
    if (!exhausted && (stop.requested() || (time_based && now >= deadline_ns))) exhausted = true;
    uint32_t n = 0;
    bool filled = false;
    while (!exhausted && free_count > 0) {
      uint64_t offset = 0;
      if (!gen_.next(offset)) {
        if (!time_based || gen_.blocks_per_pass() == 0) {
          exhausted = true;
          break;
        }
        gen_.start_pass(gen_.pass() + 1);
        gen_.next(offset);
      }
      const uint32_t slot = free_slots_[--free_count];
      IoDir dir = default_dir_;
      if (read_percent_) {
        rng_ ^= rng_ << 13;  // xorshift64: cheap and good enough for a read/write coin
        rng_ ^= rng_ >> 7;
        rng_ ^= rng_ << 17;
        dir = rng_ % 100 < *read_percent_ ? IoDir::Read : IoDir::Write;
      }
      if (dir == IoDir::Write && fill_each_write_) {
        fill_for_write(slot, offset);
        filled = true;
      }
      const uint64_t tag = (++sequence_ << 32) | slot;
      batch_[n++] = IoRequest{tag, plan_.region.file, offset, io_size_, dir, slot};
      inflight_[slot].tag = tag;
      inflight_[slot].offset = offset;
      inflight_[slot].dir = dir;
    }
    if (n > 0) {
      if (filled) now = now_ns();
      for (uint32_t i = 0; i < n; ++i) inflight_[batch_[i].slot].start_ns = now;
      worker_.submit(std::span<const IoRequest>(batch_.data(), n));
      in_flight += n;
    }
    if (in_flight == 0) break;
    const std::size_t got = worker_.reap(completions_, 1);
    now = now_ns();
    for (std::size_t i = 0; i < got; ++i) {
      complete(completions_[i], now, stats);
      free_slots_[free_count++] = static_cast<uint32_t>(completions_[i].tag & 0xffffffffU);
    }
    in_flight -= static_cast<uint32_t>(got);
    live_.bytes.store(stats.bytes, std::memory_order_relaxed);
    live_.ops.store(stats.ops, std::memory_order_relaxed);
  }
  stats.end_ns = now;
  if (current_second_.ops > 0) stats.seconds.push_back(current_second_);
  written_all_ = gen_.pass() > 0 || gen_.issued_in_pass() == gen_.blocks_per_pass();
  written_prefix_ = gen_.issued_in_pass();
  rusage ru1{};
  getrusage(RUSAGE_THREAD, &ru1);
  stats.cpu_user_s = seconds_of(ru1.ru_utime) - seconds_of(ru0.ru_utime);
  stats.cpu_sys_s = seconds_of(ru1.ru_stime) - seconds_of(ru0.ru_stime);
}

void ThreadLoop::verify_written(const StopSignals& stop) {
  // Every block of pass 0 was written if any pass finished; otherwise its first blocks.
  OffsetGenerator gen(plan_);
  const uint64_t blocks = written_all_ ? gen.blocks_per_pass() : written_prefix_;
  uint64_t issued = 0;
  uint32_t free_count = depth_;
  for (uint32_t s = 0; s < depth_; ++s) free_slots_[s] = s;
  uint32_t in_flight = 0;
  while (true) {
    uint32_t n = 0;
    uint64_t offset = 0;
    while (free_count > 0 && issued < blocks && !stop.requested() && gen.next(offset)) {
      const uint32_t slot = free_slots_[--free_count];
      const uint64_t tag = (++sequence_ << 32) | slot;
      batch_[n++] = IoRequest{tag, plan_.region.file, offset, io_size_, IoDir::Read, slot};
      inflight_[slot] = {tag, 0, offset, IoDir::Read};
      ++issued;
    }
    if (n > 0) worker_.submit(std::span<const IoRequest>(batch_.data(), n));
    in_flight += n;
    if (in_flight == 0) return;
    const std::size_t got = worker_.reap(completions_, 1);
    for (std::size_t i = 0; i < got; ++i) {
      const IoCompletion& c = completions_[i];
      const uint32_t slot = slot_of(c);
      if (c.result != static_cast<int64_t>(io_size_)) fail(c, slot);
      inflight_[slot].tag = ~uint64_t{0};
      worker_.read_slot(slot, scratch_);
      check_pattern(scratch_, inflight_[slot].offset, w_.seed, path_);
      free_slots_[free_count++] = slot;
    }
    in_flight -= static_cast<uint32_t>(got);
  }
}

}  // namespace gdsb::detail
