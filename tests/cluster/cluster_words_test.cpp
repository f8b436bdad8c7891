// What cluster.txt and cluster.html say (issue 34): the scaling curve's share of linear apart
// from its gain, a class of no hardware in words, the same words on both.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/outputs.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/run_context.hpp"

using namespace gdsb::cluster;

namespace {

constexpr double T0 = 1764170000.0;
constexpr uint64_t GB = 1000000000ull;

NodeSummary node(int rank) {
  NodeSummary n;
  n.node = "node" + std::to_string(rank);
  n.host = n.node;
  n.rank = rank;
  n.storage = RankStorage{};
  n.storage->dir = "/scratch";
  n.storage->block_bytes = 1 << 20;
  n.storage->limit_bytes_per_rank = 1ull << 30;
  return n;
}

StorageSample read_sample(int k, double start, uint64_t bytes) {
  StorageSample s;
  s.op = "read";
  s.nodes = k;
  s.mode = 1;
  s.start_unix_s = T0 + start;
  s.end_unix_s = T0 + start + 1;
  s.bytes = bytes;
  s.stopped_by = "time";
  s.path_used = "posix";
  return s;
}

// The curve, in round figures: 1 node reads 4 GB/s; 2 read 3 GB/s (37.5% of linear;
// the added node took 1 GB/s away, -25% of a node's 4 GB/s); 4 read 2.8 GB/s (17.5% of
// linear; the 2 added nodes took 0.2 GB/s away, -2.5% of a node's figure each). The old text,
// "4 -> 2.8 GB/s (-2% of linear)", read as 2% below linear.
std::vector<NodeSummary> falling_curve() {
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 4; ++r) nodes.push_back(node(r));
  nodes[0].storage->samples.push_back(read_sample(1, 0, 4 * GB));
  for (std::size_t r = 0; r < 2; ++r) nodes[r].storage->samples.push_back(read_sample(2, 10, 3 * GB / 2));
  for (std::size_t r = 0; r < 4; ++r) nodes[r].storage->samples.push_back(read_sample(4, 20, 7 * GB / 10));
  return nodes;
}

std::string html_of(const ClusterResult& r) {
  return gdsb::report::render_html(cluster_document(r, {"gdsb-cluster"}, gdsb::collect_context(), "test"));
}

}  // namespace

TEST(ClusterWords, TheCurveSaysItsShareOfLinearApartFromWhatTheAddedNodesAdded) {
  const ClusterResult r = aggregate(falling_curve(), {});
  ASSERT_TRUE(r.storage);
  const std::string want =
      "1 -> 4 GB/s, 2 -> 3 GB/s (37.5% of linear; the added node added -25% of a node's figure), "
      "4 -> 2.8 GB/s (17.5% of linear; the 2 added nodes added -2.5% of a node's figure each); "
      "a node's figure: 4 GB/s, the first point's per node";
  const std::string text = cluster_text(r);
  EXPECT_NE(text.find("Scaling of read -x 1 (CPUONLY): " + want + ". Scaling stops at 2 nodes (the added "
                      "nodes added less than 50% of a node's figure each)."),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("% of linear)"), std::string::npos) << text;
  // cluster.html, a view of cluster.json, in the same words.
  const std::string html = html_of(r);
  EXPECT_NE(html.find(gdsb::report::html_escape(want)), std::string::npos) << gdsb::report::html_escape(want);
}

TEST(ClusterWords, AClassIsItsHardwareInWordsAndNoneIsSaid) {
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 2; ++r) {
    NodeSummary n;
    n.node = "gpu" + std::to_string(r);
    n.gpu_model = "NVIDIA H100 80GB HBM3";
    n.gpus = 8;
    n.drive_model = "Samsung PM1743";
    n.drives = 4;
    n.nic_model = "ConnectX-7";
    n.nics = 1;
    nodes.push_back(n);
  }
  NodeSummary login;  // a login node: no GPU, no NVMe drive, no data NIC
  login.node = "login0";
  login.applicability = "GDS not applicable on this node: no NVIDIA GPU";
  nodes.push_back(login);
  const ClusterResult r = aggregate(nodes, {});
  ASSERT_EQ(r.classes.size(), 2u);
  const std::string text = cluster_text(r);
  EXPECT_NE(text.find("  class 1: 2 node(s), 8 GPUs (NVIDIA H100 80GB HBM3), 4 NVMe drives (Samsung PM1743), "
                      "1 data NIC (ConnectX-7)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  class 2: 1 node(s), no GPU, no NVMe drive, no data NIC; GDS not applicable on this node: "
                      "no NVIDIA GPU; the only node of its class"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(" | "), std::string::npos) << text;
  const std::string html = html_of(r);
  EXPECT_NE(html.find("<td>class 2</td><td>1</td><td>no GPU, no NVMe drive, no data NIC; GDS not applicable"),
            std::string::npos);
  EXPECT_EQ(html.find("<td> |  | </td>"), std::string::npos);  // the key, an identifier, stays in the data
  EXPECT_NE(html.find("<td>login0</td><td>none</td>"), std::string::npos);  // its GPUs, not "0 x "
  EXPECT_NE(html.find("<td>gpu0</td><td>8 x NVIDIA H100 80GB HBM3</td>"), std::string::npos);
}
