// Checks: each a small class with an id, a title and run(context) -> results, listed in
// one explicit registry. Checks only read the snapshot and the derived TopologyView.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/hw_faults.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {

enum class Verdict { Pass, Warn, Fail, Waived };
std::string_view verdict_name(Verdict v);  // "pass", "warn", "fail", "waived"

struct CheckResult {
  std::string id;
  std::string title;
  Verdict verdict = Verdict::Pass;
  std::vector<std::string> devices;
  std::vector<std::string> evidence;
  std::string consequence;
  std::string remedy;
  std::string reason;  // why waived (empty otherwise)
};

struct CheckContext {
  const Snapshot& snapshot;
  const TopologyView& view;
  const PathModel& model;
};

class Check {
 public:
  virtual ~Check() = default;
  virtual std::string id() const = 0;
  virtual std::string title() const = 0;
  virtual std::vector<CheckResult> run(const CheckContext& ctx) const = 0;
};

// The registry, in report order: acs-redirect, iommu, pair-locality, link, bar1, numa,
// gds-stack, rdma-stack.
std::vector<std::unique_ptr<Check>> all_checks();

std::unique_ptr<Check> make_acs_check();
std::unique_ptr<Check> make_iommu_check();
std::unique_ptr<Check> make_pair_check();
std::unique_ptr<Check> make_link_check();
std::unique_ptr<Check> make_bar1_check();
std::unique_ptr<Check> make_numa_check();
std::unique_ptr<Check> make_gds_stack_check();
// GPUDirect RDMA stack (gdscheck -p's DRIVER CONFIGURATION): nvidia-peermem or DMA-BUF,
// libcufile_rdma, rdma_dev_addr_list, RDMA ports, network file-system drivers.
std::unique_ptr<Check> make_rdma_stack_check();

// Everything a renderer needs, computed once.
struct Report {
  std::vector<CheckResult> checks;
  std::vector<Ceiling> ceilings;      // per GPU: its nearest NVMe drives (own switch first)
  std::vector<Ceiling> nic_ceilings;  // per GPU: remote GDS (RDMA) through its nearest data NICs
  Ceiling node_nvme;                  // every NVMe drive at once, each into its nearest GPU
  Ceiling node_nic;                   // every data NIC at once, each into its nearest GPU
  Verdict verdict = Verdict::Pass;    // Pass, Warn or Fail (waived results do not count)
  // Whether some GPU has a P2P-capable storage path or data NIC, and why (not): when not,
  // the platform verdict is "GDS not applicable on this node: <why>" (PathModel).
  bool gds_applicable = true;
  std::string applicability;
  std::vector<DataPath> data_paths;  // the model's paths (pair pointers: into the view)
  // Per network mount that some NIC carries (network_storage.hpp): the least of its
  // carriers' summed network rates, their PCIe links, shared uplinks and the GPU links,
  // node-wide (each carrier into its nearest GPU) and into each GPU (issue 25).
  struct MountCeilings {
    std::string target, kind;
    Ceiling node;
    std::vector<Ceiling> gpus;  // in GPU order
  };
  std::vector<MountCeilings> mount_ceilings;
  // The snapshot's fault facts (Xid events, NVML and AER counters) as gdsb-topo --health
  // judges them without a known-good file (since boot): the FAULTS section. They do not
  // change the platform verdict: the health check is the one that drains (issue 42).
  std::vector<FaultFinding> faults;
};

// Checks and ceilings, all read from one path model of the snapshot.
Report evaluate(const Snapshot& s, const TopologyView& view, const PathModel& model);
Report evaluate(const Snapshot& s, const TopologyView& view);  // builds the model
// Per GPU, its nearest NVMe drives (PathModel::gpu_ceiling), for callers without a model.
std::vector<Ceiling> compute_ceilings(const Snapshot& s, const TopologyView& view);

}  // namespace gdsb::topo
