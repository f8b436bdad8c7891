// The level gate's pieces (issue 41), on series whose answer is worked out by hand: the noise
// of a known sample, where a clean step is cut, and each state of the verdict.
#include "gdsb/report/level_gate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gdsb::report {
namespace {

// 10 + 0.1 x a fixed zig-zag: night-to-night differences of 0.2 and 0 alternate.
std::vector<double> flat(std::size_t n, double level = 10.0) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(level + (i % 4 == 1 ? 0.1 : i % 4 == 3 ? -0.1 : 0.0));
  return v;
}

TEST(LevelGate, NoiseOfDifferences) {
  // Differences 0.1, -0.1, -0.1, 0.1, ...: all of |d| = 0.1; the root mean square of the
  // kept nine tenths, rescaled for the trim, then / sqrt 2.
  const auto v = flat(41);
  const double noise = night_noise(v);
  EXPECT_GT(noise, 0.1 / std::sqrt(2.0));  // the trim's rescaling only raises it
  EXPECT_LT(noise, 0.1 / std::sqrt(2.0) * 1.6);
  // One night 100 noise units off moves two differences of forty: the trim drops them.
  auto spiked = v;
  spiked[20] += 10;
  EXPECT_NEAR(night_noise(spiked), noise, 0.2 * noise);
  EXPECT_EQ(night_noise(std::vector<double>{5.0}), 0.0);
}

TEST(LevelGate, CutsACleanStepWhereItIs) {
  auto v = flat(30);
  for (std::size_t i = 18; i < v.size(); ++i) v[i] -= 2.0;
  EXPECT_EQ(level_shifts(v, 0.1, 3, 3.0), (std::vector<std::size_t>{18}));
  // One bad night is no level: the cut needs three.
  auto one = flat(30);
  one[12] -= 2.0;
  EXPECT_TRUE(level_shifts(one, 0.1, 3, 3.0).empty());
}

TEST(LevelGate, TooFewNights) {
  const auto v = judge_level(flat(5), true, 0);
  EXPECT_EQ(v.state, LevelVerdict::State::TooFew);
  EXPECT_NE(v.why.find("5 nights: too few to judge"), std::string::npos);
}

TEST(LevelGate, OneBadNightWarnsTwoWarnThreeAreRed) {
  auto v = flat(30);
  v[29] -= 2.0;
  EXPECT_EQ(judge_level(v, true, 0).state, LevelVerdict::State::Warning);
  v[28] -= 2.0;
  EXPECT_EQ(judge_level(v, true, 0).state, LevelVerdict::State::Warning);
  v[27] -= 2.0;
  const auto red = judge_level(v, true, 0);
  EXPECT_EQ(red.state, LevelVerdict::State::Regression);
  EXPECT_EQ(red.beyond, 3U);
  EXPECT_EQ(red.drop_begin, 27U);
  // Latency: the same rise is the regression, the same drop an improvement.
  std::vector<double> up = flat(30), down = flat(30);
  for (std::size_t i = 27; i < 30; ++i) up[i] += 2.0, down[i] -= 2.0;
  EXPECT_EQ(judge_level(up, false, 0).state, LevelVerdict::State::Regression);
  EXPECT_EQ(judge_level(down, false, 0).state, LevelVerdict::State::Ok);
}

TEST(LevelGate, AMaskedRegressionStaysRedUntilAcceptedOrRecovered) {
  // 30 nights at 10, 15 at 6, 15 at 6.5 (the case).
  std::vector<double> v = flat(30);
  for (const double x : flat(15, 6.0)) v.push_back(x);
  for (const double x : flat(15, 6.5)) v.push_back(x);
  const auto red = judge_level(v, true, 0);
  EXPECT_EQ(red.state, LevelVerdict::State::Regression);
  ASSERT_TRUE(red.regression_at.has_value());
  EXPECT_EQ(*red.regression_at, 30U);
  EXPECT_NEAR(red.reference, 10.0, 0.01);
  // Accepted through the first night of the drop: the 6.5 level is an improvement on it.
  const auto accepted = judge_level(v, true, 31);
  EXPECT_EQ(accepted.state, LevelVerdict::State::Ok);
  ASSERT_TRUE(accepted.accepted_at.has_value());
  EXPECT_EQ(*accepted.accepted_at, 30U);
  // Recovered: back to 10 for 15 nights.
  for (const double x : flat(15)) v.push_back(x);
  const auto back = judge_level(v, true, 0);
  EXPECT_EQ(back.state, LevelVerdict::State::Ok);
  EXPECT_TRUE(back.regression_at.has_value());
}

TEST(LevelGate, AFreshDropAcceptedBeforeItIsALevel) {
  auto v = flat(30);
  for (std::size_t i = 27; i < 30; ++i) v[i] -= 2.0;
  EXPECT_EQ(judge_level(v, true, 30).state, LevelVerdict::State::Accepted);
}

TEST(LevelGate, MinimumMagnitudeHoldsASmallDropGreen) {
  auto v = flat(30);
  for (std::size_t i = 27; i < 30; ++i) v[i] -= 0.5;  // 5%, far beyond the 0.07 noise
  EXPECT_EQ(judge_level(v, true, 0).state, LevelVerdict::State::Regression);
  LevelOptions o;
  o.min_magnitude = 0.10;
  EXPECT_NE(judge_level(v, true, 0, o).state, LevelVerdict::State::Regression);
  o.min_runs = 0;
  EXPECT_THROW(judge_level(v, true, 0, o), std::invalid_argument);
}

}  // namespace
}  // namespace gdsb::report
