// Robust statistics across nodes: median, MAD and the robust z-score
// z = 0.6745 * (x - median) / MAD (Iglewicz and Hoaglin), which one broken node cannot
// drag along the way a mean and standard deviation are.
#pragma once

#include <optional>
#include <vector>

namespace gdsb::cluster {

struct RobustStats {
  double median = 0;
  double mad = 0;      // median of |x - median|
  double mean_ad = 0;  // mean of |x - median|: robust_z's stand-in when MAD is 0
  int count = 0;
};

// Over the values given; count 0 (and zeros) when there are none. O(N log N), once per
// group, so that judging each of N values against it stays O(1).
RobustStats robust_stats(std::vector<double> values);

// How far x is from the others. When MAD is 0 (more than half the nodes agree exactly,
// common with few nodes or quantized figures) the z-score is undefined; then the mean
// absolute deviation scaled by 0.7979 stands in (as Iglewicz and Hoaglin suggest), and when
// that is 0 as well, x equal to the median gives 0 and any other value is infinitely far.
double robust_z(double x, const RobustStats& s);

// Whether x is an outlier: |z| above z_threshold AND at least min_relative (0.10 = 10%)
// away from the median, so that tiny but consistent differences (MAD close to 0) are not
// flagged as failures.
bool is_outlier(double x, double z, const RobustStats& s, double z_threshold, double min_relative);

}  // namespace gdsb::cluster
