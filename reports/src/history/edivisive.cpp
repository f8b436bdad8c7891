#include "edivisive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gdsb::report::edivisive {

std::vector<Interval> intervals_between(std::size_t n, std::span<const std::size_t> points) {
  std::vector<Interval> out;
  out.reserve(points.size() + 1);
  std::size_t begin = 0;
  for (const std::size_t p : points) {
    if (p != begin) out.push_back({begin, p});
    begin = p;
  }
  if (begin != n) out.push_back({begin, n});
  return out;
}

Candidate best_split(std::span<const double> values, Interval interval) {
  const std::size_t s = interval.begin;
  const std::size_t e = interval.end;
  const std::size_t len = e - s;
  if (len < 2) return {s + 1, 0.0};  // callers pass two runs or more; no split otherwise
  // within_left[x]: sum of |v_u - v_w| over pairs s <= u < w < s + x (pairs inside a prefix).
  std::vector<double> within_left(len + 1, 0.0);
  for (std::size_t x = 2; x <= len; ++x) {
    const double newest = values[s + x - 1];
    double add = 0;
    for (std::size_t u = s; u < s + x - 1; ++u) add += std::fabs(values[u] - newest);
    within_left[x] = within_left[x - 1] + add;
  }
  // within_right[k - s]: pairs inside [tau, k), updated as tau moves down one run at a time, so
  // memory stays linear in the interval (the whole series for the permutation method).
  std::vector<double> within_right(len + 1, 0.0);
  // Best cell of each row tau (tau = s + 1 + row), found in Otava's row order.
  std::vector<double> row_best(len - 1, 0.0);
  for (std::size_t tau = e - 1; tau > s; --tau) {
    double run = 0;
    for (std::size_t k = tau + 2; k <= e; ++k) {
      run += std::fabs(values[tau] - values[k - 1]);
      within_right[k - s] += run;
    }
    const double n = static_cast<double>(tau - s);  // size of the left part
    const double w_left = within_left[tau - s];
    // Otava's Q matrix is (tau, kappa) with zeros below the diagonal: row tau >= s + 2 starts
    // with such a zero, so a row whose every real q-hat is negative has 0 as its best.
    double best = tau >= s + 2 ? 0.0 : -std::numeric_limits<double>::infinity();
    for (std::size_t k = tau + 1; k <= e; ++k) {
      const double m = static_cast<double>(k - tau);  // size of the right part
      const double total = static_cast<double>(k - s);
      const double w_right = within_right[k - s];
      const double cross = within_left[k - s] - w_left - w_right;
      double q = 2.0 / total * cross;
      if (n > 1) q -= 2.0 * m / (total * (n - 1)) * w_left;
      if (m > 1) q -= 2.0 * n / (total * (m - 1)) * w_right;
      if (q > best) best = q;
    }
    row_best[tau - s - 1] = best;
  }
  Candidate c{s + 1, row_best[0]};
  for (std::size_t row = 1; row < len - 1; ++row) {
    if (row_best[row] > c.qhat) c = {s + 1 + row, row_best[row]};
  }
  return c;
}

std::optional<Candidate> next_candidate(std::span<const double> values,
                                        std::span<const Interval> intervals) {
  std::optional<Candidate> best;
  for (const Interval& iv : intervals) {
    if (iv.end - iv.begin < 2) continue;
    const Candidate c = best_split(values, iv);
    if (!best || c.qhat > best->qhat) best = c;
  }
  return best;
}

std::vector<Found> divide(std::span<const double> values, double max_pvalue, const Tester& tester) {
  std::vector<Found> found;
  std::vector<std::size_t> points;
  for (;;) {
    const std::vector<Interval> intervals = intervals_between(values.size(), points);
    const std::optional<Candidate> c = next_candidate(values, intervals);
    if (!c) break;
    const double p = tester(*c, intervals);
    if (!(p <= max_pvalue)) break;  // a NaN p is not significant, as in Otava
    const auto at = std::lower_bound(points.begin(), points.end(), c->index);
    found.insert(found.begin() + (at - points.begin()), Found{c->index, p});
    points.insert(at, c->index);
  }
  return found;
}

PermutationTester::PermutationTester(std::span<const double> values, std::size_t permutations,
                                     std::uint64_t seed)
    : values_(values), permutations_(permutations), state_(seed) {}

std::uint64_t PermutationTester::next() {
  // splitmix64 (Steele, Lea and Flood 2014): tiny, fast and statistically sound for shuffles.
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::size_t PermutationTester::below(std::size_t bound) {
  // Rejection keeps every value equally likely (a plain modulo would favour small ones).
  const std::uint64_t b = bound;
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                              std::numeric_limits<std::uint64_t>::max() % b;
  std::uint64_t r = next();
  while (r >= limit) r = next();
  return static_cast<std::size_t>(r % b);
}

double PermutationTester::operator()(const Candidate& candidate,
                                     std::span<const Interval> intervals) {
  std::size_t extreme = 0;
  for (std::size_t i = 0; i < permutations_; ++i) {
    scratch_.assign(values_.begin(), values_.end());
    for (const Interval& iv : intervals) {
      for (std::size_t k = iv.end - iv.begin; k > 1; --k) {
        std::swap(scratch_[iv.begin + k - 1], scratch_[iv.begin + below(k)]);
      }
    }
    const std::optional<Candidate> shuffled = next_candidate(scratch_, intervals);
    if (shuffled && shuffled->qhat >= candidate.qhat) ++extreme;
  }
  return static_cast<double>(extreme) / static_cast<double>(permutations_ + 1);
}

}  // namespace gdsb::report::edivisive
