// The live ladder: topology and stack, pinned H2D/D2H (every GPU), storage alone (-x 1, O_DIRECT),
// CPU bounce (-x 2), cuFile (-x 0) with the path it really took, and -x 0 again with more
// threads and larger I/O when no platform cause explains the first figures. The storage steps
// are node reads (gdsb/topo/node_run.hpp, gdsb-io's node mode): every GPU (or --gpu's) reads
// at once, each from its own drive's file system where the topology shows one, else from
// io_dir, so every GPU has its own measured read from one run (issue 35). Every step
// goes through the libraries (topology collector, p2p copy timer, the engine's runner);
// a step that cannot run here is recorded as not run with the reason.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "gdsb/doctor/diagnosis.hpp"
#include "gdsb/doctor/inputs.hpp"
#include "gdsb/gpu/gpu_service.hpp"
#include "gdsb/p2p/measure.hpp"
#include "gdsb/runner.hpp"

namespace gdsb::doctor {

struct LiveOptions {
  // Where the scratch file goes (the storage under test). Empty: topology, stack and host
  // link only; the storage steps are listed as not run, and nothing is written.
  std::string io_dir;
  double budget_s = 60;     // for the whole ladder
  std::optional<int> gpu;   // CUDA ordinal of the one GPU to read; none: every GPU
  // Each GPU's file; 0: 1 GiB over the GPUs sharing a directory, at least 256 MiB, together
  // at most half the directory's free space.
  uint64_t file_size = 0;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> progress;  // one line per step
};

struct LiveDeps {
  const PathRegistry& registry;
  p2p::CopyTimer& timer;
  // The topology snapshot of this machine (the live collector; a fixture in tests).
  // Throws gdsb::RuntimeError when it cannot be collected (the step is then not run).
  std::function<topo::Snapshot()> collect_topology;
  // The CUDA devices (count and PCI bus ids): each one's host link is measured and each one
  // reads in the storage steps, so every GPU has a ceiling and a read (issue 35). Null: one
  // GPU, LiveOptions::gpu's (0 by default).
  gpu::GpuService* gpus = nullptr;
};

struct LiveResult {
  std::optional<Platform> platform;
  Figures figures;
  std::vector<Step> steps;
  bool interrupted = false;
};

// Seconds each timed read gets out of the budget (at least 1, at most 10).
double step_seconds(double budget_s);

LiveResult run_live(const LiveOptions& opt, const LiveDeps& deps);

}  // namespace gdsb::doctor
