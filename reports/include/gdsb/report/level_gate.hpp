// The history gate's own method (issue 41): is the newest level of a series worse than the
// last accepted level by more than the noise allows? docs/changepoints.md says why it is built
// this way and what its threshold means; bench/gate_scoreboard.cpp measures it.
//
// Three steps, each a pure function of the series:
//  1. Noise: a robust night-to-night scale, 1.4826 x the median |x[i] - x[i-1]| / sqrt(2): a
//     step moves one difference, a one-night spike two, so neither inflates it.
//  2. Levels: the series cut where its level shifts (optimal partitioning, PELT without
//     pruning, Killick et al. 2012): the least squared deviation from segment means, in noise
//     units, plus `penalty` x ln(n) per cut, every segment at least `min_segment` nights long.
//     The cut is computed on the series with each night clipped to 3 noise units around the
//     median of its five neighbours, so one bad night cannot make a level of its own.
//  3. The verdict: walking the levels in order, the reference is the first level and moves on
//     to an improvement, a level within the noise of it (pooled) or a regression accepted by the
//     user; it stops at the first regression not accepted. The gate goes red when the newest
//     `min_runs` nights all sit more than `threshold` noise units beyond the reference (worse
//     side), or, once the regression is a level of its own, while that level's median does; the
//     noise is the reference's, or the newest nights' when clearly larger. So a
//     regression stays red until it is accepted or the level comes back, whatever smaller
//     points follow it, and one bad night is a warning.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gdsb::report {

struct LevelOptions {
  // Nights that must all sit beyond the threshold before the gate goes red (and the shortest
  // level the cut makes): one or two bad nights are a warning.
  std::size_t min_runs = 3;
  // The threshold in noise units. Calibrated on the labelled corpus (bench/gate_corpus) so
  // that a healthy series goes red on at most 1 night in 500: docs/changepoints.md.
  double threshold = 2.0;
  // Cost of one more level, times ln(nights), in squared noise units.
  double penalty = 3.0;
  // The noise is never taken below this fraction of the level (a series of identical figures
  // has no noise to scale by).
  double noise_floor = 0.005;
  // The newest nights whose noise also counts when clearly larger (a series that got noisier
  // widens its threshold).
  std::size_t noise_window = 20;
  // And the newest nights' median must be worse than the reference by more than this fraction
  // (0: the noise alone decides; Otava's -M).
  double min_magnitude = 0.0;
};

// The robust night-to-night noise of `values` (0 for fewer than 2 values).
double night_noise(std::span<const double> values);

// night_noise() of `values`, never below options.noise_floor x |their median|: the scale the
// levels are cut in.
double series_noise(std::span<const double> values, const LevelOptions& options);

// Where the level of `values` shifts: the first index of each new level, sorted. `noise` is
// the scale (series_noise()). Every level is >= min_segment long.
std::vector<std::size_t> level_shifts(std::span<const double> values, double noise, std::size_t min_segment,
                                      double penalty);

struct LevelVerdict {
  enum class State {
    TooFew,      // fewer nights than a reference and min_runs need
    Ok,          // the newest nights are within the noise of the reference (or better)
    Warning,     // some, not all, of the newest min_runs nights are beyond the threshold
    Regression,  // all of them are: the gate is red
    Accepted,    // they are, from a regression the user accepted (--accept-through)
  };
  State state = State::TooFew;
  std::vector<std::size_t> shifts;   // level_shifts() of the series
  std::size_t reference_begin = 0;   // the reference level's nights [begin, end) (pooled levels
  std::size_t reference_end = 0;     // between them count too)
  std::size_t reference_nights = 0;  // nights the reference level was computed from
  double reference = 0;              // its median
  double noise = 0;                  // the scale the threshold is in
  double threshold = 0;              // the figure the newest nights are held to
  std::size_t newest = 0;            // the newest nights judged (min_runs)
  std::size_t beyond = 0;            // of these, how many are beyond the threshold
  double newest_median = 0;
  double current_level = 0;          // the median of the level the newest night belongs to
  // The first level worse than the reference and not accepted (an index into the series):
  // where the regression began. Absent for a drop of the newest nights not yet a level.
  std::optional<std::size_t> regression_at;
  // The newest regression the user accepted (the start of its level), when the walk met one.
  std::optional<std::size_t> accepted_at;
  // The first of the trailing nights beyond the threshold (all of them, newest first).
  std::size_t drop_begin = 0;
  std::string why;  // TooFew: the reason
};

// `higher_is_better`: throughput (a drop is worse) or latency (a rise is). `accepted_end`: the
// nights [0, accepted_end) are accepted: a regression that began inside them is the new normal.
LevelVerdict judge_level(std::span<const double> values, bool higher_is_better, std::size_t accepted_end,
                         const LevelOptions& options = {});

}  // namespace gdsb::report
