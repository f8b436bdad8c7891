// Robust statistics: figures computed by hand (median, MAD, z = 0.6745 (x - median) / MAD).
#include <gtest/gtest.h>

#include <cmath>

#include "gdsb/cluster/robust.hpp"

using namespace gdsb::cluster;

TEST(RobustStats, MedianAndMadOfOddAndEvenCounts) {
  RobustStats s = robust_stats({10, 12, 11, 50, 9});
  EXPECT_DOUBLE_EQ(s.median, 11);  // 9 10 11 12 50
  EXPECT_DOUBLE_EQ(s.mad, 1);      // |d| = 1 1 0 39 2 -> 0 1 1 2 39
  EXPECT_EQ(s.count, 5);
  s = robust_stats({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mad, 1);  // 1.5 .5 .5 1.5
  EXPECT_EQ(robust_stats({}).count, 0);
}

TEST(RobustStats, ZScoreNamesTheOddNodeOnly) {
  const std::vector<double> v{10, 12, 11, 50, 9};
  const RobustStats s = robust_stats(v);
  EXPECT_NEAR(robust_z(50, s), 0.6745 * 39, 1e-9);
  EXPECT_NEAR(robust_z(9, s), -0.6745 * 2, 1e-9);
  for (double x : v) {
    const bool odd = is_outlier(x, robust_z(x, s), s, 3.5, 0.10);
    EXPECT_EQ(odd, x == 50) << x;
  }
}

TEST(RobustStats, MadZeroFallsBackToMeanAbsoluteDeviation) {
  // Three equal nodes and one slow: MAD is 0; mean |d| = 30/4 = 7.5 -> z = -30 / (1.253314*7.5).
  const std::vector<double> v{40, 40, 40, 10};
  const RobustStats s = robust_stats(v);
  EXPECT_DOUBLE_EQ(s.mad, 0);
  EXPECT_DOUBLE_EQ(s.mean_ad, 7.5);  // computed once, with the median and MAD
  EXPECT_NEAR(robust_z(10, s), -30 / (1.253314 * 7.5), 1e-9);
  EXPECT_DOUBLE_EQ(robust_z(40, s), 0);
  // -3.19 is under 3.5: with MAD 0 the fallback is deliberately milder; a lower threshold finds it.
  EXPECT_FALSE(is_outlier(10, robust_z(10, s), s, 3.5, 0.10));
  EXPECT_TRUE(is_outlier(10, robust_z(10, s), s, 3.0, 0.10));
}

TEST(RobustStats, AllEqualIsNeverAnOutlierAndOneDifferentIsInfinitelyFar) {
  const std::vector<double> same{5, 5, 5};
  const RobustStats s = robust_stats(same);
  EXPECT_DOUBLE_EQ(robust_z(5, s), 0);
  EXPECT_TRUE(std::isinf(robust_z(6, s)));
}

TEST(RobustStats, SmallDifferencesAndTooFewNodesAreNotOutliers) {
  const std::vector<double> v{100, 100.1, 100.2, 100.1, 103};
  const RobustStats s = robust_stats(v);
  const double z = robust_z(103, s);
  EXPECT_GT(z, 3.5);                                // far in MAD units...
  EXPECT_FALSE(is_outlier(103, z, s, 3.5, 0.10));   // ...but only 3% off
  EXPECT_FALSE(is_outlier(1, 1e9, robust_stats({1, 100}), 3.5, 0.10));  // two nodes
}
