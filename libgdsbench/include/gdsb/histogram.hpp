// Latency histogram with bounded relative error, in the style of HdrHistogram: values
// (nanoseconds) below 256 get one bucket each; above that every power of two [2^k, 2^k+1)
// is split into 128 equal sub-buckets, so a bucket is at most 1/128 of its lower bound
// wide and a value reported at the bucket's midpoint is within 1/256 (0.4%) of every
// value that fell into it. Mean, min and max are exact.
//
// Recording is O(1) with no locks or atomics: each thread owns one instance and the runner
// merges them after the run.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "gdsb/result.hpp"

namespace gdsb {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;  // 128
  // Values at or above 2^42 ns (about 73 minutes) are counted in the last bucket; min,
  // max and mean still see the true value.
  static constexpr unsigned kMaxBits = 42;
  static constexpr uint64_t kMaxTracked = (uint64_t{1} << kMaxBits) - 1;
  static constexpr std::size_t kBucketCount =
      (kMaxBits - kSubBucketBits) * kSubBuckets + kSubBuckets;  // 4608

  LatencyHistogram();

  void record(uint64_t ns) noexcept {
    ++counts_[bucket_index(ns < kMaxTracked ? ns : kMaxTracked)];
    ++count_;
    sum_ns_ += ns;
    if (ns < min_ns_) min_ns_ = ns;
    if (ns > max_ns_) max_ns_ = ns;
  }

  void merge(const LatencyHistogram& other) noexcept;
  void reset() noexcept;

  uint64_t count() const noexcept { return count_; }
  uint64_t min_ns() const noexcept { return count_ == 0 ? 0 : min_ns_; }
  uint64_t max_ns() const noexcept { return max_ns_; }
  double mean_ns() const noexcept;
  // The value at quantile q in [0, 1] by nearest rank (the smallest recorded value with at
  // least q * count values at or below it), within the bucket error; clamped to [min, max].
  double value_at_quantile(double q) const noexcept;

  // mean, min, p50, p90, p99, p99.9, p99.99, max in microseconds.
  LatencySummary summary() const;
  // Non-empty buckets, bounds in microseconds.
  std::vector<HistogramBucket> buckets() const;

  static constexpr std::size_t bucket_index(uint64_t v) noexcept {
    if (v < 2 * kSubBuckets) return static_cast<std::size_t>(v);
    const unsigned msb = 63U - static_cast<unsigned>(std::countl_zero(v));
    const unsigned shift = msb - kSubBucketBits;
    return static_cast<std::size_t>((uint64_t{shift} << kSubBucketBits) + (v >> shift));
  }
  static constexpr uint64_t bucket_lower(std::size_t index) noexcept {
    if (index < 2 * kSubBuckets) return index;
    const uint64_t shift = (index >> kSubBucketBits) - 1;
    return (index - (shift << kSubBucketBits)) << shift;
  }
  static constexpr uint64_t bucket_width(std::size_t index) noexcept {
    if (index < 2 * kSubBuckets) return 1;
    return uint64_t{1} << ((index >> kSubBucketBits) - 1);
  }

 private:
  std::unique_ptr<uint64_t[]> counts_;  // kBucketCount entries
  uint64_t count_ = 0;
  uint64_t sum_ns_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
  uint64_t max_ns_ = 0;
};

}  // namespace gdsb
