// The health check against a known-good fingerprint (gdsb-topo --health, docs/gdsb-topo.md):
// the comparison is compare_with_expected (fingerprint.hpp); its node_exporter metrics here.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/fingerprint_file.hpp"
#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::topo {

struct HealthMetricsContext {
  std::string tool, version;
  std::string expect_file;
  std::string node;  // also the devices' samples' Hostname label (dcgm-exporter's)
  double checked_at_unix_s = 0;
  // The GPUs' facts now, by BDF: a GPU's samples carry dcgm-exporter's `gpu` (NVML's index) and
  // `UUID` where these hold them (GpuFacts::nvml_index, uuid); null or absent: neither label.
  const std::map<std::string, GpuFacts>* gpus = nullptr;
};
// The Prometheus/OpenMetrics text of one health check (gdsb_health_* gauges; the names and
// their units are listed in docs/gdsb-topo.md), ending in "# EOF". `now` is null when the
// facts could not be collected, `expected` when the known-good file could not be read: the
// metrics then say the check failed (gdsb_health_collected 0, gdsb_health_problems >= 1),
// never the last green.
// `faults`: the check's fault facts and findings (hw_faults.hpp), written as the
// gdsb_health_fault_*, _xid_*, _aer_* and _gpu_* families (health_faults_metrics.cpp).
struct FaultMetrics {
  const HwFaults* faults = nullptr;  // null: none collected (the families are empty)
  std::vector<FaultFinding> findings;
};
std::string health_openmetrics(const Fingerprint* now, const FactMap* expected,
                               const std::vector<HealthDifference>& differences,
                               const HealthMetricsContext& ctx, const FaultMetrics& faults = {});
// The fault families alone (part of health_openmetrics' text, before its "# EOF"). Every
// sample of a device carries, beside our "bdf", dcgm-exporter's pci_bus_id and Hostname
// (ctx.node), and a GPU's its gpu and UUID where ctx.gpus holds them, so dashboards join the
// two exporters' series.
void fault_metrics(std::ostream& o, const FaultMetrics& faults, const HealthMetricsContext& ctx);

}  // namespace gdsb::topo
