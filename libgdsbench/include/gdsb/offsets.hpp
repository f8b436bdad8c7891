// Where each I/O of a thread goes. Sequential: the thread's region front to back in io-size
// steps. Random: a keyed permutation of the region's blocks, so one pass touches every
// block exactly once, in an order fixed by the seed (-k), the thread and the pass number.
// The permutation is a Feistel network over the next even power of two with cycle walking:
// O(1) memory whatever the file size.
#pragma once

#include <cstdint>
#include <vector>

#include "gdsb/workload.hpp"

namespace gdsb {

// A bijection of [0, n) keyed by a 64-bit key.
class BlockPermutation {
 public:
  BlockPermutation(uint64_t n, uint64_t key);
  uint64_t size() const noexcept { return n_; }
  uint64_t operator()(uint64_t index) const noexcept;

 private:
  uint64_t encrypt(uint64_t x) const noexcept;
  uint64_t n_;
  unsigned half_bits_ = 1;
  uint64_t half_mask_ = 1;
  uint64_t keys_[4] = {};
};

// One thread's share of the data: bytes [begin, end) of file `file`.
struct Region {
  uint32_t file = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct OffsetPlan {
  Region region;
  uint64_t io_size = 0;
  bool random = false;
  uint64_t alignment = 4096;  // -a: random offsets are multiples of this from region.begin
  bool unaligned = false;     // -U: random offsets shifted off the alignment grid
  uint64_t seed = 0;          // -k
  uint32_t stream = 0;        // thread index: each thread has its own order
};

class OffsetGenerator {
 public:
  explicit OffsetGenerator(const OffsetPlan& plan);

  // I/Os in one pass: every block once.
  uint64_t blocks_per_pass() const noexcept { return blocks_; }
  // Distance between block starts: io_size, rounded up to -a for random I/O.
  uint64_t step() const noexcept { return step_; }
  uint64_t pass() const noexcept { return pass_; }
  uint64_t issued_in_pass() const noexcept { return next_; }

  // The next offset of the current pass; false once the pass is done.
  bool next(uint64_t& offset) noexcept {
    if (next_ == blocks_) return false;
    const uint64_t block = random_ ? perm_(next_) : next_;
    ++next_;
    offset = base_ + block * step_;
    return true;
  }
  // Starts pass p (0 for the first): random passes use a fresh order.
  void start_pass(uint64_t p);

 private:
  OffsetPlan plan_;
  bool random_ = false;
  uint64_t step_ = 0;
  uint64_t blocks_ = 0;
  uint64_t base_ = 0;
  uint64_t next_ = 0;
  uint64_t pass_ = 0;
  BlockPermutation perm_;
};

// Splits the workload's data among its threads. -f: threads share [o, o+s) in equal
// contiguous parts (rounded down to whole I/Os). -D: each thread owns [o, o+s) of its
// own file. `file_size` is the -s value (or the resolved file size when -s was 0).
// Throws UsageError when a thread's part is smaller than one I/O.
std::vector<Region> split_regions(const Workload& w, uint64_t file_size);

OffsetPlan offset_plan(const Workload& w, const Region& region, uint32_t thread);

// SplitMix64 finalizer: a fast, well-mixed 64-bit hash used for keys and patterns.
constexpr uint64_t mix64(uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace gdsb
