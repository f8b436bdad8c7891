#include "gdsb/report/stats.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gdsb::report {
namespace {

// Reference values from scipy.stats.mannwhitneyu's documentation (the Conover example):
// males = [19, 22, 16, 29, 24], females = [20, 11, 17, 12] -> U1 = 17, exact p = 0.1111111,
// method="asymptotic" (tie and continuity correction) p = 0.11134688653314041.
TEST(MannWhitney, MatchesScipyExactExample) {
  const std::vector<double> males{19, 22, 16, 29, 24}, females{20, 11, 17, 12};
  const auto t = mann_whitney_u(males, females);
  EXPECT_DOUBLE_EQ(t.u1, 17.0);
  EXPECT_TRUE(t.exact);
  EXPECT_NEAR(t.p_value, 0.1111111111111111, 1e-12);
}

TEST(MannWhitney, NormalApproximationMatchesScipyAsymptotic) {
  // A tie forces the asymptotic branch (scipy's method="auto" does the same).
  const std::vector<double> x{19, 22, 16, 29, 24}, y{20, 11, 17, 12, 19};
  const auto t = mann_whitney_u(x, y);
  EXPECT_FALSE(t.exact);  // tie at 19
  // Ranks: 11:1 12:2 16:3 17:4 19:5.5 19:5.5 20:7 22:8 24:9 29:10 -> R1 = 35.5, U1 = 20.5;
  // tie term 6; sigma^2 = 25/12 * (11 - 6/90) = 22.7778; z = (20.5 - 12.5 - 0.5)/4.7726.
  EXPECT_DOUBLE_EQ(t.u1, 20.5);
  EXPECT_NEAR(t.p_value, 0.11607394, 1e-7);
}

TEST(MannWhitney, AsymptoticMethodMatchesScipyExample) {
  // scipy documents p = 0.11134688653314041 for the same data with method="asymptotic".
  const std::vector<double> males{19, 22, 16, 29, 24}, females{20, 11, 17, 12};
  const auto t = mann_whitney_u(males, females, UMethod::Asymptotic);
  EXPECT_FALSE(t.exact);
  EXPECT_NEAR(t.p_value, 0.11134688653314041, 1e-12);
}

TEST(MannWhitney, CompletelySeparatedSmallSamples) {
  const std::vector<double> a{1, 2, 3}, b{4, 5, 6};
  const auto t = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(t.u1, 0);
  EXPECT_NEAR(t.p_value, 0.1, 1e-12);  // 2 / C(6,3)
  EXPECT_NEAR(t.min_p, 0.1, 1e-12);
  const std::vector<double> c{1, 2, 3, 4, 5}, d{6, 7, 8, 9, 10};
  EXPECT_NEAR(mann_whitney_u(c, d).p_value, 2.0 / 252.0, 1e-12);
}

TEST(MannWhitney, IdenticalSamplesAreNotSignificant) {
  const std::vector<double> a{5, 5, 5, 5}, b{5, 5, 5, 5};
  const auto t = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(t.p_value, 1.0);
}

TEST(MannWhitney, LargeSamplesUseNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(100 + i);
    b.push_back(110 + i);
  }
  const auto t = mann_whitney_u(a, b);
  EXPECT_FALSE(t.exact);
  // 100..119 against 110..129: ten tied pairs; U1 = 50 of 400.
  EXPECT_DOUBLE_EQ(t.u1, 50);
  EXPECT_NEAR(t.p_value, 5.2125496e-5, 1e-10);
  EXPECT_LT(t.p_value, 0.001);
}

TEST(MannWhitney, SymmetricInItsArguments) {
  const std::vector<double> a{3.1, 2.7, 3.3, 2.9}, b{2.2, 2.5, 2.4, 3.0, 2.1};
  EXPECT_DOUBLE_EQ(mann_whitney_u(a, b).p_value, mann_whitney_u(b, a).p_value);
}

TEST(MannWhitney, MinimumAchievablePValue) {
  EXPECT_NEAR(min_two_sided_p(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(min_two_sided_p(4, 4), 2.0 / 70.0, 1e-12);
  EXPECT_DOUBLE_EQ(min_two_sided_p(1, 1), 1.0);
}

TEST(MannWhitney, EmptySampleIsRejected) {
  const std::vector<double> a{1.0}, none;
  EXPECT_THROW(mann_whitney_u(a, none), std::invalid_argument);
}

TEST(Median, OddEvenAndEmpty) {
  const std::vector<double> odd{3, 1, 2}, even{4, 1, 3, 2}, none;
  EXPECT_DOUBLE_EQ(median(odd), 2);
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_DOUBLE_EQ(median(none), 0);
}

}  // namespace
}  // namespace gdsb::report
