// Rank 0's judgement over all node summaries: hardware classes, missing nodes and hardware
// (first), failing checks, odd topology (fingerprint differences) and metric outliers per
// GPU position within each class. Plain data; reporters (outputs.hpp) only read it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/cluster/summary.hpp"

namespace gdsb::cluster {

inline constexpr const char* kClusterSchema = "gdsbench.cluster/1";

struct AggregateOptions {
  double z_threshold = 3.5;     // |robust z| above this is an outlier
  double min_relative = 0.10;   // ... and at least this far from the median (0.10 = 10%)
  int expected_ranks = 0;       // MPI world size; 0 for --from
};

// DuplicateNode: several reports carry one node name (a cloned image whose hostname was
// never set, or one report passed twice); the first is judged, the others are not counted.
// FleetWide: a failure (the check, and its result's title and cause) on more than half the
// nodes of a class of two or more is the class's problem, not theirs: reported once, with the
// count, and it names no node. Nodes failing the same check otherwise are still named, and so
// is a node alone in its class (CheckFailed): one node is no fleet.
// HardwareFault: the node has a fault gdsb-topo --health drains on (a critical NodeFault):
// listed first, the worst fault of the fleet (issue 42).
enum class FindingKind {
  HardwareFault, DuplicateNode, MissingNode, NodeError, MissingHardware, FleetWide, CheckFailed, Topology, Outlier,
  // Clock: in the shared-storage phase the node's interval lies outside every other rank's
  // (the common window would be negative): its clock disagrees (shared_storage.hpp).
  Clock
};
std::string_view finding_kind_name(FindingKind k);  // "duplicate-node", "missing-node", ...

struct Finding {
  FindingKind kind = FindingKind::Outlier;
  std::string node;
  std::string metric;      // outliers; checks: the check id (fleet-wide: "id: title")
  std::optional<int> gpu;  // outliers of per-GPU metrics
  std::optional<double> value, median, mad, z;
  std::string text;        // one line in words
  int count = 0;                   // fleet-wide: nodes failing; duplicate: reports of the name
  std::vector<std::string> files;  // duplicate: the origin of every report of the name
};

struct NodeClass {
  std::string key;  // gpu_model | drive_model | nic_model
  std::string gpu_model, drive_model, nic_model;  // the key's parts, "" where the members have none
  std::vector<std::size_t> members;  // indices into ClusterResult::nodes
  int gpus = 0, drives = 0, nics = 0;  // the class majority's counts
  // The member whose fingerprint stands for the class (reference_member): the known-good
  // file gdsb-cluster writes for gdsb-topo --health. An index into ClusterResult::nodes.
  std::size_t reference = 0;
  // Every member's gdsb-topo sentence when GDS applies to none of them alike (a class of
  // login nodes: "GDS not applicable on this node: no NVIDIA GPU"); "" otherwise.
  std::string applicability;
  // Management NICs, listed apart (never judged): the majority's count and the most common
  // model among the members that have any ("" when none has).
  int management_nics{};
  std::string management_nic_model{};
};

// The class's hardware in words, its majority's counts with the models: "8 GPUs (NVIDIA H100
// 80GB HBM3), 8 NVMe drives (Samsung PM1733), 8 data NICs (ConnectX-7)"; a login node's
// "no GPU, no NVMe drive, no data NIC".
std::string class_words(const NodeClass& c);

// What a class of one node shows: "the only node of its class: nothing to compare it with,
// so its failures are its own"; "" for a class of two nodes or more.
std::string_view class_comparison(const NodeClass& c);

struct MetricStats {
  std::string metric;
  std::string class_key;
  std::optional<int> gpu;  // position, for per-GPU metrics
  double median = 0, mad = 0;
  int count = 0;
};

// One hardware fault across the fleet (issue 36): the nodes whose summaries carry it
// (NodeFault), each node once. A node's list of the same fault on several devices is one row.
struct FleetFault {
  std::string kind;      // NodeFault::kind ("xid", "aer_correctable_rate", ...)
  // "critical" when any node's is, else "warning"; "history" for an Xid of an earlier boot,
  // a group of its own (listed, never judged: not merged into the same Xid of this boot)
  std::string severity;
  int xid = 0;           // Xid faults: which one (one fault per code)
  std::string title;     // "Xid 79 (fallen off the bus)", "PCIe links replaying (...)"
  struct Node {
    std::string node;
    std::vector<std::string> bdfs;   // the devices, in the node's order
    int count = 0;                   // events or errors, summed over them
    std::vector<std::string> words;  // gdsb-topo's line for each
  };
  std::vector<Node> nodes;  // by node name
};

// Grouped by fault (kind, the Xid for Xid faults, history apart), critical first, history
// last, then by how many nodes.
std::vector<FleetFault> fleet_faults(const std::vector<NodeSummary>& nodes);

struct ClusterResult;
// Each node's faults against its known-good facts in the fleet: its class's reference (the
// known-good file gdsb-cluster writes for the class). An Xid whose address the node's own
// facts could not place (no GPU on its bus, a log file that is not its /dev/kmsg) is for a
// GPU of the node when that reference lists it (topo::gpu_of_node): the GPU is missing, a
// critical fault. Then one HardwareFault finding per node with a critical fault, first.
void judge_faults_in_classes(ClusterResult& r);

struct ClusterResult {
  std::vector<NodeSummary> nodes;  // sorted by node name
  std::vector<NodeClass> classes;
  std::vector<Finding> findings;   // in report order: missing first, then checks, topology, outliers
  std::vector<MetricStats> stats;
  std::vector<std::string> odd_nodes;  // every node named by a finding, sorted
  int fleet_wide = 0;                  // FleetWide findings (they name no node)
  std::optional<SharedStorageResult> storage;  // when some node ran the shared-storage phase
  std::vector<FleetFault> faults;              // the nodes' hardware faults, by fault
  AggregateOptions options;
  bool failed() const { return !odd_nodes.empty() || fleet_wide > 0; }
};

// O(N log N) in the number of nodes (the sort by name), linear in memory.
// `storage`: --demand-per-gpu and --scale-gain given to this run (the shared-storage phase).
ClusterResult aggregate(std::vector<NodeSummary> nodes, const AggregateOptions& options,
                        const StorageJudgement& storage = {});

// Every per-GPU metric and every node metric seen, in display order.
std::vector<std::string> gpu_metric_names(const ClusterResult& r);
std::vector<std::string> node_metric_names(const ClusterResult& r);

}  // namespace gdsb::cluster
