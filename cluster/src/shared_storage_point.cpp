// One point of the shared-storage phase from the ranks' samples: the aggregate over the common
// window, the shares, the fairness and the clock check.
#include <map>
#include <set>

#include "gdsb/cluster/shared_storage.hpp"
#include "shared_storage_words.hpp"

namespace gdsb::cluster {

using namespace storage_words;

namespace {

// The ranks' shares added up by node, in the order of the nodes' lowest ranks.
std::string node_of(const NodeShare& rank) {
  return rank.node_id.empty() ? "rank " + std::to_string(rank.rank) : rank.node_id;
}

std::vector<NodeShare> node_shares(const std::vector<std::pair<NodeShare, const StorageSample*>>& samples) {
  std::map<std::string, NodeShare> by_node;
  for (const auto& [rank, s] : samples) {
    const double ready = s->ready_unix_s > 0 ? s->ready_unix_s : rank.start_unix_s;
    auto [it, added] = by_node.emplace(node_of(rank), rank);
    NodeShare& n = it->second;
    if (added) {
      n.ranks = 1;
      n.ready_unix_s = ready;
      continue;
    }
    n.rank = std::min(n.rank, rank.rank);
    ++n.ranks;
    n.bytes += rank.bytes;
    n.start_unix_s = std::min(n.start_unix_s, rank.start_unix_s);
    n.end_unix_s = std::max(n.end_unix_s, rank.end_unix_s);
    n.ready_unix_s = std::min(n.ready_unix_s, ready);
  }
  std::vector<NodeShare> out;
  for (auto& [id, n] : by_node) out.push_back(std::move(n));
  std::sort(out.begin(), out.end(), [](const NodeShare& a, const NodeShare& b) { return a.rank < b.rank; });
  return out;
}

// The barrier-exit spread measured on one clock: the largest, over the nodes, of their ranks'
// latest exit minus their earliest (what the barrier's release and the scheduler cost here).
double barrier_skew(const std::vector<std::pair<NodeShare, const StorageSample*>>& samples) {
  std::map<std::string, std::pair<double, double>> spread;
  for (const auto& [rank, s] : samples) {
    if (s->ready_unix_s <= 0) continue;
    auto [it, added] = spread.emplace(node_of(rank), std::pair{s->ready_unix_s, s->ready_unix_s});
    it->second.first = std::min(it->second.first, s->ready_unix_s);
    it->second.second = std::max(it->second.second, s->ready_unix_s);
  }
  double most = 0;
  for (const auto& [id, lo_hi] : spread) most = std::max(most, lo_hi.second - lo_hi.first);
  return most;
}

// The clock check between nodes (one clock each). Every rank left one barrier, so every
// node's interval from its barrier exit to its last end overlaps every other's, up to the
// barrier's own skew: a node outside the others' by more than the tolerance was timed by a
// clock that disagrees. Names the suspects; false when the clocks agree.
bool clocks_disagree(StoragePoint& p, double tolerance) {
  double last_ready = p.shares.front().ready_unix_s, first_end = p.shares.front().end_unix_s;
  bool backwards = false;
  for (const NodeShare& n : p.shares) {
    last_ready = std::max(last_ready, n.ready_unix_s);
    first_end = std::min(first_end, n.end_unix_s);
    backwards = backwards || n.end_unix_s < n.start_unix_s;
  }
  if (last_ready - first_end <= tolerance && !backwards) return false;
  std::vector<double> readies, ends;
  for (const NodeShare& n : p.shares) readies.push_back(n.ready_unix_s), ends.push_back(n.end_unix_s);
  const double mready = median_of(readies), mend = median_of(ends);
  for (const NodeShare& n : p.shares) {
    const bool off = n.end_unix_s < n.start_unix_s || n.end_unix_s < mready - tolerance ||
                     n.ready_unix_s > mend + tolerance;
    if (off) {
      // All nodes left one barrier: the distance from the others' is the clock's.
      p.clock_suspects.push_back(n.node + " (started " + signed_fixed(n.ready_unix_s - mready, 3) +
                                 " s from the nodes' median start)");
      p.clock_nodes.push_back(n.node);
    }
  }
  if (p.clock_suspects.empty())  // two nodes, or no majority: name them all
    for (const NodeShare& n : p.shares) {
      p.clock_suspects.push_back(n.node + " (start " + format_fixed(n.start_unix_s, 3) + ", end " + format_fixed(n.end_unix_s, 3) + ")");
      p.clock_nodes.push_back(n.node);
    }
  p.status = "clock";
  p.reason = "the nodes' intervals do not overlap (the common window would be " + format_fixed(first_end - last_ready, 3) +
             " s, beyond the " + format_fixed(tolerance, 3) + " s the barrier's skew allows): a node's clock disagrees; " +
             "synchronize the clocks (chrony or NTP) and run again";
  return true;
}

}  // namespace

StoragePoint make_point(int nodes, int mode, const std::string& op,
                        const std::vector<std::pair<NodeShare, const StorageSample*>>& samples) {
  StoragePoint p;
  p.nodes = nodes;
  p.mode = mode;
  p.op = op;
  p.ranks = static_cast<int>(samples.size());
  int expected = 0;  // the ranks of the point's nodes, as the ranks counted them
  std::vector<std::string> not_ok;
  std::set<std::string> paths, stops;
  bool all_waived = true;
  for (const auto& [share, s] : samples) {
    expected = std::max(expected, s->ranks > 0 ? s->ranks : nodes);
    if (s->status != "ok") {
      not_ok.push_back(share.node + ": " + (s->reason.empty() ? s->status : s->reason));
      all_waived = all_waived && s->status == "waived";
    }
    if (!s->path_used.empty()) paths.insert(s->path_used);
    if (!s->stopped_by.empty()) stops.insert(s->stopped_by);
    p.largest_rank_bytes = std::max(p.largest_rank_bytes, s->bytes);
  }
  p.shares = node_shares(samples);
  p.paths_used.assign(paths.begin(), paths.end());
  // The limit that ended the point: SIGINT, else a rank's own, else the time.
  if (stops.contains("interrupted")) {
    p.stopped_by = "interrupted";
  } else if (stops.contains("limit")) {
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
  if (p.ranks < expected) {
    p.status = "error";
    p.reason = std::to_string(expected) + " ranks took part, " + std::to_string(p.ranks) + " reported it";
  }
  if (!not_ok.empty()) {
    p.status = all_waived && p.ranks >= expected ? "waived" : "error";
    std::string why;
    for (std::size_t i = 0; i < not_ok.size() && i < 3; ++i) why += (i ? "; " : "") + not_ok[i];
    if (not_ok.size() > 3) why += "; and " + std::to_string(not_ok.size() - 3) + " more";
    p.reason = p.reason.empty() ? why : p.reason + "; " + why;
  }
  // A point some rank could not run has no aggregate (nor a window to check).
  if (p.shares.empty() || p.status != "ok") return p;
  p.start_unix_s = p.shares.front().start_unix_s;
  p.end_unix_s = p.shares.front().end_unix_s;
  for (const NodeShare& s : p.shares) {
    p.start_unix_s = std::min(p.start_unix_s, s.start_unix_s);
    p.end_unix_s = std::max(p.end_unix_s, s.end_unix_s);
    p.bytes += s.bytes;
  }
  p.window_s = p.end_unix_s - p.start_unix_s;
  if (clocks_disagree(p, std::max(kClockFloorS, 2 * barrier_skew(samples)))) return p;
  if (p.window_s <= 0) {
    p.status = "error";
    p.reason = "the point took no time on any rank's clock: no rate";
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

}  // namespace gdsb::cluster
