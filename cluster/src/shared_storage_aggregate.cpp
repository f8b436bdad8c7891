// Rank 0's view of the shared-storage samples: the points, the scaling curves and their
// bound, the GPUs the storage feeds, the cluster-wide checkpoint.
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "gdsb/cluster/node_identity.hpp"
#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/units.hpp"
#include "shared_storage_words.hpp"

namespace gdsb::cluster {

using namespace storage_words;

namespace {

ScalingCurve make_curve(const std::vector<const StoragePoint*>& pts, double gain_share) {
  ScalingCurve c;
  c.mode = pts.front()->mode;
  c.op = pts.front()->op;
  const double per_node = *pts.front()->aggregate_gb_s / pts.front()->nodes;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const StoragePoint& p = *pts[i];
    c.nodes.push_back(p.nodes);
    c.aggregate_gb_s.push_back(*p.aggregate_gb_s);
    c.linear_gb_s.push_back(per_node * p.nodes);
    if (i == 0) {
      c.gain_percent.push_back(std::nullopt);
      continue;
    }
    const StoragePoint& q = *pts[i - 1];
    const double linear_gain = per_node * (p.nodes - q.nodes);
    const double gain = linear_gain > 0 ? 100 * (*p.aggregate_gb_s - *q.aggregate_gb_s) / linear_gain : 0;
    c.gain_percent.push_back(gain);
    if (!c.scaling_stops_at && gain < gain_share) c.scaling_stops_at = p.nodes;
  }
  return c;
}

// What bounds the curve at its last point: the nodes (each at 80% of its own ceiling or
// more), else the storage (scaling stopped while the nodes had room), else nothing reached.
// `run_nodes`: the nodes of the run; a curve of one point has no shape to judge (issue 43).
void judge_bound(ScalingCurve& c, const StoragePoint& last, const std::map<std::string, const RankStorage*>& storage_of,
                 std::size_t run_nodes) {
  std::optional<double> ceiling;
  std::string ceiling_text;
  for (const NodeShare& s : last.shares) {
    const auto it = storage_of.find(s.node_id);
    if (it == storage_of.end() || !it->second->ceiling_gb_s) {
      ceiling.reset();
      ceiling_text = it == storage_of.end() || it->second->ceiling_text.empty()
                         ? "not known"
                         : it->second->ceiling_text;
      break;
    }
    if (!ceiling || *it->second->ceiling_gb_s < *ceiling) {
      ceiling = it->second->ceiling_gb_s;
      ceiling_text = it->second->ceiling_text;
    }
  }
  c.node_ceiling_gb_s = ceiling;
  const double share = last.share_median_gb_s;
  const std::string at = "at " + std::to_string(last.nodes) + " node(s) each node " +
                         (c.op == "write" ? "writes " : "reads ") + gbs(share);
  if (ceiling && share >= 0.8 * *ceiling) {
    c.bound = "nodes";
    c.bound_text = at + ", " + format_fixed(100 * share / *ceiling, 0) + "%" + " of its own ceiling " + gbs(*ceiling) +
                   " (" + ceiling_text + "): the nodes bound the aggregate, not the storage";
  } else if (c.scaling_stops_at) {
    c.bound = "storage";
    c.bound_text = "the aggregate peaks at " +
                   gbs(*std::max_element(c.aggregate_gb_s.begin(), c.aggregate_gb_s.end())) + " while " +
                   at + (ceiling ? ", " + format_fixed(100 * share / *ceiling, 0) + "%" + " of its own ceiling " + gbs(*ceiling)
                                 : " (its own ceiling " + ceiling_text + ")") +
                   ": the shared storage bounds it";
  } else if (c.nodes.size() > 1) {
    c.bound = "not reached";
    c.bound_text = "the aggregate still grows at " + std::to_string(last.nodes) + " nodes (" +
                   gbs(c.aggregate_gb_s.back()) + "): the storage's limit is above it; more nodes would find it";
  } else if (run_nodes < 2) {
    // The curve is the storage's as nodes are added: the ranks of one host are one node,
    // sharing its links and memory, so more of them is no point of it (docs/gdsb-cluster.md).
    c.bound = "unknown";
    c.bound_text = "one point (1 node, " + std::to_string(last.ranks) + (last.ranks == 1 ? " rank" : " ranks") +
                   "): a scaling curve needs two nodes or more; launch ranks on more hosts to see where scaling stops";
  } else {
    c.bound = "unknown";
    c.bound_text = "one point (" + std::to_string(last.nodes) + " nodes): --scale with two node counts or more "
                   "(1,2,4 or auto) shows where scaling stops";
  }
}

// ", path compat": what the runner saw the mode's reads take (cuFile's compat mode, for one).
std::string paths_words(const std::vector<StoragePoint>& points, int mode) {
  std::set<std::string> paths;
  for (const StoragePoint& p : points)
    if (p.mode == mode && p.op == "read") paths.insert(p.paths_used.begin(), p.paths_used.end());
  std::string w;
  for (const std::string& x : paths) w += (w.empty() ? " on path " : " and ") + x;
  return w;
}

const char* kBusyWhy = "MLPerf Storage's bar: an accelerator at least 90% busy";

}  // namespace

std::optional<SharedStorageResult> shared_storage(const std::vector<NodeSummary>& ranks, const StorageJudgement& judge) {
  std::vector<const NodeSummary*> all;
  for (const NodeSummary& n : ranks) all.push_back(&n);
  return shared_storage(all, judge);
}

std::optional<SharedStorageResult> shared_storage(const std::vector<const NodeSummary*>& ranks, const StorageJudgement& judge) {
  // (op, mode, nodes) -> samples of the ranks that took part.
  std::map<std::tuple<int, int, int, std::string>, std::vector<std::pair<NodeShare, const StorageSample*>>> by_point;
  // A node's storage setup (its ceiling) and GPUs, once a node: its lowest rank's.
  std::map<std::string, const NodeSummary*> node_of;
  std::map<std::string, const RankStorage*> storage_of;
  const RankStorage* setup = nullptr;
  for (const NodeSummary* n : ranks) {
    const std::string id = node_key(*n);
    auto [it, added] = node_of.emplace(id, n);
    if (!added && n->rank < it->second->rank) it->second = n;
    if (!n->storage) continue;
    if (setup == nullptr || n->rank == 0) setup = &*n->storage;
    auto [st, first] = storage_of.emplace(id, &*n->storage);
    if (!first && n->rank == it->second->rank) st->second = &*n->storage;
    for (const StorageSample& s : n->storage->samples)
      by_point[{op_order(s.op), s.mode, s.nodes, s.op}].push_back(
          {{n->node, n->rank, s.bytes, s.start_unix_s, s.end_unix_s, id, 1, s.ready_unix_s}, &s});
  }
  if (setup == nullptr) return std::nullopt;
  SharedStorageResult r;
  r.dir = setup->dir;
  r.storage = setup->storage;
  r.layout = setup->layout;
  r.block_bytes = setup->block_bytes;
  r.limit_bytes_per_rank = setup->limit_bytes_per_rank;
  r.time_limit_s = setup->time_limit_s;
  r.scale_gain_percent = judge.scale_gain_percent.value_or(setup->scale_gain_percent);

  std::vector<StoragePoint> checkpoint_points;
  for (const auto& [key, samples] : by_point) {
    const auto& [order, mode, k, op] = key;
    StoragePoint p = make_point(k, mode, op, samples);
    r.interrupted = r.interrupted || p.stopped_by == "interrupted";
    (order >= 2 ? checkpoint_points : r.points).push_back(std::move(p));
  }
  // Curves: the ok points of each (op, mode), by node count.
  std::map<std::pair<int, int>, std::vector<const StoragePoint*>> curve_points;
  // A point stopped by SIGINT ended early, as no other point did: it is kept, off the curve.
  for (const StoragePoint& p : r.points) {
    if (p.status == "ok" && p.aggregate_gb_s && *p.aggregate_gb_s > 0 && p.stopped_by != "interrupted")
      curve_points[{op_order(p.op), p.mode}].push_back(&p);
  }
  for (auto& [key, pts] : curve_points) {
    ScalingCurve c = make_curve(pts, r.scale_gain_percent);
    judge_bound(c, *pts.back(), storage_of, node_of.size());
    r.curves.push_back(std::move(c));
  }

  // GPUs fed: the read curve with the highest aggregate (the best path the nodes have).
  const bool judged = judge.demand_per_gpu_gb_s || judge.demand_restore_s;
  std::optional<double> demand = judged ? judge.demand_per_gpu_gb_s : setup->demand_per_gpu_gb_s;
  const std::optional<double> restore_s = judged ? judge.demand_restore_s : setup->demand_restore_s;
  std::string demand_text = judged ? judge.demand_text : setup->demand_text;
  std::optional<std::string> no_demand;
  if (restore_s && !demand) {
    // checkpoint-load: each GPU's shard of the model within the stated time.
    int gpus = 0;  // once a node
    for (const auto& [id, n] : node_of) gpus += n->status == NodeStatus::Ok ? n->gpus : 0;
    if (setup->model_bytes == 0)
      no_demand = "checkpoint-load's demand needs the model's size (--model-bytes)";
    else if (gpus == 0)
      no_demand = "no GPU on these nodes: checkpoint-load's demand per GPU (the model over the GPUs) has none to divide by";
    else {
      demand = static_cast<double>(setup->model_bytes) / gpus / *restore_s / 1e9;
      demand_text += " (" + format_bytes_iec(static_cast<double>(setup->model_bytes)) + " over " +
                     std::to_string(gpus) + " GPUs in " + secs(*restore_s) + ")";
    }
  }
  if (no_demand) {
    GpusFed g;
    g.demand_text = demand_text;
    g.bound = "unknown";
    g.text = *no_demand + ": no GPU count";
    r.gpus_fed = g;
  }
  if (demand && *demand > 0) {
    const ScalingCurve* best = nullptr;
    double best_max = 0;
    for (const ScalingCurve& c : r.curves) {
      if (c.op != "read") continue;
      const double m = *std::max_element(c.aggregate_gb_s.begin(), c.aggregate_gb_s.end());
      if (m > best_max) best = &c, best_max = m;
    }
    GpusFed g;
    g.demand_per_gpu_gb_s = *demand;
    g.demand_text = demand_text;
    if (best == nullptr) {
      g.text = "no read point was measured: no GPU count";
      g.bound = "unknown";
    } else {
      g.mode = best->mode;
      const double per_gpu_floor = *demand * g.busy_percent / 100;
      g.gpus = static_cast<int>(std::floor(best_max / per_gpu_floor + 1e-9));
      g.bound = best->bound;
      g.at_least = best->bound != "storage";
      // The GPUs on the nodes of the curve's last point.
      const StoragePoint* last = nullptr;
      for (const StoragePoint& p : r.points)
        if (p.op == "read" && p.mode == best->mode && p.nodes == best->nodes.back()) last = &p;
      if (last)  // its shares are one a node: each node's GPUs once
        for (const NodeShare& s : last->shares) g.gpus_measured += node_of.at(s.node_id)->gpus;
      std::string head = "At " + gbs(*demand) + " a GPU (" + (demand_text.empty() ? "--demand-per-gpu" : demand_text) +
                         "), this storage feeds " + (g.at_least ? "at least " : "") + std::to_string(g.gpus) +
                         " GPUs at >= " + format_fixed(g.busy_percent, 0) + "% of their demand (" + kBusyWhy + "): " +
                         gbs(best_max) + " read through " + mode_words(best->mode) + paths_words(r.points, best->mode) +
                         ", over " + format_fixed(g.busy_percent, 0) + "% of " + gbs(*demand) + " = " + gbs(per_gpu_floor) +
                         " a GPU.";
      std::string tail;
      if (best->bound == "storage")
        tail = " The storage bounds it (its read curve stops growing at " + std::to_string(*best->scaling_stops_at) +
               " nodes).";
      else if (best->bound == "nodes")
        tail = " The nodes bound it, not the storage (each at 80% of its own ceiling or more): more or faster "
               "nodes would be fed more; the count is a floor.";
      else if (best->bound == "not reached")
        tail = " The storage did not saturate (its read curve still grows): the count is a floor.";
      else  // one point: no curve, so no word on its shape
        tail = " Whether the storage saturates is not known (one point, no curve): the count is a floor.";
      std::string measured = " Measured on " + std::to_string(best->nodes.back()) + " node(s) with " +
                             std::to_string(g.gpus_measured) + " GPU(s)";
      if (g.gpus_measured == 0)
        measured += " (no GPU on them: the figure is the storage's, through the CPU path)";
      else if (g.gpus_measured <= g.gpus)
        measured += ": all of them fed";
      else
        measured += ": " + std::to_string(g.gpus) + " of them fed";
      g.text = head + tail + measured + ".";
    }
    r.gpus_fed = g;
  }

  // The cluster-wide checkpoint: every rank wrote (then read) its whole shard; the time is
  // the first start to the last end.
  if (!checkpoint_points.empty()) {
    CheckpointResult ck;
    ck.model_bytes = setup->model_bytes;
    ck.model_text = setup->model_text;
    ck.mode_text = setup->checkpoint_mode_text;
    std::set<int> modes;
    for (const StoragePoint& p : checkpoint_points) {
      CheckpointOp op;
      op.status = p.status;
      op.reason = p.reason;
      op.seconds = p.window_s;
      op.bytes = p.bytes;
      op.aggregate_gb_s = p.aggregate_gb_s;
      op.clock_suspects = p.clock_suspects;
      op.clock_nodes = p.clock_nodes;
      // The slowest node of a checkpoint is the one that ended last.
      const NodeShare* last = nullptr;
      for (const NodeShare& s : p.shares)
        if (last == nullptr || s.end_unix_s > last->end_unix_s) last = &s;
      if (last) op.slowest_node = last->node;
      ck.shard_bytes = std::max(ck.shard_bytes, p.largest_rank_bytes);
      ck.ranks = std::max(ck.ranks, p.ranks);
      modes.insert(p.mode);
      if (p.op == "checkpoint-save") {
        ck.save = op;
      } else {
        ck.load = op;
      }
    }
    ck.modes.assign(modes.begin(), modes.end());
    r.checkpoint = ck;
  }
  return r;
}

}  // namespace gdsb::cluster
