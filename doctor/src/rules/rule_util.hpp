// Small helpers the rule files share. Private to the doctor library.
#pragma once

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/doctor/rules.hpp"
#include "gdsb/topo/hw_faults.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "gdsb/units.hpp"

namespace gdsb::doctor::detail {

// One decimal from 1 GB/s up; below, two significant digits, so a small figure never reads
// 0.0 (issue 35: "GPU 0000:00:01.0 reads at 0.0 GB/s").
inline std::string gb_number(double v) {
  const int digits = v > 0 && v < 0.95 ? std::min(9, 1 - static_cast<int>(std::floor(std::log10(v)))) : 1;
  return format_fixed(v, digits);
}
inline std::string gb(double v) { return gb_number(v) + " GB/s"; }

inline std::string pct(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", ratio * 100.0);
  return buf;
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Lines of a run's evidence, warnings and reason that contain any needle (case-insensitive).
inline std::vector<std::string> lines_with(const RunResult& r,
                                           std::initializer_list<std::string_view> needles) {
  std::vector<std::string> all = r.path.evidence;
  all.insert(all.end(), r.path.warnings.begin(), r.path.warnings.end());
  if (!r.reason.empty()) all.push_back(r.reason);
  std::vector<std::string> out;
  for (const auto& l : all) {
    const std::string low = lower(l);
    for (auto n : needles)
      if (low.find(lower(n)) != std::string::npos) {
        out.push_back(l);
        break;
      }
  }
  return out;
}

// Whether a run moved its data by GDS peer-to-peer: gdsb-io's path_used read as PathUsed,
// never a search of a display string.
inline bool ran_gds(const RunResult& r) { return path_is_gds(path_used_of(r.path.path_used)); }

// "cuFile -x 0 (compat), 4 threads x 1M" style description of a run.
std::string describe_run(const RunResult& r);

// A measured figure with the GPU it ran on, for findings about measured runs.
inline std::string run_line(const RunResult& r, double gb_s) {
  return describe_run(r) + ": " + gb(gb_s);
}

inline void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// The "expected after the fix" tail of a finding: expected_gb_s, the text "~X GB/s" + why,
// and, when bound_measured is given (the run is bound by this cause), the impact
// expected - measured, never below 0.
inline void expect_after_fix(Finding& f, double expected_gb_s, std::string_view why,
                             std::optional<double> bound_measured) {
  f.expected_gb_s = expected_gb_s;
  f.expected = "~" + gb(expected_gb_s) + std::string(why);
  if (bound_measured) f.impact_gb_s = std::max(0.0, expected_gb_s - *bound_measured);
}

// Expected figure once a cause is gone: the GPU's ceiling; impact = expected - measured
// when the run is bound by this cause (0 otherwise).
inline void expect_ceiling(Finding& f, const GpuDiagnosis* g, std::optional<double> measured) {
  if (!g || !g->ceiling_gb_s) return;
  expect_after_fix(f, *g->ceiling_gb_s, ", the ceiling set by " + g->binding, measured);
}

// The GPU's measured read is below 90% of its ceiling: its path is slow (hardware fault rules).
inline bool below_ceiling(const GpuDiagnosis& g) {
  return g.measured_gb_s && g.ceiling_gb_s && *g.measured_gb_s < 0.9 * *g.ceiling_gb_s;
}

// "GPU6 measured 1.0 GB/s = 13% of its ceiling (cuFile -x 0 ...)": a GPU's measured read as
// the hardware fault rules' evidence, the share left out where the ceiling is unknown.
inline std::string measured_evidence(const GpuDiagnosis& g) {
  if (!g.measured_gb_s) return {};
  return g.label + " measured " + gb(*g.measured_gb_s) +
         (g.ceiling_gb_s ? " = " + pct(*g.measured_gb_s / *g.ceiling_gb_s) + " of its ceiling" : "") + " (" +
         g.measured_by + ")";
}

// The run's GPUs whose NVML error counters the platform snapshot holds, each with them, in
// the order of facts.gpus; none without a platform snapshot. The GPU fault rules
// (gpu-throttle, gpu-memory) judge these and nothing else.
struct GpuWithErrors {
  const GpuDiagnosis& gpu;
  const topo::GpuErrorCounters& errors;
};
inline std::vector<GpuWithErrors> gpus_with_errors(const Facts& facts) {
  std::vector<GpuWithErrors> out;
  if (!facts.platform) return out;
  const auto& errors = facts.platform->snapshot->faults.gpu_errors;
  for (const auto& g : facts.gpus)
    if (const auto it = errors.find(g.bdf); it != errors.end()) out.push_back({g, it->second});
  return out;
}

}  // namespace gdsb::doctor::detail
