#include "gdsb/report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace gdsb::report {
namespace {

// Exact exact-test limit as scipy's method="auto": one sample of at most 8 values.
constexpr std::size_t kExactMaxSmallSample = 8;
// Keep the counting table small; beyond this the normal approximation is used anyway.
constexpr std::size_t kExactMaxProduct = 20000;

struct Ranked {
  std::vector<double> ranks;  // average ranks, in the order x then y
  double tie_term = 0;        // sum over tie groups of t^3 - t
};

Ranked rank_with_ties(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = x.size() + y.size();
  std::vector<double> all;
  all.reserve(n);
  all.insert(all.end(), x.begin(), x.end());
  all.insert(all.end(), y.begin(), y.end());
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return all[a] < all[b]; });
  Ranked r;
  r.ranks.assign(n, 0.0);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && all[order[j + 1]] == all[order[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r.ranks[order[k]] = avg;
    const double t = static_cast<double>(j - i + 1);
    r.tie_term += t * t * t - t;
    i = j + 1;
  }
  return r;
}

// Number of orderings of n1 x-values and n2 y-values for each value of U, as a table
// counts[u], u = 0..n1*n2, by the recurrence f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1).
std::vector<double> u_distribution(std::size_t n1, std::size_t n2) {
  // table[m][u] for the current n; grown one n at a time.
  const std::size_t umax = n1 * n2;
  std::vector<std::vector<double>> prev(n1 + 1, std::vector<double>(umax + 1, 0.0));
  for (std::size_t m = 0; m <= n1; ++m) prev[m][0] = 1.0;  // n = 0: only U = 0
  for (std::size_t n = 1; n <= n2; ++n) {
    std::vector<std::vector<double>> cur(n1 + 1, std::vector<double>(umax + 1, 0.0));
    cur[0][0] = 1.0;
    for (std::size_t m = 1; m <= n1; ++m) {
      for (std::size_t u = 0; u <= m * n; ++u) {
        double v = prev[m][u];               // the largest value is a y: U unchanged
        if (u >= n) v += cur[m - 1][u - n];  // the largest value is an x: it beats n y's
        cur[m][u] = v;
      }
    }
    prev = std::move(cur);
  }
  return prev[n1];
}

// Continued fraction of the regularized incomplete beta function I_x(a, b) (modified Lentz),
// which converges fast for x < (a + 1) / (a + b + 2); the caller uses the symmetry otherwise.
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  constexpr int kMaxTerms = 1000;
  const auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0;
  double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double h = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double dm = m;
    // Even term: m (b - m) x / ((a + 2m - 1)(a + 2m)).
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1.0 / guard(1.0 + num * d);
    c = guard(1.0 + num / c);
    h *= d * c;
    // Odd term: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1.0 / guard(1.0 + num * d);
    c = guard(1.0 + num / c);
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1.0) < kEps) break;
  }
  return h;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                           a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * incomplete_beta_fraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * incomplete_beta_fraction(b, a, 1.0 - x) / b;
}

}  // namespace

double min_two_sided_p(std::size_t n1, std::size_t n2) {
  // 2 / C(n1 + n2, n1), computed in floating point.
  double c = 1.0;
  const std::size_t k = std::min(n1, n2);
  for (std::size_t i = 1; i <= k; ++i) {
    c = c * static_cast<double>(n1 + n2 - k + i) / static_cast<double>(i);
  }
  return std::min(1.0, 2.0 / c);
}

double quantile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double student_t_two_sided_p(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return 0.0;
  // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  return std::clamp(regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t)), 0.0, 1.0);
}

double median(std::span<const double> values) {
  if (values.empty()) return 0;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2.0;
}

UTest mann_whitney_u(std::span<const double> x, std::span<const double> y, UMethod method) {
  if (x.empty() || y.empty()) throw std::invalid_argument("mann_whitney_u: an empty sample");
  UTest t;
  t.n1 = x.size();
  t.n2 = y.size();
  const double n1 = static_cast<double>(t.n1);
  const double n2 = static_cast<double>(t.n2);
  const Ranked r = rank_with_ties(x, y);
  const double r1 =
      std::accumulate(r.ranks.begin(), r.ranks.begin() + static_cast<std::ptrdiff_t>(t.n1), 0.0);
  t.u1 = r1 - n1 * (n1 + 1) / 2.0;
  const double u = std::max(t.u1, n1 * n2 - t.u1);  // the larger U, as scipy
  t.min_p = min_two_sided_p(t.n1, t.n2);

  const bool ties = r.tie_term > 0;
  const bool small = std::min(t.n1, t.n2) <= kExactMaxSmallSample;
  t.exact = !ties && t.n1 * t.n2 <= kExactMaxProduct &&
            (method == UMethod::Exact || (method == UMethod::Auto && small));
  if (t.exact) {
    const auto counts = u_distribution(t.n1, t.n2);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    double tail = 0;  // P(U >= u)
    for (auto k = static_cast<std::size_t>(u); k < counts.size(); ++k) tail += counts[k];
    t.p_value = std::min(1.0, 2.0 * tail / total);
    return t;
  }
  const double n = n1 + n2;
  const double var = n1 * n2 / 12.0 * ((n + 1.0) - r.tie_term / (n * (n - 1.0)));
  if (var <= 0) {  // every value equal: no evidence of any difference
    t.p_value = 1.0;
    return t;
  }
  const double z = (u - n1 * n2 / 2.0 - 0.5) / std::sqrt(var);
  t.p_value = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);
  return t;
}

}  // namespace gdsb::report
