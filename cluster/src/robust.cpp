#include "gdsb/cluster/robust.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gdsb::cluster {
namespace {

// The middle value (the mean of the two middle ones), found without sorting the rest: a
// class of 25,000 nodes has two of these per GPU and figure.
double median_of(std::vector<double>& v) {
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
}

}  // namespace

RobustStats robust_stats(std::vector<double> values) {
  RobustStats s;
  s.count = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.median = median_of(values);
  double sum = 0;
  for (double& v : values) {
    v = std::abs(v - s.median);
    sum += v;
  }
  s.mean_ad = sum / static_cast<double>(values.size());
  s.mad = median_of(values);
  return s;
}

double robust_z(double x, const RobustStats& s) {
  const double d = x - s.median;
  if (s.mad > 0) return 0.6745 * d / s.mad;
  if (s.mean_ad > 0) return d / (1.253314 * s.mean_ad);
  if (d == 0) return 0;
  return d > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

bool is_outlier(double x, double z, const RobustStats& s, double z_threshold, double min_relative) {
  if (s.count < 3) return false;  // two nodes cannot say which one is odd
  if (std::abs(z) <= z_threshold) return false;
  const double scale = std::abs(s.median);
  if (scale == 0) return x != 0;
  return std::abs(x - s.median) / scale >= min_relative;
}

}  // namespace gdsb::cluster
