// The history page (gdsbench.history/1): the change points and what changed with them, the
// runs at which several nodes changed together, then per node one chart per series: every
// run, the segments' medians, the change points marked and annotated.
#include <cstdio>
#include <map>

#include "gdsb/report/metrics.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

std::string p_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

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
                      c.value("worse", false) ? badge("worse", "bad") : badge("better", "ok"),
                      esc(format_percent(c.value("change_percent", 0.0))),
                      esc(spread(c.at("before")) + " → " + spread(c.at("after")) + " " + str(s, "unit")),
                      esc(p_text(c.value("p_value", 1.0))), esc(str(c, "sentence"))});
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
  inner += "<p class=\"note\">E-Divisive with means (" + esc(str(opt, "method")) +
           ", as Apache Otava runs it); a change is kept at p ≤ " + esc(text_of(opt.value("max_pvalue", json()))) +
           " and a magnitude above " + esc(text_of(opt.value("min_magnitude", json()))) +
           ". Medians and quartiles are those of the runs between neighbouring change points.</p>";
  return section("changes", "Change points", inner);
}

std::string fleet_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : doc.at("fleet")) {
    std::string nodes;
    for (const auto& n : e.at("nodes")) nodes += (nodes.empty() ? "" : ", ") + n.get<std::string>();
    rows.push_back({esc(text_of(e.at("run"))), esc(str(e, "time").substr(0, 10)),
                    esc(text_of(json(e.at("nodes").size()))), esc(nodes), esc(text_of(e.at("changes")))});
  }
  const std::string inner =
      rows.empty() ? "<p>No run changed two or more nodes at once.</p>"
                   : table({"run", "date", "nodes", "which", "change points"}, rows);
  return section("fleet", "Nodes that changed at the same run", inner);
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

std::string runs_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : doc.at("runs"))
    rows.push_back({esc(text_of(r.at("id"))), esc(str(r, "time")), esc(str(r, "kind")), esc(str(r, "source"))});
  return section("runs", "Runs", table({"run", "started", "kind", "document"}, rows));
}

}  // namespace

std::string render_history(const json& doc) {
  std::size_t changes = 0, worse = 0;
  for (const auto& s : doc.at("series"))
    for (const auto& c : s.at("change_points")) {
      ++changes;
      worse += c.value("worse", false) ? 1U : 0U;
    }
  const std::string verdict =
      badge(std::to_string(changes) + " change points, " + std::to_string(worse) + " worse", worse > 0 ? "bad" : "ok");
  const std::string body = changes_section(doc) + fleet_section(doc) + series_section(doc) + runs_section(doc) +
                           context_section(doc);
  return page(doc, "gdsbench history: " + str(doc.value("database", json::object()), "path"), verdict,
              {{"changes", "Change points"}, {"fleet", "Fleet"}, {"series", "Series"}, {"runs", "Runs"},
               {"context", "Context"}},
              body);
}

}  // namespace gdsb::report::html
