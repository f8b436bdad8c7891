// The fleet report at scale: a check most nodes of a class fail is one fleet-wide line and
// names no node; duplicate node identities are named with their files and counted once
// (reading node reports: summary_reader_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/outputs.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/render.hpp"

using namespace gdsb::cluster;

namespace {

NodeSummary vm(const std::string& name) {
  NodeSummary s;
  s.node = name;
  s.gpu_model = "H100";
  s.gpus = 1;
  s.topo_verdict = "fail";
  s.fingerprint = {{"IOMMU", "translated"}};
  return s;
}

std::string name(int i) { return "vm" + std::to_string(10000 + i); }

// The H100 VM's recorded `gdsb-topo --json` (tests/doctor/fixtures/real/h100-vm, SOURCES.md
// there). Read off it: gds-stack gives five results; only "nvidia-fs driver" fails
// ("/proc/driver/nvidia-fs absent (module not loaded)"), "udev database" passes.
nlohmann::json h100_vm_topology() {
  std::ifstream in(std::string(GDSB_H100_VM_REPORTS) + "/topo.json");
  return nlohmann::json::parse(in);
}

// A node document around a topology report, as a rank writes it (no summary block).
NodeSummary node_from(const std::string& node, const nlohmann::json& topology) {
  const nlohmann::json doc{{"schema", kNodeSchema},
                           {"node", node},
                           {"hardware", {{"gpu_model", "NVIDIA H100 80GB HBM3"}, {"gpus", 1}}},
                           {"topology", topology}};
  return summarize(doc, node + ".json");
}

}  // namespace

TEST(Fleet, ACheckEveryNodeFailsIsOneFleetWideLineAndNoOddNode) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 1000; ++i) {
    nodes.push_back(vm(name(i)));
    nodes.back().failing_checks.push_back({"nvidia-fs", "fail", "nvidia_fs is not loaded"});
  }
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::FleetWide);
  EXPECT_EQ(r.findings[0].node, "");
  EXPECT_EQ(r.findings[0].count, 1000);
  EXPECT_EQ(r.findings[0].text,
            "check nvidia-fs failed on 1000 of 1000 nodes of class 1 (fleet-wide: no node is "
            "odd for it): nvidia_fs is not loaded");
  EXPECT_TRUE(r.odd_nodes.empty());
  EXPECT_TRUE(r.failed());  // the check still failed: exit 3, but no node is blamed
  const std::string text = cluster_text(r);
  EXPECT_NE(text.find("0 odd node(s), 1 fleet-wide finding(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL: no odd node; 1 fleet-wide finding(s)"), std::string::npos) << text;
  const std::string junit = cluster_junit(r);
  EXPECT_NE(junit.find("name=\"nvidia-fs\"><failure"), std::string::npos);
}

TEST(Fleet, TheMajorityIsFleetWideAndTheMinorityIsOdd) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(vm(name(i)));
  for (std::size_t i = 0; i < 6; ++i) nodes[i].failing_checks.push_back({"nvidia-fs", "fail", "absent"});
  nodes[9].failing_checks.push_back({"acs-redirect", "fail", "RR on 0000:17:01.0"});
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::FleetWide);
  EXPECT_EQ(r.findings[0].count, 6);
  EXPECT_EQ(r.findings[1].kind, FindingKind::CheckFailed);
  EXPECT_EQ(r.odd_nodes, std::vector<std::string>{name(9)});
}

TEST(Fleet, HalfTheNodesIsNotAMajority) {
  std::vector<NodeSummary> nodes{vm("a"), vm("b"), vm("c"), vm("d")};
  nodes[0].failing_checks.push_back({"nvidia-fs", "fail", "absent"});
  nodes[1].failing_checks.push_back({"nvidia-fs", "fail", "absent"});
  const ClusterResult r = aggregate(nodes, {});
  EXPECT_EQ(r.fleet_wide, 0);
  EXPECT_EQ(r.odd_nodes, (std::vector<std::string>{"a", "b"}));
}

// A class of one node is no fleet: its failing check is its own, named on it (it was called
// "fleet-wide" with "1 of 1 nodes"), and the class line says why nothing was compared.
TEST(Fleet, ANodeAloneInItsClassFailsOnItsOwn) {
  std::vector<NodeSummary> nodes{vm("a")};
  nodes[0].failing_checks.push_back({"nvidia-fs", "fail", "absent"});
  const ClusterResult r = aggregate(nodes, {});
  EXPECT_EQ(r.fleet_wide, 0);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::CheckFailed);
  EXPECT_EQ(r.findings[0].text, "a: check nvidia-fs failed: absent");
  EXPECT_EQ(r.odd_nodes, std::vector<std::string>{"a"});
  EXPECT_TRUE(r.failed());
  const std::string text = cluster_text(r);
  EXPECT_NE(text.find("  class 1: 1 node(s), 1 GPU (H100), no NVMe drive, no data NIC; the only node of its "
                      "class: nothing to compare it with, so its failures are its own\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("FAIL: odd nodes: a\n"), std::string::npos) << text;
  const auto doc = cluster_document(r, {}, {}, "0");
  EXPECT_EQ(doc.at("classes").at(0).at("comparison"),
            "the only node of its class: nothing to compare it with, so its failures are its own");
  EXPECT_NE(gdsb::report::render_html(doc).find("no data NIC; the only node of its class: nothing to "
                                                "compare it with, so its failures are its own"),
            std::string::npos);
  // The same node beside a node of another class: still alone in its own.
  nodes.push_back(vm("b"));
  nodes[1].gpu_model = "L40S";
  const ClusterResult two_classes = aggregate(nodes, {});
  EXPECT_EQ(two_classes.fleet_wide, 0);
  EXPECT_EQ(two_classes.odd_nodes, std::vector<std::string>{"a"});
}

// Two nodes are a fleet: a failure on both is more than half, one fleet-wide finding; a
// failure on one of two is half, not a majority, and names its node. Neither class line
// carries the note of a class of one.
TEST(Fleet, TwoOfTwoIsFleetWideAndOneOfTwoIsNot) {
  std::vector<NodeSummary> nodes{vm("a"), vm("b")};
  for (auto& n : nodes) n.failing_checks.push_back({"nvidia-fs", "fail", "absent"});
  const ClusterResult both = aggregate(nodes, {});
  EXPECT_EQ(both.fleet_wide, 1);
  ASSERT_EQ(both.findings.size(), 1u);
  EXPECT_EQ(both.findings[0].count, 2);
  EXPECT_TRUE(both.odd_nodes.empty());
  EXPECT_EQ(cluster_text(both).find("the only node of its class"), std::string::npos);
  EXPECT_EQ(cluster_document(both, {}, {}, "0").at("classes").at(0).at("comparison"), "");
  nodes[1].failing_checks.clear();
  const ClusterResult one = aggregate(nodes, {});
  EXPECT_EQ(one.fleet_wide, 0);
  EXPECT_EQ(one.odd_nodes, std::vector<std::string>{"a"});
}

TEST(Fleet, ThousandDuplicatesAreNamedOnceWithTheirFiles) {
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 1000; ++i) {
    nodes.push_back(vm("localhost"));
    nodes.back().origin = "nodes/copy" + std::to_string(i) + ".json";
  }
  nodes.push_back(vm("other"));
  const ClusterResult r = aggregate(nodes, {});
  EXPECT_EQ(r.nodes.size(), 2u);  // each identity counted once
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.kind, FindingKind::DuplicateNode);
  EXPECT_EQ(f.count, 1000);
  ASSERT_EQ(f.files.size(), 1000u);
  EXPECT_EQ(f.files.front(), "nodes/copy0.json");  // the first given is the one judged
  EXPECT_EQ(f.text.rfind("localhost: 1000 reports carry this node name (nodes/copy0.json, "
                         "nodes/copy1.json, nodes/copy2.json and 997 more); only the first is judged",
                         0),
            0u)
      << f.text;
  EXPECT_EQ(r.odd_nodes, std::vector<std::string>{"localhost"});
  // Linear output: one test case per identity (it was 1,000 cases of 1,000 findings each).
  EXPECT_LT(cluster_junit(r).size(), 4096u);
  EXPECT_EQ(cluster_document(r, {}, {}, "0").at("nodes").size(), 2u);
}

TEST(Fleet, DuplicateRanksStillCountAsAnswered) {
  std::vector<NodeSummary> nodes{vm("clone"), vm("clone"), vm("b")};
  const ClusterResult r = aggregate(nodes, {3.5, 0.1, 3});
  ASSERT_EQ(r.findings.size(), 1u);  // no "rank(s) sent no summary"
  EXPECT_EQ(r.findings[0].kind, FindingKind::DuplicateNode);
}

// gds-stack covers nvidia-fs, udev, cufile.json and the file systems: seven VMs without
// nvidia-fs (the recording as it is) and three that have it but lost their udev database
// (the recording with those two results changed as gdsb-topo writes them) are two failures.
// The seven are fleet-wide; the three are odd nodes, each named with its own failure.
TEST(Fleet, DifferentGdsStackFailuresAreReportedApart) {
  const nlohmann::json recorded = h100_vm_topology();
  nlohmann::json no_udev = recorded;
  for (auto& c : no_udev.at("checks")) {
    if (c.at("title") == "nvidia-fs driver") {
      c["verdict"] = "pass";
      c["evidence"] = {"/proc/driver/nvidia-fs present, version 2.26"};
      c["consequence"] = "";
    }
    if (c.at("title") == "udev database") {
      c["verdict"] = "fail";
      c["evidence"] = {"/run/udev/data absent"};
      c["consequence"] =
          "cuFile looks up ID_FS_USAGE/ID_FS_TYPE in the udev database: without it "
          "cuFileHandleRegister fails (5027/5030, \"udev property not found: ID_FS_USAGE\")";
    }
  }
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(node_from(name(i), i < 7 ? recorded : no_udev));
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.fleet_wide, 1);
  const Finding& fleet = r.findings.at(0);
  EXPECT_EQ(fleet.kind, FindingKind::FleetWide);
  EXPECT_EQ(fleet.count, 7);
  EXPECT_EQ(fleet.metric, "gds-stack: nvidia-fs driver");
  EXPECT_EQ(fleet.text,
            "check gds-stack (nvidia-fs driver) failed on 7 of 10 nodes of class 1 (fleet-wide: no "
            "node is odd for it): /proc/driver/nvidia-fs absent (module not loaded)");
  EXPECT_EQ(r.odd_nodes, (std::vector<std::string>{name(7), name(8), name(9)}));
  ASSERT_EQ(r.findings.size(), 4u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(r.findings[i].kind, FindingKind::CheckFailed);
    EXPECT_EQ(r.findings[i].text, name(static_cast<int>(i) + 6) +
                                      ": check gds-stack (udev database) failed: /run/udev/data absent");
  }
  // The same check failing the same way on most nodes is still one fleet-wide finding.
  nodes.clear();
  for (int i = 0; i < 10; ++i) nodes.push_back(node_from(name(i), recorded));
  const ClusterResult all = aggregate(nodes, {});
  EXPECT_EQ(all.fleet_wide, 1);
  EXPECT_TRUE(all.odd_nodes.empty());
}

// Issue 29: a fleet of GPU nodes plus one login node. The login node's topology report is
// gdsb-topo's own, evaluated from the QEMU guest of the corpus (tests/topo/fixtures/real:
// virtio disks and NIC, no NVIDIA GPU). It is its own class, named as one GDS does not
// apply to, and not odd: nothing it lacks is held against the GPU nodes' majority.
TEST(Fleet, ALoginNodeWithoutGpusIsItsOwnClassNotOdd) {
  gdsb::topo::CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  const gdsb::topo::Snapshot s = gdsb::topo::collect_lspci_text(
      std::string(GDSB_TOPO_REAL_FIXTURES) + "/qemu-vm-virtio-lspci-v.txt", o);
  const gdsb::topo::TopologyView v(s);
  const nlohmann::json login_topo =
      gdsb::topo::to_json(s, v, gdsb::topo::evaluate(s, v), gdsb::topo::RunContext{});
  ASSERT_EQ(login_topo.at("gds_applicable"), false);
  std::vector<NodeSummary> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(node_from(name(i), h100_vm_topology()));
  const nlohmann::json login_doc{{"schema", kNodeSchema},
                                 {"node", "login1"},
                                 {"hardware", {{"gpus", 0}}},
                                 {"topology", login_topo}};
  nodes.push_back(summarize(login_doc, "login1.json"));
  EXPECT_EQ(nodes.back().applicability, "GDS not applicable on this node: no NVIDIA GPU");
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.classes.size(), 2u);
  const auto login = std::find_if(r.classes.begin(), r.classes.end(),
                                  [](const NodeClass& c) { return c.gpus == 0; });
  ASSERT_NE(login, r.classes.end());
  EXPECT_EQ(login->applicability, "GDS not applicable on this node: no NVIDIA GPU");
  EXPECT_EQ(std::find(r.odd_nodes.begin(), r.odd_nodes.end(), "login1"), r.odd_nodes.end());
  for (const auto& f : r.findings) EXPECT_NE(f.node, "login1") << f.text;
  const std::string text = cluster_text(r);
  EXPECT_NE(text.find("no GPU, no NVMe drive, no data NIC; GDS not applicable on this node: no NVIDIA GPU"),
            std::string::npos)
      << text;
}
