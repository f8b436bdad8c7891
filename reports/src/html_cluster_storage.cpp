// The "Shared storage" section of cluster.html (issue 26): aggregate GB/s against node
// count per curve (mode + op) beside its linear reference, where scaling stops and what
// bounds it, every point, the GPUs the storage feeds and the checkpoint save and load.
// Only reads the document's shared_storage object; absent, the section is absent.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "gdsb/report/io_table.hpp"
#include "gdsb/report/metrics.hpp"
#include "gdsb/report/scaling_words.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

// A number cell; data-v sorts it as a number in a sortable table.
std::string num_cell(const json& j, const char* key) {
  if (!(j.is_object() && j.contains(key) && j.at(key).is_number())) return "<td class=\"n\">-</td>";
  const double v = j.at(key).get<double>();
  return "<td class=\"n\" data-v=\"" + svg::num(v) + "\">" + esc(format_number(v)) + "</td>";
}

double number_or(const json& j, const char* key, double fallback) {
  return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>()
                                                                   : fallback;
}

// A setting as written: 50, 2.5 (not 50.00).
std::string plain_number(const json& j, const char* key) {
  if (!(j.is_object() && j.contains(key) && j.at(key).is_number())) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%g", j.at(key).get<double>());
  return b;
}

std::string mode_name(const json& j) {
  if (!str(j, "mode_label").empty()) return str(j, "mode_label");
  return "mode " + str(j, "mode");
}

std::string bytes_text(const json& j, const char* key) {
  const double v = number_or(j, key, -1);
  return v < 0 ? "-" : format_bytes(static_cast<std::uint64_t>(v));
}

std::string status_cell(const std::string& status, const std::string& kind, const std::string& reason) {
  std::string out = badge(status.empty() ? "?" : status, kind);
  if (!reason.empty()) out.append(" ").append(esc(reason));
  return out;
}

// One series per curve and its dashed linear reference; without curves, one per (mode, op)
// of the ok points.
std::string scaling_chart(const json& ss) {
  std::vector<svg::Series> series;
  int color = 0;
  const json curves = ss.value("curves", json::array());
  if (!curves.empty()) {
    for (const auto& c : curves) {
      const std::string name = mode_name(c) + " " + str(c, "op");
      svg::Series agg{name, {}, color, true, false};
      svg::Series lin{name + " linear", {}, color, false, true};
      const auto& nodes = c.at("nodes");
      const json agg_v = c.value("aggregate_gb_s", json::array());
      const json lin_v = c.value("linear_gb_s", json::array());
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const double x = nodes.at(i).get<double>();
        if (i < agg_v.size() && agg_v.at(i).is_number()) agg.points.push_back({x, agg_v.at(i).get<double>()});
        if (i < lin_v.size() && lin_v.at(i).is_number()) lin.points.push_back({x, lin_v.at(i).get<double>()});
      }
      series.push_back(std::move(agg));
      if (!lin.points.empty()) series.push_back(std::move(lin));
      ++color;
    }
  } else {
    std::map<std::string, svg::Series> by_curve;
    for (const auto& p : ss.at("points")) {
      if (str(p, "status") != "ok" || !p.contains("aggregate_gb_s") || !p.at("aggregate_gb_s").is_number())
        continue;
      const std::string name = mode_name(p) + " " + str(p, "op");
      auto [it, added] = by_curve.try_emplace(name, svg::Series{name, {}, 0, true, false});
      if (added) it->second.color = color++;
      it->second.points.push_back({number_or(p, "nodes", 0), p.at("aggregate_gb_s").get<double>()});
    }
    for (auto& [name, s] : by_curve) series.push_back(std::move(s));
  }
  if (series.empty()) return "<p class=\"note\">No point measured an aggregate.</p>";
  // Node counts double (1, 2, 4, ... N): past a factor of 16, log-log axes keep the small
  // counts apart and draw linear scaling as a straight line of slope 1.
  double lo = 0, hi = 0;
  for (const auto& s : series)
    for (const auto& p : s.points)
      lo = lo == 0 ? p.x : std::min(lo, p.x), hi = std::max(hi, p.x);
  const bool log_x = lo > 0 && hi / lo >= 16;
  return figure(svg::line_chart({"Aggregate throughput against node count",
                                 svg::axis(log_x ? "nodes (log)" : "nodes", log_x),
                                 svg::axis(log_x ? "aggregate GB/s (log)" : "aggregate GB/s", log_x), 640, 280},
                                series),
                "Aggregate GB/s (1e9 B/s) against the number of nodes writing or reading at once; "
                "dashed: each curve's linear reference");
}

// The curve's points in cluster.txt's words (gdsb/report/scaling_words.hpp).
std::string steps_text(const json& c) {
  const json nodes = c.value("nodes", json::array()), agg = c.value("aggregate_gb_s", json::array()),
             lin = c.value("linear_gb_s", json::array()), gains = c.value("gain_percent", json::array());
  std::vector<ScalingStep> steps;
  for (std::size_t i = 0; i < nodes.size() && i < agg.size(); ++i) {
    if (!nodes.at(i).is_number() || !agg.at(i).is_number()) return "-";
    ScalingStep s{nodes.at(i).get<int>(), agg.at(i).get<double>(), 0, std::nullopt};
    if (i < lin.size() && lin.at(i).is_number()) s.linear_gb_s = lin.at(i).get<double>();
    if (i < gains.size() && gains.at(i).is_number()) s.gain_percent = gains.at(i).get<double>();
    steps.push_back(s);
  }
  return steps.empty() ? "-" : scaling_steps_words(steps);
}

std::string curves_text(const json& ss) {
  const json curves = ss.value("curves", json::array());
  if (curves.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : curves) {
    const json stops = c.value("scaling_stops_at", json());
    const std::string at = stops.is_number_integer() ? std::to_string(stops.get<int>()) + " nodes"
                                                     : "scales to the last point";
    rows.push_back({esc(mode_name(c) + " " + str(c, "op")), "<td class=\"wrap\">" + esc(steps_text(c)) + "</td>",
                    esc(at), esc(str(c, "bound").empty() ? "-" : str(c, "bound")),
                    num_cell(c, "node_ceiling_gb_s"),
                    "<td class=\"wrap\">" + esc(str(c, "bound_text")) + "</td>"});
  }
  return "<h3>Where scaling stops</h3>" +
         table({"curve", "aggregate at each node count", "scaling stops at", "bound", "node ceiling GB/s", "why"},
               rows);
}

std::string points_table(const json& ss) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : ss.at("points")) {
    const std::string status = str(p, "status");
    const json per = p.value("per_node_gb_s", json());
    std::string suspects, paths;
    for (const auto& s : p.value("clock_suspects", json::array()))
      suspects += (suspects.empty() ? "" : ", ") + text_of(s);
    for (const auto& s : p.value("paths_used", json::array())) paths += (paths.empty() ? "" : ", ") + text_of(s);
    const std::string kind = status == "ok" ? "ok" : status == "waived" ? "muted" : "bad";
    rows.push_back({kind == "bad" ? "<tr class=\"bad\">" : "<tr>",
                    "<td class=\"n\" data-v=\"" + esc(str(p, "nodes")) + "\">" + esc(str(p, "nodes")) + "</td>",
                    esc(mode_name(p)),
                    esc(str(p, "op")), num_cell(p, "window_s"), num_cell(p, "aggregate_gb_s"),
                    num_cell(per, "min"), num_cell(per, "median"), num_cell(per, "max"),
                    num_cell(p, "fairness"), esc(str(p, "slowest_node")), esc(str(p, "stopped_by")), esc(paths),
                    status_cell(status, kind, str(p, "reason")), esc(suspects)});
  }
  return "<h3>Points</h3>" +
         table({"nodes", "mode", "op", "window s", "aggregate GB/s", "per node min", "median", "max",
                "fairness", "slowest node", "stopped by", "path", "status", "clock suspects"},
               rows, "sortable");
}

std::string gpus_fed_text(const json& ss) {
  if (!ss.contains("gpus_fed") || !ss.at("gpus_fed").is_object()) return "";
  const auto& g = ss.at("gpus_fed");
  // gdsb-cluster's sentence says it all (the count, the demand, what bounds it); a document
  // without one gets the bare figures.
  std::string words = str(g, "text");
  if (words.empty())
    words = std::string(flag(g, "at_least") ? "At least " : "") + str(g, "gpus") +
            " GPUs fed at " + plain_number(g, "demand_per_gpu_gb_s") + " GB/s each.";
  return "<h3>GPUs fed</h3><p id=\"storage-gpus-fed\">" + esc(words) + "</p>";
}

std::string checkpoint_table(const json& ss) {
  if (!ss.contains("checkpoint") || !ss.at("checkpoint").is_object()) return "";
  const auto& cp = ss.at("checkpoint");
  std::vector<std::vector<std::string>> rows;
  for (const char* step : {"save", "load"}) {
    if (!cp.contains(step)) continue;
    const auto& s = cp.at(step);
    const std::string status = str(s, "status");
    rows.push_back({esc(step), num_cell(s, "seconds"), esc(bytes_text(s, "bytes")),
                    num_cell(s, "aggregate_gb_s"), esc(str(s, "slowest_node")),
                    status_cell(status, status == "ok" ? "ok" : "bad", str(s, "reason"))});
  }
  const std::string model = str(cp, "model_text");
  return "<h3>Checkpoint</h3><p>A model of " + esc(bytes_text(cp, "model_bytes")) +
         (model.empty() ? "" : " (" + esc(model) + ")") + " saved by " + esc(str(cp, "ranks")) +
         " ranks at once (shards up to " + esc(bytes_text(cp, "shard_bytes")) + ", -x " + esc(str(cp, "mode")) +
         "), then restored: the time a training job stalls.</p>" +
         table({"step", "seconds", "bytes", "aggregate GB/s", "last rank done", "status"}, rows);
}

}  // namespace

std::string shared_storage_section(const json& doc) {
  if (!doc.is_object() || !doc.contains("shared_storage") || !doc.at("shared_storage").is_object())
    return "";
  const auto& ss = doc.at("shared_storage");
  std::ostringstream o;
  const double limit = number_or(ss, "time_limit_s", 0);
  o << "<p>" << esc(str(ss, "layout").empty() ? "-" : str(ss, "layout")) << " in <code>"
    << esc(str(ss, "dir")) << "</code>, transfers of " << esc(bytes_text(ss, "block_bytes"))
    << ", at most " << esc(bytes_text(ss, "limit_bytes_per_rank")) << " per rank"
    << (limit > 0 ? ", stonewalled at " + plain_number(ss, "time_limit_s") + " s"
                  : std::string(", no time limit"))
    << ". Scaling stops at the first node count whose added nodes added less than "
    << esc(plain_number(ss, "scale_gain_percent")) << "% of a node's figure each (the first point's aggregate per node).</p>";
  if (ss.contains("points") && ss.at("points").is_array()) {
    o << scaling_chart(ss) << curves_text(ss);
    if (!ss.at("points").empty()) o << points_table(ss);
  }
  o << gpus_fed_text(ss) << checkpoint_table(ss);
  return section("storage", "Shared storage", o.str());
}

}  // namespace gdsb::report::html
