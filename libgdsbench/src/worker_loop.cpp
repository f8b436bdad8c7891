#include "worker_loop.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gdsb/error.hpp"
#include "gdsb/page_cache.hpp"
#include "gdsb/verify.hpp"

namespace gdsb::detail {
namespace {

constexpr uint64_t kSecondNs = 1000000000ULL;

double seconds_of(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

void FileCostHistograms::merge(const FileCostHistograms& o) {
  open.merge(o.open);
  registration.merge(o.registration);
  read.merge(o.read);
  deregistration.merge(o.deregistration);
  close.merge(o.close);
}

void FileCostHistograms::reset() {
  open.reset();
  registration.reset();
  read.reset();
  deregistration.reset();
  close.reset();
}

PerFileCosts FileCostHistograms::summary() const {
  return {read.count(), open.summary(), registration.summary(), read.summary(),
          deregistration.summary(), close.summary()};
}

void ThreadStats::reset() {
  if (file_costs) file_costs->reset();
  histogram.reset();
  requests.reset();
  bytes = ops = read_ops = write_ops = end_ns = fsync_ns = 0;
  seconds.clear();
  cpu_user_s = cpu_sys_s = 0;
  phases.reset();
}

ThreadLoop::ThreadLoop(const Workload& w, std::vector<OffsetPlan> plans, const FileSet& files,
                       PathWorker& worker, LiveCounters& live)
    : w_(w),
      plans_(std::move(plans)),
      gen_(plans_.at(0)),
      paths_(files.paths),
      fds_(files.fds),
      per_file_(files.open_per_file),
      odirect_(files.odirect),
      idle_fd_(files.idle_fd),
      worker_(worker),
      live_(live),
      depth_(worker.depth()),
      io_size_(static_cast<uint32_t>(w.io_size)),
      verify_(w.verify),
      fill_each_write_(w.verify || w.refill_every_write),
      read_percent_(w.mixed_read_percent),
      default_dir_(pattern_is_write(w.pattern) ? IoDir::Write : IoDir::Read),
      rng_(mix64(w.seed ^ (uint64_t{plans_[0].stream} << 40) ^ 0x5eed)),
      random_fill_state_(mix64(w.seed + plans_[0].stream)),
      free_slots_(depth_),
      inflight_(depth_),
      batch_(depth_),
      completions_(depth_),
      scratch_(io_size_),
      request_blocks_(w.request_blocks == 0 ? 1 : w.request_blocks),
      open_requests_(depth_ + 2) {
  for (const OffsetPlan& p : plans_) blocks_per_pass_ += OffsetGenerator(p).blocks_per_pass();
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
  const std::string where = paths_.at(f.file) + " at offset " + std::to_string(f.offset);
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
  if (f.pass != pass_ && f.dir == IoDir::Read)  // in flight across the pass's drop
    (void)drop_from_page_cache(fds_.at(f.file), f.offset, io_size_, /*sync=*/false);
  if (verify_ && f.dir == IoDir::Read) {
    worker_.read_slot(slot, scratch_);
    check_pattern(scratch_, f.offset, w_.seed, paths_.at(f.file));
  }
  stats.histogram.record(now - f.start_ns);
  if (request_blocks_ > 1) {
    OpenRequest& r = open_requests_[f.request % open_requests_.size()];
    if (--r.remaining == 0) stats.requests.record(now - r.start_ns);
  }
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

void ThreadLoop::start_pass(uint64_t pass) {
  pass_ = pass;
  issued_in_pass_ = 0;
  current_ = 0;
  gen_ = OffsetGenerator(plans_[0]);
  gen_.start_pass(pass);
}

void ThreadLoop::drop_read_regions() const {
  if (default_dir_ != IoDir::Read && !read_percent_) return;
  for (const OffsetPlan& p : plans_) {
    // open_per_file: no file is open between files; each is opened for the drop.
    const int fd = per_file_ ? ::open(paths_.at(p.region.file).c_str(), O_RDONLY | O_CLOEXEC)
                             : fds_.at(p.region.file);
    (void)drop_from_page_cache(fd, p.region.begin, p.region.end - p.region.begin, /*sync=*/false);
    if (per_file_ && fd >= 0) ::close(fd);
  }
}

void ThreadLoop::open_file(uint32_t file) {
  const std::string& path = paths_.at(file);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (odirect_ ? O_DIRECT : 0));
  if (fd < 0) {
    throw RuntimeError("cannot open " + path + " for reading: " + std::strerror(errno) +
                       (errno == EMFILE ? " (the descriptor limit, ulimit -n, is reached)" : ""));
  }
  const bool ok = ::dup3(fd, fds_.at(file), O_CLOEXEC) >= 0;
  const int err = errno;
  ::close(fd);  // the thread's number holds the file now
  if (!ok) throw RuntimeError("cannot give " + path + " its thread's descriptor: " + std::strerror(err));
}

uint64_t ThreadLoop::run_per_file(uint64_t deadline_ns, const StopSignals& stop, ThreadStats& stats) {
  if (!stats.file_costs) stats.file_costs = std::make_unique<FileCostHistograms>();
  FileCostHistograms& h = *stats.file_costs;
  const bool time_based = deadline_ns != 0;
  uint64_t now = now_ns();
  while (true) {
    for (current_ = 0; current_ < plans_.size(); ++current_) {
      if (stop.requested() || (time_based && now >= deadline_ns)) return now;
      const Region& region = plans_[current_].region;
      gen_ = OffsetGenerator(plans_[current_]);
      gen_.start_pass(pass_);
      const uint64_t t_open = now_ns();
      open_file(region.file);
      const uint64_t t_register = now_ns();
      h.open.record(t_register - t_open);
      worker_.register_file(region.file);
      const uint64_t t_read = now_ns();
      h.registration.record(t_read - t_register);
      now = pump(deadline_ns, stop, stats);
      h.read.record(now - t_read);
      // A buffered read (-x 4, -O 1) leaves the file in the page cache, and a further pass
      // must find none of it there (O_DIRECT reads leave nothing: the runner drops the
      // files once at the end, for a path that read through the cache after all).
      if (!odirect_ || time_based)
        (void)drop_from_page_cache(fds_[region.file], region.begin, region.end - region.begin, false);
      const uint64_t t_deregister = now_ns();
      worker_.deregister_file(region.file);
      const uint64_t t_close = now_ns();
      h.deregistration.record(t_close - t_deregister);
      // The file's last reference goes: its close. The number stays the thread's.
      if (::dup3(idle_fd_, fds_[region.file], O_CLOEXEC) < 0) {
        throw RuntimeError("cannot close " + paths_.at(region.file) + ": " + std::strerror(errno));
      }
      now = now_ns();
      h.close.record(now - t_close);
    }
    if (!time_based || blocks_per_pass_ == 0) return now;
    start_pass(pass_ + 1);
  }
}

bool ThreadLoop::next_offset(uint32_t& file, uint64_t& offset) {
  while (!gen_.next(offset)) {
    if (per_file_ || current_ + 1 >= plans_.size()) return false;  // per file: the caller moves on
    gen_ = OffsetGenerator(plans_[++current_]);
    gen_.start_pass(pass_);
  }
  file = plans_[current_].region.file;
  ++issued_in_pass_;
  return true;
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
  start_pass(0);
  ops_issued_ = 0;
  const uint64_t now = per_file_ ? run_per_file(deadline_ns, stop, stats) : pump(deadline_ns, stop, stats);
  stats.end_ns = now;
  if (current_second_.ops > 0) stats.seconds.push_back(current_second_);
  written_all_ = pass_ > 0 || issued_in_pass_ == blocks_per_pass_;
  written_prefix_ = issued_in_pass_;
  rusage ru1{};
  getrusage(RUSAGE_THREAD, &ru1);
  stats.cpu_user_s = seconds_of(ru1.ru_utime) - seconds_of(ru0.ru_utime);
  stats.cpu_sys_s = seconds_of(ru1.ru_stime) - seconds_of(ru0.ru_stime);
}

uint64_t ThreadLoop::pump(uint64_t deadline_ns, const StopSignals& stop, ThreadStats& stats) {
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
      uint32_t file = 0;
      if (!next_offset(file, offset)) {
        if (per_file_ || !time_based || blocks_per_pass_ == 0) {
          exhausted = true;
          break;
        }
        drop_read_regions();  // the next pass must not find the last one in the cache
        start_pass(pass_ + 1);
        next_offset(file, offset);
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
      batch_[n++] = IoRequest{tag, file, offset, io_size_, dir, slot};
      const uint64_t request = ops_issued_++ / request_blocks_;
      inflight_[slot].tag = tag;
      inflight_[slot].offset = offset;
      inflight_[slot].file = file;
      inflight_[slot].request = request;
      inflight_[slot].dir = dir;
      inflight_[slot].pass = pass_;
    }
    if (n > 0) {
      if (filled) now = now_ns();
      for (uint32_t i = 0; i < n; ++i) {
        InFlight& f = inflight_[batch_[i].slot];
        f.start_ns = now;
        OpenRequest& r = open_requests_[f.request % open_requests_.size()];
        if (request_blocks_ > 1 && (ops_issued_ - n + i) % request_blocks_ == 0) {
          r.start_ns = now;
          r.remaining = request_blocks_;
        }
      }
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
  return now;
}

void ThreadLoop::verify_written(const StopSignals& stop) {
  // Every block of pass 0 was written if any pass finished; otherwise its first blocks.
  const uint64_t blocks = written_all_ ? blocks_per_pass_ : written_prefix_;
  start_pass(0);
  uint64_t issued = 0;
  uint32_t free_count = depth_;
  for (uint32_t s = 0; s < depth_; ++s) free_slots_[s] = s;
  uint32_t in_flight = 0;
  while (true) {
    uint32_t n = 0;
    uint64_t offset = 0;
    uint32_t file = 0;
    while (free_count > 0 && issued < blocks && !stop.requested() && next_offset(file, offset)) {
      const uint32_t slot = free_slots_[--free_count];
      const uint64_t tag = (++sequence_ << 32) | slot;
      batch_[n++] = IoRequest{tag, file, offset, io_size_, IoDir::Read, slot};
      inflight_[slot] = {tag, 0, offset, file, 0, IoDir::Read};
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
      check_pattern(scratch_, inflight_[slot].offset, w_.seed, paths_.at(inflight_[slot].file));
      free_slots_[free_count++] = slot;
    }
    in_flight -= static_cast<uint32_t>(got);
  }
}

}  // namespace gdsb::detail
