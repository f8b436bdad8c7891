// The shared-storage figures (issue 26) from rank samples whose expected results are worked out
// by hand below: the aggregate over the common window, shares, Jain's fairness, the clock
// check, the scaling curve, its bound, the GPU count and the checkpoint; the summary's storage
// object through the one reader (SAX) and the DOM reader alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/outputs.hpp"
#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"

using namespace gdsb::cluster;

namespace {

constexpr double T0 = 1764170000.0;  // a wall-clock second of 2025-11-26

StorageSample sample(const std::string& op, int k, double start, double end, uint64_t bytes,
                     const std::string& stopped = "time", int mode = 1) {
  StorageSample s;
  s.op = op;
  s.nodes = k;
  s.mode = mode;
  s.start_unix_s = T0 + start;
  s.end_unix_s = T0 + end;
  s.bytes = bytes;
  s.stopped_by = stopped;
  s.path_used = "posix";
  return s;
}

NodeSummary node(int rank, int gpus = 8) {
  NodeSummary n;
  n.node = "node" + std::to_string(rank);
  n.host = n.node;
  n.rank = rank;
  n.gpu_model = "H100";
  n.gpus = gpus;
  n.storage = RankStorage{};
  n.storage->dir = "/lustre/scratch";
  n.storage->block_bytes = 1 << 20;
  n.storage->limit_bytes_per_rank = 1ull << 30;
  n.storage->time_limit_s = 3;
  return n;
}

constexpr uint64_t GB = 1000000000ull;

// A storage of 2 "servers" of 1 GB/s each: 1 node reads 1 GB/s, 2 read 2, 4 read 2.
std::vector<NodeSummary> flat_at_two() {
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 4; ++r) nodes.push_back(node(r));
  nodes[0].storage->samples.push_back(sample("read", 1, 0, 2, 2 * GB));
  for (int r = 0; r < 2; ++r) nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("read", 2, 10, 12, 2 * GB));
  for (int r = 0; r < 4; ++r) nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("read", 4, 20, 22, GB));
  return nodes;
}

}  // namespace

TEST(SharedStorage, AggregateIsAllBytesOverTheCommonWindow) {
  // Ranks start 0.0, 0.1, 0.2 and end 3.0, 3.1, 2.9: window 0.0 .. 3.1 = 3.1 s; bytes
  // 3 + 2 + 1 = 6 GB: 6 / 3.1 = 1.93548 GB/s. Shares 3/3.1, 2/3.1, 1/3.1; Jain
  // (6^2) / (3 x (9 + 4 + 1)) = 36 / 42 = 0.857143; the slowest is the one with 1 GB.
  const StorageSample a = sample("read", 3, 0.0, 3.0, 3 * GB), b = sample("read", 3, 0.1, 3.1, 2 * GB),
                      c = sample("read", 3, 0.2, 2.9, GB);
  const StoragePoint p = make_point(3, 1, "read",
                                    {{{"n0", 0, a.bytes, a.start_unix_s, a.end_unix_s}, &a},
                                     {{"n1", 1, b.bytes, b.start_unix_s, b.end_unix_s}, &b},
                                     {{"n2", 2, c.bytes, c.start_unix_s, c.end_unix_s}, &c}});
  ASSERT_EQ(p.status, "ok") << p.reason;
  EXPECT_NEAR(p.window_s, 3.1, 1e-6);
  EXPECT_EQ(p.bytes, 6 * GB);
  EXPECT_NEAR(*p.aggregate_gb_s, 6.0 / 3.1, 1e-6);
  EXPECT_NEAR(p.share_min_gb_s, 1.0 / 3.1, 1e-6);
  EXPECT_NEAR(p.share_median_gb_s, 2.0 / 3.1, 1e-6);
  EXPECT_NEAR(p.share_max_gb_s, 3.0 / 3.1, 1e-6);
  EXPECT_NEAR(p.fairness, 36.0 / 42.0, 1e-9);
  EXPECT_EQ(p.slowest_node, "n2");
  EXPECT_EQ(p.stopped_by, "time");
}

TEST(SharedStorage, TheRankThatReachedItsLimitIsNamedAsTheStonewall) {
  const StorageSample a = sample("read", 2, 0, 1, GB, "limit"), b = sample("read", 2, 0, 1, GB / 2, "stonewall");
  const StoragePoint p = make_point(2, 1, "read",
                                    {{{"n0", 0, a.bytes, a.start_unix_s, a.end_unix_s}, &a},
                                     {{"n1", 1, b.bytes, b.start_unix_s, b.end_unix_s}, &b}});
  EXPECT_EQ(p.stopped_by, "limit (n0 first)");
  EXPECT_EQ(p.slowest_node, "n1");
}

TEST(SharedStorage, ARankWhoseClockDisagreesIsNamedAndNoAggregateIsGiven) {
  // Three ranks ran 0..3 s; the fourth's clock is 100 s behind: it "ended" before the others
  // began. The common window [max start, min end] = [0, -97] is negative.
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 4; ++r) nodes.push_back(node(r));
  for (int r = 0; r < 3; ++r) nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("read", 4, 0, 3, GB));
  nodes[3].storage->samples.push_back(sample("read", 4, -100, -97, GB));
  const ClusterResult res = aggregate(nodes, {});
  ASSERT_TRUE(res.storage);
  ASSERT_EQ(res.storage->points.size(), 1u);
  const StoragePoint& p = res.storage->points[0];
  EXPECT_EQ(p.status, "clock");
  EXPECT_FALSE(p.aggregate_gb_s);
  ASSERT_EQ(p.clock_nodes, std::vector<std::string>{"node3"});
  EXPECT_NE(p.clock_suspects[0].find("started -100.000 s from"), std::string::npos) << p.clock_suspects[0];
  ASSERT_EQ(res.odd_nodes, std::vector<std::string>{"node3"});
  EXPECT_EQ(res.findings.back().kind, FindingKind::Clock);
  EXPECT_NE(res.findings.back().text.find("node3: its clock disagrees"), std::string::npos);
  EXPECT_TRUE(res.failed());
}

TEST(SharedStorage, TheCurveFlattensWhereTheStorageStopsAndTheStorageIsNamed) {
  const auto r = shared_storage(flat_at_two(), {});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->curves.size(), 1u);
  const ScalingCurve& c = r->curves[0];
  EXPECT_EQ(c.nodes, (std::vector<int>{1, 2, 4}));
  // 2 GB / 2 s = 1 GB/s; 4 GB / 2 s = 2; 4 GB / 2 s = 2.
  EXPECT_NEAR(c.aggregate_gb_s[0], 1.0, 1e-9);
  EXPECT_NEAR(c.aggregate_gb_s[1], 2.0, 1e-9);
  EXPECT_NEAR(c.aggregate_gb_s[2], 2.0, 1e-9);
  EXPECT_EQ(c.linear_gb_s, (std::vector<double>{1, 2, 4}));
  // 1 -> 2 adds 1 of a linear 1 (100%); 2 -> 4 adds 0 of a linear 2 (0%).
  EXPECT_NEAR(*c.gain_percent[1], 100, 1e-9);
  EXPECT_NEAR(*c.gain_percent[2], 0, 1e-9);
  EXPECT_EQ(c.scaling_stops_at, 4);
  EXPECT_EQ(c.bound, "storage");  // no node ceiling known, and scaling stopped
}

TEST(SharedStorage, NodesAtTheirOwnCeilingBoundTheCurve) {
  // Each node can take 0.5 GB/s (its NICs), reads 0.5: the nodes bound it, not the storage.
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 2; ++r) {
    nodes.push_back(node(r));
    nodes.at(static_cast<std::size_t>(r)).storage->ceiling_gb_s = 0.5;
    nodes.at(static_cast<std::size_t>(r)).storage->ceiling_text = "nfs mount /data: 1 x 4 Gb/s";
  }
  nodes[0].storage->samples.push_back(sample("read", 1, 0, 2, GB));
  for (int r = 0; r < 2; ++r) nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("read", 2, 5, 7, GB));
  const auto res = shared_storage(nodes, {});
  ASSERT_EQ(res->curves.size(), 1u);
  EXPECT_EQ(res->curves[0].bound, "nodes") << res->curves[0].bound_text;
  EXPECT_EQ(res->curves[0].scaling_stops_at, std::nullopt);
  EXPECT_NE(res->curves[0].bound_text.find("100% of its own ceiling"), std::string::npos) << res->curves[0].bound_text;
}

TEST(SharedStorage, GpusFedIsTheStoragesRateOverNinetyPercentOfTheDemand) {
  // The storage saturates at 2 GB/s; at 0.5 GB/s a GPU, 90% of it is 0.45: 2 / 0.45 = 4.44:
  // 4 GPUs. The nodes have 8 GPUs each: 32 measured, 4 of them fed.
  StorageJudgement j;
  j.demand_per_gpu_gb_s = 0.5;
  j.demand_text = "--demand-per-gpu 500MB/s";
  const auto r = shared_storage(flat_at_two(), j);
  ASSERT_TRUE(r->gpus_fed);
  EXPECT_EQ(r->gpus_fed->gpus, 4);
  EXPECT_FALSE(r->gpus_fed->at_least);
  EXPECT_EQ(r->gpus_fed->gpus_measured, 32);
  EXPECT_EQ(r->gpus_fed->bound, "storage");
  EXPECT_NE(r->gpus_fed->text.find("feeds 4 GPUs"), std::string::npos) << r->gpus_fed->text;
  EXPECT_NE(r->gpus_fed->text.find("4 of them fed"), std::string::npos) << r->gpus_fed->text;
}

TEST(SharedStorage, AStorageThatDidNotSaturateGivesAFloor) {
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 2; ++r) nodes.push_back(node(r, 4));
  nodes[0].storage->samples.push_back(sample("read", 1, 0, 1, GB));
  for (int r = 0; r < 2; ++r) nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("read", 2, 5, 6, GB));
  StorageJudgement j;
  j.demand_per_gpu_gb_s = 0.1;
  const auto r = shared_storage(nodes, j);
  // 2 GB/s / 0.09 = 22.2: at least 22; 8 GPUs on the nodes, all fed.
  EXPECT_EQ(r->curves[0].bound, "not reached");
  EXPECT_EQ(r->gpus_fed->gpus, 22);
  EXPECT_TRUE(r->gpus_fed->at_least);
  EXPECT_NE(r->gpus_fed->text.find("all of them fed"), std::string::npos) << r->gpus_fed->text;
}

TEST(SharedStorage, ThePointOfAModeARankCannotRunIsWaivedWithItsReason) {
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 2; ++r) {
    nodes.push_back(node(r));
    StorageSample s = sample("read", 2, 0, 0, 0, "", 0);
    s.status = "waived";
    s.reason = "cuFile not found";
    nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(s);
  }
  const auto r = shared_storage(nodes, {});
  ASSERT_EQ(r->points.size(), 1u);
  EXPECT_EQ(r->points[0].status, "waived");
  EXPECT_NE(r->points[0].reason.find("node0: cuFile not found"), std::string::npos);
  EXPECT_TRUE(r->curves.empty());
}

TEST(SharedStorage, AMissingRankMakesThePointAnError) {
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 2; ++r) nodes.push_back(node(r));
  nodes[0].storage->samples.push_back(sample("read", 2, 0, 1, GB));
  const auto r = shared_storage(nodes, {});
  EXPECT_EQ(r->points[0].status, "error");
  EXPECT_NE(r->points[0].reason.find("2 ranks took part, 1 reported it"), std::string::npos);
}

TEST(SharedStorage, TheCheckpointTimeIsTheFirstStartToTheLastEnd) {
  // Save: ranks 0..3 from 0 to 4, 5, 6, 8 s with 2 GB each: 8 GB in 8 s = 1 GB/s, last node3.
  std::vector<NodeSummary> nodes;
  for (int r = 0; r < 4; ++r) {
    nodes.push_back(node(r));
    nodes.at(static_cast<std::size_t>(r)).storage->model_bytes = 8 * GB;
    nodes.at(static_cast<std::size_t>(r)).storage->model_text = "8G (as given)";
    const double ends[] = {4, 5, 6, 8};
    const double end = ends[r];
    nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("checkpoint-save", 4, 0, end, 2 * GB, "complete"));
    nodes.at(static_cast<std::size_t>(r)).storage->samples.push_back(sample("checkpoint-load", 4, 10, 12, 2 * GB, "complete"));
  }
  const auto r = shared_storage(nodes, {});
  ASSERT_TRUE(r->checkpoint);
  EXPECT_TRUE(r->points.empty());
  EXPECT_NEAR(r->checkpoint->save.seconds, 8, 1e-6);
  EXPECT_NEAR(*r->checkpoint->save.aggregate_gb_s, 1, 1e-6);
  EXPECT_EQ(r->checkpoint->save.slowest_node, "node3");
  EXPECT_NEAR(r->checkpoint->load.seconds, 2, 1e-6);
  EXPECT_NEAR(*r->checkpoint->load.aggregate_gb_s, 4, 1e-6);
  EXPECT_EQ(r->checkpoint->shard_bytes, 2 * GB);
  EXPECT_EQ(r->checkpoint->ranks, 4);
}

TEST(SharedStorage, TheSummaryReaderAndTheDocumentReaderAgreeOnTheStorageObject) {
  NodeSummary n = node(0);
  n.storage->samples.push_back(sample("read", 1, 0.5, 3.25, 123456789012345ull, "limit"));
  n.storage->demand_per_gpu_gb_s = 2.5;
  n.storage->ceiling_gb_s = 25;
  nlohmann::json j = n;
  const NodeSummary back = summary_from_text(j.dump(), "test");
  ASSERT_TRUE(back.storage);
  const nlohmann::json dom = n.storage ? nlohmann::json(*n.storage) : nlohmann::json();
  EXPECT_EQ(nlohmann::json(*back.storage), dom);
  EXPECT_EQ(back.storage->samples.at(0).bytes, 123456789012345ull);  // exact, not through a double
  EXPECT_EQ(rank_storage_from_json(dom, "x").samples.at(0).end_unix_s, T0 + 3.25);
}

TEST(SharedStorage, AMalformedStorageObjectIsNamedWithItsField) {
  NodeSummary n = node(0);
  n.storage->samples.push_back(sample("read", 1, 0, 1, GB));
  nlohmann::json j = n;
  j["storage"]["samples"][0]["bytes"] = "many";
  try {
    summary_from_text(j.dump(), "rank 3");
    FAIL() << "accepted";
  } catch (const gdsb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("summary.storage.samples[].bytes"), std::string::npos) << e.what();
  }
}

// Issue 41: the mount holding the directory travels in the rank's storage object (summary and
// node report) and rank 0's is the result's: what a history keys the series by.
TEST(SharedStorage, TheMountHoldingTheDirectoryIsRankZerosAndSurvivesTheSummary) {
  auto nodes = flat_at_two();
  nodes[0].storage->storage = gdsb::RunStorage{"nfs4", "10.0.0.5:/export", "/shared", ""};
  nodes[1].storage->storage = gdsb::RunStorage{"nfs4", "10.0.0.6:/export", "/shared", ""};
  nlohmann::json j = nodes[0];
  EXPECT_EQ(j["storage"]["storage"], (nlohmann::json{{"fs_type", "nfs4"}, {"source", "10.0.0.5:/export"}, {"mount_point", "/shared"}}));
  nodes[0] = summary_from_text(j.dump(), "rank 0");
  const auto r = shared_storage(nodes);
  ASSERT_TRUE(r && r->storage);
  EXPECT_EQ(r->storage->source, "10.0.0.5:/export");
  EXPECT_EQ(to_json(*r)["storage"]["fs_type"].get<std::string>(), "nfs4");
  nodes[0].storage->storage.reset();  // an older report: no storage in the result
  EXPECT_FALSE(to_json(*shared_storage(std::vector<NodeSummary>{nodes[0]})).contains("storage"));
  j["storage"]["storage"] = "nfs4";
  try {
    summary_from_text(j.dump(), "rank 0");
    FAIL() << "accepted";
  } catch (const gdsb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("summary.storage.storage: expected an object"), std::string::npos) << e.what();
  }
}

TEST(SharedStorage, RatesAndModelSizesParse) {
  EXPECT_NEAR(*parse_demand("2GB/s", "--demand-per-gpu").gb_s, 2, 1e-12);
  EXPECT_NEAR(*parse_demand("500MB/s", "--demand-per-gpu").gb_s, 0.5, 1e-12);
  EXPECT_NEAR(*parse_demand("1GiB/s", "--demand-per-gpu").gb_s, 1.073741824, 1e-12);
  EXPECT_NEAR(*parse_demand("2e9", "--demand-per-gpu").gb_s, 2, 1e-12);
  EXPECT_THROW(parse_demand("fast", "--demand-per-gpu"), gdsb::UsageError);
  EXPECT_THROW(parse_demand("2 furlongs", "--demand-per-gpu"), gdsb::UsageError);
  // 405e9 parameters x (2 + 12) bytes = 5.67e12 (ZeRO's 2 + 12 bytes a parameter of model and
  // optimizer state, without the gradients a checkpoint does not keep).
  EXPECT_EQ(parse_model_bytes("405B:bf16+adam", "--model-bytes").first, 5670000000000ull);
  EXPECT_EQ(parse_model_bytes("7B:fp32", "--model-bytes").first, 28000000000ull);
  EXPECT_EQ(parse_model_bytes("64M", "--model-bytes").first, 64ull << 20);
  EXPECT_THROW(parse_model_bytes("405B:int3", "--model-bytes"), gdsb::UsageError);
  EXPECT_THROW(parse_model_bytes("0", "--model-bytes"), gdsb::UsageError);
}

TEST(SharedStorage, DemandPresetsAreTheUsersOwnFigures) {
  // dataset: 2000 samples a second of 128 KiB = 2000 x 131072 B/s = 0.262144 GB/s.
  EXPECT_NEAR(*parse_demand("dataset:2000", "--demand-per-gpu").gb_s, 0.262144, 1e-12);
  EXPECT_NEAR(*parse_demand("dataset:100x1M", "--demand-per-gpu").gb_s, 0.1048576, 1e-12);
  EXPECT_EQ(*parse_demand("checkpoint-load:60", "--demand-per-gpu").restore_s, 60);
  EXPECT_THROW(parse_demand("0", "--demand-per-gpu"), gdsb::UsageError);
  EXPECT_THROW(parse_demand("dataset:0", "--demand-per-gpu"), gdsb::UsageError);
  EXPECT_THROW(parse_demand("checkpoint-load:soon", "--demand-per-gpu"), gdsb::UsageError);
}

// Issue 34: "100Gb/s" was read as 100 GB/s; the project writes Gb/s for bits (NIC rates).
TEST(SharedStorage, ADemandInBitsIsBits) {
  EXPECT_NEAR(*parse_demand("100Gb/s", "--demand-per-gpu").gb_s, 12.5, 1e-12);
  EXPECT_NEAR(*parse_demand("400 Mb/s", "--demand-per-gpu").gb_s, 0.05, 1e-12);
  EXPECT_NEAR(*parse_demand("200Gbit/s", "--demand-per-gpu").gb_s, 25, 1e-12);
  EXPECT_NEAR(*parse_demand("2GB/s", "--demand-per-gpu").gb_s, 2, 1e-12);
  // A lowercase prefix before a lowercase b could be either: refused, saying how to write both.
  try {
    parse_demand("100gb/s", "--demand-per-gpu");
    ADD_FAILURE() << "100gb/s was accepted";
  } catch (const gdsb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("write GB/s for bytes or Gb/s for bits"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--demand-per-gpu"), std::string::npos) << e.what();
  }
}

TEST(SharedStorage, CheckpointLoadDemandIsTheShardOfEachGpuInTheStatedTime) {
  // 32 GPUs, a model of 64 GB restored in 10 s: 2 GB a GPU in 10 s = 0.2 GB/s a GPU; at 90%,
  // 0.18. The storage's 2 GB/s feeds 2 / 0.18 = 11.1: 11 GPUs of the 32.
  std::vector<NodeSummary> nodes = flat_at_two();
  for (auto& n : nodes) n.storage->model_bytes = 64 * GB;
  StorageJudgement j;
  j.demand_restore_s = 10;
  j.demand_text = "--demand-per-gpu checkpoint-load:10";
  const auto r = shared_storage(nodes, j);
  ASSERT_TRUE(r->gpus_fed);
  EXPECT_NEAR(r->gpus_fed->demand_per_gpu_gb_s, 0.2, 1e-12);
  EXPECT_EQ(r->gpus_fed->gpus, 11);
  // No GPU to divide the model by: said, no count.
  for (auto& n : nodes) n.gpus = 0;
  const auto none = shared_storage(nodes, j);
  EXPECT_EQ(none->gpus_fed->gpus, 0);
  EXPECT_NE(none->gpus_fed->text.find("no GPU on these nodes"), std::string::npos) << none->gpus_fed->text;
}
