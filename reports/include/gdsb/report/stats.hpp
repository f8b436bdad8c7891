// Statistics used to tell a real change from noise between repeated runs.
#pragma once

#include <cstddef>
#include <span>

namespace gdsb::report {

// Two-sided Mann-Whitney U test (Wilcoxon rank-sum), as scipy.stats.mannwhitneyu with
// method="auto" (what Google Benchmark's compare tool calls): the exact distribution of U
// when there are no ties and one sample has at most 8 values, otherwise the normal
// approximation with tie correction and continuity correction.
struct UTest {
  std::size_t n1 = 0;
  std::size_t n2 = 0;
  double u1 = 0;         // U statistic of the first sample
  double p_value = 1.0;  // two-sided
  bool exact = false;
  // Smallest two-sided p any data of these sizes can give: 2 / C(n1+n2, n1). When it is not
  // below alpha the test cannot call anything significant, whatever the data.
  double min_p = 1.0;
};

enum class UMethod { Auto, Exact, Asymptotic };  // as scipy's method argument

// Requires at least one value in each sample (std::invalid_argument otherwise). Exact with
// ties falls back to the asymptotic method (the exact distribution assumes no ties).
UTest mann_whitney_u(std::span<const double> x, std::span<const double> y,
                     UMethod method = UMethod::Auto);

double min_two_sided_p(std::size_t n1, std::size_t n2);

double median(std::span<const double> values);  // 0 for an empty span

// The q-quantile (0 <= q <= 1) of values already sorted ascending, by linear interpolation
// between the two nearest ranks (numpy.quantile's default); 0 for an empty span.
double quantile_of_sorted(std::span<const double> sorted, double q);

// Two-sided p-value of Student's t statistic with df > 0 degrees of freedom,
// 2 * P(T > |t|), as scipy's 2 * t.sf(|t|, df): 0 for an infinite t, NaN for a NaN t.
double student_t_two_sided_p(double t, double df);

}  // namespace gdsb::report
