// Which GPU a run ran on, by PCI address. A run names its GPU by CUDA index (-d), which
// CUDA_VISIBLE_DEVICES and CUDA's default fastest-first order renumber; gdsb-io records
// the GPU's PCI bus id with each run, and only a run without it (an older report) is
// placed from its index, where that is unambiguous. Private to the doctor library.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdsb/doctor/inputs.hpp"

namespace gdsb::doctor::detail {

struct RunGpu {
  std::string bdf;                // "0000:19:00.0" when known
  std::optional<int> cuda_index;  // no platform: the GPUs are known only by CUDA index
  std::string unplaced;           // why the run's GPU cannot be told (empty when placed)
};

// pci_gpus: the platform's GPUs in PCI order (empty without a platform).
RunGpu place_run(const RunResult& r, const CudaOrdering& ordering,
                 const std::vector<std::string>& pci_gpus);
// The same for a run of figures.runs, with its recorded ordering and the platform's GPUs.
RunGpu place_run(const Figures& figures, const Platform* platform, const RunResult& r);

}  // namespace gdsb::doctor::detail
