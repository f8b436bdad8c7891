// A TransferPath that moves no bytes, for testing the runner: it completes requests in
// reverse order of submission (so tag handling matters), records what it saw, and can be
// told to fail, to return a wrong tag, to be slow, or to be unavailable.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "gdsb/transfer_path.hpp"

namespace gdsb::test {

struct FakeConfig {
  uint32_t depth = 1;
  Availability availability = Availability::yes();
  int64_t fail_at_op = -1;   // this op (0-based, per worker) completes with fail_result
  int64_t fail_result = -5;  // -EIO
  bool corrupt_tag = false;  // first completion carries a tag never submitted
  std::chrono::microseconds delay_per_op{0};
  // Extra delay per op for the k-th worker generation (repetition), to vary throughput.
  std::vector<std::chrono::microseconds> delay_per_generation;
};

struct FakeRecord {
  std::mutex mutex;
  std::vector<std::pair<uint32_t, uint64_t>> ops;  // (file, offset) of every request
  std::atomic<uint32_t> max_in_flight{0};
  std::atomic<uint32_t> workers_made{0};
  std::atomic<uint32_t> finishes{0};
};

class FakeWorker final : public PathWorker {
 public:
  FakeWorker(const FakeConfig& c, FakeRecord& rec, std::chrono::microseconds delay, uint32_t io)
      : c_(c), rec_(rec), delay_(delay), slots_(c.depth, std::vector<std::byte>(io)) {}
  uint32_t depth() const override { return c_.depth; }
  void submit(std::span<const IoRequest> requests) override {
    {
      const std::lock_guard lock(rec_.mutex);
      for (const auto& r : requests) rec_.ops.emplace_back(r.file, r.offset);
    }
    for (const auto& r : requests) {
      int64_t res = r.length;
      if (op_++ == c_.fail_at_op) res = c_.fail_result;
      pending_.push_back({r.tag, res});
    }
    const auto n = static_cast<uint32_t>(pending_.size());
    uint32_t seen = rec_.max_in_flight.load();
    while (n > seen && !rec_.max_in_flight.compare_exchange_weak(seen, n)) {
    }
  }
  std::size_t reap(std::span<IoCompletion> out, std::size_t) override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_ * pending_.size());
    std::size_t n = 0;
    while (!pending_.empty() && n < out.size()) {  // newest first
      out[n] = pending_.back();
      if (c_.corrupt_tag && !corrupted_) {
        out[n].tag ^= 0xdead0000000ULL;
        corrupted_ = true;
      }
      pending_.pop_back();
      ++n;
    }
    return n;
  }
  void load_slot(uint32_t slot, std::span<const std::byte> data) override {
    std::copy(data.begin(), data.end(), slots_[slot].begin());
  }
  void read_slot(uint32_t slot, std::span<std::byte> out) override {
    std::copy(slots_[slot].begin(), slots_[slot].begin() + static_cast<std::ptrdiff_t>(out.size()),
              out.begin());
  }

 private:
  const FakeConfig& c_;
  FakeRecord& rec_;
  std::chrono::microseconds delay_;
  std::vector<std::vector<std::byte>> slots_;
  std::vector<IoCompletion> pending_;
  int64_t op_ = 0;
  bool corrupted_ = false;
};

class FakeRun final : public PathRun {
 public:
  FakeRun(const FakeConfig& c, FakeRecord& rec, uint32_t threads, uint32_t io)
      : c_(c), rec_(rec), threads_(threads), io_(io) {}
  std::unique_ptr<PathWorker> make_worker(uint32_t) override {
    const uint32_t made = rec_.workers_made++;
    auto delay = c_.delay_per_op;
    const uint32_t generation = made / threads_;
    if (generation < c_.delay_per_generation.size()) delay += c_.delay_per_generation[generation];
    return std::make_unique<FakeWorker>(c_, rec_, delay, io_);
  }
  PathReport finish() override {
    ++rec_.finishes;
    return {"fake", {"fake evidence"}, {}, {}, {}};
  }

 private:
  const FakeConfig& c_;
  FakeRecord& rec_;
  uint32_t threads_;
  uint32_t io_;
};

class FakePath final : public TransferPath {
 public:
  FakePath(XferType t, FakeConfig c, FakeRecord& rec) : type_(t), c_(std::move(c)), rec_(rec) {}
  XferType type() const override { return type_; }
  Availability probe(const Workload&) const override { return c_.availability; }
  bool needs_odirect(const Workload&) const override { return false; }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet&) override {
    return std::make_unique<FakeRun>(c_, rec_, w.threads, static_cast<uint32_t>(w.io_size));
  }

 private:
  XferType type_;
  FakeConfig c_;
  FakeRecord& rec_;
};

}  // namespace gdsb::test
