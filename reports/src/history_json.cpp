// The gdsbench.history/1 document (docs/gdsb-report.md, "history show") and the terminal
// summary: both only read an Analysis.
#include <cstdio>
#include <sstream>

#include "gdsb/report/history_analysis.hpp"
#include "gdsb/report/history_db.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report::history {
namespace {

using nlohmann::json;

json segment_json(const SeriesData& d, const SegmentSummary& s) {
  return {{"first_run", d.points.at(s.begin).first},
          {"last_run", d.points.at(s.end - 1).first},
          {"runs", s.end - s.begin},
          {"median", s.median},
          {"q1", s.q1},
          {"q3", s.q3},
          {"mean", s.mean},
          {"stddev", s.stddev}};
}

json change_json(const SeriesData& d, const Change& c) {
  json changed = json::array();
  for (const auto& f : c.changed)
    changed.push_back({{"fact", f.name}, {"label", fact_label(f.name)}, {"before", f.before}, {"after", f.after}});
  json not_compared = json::array();
  for (const auto& n : c.not_compared) not_compared.push_back({{"fact", n}, {"label", fact_label(n)}});
  return {{"run", c.run},
          {"time", c.time},
          {"index", c.point.index},
          {"p_value", c.point.p_value},
          {"change_percent", c.point.forward_change_percent},
          {"magnitude", c.point.magnitude},
          {"worse", c.worse},
          {"before", segment_json(d, c.point.before)},
          {"after", segment_json(d, c.point.after)},
          {"context_changes", changed},
          {"not_compared", not_compared},
          {"sentence", c.sentence}};
}

}  // namespace

json analysis_to_json(const Analysis& a, const json& meta) {
  const History& h = *a.history;
  json doc = meta;
  doc["schema"] = kHistorySchema;
  doc["database"] = {{"path", h.path}, {"schema_version", kHistorySchemaVersion}, {"runs", h.runs.size()}};
  doc["options"] = {{"method", a.options.method == ChangePointMethod::Windowed ? "windowed" : "permutation"},
                    {"max_pvalue", a.options.max_pvalue},
                    {"min_magnitude", a.options.min_magnitude},
                    {"window", a.options.window}};
  json runs = json::array();
  for (const auto& r : h.runs)
    runs.push_back({{"id", r.id}, {"time", r.time}, {"kind", r.kind}, {"source", r.source}, {"key", r.key}});
  doc["runs"] = runs;
  json series = json::array();
  for (const auto& s : a.series) {
    json points = json::array();
    for (const auto& [run, value] : s.data->points) points.push_back({{"run", run}, {"value", value}});
    json segments = json::array();
    for (const auto& seg : s.segments) segments.push_back(segment_json(*s.data, seg));
    json changes = json::array();
    for (const auto& c : s.changes) changes.push_back(change_json(*s.data, c));
    series.push_back({{"node", s.data->node},
                      {"test", s.data->test},
                      {"metric", s.data->metric},
                      {"title", series_title(s)},
                      {"unit", s.metric != nullptr ? std::string(s.metric->unit) : ""},
                      {"higher_is_better", s.metric != nullptr ? json(s.metric->higher_is_better) : json(nullptr)},
                      {"note", s.note},
                      {"points", points},
                      {"segments", segments},
                      {"change_points", changes}});
  }
  doc["series"] = series;
  json fleet = json::array();
  for (const auto& e : fleet_events(a))
    fleet.push_back({{"run", e.run}, {"time", e.time}, {"nodes", e.nodes}, {"changes", e.changes}});
  doc["fleet"] = fleet;
  return doc;
}

std::string analysis_text(const Analysis& a) {
  std::ostringstream o;
  std::size_t changes = 0, short_series = 0;
  for (const auto& s : a.series) {
    if (!s.note.empty()) ++short_series;
    for (const auto& c : s.changes) {
      ++changes;
      char pv[32];
      std::snprintf(pv, sizeof pv, "%.2g", c.point.p_value);
      o << (c.worse ? "worse  " : "better ") << c.sentence << " [median " << format_number(c.point.before.median)
        << " -> " << format_number(c.point.after.median) << " " << (s.metric ? s.metric->unit : "") << ", p=" << pv
        << "]\n";
    }
  }
  for (const auto& e : fleet_events(a)) {
    o << "fleet: run " << e.run << " changed " << e.nodes.size() << " nodes at once:";
    for (const auto& n : e.nodes) o << " " << n;
    o << "\n";
  }
  o << a.history->runs.size() << " runs, " << a.series.size() << " series, " << changes << " change points";
  if (short_series > 0) o << "; " << short_series << " series too short to judge (fewer than 3 runs)";
  o << "\n";
  return o.str();
}

}  // namespace gdsb::report::history
