// Internal: what one runner thread does with its PathWorker. The hot loop keeps to plain
// per-thread state: no allocation, no locks, one clock read per batch of completions
// (and one per batch of submissions only when buffers were filled before it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/histogram.hpp"
#include "gdsb/io_phases.hpp"
#include "gdsb/offsets.hpp"
#include "gdsb/transfer_path.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::detail {

inline uint64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// Wall-clock seconds since the epoch (CLOCK_REALTIME): a result's t0_unix_s/end_unix_s.
inline double unix_now_s() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Read by the progress monitor while the owner thread writes (relaxed stores only).
struct alignas(64) LiveCounters {
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> ops{0};
};

struct SecondBucket {
  uint64_t bytes = 0;
  uint64_t ops = 0;
};

// Workload::open_per_file: one sample per file of each of its costs (PerFileCosts).
struct FileCostHistograms {
  LatencyHistogram open, registration, read, deregistration, close;
  void merge(const FileCostHistograms& o);
  void reset();
  PerFileCosts summary() const;
};

// One thread's measured figures; read by the runner after the thread has finished.
struct ThreadStats {
  LatencyHistogram histogram;
  uint64_t bytes = 0;
  uint64_t ops = 0;
  uint64_t read_ops = 0;
  uint64_t write_ops = 0;
  uint64_t end_ns = 0;  // last completion (after the fsync with Workload::fsync)
  LatencyHistogram requests;  // with request_blocks > 1
  uint64_t fsync_ns = 0;
  std::vector<SecondBucket> seconds;
  double cpu_user_s = 0;
  double cpu_sys_s = 0;
  std::unique_ptr<PhaseRecorder> phases;  // the worker's, copied when the interval ends
  std::unique_ptr<FileCostHistograms> file_costs;  // open_per_file runs only
  void reset();
};

struct StopSignals {
  const std::atomic<bool>* user = nullptr;  // RunOptions::stop
  std::atomic<bool>* abort = nullptr;       // another thread failed
  bool requested() const noexcept {
    return (user != nullptr && user->load(std::memory_order_relaxed)) ||
           abort->load(std::memory_order_relaxed);
  }
};

// The thread's view of the workload, fixed for the whole run. A thread covers one region
// (-f, -D) or several whole files in turn (a file list); a pass visits each region once.
class ThreadLoop {
 public:
  ThreadLoop(const Workload& w, std::vector<OffsetPlan> plans, const FileSet& files,
             PathWorker& worker, LiveCounters& live);

  // Issues I/O from pass 0 until the data is done (deadline_ns == 0: one pass) or the
  // deadline passes (further passes as needed), then drains. Stats restart at t0_ns.
  // A job that reads drops its regions from the page cache before each further pass (and
  // each read of the previous pass still in flight then, once it completes), so that a path
  // that turns out to read through the cache (cuFile compat, -O 1, -x 4) reads every pass
  // from storage.
  void run(uint64_t t0_ns, uint64_t deadline_ns, const StopSignals& stop, ThreadStats& stats);

  // Drops the thread's regions from the page cache when the job reads (no-op for writes):
  // the runner calls it between a warm-up and the measured interval and before a repetition.
  void drop_read_regions() const;

  // -V after writes: reads back every block the last run() wrote and checks it.
  void verify_written(const StopSignals& stop);

 private:
  void fill_for_write(uint32_t slot, uint64_t offset);
  // Issues the pass's I/O until it is done (or, with per_file_, the current file is), the
  // deadline passes or a stop is asked for, then drains. Returns the time of the last
  // completion seen.
  uint64_t pump(uint64_t deadline_ns, const StopSignals& stop, ThreadStats& stats);
  // open_per_file: the thread's files one at a time, each opened, registered, read,
  // deregistered and closed, every step timed into stats.file_costs.
  uint64_t run_per_file(uint64_t deadline_ns, const StopSignals& stop, ThreadStats& stats);
  // Points fds_[file]'s number at the file (open, then dup3); throws naming the path.
  void open_file(uint32_t file);
  // The next offset of the pass across the thread's regions; false when the pass is done.
  bool next_offset(uint32_t& file, uint64_t& offset);
  void start_pass(uint64_t pass);
  uint64_t blocks_per_pass() const noexcept { return blocks_per_pass_; }
  void complete(const IoCompletion& c, uint64_t now, ThreadStats& stats);
  // The slot of a completion, checking that its tag is one we have in flight.
  uint32_t slot_of(const IoCompletion& c) const;
  [[noreturn]] void fail(const IoCompletion& c, uint32_t slot) const;

  struct InFlight {
    uint64_t tag = ~uint64_t{0};  // none
    uint64_t start_ns = 0;
    uint64_t offset = 0;
    uint32_t file = 0;
    uint64_t request = 0;
    IoDir dir = IoDir::Read;
    uint64_t pass = 0;  // a read of an earlier pass is dropped from the cache when it completes
  };
  struct OpenRequest {
    uint64_t start_ns = 0;
    uint32_t remaining = 0;
  };

  const Workload& w_;
  std::vector<OffsetPlan> plans_;
  std::size_t current_ = 0;
  OffsetGenerator gen_;
  uint64_t pass_ = 0;
  uint64_t issued_in_pass_ = 0;
  uint64_t blocks_per_pass_ = 0;
  const std::vector<std::string>& paths_;
  const std::vector<int>& fds_;
  bool per_file_;
  bool odirect_;
  int idle_fd_;
  PathWorker& worker_;
  LiveCounters& live_;
  uint32_t depth_;
  uint32_t io_size_;
  bool verify_;
  bool fill_each_write_;
  std::optional<uint32_t> read_percent_;
  IoDir default_dir_;
  uint64_t rng_;
  uint64_t random_fill_state_;
  std::vector<uint32_t> free_slots_;
  std::vector<InFlight> inflight_;
  std::vector<IoRequest> batch_;
  std::vector<IoCompletion> completions_;
  std::vector<std::byte> scratch_;  // pattern fill and verification copies
  uint64_t sequence_ = 0;           // tags are (sequence << 32) | slot
  uint32_t request_blocks_ = 1;
  uint64_t ops_issued_ = 0;          // for request numbering: request = op / request_blocks
  std::vector<OpenRequest> open_requests_;  // ring indexed by request % size
  uint64_t next_second_ns_ = 0;
  SecondBucket current_second_;
  uint64_t written_all_ = 0;  // whether the last run completed a full pass (for -V)
  uint64_t written_prefix_ = 0;
};

}  // namespace gdsb::detail
