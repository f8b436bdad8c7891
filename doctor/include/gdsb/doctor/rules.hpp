// Rules: each a small function over the same facts, one file per rule, listed in one
// explicit registry (all_rules). A rule returns no finding when its evidence is absent.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/doctor/diagnosis.hpp"
#include "gdsb/doctor/inputs.hpp"

namespace gdsb::doctor {

// The facts every rule reads: the platform (may be absent: no topology input), the
// measured figures and the per-GPU hop ceilings computed from both.
struct Facts {
  const Platform* platform = nullptr;
  const Figures& figures;
  const std::vector<GpuDiagnosis>& gpus;

  // The GPU (of `gpus`) a run ran on, by PCI address: the bus id the run recorded, else
  // its -d index where the recorded CUDA ordering makes that unambiguous (attribution.hpp);
  // nullptr when the run cannot be placed.
  const GpuDiagnosis* gpu_of(const RunResult& r) const;
  // Best ok read run of a transfer type (highest throughput), nullptr when none.
  const RunResult* best_read(XferType x) const;
  // Best run that measures storage alone (measures_storage_alone), nullptr when none.
  const RunResult* storage_alone() const;
  // The GPU's first hop of a kind, when it has one of known capacity.
  std::optional<double> hop(const GpuDiagnosis& g, topo::HopKind kind) const;
  // Storage ceiling of the drives nearest the GPU: their own links' sum, when all known.
  std::optional<double> drives(const GpuDiagnosis& g) const;
};

struct Rule {
  std::string id;
  std::string what;  // one line for docs and --help
  std::function<std::vector<Finding>(const Facts&)> run;
};

std::vector<Rule> all_rules();

Rule compat_mode_rule();
Rule cufile_missing_rule();
Rule unaligned_io_rule();
Rule acs_redirect_rule();
Rule iommu_rule();
Rule locality_rule();
Rule link_rule();
Rule shared_uplink_rule();
Rule bar1_rule();
Rule numa_bounce_rule();
Rule page_cache_rule();
Rule workload_limit_rule();
Rule single_drive_rule();
Rule network_storage_rule();
Rule rdma_stack_rule();
// Hardware faults (issue 36): AER errors on a hop, GPU clock slowdown, GPU memory repair;
// (issue 42) an Xid on a GPU a run measured.
Rule gpu_xid_rule();
Rule aer_path_rule();
Rule gpu_throttle_rule();
Rule gpu_memory_rule();

}  // namespace gdsb::doctor
