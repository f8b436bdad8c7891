// The labels of one device's health samples (health.cpp, health_faults_metrics.cpp).
#pragma once

#include <string>

#include "gdsb/nvml.hpp"
#include "gdsb/report/openmetrics.hpp"
#include "gdsb/topo/health.hpp"

namespace gdsb::topo::detail {

// "bdf" (ours, "0000:19:00.0") and, so that a dashboard joins our series with dcgm-exporter's,
// that exporter's labels for the same device: `gpu` (NVML's index) and `UUID` for a GPU whose
// facts now hold them (NVML live; a snapshot or hwloc XML that recorded them), the address as
// NVML and dcgm-exporter write it (`pci_bus_id`, "00000000:19:00.0") and the node's name
// (`Hostname`: $NODE_NAME, else the host name); then the sample's own labels. No address (a
// check that failed): "bdf" only.
inline report::openmetrics::Labels device_labels(const std::string& bdf, const HealthMetricsContext& ctx,
                                                 const report::openmetrics::Labels& own = {}) {
  report::openmetrics::Labels l{{"bdf", bdf}};
  if (!bdf.empty()) {
    if (ctx.gpus)
      if (const auto g = ctx.gpus->find(bdf); g != ctx.gpus->end()) {
        if (g->second.nvml_index) l.emplace_back("gpu", std::to_string(*g->second.nvml_index));
        if (!g->second.uuid.empty()) l.emplace_back("UUID", g->second.uuid);
      }
    l.emplace_back("pci_bus_id", nvml::nvml_bus_id(bdf));
    l.emplace_back("Hostname", ctx.node);
  }
  l.insert(l.end(), own.begin(), own.end());
  return l;
}

}  // namespace gdsb::topo::detail
