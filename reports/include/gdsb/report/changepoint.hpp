// Change points in a series of runs: E-Divisive with means (Matteson and James 2014) as
// Apache Otava 0.8.0 runs it, so a gate on history reports the shifts Otava would report.
//
// Two methods, both Otava's:
//  - Windowed (Otava's default, "Hunter", Fleming et al. ICPE 2023): E-Divisive inside
//    sliding windows of `window` runs (step window/2), each split kept when Student's t-test
//    between its neighbouring segments gives p <= 10 x max_pvalue ("weak" points), then a merge
//    pass drops the weakest point while its p >= max_pvalue or its magnitude <= min_magnitude,
//    re-testing its neighbours each time. Deterministic.
//  - Permutation (Otava's --orig-edivisive): E-Divisive over the whole series, each split
//    kept when a permutation test (runs shuffled within the current segments) gives
//    p <= max_pvalue. Random: the shuffles come from our own generator seeded with `seed`, so
//    the result is reproducible here, but its p-values are not Otava's bit for bit (Otava
//    draws from numpy). O(n^2) memory and time per permutation: meant for short series.
//
// Pure: no I/O, no globals. The series is in run order; index i is the i-th run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdsb/report/level_gate.hpp"

namespace gdsb::report {

// Level: the history gate's own method (level_gate.hpp), what `gdsb-report history` and
// `gate --history` use unless told `--method otava`; Windowed and Permutation are Otava's.
enum class ChangePointMethod { Windowed, Permutation, Level };

struct ChangePointOptions {
  // A change point is kept when its p-value is <= max_pvalue (Otava -P, default 0.001) ...
  double max_pvalue = 0.001;
  // ... and (Windowed only) its magnitude is > min_magnitude (Otava -M, default 0.0; a
  // relative change: 0.05 = 5%).
  double min_magnitude = 0.0;
  ChangePointMethod method = ChangePointMethod::Windowed;
  std::size_t window = 50;          // Windowed: runs analysed at once (Otava --window), >= 2
  std::size_t permutations = 100;   // Permutation: shuffles per candidate (Otava uses 100)
  std::uint64_t seed = 0;           // Permutation: seed of the shuffles
  LevelOptions level;               // Level: its knobs (max_pvalue and window are not used)
};

// One side of a change point: the runs [begin, end) between it and its neighbouring change
// point (or the series' start/end).
struct SegmentSummary {
  std::size_t begin = 0;
  std::size_t end = 0;      // one past the last run
  double mean = 0;
  double stddev = 0;        // population standard deviation (ddof 0), as Otava reports it
  double median = 0;
  double q1 = 0;            // quartiles, linear interpolation (numpy's default): the spread
  double q3 = 0;
};

struct ChangePoint {
  std::size_t index = 0;    // first run of the new segment (as Otava's index), >= 1
  double p_value = 1.0;     // Windowed: t-test between before and after; Permutation: as tested
  // Relative change of the mean, after / before - 1, in percent (0 when the mean before is 0),
  // as Otava's forward_change_percent.
  double forward_change_percent = 0;
  // max(|after/before - 1|, |before/after - 1|), a fraction, as Otava's magnitude.
  double magnitude = 0;
  SegmentSummary before;
  SegmentSummary after;
};

// A value that is NaN or infinite: the series cannot be analysed. `index` is its run.
class NonFiniteValue : public std::invalid_argument {
 public:
  NonFiniteValue(std::size_t index, double value);
  std::size_t index() const noexcept { return index_; }

 private:
  std::size_t index_;
};

// Change points of `series`, sorted by index. A series of fewer than 3 runs has none (Otava's
// t-test needs 3 values); 3 runs can have one only when the two sides are very far apart. Throws NonFiniteValue for NaN/inf, and
// std::invalid_argument for options out of range (window < 2, max_pvalue outside [0, 1],
// min_magnitude < 0, permutations == 0 with the Permutation method).
std::vector<ChangePoint> find_change_points(std::span<const double> series,
                                            const ChangePointOptions& options = {});

// The change points at `indexes` (sorted, inside (0, series.size())), each described by its
// final neighbouring segments: p-value of Otava's t-test between them, change and magnitude.
std::vector<ChangePoint> describe_change_points(std::span<const double> series,
                                                std::span<const std::size_t> indexes);

// The segments the change points cut the series into, in order (one more than the points;
// none for an empty series). Points must be sorted and within (0, series.size()).
std::vector<SegmentSummary> summarize_segments(std::span<const double> series,
                                               std::span<const ChangePoint> points);

}  // namespace gdsb::report
