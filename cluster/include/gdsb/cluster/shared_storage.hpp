// The cluster as a benchmark of its shared storage (issue 26): what each rank measured at each
// point of the shared-storage phase (its own timestamps and bytes), and rank 0's view of all of
// them: the aggregate of each point over the common window (IOR's way: all bytes over the time
// from the first rank's start to the last rank's end, each rank timed by its own clock), the
// per-node shares and their spread, the scaling curve, where scaling stops and what bounds it,
// how many GPUs the storage feeds at a stated demand, and the cluster-wide checkpoint.
// Plain data and arithmetic; no MPI here (the phase itself runs in gdsb-cluster).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gdsb::cluster {

// What one rank measured at one point. op: "write", "read", "checkpoint-save",
// "checkpoint-load". status: "ok", "waived" (the mode cannot run here: reason), "error".
// stopped_by: "limit" (the rank read or wrote its --io-size), "stonewall" (another rank reached
// its limit first and the point ended for all), "time" (--storage-time), "complete" (the
// checkpoint: every rank moves its whole shard), "interrupted" (SIGINT).
struct StorageSample {
  std::string op;
  int nodes = 0;  // the point's node count: ranks 0..nodes-1 took part
  int mode = 1;   // gdsio -x
  std::string status = "ok";
  std::string reason;
  double start_unix_s = 0, end_unix_s = 0;  // the rank's own CLOCK_REALTIME
  uint64_t bytes = 0;
  std::string stopped_by;
  std::string path_used;  // the path the runner reports (posix, gds-nvfs, compat, ...)
};

// How the phase was run (the same on every rank) and what this node can take at most.
struct NodeStorage {
  std::string dir;
  std::string layout = "file-per-process";  // or "shared-file"
  uint64_t block_bytes = 0;           // transfer size (IOR -t)
  uint64_t limit_bytes_per_rank = 0;  // a rank's data (IOR -b): one pass is its limit
  double time_limit_s = 0;            // --storage-time; 0: no time limit
  uint64_t model_bytes = 0;           // the checkpoint's model; 0: no checkpoint
  std::string model_text;             // how the model's size was stated
  std::optional<double> demand_per_gpu_gb_s;
  std::optional<double> demand_restore_s;  // checkpoint-load:SECONDS (see parse_demand)
  std::string demand_text;
  double scale_gain_percent = 50;
  // The node's own ceiling for reading this directory, from its path model: the network
  // mount's carriers (issue 25), else every data NIC at once; nullopt where unknown.
  std::optional<double> ceiling_gb_s;
  std::string ceiling_text;
  std::vector<StorageSample> samples;
};

void to_json(nlohmann::json& j, const StorageSample& s);
void to_json(nlohmann::json& j, const NodeStorage& s);
// Throws gdsb::UsageError naming `where` and the field when the object is malformed.
NodeStorage node_storage_from_json(const nlohmann::json& j, const std::string& where);

// --- rank 0's view -----------------------------------------------------------------------

struct NodeShare {
  std::string node;
  int rank = 0;
  uint64_t bytes = 0;
  double start_unix_s = 0, end_unix_s = 0;
};

struct StoragePoint {
  int nodes = 0;
  int mode = 1;
  std::string op;
  std::string status = "ok";  // ok, waived, error, clock
  std::string reason;
  int ranks = 0;  // samples found
  double start_unix_s = 0, end_unix_s = 0, window_s = 0;
  uint64_t bytes = 0;
  std::optional<double> aggregate_gb_s;
  double share_min_gb_s = 0, share_median_gb_s = 0, share_max_gb_s = 0;
  double fairness = 0;  // Jain's index of the nodes' bytes: 1 = all equal, 1/n = one node did all
  std::string slowest_node;
  std::string stopped_by;
  std::vector<std::string> clock_suspects;  // "node (+12.000 s from the others' median)"
  std::vector<std::string> clock_nodes;     // their node names
  std::vector<std::string> paths_used;  // distinct, sorted
  std::vector<NodeShare> shares;        // by rank (not in the JSON: the node reports have them)
};

struct ScalingCurve {
  int mode = 1;
  std::string op;
  std::vector<int> nodes;
  std::vector<double> aggregate_gb_s;
  std::vector<double> linear_gb_s;                 // the first point's per-node figure times k
  std::vector<std::optional<double>> gain_percent;  // what the added nodes added, in % of linear
  std::optional<int> scaling_stops_at;             // the first k whose gain is below the share
  std::string bound;  // "storage", "nodes", "not reached" or "unknown"
  std::string bound_text;
  std::optional<double> node_ceiling_gb_s;  // the least of the last point's nodes' ceilings
};

struct GpusFed {
  double demand_per_gpu_gb_s = 0;
  std::string demand_text;
  double busy_percent = 90;  // MLPerf Storage's bar: each accelerator at least 90% busy
  int mode = 1;
  std::string op = "read";
  int gpus = 0;            // the storage's count at the demand
  bool at_least = false;   // the storage did not saturate: it feeds at least this many
  int gpus_measured = 0;   // GPUs on the nodes of the curve's last point
  std::string bound;       // as the curve's
  std::string text;
};

struct CheckpointOp {
  std::string status = "ok";
  std::string reason;
  double seconds = 0;
  uint64_t bytes = 0;
  std::optional<double> aggregate_gb_s;
  std::string slowest_node;
  std::vector<std::string> clock_suspects;
  std::vector<std::string> clock_nodes;
};

struct CheckpointResult {
  uint64_t model_bytes = 0;
  std::string model_text;
  int ranks = 0;
  uint64_t shard_bytes = 0;  // the largest shard
  std::vector<int> modes;
  CheckpointOp save, load;
};

struct SharedStorageResult {
  std::string dir, layout;
  uint64_t block_bytes = 0, limit_bytes_per_rank = 0;
  double time_limit_s = 0;
  double scale_gain_percent = 50;
  std::vector<StoragePoint> points;  // by op (writes first), mode, nodes
  std::vector<ScalingCurve> curves;
  std::optional<GpusFed> gpus_fed;
  std::optional<CheckpointResult> checkpoint;
};

struct NodeSummary;

// Options of rank 0 (or --from) that override what the node reports recorded.
struct StorageJudgement {
  std::optional<double> demand_per_gpu_gb_s;  // --demand-per-gpu given to --from
  std::optional<double> demand_restore_s;
  std::string demand_text;
  std::optional<double> scale_gain_percent;
};

// nullopt when no node carries storage samples. The nodes in any order; a rank's samples are
// matched to points by (op, mode, nodes).
std::optional<SharedStorageResult> shared_storage(const std::vector<NodeSummary>& nodes,
                                                  const StorageJudgement& judge = {});

// One point from the ranks' samples (exposed for tests): the aggregate over the common window,
// shares, fairness, and the clock check (a rank whose interval lies wholly outside the
// others' is named; the common window would be negative).
StoragePoint make_point(int nodes, int mode, const std::string& op,
                        const std::vector<std::pair<NodeShare, const StorageSample*>>& samples);

nlohmann::json to_json(const SharedStorageResult& r);
// cluster.txt's section, several lines, each ending in '\n'.
std::string storage_text(const SharedStorageResult& r);

// --demand-per-gpu: a rate (gdsb::parse_rate: "2GB/s", "100Gb/s" = 12.5 GB/s), or a preset stated by the user's own figures:
//   dataset:SAMPLES[xSIZE]  each GPU consumes SAMPLES samples a second of SIZE bytes (default
//                           128K, gdsb-io's dataset preset's file size): SAMPLES x SIZE;
//   checkpoint-load:SECONDS each GPU loads its shard of --model-bytes (the model over the
//                           run's GPUs) within SECONDS: decided where the GPUs are counted.
// UsageError naming the option and what is accepted; a demand of 0 is one.
struct Demand {
  std::optional<double> gb_s;
  std::optional<double> restore_s;
  std::string text;
};
Demand parse_demand(std::string_view text, std::string_view option);
// "64M", "5.67T" (bytes, as --io-size), or PARAMS:DTYPE[+adam] ("405B:bf16+adam": 405e9
// parameters of 2 bytes, plus Adam's fp32 master weights, momentum and variance, 12 bytes a
// parameter). Returns bytes and the words saying how; UsageError naming the option otherwise.
std::pair<uint64_t, std::string> parse_model_bytes(std::string_view text, std::string_view option);

}  // namespace gdsb::cluster
