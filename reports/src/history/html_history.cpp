// The history page (gdsbench.history/1): the change points and what changed with them, the
// runs at which several nodes changed together, then per node one chart per series: every
// run, the segments' medians, the change points marked and annotated.
#include <algorithm>
#include <map>

#include "gdsb/report/metrics.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

std::string spread(const json& seg) {
  return format_number(seg.value("median", 0.0)) + " (" + format_number(seg.value("q1", 0.0)) + "–" +
         format_number(seg.value("q3", 0.0)) + ")";
}

std::string changes_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : doc.at("series")) {
    for (const auto& c : s.at("change_points")) {
      rows.push_back({esc(text_of(c.at("run"))), esc(str(c, "time").substr(0, 10)), esc(str(s, "node")),
                      esc(str(s, "test") + " " + str(s, "metric")),
                      // A kept point whose segments differ at more than --max-pvalue: not
                      // significant, said so, neither red nor green.
                      !c.value("significant", true) ? badge(c.value("worse", false) ? "worse, not significant"
                                                                                     : "better, not significant",
                                                            "muted")
                      : c.value("worse", false)     ? badge("worse", "bad")
                                                    : badge("better", "ok"),
                      esc(format_percent(c.value("change_percent", 0.0))),
                      esc(spread(c.at("before")) + " → " + spread(c.at("after")) + " " + str(s, "unit")),
                      esc(format_pvalue(c.value("p_value", 1.0))), esc(str(c, "sentence"))});
    }
  }
  std::string inner;
  if (rows.empty()) {
    inner = "<p>No change point in any series: every series stayed within its own noise.</p>";
  } else {
    inner = table({"run", "date", "node", "series", "", "change", "median (quartiles) before → after", "p",
                   "what changed"},
                  rows);
  }
  const json opt = doc.value("options", json::object());
  if (str(opt, "method") == "level") {
    inner += "<p class=\"note\">Levels cut where the figure shifted (optimal partitioning in units of the "
             "series' night-to-night noise, levels of at least " + esc(text_of(opt.value("min_runs", json()))) +
             " nights; docs/changepoints.md). The gate goes red when the newest " +
             esc(text_of(opt.value("min_runs", json()))) + " nights all sit more than " +
             esc(text_of(opt.value("threshold_noise_units", json()))) +
             " noise units below the last accepted level: on the labelled corpus a healthy series goes red on at "
             "most 1 night in 500. The p-value is Otava's t-test between the two levels, for information. "
             "What changed: the facts that differ between the last run before the change point and the first "
             "after it (or, where none does, between neighbouring runs at most two runs from it).</p>";
    return section("changes", "Change points", inner);
  }
  inner += "<p class=\"note\">E-Divisive with means (" + esc(str(opt, "method")) +
           ", as Apache Otava runs it); a change is kept at p ≤ " + esc(text_of(opt.value("max_pvalue", json()))) +
           " and a magnitude above " + esc(text_of(opt.value("min_magnitude", json()))) +
           "; a point kept by the search whose final segments differ at a p-value above it is marked "
           "not significant. Medians and quartiles are those of the runs between neighbouring change points. "
           "What changed: the facts that differ between the last run before the change point and the first "
           "after it (or, where none does, between neighbouring runs at most two runs from it).</p>";
  return section("changes", "Change points", inner);
}

std::string fleet_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : doc.at("fleet")) {
    std::string nodes, values;
    for (const auto& n : e.at("nodes")) nodes += (nodes.empty() ? "" : ", ") + n.get<std::string>();
    for (const auto& v : e.value("values", json::array())) values += (values.empty() ? "" : ", ") + v.get<std::string>();
    const std::string what = str(e, "fact").empty() ? "no difference in the recorded context"
                                                     : str(e, "label") + " (" + values + ")";
    rows.push_back({esc(str(e, "night").empty() ? "run " + text_of(e.at("run")) : str(e, "night")),
                    esc(text_of(e.at("run"))), esc(what), esc(text_of(json(e.at("nodes").size()))), esc(nodes),
                    esc(text_of(e.at("changes")))});
  }
  const std::string inner =
      rows.empty() ? "<p>No night changed two or more nodes together.</p>"
                   : table({"night", "first run", "what changed", "nodes", "which", "change points"}, rows) +
                         "<p class=\"note\">Change points of two or more nodes on the same night (UTC date of the "
                         "first run after each) that name the same changed fact, whichever documents carried "
                         "them.</p>";
  return section("fleet", "Nodes that changed on the same night", inner);
}

std::string series_chart(const json& s) {
  svg::ChartSpec spec;
  spec.title = str(s, "title");
  spec.x = svg::axis("run");
  spec.x.include_zero = false;
  spec.y = svg::axis(str(s, "metric") + " (" + str(s, "unit") + ")");
  svg::Series runs{"runs", {}, 0, true, false};
  for (const auto& p : s.at("points")) runs.points.push_back({p.at("run").get<double>(), p.at("value").get<double>()});
  std::vector<svg::Series> series{runs};
  int segment = 0;
  for (const auto& seg : s.at("segments")) {
    const double m = seg.value("median", 0.0);
    series.push_back({"median of runs " + text_of(seg.at("first_run")) + "–" + text_of(seg.at("last_run")) + ": " +
                          format_number(m),
                      {{seg.at("first_run").get<double>(), m}, {seg.at("last_run").get<double>(), m}},
                      2 + (segment++ % 2),
                      false,
                      true});
  }
  std::string notes;
  for (const auto& c : s.at("change_points")) {
    spec.x_marks.push_back({c.at("run").get<double>(), "run " + text_of(c.at("run")), str(c, "sentence")});
    notes += "<li>" + esc(str(c, "sentence")) + "</li>";
  }
  std::string caption = esc(str(s, "title"));
  if (!str(s, "note").empty()) caption += ": " + esc(str(s, "note"));
  // The level gate's verdict on the newest nights, and its threshold drawn across the chart.
  if (const json level = s.value("level", json::object()); level.contains("threshold")) {
    const double t = level.at("threshold").get<double>();
    const auto& pts = s.at("points");
    series.push_back({"gate threshold: " + format_number(t),
                      {{pts.front().at("run").get<double>(), t}, {pts.back().at("run").get<double>(), t}},
                      1,
                      false,
                      true});
    const std::string state = str(level, "state");
    const std::string said = state == "regression" ? "red"
                             : state == "warning"  ? "warning"
                             : state == "accepted" ? "accepted"
                                                   : "within the noise";
    caption += "; gate: " + said +
               ", newest " + text_of(level.at("newest_nights")) + " nights' median " +
               format_number(level.at("newest_median").get<double>()) + " against the reference " +
               format_number(level.at("reference").get<double>()) + " (runs " + text_of(level.at("reference_first_run")) +
               "–" + text_of(level.at("reference_last_run")) + "), threshold " + format_number(t);
  } else if (level.contains("why")) {
    caption += "; gate: " + esc(str(level, "why"));
  }
  // One grid cell: the chart and, under it, the sentences of its change points.
  std::string out = "<div>" + figure(svg::line_chart(spec, series), caption);
  if (!notes.empty()) out += "<ul class=\"changes\">" + notes + "</ul>";
  return out + "</div>";
}

std::string series_section(const json& doc) {
  std::map<std::string, std::string> by_node;
  for (const auto& s : doc.at("series")) by_node[str(s, "node")] += series_chart(s);
  std::string inner;
  if (by_node.empty()) inner = "<p>The history has no series yet.</p>";
  for (const auto& [node, charts] : by_node) inner += "<h3>" + esc(node) + "</h3><div class=\"charts\">" + charts + "</div>";
  return section("series", "Series", inner);
}

// A run's status, failed in red with the reason of each test that gave no figure.
std::string status_cell(const json& r) {
  const std::string status = str(r, "status").empty() ? "ok" : str(r, "status");
  std::string out = badge(status, status == "ok" ? "ok" : status == "failed" ? "bad" : "warn");
  for (const auto& t : r.value("no_figure", json::array()))
    out += "<br>" + esc(str(t, "test") + " on " + str(t, "node") + ": " + str(t, "status") +
                        (str(t, "reason").empty() ? "" : ": " + str(t, "reason")));
  return out;
}

std::string runs_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : doc.at("runs"))
    rows.push_back(
        {esc(text_of(r.at("id"))), esc(str(r, "time")), esc(str(r, "kind")), esc(str(r, "source")), status_cell(r)});
  return section("runs", "Runs", table({"run", "started", "kind", "document", "status"}, rows));
}

// Tests that failed in the newest run of their node: "GPUD WRITE 1 MiB on n1 (run 13)".
std::vector<std::string> newest_failures(const json& doc) {
  std::vector<std::string> out;
  for (const auto& r : doc.at("runs")) {
    const json newest = r.value("newest_of", json::array());
    for (const auto& t : r.value("no_figure", json::array()))
      if (str(t, "status") == "failed" && std::find(newest.begin(), newest.end(), t.at("node")) != newest.end())
        out.push_back(str(t, "test") + " on " + str(t, "node") + " (run " + text_of(r.at("id")) + ")");
  }
  return out;
}

}  // namespace

std::string render_history(const json& doc) {
  std::size_t changes = 0, worse = 0, red = 0;
  for (const auto& s : doc.at("series")) {
    for (const auto& c : s.at("change_points")) {
      ++changes;
      worse += c.value("worse", false) && c.value("significant", true) ? 1U : 0U;
    }
    red += str(s.value("level", json::object()), "state") == "regression" ? 1U : 0U;
  }
  // Never green over a newest run that failed: no figure is no pass.
  const auto failing = newest_failures(doc);
  std::string words = std::to_string(changes) + " change points, " + std::to_string(worse) + " worse";
  if (red > 0) words += "; " + std::to_string(red) + " series red at the gate";
  if (!failing.empty())
    words += "; newest run failed: " + failing.front() +
             (failing.size() > 1 ? " and " + std::to_string(failing.size() - 1) + " more" : "");
  const std::string verdict = badge(words, worse > 0 || red > 0 || !failing.empty() ? "bad" : "ok");
  const std::string body = changes_section(doc) + fleet_section(doc) + series_section(doc) + runs_section(doc) +
                           context_section(doc);
  return page(doc, "gdsbench history: " + str(doc.value("database", json::object()), "path"), verdict,
              {{"changes", "Change points"}, {"fleet", "Fleet"}, {"series", "Series"}, {"runs", "Runs"},
               {"context", "Context"}},
              body);
}

}  // namespace gdsb::report::html
