// The compact summary of one node that travels to rank 0 (a few KB): identity, hardware
// class, versions, failing checks, metrics and the topology fingerprint. It is made from
// the node's full document (node_report.hpp) by summarize(), both by the rank itself and by
// `gdsb-cluster --from`, so the two routes aggregate the same data.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gdsb/cluster/fingerprint_texts.hpp"
#include "gdsb/cluster/shared_storage.hpp"

namespace gdsb::topo {
struct FaultFinding;
}

namespace gdsb::cluster {

inline constexpr const char* kNodeSchema = "gdsbench.cluster-node/1";
// The node document's phase with the node's own figure (node_report.hpp, node_figure_phase).
inline constexpr const char* kNodeFigurePhase = "node_figure";

enum class NodeStatus { Ok, Error, Missing };
std::string_view node_status_name(NodeStatus s);  // "ok", "error", "missing"

// One failed or warning result of a check. A check gives several results (gds-stack: the
// nvidia-fs driver, udev, cufile.json, file systems), so the id alone does not say what
// failed: the title and the cause (its consequence) do.
struct FailingCheck {
  std::string id;
  std::string verdict;  // "fail" or "warn"
  std::string summary;  // first evidence line
  std::string title{};  // the result's title ("" in reports of older versions)
  std::string cause{};  // the result's consequence
};

// One hardware fault of the node: a finding of gdsb-topo's judge_faults (hw_faults.hpp) on
// the fault facts the node's topology snapshot carries (Xid events, ECC and row remapping,
// AER counters), judged against the boot (a node report has no known-good file); an Xid
// the node's facts could not place is judged again against its class's known-good GPUs
// (aggregate.hpp, fleet_faults).
struct NodeFault {
  std::string kind;      // topo::fault_kind_name: "xid", "aer_correctable_rate", ...
  std::string severity;  // "critical" (drains) or "warning"
  std::string bdf;       // the device
  std::string device;    // "GPU", "NVMe", "NIC", "port", "device"
  int xid = 0;           // Xid findings
  int count = 0;         // events, errors or rows (capped at the largest int)
  std::string words;     // judge_faults' line
  std::string when{};    // Xid findings: the last event ("11:43:14", "+5107.6 s after boot")
};

// Metric names and units, defined once (docs/gdsb-cluster.md).
//   per GPU: h2d_gb_s, d2h_gb_s (pinned copies, median sample), d2d_gb_s (median over peers
//            of the GPU's unidirectional copies, peer access on where it works, else off)
//   per node: io_x<N>_read_gb_s (gdsb-io -x N sequential read throughput)
// GB/s = 1e9 bytes per second.
struct NodeSummary {
  std::string node;  // display name: host, or host.rank when ranks share a host
  std::string host;
  int rank = -1;
  // The node's identity (node_identity.hpp), shared by the ranks of one node; "" in reports
  // of older versions, each of which was a node of its own (node_key()).
  std::string node_id;
  // Every rank of the node, ascending, when several ranks reported on it (aggregate() keeps
  // one row a node: the lowest rank's); empty otherwise. Not part of the summary.
  std::vector<int> ranks;
  NodeStatus status = NodeStatus::Ok;
  std::vector<std::string> errors;  // "phase: message" for each phase that failed
  std::string gpu_model, drive_model, nic_model;  // the hardware class; NICs: data NICs only
  int gpus = 0, drives = 0, nics = 0;
  // Management NICs (gdsb/topo/nic_role.hpp: 1/10 GbE, a BMC's, virtual), listed apart: never
  // in the class or its counts. 0 and "" in reports of older versions, whose nics counted all.
  std::string management_nic_model;
  int management_nics = 0;
  std::string driver, kernel;
  std::string topo_verdict;  // pass, warn, fail, or "" when the topology phase failed
  // gdsb-topo's sentence when GDS does not apply to the node ("GDS not applicable on this
  // node: no NVIDIA GPU" on a login or storage node); "" when it applies (issue 29).
  std::string applicability;
  std::vector<FailingCheck> failing_checks;
  std::vector<NodeFault> faults;  // critical first, as judge_faults orders them
  std::map<std::string, std::vector<std::optional<double>>> gpu_metrics;
  std::map<std::string, double> node_metrics;
  std::map<std::string, std::string> waived;  // metric or mode -> reason
  // The shared-storage phase (shared_storage.hpp): its setup and this rank's samples; nullopt
  // when the phase did not run on this node.
  std::optional<RankStorage> storage;
  FingerprintTexts fingerprint;  // fingerprint.hpp; ids into a table the nodes read together share
  // Where the summary came from ("--from FILE" or "rank N"), to name both sources of a
  // duplicate identity. Not part of the JSON.
  std::string origin;

  std::string class_key() const;  // gpu_model | drive_model | nic_model
};

void to_json(nlohmann::json& j, const NodeSummary& s);
// The same without the fingerprint (cluster.json's node rows): building the fingerprint's
// hundreds of entries only to erase them was a tenth of aggregating 10,000 nodes.
nlohmann::json summary_without_fingerprint(const NodeSummary& s);
// Through summary_from_text(): one reader of summaries.
void from_json(const nlohmann::json& j, NodeSummary& s);

// The summary of a full node document (schema gdsbench.cluster-node/1). Throws
// gdsb::UsageError naming `origin` when the document is not one.
NodeSummary summarize(const nlohmann::json& node_doc, const std::string& origin,
                      const std::shared_ptr<TextTable>& table = nullptr);

// The summary block of a node report's text, read straight into a NodeSummary (no JSON
// document is built): ranks write "schema" then "summary" first, so the rest of the text is
// never read. nullopt when the text has no such block (written by other means, the schema
// after it, or cut before the block ends). Throws gdsb::UsageError naming `origin` when the
// block is there but malformed.
// `table`: where the fingerprint's texts are interned (shared by the nodes read together);
// null: a table of the summary's own. `like`: a fingerprint on that table the node's is
// probably like (the node read before), tried first (FingerprintTexts::set).
std::optional<NodeSummary> read_summary_block(std::string_view text, const std::string& origin,
                                              const std::shared_ptr<TextTable>& table = nullptr,
                                              const FingerprintTexts* like = nullptr);
// A summary on its own (what a rank sends rank 0), through the same reader. Throws
// gdsb::UsageError naming `origin` when the text is not one.
NodeSummary summary_from_text(std::string_view text, const std::string& origin,
                              const std::shared_ptr<TextTable>& table = nullptr);

// The summary of one node report file's contents: its summary block when it has one, else
// summarize() of the whole document, read without the subtrees no summary needs. Throws
// gdsb::UsageError naming `origin` when the text is not JSON or not a node report.
NodeSummary read_node_summary(std::istream& in, const std::string& origin,
                              const std::shared_ptr<TextTable>& table = nullptr,
                              const FingerprintTexts* like = nullptr);

// The summaries of these node report files (gdsb-cluster --from), read on every CPU, in
// the order given, each with its path as origin; their fingerprints share one table. Throws gdsb::UsageError naming the first
// file (in that order) that cannot be read or is not a node report.
std::vector<NodeSummary> read_node_reports(const std::vector<std::string>& paths);

// An error record for a rank that sent nothing usable or never answered.
NodeSummary missing_node(int rank, const std::string& why);

// A gdsb-topo fault finding as the summary carries it.
NodeFault node_fault(const topo::FaultFinding& f);

}  // namespace gdsb::cluster
