// A GPU whose clocks NVML reports slowed for a reason that costs throughput (thermal or power
// slowdown, rows of gdsb-topo's clock event table with `slows`): the copy engines and the
// GPU's side of the path run slower than the ceiling. The reasons are those NVML gave when
// the snapshot was collected (topo::GpuErrorCounters::clock_event_reasons).
#include <cstdio>

#include "gdsb/topo/hw_faults.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  std::vector<Finding> out;
  for (const auto& [g, e] : detail::gpus_with_errors(facts)) {
    if (!e.clock_event_reasons) continue;
    const uint64_t bits = *e.clock_event_reasons;
    std::string reasons;
    for (const topo::ClockEventRow& row : topo::clock_event_table())
      if (row.slows && (bits & row.bit))
        reasons += (reasons.empty() ? "" : ", ") + std::string(row.nvml_name) + " (" + std::string(row.meaning) + ")";
    if (reasons.empty()) continue;  // idle, application clocks, or nothing set
    const bool slow = detail::below_ceiling(g);
    Finding f;
    f.rule = "gpu-throttle";
    f.title = g.label + " " + g.bdf + " slows its clocks: " + reasons;
    f.confidence = slow ? Confidence::Likely : Confidence::Possible;
    f.devices = {g.bdf, g.label};
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(bits));
    f.evidence.push_back("NVML clock event reasons " + std::string(hex) + " at collection: " + reasons);
    if (g.measured_gb_s && g.ceiling_gb_s)
      f.evidence.push_back(detail::measured_evidence(g));
    f.fix = "check cooling (fans, airflow, inlet temperature) and power (PSU and GPU power cables, power "
            "limit): nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER names the reason while it lasts";
    detail::expect_ceiling(f, &g, slow ? g.measured_gb_s : std::nullopt);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule gpu_throttle_rule() {
  return {"gpu-throttle", "a GPU slows its clocks for heat or power (NVML clock event reasons)", run};
}

}  // namespace gdsb::doctor
