// HTML view of a gdsbench.cluster/1 document: findings first (the odd nodes in words), a
// nodes x GPUs heat map per metric (summarised beyond kHeatRows nodes), then one row per
// node and the hardware classes.
#include <optional>
#include <set>
#include <sstream>

#include "gdsb/units.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

// j[key], or `none` where j has no such key: what j.value(key, none) gives, without the copy
// (a row per node).
const json& part(const json& j, const char* key, const json& none) {
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

std::string fixed(const json& v) { return v.is_number() ? format_fixed(v.get<double>(), 2) : "-"; }

// A node's GPUs: "8 x NVIDIA H100 80GB HBM3", "8", or "none" (not "0 x ").
std::string gpus_words(const json& hw) {
  const json n = hw.value("gpus", json());
  if (n.is_number() && n.get<double>() == 0) return "none";
  return str(hw, "gpu_model").empty() ? text_of(n) : text_of(n) + " x " + str(hw, "gpu_model");
}

// Up to this many nodes, every node is a row of the heat maps; beyond it (a fleet of
// 10,000 would draw an SVG of 10,000 rows), the maps summarise: one row per hardware class
// (its medians, from the document's stats) and then the odd nodes, at most kOddRows of
// them. Every node stays in the Nodes table.
constexpr std::size_t kHeatRows = 64;
constexpr std::size_t kOddRows = 200;

// The heat maps' rows: a node (its document row) or a class median.
struct HeatRow {
  std::string label;
  const json* node = nullptr;
  std::string class_key;
};

std::vector<HeatRow> heat_rows(const json& doc, std::string& note) {
  std::vector<HeatRow> rows;
  const auto& nodes = doc.at("nodes");
  if (nodes.size() <= kHeatRows) {
    for (const auto& n : nodes) rows.push_back({str(n, "node"), &n, ""});
    return rows;
  }
  std::size_t k = 0;
  for (const auto& c : doc.at("classes"))
    rows.push_back({"class " + std::to_string(++k) + " median (" + std::to_string(c.at("nodes").size()) +
                        " nodes)",
                    nullptr, str(c, "key")});
  std::set<std::string> odd;
  for (const auto& n : doc.at("odd_nodes")) odd.insert(n.get<std::string>());
  std::size_t shown = 0;
  for (const auto& n : nodes)
    if (odd.contains(str(n, "node")) && shown++ < kOddRows) rows.push_back({str(n, "node"), &n, ""});
  note = std::to_string(nodes.size()) + " nodes: each class's median, then " +
         (odd.size() > kOddRows ? "the first " + std::to_string(kOddRows) + " of the " : "the ") +
         std::to_string(odd.size()) + " odd node(s); every node is in the Nodes table. ";
  return rows;
}

// The median of a class for a metric (and GPU position) from the document's stats.
std::optional<double> class_median(const json& doc, const std::string& class_key, const std::string& metric,
                                   std::optional<std::size_t> gpu) {
  for (const auto& s : doc.at("stats")) {
    if (str(s, "class") != class_key || str(s, "metric") != metric) continue;
    const json& g = s.value("gpu", json());
    if (gpu ? (g.is_number() && g.get<std::size_t>() == *gpu) : g.is_null()) return s.at("median").get<double>();
  }
  return std::nullopt;
}

std::string heat_maps(const json& doc) {
  std::ostringstream o;
  std::string note;
  const std::vector<HeatRow> heat = heat_rows(doc, note);
  std::vector<std::string> rows;
  for (const auto& h : heat) rows.push_back(h.label);
  for (const auto& metric : doc.value("gpu_metrics", json::array())) {
    const std::string m = metric.get<std::string>();
    std::size_t width = 0;
    for (const auto& n : doc.at("nodes"))
      if (n.contains("gpu_metrics") && n.at("gpu_metrics").contains(m))
        width = std::max(width, n.at("gpu_metrics").at(m).size());
    std::vector<std::string> cols;
    for (std::size_t g = 0; g < width; ++g) cols.push_back("GPU" + std::to_string(g));
    std::vector<std::vector<std::optional<double>>> cells;
    for (const auto& h : heat) {
      std::vector<std::optional<double>> row(width);
      if (h.node == nullptr) {
        for (std::size_t g = 0; g < width; ++g) row[g] = class_median(doc, h.class_key, m, g);
      } else if (h.node->contains("gpu_metrics") && h.node->at("gpu_metrics").contains(m)) {
        const auto& v = h.node->at("gpu_metrics").at(m);
        for (std::size_t g = 0; g < v.size(); ++g)
          if (v[g].is_number()) row[g] = v[g].get<double>();
      }
      cells.push_back(std::move(row));
    }
    if (width > 0)
      o << figure(svg::heatmap_values(m + " per node and GPU", rows, cols, cells, "GB/s"),
                  note + m + ": nodes x GPUs (GB/s, 1e9 B/s); a pale cell in a dark column is the odd one");
  }
  const auto io = doc.value("node_metrics", json::array());
  if (!io.empty()) {
    std::vector<std::string> cols;
    for (const auto& m : io) cols.push_back(m.get<std::string>());
    std::vector<std::vector<std::optional<double>>> cells;
    for (const auto& h : heat) {
      std::vector<std::optional<double>> row(cols.size());
      for (std::size_t c = 0; c < cols.size(); ++c)
        if (h.node == nullptr)
          row[c] = class_median(doc, h.class_key, cols[c], std::nullopt);
        else if (h.node->contains("node_metrics") && h.node->at("node_metrics").contains(cols[c]))
          row[c] = h.node->at("node_metrics").at(cols[c]).get<double>();
      cells.push_back(std::move(row));
    }
    o << figure(svg::heatmap_values("io throughput per node and mode", rows, cols, cells, "GB/s"),
                note + "read ladder: nodes x gdsb-io modes (GB/s)");
  }
  return o.str();
}

}  // namespace

std::string render_cluster(const json& doc) {
  std::set<std::string> odd;
  for (const auto& n : doc.at("odd_nodes")) odd.insert(n.get<std::string>());
  std::vector<std::vector<std::string>> findings;
  for (const auto& f : doc.at("findings"))
    findings.push_back({badge(str(f, "kind"), str(f, "kind") == "outlier" || str(f, "kind") == "fleet-wide"
                                                  ? "warn"
                                                  : "bad"),
                        esc(str(f, "text"))});
  std::ostringstream body;
  body << section("findings", "Odd nodes",
                  findings.empty() ? "<p>Every node is alike its class; no check failed.</p>"
                                   : table({"kind", "finding"}, findings));
  body << section("heatmaps", "Heat maps", heat_maps(doc));
  std::vector<std::vector<std::string>> rows;
  static const json kNoObject = json::object(), kNoArray = json::array();
  for (const auto& n : doc.at("nodes")) {
    const json& hw = part(n, "hardware", kNoObject);
    std::string checks;
    for (const auto& c : part(n, "failing_checks", kNoArray))
      checks += (checks.empty() ? "" : ", ") + str(c, "id") + " (" + str(c, "verdict") + ")";
    std::string io;
    for (const auto& [k, v] : part(n, "node_metrics", kNoObject).items())
      io += (io.empty() ? "" : ", ") + k + " " + fixed(v);
    std::string h2d;
    for (const auto& v : part(part(n, "gpu_metrics", kNoObject), "h2d_gb_s", kNoArray))
      h2d += (h2d.empty() ? "" : " ") + fixed(v);
    const bool is_odd = odd.contains(str(n, "node"));
    rows.push_back({is_odd ? "<tr class=\"bad\">" : "<tr>", esc(str(n, "node")),
                    esc(gpus_words(hw)),
                    esc(str(n, "driver")), esc(str(n, "kernel")),
                    esc(str(n, "topology_verdict")) + (checks.empty() ? "" : ": " + esc(checks)),
                    esc(h2d), esc(io),
                    badge(is_odd ? "odd" : str(n, "status"), is_odd ? "bad" : "ok")});
  }
  body << section("nodes", "Nodes",
                  table({"node", "GPUs", "driver", "kernel", "topology", "H2D GB/s per GPU",
                         "io GB/s", "status"},
                        rows));
  std::vector<std::vector<std::string>> classes;
  for (const auto& c : doc.at("classes")) {
    // gdsb-cluster's words for the class ("8 GPUs (NVIDIA H100 80GB HBM3), ..."; "no GPU, no
    // NVMe drive, no data NIC"); documents of older versions carry the key and the counts.
    std::string hardware = str(c, "text");
    if (hardware.empty())
      hardware = str(c, "key") + ": " + text_of(c.at("gpus")) + " GPUs, " + text_of(c.at("drives")) + " drives, " +
                 text_of(c.at("nics")) + " NICs";
    if (c.value("management_nics", 0) > 0)
      hardware += "; management NICs apart: " + text_of(c.at("management_nics")) + " x " +
                  str(c, "management_nic_model");
    if (!str(c, "applicability").empty()) hardware += "; " + str(c, "applicability");
    if (!str(c, "comparison").empty()) hardware += "; " + str(c, "comparison");
    classes.push_back({esc("class " + std::to_string(classes.size() + 1)), esc(std::to_string(c.at("nodes").size())),
                       esc(hardware)});
  }
  body << section("classes", "Hardware classes", table({"class", "nodes", "hardware (the majority)"}, classes));
  const std::string storage = shared_storage_section(doc);
  body << storage;
  body << context_section(doc);
  const bool failed = str(doc, "verdict") == "fail";
  std::size_t fleet_wide = 0;
  for (const auto& f : doc.at("findings")) fleet_wide += str(f, "kind") == "fleet-wide";
  const std::string verdict =
      badge(failed ? std::to_string(odd.size()) + " odd node(s)" + (fleet_wide > 0 ? ", " +
                std::to_string(fleet_wide) + " fleet-wide finding(s)" : std::string())
                   : "all nodes alike",
            failed ? "bad" : "ok");
  return page(doc, "gdsb-cluster: " + std::to_string(doc.at("nodes").size()) + " nodes", verdict,
              storage.empty() ? std::vector<std::pair<std::string, std::string>>{
                                    {"findings", "Odd nodes"}, {"heatmaps", "Heat maps"},
                                    {"nodes", "Nodes"}, {"classes", "Classes"}}
                              : std::vector<std::pair<std::string, std::string>>{
                                    {"findings", "Odd nodes"}, {"heatmaps", "Heat maps"},
                                    {"nodes", "Nodes"}, {"classes", "Classes"},
                                    {"storage", "Shared storage"}},
              body.str());
}

}  // namespace gdsb::report::html
