#include "gdsb/report/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

// Student's t: df = 1 is the Cauchy law, p = 1 - 2 atan(|t|) / pi; df = 2 has
// p = 1 - |t| / sqrt(2 + t^2). Other references: scipy 1.10, 2 * scipy.stats.t.sf(t, df).
TEST(StudentT, ClosedFormsForOneAndTwoDegrees) {
  const double pi = std::acos(-1.0);
  for (const double t : {0.0, 0.5, 1.0, 3.0, 63.657, 1e4}) {
    EXPECT_NEAR(student_t_two_sided_p(t, 1), 1 - 2 * std::atan(t) / pi, 1e-13) << t;
    EXPECT_NEAR(student_t_two_sided_p(-t, 2), 1 - t / std::sqrt(2 + t * t), 1e-13) << t;
  }
}

TEST(StudentT, MatchesScipyIncludingTinyTails) {
  EXPECT_NEAR(student_t_two_sided_p(2.0, 10), 0.07338803477074039, 1e-13);
  EXPECT_NEAR(student_t_two_sided_p(10, 3), 0.0021283990584141494, 1e-15);
  // 40 with 98 degrees: relative accuracy in the far tail decides p <= 0.001 comparisons.
  EXPECT_NEAR(student_t_two_sided_p(40, 98) / 1.6633877203685742e-62, 1.0, 1e-9);
  EXPECT_NEAR(student_t_two_sided_p(1.96, 1e6), 0.04999606758526978, 1e-10);
}

TEST(StudentT, InfiniteAndNaN) {
  EXPECT_EQ(student_t_two_sided_p(std::numeric_limits<double>::infinity(), 5), 0.0);
  EXPECT_TRUE(std::isnan(student_t_two_sided_p(std::nan(""), 5)));
}

// numpy.quantile's default (linear) on [1, 2, 3, 4, 10]: 2, 3, 4; on [1, 2, 3, 4]: 1.75, 2.5, 3.25.
TEST(Quantile, LinearInterpolationAsNumpy) {
  const std::vector<double> odd{1, 2, 3, 4, 10}, even{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile_of_sorted(odd, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(odd, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(odd, 0.75), 4.0);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(even, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(even, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(even, 0.75), 3.25);
  EXPECT_EQ(quantile_of_sorted({}, 0.5), 0.0);
}

}  // namespace
}  // namespace gdsb::report
