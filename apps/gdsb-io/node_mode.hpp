// gdsb-io's node mode (issue 35): `gdsb-io --gpus all|N|LIST` without a workload preset or
// job file. Every GPU reads at once, each from a file in its own local directory (a file
// system on its nearest drive, found by the path model; the shared directory -D or
// $GDSB_SCRATCH otherwise), one transfer type after another (-x LIST, default 1,0,2):
// per-GPU and aggregate figures (gdsb/node_figure.hpp) beside the node's ceiling from the
// path model, and the GPU that lags its peers named with what explains it. --dry-run
// prints the plan (sources, directories, ceilings) and runs nothing, also on a recorded
// topology (gdsb-topo's source options).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "options.hpp"
#include "progress.hpp"

namespace gdsb::io {

// --gpus: "all" (every GPU), a count N (GPUs -d .. -d+N-1, as the presets count them) or
// a list "0,2,5". UsageError naming --gpus for anything else, a repeat, or a GPU this
// machine does not have (available < 0: not known, no check).
struct GpuSelection {
  bool all = false;
  int count = 0;          // a count was given (presets); 0 otherwise
  std::vector<int> list;  // a list was given
};
GpuSelection parse_gpus(const std::string& text);
std::vector<int> selected_gpus(const GpuSelection& s, int first, int available);

// Whether the options ask for the node mode.
bool node_mode_requested(const Options& opt);

int run_node(const Options& opt, const std::atomic<bool>& stop, ProgressLine& progress);

}  // namespace gdsb::io
