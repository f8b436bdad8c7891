#include "gdsb/report/level_gate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "gdsb/report/stats.hpp"

namespace gdsb::report {
namespace {

double median_of(std::vector<double> v) { return median(v); }

// E[Z^2 | |Z| < c] for a standard normal Z: what trimming |Z| at c leaves of its variance.
double trimmed_variance(double c) {
  const double kept = std::erf(c / std::numbers::sqrt2);
  const double density = std::exp(-c * c / 2) / std::sqrt(2 * std::numbers::pi);
  return (kept - 2 * c * density) / kept;
}

// The c with P(|Z| < c) = share, by bisection (erf is monotonic).
double abs_normal_quantile(double share) {
  double lo = 0, hi = 10;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid / std::numbers::sqrt2) < share ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The noise of the night-to-night differences d: their root mean square with the largest tenth
// left out (a step moves one difference, a spike two), scaled back to the normal's sigma
// (d = x[i] - x[i-1] has twice the variance of x). More efficient than the median's 37%, so a
// few dozen nights give a threshold that holds. 0 for no difference.
double noise_of_differences(std::vector<double> d) {
  if (d.empty()) return 0;
  for (double& x : d) x = std::fabs(x);
  std::sort(d.begin(), d.end());
  const std::size_t drop = d.size() >= 5 ? std::max<std::size_t>(1, d.size() / 10) : 0;
  const std::size_t kept = d.size() - drop;
  double sum = 0;
  for (std::size_t i = 0; i < kept; ++i) sum += d[i] * d[i];
  const double share = static_cast<double>(kept) / static_cast<double>(d.size());
  const double factor = drop == 0 ? 1.0 : trimmed_variance(abs_normal_quantile(share));
  return std::sqrt(sum / static_cast<double>(kept) / factor / 2);
}

// Noise of the nights in `indexes` (consecutive indexes only: a difference across a gap or a
// level shift is not the noise).
double noise_of(std::span<const double> values, std::span<const std::size_t> indexes, std::size_t& pairs) {
  std::vector<double> d;
  for (std::size_t k = 1; k < indexes.size(); ++k)
    if (indexes[k] == indexes[k - 1] + 1) d.push_back(values[indexes[k]] - values[indexes[k - 1]]);
  pairs = d.size();
  return noise_of_differences(std::move(d));
}

std::vector<double> clipped(std::span<const double> values, double noise) {
  std::vector<double> out(values.begin(), values.end());
  const std::size_t n = values.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t lo = i >= 2 ? i - 2 : 0;
    const std::size_t hi = std::min(n, i + 3);
    const double m = median_of({values.begin() + static_cast<std::ptrdiff_t>(lo),
                                values.begin() + static_cast<std::ptrdiff_t>(hi)});
    out[i] = std::clamp(values[i], m - 3 * noise, m + 3 * noise);
  }
  return out;
}

void check(const LevelOptions& o) {
  if (o.min_runs < 1) throw std::invalid_argument("level gate: min_runs must be at least 1");
  if (!(o.threshold > 0)) throw std::invalid_argument("level gate: the threshold must be above 0 noise units");
  if (!(o.penalty >= 0)) throw std::invalid_argument("level gate: the penalty must be 0 or more");
  if (!(o.noise_floor >= 0) || !(o.min_magnitude >= 0))
    throw std::invalid_argument("level gate: noise floor and minimum magnitude must be 0 or more");
}

// The newest nights' noise replaces the reference's when it is this much larger: over 19
// differences against many more, a ratio of variances above 2.25 happens by chance about 1% of
// the time (F distribution), and noise that tripled gives 9.
constexpr double kNoiseGrew = 1.5;

}  // namespace

double night_noise(std::span<const double> values) {
  std::vector<std::size_t> all(values.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::size_t pairs = 0;
  return noise_of(values, all, pairs);
}

double series_noise(std::span<const double> values, const LevelOptions& o) {
  return std::max(night_noise(values), o.noise_floor * std::fabs(median(values)));
}

std::vector<std::size_t> level_shifts(std::span<const double> values, double noise, std::size_t min_segment,
                                      double penalty) {
  const std::size_t n = values.size();
  const std::size_t L = std::max<std::size_t>(min_segment, 1);
  if (n < 2 * L || !(noise > 0)) return {};
  const auto y = clipped(values, noise);
  std::vector<double> s1(n + 1, 0), s2(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = y[i] / noise;
    s1[i + 1] = s1[i] + v;
    s2[i + 1] = s2[i] + v * v;
  }
  const auto cost = [&](std::size_t a, std::size_t b) {
    const double sum = s1[b] - s1[a];
    return s2[b] - s2[a] - sum * sum / static_cast<double>(b - a);
  };
  const double beta = penalty * std::log(static_cast<double>(n));
  constexpr double inf = std::numeric_limits<double>::infinity();
  // best[t]: the least cost of nights [0, t) cut into levels of >= L nights; from[t]: its last cut.
  std::vector<double> best(n + 1, inf);
  std::vector<std::size_t> from(n + 1, 0);
  best[0] = -beta;
  for (std::size_t t = L; t <= n; ++t) {
    for (std::size_t s = 0; s + L <= t; ++s) {
      if (best[s] == inf) continue;
      const double c = best[s] + cost(s, t) + beta;
      if (c < best[t]) best[t] = c, from[t] = s;
    }
  }
  std::vector<std::size_t> cuts;
  for (std::size_t t = from[n]; t > 0; t = from[t]) cuts.push_back(t);
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

LevelVerdict judge_level(std::span<const double> values, bool higher_is_better, std::size_t accepted_end,
                         const LevelOptions& o) {
  check(o);
  LevelVerdict v;
  const std::size_t n = values.size();
  const std::size_t m = o.min_runs;
  constexpr std::size_t kReferenceNights = 3;
  if (n < m + kReferenceNights) {
    v.why = std::to_string(n) + (n == 1 ? " night" : " nights") + ": too few to judge (the gate needs " +
            std::to_string(kReferenceNights) + " for a reference, then the newest " + std::to_string(m) + ")";
    return v;
  }
  const double floor = o.noise_floor * std::fabs(median(values));
  const double noise_all = series_noise(values, o);
  v.shifts = level_shifts(values, noise_all, m, o.penalty);
  const double sign = higher_is_better ? 1.0 : -1.0;
  const std::size_t judged = n - m;  // nights [judged, n) are the newest, never the reference

  // The newest nights' own noise: a series that got noisier is judged on its new noise.
  std::size_t pairs = 0;
  std::vector<std::size_t> recent;
  for (std::size_t i = n > o.noise_window ? n - o.noise_window : 0; i < n; ++i)
    if (std::find(v.shifts.begin(), v.shifts.end(), i) == v.shifts.end()) recent.push_back(i);  // not across a shift
  const double noise_recent = noise_of(values, recent, pairs);
  // The newest nights' noise counts only when it is clearly larger (an estimate from a few
  // nights scatters: the larger of two estimates would widen every threshold by chance).
  const auto with_recent = [&](double noise) { return noise_recent > kNoiseGrew * noise ? noise_recent : noise; };
  const double walk_noise = with_recent(noise_all);

  // The levels: [bounds[k], bounds[k + 1]).
  std::vector<std::size_t> bounds{0};
  bounds.insert(bounds.end(), v.shifts.begin(), v.shifts.end());
  bounds.push_back(n);
  const auto nights_of = [&](std::size_t k) {
    std::vector<std::size_t> out;
    for (std::size_t i = bounds[k]; i < std::min(bounds[k + 1], judged); ++i) out.push_back(i);
    return out;
  };
  const auto level_of = [&](std::span<const std::size_t> nights) {
    std::vector<double> x;
    for (const auto i : nights) x.push_back(values[i]);
    return median_of(std::move(x));
  };
  const auto whole_level = [&](std::size_t k) {
    return median_of({values.begin() + static_cast<std::ptrdiff_t>(bounds[k]),
                      values.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1])});
  };
  // A level differs from the reference when its median and the reference's are apart by more
  // than kLevelApart standard errors of the two medians (each pi/2 x sigma^2 / nights): the cut
  // searched every place, so a level found in noise must not move the reference.
  constexpr double kLevelApart = 4.0;
  std::vector<std::size_t> reference = nights_of(0);
  std::size_t current = 0;  // the level the newest nights belong to
  for (std::size_t k = 1; k + 1 < bounds.size() && bounds[k] < judged; ++k) {
    current = k;
    const double ref = level_of(reference);
    const std::size_t nights = bounds[k + 1] - bounds[k];
    const double error = walk_noise * std::sqrt(std::numbers::pi / 2 *
                                                (1.0 / static_cast<double>(reference.size()) +
                                                 1.0 / static_cast<double>(nights)));
    const double worse_by = sign * (ref - whole_level(k));
    auto own = nights_of(k);
    if (worse_by > kLevelApart * error && bounds[k] >= accepted_end) {
      v.regression_at = bounds[k];
      current = bounds.size() - 2;
      break;
    }
    if (std::fabs(worse_by) > kLevelApart * error) {
      if (worse_by > 0) v.accepted_at = bounds[k];
      reference = std::move(own);  // an accepted regression or an improvement: the new normal
    } else {
      reference.insert(reference.end(), own.begin(), own.end());  // the same level
    }
  }
  if (bounds.size() >= 2) current = bounds.size() - 2;
  v.reference_begin = reference.front();
  v.reference_end = reference.back() + 1;
  v.reference_nights = reference.size();
  v.reference = level_of(reference);
  const double noise_ref = noise_of(values, reference, pairs);
  const double ref_noise = pairs >= 5 ? noise_ref : noise_all;
  v.noise = std::max(with_recent(ref_noise), floor);
  if (!(v.noise > 0)) v.noise = std::numeric_limits<double>::min();
  // The reference's median is itself uncertain (its variance is pi/2 x sigma^2 / nights).
  const double spread = o.threshold * v.noise *
                        std::sqrt(1 + std::numbers::pi / (2 * static_cast<double>(v.reference_nights)));
  v.threshold = v.reference - sign * spread;
  const auto beyond = [&](double x) { return sign * (v.threshold - x) > 0; };
  v.newest = m;
  std::vector<double> newest(values.begin() + static_cast<std::ptrdiff_t>(judged), values.end());
  v.beyond = static_cast<std::size_t>(std::count_if(newest.begin(), newest.end(), beyond));
  v.newest_median = median_of(newest);
  v.current_level = whole_level(current);
  v.drop_begin = n;
  while (v.drop_begin > 0 && beyond(values[v.drop_begin - 1])) --v.drop_begin;
  const auto big_enough = [&](double level) {
    return o.min_magnitude == 0 || sign * (v.reference - level) > o.min_magnitude * std::fabs(v.reference);
  };
  // A regression that is a level of its own stays red while the newest level is beyond the
  // threshold (its median, not each night: a level 3 noise units down is red every night);
  // a drop of the newest nights is red when all of them are beyond it.
  const bool level_red = v.regression_at && beyond(v.current_level) && big_enough(v.current_level);
  const bool drop_red = v.beyond == m && big_enough(v.newest_median);
  if (level_red) {
    v.state = LevelVerdict::State::Regression;
  } else if (drop_red) {
    v.state = v.drop_begin < accepted_end ? LevelVerdict::State::Accepted : LevelVerdict::State::Regression;
  } else {
    v.state = v.beyond > 0 ? LevelVerdict::State::Warning : LevelVerdict::State::Ok;
  }
  return v;
}

}  // namespace gdsb::report
