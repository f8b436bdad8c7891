// One point of the shared-storage phase from the ranks' samples: the aggregate over the common
// window, the shares, the fairness and the clock check.
#include <set>

#include "gdsb/cluster/shared_storage.hpp"
#include "shared_storage_words.hpp"

namespace gdsb::cluster {

using namespace storage_words;

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

}  // namespace gdsb::cluster
