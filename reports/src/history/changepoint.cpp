#include "gdsb/report/changepoint.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "edivisive.hpp"
#include "gdsb/report/stats.hpp"

namespace gdsb::report {
namespace {

using edivisive::Candidate;
using edivisive::Interval;

// Otava's TTestSignificanceTester.compare: Student's t-test with equal variances computed from
// the two sides' means and POPULATION standard deviations (numpy's default ddof 0, which Otava
// passes where scipy expects sample ones). Kept as is so p-values decide as Otava's do.
struct SideStats {
  double mean_before = 0;
  double mean_after = 0;
  double p_value = 1.0;
  double magnitude = 0;
};

double mean_of(std::span<const double> v) {
  double sum = 0;
  for (const double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double population_stddev(std::span<const double> v, double mean) {
  double sum = 0;
  for (const double x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(v.size()));
}

double forward_change(double before, double after) { return before == 0 ? 0 : after / before - 1; }

SideStats compare_sides(std::span<const double> values, std::size_t begin, std::size_t at,
                        std::size_t end) {
  const auto left = values.subspan(begin, at - begin);
  const auto right = values.subspan(at, end - at);
  SideStats s;
  s.mean_before = mean_of(left);
  s.mean_after = mean_of(right);
  const double sd_l = left.size() >= 2 ? population_stddev(left, s.mean_before) : 0.0;
  const double sd_r = right.size() >= 2 ? population_stddev(right, s.mean_after) : 0.0;
  const double n_l = static_cast<double>(left.size());
  const double n_r = static_cast<double>(right.size());
  if (n_l + n_r > 2) {
    const double df = n_l + n_r - 2;
    const double pooled = ((n_l - 1) * sd_l * sd_l + (n_r - 1) * sd_r * sd_r) / df;
    const double t = (s.mean_before - s.mean_after) / std::sqrt(pooled * (1 / n_l + 1 / n_r));
    s.p_value = student_t_two_sided_p(t, df);  // 0/0 gives NaN: never significant
  }
  s.magnitude = std::max(std::fabs(forward_change(s.mean_before, s.mean_after)),
                         std::fabs(forward_change(s.mean_after, s.mean_before)));
  return s;
}

// Otava's split step: E-Divisive in windows of `window` runs every window/2 runs, each split
// kept at the relaxed first-pass p; the union of the points found ("weak" points), sorted.
std::vector<std::size_t> weak_points(std::span<const double> values, std::size_t window,
                                     double first_pass_pvalue) {
  std::vector<std::size_t> weak;
  const std::size_t step = window / 2;
  std::size_t start = 0;
  while (start < values.size()) {
    const std::size_t end = std::min(start + window, values.size());
    const auto local = values.subspan(start, end - start);
    const auto tester = [&](const Candidate& c, std::span<const Interval> intervals) {
      for (const Interval& iv : intervals) {
        if (iv.begin < c.index && c.index < iv.end) {
          return compare_sides(local, iv.begin, c.index, iv.end).p_value;
        }
      }
      return 1.0;  // unreachable: a candidate always lies inside its interval
    };
    const auto found = edivisive::divide(local, first_pass_pvalue, tester);
    const std::size_t last = found.empty() ? 0 : found.back().index + start;
    for (const auto& f : found) {
      if (std::find(weak.begin(), weak.end(), f.index + start) == weak.end()) {
        weak.push_back(f.index + start);
      }
    }
    start = std::max(last, start + step);
  }
  std::sort(weak.begin(), weak.end());
  return weak;
}

struct Scored {
  std::size_t index;
  SideStats stats;
};

SideStats stats_between(std::span<const double> values, const std::vector<Scored>& points,
                        std::size_t i) {
  const std::size_t begin = i == 0 ? 0 : points[i - 1].index;
  const std::size_t end = i + 1 < points.size() ? points[i + 1].index : values.size();
  return compare_sides(values, begin, points[i].index, end);
}

// Otava's merge step: while the point with the largest p fails max_pvalue, or else the point
// with the smallest magnitude is not above min_magnitude, remove it and re-test. As Otava does,
// the two points from the removed one's position on are re-tested (its right neighbour and the
// next); the left neighbour keeps the figures it had, and the decisions follow those figures.
std::vector<std::size_t> merge(std::span<const double> values, std::vector<std::size_t> weak,
                               double max_pvalue, double min_magnitude) {
  std::vector<Scored> points;
  for (const std::size_t w : weak) points.push_back({w, {}});
  for (std::size_t i = 0; i < points.size(); ++i) points[i].stats = stats_between(values, points, i);
  while (!points.empty()) {
    std::size_t weakest = 0;  // first largest p, with Python max()'s comparisons (NaN never wins)
    for (std::size_t i = 1; i < points.size(); ++i) {
      if (points[i].stats.p_value > points[weakest].stats.p_value) weakest = i;
    }
    if (points[weakest].stats.p_value < max_pvalue) {
      weakest = 0;
      for (std::size_t i = 1; i < points.size(); ++i) {
        if (points[i].stats.magnitude < points[weakest].stats.magnitude) weakest = i;
      }
      if (points[weakest].stats.magnitude > min_magnitude) break;
    }
    points.erase(points.begin() + static_cast<std::ptrdiff_t>(weakest));
    for (std::size_t i = weakest; i < std::min(weakest + 2, points.size()); ++i) {
      points[i].stats = stats_between(values, points, i);
    }
  }
  std::vector<std::size_t> out;
  for (const Scored& s : points) out.push_back(s.index);
  return out;
}

SegmentSummary summarize(std::span<const double> values, std::size_t begin, std::size_t end) {
  SegmentSummary s;
  s.begin = begin;
  s.end = end;
  if (begin >= end) return s;
  const auto part = values.subspan(begin, end - begin);
  s.mean = mean_of(part);
  s.stddev = population_stddev(part, s.mean);
  std::vector<double> sorted(part.begin(), part.end());
  std::sort(sorted.begin(), sorted.end());
  s.median = quantile_of_sorted(sorted, 0.5);
  s.q1 = quantile_of_sorted(sorted, 0.25);
  s.q3 = quantile_of_sorted(sorted, 0.75);
  return s;
}

void check_options(const ChangePointOptions& o) {
  if (o.window < 2) throw std::invalid_argument("change points: window must be at least 2 runs");
  if (!(o.max_pvalue >= 0 && o.max_pvalue <= 1)) {
    throw std::invalid_argument("change points: max p-value must be within [0, 1]");
  }
  if (!(o.min_magnitude >= 0)) {
    throw std::invalid_argument("change points: minimum magnitude must be >= 0");
  }
  if (o.method == ChangePointMethod::Permutation && o.permutations == 0) {
    throw std::invalid_argument("change points: the permutation test needs at least 1 permutation");
  }
}

std::string non_finite_message(std::size_t index, double value) {
  std::ostringstream m;
  m << "change points: run " << index << " has the value " << value
    << "; only finite values can be analysed (drop or fill the missing runs first)";
  return m.str();
}

}  // namespace

NonFiniteValue::NonFiniteValue(std::size_t index, double value)
    : std::invalid_argument(non_finite_message(index, value)), index_(index) {}

std::vector<ChangePoint> find_change_points(std::span<const double> series,
                                            const ChangePointOptions& options) {
  check_options(options);
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!std::isfinite(series[i])) throw NonFiniteValue(i, series[i]);
  }
  std::vector<std::size_t> indexes;
  std::vector<double> p_values;
  if (options.method == ChangePointMethod::Windowed) {
    // Otava relaxes the first pass (10x below 0.05, 2x below 0.5) and lets merge tighten it.
    const double p = options.max_pvalue;
    const double first_pass = p < 0.05 ? p * 10 : (p < 0.5 ? p * 2 : p);
    indexes = merge(series, weak_points(series, options.window, first_pass), options.max_pvalue,
                    options.min_magnitude);
  } else if (options.method == ChangePointMethod::Level) {
    indexes = level_shifts(series, series_noise(series, options.level), options.level.min_runs, options.level.penalty);
  } else {
    edivisive::PermutationTester tester(series, options.permutations, options.seed);
    for (const auto& f : edivisive::divide(series, options.max_pvalue, std::ref(tester))) {
      indexes.push_back(f.index);
      p_values.push_back(f.p_value);
    }
  }
  auto out = describe_change_points(series, indexes);
  for (std::size_t i = 0; i < p_values.size(); ++i) out[i].p_value = p_values[i];
  return out;
}

std::vector<ChangePoint> describe_change_points(std::span<const double> series,
                                                std::span<const std::size_t> indexes) {
  std::vector<ChangePoint> out;
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    const std::size_t begin = i == 0 ? 0 : indexes[i - 1];
    const std::size_t end = i + 1 < indexes.size() ? indexes[i + 1] : series.size();
    const SideStats s = compare_sides(series, begin, indexes[i], end);
    ChangePoint c;
    c.index = indexes[i];
    c.p_value = s.p_value;
    c.forward_change_percent = forward_change(s.mean_before, s.mean_after) * 100.0;
    c.magnitude = s.magnitude;
    c.before = summarize(series, begin, indexes[i]);
    c.after = summarize(series, indexes[i], end);
    out.push_back(c);
  }
  return out;
}

std::vector<SegmentSummary> summarize_segments(std::span<const double> series,
                                               std::span<const ChangePoint> points) {
  std::vector<SegmentSummary> out;
  if (series.empty()) return out;
  std::size_t begin = 0;
  for (const ChangePoint& c : points) {
    if (c.index <= begin || c.index >= series.size()) {
      throw std::invalid_argument("summarize_segments: change points must be sorted, inside the series");
    }
    out.push_back(summarize(series, begin, c.index));
    begin = c.index;
  }
  out.push_back(summarize(series, begin, series.size()));
  return out;
}

}  // namespace gdsb::report
