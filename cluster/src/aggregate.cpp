#include "gdsb/cluster/aggregate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "gdsb/cluster/fingerprint.hpp"
#include "gdsb/cluster/robust.hpp"

namespace gdsb::cluster {
namespace {

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

// A finding without figures (everything but outliers).
Finding said(FindingKind kind, const std::string& node, const std::string& metric, std::string text) {
  Finding f;
  f.kind = kind;
  f.node = node;
  f.metric = metric;
  f.text = std::move(text);
  return f;
}

int majority_count(const std::vector<int>& counts) {
  std::map<int, int> freq;
  for (int c : counts) ++freq[c];
  int best = 0, best_n = -1;
  for (const auto& [c, n] : freq)
    if (n > best_n || (n == best_n && c > best)) best = c, best_n = n;
  return best;
}

void hardware_findings(ClusterResult& r, const NodeClass& c) {
  for (std::size_t i : c.members) {
    const NodeSummary& n = r.nodes[i];
    const std::pair<const char*, std::pair<int, int>> parts[] = {
        {"GPUs", {n.gpus, c.gpus}}, {"drives", {n.drives, c.drives}}, {"NICs", {n.nics, c.nics}}};
    for (const auto& [what, have_want] : parts)
      if (have_want.first < have_want.second)
        r.findings.push_back(said(FindingKind::MissingHardware, n.node, "",
                                  n.node + ": " + std::to_string(have_want.first) + " " + what + ", " +
                                      std::to_string(have_want.second) +
                                      " on the other nodes of its class"));
  }
}

void outlier_findings(ClusterResult& r, const NodeClass& c, const std::string& metric, std::optional<int> gpu,
                      const std::vector<std::pair<std::size_t, double>>& points) {
  if (points.empty()) return;
  std::vector<double> values;
  values.reserve(points.size());
  for (const auto& p : points) values.push_back(p.second);
  const RobustStats s = robust_stats(values);
  r.stats.push_back({metric, c.key, gpu, s.median, s.mad, s.count});
  for (const auto& [i, x] : points) {
    const double z = robust_z(x, s);
    if (!is_outlier(x, z, s, r.options.z_threshold, r.options.min_relative)) continue;
    const NodeSummary& n = r.nodes[i];
    const double pct = s.median != 0 ? 100.0 * (x - s.median) / s.median : 0;
    std::string where = gpu ? " GPU" + std::to_string(*gpu) : "";
    Finding f = said(FindingKind::Outlier, n.node, metric,
                     n.node + ":" + where + " " + metric + " " + fmt(x) + " vs median " +
                         fmt(s.median) + " of " + std::to_string(s.count) + " nodes (" +
                         (pct >= 0 ? "+" : "") + fmt(pct) + "%, robust z " +
                         (std::isinf(z) ? std::string(z > 0 ? "+inf" : "-inf") : fmt(z)) + ")");
    f.gpu = gpu;
    f.value = x;
    f.median = s.median;
    f.mad = s.mad;
    f.z = z;
    r.findings.push_back(std::move(f));
  }
}

// Outliers of a per-GPU figure of a class, GPU by GPU: each member's series is looked up
// once for all its GPUs (a lookup per GPU before: 8 per node and figure).
void gpu_outlier_findings(ClusterResult& r, const NodeClass& c, const std::string& metric) {
  std::vector<std::vector<std::pair<std::size_t, double>>> points(static_cast<std::size_t>(std::max(c.gpus, 0)));
  for (std::size_t i : c.members) {
    const auto it = r.nodes[i].gpu_metrics.find(metric);
    if (it == r.nodes[i].gpu_metrics.end()) continue;
    for (std::size_t g = 0; g < points.size() && g < it->second.size(); ++g)
      if (const auto& v = it->second[g]) points[g].emplace_back(i, *v);
  }
  for (std::size_t g = 0; g < points.size(); ++g) outlier_findings(r, c, metric, static_cast<int>(g), points[g]);
}

// Outliers of a per-node figure of a class.
void node_outlier_findings(ClusterResult& r, const NodeClass& c, const std::string& metric) {
  std::vector<std::pair<std::size_t, double>> points;
  for (std::size_t i : c.members) {
    const auto it = r.nodes[i].node_metrics.find(metric);
    if (it != r.nodes[i].node_metrics.end()) points.emplace_back(i, it->second);
  }
  outlier_findings(r, c, metric, std::nullopt, points);
}

// The ranks of one node (node_key) become one row: the first of them (the lowest rank under
// MPI) stands for the node, with every rank listed and the others' errors; the others are set
// aside, for the shared-storage samples they carry. A rank given twice stays a row of its own,
// for drop_duplicates to name. Reports of older versions are a node each.
std::vector<NodeSummary> join_ranks(ClusterResult& r) {
  std::vector<NodeSummary> kept, aside;
  kept.reserve(r.nodes.size());
  std::map<std::string, std::size_t> row_of;
  for (NodeSummary& n : r.nodes) {
    if (n.status == NodeStatus::Missing || n.node_id.empty()) {
      kept.push_back(std::move(n));
      continue;
    }
    const auto [it, added] = row_of.emplace(n.node_id, kept.size());
    if (added) n.ranks = {n.rank};
    if (added || std::find(kept[it->second].ranks.begin(), kept[it->second].ranks.end(), n.rank) !=
                     kept[it->second].ranks.end()) {
      kept.push_back(std::move(n));
      continue;
    }
    NodeSummary& node = kept[it->second];
    node.ranks.insert(std::upper_bound(node.ranks.begin(), node.ranks.end(), n.rank), n.rank);
    for (const std::string& e : n.errors) node.errors.push_back("rank " + std::to_string(n.rank) + ": " + e);
    if (n.status != NodeStatus::Ok) node.status = NodeStatus::Error;
    aside.push_back(std::move(n));
  }
  for (NodeSummary& n : kept)
    if (n.ranks.size() < 2) n.ranks.clear();  // one rank: nothing to say
  r.nodes = std::move(kept);
  return aside;
}

// Keeps the first report of each node name (nodes sorted by name, stably, so "first" is the
// order given: the first file of --from, the lowest rank) and names the rest. One pass.
void drop_duplicates(ClusterResult& r) {
  std::vector<NodeSummary> kept;
  kept.reserve(r.nodes.size());
  for (std::size_t i = 0; i < r.nodes.size();) {
    std::size_t j = i + 1;
    while (j < r.nodes.size() && r.nodes[j].node == r.nodes[i].node) ++j;
    if (j - i > 1) {
      Finding f = said(FindingKind::DuplicateNode, r.nodes[i].node, "", "");
      f.count = static_cast<int>(j - i);
      std::string listed;
      for (std::size_t k = i; k < j; ++k) {
        f.files.push_back(r.nodes[k].origin.empty() ? "?" : r.nodes[k].origin);
        if (k - i < 3) listed += (k == i ? "" : ", ") + f.files.back();
      }
      if (j - i > 3) listed += " and " + std::to_string(j - i - 3) + " more";
      f.text = r.nodes[i].node + ": " + std::to_string(j - i) + " reports carry this node name (" +
               listed + "); only the first is judged. Give each node its own hostname, and " +
               "pass each report once";
      r.findings.push_back(std::move(f));
    }
    kept.push_back(std::move(r.nodes[i]));
    i = j;
  }
  r.nodes = std::move(kept);
}

// What failed: the check, and the result's title and cause. One check gives several results
// (gds-stack: nvidia-fs, udev, cufile.json, file systems), so the id alone would merge
// different failures. Reports of older versions carry no title: their first evidence line
// stands for what failed, so that different failures are never merged.
using Failure = std::tuple<std::string, std::string, std::string>;
Failure failure_of(const FailingCheck& c) {
  if (c.title.empty()) return {c.id, "", c.summary};
  return {c.id, c.title, c.cause};
}

// "gds-stack (udev database)", or the id alone when the report has no title.
std::string check_words(const FailingCheck& c) {
  return c.title.empty() ? c.id : c.id + " (" + c.title + ")";
}

// Failed checks: per class of two nodes or more, a failure (failure_of) on more than half
// its members is one fleet-wide finding (a VM fleet without nvidia-fs has no odd node); the
// others name their node, so a node that fails otherwise than the fleet stays odd. A node
// alone in its class is no fleet: its failures are named on it (2 of 2 is a fleet).
void check_findings(ClusterResult& r) {
  std::set<std::pair<std::size_t, Failure>> fleet;  // (class, failure)
  std::vector<std::size_t> class_of_node(r.nodes.size(), r.classes.size());
  for (std::size_t c = 0; c < r.classes.size(); ++c) {
    const NodeClass& cls = r.classes[c];
    std::map<Failure, std::pair<int, const FailingCheck*>> failing;  // failure -> nodes, first
    for (std::size_t i : cls.members) {
      class_of_node[i] = c;
      std::set<Failure> seen;  // a failure counts once per node
      for (const auto& check : r.nodes[i].failing_checks)
        if (check.verdict == "fail" && seen.insert(failure_of(check)).second) {
          auto& [n, first] = failing[failure_of(check)];
          if (n++ == 0) first = &check;
        }
    }
    const std::size_t members = cls.members.size();
    for (const auto& [failure, count_first] : failing) {
      const auto [n, first] = count_first;
      if (members < 2 || static_cast<std::size_t>(n) * 2 <= members) continue;
      fleet.emplace(c, failure);
      const std::string what = first->title.empty() ? first->id : first->id + ": " + first->title;
      Finding f = said(FindingKind::FleetWide, "", what,
                       "check " + check_words(*first) + " failed on " + std::to_string(n) + " of " +
                           std::to_string(members) + " nodes of class " + std::to_string(c + 1) +
                           " (fleet-wide: no node is odd for it): " + first->summary);
      f.count = n;
      r.findings.push_back(std::move(f));
      ++r.fleet_wide;
    }
  }
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const NodeSummary& n = r.nodes[i];
    for (const auto& c : n.failing_checks)
      if (c.verdict == "fail" && !fleet.contains({class_of_node[i], failure_of(c)}))
        r.findings.push_back(said(FindingKind::CheckFailed, n.node, c.id,
                                  n.node + ": check " + check_words(c) + " failed: " + c.summary));
  }
}

}  // namespace

std::string_view finding_kind_name(FindingKind k) {
  switch (k) {
    case FindingKind::HardwareFault: return "hardware-fault";
    case FindingKind::DuplicateNode: return "duplicate-node";
    case FindingKind::MissingNode: return "missing-node";
    case FindingKind::NodeError: return "node-error";
    case FindingKind::MissingHardware: return "missing-hardware";
    case FindingKind::FleetWide: return "fleet-wide";
    case FindingKind::CheckFailed: return "check-failed";
    case FindingKind::Topology: return "topology";
    case FindingKind::Outlier: return "outlier";
    case FindingKind::Clock: return "clock";
  }
  return "?";
}

namespace {

// "8 GPUs (NVIDIA H100 80GB HBM3)", "1 data NIC", "no NVMe drive".
std::string count_words(int count, const std::string& model, const std::string& noun) {
  if (count <= 0) return "no " + noun;
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s") + (model.empty() ? "" : " (" + model + ")");
}

}  // namespace

std::string class_words(const NodeClass& c) {
  return count_words(c.gpus, c.gpu_model, "GPU") + ", " + count_words(c.drives, c.drive_model, "NVMe drive") +
         ", " + count_words(c.nics, c.nic_model, "data NIC");
}

std::string_view class_comparison(const NodeClass& c) {
  return c.members.size() == 1 ? "the only node of its class: nothing to compare it with, so its "
                                 "failures are its own"
                               : "";
}

std::vector<std::string> gpu_metric_names(const ClusterResult& r) {
  std::set<std::string> seen;
  for (const auto& n : r.nodes)
    for (const auto& [k, v] : n.gpu_metrics) seen.insert(k);
  std::vector<std::string> order;
  for (const char* k : {"h2d_gb_s", "d2h_gb_s", "d2d_gb_s"})
    if (seen.erase(k) != 0) order.emplace_back(k);
  order.insert(order.end(), seen.begin(), seen.end());
  return order;
}

std::vector<std::string> node_metric_names(const ClusterResult& r) {
  std::set<std::string> seen;
  for (const auto& n : r.nodes)
    for (const auto& [k, v] : n.node_metrics) seen.insert(k);
  return {seen.begin(), seen.end()};
}

ClusterResult aggregate(std::vector<NodeSummary> nodes, const AggregateOptions& options,
                        const StorageJudgement& storage) {
  ClusterResult r;
  r.options = options;
  r.nodes = std::move(nodes);
  const int received = static_cast<int>(r.nodes.size());  // duplicates included: they did answer
  {  // by name, stably: the order is found on indices and each summary moved once
    std::vector<std::size_t> order(r.nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r.nodes[a].node < r.nodes[b].node; });
    std::vector<NodeSummary> sorted;
    sorted.reserve(order.size());
    for (std::size_t i : order) sorted.push_back(std::move(r.nodes[i]));
    r.nodes = std::move(sorted);
  }
  // 0. One node, several ranks: one row; one node name, several reports: named, and counted once.
  const std::vector<NodeSummary> other_ranks = join_ranks(r);
  drop_duplicates(r);
  // 1. Nodes that did not answer or whose phases failed.
  for (const auto& n : r.nodes) {
    if (n.status == NodeStatus::Ok) continue;
    std::string why;
    for (const auto& e : n.errors) why += (why.empty() ? "" : "; ") + e;
    r.findings.push_back(said(n.status == NodeStatus::Missing ? FindingKind::MissingNode : FindingKind::NodeError,
                              n.node, "", n.node + ": " + why));
  }
  // 2. Classes of like hardware (models); missing hardware against the class majority.
  std::map<std::string, std::size_t> class_of;
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    if (r.nodes[i].status == NodeStatus::Missing) continue;
    const std::string key = r.nodes[i].class_key();
    auto [it, added] = class_of.emplace(key, r.classes.size());
    if (added) {
      const NodeSummary& n = r.nodes[i];
      r.classes.push_back({key, n.gpu_model, n.drive_model, n.nic_model, {}, 0, 0, 0, 0, ""});
    }
    r.classes[it->second].members.push_back(i);
  }
  for (NodeClass& c : r.classes) {
    std::vector<int> g, d, n, m;
    std::map<std::string, int> management_models;
    for (std::size_t i : c.members) {
      g.push_back(r.nodes[i].gpus);
      d.push_back(r.nodes[i].drives);
      n.push_back(r.nodes[i].nics);
      m.push_back(r.nodes[i].management_nics);
      if (r.nodes[i].management_nics > 0) ++management_models[r.nodes[i].management_nic_model];
    }
    c.management_nics = majority_count(m);
    for (int best = 0; const auto& [model, count] : management_models)
      if (count > best) c.management_nic_model = model, best = count;
    c.applicability = r.nodes[c.members.front()].applicability;
    for (std::size_t i : c.members)
      if (r.nodes[i].applicability != c.applicability) c.applicability.clear();
    c.gpus = majority_count(g);
    c.drives = majority_count(d);
    c.nics = majority_count(n);
    hardware_findings(r, c);
  }
  // 3. Failing checks: fleet-wide ones once, then each node's.
  check_findings(r);
  // 4. Odd topology and 5. outliers, within each class.
  const auto gpu_metrics = gpu_metric_names(r);
  const auto node_metrics = node_metric_names(r);
  for (NodeClass& c : r.classes) {
    std::vector<NamedFingerprint> fps;
    fps.reserve(c.members.size());
    for (std::size_t i : c.members) fps.push_back({r.nodes[i].node, &r.nodes[i].fingerprint});
    const std::vector<FingerprintDiff> diffs = diff_against_majority(fps);
    c.reference = c.members[reference_member(fps, diffs)];
    for (const auto& d : diffs) r.findings.push_back(said(FindingKind::Topology, d.node, d.key, d.words));
    for (const auto& metric : gpu_metrics) gpu_outlier_findings(r, c, metric);
    for (const auto& metric : node_metrics) node_outlier_findings(r, c, metric);
  }
  // 6. The shared storage: its figures, and a node whose clock made a window negative.
  std::vector<const NodeSummary*> ranks;
  for (const NodeSummary& n : r.nodes) ranks.push_back(&n);
  for (const NodeSummary& n : other_ranks) ranks.push_back(&n);
  r.storage = shared_storage(ranks, storage);
  if (r.storage) {
    std::set<std::string> named;
    const auto clock = [&](const std::vector<std::string>& named_nodes, const std::string& what, const std::string& why) {
      for (const std::string& n : named_nodes)
        if (named.insert(n).second)
          r.findings.push_back(said(FindingKind::Clock, n, "clock",
                                    n + ": its clock disagrees with the other ranks' (" + what + "): " + why));
    };
    for (const StoragePoint& p : r.storage->points)
      if (p.status == "clock")
        clock(p.clock_nodes, p.op + " -x " + std::to_string(p.mode) + " on " + std::to_string(p.nodes) + " nodes", p.reason);
    if (r.storage->checkpoint)
      for (const CheckpointOp* op : {&r.storage->checkpoint->save, &r.storage->checkpoint->load})
        if (op->status == "clock") clock(op->clock_nodes, "the checkpoint", op->reason);
  }
  if (options.expected_ranks > 0 && received < options.expected_ranks)
    r.findings.insert(r.findings.begin(),
                      said(FindingKind::MissingNode, "", "",
                           std::to_string(options.expected_ranks - received) +
                               " rank(s) sent no summary"));
  judge_faults_in_classes(r);
  r.faults = fleet_faults(r.nodes);
  std::set<std::string> odd;
  for (const auto& f : r.findings)
    if (!f.node.empty()) odd.insert(f.node);
  r.odd_nodes.assign(odd.begin(), odd.end());
  return r;
}

}  // namespace gdsb::cluster
