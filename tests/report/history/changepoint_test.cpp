// Invariants of change-point detection (reports/src/history/changepoint.cpp). Agreement with Apache
// Otava on recorded series is in changepoint_fixture_test.cpp.
#include "gdsb/report/changepoint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace gdsb::report {
namespace {

// Gaussian noise from mt19937_64 (its output is fixed by the C++ standard) through Box-Muller,
// because std::normal_distribution differs between standard libraries.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}
  double next() {
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::acos(-1.0) * u2);
  }

 private:
  std::mt19937_64 rng_;
};

std::vector<double> step_series(std::size_t n, std::size_t at, double change, double noise,
                                std::uint64_t seed) {
  Noise g(seed);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double mean = i < at ? 1000.0 : 1000.0 * (1 + change);
    v[i] = mean * (1 + noise * g.next());
  }
  return v;
}

std::vector<std::size_t> indexes(const std::vector<ChangePoint>& points) {
  std::vector<std::size_t> out;
  for (const auto& p : points) out.push_back(p.index);
  return out;
}

ChangePointOptions permutation(std::uint64_t seed) {
  ChangePointOptions o;
  o.method = ChangePointMethod::Permutation;
  o.seed = seed;
  return o;
}

TEST(ChangePoints, ConstantSeriesHasNone) {
  const std::vector<double> flat(200, 1234.5);
  EXPECT_TRUE(find_change_points(flat).empty());
  EXPECT_TRUE(find_change_points(flat, permutation(1)).empty());
}

// At the step (+-1 run), +40% give or take what noise does to a short neighbouring segment
// (Otava itself splits 5 low runs off before the step at 57, seed 3, which makes that +45.7%).
bool near_step(const ChangePoint& p, std::size_t at) {
  return p.index + 1 >= at && p.index <= at + 1 && std::fabs(p.forward_change_percent - 40.0) < 10.0 &&
         p.p_value < 0.001;
}

TEST(ChangePoints, Step40PercentIn2PercentNoiseFoundWithinOneRun) {
  ChangePointOptions ten_percent;
  ten_percent.min_magnitude = 0.10;
  for (const std::size_t at : {13u, 57u, 80u, 140u}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const auto v = step_series(160, at, 0.40, 0.02, seed);
      // Otava's defaults (-M 0) also keep significant shifts of a few percent in the noise
      // (Otava 0.8.0 itself gives 13, 58, 72 for at = 13, seed 3): the step must be among them.
      const auto found = find_change_points(v);
      EXPECT_TRUE(std::any_of(found.begin(), found.end(),
                              [&](const ChangePoint& p) { return near_step(p, at); }))
          << "step at " << at << " seed " << seed;
      for (const auto& p : found) {
        if (!near_step(p, at)) {
          EXPECT_LT(p.magnitude, 0.05) << "step at " << at << " seed " << seed;
        }
      }
      // With -M 0.1, only the step.
      const auto big = find_change_points(v, ten_percent);
      ASSERT_EQ(big.size(), 1u) << "step at " << at << " seed " << seed;
      EXPECT_TRUE(near_step(big[0], at)) << "found " << big[0].index << ", step at " << at;
      // The permutation test keeps a noise-only split with probability about 1 / 101 (no
      // shuffle of 100 beats it), so it may add one elsewhere; the step must be among them.
      const auto perm = find_change_points(v, permutation(seed));
      EXPECT_TRUE(std::any_of(perm.begin(), perm.end(),
                              [&](const ChangePoint& p) { return near_step(p, at); }))
          << "permutation method, step at " << at << " seed " << seed;
    }
  }
}

TEST(ChangePoints, ScalingTheSeriesKeepsThePoints) {
  auto v = step_series(150, 50, 0.10, 0.03, 7);
  const auto more = step_series(100, 60, -0.2, 0.03, 8);
  v.insert(v.end(), more.begin(), more.end());
  const auto base = find_change_points(v);
  ASSERT_FALSE(base.empty());
  for (const double k : {1e-3, 0.5, 7.25, 1e6}) {
    std::vector<double> scaled = v;
    for (double& x : scaled) x *= k;
    const auto found = find_change_points(scaled);
    EXPECT_EQ(indexes(found), indexes(base)) << "scale " << k;
    for (std::size_t i = 0; i < found.size() && i < base.size(); ++i) {
      EXPECT_NEAR(found[i].forward_change_percent, base[i].forward_change_percent, 1e-9);
    }
  }
}

TEST(ChangePoints, SortedDistinctAndInside) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Noise g(seed);
    std::vector<double> v;
    for (int seg = 0; seg < 8; ++seg) {
      const double mean = 1000.0 + 300.0 * g.next();
      for (int i = 0; i < 25 + 5 * seg; ++i) v.push_back(mean + 20.0 * g.next());
    }
    for (const auto& options : {ChangePointOptions{}, permutation(seed)}) {
      const auto found = find_change_points(v, options);
      for (std::size_t i = 0; i < found.size(); ++i) {
        EXPECT_GT(found[i].index, 0u);
        EXPECT_LT(found[i].index, v.size());
        if (i > 0) {
          EXPECT_LT(found[i - 1].index, found[i].index);
        }
        // Each point's sides are the segments between its neighbours.
        EXPECT_EQ(found[i].before.end, found[i].index);
        EXPECT_EQ(found[i].after.begin, found[i].index);
        EXPECT_EQ(found[i].before.begin, i == 0 ? 0 : found[i - 1].index);
      }
    }
  }
}

TEST(ChangePoints, VeryShortSeriesGiveAClearEmptyAnswer) {
  for (const std::size_t n : {0u, 1u, 2u, 3u}) {
    const auto v = step_series(n, 1, 0.02, 0.02, 3);
    EXPECT_TRUE(find_change_points(v).empty()) << n << " runs";
    EXPECT_TRUE(find_change_points(v, permutation(3)).empty()) << n << " runs";
    EXPECT_EQ(summarize_segments(v, {}).size(), n == 0 ? 0u : 1u);
  }
}

TEST(ChangePoints, NonFiniteValueIsANamedError) {
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
    std::vector<double> v(30, 1.0);
    v[17] = bad;
    try {
      find_change_points(v);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const NonFiniteValue& e) {
      EXPECT_EQ(e.index(), 17u);
      EXPECT_NE(std::string(e.what()).find("run 17"), std::string::npos) << e.what();
    }
  }
}

TEST(ChangePoints, OptionsOutOfRangeAreRejected) {
  const std::vector<double> v(10, 1.0);
  ChangePointOptions o;
  o.window = 1;
  EXPECT_THROW(find_change_points(v, o), std::invalid_argument);
  o = {};
  o.max_pvalue = 1.5;
  EXPECT_THROW(find_change_points(v, o), std::invalid_argument);
  o = {};
  o.min_magnitude = -0.1;
  EXPECT_THROW(find_change_points(v, o), std::invalid_argument);
  o = permutation(1);
  o.permutations = 0;
  EXPECT_THROW(find_change_points(v, o), std::invalid_argument);
}

TEST(ChangePoints, MinimumMagnitudeDropsSmallShifts) {
  const auto v = step_series(120, 60, 0.03, 0.005, 11);
  ASSERT_EQ(find_change_points(v).size(), 1u);
  ChangePointOptions o;
  o.min_magnitude = 0.05;
  EXPECT_TRUE(find_change_points(v, o).empty());
  o.min_magnitude = 0.01;
  EXPECT_EQ(find_change_points(v, o).size(), 1u);
}

TEST(ChangePoints, PermutationTestIsReproducibleForASeed) {
  const auto v = step_series(120, 40, 0.04, 0.03, 5);
  const auto a = find_change_points(v, permutation(42));
  const auto b = find_change_points(v, permutation(42));
  ASSERT_EQ(indexes(a), indexes(b));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].p_value, b[i].p_value);
}

TEST(ChangePoints, SegmentSummariesDescribeTheSides) {
  std::vector<double> v{1, 1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 9};
  v.back() = 5;  // a clean step at run 6
  const auto found = find_change_points(v);
  ASSERT_EQ(indexes(found), std::vector<std::size_t>{6});
  EXPECT_DOUBLE_EQ(found[0].before.median, 1.0);
  EXPECT_DOUBLE_EQ(found[0].after.median, 5.0);
  EXPECT_DOUBLE_EQ(found[0].forward_change_percent, 400.0);
  EXPECT_DOUBLE_EQ(found[0].magnitude, 4.0);
  EXPECT_EQ(found[0].p_value, 0.0);  // no spread on either side: t is infinite, as in scipy
  const auto segs = summarize_segments(v, found);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[1].begin, 6u);
  EXPECT_EQ(segs[1].end, v.size());
  EXPECT_DOUBLE_EQ(segs[1].q1, 5.0);
}

}  // namespace
}  // namespace gdsb::report
