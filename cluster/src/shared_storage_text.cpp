// cluster.txt's "Shared storage" block.
#include <algorithm>
#include <sstream>

#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/report/scaling_words.hpp"
#include "gdsb/units.hpp"
#include "shared_storage_words.hpp"

namespace gdsb::cluster {

using namespace storage_words;

std::string storage_text(const SharedStorageResult& r) {
  std::ostringstream o;
  o << "Shared storage: " << r.dir << " (" << r.layout << ", " << format_size(r.block_bytes) << " transfers, "
    << format_size(r.limit_bytes_per_rank) << " a rank";
  if (r.time_limit_s > 0) o << ", stonewalled at " << secs(r.time_limit_s) << " or the first rank's limit";
  else o << ", stonewalled at the first rank's limit";
  o << ")\n";
  for (const StoragePoint& p : r.points) {
    o << "  " << p.op << ' ' << mode_words(p.mode) << " on " << p.nodes << " node(s)";
    if (p.ranks != p.nodes) o << " (" << p.ranks << " ranks)";  // ranks sharing a node: the node is named once
    o << ": ";
    if (p.status != "ok") {
      o << p.status << ": " << p.reason;
      for (const std::string& s : p.clock_suspects) o << "; clock of " << s;
      o << '\n';
      continue;
    }
    o << gbs(*p.aggregate_gb_s) << " aggregate over " << secs(p.window_s) << "; per node min "
      << gbs(p.share_min_gb_s) << " median " << gbs(p.share_median_gb_s) << " max " << gbs(p.share_max_gb_s)
      << ", fairness " << format_fixed(p.fairness, 3) << ", slowest " << p.slowest_node;
    if (!p.stopped_by.empty()) o << ", stopped by " << p.stopped_by;
    for (std::size_t i = 0; i < p.paths_used.size(); ++i) o << (i ? " and " : ", path ") << p.paths_used[i];
    o << '\n';
  }
  // One point of one node: why there is no curve, said once for every op and mode (issue 43).
  const auto one_node = std::find_if(r.curves.begin(), r.curves.end(), [](const ScalingCurve& c) {
    return c.nodes.size() == 1 && c.nodes.front() == 1 && c.bound == "unknown";
  });
  if (one_node != r.curves.end()) o << "  Scaling: " << one_node->bound_text << ".\n";
  for (const ScalingCurve& c : r.curves) {
    if (c.nodes.size() < 2 && c.bound == "unknown") continue;
    std::vector<report::ScalingStep> steps;
    for (std::size_t i = 0; i < c.nodes.size(); ++i)
      steps.push_back({c.nodes[i], c.aggregate_gb_s[i], c.linear_gb_s[i], c.gain_percent[i]});
    o << "  Scaling of " << c.op << ' ' << mode_words(c.mode) << ": " << report::scaling_steps_words(steps) << ". ";
    if (c.scaling_stops_at) o << report::scaling_stop_words(*c.scaling_stops_at, r.scale_gain_percent) << ". ";
    o << "Bound: " << c.bound << ": " << c.bound_text << ".\n";
  }
  if (r.interrupted) o << "  Interrupted (SIGINT): the points after the one stopped were not run; the stopped one is off the curves.\n";
  if (r.gpus_fed) o << "  GPUs fed: " << r.gpus_fed->text << '\n';
  if (r.checkpoint) {
    const CheckpointResult& c = *r.checkpoint;
    o << "  Cluster-wide checkpoint of " << c.model_text << " (" << format_bytes_iec(static_cast<double>(c.model_bytes))
      << ") on " << c.ranks << " rank(s), shards up to " << format_bytes_iec(static_cast<double>(c.shard_bytes))
      << (c.mode_text.empty() ? "" : ", through " + c.mode_text) << ":\n";
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

}  // namespace gdsb::cluster
