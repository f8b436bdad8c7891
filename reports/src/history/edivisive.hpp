// Internal to changepoint.cpp: the E-Divisive steps (Matteson and James 2014) in the order
// Apache Otava 0.8.0 takes them, so that ties and edge cases resolve the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace gdsb::report::edivisive {

// Runs [begin, end) between two neighbouring change points.
struct Interval {
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct Candidate {
  std::size_t index = 0;  // first run of the right-hand part
  double qhat = 0;
};

// The intervals that sorted, distinct points in (0, n) cut [0, n) into.
std::vector<Interval> intervals_between(std::size_t n, std::span<const std::size_t> points);

// The split of one interval of `values` that maximises q-hat over every tau and kappa with
// begin < tau < kappa <= end (the divergence of values[begin, tau) from values[tau, kappa)),
// the interval's length >= 2. As Otava's matrix argmax: cells with kappa < tau count as 0, and
// the first maximum in (tau, kappa) row order wins.
Candidate best_split(std::span<const double> values, Interval interval);

// The best split over all intervals of length >= 2 (the first of equal q-hats); none if no
// interval has two runs.
std::optional<Candidate> next_candidate(std::span<const double> values,
                                        std::span<const Interval> intervals);

// Decides whether a candidate is a change point: returns its p-value. Gets the current
// intervals (the candidate lies strictly inside one of them).
using Tester = std::function<double(const Candidate&, std::span<const Interval>)>;

// Divisive loop: take the best candidate, keep it while tester's p <= max_pvalue, stop at the
// first that is not. Returns the kept points sorted, with their p-values.
struct Found {
  std::size_t index = 0;
  double p_value = 1.0;
};
std::vector<Found> divide(std::span<const double> values, double max_pvalue, const Tester& tester);

// Otava's --orig-edivisive test: q-hat of the best split after shuffling the runs within each
// interval, `permutations` times; p = (number of shuffles with q-hat >= the candidate's) /
// (permutations + 1). Shuffles are Fisher-Yates over a splitmix64 stream seeded by `seed`
// (portable: the same on every compiler, unlike std::shuffle).
class PermutationTester {
 public:
  PermutationTester(std::span<const double> values, std::size_t permutations, std::uint64_t seed);
  double operator()(const Candidate& candidate, std::span<const Interval> intervals);

 private:
  std::uint64_t next();
  std::size_t below(std::size_t bound);  // uniform in [0, bound)
  std::span<const double> values_;
  std::size_t permutations_;
  std::uint64_t state_;
  std::vector<double> scratch_;
};

}  // namespace gdsb::report::edivisive
