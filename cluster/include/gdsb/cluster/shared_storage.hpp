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

#include "gdsb/cluster/storage_options.hpp"
#include "gdsb/result.hpp"

namespace gdsb::cluster {

// What one rank measured at one point. op: "write", "read", "checkpoint-save",
// "checkpoint-load". status: "ok", "waived" (the mode cannot run here: reason), "error".
// stopped_by: "limit" (the rank read or wrote its --io-size), "stonewall" (another rank reached
// its limit first and the point ended for all), "time" (--storage-time), "complete" (the
// checkpoint: every rank moves its whole shard), "interrupted" (SIGINT).
struct StorageSample {
  std::string op;
  int nodes = 0;  // the point's node count: the ranks of the first `nodes` nodes took part
  int ranks = 0;  // how many ranks that is; 0 in older reports, whose ranks were one a node
  int mode = 1;   // gdsio -x
  std::string status = "ok";
  std::string reason;
  double start_unix_s = 0, end_unix_s = 0;  // the rank's own CLOCK_REALTIME
  // When the rank left the point's barrier, before opening its file (same clock); the start
  // minus this is its setup. 0 in older reports.
  double ready_unix_s = 0;
  uint64_t bytes = 0;
  std::string stopped_by;
  std::string path_used;  // the path the runner reports (posix, gds-nvfs, compat, ...)
};

// A rank's storage record: how the phase was run (the same on every rank), what its node
// can take at most (the same on the ranks of one node) and the rank's own samples.
struct RankStorage {
  std::string dir;
  // The mount holding `dir` as this rank sees it (topo::path_storage): its file system, source
  // and mount point, which say which storage the figures are of (a history's series key).
  // dev is not kept: a network mount's device number is the client's own. nullopt in older
  // reports, or where no mount holds the directory.
  std::optional<RunStorage> storage;
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
  // The checkpoint's mode, chosen once for every rank, and why ("" in older reports).
  std::string checkpoint_mode_text;
  std::vector<StorageSample> samples;
};

void to_json(nlohmann::json& j, const StorageSample& s);
void to_json(nlohmann::json& j, const RankStorage& s);
// Throws gdsb::UsageError naming `where` and the field when the object is malformed.
RankStorage rank_storage_from_json(const nlohmann::json& j, const std::string& where);

// --- rank 0's view -----------------------------------------------------------------------

// A node's part of a point: the sum of its ranks' bytes, their earliest start and latest end.
// As make_point() takes them: one a rank (rank, ranks 1); as a point holds them: one a node.
struct NodeShare {
  std::string node;
  int rank = 0;  // the node's lowest rank
  uint64_t bytes = 0;
  double start_unix_s = 0, end_unix_s = 0;
  std::string node_id{};  // node_key(): the ranks of one node share it; "": a node of its own
  int ranks = 1;
  double ready_unix_s = 0;  // the earliest barrier exit (the start where not recorded)
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
  std::vector<NodeShare> shares;        // one a node, by lowest rank (not in the JSON: the node reports have them)
  uint64_t largest_rank_bytes = 0;      // the most one rank moved (a checkpoint's largest shard)
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
  std::string mode_text;  // how the mode was chosen (every rank runs it); "" in older reports
  CheckpointOp save, load;
};

struct SharedStorageResult {
  std::string dir, layout;
  std::optional<RunStorage> storage;  // rank 0's (RankStorage::storage)
  uint64_t block_bytes = 0, limit_bytes_per_rank = 0;
  double time_limit_s = 0;
  double scale_gain_percent = 50;
  std::vector<StoragePoint> points;  // by op (writes first), mode, nodes
  std::vector<ScalingCurve> curves;
  std::optional<GpusFed> gpus_fed;
  std::optional<CheckpointResult> checkpoint;
  bool interrupted = false;  // a sample was stopped by SIGINT: the phase ended early
};

struct NodeSummary;

// Options of rank 0 (or --from) that override what the node reports recorded.
struct StorageJudgement {
  std::optional<double> demand_per_gpu_gb_s;  // --demand-per-gpu given to --from
  std::optional<double> demand_restore_s;
  std::string demand_text;
  std::optional<double> scale_gain_percent;
};

// nullopt when no rank carries storage samples. The ranks' summaries in any order, several of
// one node among them (node_key()); a rank's samples are matched to points by (op, mode, nodes).
std::optional<SharedStorageResult> shared_storage(const std::vector<const NodeSummary*>& ranks,
                                                  const StorageJudgement& judge = {});
std::optional<SharedStorageResult> shared_storage(const std::vector<NodeSummary>& ranks,
                                                  const StorageJudgement& judge = {});

// The least distance between two nodes' intervals that is a clock finding, whatever the
// setup and barrier skew measured within a node: an NTP-kept cluster's clocks agree far better.
inline constexpr double kClockFloorS = 0.05;

// One point from the ranks' samples, one NodeShare a rank (exposed for tests): the aggregate
// over the common window, the nodes' shares (their ranks' bytes added up), fairness, and the
// clock check. Ranks of one node share a clock and are never compared; a node whose interval
// (from its ranks' barrier exit to their last end) lies outside the other nodes' by more than
// the tolerance (kClockFloorS, or twice the barrier-exit spread measured within a node, the
// larger) is named: its clock disagrees.
StoragePoint make_point(int nodes, int mode, const std::string& op,
                        const std::vector<std::pair<NodeShare, const StorageSample*>>& samples);

nlohmann::json to_json(const SharedStorageResult& r);
// cluster.txt's section, several lines, each ending in '\n'.
std::string storage_text(const SharedStorageResult& r);

}  // namespace gdsb::cluster
