// The labels of one device's health samples (health.cpp, health_faults_metrics.cpp).
#pragma once

#include <string>

#include "gdsb/nvml.hpp"
#include "gdsb/report/openmetrics.hpp"

namespace gdsb::topo::detail {

// "bdf" (ours, "0000:19:00.0") and, so that a dashboard joins our series with dcgm-exporter's
// on (Hostname, pci_bus_id), the same address as NVML and dcgm-exporter write it
// ("00000000:19:00.0") and the node's name (dcgm-exporter's Hostname: $NODE_NAME, else the
// host name); then the sample's own labels. No address (a check that failed): "bdf" only.
inline report::openmetrics::Labels device_labels(const std::string& bdf, const std::string& host,
                                                 const report::openmetrics::Labels& own = {}) {
  report::openmetrics::Labels l{{"bdf", bdf}};
  if (!bdf.empty()) {
    l.emplace_back("pci_bus_id", nvml::nvml_bus_id(bdf));
    l.emplace_back("Hostname", host);
  }
  l.insert(l.end(), own.begin(), own.end());
  return l;
}

}  // namespace gdsb::topo::detail
