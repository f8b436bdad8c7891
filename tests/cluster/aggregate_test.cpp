// Aggregation: classes of like hardware, missing hardware first, outliers per GPU position.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/outputs.hpp"

using namespace gdsb::cluster;

namespace {

NodeSummary node(const std::string& name, const std::string& model, int gpus, double h2d) {
  NodeSummary s;
  s.node = name;
  s.gpu_model = model;
  s.gpus = gpus;
  s.drives = 2;
  s.nics = 1;
  s.topo_verdict = "pass";
  for (int g = 0; g < gpus; ++g) s.gpu_metrics["h2d_gb_s"].push_back(h2d + 0.1 * g);
  s.node_metrics["io_x1_read_gb_s"] = 6.0;
  s.fingerprint = {{"IOMMU", "identity"}};
  return s;
}

}  // namespace

TEST(Aggregate, TwoNodeTypesAreNotFlaggedAsAWholeType) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(node("a" + std::to_string(i), "H100", 8, 50));
  for (int i = 0; i < 6; ++i) nodes.push_back(node("b" + std::to_string(i), "L40S", 4, 25));
  const ClusterResult r = aggregate(nodes, {});
  EXPECT_EQ(r.classes.size(), 2u);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().text;
  EXPECT_FALSE(r.failed());
}

TEST(Aggregate, MissingGpuComesFirstAndTheSlowGpuIsNamedWithItsPosition) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 5; ++i) nodes.push_back(node("n" + std::to_string(i), "H100", 8, 50));
  nodes[2].gpu_metrics["h2d_gb_s"][3] = 20;  // n2 GPU3 slow
  nodes[4].gpus = 7;                         // one fell off the bus
  nodes[4].gpu_metrics["h2d_gb_s"].pop_back();
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::MissingHardware);
  EXPECT_EQ(r.findings[0].text, "n4: 7 GPUs, 8 on the other nodes of its class");
  EXPECT_EQ(r.findings[1].kind, FindingKind::Outlier);
  EXPECT_EQ(r.findings[1].node, "n2");
  EXPECT_EQ(r.findings[1].gpu, 3);
  EXPECT_EQ(r.odd_nodes, (std::vector<std::string>{"n2", "n4"}));
}

TEST(Aggregate, MissingRanksAndFailedChecksAreReported) {
  std::vector<NodeSummary> nodes{node("n0", "H100", 2, 50), node("n1", "H100", 2, 50),
                                 missing_node(2, "no summary")};
  nodes[1].failing_checks.push_back({"acs-redirect", "fail", "RR on 0000:02:00.0"});
  const ClusterResult r = aggregate(nodes, {3.5, 0.1, 4});
  ASSERT_GE(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].text, "1 rank(s) sent no summary");
  EXPECT_EQ(r.findings[1].kind, FindingKind::MissingNode);
  EXPECT_EQ(r.findings[1].node, "rank2");
  EXPECT_EQ(r.odd_nodes, (std::vector<std::string>{"n1", "rank2"}));
  const auto doc = cluster_document(r, {"gdsb-cluster"}, {}, "0.1.0");
  EXPECT_EQ(doc.at("schema"), "gdsbench.cluster/1");
  EXPECT_EQ(doc.at("verdict"), "fail");
  const std::string junit = cluster_junit(r);
  EXPECT_NE(junit.find("name=\"n1\"><failure"), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"n0\"><system-out>"), std::string::npos);
  const std::string prom = cluster_openmetrics(r);
  EXPECT_NE(prom.find("gdsb_cluster_h2d_gb_s{node=\"n0\",gpu=\"1\"} 50.1"), std::string::npos) << prom;
  EXPECT_NE(prom.find("gdsb_cluster_node_ok{node=\"n1\"} 0"), std::string::npos);
}

TEST(Aggregate, SummaryRoundTripsThroughJson) {
  NodeSummary s = node("n0", "H100", 2, 50);
  s.gpu_metrics["d2d_gb_s"] = {std::nullopt, 30.0};
  s.failing_checks.push_back({"link", "warn", "x8"});
  const NodeSummary back = nlohmann::json(s).get<NodeSummary>();
  EXPECT_EQ(nlohmann::json(back), nlohmann::json(s));
  EXPECT_FALSE(back.gpu_metrics.at("d2d_gb_s")[0].has_value());
}

TEST(Aggregate, EachClassNamesTheMemberMostLikeTheRestAsItsReference) {
  std::vector<NodeSummary> nodes{node("a3", "H100", 2, 50), node("a1", "H100", 2, 50),
                                 node("a2", "H100", 2, 50), node("b1", "A100", 2, 20)};
  nodes[1].fingerprint.set("IOMMU", "translated");  // a1, first by name, is the odd one
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.classes.size(), 2u);
  for (const NodeClass& c : r.classes)
    EXPECT_EQ(r.nodes[c.reference].node, c.key.rfind("H100", 0) == 0 ? "a2" : "b1") << c.key;
}

// Issue 36: hardware faults by fault, each node once, critical first, whatever order the
// nodes arrive in; a warning Xid and a critical Xid are separate faults (one per code).
TEST(Aggregate, FaultsAreListedByFaultEachNodeOnceCriticalFirst) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 5; ++i) nodes.push_back(node("n" + std::to_string(i), "H100", 8, 50));
  const NodeFault aer{"aer_correctable_rate", "warning", "0000:18:00.0", "NVMe", 0, 40, "w"};
  nodes[0].faults = {aer, {"aer_correctable_rate", "warning", "0000:19:00.0", "GPU", 0, 2, "w2"}};
  nodes[1].faults = {aer};
  nodes[2].faults = {{"xid", "warning", "0000:19:00.0", "GPU", 13, 1, "x13"}};
  nodes[4].faults = {{"xid", "critical", "0000:cb:00.0", "GPU", 79, 1, "a"},
                     {"xid", "critical", "0000:3b:00.0", "GPU", 79, 2, "b"}};
  nodes[3].faults = {{"xid", "critical", "0000:cb:00.0", "GPU", 79, 1, "c"}};
  std::reverse(nodes.begin(), nodes.end());
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.faults.size(), 3u);
  EXPECT_EQ(r.faults[0].xid, 79);
  EXPECT_EQ(r.faults[0].severity, "critical");
  EXPECT_EQ(r.faults[0].title.rfind("Xid 79 (", 0), 0u) << r.faults[0].title;
  ASSERT_EQ(r.faults[0].nodes.size(), 2u);  // n4 once, with both GPUs
  EXPECT_EQ(r.faults[0].nodes[0].node, "n3");
  EXPECT_EQ(r.faults[0].nodes[1].node, "n4");
  EXPECT_EQ(r.faults[0].nodes[1].bdfs, (std::vector<std::string>{"0000:cb:00.0", "0000:3b:00.0"}));
  EXPECT_EQ(r.faults[0].nodes[1].count, 3);
  // Warnings: the fault on two nodes before the one on one.
  EXPECT_EQ(r.faults[1].kind, "aer_correctable_rate");
  EXPECT_EQ(r.faults[1].nodes.size(), 2u);
  EXPECT_EQ(r.faults[1].nodes[0].count, 42);
  EXPECT_EQ(r.faults[2].xid, 13);
  // Issue 42: a node the health check would drain is odd, its worst fault first, each node
  // once (n4's two critical faults are one finding); warnings make no node odd.
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.odd_nodes, (std::vector<std::string>{"n3", "n4"}));
  ASSERT_GE(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::HardwareFault);
  EXPECT_EQ(r.findings[0].text, "n3: c");
  EXPECT_EQ(r.findings[1].text, "n4: a (and 1 more critical fault(s))");
  EXPECT_EQ(r.findings.size(), 2u);
  const auto text = cluster_text(r);
  EXPECT_LT(text.find("[critical] Xid 79"), text.find("[warning] "));
  const auto doc = cluster_document(r, {}, {}, "t");
  EXPECT_EQ(doc.at("faults").size(), 3u);
  EXPECT_TRUE(doc.at("faults")[1].at("xid").is_null());
}

// Issue 42: an Xid the node's own facts could not place (no GPU at the address on its bus, a
// log file of unknown boot) is for a GPU of the node when its class's known-good (the
// reference member's fingerprint, the file gdsb-cluster writes for the class) lists it: the
// GPU is missing, critical, the node odd and first. An address the reference lacks stays as
// it was.
TEST(Aggregate, AnXidTheNodeCouldNotPlaceIsForAGpuItsClassKnownGoodLists) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(node("n" + std::to_string(i), "H100", 2, 50));
    nodes.back().fingerprint = {{"GPU 0000:19:00.0", "present"}, {"GPU 0000:cb:00.0", "present"}};
  }
  NodeSummary& sick = nodes[1];
  sick.gpus = 1;
  sick.fingerprint = {{"GPU 0000:19:00.0", "present"}};
  sick.faults = {{"xid_not_our_gpu", "warning", "0000:77:00.0", "device", 13, 1, "elsewhere", "19:02:38"},
                 {"xid_not_our_gpu", "warning", "0000:cb:00.0", "device", 79, 1, "not placed", "19:02:39"}};
  const ClusterResult r = aggregate(nodes, {});
  const NodeSummary& n1 = r.nodes[1];
  ASSERT_EQ(n1.node, "n1");
  ASSERT_EQ(n1.faults.size(), 2u);
  EXPECT_EQ(n1.faults[0].kind, "xid");
  EXPECT_EQ(n1.faults[0].severity, "critical");
  EXPECT_EQ(n1.faults[0].device, "GPU");
  EXPECT_EQ(n1.faults[0].words, "GPU 0000:cb:00.0 missing: Xid 79 (fallen off the bus) at 19:02:39: drain, reboot");
  EXPECT_EQ(n1.faults[1].kind, "xid_not_our_gpu");
  EXPECT_EQ(n1.faults[1].words, "elsewhere");
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].kind, FindingKind::HardwareFault);
  EXPECT_EQ(r.findings[0].text, "n1: GPU 0000:cb:00.0 missing: Xid 79 (fallen off the bus) at 19:02:39: drain, reboot");
  EXPECT_EQ(r.odd_nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(r.faults.at(0).kind, "xid");
  EXPECT_EQ(r.faults.at(0).severity, "critical");
}
