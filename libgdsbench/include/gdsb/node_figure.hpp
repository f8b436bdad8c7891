// The node's figure: runs that went at the same time, one a GPU (gdsb-io's node mode, a
// preset's phase), as per-GPU rates and one aggregate on one wall clock, with the GPU that
// lags its peers named. Units: bytes, seconds, GB/s (1e9 bytes/s, as every ceiling).
// docs/metrics.md defines "aggregate" once: all bytes / (latest end - earliest start).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gdsb/result.hpp"

namespace gdsb {

struct GpuFigure {
  int gpu = 0;                 // CUDA index (-d)
  std::string pci_bus_id;      // as the run recorded it; "" for CPU-only runs
  uint64_t bytes = 0;
  double seconds = 0;          // the run's own measured interval
  double gb_s = 0;             // bytes / seconds / 1e9
  std::string path_used;
};

// A GPU well below its peers: below kOddShare of the median of the others.
inline constexpr double kOddShare = 0.75;
struct OddGpu {
  int gpu = 0;
  double gb_s = 0;
  double peers_median_gb_s = 0;
  double share = 0;  // gb_s / peers_median_gb_s
};

struct MissingRun {
  int gpu = 0;
  std::string reason;  // the run's reason, or its status name where it gave none
};

struct NodeFigure {
  std::vector<GpuFigure> per_gpu;    // the runs that measured (status Ok), in GPU order
  std::vector<MissingRun> missing;   // the runs that did not measure
  uint64_t bytes = 0;
  std::optional<double> window_s;    // latest end - earliest start; none when nothing measured
  std::optional<double> gb_s;        // the aggregate: bytes / window_s / 1e9
  std::optional<double> sum_gb_s;    // the per-GPU rates added (>= gb_s: the runs' windows differ)
  std::vector<OddGpu> odd;           // with two or more GPUs measured
};

// Runs that went together; a run of another status is listed in `missing`, never counted.
NodeFigure node_figure(std::span<const RunResult> runs);

}  // namespace gdsb
