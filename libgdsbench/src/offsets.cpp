#include "gdsb/offsets.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb {

BlockPermutation::BlockPermutation(uint64_t n, uint64_t key) : n_(n) {
  // Domain 2^(2h) >= n with h >= 1, so the walk visits at most 4n values on average.
  const unsigned bits = n <= 1 ? 2U : static_cast<unsigned>(std::bit_width(n - 1));
  half_bits_ = (bits + 1) / 2;
  if (half_bits_ == 0) half_bits_ = 1;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  uint64_t k = key;
  for (auto& rk : keys_) {
    k = mix64(k);
    rk = k;
  }
}

uint64_t BlockPermutation::encrypt(uint64_t x) const noexcept {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (const uint64_t rk : keys_) {
    const uint64_t f = mix64(right ^ rk) & half_mask_;
    const uint64_t next_right = left ^ f;
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

uint64_t BlockPermutation::operator()(uint64_t index) const noexcept {
  if (n_ <= 1) return 0;
  // Cycle walking: encrypt is a bijection of [0, 2^(2h)); repeating it until the value
  // falls in [0, n) gives a bijection of [0, n).
  uint64_t x = encrypt(index);
  while (x >= n_) x = encrypt(x);
  return x;
}

OffsetGenerator::OffsetGenerator(const OffsetPlan& plan) : plan_(plan), perm_(0, 0) {
  random_ = plan.random;
  const uint64_t len =
      plan.region.end > plan.region.begin ? plan.region.end - plan.region.begin : 0;
  const uint64_t align = plan.alignment == 0 ? 1 : plan.alignment;
  step_ = plan.io_size;
  if (random_ && step_ % align != 0) step_ = (step_ / align + 1) * align;
  if (plan.io_size == 0 || len < plan.io_size) {
    blocks_ = 0;
  } else {
    // Reserve room for the -U shift (below one alignment unit).
    const uint64_t slack = (random_ && plan.unaligned) ? std::min(align, step_) - 1 : 0;
    blocks_ = len < plan.io_size + slack ? 0 : (len - plan.io_size - slack) / step_ + 1;
  }
  start_pass(0);
}

void OffsetGenerator::start_pass(uint64_t p) {
  pass_ = p;
  next_ = 0;
  base_ = plan_.region.begin;
  if (!random_) return;
  const uint64_t key = mix64(plan_.seed ^ mix64((uint64_t{plan_.stream} << 32) ^ p));
  perm_ = BlockPermutation(blocks_, key);
  const uint64_t align = plan_.alignment == 0 ? 1 : plan_.alignment;
  const uint64_t slack = std::min(align, step_) - 1;
  if (plan_.unaligned && slack > 0) base_ += 1 + mix64(key) % slack;
}

std::vector<Region> split_regions(const Workload& w, uint64_t file_size) {
  std::vector<Region> out;
  const uint32_t threads = w.threads == 0 ? 1 : w.threads;
  if (!w.directory.empty() && w.file.empty()) {
    for (uint32_t t = 0; t < threads; ++t)
      out.push_back({t, w.start_offset, w.start_offset + file_size});
    if (file_size < w.io_size) {
      throw UsageError("-s " + format_size(file_size) + " is smaller than the I/O size -i " +
                       format_size(w.io_size));
    }
    return out;
  }
  const uint64_t io = w.io_size == 0 ? 1 : w.io_size;
  const uint64_t per_thread = file_size / threads / io * io;
  if (per_thread == 0) {
    throw UsageError("-s " + format_size(file_size) + " split over -w " + std::to_string(threads) +
                     " threads leaves less than one I/O of -i " + format_size(w.io_size) +
                     " per thread; raise -s or lower -w/-i");
  }
  for (uint32_t t = 0; t < threads; ++t) {
    const uint64_t begin = w.start_offset + per_thread * t;
    out.push_back({0, begin, begin + per_thread});
  }
  return out;
}

OffsetPlan offset_plan(const Workload& w, const Region& region, uint32_t thread) {
  OffsetPlan p;
  p.region = region;
  p.io_size = w.io_size;
  p.random = pattern_is_random(w.pattern);
  p.alignment = w.random_alignment == 0 ? 1 : w.random_alignment;
  p.unaligned = w.unaligned_random;
  p.seed = w.seed;
  p.stream = thread;
  return p;
}

}  // namespace gdsb
