// The fleet's hardware faults (issue 36): each node summary's faults (NodeFault, gdsb-topo's
// judge_faults of the node's fault facts) grouped by fault, so that one line says which nodes
// had Xid 79 and one which links replay; each node once per fault, critical faults first.
// The Xid's meaning is the Xid table's row (hw_faults.hpp); no text is read to decide.
// A node with a critical fault is odd, listed first (issue 42).
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/topo/fingerprint_file.hpp"
#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::cluster {
namespace {

// What each of judge_faults' kinds is, said once for the fleet view (keys: fault_kind_name).
struct KindWords {
  topo::FaultKind kind;
  const char* words;
};
constexpr KindWords kKindWords[] = {
    {topo::FaultKind::Xid, "Xid"},
    {topo::FaultKind::XidNotOurGpu, "Xid for a PCI address that is not a GPU of the node"},
    {topo::FaultKind::EccUncorrectable, "uncorrectable ECC errors"},
    {topo::FaultKind::RemapFailed, "GPU row remapping failed"},
    {topo::FaultKind::RemapPending, "GPU row remapping pending (reset the GPU)"},
    {topo::FaultKind::RetiredPagesPending, "GPU page retirement pending (reload the driver)"},
    {topo::FaultKind::GpuRecoveryAction, "GPU recovery action set by the driver"},
    {topo::FaultKind::NvLinkErrors, "NVLink links replaying or retraining"},
    {topo::FaultKind::NvLinkCrcRate, "NVLink CRC errors past the rate"},
    {topo::FaultKind::AerCorrectableRate, "PCIe links replaying (correctable AER errors past the rate)"},
    {topo::FaultKind::AerUncorrectable, "uncorrectable PCIe (AER) errors"},
};

std::string title_of(const std::string& kind, int xid) {
  for (const KindWords& k : kKindWords) {
    if (kind != topo::fault_kind_name(k.kind)) continue;
    if (k.kind != topo::FaultKind::Xid) return k.words;
    const topo::XidRow* row = topo::find_xid(xid);
    return "Xid " + std::to_string(xid) + " (" +
           (row ? std::string(row->meaning) : std::string("not in NVIDIA's catalog")) + ")";
  }
  return kind;  // a kind of a newer version: its name
}

}  // namespace

std::vector<FleetFault> fleet_faults(const std::vector<NodeSummary>& nodes) {
  const std::string history(topo::fault_severity_name(topo::FaultSeverity::History));
  std::map<std::tuple<bool, std::string, int>, FleetFault> by_fault;
  for (const NodeSummary& n : nodes)
    for (const NodeFault& f : n.faults) {
      const int xid = f.kind == topo::fault_kind_name(topo::FaultKind::Xid) ? f.xid : 0;
      // A node summary's faults are judged since boot without a known-good log position
      // (summary.cpp): its history is an Xid of an earlier boot.
      const bool past = f.severity == history;
      FleetFault& g = by_fault[{past, f.kind, xid}];
      if (g.kind.empty())
        g = FleetFault{f.kind, f.severity, xid, title_of(f.kind, xid) + (past ? " in an earlier boot, not judged" : ""), {}};
      if (f.severity == "critical") g.severity = "critical";
      if (g.nodes.empty() || g.nodes.back().node != n.node) g.nodes.push_back({n.node, {}, 0, {}});
      FleetFault::Node& at = g.nodes.back();
      if (std::find(at.bdfs.begin(), at.bdfs.end(), f.bdf) == at.bdfs.end()) at.bdfs.push_back(f.bdf);
      at.count += f.count;
      at.words.push_back(f.words);
    }
  std::vector<FleetFault> out;
  for (auto& [key, g] : by_fault) {
    std::sort(g.nodes.begin(), g.nodes.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
    out.push_back(std::move(g));
  }
  // Critical first, history last; then the fault on most nodes; then by kind and Xid, for a
  // stable order.
  const auto rank = [&](const FleetFault& f) { return f.severity == "critical" ? 0 : f.severity == history ? 2 : 1; };
  std::stable_sort(out.begin(), out.end(), [&](const FleetFault& a, const FleetFault& b) {
    return std::make_tuple(rank(a), -static_cast<long>(a.nodes.size()), a.kind, a.xid) <
           std::make_tuple(rank(b), -static_cast<long>(b.nodes.size()), b.kind, b.xid);
  });
  return out;
}

void judge_faults_in_classes(ClusterResult& r) {
  const std::string not_placed(topo::fault_kind_name(topo::FaultKind::XidNotOurGpu));
  for (const NodeClass& c : r.classes) {
    std::optional<std::vector<std::string>> known;  // read once, where some member needs it
    for (std::size_t i : c.members) {
      NodeSummary& n = r.nodes[i];
      bool changed = false;
      for (NodeFault& f : n.faults) {
        if (f.kind != not_placed) continue;
        if (!known) {
          const NodeSummary& ref = r.nodes[c.reference];
          known = topo::known_gpus(topo::facts_from_texts(ref.fingerprint.texts(), "node " + ref.node + ": fingerprint"));
        }
        const bool lists = std::find(known->begin(), known->end(), f.bdf) != known->end();
        // Not on the node's bus and not its own log: that much its judgement established.
        if (topo::gpu_of_node(false, lists, false) != topo::GpuOfNode::Missing) continue;
        f = node_fault(topo::missing_gpu_xid(f.bdf, f.xid, static_cast<uint64_t>(f.count), f.when));
        changed = true;
      }
      if (changed)  // critical first, as judge_faults orders them
        std::stable_sort(n.faults.begin(), n.faults.end(), [](const NodeFault& a, const NodeFault& b) {
          return a.severity == "critical" && b.severity != "critical";
        });
    }
  }
  // The nodes the health check would drain: each once, with its worst fault, before every
  // other finding.
  std::vector<Finding> drained;
  for (const NodeSummary& n : r.nodes) {
    const auto critical = static_cast<std::size_t>(std::count_if(
        n.faults.begin(), n.faults.end(), [](const NodeFault& f) { return f.severity == "critical"; }));
    if (critical == 0) continue;
    Finding f;
    f.kind = FindingKind::HardwareFault;
    f.node = n.node;
    f.metric = n.faults.front().kind;
    f.text = n.node + ": " + n.faults.front().words +
             (critical > 1 ? " (and " + std::to_string(critical - 1) + " more critical fault(s))" : "");
    drained.push_back(std::move(f));
  }
  r.findings.insert(r.findings.begin(), drained.begin(), drained.end());
}

}  // namespace gdsb::cluster
