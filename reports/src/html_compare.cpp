// HTML view of a gdsbench.compare/1 document.
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "gdsb/report/metrics.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

std::string change_badge(const std::string& change) {
  const std::string kind = change == "better" ? "ok" : change == "worse" ? "bad" : "muted";
  return badge(change, kind);
}

std::string num_or_dash(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_number() ? esc(format_number(j.at(key).get<double>()))
                                                  : "-";
}

std::string metric_rows(const json& match, std::vector<std::vector<std::string>>& rows) {
  for (const auto& m : match.at("metrics")) {
    const double dp = m.contains("delta_percent") && m.at("delta_percent").is_number()
                          ? m.at("delta_percent").get<double>()
                          : std::numeric_limits<double>::quiet_NaN();
    std::string test = "-";
    if (m.contains("u_test") && m.at("u_test").is_object()) {
      const auto& u = m.at("u_test");
      char buf[64];
      std::snprintf(buf, sizeof buf, "p=%.4f (%s vs %s)", u.value("p_value", 1.0),
                    str(u, "n_before").c_str(), str(u, "n_after").c_str());
      test = esc(buf);
      if (!u.value("has_power", false))
        test += "<br><span class=\"note\">too few repetitions to decide</span>";
    }
    rows.push_back(
        {str(m, "change") == "worse" ? "<tr class=\"bad\">" : "<tr>",
         esc(str(m, "label")) + " <span class=\"note\">" + esc(str(m, "unit")) + "</span>",
         "<td class=\"n\">" + num_or_dash(m, "before") + "</td>",
         "<td class=\"n\">" + num_or_dash(m, "after") + "</td>",
         "<td class=\"n\">" + esc(format_percent(dp)) + "</td>",
         "<td>" + change_badge(str(m, "change")) + "</td>", "<td>" + test + "</td>"});
  }
  return "";
}

double metric_field(const json& match, const std::string& key, const char* field) {
  for (const auto& m : match.at("metrics")) {
    if (str(m, "metric") == key && m.contains(field) && m.at(field).is_number())
      return m.at(field).get<double>();
  }
  return 0;
}

std::string unmatched_section(const json& doc) {
  std::vector<std::vector<std::string>> un;
  for (const char* key : {"unmatched", "not_comparable"}) {
    if (!doc.contains(key) || !doc.at(key).is_array()) continue;
    for (const auto& u : doc.at(key)) {
      std::string index = "#";
      index.append(str(u, "index"));
      un.push_back({esc(std::string(key) == "unmatched" ? "unmatched" : "not comparable"),
                    esc(str(u, "side")), esc(index), esc(str(u, "label")),
                    "<td class=\"wrap\">" + esc(str(u, "why")) + "</td>"});
    }
  }
  return section("unmatched", "Unmatched runs",
                 un.empty() ? "<p class=\"note\">Every run found its counterpart.</p>"
                            : table({"kind", "side", "run", "workload", "why"}, un));
}

// The figure a match is summarised by: throughput for io runs, else its first metric
// (a cluster comparison's aggregate GB/s, GPUs fed, checkpoint rate).
const json& headline(const json& match) {
  static const json kNone = json::object();
  for (const auto& m : match.at("metrics"))
    if (str(m, "metric") == "throughput") return m;
  return match.at("metrics").empty() ? kNone : match.at("metrics").front();
}

double field(const json& m, const char* key) {
  return m.contains(key) && m.at(key).is_number() ? m.at(key).get<double>()
                                                  : std::numeric_limits<double>::quiet_NaN();
}

// A comparison of two cluster documents' shared storage: one row per point or part.
std::string cluster_summary(const json& matches) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : matches) {
    for (const auto& d : m.at("metrics")) {
      rows.push_back({str(d, "change") == "worse" ? "<tr class=\"bad\">" : "<tr>", esc(str(m, "label")),
                      esc(str(d, "label")) + " <span class=\"note\">" + esc(str(d, "unit")) + "</span>",
                      "<td class=\"n\">" + num_or_dash(d, "before") + "</td>",
                      "<td class=\"n\">" + num_or_dash(d, "after") + "</td>",
                      "<td class=\"n\">" + esc(format_percent(field(d, "delta_percent"))) + "</td>",
                      "<td>" + change_badge(str(d, "change")) + "</td>",
                      "<td class=\"wrap\">" + esc(str(m, "incomparable")) + "</td>"});
    }
  }
  std::vector<svg::Bar> bars;
  for (const auto& m : matches) {
    const auto& h = headline(m);
    if (str(h, "unit") != "GB/s") continue;
    const double b = field(h, "before"), a = field(h, "after");
    bars.push_back({str(m, "label") + " before", {b, 0}, std::nullopt, false, format_number(b, 3)});
    bars.push_back({str(m, "label") + " after", {0, a}, std::nullopt, false, format_number(a, 3)});
  }
  std::string out = table({"point", "metric", "before", "after", "delta", "change", "not gated because"},
                          rows, "sortable");
  if (!bars.empty())
    out += figure(svg::bar_chart({"Aggregate before and after", svg::axis("GB/s"), svg::axis(""), 760, 0},
                                 {"before", "after"}, bars),
                  "Aggregate GB/s (1e9 B/s) before and after, per point and checkpoint step");
  return out;
}

}  // namespace

std::string render_compare(const json& doc) {
  const auto& matches = doc.at("matches");
  std::size_t worse = 0, better = 0;
  for (const auto& m : matches) {
    for (const auto& d : m.at("metrics")) {
      worse += str(d, "change") == "worse" ? 1U : 0U;
      better += str(d, "change") == "better" ? 1U : 0U;
    }
  }
  const bool cluster = str(doc, "compared") == "cluster";
  std::string verdict = badge(std::to_string(matches.size()) + (cluster ? " matched" : " runs matched"), "muted") + " " +
                        badge(std::to_string(better) + " metrics better", better ? "ok" : "muted") +
                        " " +
                        badge(std::to_string(worse) + " metrics worse", worse ? "bad" : "muted");
  std::ostringstream body;
  const std::string before = str(doc.value("before", json::object()), "path");
  const std::string after = str(doc.value("after", json::object()), "path");
  std::string intro =
      "<p>Before: <code>" + esc(before) + "</code><br>After: <code>" + esc(after) + "</code></p>";
  if (!str(doc, "baseline_xfer").empty() || !str(doc, "current_xfer").empty()) {
    intro += "<p>Transfer types: baseline <b>" + esc(str(doc, "baseline_xfer")) +
             "</b>, compared <b>" + esc(str(doc, "current_xfer")) + "</b></p>";
  }
  for (const auto& n : doc.value("notes", json::array()))
    intro += "<p class=\"note\">" + esc(text_of(n)) + "</p>";
  if (cluster) {
    intro += "<p class=\"note\">Single measurements: a change is better or worse by its sign; "
             "gdsb-report gate holds each aggregate to --max-throughput-drop.</p>";
    body << section("summary", "Shared storage", intro + cluster_summary(matches));
    body << unmatched_section(doc) << context_section(doc);
    return page(doc, "gdsbench cluster comparison", verdict,
                {{"summary", "Shared storage"}, {"unmatched", "Unmatched"}, {"context", "Context"}},
                body.str());
  }
  intro +=
      "<p class=\"note\">Where both sides were repeated, a Mann-Whitney U test (two-sided, alpha " +
      esc(str(doc, "alpha")) +
      ") decides whether a change is significant; a change it cannot tell from noise is marked not "
      "significant.</p>";
  std::vector<svg::Bar> bars;
  std::vector<std::vector<std::string>> summary;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const auto& m = matches[i];
    const double tb = metric_field(m, "throughput", "before"),
                 ta = metric_field(m, "throughput", "after");
    bars.push_back(
        {"#" + std::to_string(i) + " before", {tb, 0}, std::nullopt, false, format_number(tb, 3)});
    bars.push_back(
        {"#" + std::to_string(i) + " after", {0, ta}, std::nullopt, false, format_number(ta, 3)});
    std::string tchange, pchange;
    for (const auto& d : m.at("metrics")) {
      if (str(d, "metric") == "throughput") tchange = str(d, "change");
      if (str(d, "metric") == "p99") pchange = str(d, "change");
    }
    summary.push_back(
        {"<td><a href=\"#match-" + std::to_string(i) + "\">#" + std::to_string(i) + "</a></td>",
         esc(str(m, "label")), "<td class=\"n\">" + esc(format_number(tb)) + "</td>",
         "<td class=\"n\">" + esc(format_number(ta)) + "</td>",
         "<td class=\"n\">" + esc(format_percent(metric_field(m, "throughput", "delta_percent"))) +
             "</td>",
         "<td>" + change_badge(tchange) + "</td>", "<td>" + change_badge(pchange) + "</td>"});
  }
  std::string sum = intro + table({"run", "workload", "GiB/s before", "GiB/s after", "delta",
                                   "throughput", "p99 latency"},
                                  summary, "sortable");
  if (!bars.empty())
    sum += figure(
        svg::bar_chart({"Throughput before and after", svg::axis("GiB/s"), svg::axis(""), 760, 0},
                       {"before", "after"}, bars),
        "Throughput before and after (GiB/s)");
  body << section("summary", "Summary", sum);
  std::ostringstream det;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const auto& m = matches[i];
    std::vector<std::vector<std::string>> rows;
    metric_rows(m, rows);
    det << "<section id=\"match-" << i << "\"><h3>#" << i << " " << esc(str(m, "label"))
        << "</h3><p class=\"note\">path " << esc(str(m, "before_path_used")) << " → "
        << esc(str(m, "after_path_used")) << "; repetitions " << esc(str(m, "before_repetitions"))
        << " vs " << esc(str(m, "after_repetitions")) << "</p>"
        << table({"metric", "before", "after", "delta", "change", "U test"}, rows) << "</section>";
  }
  body << section("details", "Per run", det.str());
  body << unmatched_section(doc);
  body << context_section(doc);
  return page(doc, "gdsbench comparison", verdict,
              {{"summary", "Summary"},
               {"details", "Per run"},
               {"unmatched", "Unmatched"},
               {"context", "Context"}},
              body.str());
}

}  // namespace gdsb::report::html
