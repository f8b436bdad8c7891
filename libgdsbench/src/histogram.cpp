#include "gdsb/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace gdsb {

LatencyHistogram::LatencyHistogram() : counts_(new uint64_t[kBucketCount]()) {}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::reset() noexcept {
  std::fill_n(counts_.get(), kBucketCount, uint64_t{0});
  count_ = 0;
  sum_ns_ = 0;
  min_ns_ = UINT64_MAX;
  max_ns_ = 0;
}

double LatencyHistogram::mean_ns() const noexcept {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ns_) / static_cast<double>(count_);
}

double LatencyHistogram::value_at_quantile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (rank == 1) return static_cast<double>(min_ns());  // exact ends
  if (rank == count_) return static_cast<double>(max_ns_);
  uint64_t seen = 0;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t width = bucket_width(i);
      const double mid = static_cast<double>(bucket_lower(i)) +
                         (width == 1 ? 0.0 : static_cast<double>(width) / 2.0);
      return std::clamp(mid, static_cast<double>(min_ns()), static_cast<double>(max_ns_));
    }
  }
  return static_cast<double>(max_ns_);
}

LatencySummary LatencyHistogram::summary() const {
  constexpr double kUs = 1e-3;
  LatencySummary s;
  s.mean_us = mean_ns() * kUs;
  s.min_us = static_cast<double>(min_ns()) * kUs;
  s.p50_us = value_at_quantile(0.50) * kUs;
  s.p90_us = value_at_quantile(0.90) * kUs;
  s.p99_us = value_at_quantile(0.99) * kUs;
  s.p999_us = value_at_quantile(0.999) * kUs;
  s.p9999_us = value_at_quantile(0.9999) * kUs;
  s.max_us = static_cast<double>(max_ns_) * kUs;
  return s;
}

std::vector<HistogramBucket> LatencyHistogram::buckets() const {
  std::vector<HistogramBucket> out;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    if (counts_[i] == 0) continue;
    const auto lower = static_cast<double>(bucket_lower(i));
    const auto upper = lower + static_cast<double>(bucket_width(i));
    out.push_back({lower * 1e-3, upper * 1e-3, counts_[i]});
  }
  return out;
}

}  // namespace gdsb
