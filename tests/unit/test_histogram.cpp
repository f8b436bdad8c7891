#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gdsb/histogram.hpp"

namespace gdsb {
namespace {

double exact_quantile(const std::vector<uint64_t>& sorted, double q) {
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]);
}

void expect_accurate(std::vector<uint64_t> values, const char* name) {
  LatencyHistogram h;
  for (uint64_t v : values) h.record(v);
  std::sort(values.begin(), values.end());
  for (double q : {0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const double exact = exact_quantile(values, q);
    const double got = h.value_at_quantile(q);
    EXPECT_LE(std::abs(got - exact), 0.01 * exact) << name << " q=" << q;
  }
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min_ns(), values.front());
  EXPECT_EQ(h.max_ns(), values.back());
  long double sum = 0;
  for (uint64_t v : values) sum += static_cast<long double>(v);
  EXPECT_NEAR(h.mean_ns(), static_cast<double>(sum / values.size()), 1e-6 * h.mean_ns());
}

TEST(Histogram, AccurateOnSeveralDistributions) {
  std::mt19937_64 rng(42);
  const std::size_t n = 200000;
  std::vector<uint64_t> uniform, lognormal, exponential, bimodal;
  std::uniform_int_distribution<uint64_t> u(1000, 5000000);
  std::lognormal_distribution<double> ln(11.0, 1.5);  // median ~60 us, long tail
  std::exponential_distribution<double> ex(1.0 / 20000.0);
  std::normal_distribution<double> fast(8000, 500), slow(900000, 50000);
  std::bernoulli_distribution pick_slow(0.02);
  for (std::size_t i = 0; i < n; ++i) {
    uniform.push_back(u(rng));
    lognormal.push_back(static_cast<uint64_t>(ln(rng)) + 1);
    exponential.push_back(static_cast<uint64_t>(ex(rng)) + 1);
    bimodal.push_back(static_cast<uint64_t>(std::max(1.0, pick_slow(rng) ? slow(rng) : fast(rng))));
  }
  expect_accurate(uniform, "uniform");
  expect_accurate(lognormal, "lognormal");
  expect_accurate(exponential, "exponential");
  expect_accurate(bimodal, "bimodal");
}

TEST(Histogram, SmallValuesExact) {
  LatencyHistogram h;
  for (uint64_t v = 0; v < 256; ++v) h.record(v);
  EXPECT_EQ(h.value_at_quantile(0.5), 127.0);
  EXPECT_EQ(h.value_at_quantile(1.0), 255.0);
}

TEST(Histogram, BucketsAreContiguousAndBounded) {
  for (std::size_t i = 0; i + 1 < LatencyHistogram::kBucketCount; ++i) {
    const uint64_t lo = LatencyHistogram::bucket_lower(i);
    const uint64_t w = LatencyHistogram::bucket_width(i);
    ASSERT_EQ(lo + w, LatencyHistogram::bucket_lower(i + 1)) << i;
    ASSERT_EQ(LatencyHistogram::bucket_index(lo), i);
    ASSERT_EQ(LatencyHistogram::bucket_index(lo + w - 1), i);
    if (lo >= 256) {
      ASSERT_LE(static_cast<double>(w) / static_cast<double>(lo), 1.0 / 128.0 + 1e-12);
    }
  }
}

TEST(Histogram, HugeValuesClampedButMaxExact) {
  LatencyHistogram h;
  h.record(1ULL << 50);
  h.record(10);
  EXPECT_EQ(h.max_ns(), 1ULL << 50);
  EXPECT_EQ(h.value_at_quantile(1.0), static_cast<double>(1ULL << 50));
  EXPECT_EQ(h.count(), 2U);
}

TEST(Histogram, MergeEqualsRecordingEverything) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ln(10.0, 1.0);
  LatencyHistogram a, b, all;
  for (int i = 0; i < 50000; ++i) {
    const auto v = static_cast<uint64_t>(ln(rng));
    (i % 3 == 0 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  for (double q : {0.5, 0.99, 0.9999}) EXPECT_EQ(a.value_at_quantile(q), all.value_at_quantile(q));
  EXPECT_EQ(a.mean_ns(), all.mean_ns());
  EXPECT_EQ(a.buckets().size(), all.buckets().size());
}

TEST(Histogram, SummaryAndBucketsInMicroseconds) {
  LatencyHistogram h;
  for (int i = 0; i < 100; ++i) h.record(100000);  // 100 us
  const auto s = h.summary();
  EXPECT_NEAR(s.p50_us, 100.0, 1.0);
  EXPECT_DOUBLE_EQ(s.min_us, 100.0);
  EXPECT_DOUBLE_EQ(s.max_us, 100.0);
  EXPECT_DOUBLE_EQ(s.mean_us, 100.0);
  const auto b = h.buckets();
  ASSERT_EQ(b.size(), 1U);
  EXPECT_EQ(b[0].count, 100U);
  EXPECT_LE(b[0].lower_us, 100.0);
  EXPECT_GT(b[0].upper_us, 100.0);
  LatencyHistogram empty;
  EXPECT_EQ(empty.summary().p99_us, 0.0);
  EXPECT_TRUE(empty.buckets().empty());
}

}  // namespace
}  // namespace gdsb
