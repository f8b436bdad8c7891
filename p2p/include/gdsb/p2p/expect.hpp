// --expect: conditions a bring-up pipeline gates on. Parsing is separate from evaluation;
// a bad expression is a UsageError naming it (exit 2), a failed one makes the run exit 3.
//
//   all-gpu-p2p          every GPU pair has direct peer access
//   all-gpu-nvlink       every GPU pair is joined by NVLink
//   all-nvme-p2pdma      every GPU x NVMe pair has a P2PDMA map type other than NOT_SUPPORTED
//   min-h2d=50GB/s       every GPU's host-to-device bandwidth (also min-d2h)
//   min-d2d=300GB/s      every GPU pair's peer bandwidth (also min-d2d-bi)
//   max-latency=5us      every GPU pair's peer latency
//   min-h2d-percent=80   of the theoretical link figure (also d2h, d2d, d2d-bi)
// Rates take GB/s, MB/s (base 1000) or GiB/s, MiB/s (base 1024); latency us, ns or ms.
#pragma once

#include <string>
#include <vector>

#include "gdsb/p2p/capabilities.hpp"
#include "gdsb/p2p/measure.hpp"

namespace gdsb::p2p {

enum class ExpectKind {
  AllGpuP2p, AllGpuNvlink, AllNvmeP2pdma,
  MinH2d, MinD2h, MinD2d, MinD2dBi, MaxLatency,
  MinH2dPercent, MinD2hPercent, MinD2dPercent, MinD2dBiPercent
};

struct Expectation {
  std::string expr;  // as given
  ExpectKind kind = ExpectKind::AllGpuP2p;
  double value = 0;  // GB/s (base 1000), microseconds, or percent
  bool needs_measurement() const;
};

struct ExpectationResult {
  std::string expr;
  bool ok = false;
  std::string detail;
};

Expectation parse_expectation(const std::string& expr);  // throws UsageError
// measurements may be null (no --measure).
ExpectationResult evaluate(const Expectation& e, const CapabilityReport& caps,
                           const Measurements* measurements);

}  // namespace gdsb::p2p
