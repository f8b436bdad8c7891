// Ranks that share a node (issue 34, items 5 and 6): one identity decides the node; its GPUs
// and ceiling count once, its ranks' bytes add up to its share, its ranks share one clock, and
// a SIGINT-stopped sample is "interrupted", off the curves. Expected figures worked out by hand.
#include <gtest/gtest.h>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/node_identity.hpp"
#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/cluster/summary.hpp"

using namespace gdsb::cluster;

namespace {

constexpr double T0 = 1764170000.0;
constexpr uint64_t GB = 1000000000ull;

StorageSample sample(int k, int ranks, double start, double end, uint64_t bytes, double ready = 0,
                     const std::string& stopped = "limit") {
  StorageSample s;
  s.op = "read";
  s.nodes = k;
  s.ranks = ranks;
  s.start_unix_s = T0 + start;
  s.end_unix_s = T0 + end;
  s.ready_unix_s = ready == 0 ? 0 : T0 + ready;
  s.bytes = bytes;
  s.stopped_by = stopped;
  s.path_used = "posix";
  return s;
}

// Rank `rank` on host `host` (one boot: the ranks of one host share the identity).
NodeSummary rank_on(const std::string& host, int rank, int gpus = 8) {
  NodeSummary n;
  n.node = host;
  n.host = host;
  n.rank = rank;
  n.node_id = node_identity(host, machine_of("boot-of-" + host, ""));
  n.gpu_model = "H100";
  n.gpus = gpus;
  n.storage = RankStorage{};
  n.storage->dir = "/lustre/scratch";
  n.storage->block_bytes = 1 << 20;
  n.storage->limit_bytes_per_rank = 1 << 20;
  n.storage->demand_per_gpu_gb_s = 0.01;
  return n;
}

}  // namespace

TEST(Ranks, TheRanksOfOneHostAreOneNodeNumberedByTheirLowestRank) {
  // Round-robin placement: ranks 0 and 2 on a, 1 and 3 on b.
  const RankLayout l = rank_layout({{"a", "boot 1"}, {"b", "boot 2"}, {"a", "boot 1"}, {"b", "boot 2"}});
  EXPECT_EQ(l.nodes(), 2);
  EXPECT_EQ(l.node_of_rank, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(l.name_of_node, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(l.ranks_of_first(1), (std::vector<int>{0, 2}));
  EXPECT_EQ(l.ranks_of_first(2), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(l.words(), "4 ranks on 2 node(s)");
  // Recordings stand for nodes of their own, named by their first rank on the shared host.
  const RankLayout rec = rank_layout({{"vm", "recording n0"}, {"vm", "recording n1"}, {"vm", "recording n0"}});
  EXPECT_EQ(rec.nodes(), 2);
  EXPECT_EQ(rec.name_of_node, (std::vector<std::string>{"vm.0", "vm.1"}));
  // One hostname on two machines (a cloned image): two nodes, one name (a duplicate finding).
  const RankLayout cloned = rank_layout({{"node", "boot 1"}, {"node", "boot 2"}});
  EXPECT_EQ(cloned.nodes(), 2);
}

TEST(Ranks, FourRanksOnOneHostAreOneNodeTheirGpusCountedOnceAndNeverAClockFinding) {
  // mpirun -np 4 on one 8-GPU host, 1M a rank: rank 0 ended (0.001 s) before rank 3 began
  // (0.004 s, its barrier nap and setup): one clock, so no finding. Window 0 .. 0.005 s,
  // 4 MB: 0.8 GB/s, the node's share all of it. GPUs fed at 0.01 GB/s a GPU: floor(0.8 /
  // 0.009) = 88, at least (one point); measured on 1 node with 8 GPUs, not 4 with 32.
  std::vector<NodeSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.push_back(rank_on("vm", r));
    const double start = r * 0.00125;
    ranks.back().storage->samples.push_back(sample(1, 4, start, start + 0.001, 1 << 20, 0.0001));
  }
  ranks[3].storage->samples.back().end_unix_s = T0 + 0.005;
  const ClusterResult res = aggregate(ranks, {});
  ASSERT_EQ(res.nodes.size(), 1u);
  EXPECT_EQ(res.nodes[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(res.findings.empty()) << res.findings.front().text;
  ASSERT_TRUE(res.storage);
  ASSERT_EQ(res.storage->points.size(), 1u);
  const StoragePoint& p = res.storage->points[0];
  ASSERT_EQ(p.status, "ok") << p.reason;
  EXPECT_EQ(p.ranks, 4);
  ASSERT_EQ(p.shares.size(), 1u);
  EXPECT_EQ(p.shares[0].ranks, 4);
  EXPECT_NEAR(*p.aggregate_gb_s, 4.0 * (1 << 20) / 0.005 / 1e9, 1e-4);  // T0 + 0.005 s in a double
  EXPECT_NEAR(p.share_max_gb_s, *p.aggregate_gb_s, 1e-12);
  ASSERT_TRUE(res.storage->gpus_fed);
  EXPECT_EQ(res.storage->gpus_fed->gpus_measured, 8);
  EXPECT_NE(res.storage->gpus_fed->text.find("Measured on 1 node(s) with 8 GPU(s)"), std::string::npos)
      << res.storage->gpus_fed->text;
  // One node, one point (issue 43): no curve, so no word on its shape, and the why is the
  // node count, not a --scale left out (mpirun --scale auto on one host runs this point).
  ASSERT_EQ(res.storage->curves.size(), 1u);
  EXPECT_EQ(res.storage->curves[0].bound, "unknown");
  EXPECT_EQ(res.storage->curves[0].bound_text,
            "one point (1 node, 4 ranks): a scaling curve needs two nodes or more; launch ranks on more hosts "
            "to see where scaling stops");
  const std::string& fed = res.storage->gpus_fed->text;
  EXPECT_EQ(fed.find("grows"), std::string::npos) << fed;
  EXPECT_NE(fed.find("Whether the storage saturates is not known (one point, no curve): the count is a floor."),
            std::string::npos)
      << fed;
  const std::string text = storage_text(*res.storage);
  EXPECT_NE(text.find("  Scaling: one point (1 node, 4 ranks): a scaling curve needs two nodes or more"), std::string::npos)
      << text;
}

TEST(Ranks, OnePointOfSeveralNodesAsksForTwoNodeCounts) {
  // --aggregate on two nodes of two ranks: one point of 2 nodes; --scale would give a curve.
  std::vector<NodeSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.push_back(rank_on(r % 2 ? "b" : "a", r));
    ranks.back().storage->samples.push_back(sample(2, 4, 10, 12, GB / 2));
  }
  const auto r = shared_storage(ranks, {});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->curves.size(), 1u);
  EXPECT_EQ(r->curves[0].bound, "unknown");
  EXPECT_EQ(r->curves[0].bound_text,
            "one point (2 nodes): --scale with two node counts or more (1,2,4 or auto) shows where scaling stops");
  ASSERT_TRUE(r->gpus_fed);
  EXPECT_EQ(r->gpus_fed->text.find("grows"), std::string::npos) << r->gpus_fed->text;
  EXPECT_EQ(storage_text(*r).find("Scaling"), std::string::npos) << "a node count, not one node: no line";
}

TEST(Ranks, TheNodesShareNotARanksIsComparedWithTheNodesCeiling) {
  // Two nodes of two ranks, each rank 0.25 GB/s over 2 s: a node reads 0.5 GB/s, its whole
  // ceiling of 0.5: the nodes bound the curve (a rank's 0.25 is only half of it).
  std::vector<NodeSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.push_back(rank_on(r % 2 ? "b" : "a", r));
    ranks.back().storage->ceiling_gb_s = 0.5;
    ranks.back().storage->ceiling_text = "1 x 4 Gb/s";
    if (r % 2 == 0) ranks.back().storage->samples.push_back(sample(1, 2, 0, 2, GB / 2));
    ranks.back().storage->samples.push_back(sample(2, 4, 10, 12, GB / 2));
  }
  const auto r = shared_storage(ranks, {});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->curves.size(), 1u);
  EXPECT_EQ(r->curves[0].nodes, (std::vector<int>{1, 2}));
  EXPECT_NEAR(r->curves[0].aggregate_gb_s[0], 0.5, 1e-9);
  EXPECT_NEAR(r->curves[0].aggregate_gb_s[1], 1.0, 1e-9);
  EXPECT_NEAR(r->points[1].share_median_gb_s, 0.5, 1e-9);
  EXPECT_EQ(r->curves[0].bound, "nodes") << r->curves[0].bound_text;
}

TEST(Ranks, ClocksOfTwoNodesAreJudgedAgainstTheBarriersSkew) {
  // Node b's rank began 0.3 s after node a's ended: its setup (it left the barrier at 0.0005
  // like a): no finding. Left the barrier 0.03 s after a ended (within the 0.05 s floor): none.
  // Left it 100 s behind: b's clock disagrees.
  const auto point = [](double b_ready, double b_start, double b_end) {
    std::vector<NodeSummary> ranks{rank_on("a", 0), rank_on("b", 1)};
    ranks[0].storage->samples.push_back(sample(2, 2, 0.001, 0.011, GB / 100, 0.0005));
    ranks[1].storage->samples.push_back(sample(2, 2, b_start, b_end, GB / 100, b_ready));
    return aggregate(ranks, {});
  };
  EXPECT_TRUE(point(0.0005, 0.311, 0.321).findings.empty());
  EXPECT_TRUE(point(0.041, 0.042, 0.05).findings.empty());
  const ClusterResult off = point(-99.9995, -99.999, -99.989);
  ASSERT_EQ(off.storage->points[0].status, "clock");
  EXPECT_EQ(off.odd_nodes, (std::vector<std::string>{"a", "b"}));  // two nodes: no majority, both named
}

TEST(Ranks, ASampleStoppedBySigintIsInterruptedAndOffTheCurve) {
  std::vector<NodeSummary> ranks{rank_on("a", 0), rank_on("b", 1)};
  ranks[0].storage->samples.push_back(sample(1, 1, 0, 2, GB));
  for (auto& r : ranks) r.storage->samples.push_back(sample(2, 2, 10, 11, GB / 4, 0, "interrupted"));
  const auto r = shared_storage(ranks, {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->interrupted);
  ASSERT_EQ(r->points.size(), 2u);
  EXPECT_EQ(r->points[1].stopped_by, "interrupted");
  ASSERT_EQ(r->curves.size(), 1u);
  EXPECT_EQ(r->curves[0].nodes, (std::vector<int>{1}));
  EXPECT_NE(storage_text(*r).find("Interrupted (SIGINT)"), std::string::npos);
}

TEST(Ranks, AReportOfAnOlderVersionIsANodeOfItsOwn) {
  std::vector<NodeSummary> ranks{rank_on("vm.0", 0), rank_on("vm.1", 1)};
  for (auto& r : ranks) r.node_id.clear();
  EXPECT_NE(node_key(ranks[0]), node_key(ranks[1]));
  EXPECT_EQ(aggregate(ranks, {}).nodes.size(), 2u);
}
