// The health check's fault metrics (health.hpp fault_metrics): Xid events, findings, AER,
// ECC, retirement and row-remapping counters, clock event reasons; all gauges.
#include <algorithm>
#include <sstream>

#include "gdsb/report/openmetrics.hpp"
#include "gdsb/topo/health.hpp"
#include "health_labels.hpp"

namespace gdsb::topo {
namespace {

namespace om = report::openmetrics;

// One family: its HELP line, then the samples `fill` writes.
template <class Fill>
void family(std::ostream& o, const std::string& name, const std::string& help, Fill fill) {
  om::gauge_family(o, name, help);
  fill(name);
}

}  // namespace

void fault_metrics(std::ostream& o, const FaultMetrics& m, const HealthMetricsContext& ctx) {
  family(o, "gdsb_health_fault_findings",
         "Hardware fault findings of this check, by severity (critical drains; history: an Xid of an earlier boot "
         "or from before the known-good file, not judged)",
         [&](const std::string& n) {
           for (const FaultSeverity sev : {FaultSeverity::Critical, FaultSeverity::Warning, FaultSeverity::History})
             om::sample(o, n, {{"severity", std::string(fault_severity_name(sev))}},
                        static_cast<double>(std::count_if(m.findings.begin(), m.findings.end(),
                                                          [&](const FaultFinding& f) { return f.severity == sev; })));
         });
  family(o, "gdsb_health_fault_info", "One per hardware fault finding (always 1)", [&](const std::string& n) {
    for (const auto& f : m.findings)
      om::sample(o, n,
                 detail::device_labels(f.bdf, ctx,
                                       {{"kind", std::string(fault_kind_name(f.kind))},
                                        {"severity", std::string(fault_severity_name(f.severity))},
                                        {"xid", f.xid ? std::to_string(f.xid) : ""}}),
                 1);
  });
  const HwFaults* f = m.faults;
  family(o, "gdsb_health_xid_events",
         "Xid events in the kernel log since the last check (--state) or boot, by GPU and code",
         [&](const std::string& n) {
           if (f && f->kernel_log)
             for (const auto& e : f->kernel_log->xids)
               om::sample(o, n, detail::device_labels(e.bdf, ctx, {{"xid", std::to_string(e.code)}}),
                          static_cast<double>(e.count));
         });
  family(o, "gdsb_health_kernel_log_read", "1 when the kernel log was read for Xid events, 0 when not",
         [&](const std::string& n) { om::sample(o, n, {}, f && f->kernel_log ? 1 : 0); });
  family(o, "gdsb_health_aer_errors",
         "PCIe AER errors counted since boot by each device (sysfs aer_dev_*: TOTAL_ERR_*), by severity",
         [&](const std::string& n) {
           if (!f) return;
           for (const auto& [bdf, a] : f->aer) {
             if (!a.counters_known) continue;
             for (auto [sev, v] : {std::pair{"correctable", a.total_correctable}, std::pair{"nonfatal", a.total_nonfatal},
                                   std::pair{"fatal", a.total_fatal}})
               if (v) om::sample(o, n, detail::device_labels(bdf, ctx, {{"severity", sev}}), static_cast<double>(*v));
           }
         });
  family(o, "gdsb_health_gpu_ecc_errors", "ECC errors of each GPU (NVML), by type and counter (volatile: since the driver loaded)",
         [&](const std::string& n) {
           if (!f) return;
           for (const auto& [bdf, g] : f->gpu_errors)
             for (auto [type, counter, v] :
                  {std::tuple{"corrected", "volatile", g.ecc_volatile_corrected},
                   std::tuple{"uncorrected", "volatile", g.ecc_volatile_uncorrected},
                   std::tuple{"corrected", "aggregate", g.ecc_aggregate_corrected},
                   std::tuple{"uncorrected", "aggregate", g.ecc_aggregate_uncorrected}})
               if (v)
                 om::sample(o, n, detail::device_labels(bdf, ctx, {{"type", type}, {"counter", counter}}),
                            static_cast<double>(*v));
         });
  family(o, "gdsb_health_gpu_retired_pages", "Retired GPU memory pages (NVML), by cause", [&](const std::string& n) {
    if (!f) return;
    for (const auto& [bdf, g] : f->gpu_errors)
      for (auto [cause, v] : {std::pair{"sbe", g.retired_pages_sbe}, std::pair{"dbe", g.retired_pages_dbe}})
        if (v) om::sample(o, n, detail::device_labels(bdf, ctx, {{"cause", cause}}), static_cast<double>(*v));
  });
  family(o, "gdsb_health_gpu_remapped_rows", "Remapped GPU memory rows (NVML), by cause", [&](const std::string& n) {
    if (!f) return;
    for (const auto& [bdf, g] : f->gpu_errors)
      for (auto [cause, v] : {std::pair{"correctable", g.remapped_rows_correctable},
                              std::pair{"uncorrectable", g.remapped_rows_uncorrectable}})
        if (v) om::sample(o, n, detail::device_labels(bdf, ctx, {{"cause", cause}}), static_cast<double>(*v));
  });
  family(o, "gdsb_health_gpu_remap_failed", "1 when a row remapping of the GPU failed (NVML)", [&](const std::string& n) {
    if (!f) return;
    for (const auto& [bdf, g] : f->gpu_errors)
      if (g.remap_failed) om::sample(o, n, detail::device_labels(bdf, ctx), *g.remap_failed ? 1 : 0);
  });
  family(o, "gdsb_health_gpu_recovery_action",
         "The driver's recovery action for each GPU (NVML; 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain "
         "and reset)",
         [&](const std::string& n) {
           if (!f) return;
           for (const auto& [bdf, g] : f->gpu_errors)
             if (g.recovery_action) om::sample(o, n, detail::device_labels(bdf, ctx), *g.recovery_action);
         });
  family(o, "gdsb_health_nvlink_errors",
         "NVLink error counters of each GPU's links since the driver loaded (NVML), by link and counter",
         [&](const std::string& n) {
           if (!f) return;
           for (const auto& [bdf, g] : f->gpu_errors)
             for (const auto& l : g.nvlinks)
               for (auto [counter, v] : {std::pair{"replay", l.replay}, std::pair{"recovery", l.recovery},
                                         std::pair{"crc_flit", l.crc_flit}, std::pair{"crc_data", l.crc_data}})
                 if (v)
                   om::sample(o, n,
                              detail::device_labels(bdf, ctx, {{"link", std::to_string(l.link)}, {"counter", counter}}),
                              static_cast<double>(*v));
         });
  family(o, "gdsb_health_gpu_clock_event_reasons",
         "NVML clock event (throttle) reason bits of each GPU at the check (nvmlClocksEventReason*)",
         [&](const std::string& n) {
           if (!f) return;
           for (const auto& [bdf, g] : f->gpu_errors)
             if (g.clock_event_reasons)
               om::sample(o, n, detail::device_labels(bdf, ctx), static_cast<double>(*g.clock_event_reasons));
         });
}

}  // namespace gdsb::topo
