// The health check against a known-good fingerprint (gdsb-topo --health, docs/gdsb-topo.md):
// the comparison is compare_with_expected (fingerprint.hpp); its node_exporter metrics here.
#pragma once

#include <string>
#include <vector>

#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/fingerprint_file.hpp"

namespace gdsb::topo {

struct HealthMetricsContext {
  std::string tool, version;
  std::string expect_file;
  std::string node;
  double checked_at_unix_s = 0;
};
// The Prometheus/OpenMetrics text of one health check (gdsb_health_* gauges; the names and
// their units are listed in docs/gdsb-topo.md), ending in "# EOF". `now` is null when the
// facts could not be collected, `expected` when the known-good file could not be read: the
// metrics then say the check failed (gdsb_health_collected 0, gdsb_health_problems >= 1),
// never the last green.
std::string health_openmetrics(const Fingerprint* now, const FactMap* expected,
                               const std::vector<HealthDifference>& differences,
                               const HealthMetricsContext& ctx);

}  // namespace gdsb::topo
