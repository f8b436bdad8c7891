// The gdsbench.history/1 document (docs/gdsb-report.md, "history show") and the terminal
// summary: both only read an Analysis.
#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "gdsb/report/history_analysis.hpp"
#include "gdsb/report/history_db.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report::history {
namespace {

using nlohmann::json;

// The gate's own significance: a point kept by the search whose final segments differ at
// more than --max-pvalue is said as not significant (the detection is changepoint.cpp's).
// Otava's methods keep a point at p <= max_pvalue; the level method's points passed its own
// test (the cut's penalty), the p-value is information there.
bool significant(const Change& c, const ChangePointOptions& o) {
  return o.method == ChangePointMethod::Level || c.point.p_value <= o.max_pvalue;
}

const char* method_name(ChangePointMethod m) {
  return m == ChangePointMethod::Level ? "level" : m == ChangePointMethod::Windowed ? "windowed" : "permutation";
}

const char* state_name(LevelVerdict::State s) {
  switch (s) {
    case LevelVerdict::State::TooFew: return "too_few";
    case LevelVerdict::State::Ok: return "ok";
    case LevelVerdict::State::Warning: return "warning";
    case LevelVerdict::State::Regression: return "regression";
    case LevelVerdict::State::Accepted: return "accepted";
  }
  return "ok";
}

// The level gate's verdict on a series' newest nights (level_gate.hpp), for the page and tools.
json level_json(const SeriesData& d, const LevelVerdict& v) {
  json j = {{"state", state_name(v.state)}};
  if (v.state == LevelVerdict::State::TooFew) {
    j["why"] = v.why;
    return j;
  }
  const auto run_at = [&](std::optional<std::size_t> i) { return i ? json(d.points.at(*i).first) : json(nullptr); };
  j.update({{"reference", v.reference},
            {"reference_first_run", d.points.at(v.reference_begin).first},
            {"reference_last_run", d.points.at(v.reference_end - 1).first},
            {"reference_nights", v.reference_nights},
            {"noise", v.noise},
            {"threshold", v.threshold},
            {"newest_nights", v.newest},
            {"newest_beyond", v.beyond},
            {"newest_median", v.newest_median},
            {"current_level", v.current_level},
            {"regression_run", run_at(v.regression_at)},
            {"accepted_run", run_at(v.accepted_at)}});
  return j;
}

// The first line of a run's reason (cuFile's failures go on with the log lines they quote).
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

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

json change_json(const SeriesData& d, const Change& c, const ChangePointOptions& options) {
  json changed = json::array();
  for (const auto& f : c.changed) {
    changed.push_back({{"fact", f.name}, {"label", fact_label(f.name)}, {"before", f.before}, {"after", f.after}});
    if (f.at_run != 0) changed.back()["at_run"] = f.at_run;
  }
  json not_compared = json::array();
  for (const auto& n : c.not_compared) not_compared.push_back({{"fact", n}, {"label", fact_label(n)}});
  return {{"run", c.run},
          {"time", c.time},
          {"index", c.point.index},
          {"p_value", c.point.p_value},
          {"significant", significant(c, options)},
          {"change_percent", c.point.forward_change_percent},
          {"magnitude", c.point.magnitude},
          {"worse", c.worse},
          {"before", segment_json(d, c.point.before)},
          {"after", segment_json(d, c.point.after)},
          {"context_changes", changed},
          {"not_compared", not_compared},
          {"sentence", c.sentence}};
}

// A test of a run that gave no figure (history.hpp, kNoFigureStatus).
struct NoFigure {
  std::string node, test, status, reason;
};

// Per run, its tests without a figure, in node and test order.
std::map<int64_t, std::vector<NoFigure>> no_figures(const History& h) {
  std::map<int64_t, std::vector<NoFigure>> out;
  for (const auto& [run, tests] : h.test_facts)
    for (const auto& [key, facts] : tests) {
      const auto status = facts.find(std::string(kNoFigureStatus));
      if (status == facts.end()) continue;
      const auto reason = facts.find(std::string(kNoFigureReason));
      out[run].push_back({key.first, key.second, status->second,
                          reason == facts.end() ? std::string() : first_line(reason->second)});
    }
  return out;
}

// A run's status: "ok" when every test it asked for gave a figure, else "failed" when one
// failed, else the first other status ("waived", "page cache").
std::string run_status(const std::vector<NoFigure>& missing) {
  if (missing.empty()) return "ok";
  for (const auto& m : missing)
    if (m.status == "failed") return "failed";
  return missing.front().status;
}

// Per run, the nodes whose newest run of its document kind it is (a node is in a run where
// the run recorded its facts, a test of it, or a figure of it).
// Run -> the nodes whose newest night (newest_nights(), the gate's) it belongs to.
std::map<int64_t, std::vector<std::string>> newest_of(const History& h) {
  std::map<int64_t, std::vector<std::string>> out;
  for (const auto& [key, runs] : newest_nights(h))
    for (const int64_t run : runs)
      if (std::find(out[run].begin(), out[run].end(), key.first) == out[run].end()) out[run].push_back(key.first);
  return out;
}

}  // namespace

json analysis_to_json(const Analysis& a, const json& meta) {
  const History& h = *a.history;
  json doc = meta;
  doc["schema"] = kHistorySchema;
  doc["database"] = {{"path", h.path}, {"schema_version", kHistorySchemaVersion}, {"runs", h.runs.size()}};
  if (a.options.method == ChangePointMethod::Level) {
    doc["options"] = {{"method", method_name(a.options.method)},
                      {"min_runs", a.options.level.min_runs},
                      {"threshold_noise_units", a.options.level.threshold},
                      {"penalty", a.options.level.penalty},
                      {"min_magnitude", a.options.level.min_magnitude},
                      {"accept_through", a.accept_through ? json(*a.accept_through) : json(nullptr)}};
  } else {
    doc["options"] = {{"method", method_name(a.options.method)},
                      {"max_pvalue", a.options.max_pvalue},
                      {"min_magnitude", a.options.min_magnitude},
                      {"window", a.options.window}};
  }
  json runs = json::array();
  const auto missing = no_figures(h);
  const auto newest = newest_of(h);
  for (const auto& r : h.runs) {
    const auto m = missing.find(r.id);
    const auto none = std::vector<NoFigure>{};
    const auto& list = m == missing.end() ? none : m->second;
    json tests = json::array();
    for (const auto& t : list)
      tests.push_back({{"node", t.node}, {"test", t.test}, {"status", t.status}, {"reason", t.reason}});
    const auto n = newest.find(r.id);
    runs.push_back({{"id", r.id},
                    {"time", r.time},
                    {"kind", r.kind},
                    {"source", r.source},
                    {"key", r.key},
                    {"status", run_status(list)},
                    {"no_figure", tests},
                    {"newest_of", n == newest.end() ? json::array() : json(n->second)}});
  }
  doc["runs"] = runs;
  json series = json::array();
  for (const auto& s : a.series) {
    json points = json::array();
    for (const auto& [run, value] : s.data->points) points.push_back({{"run", run}, {"value", value}});
    json segments = json::array();
    for (const auto& seg : s.segments) segments.push_back(segment_json(*s.data, seg));
    json changes = json::array();
    for (const auto& c : s.changes) changes.push_back(change_json(*s.data, c, a.options));
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
    if (s.level) series.back()["level"] = level_json(*s.data, *s.level);
  }
  doc["series"] = series;
  json fleet = json::array();
  for (const auto& e : fleet_events(a))
    fleet.push_back({{"night", e.night},
                     {"fact", e.fact},
                     {"label", e.fact.empty() ? std::string() : fact_label(e.fact)},
                     {"values", e.values},
                     {"run", e.run},
                     {"time", e.time},
                     {"nodes", e.nodes},
                     {"changes", e.changes}});
  doc["fleet"] = fleet;
  return doc;
}

std::string fleet_sentence(const FleetEvent& e) {
  std::string out = (e.night.empty() ? "run " + std::to_string(e.run) : e.night) + ": " +
                    std::to_string(e.nodes.size()) + " nodes changed ";
  if (e.fact.empty()) {
    out += "with no difference in the recorded context";
  } else {
    out += "when " + fact_label(e.fact) + " changed (";
    for (const auto& v : e.values) out += (&v == &e.values.front() ? "" : ", ") + v;
    out += ")";
  }
  out += ":";
  for (const auto& n : e.nodes) out += " " + n;
  return out;
}

std::string analysis_text(const Analysis& a) {
  const History& h = *a.history;
  std::ostringstream o;
  std::size_t changes = 0, weak = 0, short_series = 0;
  for (const auto& s : a.series) {
    if (!s.note.empty()) ++short_series;
    for (const auto& c : s.changes) {
      ++changes;
      const bool sig = significant(c, a.options);
      weak += sig ? 0U : 1U;
      o << (c.worse ? "worse  " : "better ") << (sig ? "" : "(not significant) ") << c.sentence << " [median "
        << format_number(c.point.before.median) << " -> " << format_number(c.point.after.median) << " "
        << (s.metric ? s.metric->unit : "") << ", p=" << format_pvalue(c.point.p_value)
        << (sig ? "" : " > --max-pvalue " + format_pvalue(a.options.max_pvalue)) << "]\n";
    }
  }
  // The level gate's view of the newest nights, where it is not "within the noise".
  for (const auto& s : a.series) {
    if (!s.level || (s.level->state != LevelVerdict::State::Regression &&
                     s.level->state != LevelVerdict::State::Warning))
      continue;
    const auto& v = *s.level;
    const std::string unit = " " + std::string(s.metric->unit);
    o << (v.state == LevelVerdict::State::Regression ? "red    " : "warn   ") << series_title(s) << ": "
      << (v.state == LevelVerdict::State::Regression ? "the newest nights sit below the reference"
                                                     : std::to_string(v.beyond) + " of the newest " +
                                                           std::to_string(v.newest) + " nights below the threshold")
      << " [newest median " << format_number(v.newest_median) << unit << ", reference "
      << format_number(v.reference) << unit << ", threshold " << format_number(v.threshold) << unit << "]\n";
  }
  for (const auto& e : fleet_events(a)) o << "fleet: " << fleet_sentence(e) << "\n";
  // Tests that gave no figure, one line per node, test, status and reason, with their runs.
  const auto missing = no_figures(h);
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<int64_t>> failures;
  std::size_t failed_runs = 0;
  for (const auto& r : h.runs) {
    const auto m = missing.find(r.id);
    if (m == missing.end()) continue;
    failed_runs += run_status(m->second) == "failed" ? 1U : 0U;
    for (const auto& t : m->second) failures[{t.status, t.node, t.test, t.reason}].push_back(r.id);
  }
  for (const auto& [key, runs] : failures) {
    const auto& [status, node, test, reason] = key;
    o << status << " " << test << " on " << node << " in " << runs.size() << (runs.size() == 1 ? " run (" : " runs (")
      << (runs.size() == 1 ? "run " + std::to_string(runs[0])
                           : "runs " + std::to_string(runs.front()) + " to " + std::to_string(runs.back()))
      << ")" << (reason.empty() ? "" : ": " + reason) << "\n";
  }
  o << h.runs.size() << " runs";
  if (failed_runs > 0) o << " (" << failed_runs << " with a failed test)";
  o << ", " << a.series.size() << " series, " << changes << " change points";
  if (weak > 0) o << " (" << weak << " not significant at --max-pvalue " << format_pvalue(a.options.max_pvalue) << ")";
  if (short_series > 0) o << "; " << short_series << " series too short to judge (fewer than 3 runs)";
  o << "\n";
  return o.str();
}

}  // namespace gdsb::report::history
