#include "gdsb/cluster/outputs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "gdsb/report/gate.hpp"
#include "gdsb/report/openmetrics.hpp"

namespace gdsb::cluster {
namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return v && std::isinf(*v) ? json(*v > 0 ? "+inf" : "-inf") : json();
  return *v;
}

// Escaping shared with gdsb-topo --health --openmetrics (one writer of label values).
using report::openmetrics::label_value;

}  // namespace

json cluster_document(const ClusterResult& r, const std::vector<std::string>& argv,
                      const RunContext& context, const std::string& version) {
  json j;
  j["schema"] = kClusterSchema;
  j["tool"] = {{"name", "gdsb-cluster"}, {"version", version}};
  j["argv"] = argv;
  j["context"] = context;
  j["interrupted"] = false;
  j["settings"] = {{"z_threshold", r.options.z_threshold},
                   {"min_relative", r.options.min_relative},
                   {"expected_ranks", r.options.expected_ranks}};
  j["verdict"] = r.failed() ? "fail" : "pass";
  j["odd_nodes"] = r.odd_nodes;
  j["gpu_metrics"] = gpu_metric_names(r);
  j["node_metrics"] = node_metric_names(r);
  j["nodes"] = json::array();
  // Node rows without their fingerprints: the differences are findings; the full
  // fingerprint stays in each node report.
  for (const auto& n : r.nodes) {
    json row = summary_without_fingerprint(n);
    row["fingerprint_entries"] = n.fingerprint.size();
    row.erase("storage");  // its figures are in shared_storage; its samples in the node report
    j["nodes"].push_back(std::move(row));
  }
  j["classes"] = json::array();
  for (const auto& c : r.classes) {
    json members = json::array();
    for (std::size_t i : c.members) members.push_back(r.nodes[i].node);
    j["classes"].push_back({{"key", c.key}, {"text", class_words(c)}, {"nodes", members}, {"gpus", c.gpus},
                            {"drives", c.drives}, {"nics", c.nics},
                            {"management_nics", c.management_nics},
                            {"management_nic_model", c.management_nic_model},
                            {"applicability", c.applicability},
                            {"comparison", class_comparison(c)}});
  }
  j["findings"] = json::array();
  for (const auto& f : r.findings) {
    json row{{"kind", finding_kind_name(f.kind)}, {"node", f.node},
             {"metric", f.metric}, {"gpu", f.gpu ? json(*f.gpu) : json()},
             {"value", opt(f.value)}, {"median", opt(f.median)},
             {"mad", opt(f.mad)}, {"z", opt(f.z)}, {"text", f.text}};
    if (f.count > 0) row["count"] = f.count;
    if (!f.files.empty()) row["files"] = f.files;
    j["findings"].push_back(std::move(row));
  }
  j["faults"] = json::array();
  for (const FleetFault& f : r.faults) {
    json nodes = json::array();
    for (const auto& n : f.nodes)
      nodes.push_back({{"node", n.node}, {"bdfs", n.bdfs}, {"count", n.count}, {"words", n.words}});
    j["faults"].push_back({{"kind", f.kind}, {"severity", f.severity}, {"xid", f.xid ? json(f.xid) : json()},
                           {"title", f.title}, {"nodes", std::move(nodes)}});
  }
  if (r.storage) j["shared_storage"] = to_json(*r.storage);
  j["stats"] = json::array();
  for (const auto& s : r.stats)
    j["stats"].push_back({{"metric", s.metric}, {"class", s.class_key},
                          {"gpu", s.gpu ? json(*s.gpu) : json()}, {"median", s.median},
                          {"mad", s.mad}, {"count", s.count}});
  return j;
}

std::string cluster_text(const ClusterResult& r) {
  std::ostringstream o;
  std::size_t ranks = 0;  // ranks that share a node are that node's (node_identity.hpp)
  for (const auto& n : r.nodes) ranks += std::max<std::size_t>(1, n.ranks.size());
  o << "gdsb-cluster: " << r.nodes.size() << " node(s)"
    << (ranks != r.nodes.size() ? " (" + std::to_string(ranks) + " ranks)" : "") << ", " << r.classes.size()
    << " hardware class(es), " << r.odd_nodes.size() << " odd node(s)";
  if (r.fleet_wide > 0) o << ", " << r.fleet_wide << " fleet-wide finding(s)";
  o << '\n';
  for (std::size_t k = 0; k < r.classes.size(); ++k) {
    const NodeClass& c = r.classes[k];
    o << "  class " << k + 1 << ": " << c.members.size() << " node(s), " << class_words(c)
      << (c.management_nics > 0 ? "; management NICs apart: " + std::to_string(c.management_nics) +
                                      " x " + c.management_nic_model
                                : "")
      << (c.applicability.empty() ? "" : "; " + c.applicability)
      << (class_comparison(c).empty() ? "" : "; ") << class_comparison(c) << '\n';
  }
  if (r.findings.empty()) o << "  every node alike; no check failed\n";
  for (const auto& f : r.findings) o << "  [" << finding_kind_name(f.kind) << "] " << f.text << '\n';
  if (!r.faults.empty()) o << "  hardware faults (each node's gdsb-topo fault facts, judged since boot against its "
                                "class's known-good GPUs):\n";
  for (const FleetFault& f : r.faults) {
    o << "    [" << f.severity << "] " << f.title << ": " << f.nodes.size() << " node(s): ";
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      const auto& n = f.nodes[i];
      o << (i ? ", " : "") << n.node << " (";
      for (std::size_t b = 0; b < n.bdfs.size(); ++b) o << (b ? " " : "") << n.bdfs[b];
      o << ", " << n.count << (f.kind == "xid" ? " event(s)" : "") << ")";
    }
    o << '\n';
  }
  if (r.storage) o << storage_text(*r.storage);
  o << (r.failed() ? "FAIL" : "PASS") << ": "
    << (r.odd_nodes.empty() ? "no odd node" : "odd nodes: ");
  for (std::size_t i = 0; i < r.odd_nodes.size(); ++i) o << (i ? ", " : "") << r.odd_nodes[i];
  if (r.fleet_wide > 0) o << "; " << r.fleet_wide << " fleet-wide finding(s)";
  o << '\n';
  return o.str();
}

std::string cluster_junit(const ClusterResult& r) {
  report::GateResult g;
  g.kind = "cluster";
  g.baseline_name = "class majority";
  g.current_name = "node";
  std::map<std::string, std::string> why;
  for (const auto& f : r.findings) {
    if (f.node.empty()) continue;
    auto& w = why[f.node];
    w += (w.empty() ? "" : "; ") + f.text;
  }
  // A fleet-wide finding is one failed case of its own: it names no node.
  for (const auto& f : r.findings)
    if (f.kind == FindingKind::FleetWide) g.cases.push_back({"fleet", f.metric, report::Outcome::Fail, f.text});
  for (const auto& n : r.nodes) {
    const auto it = why.find(n.node);
    g.cases.push_back({"nodes", n.node, it == why.end() ? report::Outcome::Pass : report::Outcome::Fail,
                       it == why.end() ? "alike its class; no check failed" : it->second});
  }
  return report::gate_junit(g);
}

std::string cluster_openmetrics(const ClusterResult& r) {
  // A line per node and figure (a million at 25,000 HGX nodes): appended to one string, the
  // figures by to_chars in the stream's format (%g, 6 digits), the node's label escaped once.
  std::string out;
  // Room for the lines at once (reserved pages never written cost no memory): growing by doubling
  // held the old text and the new one at the peak of the write.
  std::size_t lines = 0, longest = 0;
  for (const auto& n : r.nodes) {
    lines += 1 + n.node_metrics.size();
    for (const auto& [metric, series] : n.gpu_metrics) lines += series.size(), longest = std::max(longest, metric.size());
    for (const auto& [metric, value] : n.node_metrics) longest = std::max(longest, metric.size());
    longest = std::max(longest, n.node.size());
  }
  out.reserve(lines * (2 * longest + 80));
  const auto figure = [&out](double v) {
    char b[32];
    out.append(b, std::to_chars(b, b + sizeof b, v, std::chars_format::general, 6).ptr);
    out += '\n';
  };
  std::vector<std::string> labels;
  labels.reserve(r.nodes.size());
  for (const auto& n : r.nodes) labels.push_back("{node=\"" + label_value(n.node) + "\"");
  out += "# HELP gdsb_cluster_node_ok 1 when gdsb-cluster named nothing odd about the node.\n"
         "# TYPE gdsb_cluster_node_ok gauge\n";
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const bool odd = std::binary_search(r.odd_nodes.begin(), r.odd_nodes.end(), r.nodes[i].node);
    out.append("gdsb_cluster_node_ok").append(labels[i]).append(odd ? "} 0\n" : "} 1\n");
  }
  for (const auto& metric : gpu_metric_names(r)) {
    const std::string name = "gdsb_cluster_" + metric;
    out += "# HELP " + name + " " + metric + " per node and GPU (GB/s = 1e9 B/s).\n# TYPE " + name + " gauge\n";
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
      const auto it = r.nodes[i].gpu_metrics.find(metric);
      if (it == r.nodes[i].gpu_metrics.end()) continue;
      for (std::size_t g = 0; g < it->second.size(); ++g)
        if (it->second[g]) {
          out.append(name).append(labels[i]).append(",gpu=\"").append(std::to_string(g)).append("\"} ");
          figure(*it->second[g]);
        }
    }
  }
  for (const auto& metric : node_metric_names(r)) {
    const std::string name = "gdsb_cluster_" + metric;
    out += "# HELP " + name + " " + metric + " per node (GB/s = 1e9 B/s).\n# TYPE " + name + " gauge\n";
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
      const auto it = r.nodes[i].node_metrics.find(metric);
      if (it == r.nodes[i].node_metrics.end()) continue;
      out.append(name).append(labels[i]).append("} ");
      figure(it->second);
    }
  }
  std::ostringstream o;
  o.precision(6);
  if (r.storage) {  // the shared storage (issue 26): what a dashboard or an alert follows
    o << "# HELP gdsb_cluster_storage_aggregate_gb_s Aggregate throughput of the shared storage at a point, "
         "all ranks over the common window (GB/s = 1e9 B/s).\n"
      << "# TYPE gdsb_cluster_storage_aggregate_gb_s gauge\n";
    for (const StoragePoint& p : r.storage->points)
      if (p.aggregate_gb_s)
        o << "gdsb_cluster_storage_aggregate_gb_s{op=\"" << p.op << "\",mode=\"" << p.mode << "\",nodes=\""
          << p.nodes << "\"} " << *p.aggregate_gb_s << '\n';
    if (r.storage->gpus_fed && r.storage->gpus_fed->demand_per_gpu_gb_s > 0)
      o << "# HELP gdsb_cluster_storage_gpus_fed GPUs the shared storage keeps at 90% of the stated demand or more.\n"
        << "# TYPE gdsb_cluster_storage_gpus_fed gauge\n"
        << "gdsb_cluster_storage_gpus_fed{demand_gb_s=\"" << r.storage->gpus_fed->demand_per_gpu_gb_s << "\"} "
        << r.storage->gpus_fed->gpus << '\n';
    if (r.storage->checkpoint) {
      o << "# HELP gdsb_cluster_storage_checkpoint_seconds Time to save or restore the model on every rank at once.\n"
        << "# TYPE gdsb_cluster_storage_checkpoint_seconds gauge\n";
      const std::pair<const char*, const CheckpointOp*> ops[] = {{"save", &r.storage->checkpoint->save},
                                                                 {"load", &r.storage->checkpoint->load}};
      for (const auto& [step, op] : ops)
        if (op->status == "ok") o << "gdsb_cluster_storage_checkpoint_seconds{step=\"" << step << "\"} " << op->seconds << '\n';
    }
  }
  o << "# EOF\n";
  out += o.str();  // appended in place: a sum of the two would copy the whole text once more
  return out;
}

}  // namespace gdsb::cluster
