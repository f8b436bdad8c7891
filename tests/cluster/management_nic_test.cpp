// Node classes count data NICs, as the fingerprint does, and list management NICs apart
// (gdsb/topo/nic_role.hpp), from the real HGX H100 recording (tests/topo/fixtures/real,
// SOURCES.md there). Every expectation was written by reading the recording.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/node_report.hpp"
#include "gdsb/cluster/outputs.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/report/html.hpp"

using namespace gdsb::cluster;

namespace {

namespace fs = std::filesystem;
const fs::path kHgx = fs::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The recording without the functions whose header line starts with one of `bdfs` (each
// function is its header line and the indented lines up to the next blank line).
std::string without(const std::string& text, const std::vector<std::string>& bdfs) {
  std::istringstream in(text);
  std::string out, line;
  bool skipping = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '\t' && line[0] != ' ') {
      skipping = false;
      for (const auto& b : bdfs) skipping = skipping || line.rfind(b + " ", 0) == 0;
    }
    if (!skipping) out += line + '\n';
  }
  return out;
}

// One node as a rank makes it: the topology phase on a recording, then its node document's
// summary (what --from reads of a report without a summary block).
NodeSummary node_of(const std::string& name, const fs::path& lspci_text, NodeFacts* out = nullptr) {
  NodeOptions o;
  o.sources.lspci_text = lspci_text.string();
  o.no_hwloc = true;
  o.no_nvml = true;
  NodeFacts facts;
  PhaseRecord topology;
  topology.name = "topology";
  topology.document = topology_phase(o, facts);
  if (out != nullptr) *out = facts;
  return summarize(node_document(name, name, 0, facts, {topology}), name + ".json");
}

}  // namespace

// Read off the recording: ConnectX-7 (MT2910) at 1a, 3c, 4d, 5e, 9c, bc, cc and dc:00.0 and
// ConnectX-6 Dx (MT2892) at 1b:00.0/.1 and 9d:00.0/.1 are data NICs (Mellanox: RoCE); the
// two BCM5720 Gigabit ports at 01:00.0/.1 ("Embedded NIC 1"/"2", Dell LOM) are management.
const char* const kConnectX7 = "Mellanox Technologies MT2910 Family [ConnectX-7]";
const char* const kBcm5720 =
    "Broadcom Inc. and subsidiaries NetXtreme BCM5720 Gigabit Ethernet PCIe";

TEST(NodeClass, TheHgxNodeCountsItsDataNicsAndListsItsGigabitPortsApart) {
  NodeFacts facts;
  const NodeSummary s = node_of("hgx1", kHgx, &facts);
  EXPECT_EQ(facts.nics, 12);
  EXPECT_EQ(facts.nic_model, kConnectX7);
  EXPECT_EQ(facts.management_nics, 2);
  EXPECT_EQ(facts.management_nic_model, kBcm5720);
  EXPECT_EQ(s.gpus, 8);
  EXPECT_EQ(s.drives, 8);
  EXPECT_EQ(s.nics, 12);
  EXPECT_EQ(s.nic_model, kConnectX7);
  EXPECT_EQ(s.management_nics, 2);
  EXPECT_EQ(s.management_nic_model, kBcm5720);
  // What a rank sends rank 0 and writes as its summary block: read back by the one reader.
  const NodeSummary sent = summary_from_text(nlohmann::json(s).dump(), "rank 0");
  EXPECT_EQ(sent.nics, 12);
  EXPECT_EQ(sent.management_nics, 2);
  EXPECT_EQ(sent.management_nic_model, kBcm5720);
  const ClusterResult r = aggregate({s, node_of("hgx2", kHgx)}, {});
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().text;
  const std::string text = cluster_text(r);
  EXPECT_NE(
      text.find(std::string("12 data NICs (") + kConnectX7 + "); management NICs apart: 2 x " + kBcm5720 + "\n"),
      std::string::npos)
      << text;
  const auto cls = cluster_document(r, {}, {}, "0").at("classes").at(0);
  EXPECT_EQ(cls.at("nics"), 12);
  EXPECT_EQ(cls.at("management_nics"), 2);
  EXPECT_EQ(cls.at("management_nic_model"), kBcm5720);
  // cluster.html's table of classes, a view of the same document.
  const std::string html = gdsb::report::render_html(cluster_document(r, {}, {}, "0"));
  EXPECT_NE(
      html.find(std::string("12 data NICs (") + kConnectX7 + "); management NICs apart: 2 x " + kBcm5720),
      std::string::npos);
}

// The invariant: the same node with none, one or both of its gigabit ports is one class with
// one NIC count; nothing about it is judged (no missing hardware, no topology difference).
TEST(NodeClass, AddingAManagementNicChangesNeitherTheClassNorTheNicCount) {
  const std::string recorded = read_text(kHgx);
  const fs::path dir = fs::path(::testing::TempDir()) / "gdsb-management-nic-test";
  fs::create_directories(dir);
  const fs::path none = dir / "no-lom.txt", one = dir / "one-lom.txt";
  std::ofstream(none, std::ios::binary) << without(recorded, {"01:00.0", "01:00.1"});
  std::ofstream(one, std::ios::binary) << without(recorded, {"01:00.1"});
  const std::vector<NodeSummary> nodes{node_of("a", none), node_of("b", one), node_of("c", kHgx),
                                       node_of("d", none)};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].class_key(), nodes[0].class_key()) << nodes[i].node;
    EXPECT_EQ(nodes[i].nics, 12) << nodes[i].node;
  }
  EXPECT_EQ(nodes[0].management_nics, 0);
  EXPECT_EQ(nodes[0].management_nic_model, "");
  EXPECT_EQ(nodes[1].management_nics, 1);
  EXPECT_EQ(nodes[2].management_nics, 2);
  const ClusterResult r = aggregate(nodes, {});
  EXPECT_EQ(r.classes.size(), 1u);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().text;
  // Two of four have none: the majority's count is 0, and the class line lists none.
  EXPECT_EQ(r.classes.at(0).management_nics, 0);
  EXPECT_EQ(cluster_text(r).find("management NICs"), std::string::npos) << cluster_text(r);
  fs::remove_all(dir);
}

// A report written before NICs were split (fixtures/hgx-node-template.json, the HGX node:
// "nics": 14, the two BCM5720 ports counted) still loads, its count as written, and its class
// line lists no management NICs: nothing says which of its 14 they were.
TEST(NodeClass, AReportOfAnOlderVersionKeepsItsNicsAsWritten) {
  std::ifstream in(std::string(GDSB_CLUSTER_FIXTURES) + "/hgx-node-template.json",
                   std::ios::binary);
  const NodeSummary s = read_node_summary(in, "hgx-node-template.json");
  EXPECT_EQ(s.nics, 14);
  EXPECT_EQ(s.nic_model, kConnectX7);
  EXPECT_EQ(s.management_nics, 0);
  EXPECT_EQ(s.management_nic_model, "");
  in.clear();
  in.seekg(0);
  nlohmann::json doc = nlohmann::json::parse(in);
  doc.erase("summary");  // the whole-document reader: its "hardware" block
  const NodeSummary whole = summarize(doc, "hgx-node-template.json");
  EXPECT_EQ(whole.nics, 14);
  EXPECT_EQ(whole.management_nics, 0);
  const std::string text = cluster_text(aggregate({s}, {}));
  EXPECT_NE(text.find(std::string("14 data NICs (") + kConnectX7 + "); the only node"), std::string::npos) << text;
}
