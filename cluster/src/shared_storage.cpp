#include "gdsb/cluster/shared_storage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/scaling_words.hpp"
#include "gdsb/units.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::cluster {
namespace {

using nlohmann::json;

std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}
std::string signed_fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%+.*f", decimals, v);
  return b;
}
std::string sig3(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}
std::string gbs(double v) { return (v >= 100 ? fixed(v, 0) : v >= 10 ? fixed(v, 1) : sig3(v)) + " GB/s"; }
std::string secs(double v) { return (v >= 100 ? fixed(v, 0) : sig3(v)) + " s"; }

std::string mode_words(int mode) {
  const auto t = static_cast<XferType>(mode);
  return "-x " + std::to_string(mode) + " (" + std::string(xfer_label(t)) + ")";
}

// Ops in report order: what a checkpoint writes, then reads.
int op_order(const std::string& op) {
  if (op == "write") return 0;
  if (op == "read") return 1;
  if (op == "checkpoint-save") return 2;
  return 3;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A field of a storage object, named when it is missing or of the wrong type.
template <class T>
T field(const json& j, const char* key, const std::string& where, bool required, T fallback) {
  if (!j.contains(key)) {
    if (required) throw UsageError(where + "." + key + ": missing");
    return fallback;
  }
  const json& v = j.at(key);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw UsageError(where + "." + key + ": expected a string");
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      throw UsageError(where + "." + key + ": expected a whole number of bytes");
  } else if constexpr (std::is_same_v<T, int>) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1 << 30)
      throw UsageError(where + "." + key + ": expected a whole number from 0 to 2^30");
  } else {
    if (!v.is_number()) throw UsageError(where + "." + key + ": expected a number");
  }
  return v.get<T>();
}

}  // namespace

void to_json(json& j, const StorageSample& s) {
  j = {{"op", s.op},         {"nodes", s.nodes},   {"mode", s.mode},
       {"status", s.status}, {"reason", s.reason}, {"start_unix_s", s.start_unix_s},
       {"end_unix_s", s.end_unix_s}, {"bytes", s.bytes}, {"stopped_by", s.stopped_by},
       {"path_used", s.path_used}};
}

void to_json(json& j, const NodeStorage& s) {
  j = {{"dir", s.dir},
       {"layout", s.layout},
       {"block_bytes", s.block_bytes},
       {"limit_bytes_per_rank", s.limit_bytes_per_rank},
       {"time_limit_s", s.time_limit_s},
       {"model_bytes", s.model_bytes},
       {"model_text", s.model_text},
       {"demand_per_gpu_gb_s", s.demand_per_gpu_gb_s ? json(*s.demand_per_gpu_gb_s) : json()},
       {"demand_restore_s", s.demand_restore_s ? json(*s.demand_restore_s) : json()},
       {"demand_text", s.demand_text},
       {"scale_gain_percent", s.scale_gain_percent},
       {"ceiling_gb_s", s.ceiling_gb_s ? json(*s.ceiling_gb_s) : json()},
       {"ceiling_text", s.ceiling_text},
       {"samples", s.samples}};
}

NodeStorage node_storage_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": expected an object");
  NodeStorage s;
  s.dir = field<std::string>(j, "dir", where, true, "");
  s.layout = field<std::string>(j, "layout", where, false, s.layout);
  s.block_bytes = field<uint64_t>(j, "block_bytes", where, false, 0);
  s.limit_bytes_per_rank = field<uint64_t>(j, "limit_bytes_per_rank", where, false, 0);
  s.time_limit_s = field<double>(j, "time_limit_s", where, false, 0);
  s.model_bytes = field<uint64_t>(j, "model_bytes", where, false, 0);
  s.model_text = field<std::string>(j, "model_text", where, false, "");
  if (j.contains("demand_per_gpu_gb_s") && !j.at("demand_per_gpu_gb_s").is_null())
    s.demand_per_gpu_gb_s = field<double>(j, "demand_per_gpu_gb_s", where, true, 0);
  if (j.contains("demand_restore_s") && !j.at("demand_restore_s").is_null())
    s.demand_restore_s = field<double>(j, "demand_restore_s", where, true, 0);
  s.demand_text = field<std::string>(j, "demand_text", where, false, "");
  s.scale_gain_percent = field<double>(j, "scale_gain_percent", where, false, 50);
  if (j.contains("ceiling_gb_s") && !j.at("ceiling_gb_s").is_null())
    s.ceiling_gb_s = field<double>(j, "ceiling_gb_s", where, true, 0);
  s.ceiling_text = field<std::string>(j, "ceiling_text", where, false, "");
  if (j.contains("samples")) {
    if (!j.at("samples").is_array()) throw UsageError(where + ".samples: expected an array");
    for (const json& e : j.at("samples")) {
      const std::string w = where + ".samples[]";
      if (!e.is_object()) throw UsageError(w + ": expected an object");
      StorageSample x;
      x.op = field<std::string>(e, "op", w, true, "");
      x.nodes = field<int>(e, "nodes", w, true, 0);
      x.mode = field<int>(e, "mode", w, true, 0);
      x.status = field<std::string>(e, "status", w, true, "");
      x.reason = field<std::string>(e, "reason", w, false, "");
      x.start_unix_s = field<double>(e, "start_unix_s", w, true, 0);
      x.end_unix_s = field<double>(e, "end_unix_s", w, true, 0);
      x.bytes = field<uint64_t>(e, "bytes", w, true, 0);
      x.stopped_by = field<std::string>(e, "stopped_by", w, false, "");
      x.path_used = field<std::string>(e, "path_used", w, false, "");
      if (x.mode >= kXferTypeCount) throw UsageError(w + ".mode: expected a gdsio -x value 0..7");
      s.samples.push_back(std::move(x));
    }
  }
  return s;
}

StoragePoint make_point(int nodes, int mode, const std::string& op,
                        const std::vector<std::pair<NodeShare, const StorageSample*>>& samples) {
  StoragePoint p;
  p.nodes = nodes;
  p.mode = mode;
  p.op = op;
  p.ranks = static_cast<int>(samples.size());
  std::vector<std::string> not_ok;
  std::set<std::string> paths, stops;
  bool all_waived = true;
  for (const auto& [share, s] : samples) {
    if (s->status != "ok") {
      not_ok.push_back(share.node + ": " + (s->reason.empty() ? s->status : s->reason));
      all_waived = all_waived && s->status == "waived";
    }
    if (!s->path_used.empty()) paths.insert(s->path_used);
    if (!s->stopped_by.empty()) stops.insert(s->stopped_by);
    p.shares.push_back(share);
  }
  std::sort(p.shares.begin(), p.shares.end(), [](const NodeShare& a, const NodeShare& b) { return a.rank < b.rank; });
  p.paths_used.assign(paths.begin(), paths.end());
  // The limit that ended the point: a rank's own, else the time.
  if (stops.contains("limit")) {
    for (const auto& [share, s] : samples)
      if (s->stopped_by == "limit") {
        p.stopped_by = "limit (" + share.node + " first)";
        break;
      }
  } else if (!stops.empty()) {
    p.stopped_by = *stops.begin();
    for (const std::string& x : stops)
      if (x != p.stopped_by) p.stopped_by += ", " + x;
  }
  if (p.ranks < nodes) {
    p.status = "error";
    p.reason = std::to_string(nodes) + " ranks took part, " + std::to_string(p.ranks) + " reported it";
  }
  if (!not_ok.empty()) {
    p.status = all_waived && p.ranks == nodes ? "waived" : "error";
    std::string why;
    for (std::size_t i = 0; i < not_ok.size() && i < 3; ++i) why += (i ? "; " : "") + not_ok[i];
    if (not_ok.size() > 3) why += "; and " + std::to_string(not_ok.size() - 3) + " more";
    p.reason = p.reason.empty() ? why : p.reason + "; " + why;
  }
  // A point some rank could not run has no aggregate (nor a window to check).
  if (p.shares.empty() || p.status != "ok") return p;
  p.start_unix_s = p.shares.front().start_unix_s;
  p.end_unix_s = p.shares.front().end_unix_s;
  double last_start = p.start_unix_s, first_end = p.end_unix_s;
  for (const NodeShare& s : p.shares) {
    p.start_unix_s = std::min(p.start_unix_s, s.start_unix_s);
    p.end_unix_s = std::max(p.end_unix_s, s.end_unix_s);
    last_start = std::max(last_start, s.start_unix_s);
    first_end = std::min(first_end, s.end_unix_s);
    p.bytes += s.bytes;
  }
  p.window_s = p.end_unix_s - p.start_unix_s;
  // Every rank began after one barrier and (stonewalled or timed) ended together, so every
  // rank's interval overlaps every other's: a rank that ended before another began, or a
  // rank whose end precedes its start, was timed by a clock that disagrees.
  if (last_start > first_end || p.window_s <= 0) {
    std::vector<double> starts, ends;
    for (const NodeShare& s : p.shares) starts.push_back(s.start_unix_s), ends.push_back(s.end_unix_s);
    const double mstart = median_of(starts), mend = median_of(ends);
    for (const NodeShare& s : p.shares) {
      const bool off = s.end_unix_s < s.start_unix_s || s.end_unix_s < mstart || s.start_unix_s > mend;
      if (off) {
        // All ranks began after one barrier: the start's distance from the others' is the clock's.
        p.clock_suspects.push_back(s.node + " (started " + signed_fixed(s.start_unix_s - mstart, 3) +
                                   " s from the ranks' median start)");
        p.clock_nodes.push_back(s.node);
      }
    }
    if (p.clock_suspects.empty())  // two ranks, or no majority: name them all
      for (const NodeShare& s : p.shares) {
        p.clock_suspects.push_back(s.node + " (start " + fixed(s.start_unix_s, 3) + ", end " +
                                   fixed(s.end_unix_s, 3) + ")");
        p.clock_nodes.push_back(s.node);
      }
    p.status = "clock";
    p.reason = "the ranks' intervals do not overlap (the common window would be " +
               fixed(first_end - last_start, 3) + " s" + "): a node's clock disagrees; " +
               "synchronize the clocks (chrony or NTP) and run again";
    return p;
  }
  p.aggregate_gb_s = static_cast<double>(p.bytes) / p.window_s / 1e9;
  std::vector<double> shares;
  double sum = 0, sum2 = 0;
  const NodeShare* slowest = &p.shares.front();
  for (const NodeShare& s : p.shares) {
    shares.push_back(static_cast<double>(s.bytes) / p.window_s / 1e9);
    const auto b = static_cast<double>(s.bytes);
    sum += b;
    sum2 += b * b;
    if (s.bytes < slowest->bytes) slowest = &s;
  }
  p.share_min_gb_s = *std::min_element(shares.begin(), shares.end());
  p.share_max_gb_s = *std::max_element(shares.begin(), shares.end());
  p.share_median_gb_s = median_of(shares);
  p.fairness = sum2 > 0 ? sum * sum / (static_cast<double>(shares.size()) * sum2) : 0;
  p.slowest_node = slowest->node;
  return p;
}

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
void judge_bound(ScalingCurve& c, const StoragePoint& last, const std::map<std::string, const NodeStorage*>& storage_of) {
  std::optional<double> ceiling;
  std::string ceiling_text;
  for (const NodeShare& s : last.shares) {
    const auto it = storage_of.find(s.node);
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
    c.bound_text = at + ", " + fixed(100 * share / *ceiling, 0) + "%" + " of its own ceiling " + gbs(*ceiling) +
                   " (" + ceiling_text + "): the nodes bound the aggregate, not the storage";
  } else if (c.scaling_stops_at) {
    c.bound = "storage";
    c.bound_text = "the aggregate peaks at " +
                   gbs(*std::max_element(c.aggregate_gb_s.begin(), c.aggregate_gb_s.end())) + " while " +
                   at + (ceiling ? ", " + fixed(100 * share / *ceiling, 0) + "%" + " of its own ceiling " + gbs(*ceiling)
                                 : " (its own ceiling " + ceiling_text + ")") +
                   ": the shared storage bounds it";
  } else if (c.nodes.size() > 1) {
    c.bound = "not reached";
    c.bound_text = "the aggregate still grows at " + std::to_string(last.nodes) + " nodes (" +
                   gbs(c.aggregate_gb_s.back()) + "): the storage's limit is above it; more nodes would find it";
  } else {
    c.bound = "unknown";
    c.bound_text = "one point only: run --scale to see where scaling stops";
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

std::optional<SharedStorageResult> shared_storage(const std::vector<NodeSummary>& nodes, const StorageJudgement& judge) {
  // (op, mode, nodes) -> samples of the ranks that took part.
  std::map<std::tuple<int, int, int, std::string>, std::vector<std::pair<NodeShare, const StorageSample*>>> by_point;
  std::map<std::string, const NodeStorage*> storage_of;
  const NodeStorage* setup = nullptr;
  for (const NodeSummary& n : nodes) {
    if (!n.storage) continue;
    if (setup == nullptr || n.rank == 0) setup = &*n.storage;
    storage_of[n.node] = &*n.storage;
    for (const StorageSample& s : n.storage->samples)
      by_point[{op_order(s.op), s.mode, s.nodes, s.op}].push_back({{n.node, n.rank, s.bytes, s.start_unix_s, s.end_unix_s}, &s});
  }
  if (setup == nullptr) return std::nullopt;
  SharedStorageResult r;
  r.dir = setup->dir;
  r.layout = setup->layout;
  r.block_bytes = setup->block_bytes;
  r.limit_bytes_per_rank = setup->limit_bytes_per_rank;
  r.time_limit_s = setup->time_limit_s;
  r.scale_gain_percent = judge.scale_gain_percent.value_or(setup->scale_gain_percent);

  std::vector<StoragePoint> checkpoint_points;
  for (const auto& [key, samples] : by_point) {
    const auto& [order, mode, k, op] = key;
    StoragePoint p = make_point(k, mode, op, samples);
    (order >= 2 ? checkpoint_points : r.points).push_back(std::move(p));
  }
  // Curves: the ok points of each (op, mode), by node count.
  std::map<std::pair<int, int>, std::vector<const StoragePoint*>> curve_points;
  for (const StoragePoint& p : r.points)
    if (p.status == "ok" && p.aggregate_gb_s && *p.aggregate_gb_s > 0)
      curve_points[{op_order(p.op), p.mode}].push_back(&p);
  for (auto& [key, pts] : curve_points) {
    ScalingCurve c = make_curve(pts, r.scale_gain_percent);
    judge_bound(c, *pts.back(), storage_of);
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
    int gpus = 0;
    for (const NodeSummary& n : nodes) gpus += n.status == NodeStatus::Ok ? n.gpus : 0;
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
      std::map<std::string, int> gpus_of;
      for (const NodeSummary& n : nodes) gpus_of[n.node] = n.gpus;
      if (last)
        for (const NodeShare& s : last->shares) g.gpus_measured += gpus_of[s.node];
      std::string head = "At " + gbs(*demand) + " a GPU (" + (demand_text.empty() ? "--demand-per-gpu" : demand_text) +
                         "), this storage feeds " + (g.at_least ? "at least " : "") + std::to_string(g.gpus) +
                         " GPUs at >= " + fixed(g.busy_percent, 0) + "% of their demand (" + kBusyWhy + "): " +
                         gbs(best_max) + " read through " + mode_words(best->mode) + paths_words(r.points, best->mode) +
                         ", over " + fixed(g.busy_percent, 0) + "% of " + gbs(*demand) + " = " + gbs(per_gpu_floor) +
                         " a GPU.";
      std::string tail;
      if (best->bound == "storage")
        tail = " The storage bounds it (its read curve stops growing at " + std::to_string(*best->scaling_stops_at) +
               " nodes).";
      else if (best->bound == "nodes")
        tail = " The nodes bound it, not the storage (each at 80% of its own ceiling or more): more or faster "
               "nodes would be fed more; the count is a floor.";
      else
        tail = " The storage did not saturate (its read curve still grows): the count is a floor.";
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
      for (const NodeShare& s : p.shares) ck.shard_bytes = std::max(ck.shard_bytes, s.bytes);
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

json to_json(const SharedStorageResult& r) {
  json j;
  j["dir"] = r.dir;
  j["layout"] = r.layout;
  j["block_bytes"] = r.block_bytes;
  j["limit_bytes_per_rank"] = r.limit_bytes_per_rank;
  j["time_limit_s"] = r.time_limit_s;
  j["scale_gain_percent"] = r.scale_gain_percent;
  j["points"] = json::array();
  for (const StoragePoint& p : r.points) {
    j["points"].push_back(
        {{"nodes", p.nodes},
         {"mode", p.mode},
         {"mode_label", std::string(xfer_label(static_cast<XferType>(p.mode)))},
         {"op", p.op},
         {"status", p.status},
         {"reason", p.reason},
         {"ranks", p.ranks},
         {"start_unix_s", p.start_unix_s},
         {"end_unix_s", p.end_unix_s},
         {"window_s", p.window_s},
         {"bytes", p.bytes},
         {"aggregate_gb_s", p.aggregate_gb_s ? json(*p.aggregate_gb_s) : json()},
         {"per_node_gb_s", {{"min", p.share_min_gb_s}, {"median", p.share_median_gb_s}, {"max", p.share_max_gb_s}}},
         {"fairness", p.fairness},
         {"slowest_node", p.slowest_node},
         {"stopped_by", p.stopped_by},
         {"paths_used", p.paths_used},
         {"clock_suspects", p.clock_suspects}});
  }
  j["curves"] = json::array();
  for (const ScalingCurve& c : r.curves) {
    json gains = json::array();
    for (const auto& g : c.gain_percent) gains.push_back(g ? json(*g) : json());
    j["curves"].push_back({{"mode", c.mode},
                           {"mode_label", std::string(xfer_label(static_cast<XferType>(c.mode)))},
                           {"op", c.op},
                           {"nodes", c.nodes},
                           {"aggregate_gb_s", c.aggregate_gb_s},
                           {"linear_gb_s", c.linear_gb_s},
                           {"gain_percent", gains},
                           {"scaling_stops_at", c.scaling_stops_at ? json(*c.scaling_stops_at) : json()},
                           {"bound", c.bound},
                           {"bound_text", c.bound_text},
                           {"node_ceiling_gb_s", c.node_ceiling_gb_s ? json(*c.node_ceiling_gb_s) : json()}});
  }
  if (r.gpus_fed) {
    const GpusFed& g = *r.gpus_fed;
    j["gpus_fed"] = {{"demand_per_gpu_gb_s", g.demand_per_gpu_gb_s}, {"demand_text", g.demand_text},
                     {"busy_percent", g.busy_percent}, {"mode", g.mode}, {"op", g.op}, {"gpus", g.gpus},
                     {"at_least", g.at_least}, {"gpus_measured", g.gpus_measured}, {"bound", g.bound},
                     {"text", g.text}};
  }
  if (r.checkpoint) {
    const CheckpointResult& c = *r.checkpoint;
    const auto op = [](const CheckpointOp& o) {
      return json{{"status", o.status},
                  {"reason", o.reason},
                  {"seconds", o.seconds},
                  {"bytes", o.bytes},
                  {"aggregate_gb_s", o.aggregate_gb_s ? json(*o.aggregate_gb_s) : json()},
                  {"slowest_node", o.slowest_node},
                  {"clock_suspects", o.clock_suspects}};
    };
    j["checkpoint"] = {{"model_bytes", c.model_bytes}, {"model_text", c.model_text}, {"ranks", c.ranks},
                       {"shard_bytes", c.shard_bytes}, {"modes", c.modes}, {"mode", c.modes.empty() ? 1 : c.modes.front()},
                       {"save", op(c.save)},           {"load", op(c.load)}};
  }
  return j;
}

std::string storage_text(const SharedStorageResult& r) {
  std::ostringstream o;
  o << "Shared storage: " << r.dir << " (" << r.layout << ", " << format_size(r.block_bytes) << " transfers, "
    << format_size(r.limit_bytes_per_rank) << " a rank";
  if (r.time_limit_s > 0) o << ", stonewalled at " << secs(r.time_limit_s) << " or the first rank's limit";
  else o << ", stonewalled at the first rank's limit";
  o << ")\n";
  for (const StoragePoint& p : r.points) {
    o << "  " << p.op << ' ' << mode_words(p.mode) << " on " << p.nodes << " node(s): ";
    if (p.status != "ok") {
      o << p.status << ": " << p.reason;
      for (const std::string& s : p.clock_suspects) o << "; clock of " << s;
      o << '\n';
      continue;
    }
    o << gbs(*p.aggregate_gb_s) << " aggregate over " << secs(p.window_s) << "; per node min "
      << gbs(p.share_min_gb_s) << " median " << gbs(p.share_median_gb_s) << " max " << gbs(p.share_max_gb_s)
      << ", fairness " << fixed(p.fairness, 3) << ", slowest " << p.slowest_node;
    if (!p.stopped_by.empty()) o << ", stopped by " << p.stopped_by;
    for (std::size_t i = 0; i < p.paths_used.size(); ++i) o << (i ? " and " : ", path ") << p.paths_used[i];
    o << '\n';
  }
  for (const ScalingCurve& c : r.curves) {
    if (c.nodes.size() < 2 && c.bound == "unknown") continue;
    std::vector<report::ScalingStep> steps;
    for (std::size_t i = 0; i < c.nodes.size(); ++i)
      steps.push_back({c.nodes[i], c.aggregate_gb_s[i], c.linear_gb_s[i], c.gain_percent[i]});
    o << "  Scaling of " << c.op << ' ' << mode_words(c.mode) << ": " << report::scaling_steps_words(steps) << ". ";
    if (c.scaling_stops_at) o << report::scaling_stop_words(*c.scaling_stops_at, r.scale_gain_percent) << ". ";
    o << "Bound: " << c.bound << ": " << c.bound_text << ".\n";
  }
  if (r.gpus_fed) o << "  GPUs fed: " << r.gpus_fed->text << '\n';
  if (r.checkpoint) {
    const CheckpointResult& c = *r.checkpoint;
    o << "  Cluster-wide checkpoint of " << c.model_text << " (" << format_bytes_iec(static_cast<double>(c.model_bytes))
      << ") on " << c.ranks << " rank(s), shards up to " << format_bytes_iec(static_cast<double>(c.shard_bytes))
      << ":\n";
    const std::pair<const char*, const CheckpointOp*> ops[] = {{"save", &c.save}, {"restore", &c.load}};
    for (const auto& [name, op] : ops) {
      o << "    " << name << ": ";
      if (op->status != "ok") {
        o << op->status << ": " << op->reason;
        for (const std::string& s : op->clock_suspects) o << "; clock of " << s;
        o << '\n';
        continue;
      }
      o << secs(op->seconds) << " (" << gbs(op->aggregate_gb_s.value_or(0)) << " aggregate; the last rank done: "
        << op->slowest_node << ")\n";
    }
  }
  return o.str();
}

Demand parse_demand(std::string_view text, std::string_view option) {
  const std::string t(text);
  const std::string opt(option);
  Demand d;
  d.text = opt + " " + t;
  const auto number = [&](const std::string& part) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(part, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != part.size() || !(v > 0) || !std::isfinite(v))
      throw UsageError(opt + " " + t + ": '" + part + "' is not a number above 0");
    return v;
  };
  if (t.rfind("dataset:", 0) == 0) {
    const std::string rest = t.substr(8);
    const auto x = rest.find('x');
    const double samples = number(rest.substr(0, x));
    const uint64_t size = x == std::string::npos ? 128 * 1024 : parse_size(rest.substr(x + 1), option);
    if (size == 0) throw UsageError(opt + " " + t + ": a sample of 0 bytes");
    d.gb_s = samples * static_cast<double>(size) / 1e9;
    d.text += " (" + rest.substr(0, x) + " samples a second of " + format_size(size) + " a GPU)";
    return d;
  }
  if (t.rfind("checkpoint-load:", 0) == 0) {
    d.restore_s = number(t.substr(16));
    return d;
  }
  const std::string presets = "or a preset: dataset:SAMPLES_PER_S[xSIZE] or checkpoint-load:SECONDS";
  try {
    d.gb_s = parse_rate(t, opt) / 1e9;  // bits are bits: 100Gb/s is 12.5 GB/s
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + "; " + presets);
  }
  if (!(*d.gb_s > 0))
    throw UsageError(opt + " " + t + ": expected a rate above 0 such as 2GB/s, 500MB/s or 100Gb/s, " + presets);
  return d;
}

std::pair<uint64_t, std::string> parse_model_bytes(std::string_view text, std::string_view option) {
  const std::string t(text);
  const auto colon = t.find(':');
  if (colon == std::string::npos) {
    const uint64_t b = parse_size(t, option);
    if (b == 0) throw UsageError(std::string(option) + " " + t + ": the model must have at least one byte");
    return {b, format_size(b) + " (as given)"};
  }
  const std::string params = t.substr(0, colon), rest = t.substr(colon + 1);
  std::size_t used = 0;
  double n = 0;
  try {
    n = std::stod(params, &used);
  } catch (...) {
    used = 0;
  }
  const std::string suffix = params.substr(used);
  const double scale = suffix == "K" || suffix == "k" ? 1e3
                       : suffix == "M"               ? 1e6
                       : suffix == "B" || suffix == "G" ? 1e9
                       : suffix == "T"               ? 1e12
                       : suffix.empty()              ? 1
                                                     : 0;
  const bool adam = rest.size() > 5 && rest.substr(rest.size() - 5) == "+adam";
  const std::string dtype = adam ? rest.substr(0, rest.size() - 5) : rest;
  const int width = dtype == "bf16" || dtype == "fp16" ? 2 : dtype == "fp32" ? 4 : dtype == "fp8" ? 1 : 0;
  const double params_n = n * scale;
  if (used == 0 || scale == 0 || width == 0 || !(params_n >= 1) || params_n > 1e15)
    throw UsageError(std::string(option) + " '" + t +
                     "': expected a size (64M, 2G) or PARAMETERS:DTYPE[+adam] such as 405B:bf16+adam "
                     "(parameters with K, M, B or T; DTYPE bf16, fp16, fp32 or fp8)");
  const double per = width + (adam ? 12 : 0);
  const auto bytes = static_cast<uint64_t>(std::llround(params_n * per));
  std::string words = params + " parameters in " + dtype + " (" + std::to_string(width) + " bytes each)";
  if (adam) words += " plus Adam's fp32 master weights, momentum and variance (12 bytes a parameter)";
  return {bytes, words};
}

}  // namespace gdsb::cluster
