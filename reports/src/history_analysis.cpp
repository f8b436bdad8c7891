// Change points per series and what differed in the runs' context across each of them.
#include "gdsb/report/history_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report::history {
namespace {

// A change point needs three runs (changepoint.hpp: Otava's t-test needs three values).
constexpr std::size_t kMinRuns = 3;

// What an absent fact means, by name: documents always carry their environment allowlist,
// so an absent env.* is unset; a cufile.json key absent from a recorded file takes cuFile's
// default; a GPU absent from a recorded stack is absent. Other absent facts were not
// recorded (documents of older versions): unknown, never guessed.
std::optional<std::string> absent_value(const std::string& name, const Facts& run) {
  if (name.rfind("env.", 0) == 0) return "unset";
  if (name.rfind("cufile.", 0) == 0 && run.count("cufile_json") != 0) return "default";
  if (name.rfind("gpu ", 0) == 0 && run.count("nvidia_fs") != 0) return "absent";
  return std::nullopt;
}

std::optional<std::string> value_of(const std::string& name, const Facts& run) {
  if (const auto it = run.find(name); it != run.end()) return it->second;
  return absent_value(name, run);
}

// The value most runs of a segment had; nullopt when a run of it did not record the fact.
std::optional<std::string> segment_value(const std::string& name, const std::vector<Facts>& runs) {
  std::map<std::string, std::size_t> counts;
  for (const auto& f : runs) {
    const auto v = value_of(name, f);
    if (!v) return std::nullopt;
    ++counts[*v];
  }
  if (counts.empty()) return std::nullopt;
  return std::max_element(counts.begin(), counts.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

std::string date_of(const std::string& time) { return time.substr(0, 10); }

std::string change_sentence(const SeriesAnalysis& s, const Change& c) {
  std::string out = series_title(s) + " " + format_percent(c.point.forward_change_percent) + " at run " +
                    std::to_string(c.run) + (c.time.empty() ? "" : " (" + date_of(c.time) + ")");
  if (c.changed.empty()) {
    out += ", with no difference in the recorded context";
  } else {
    out += ", when ";
    for (std::size_t i = 0; i < c.changed.size(); ++i) {
      const auto& f = c.changed[i];
      out += (i == 0 ? "" : i + 1 == c.changed.size() ? " and " : ", ") + fact_label(f.name) +
             " went from " + f.before + " to " + f.after;
    }
  }
  if (!c.not_compared.empty()) {
    out += " (not recorded on both sides, so not compared:";
    for (const auto& n : c.not_compared) out += " " + fact_label(n) + (&n == &c.not_compared.back() ? "" : ",");
    out += ")";
  }
  return out;
}

Change attribute(const History& h, const SeriesAnalysis& s, const ChangePoint& p) {
  const auto& pts = s.data->points;
  Change c;
  c.point = p;
  c.run = pts.at(p.index).first;
  if (const auto* r = h.run(c.run)) c.time = r->time;
  const bool up = p.forward_change_percent > 0;
  c.worse = s.metric != nullptr && p.forward_change_percent != 0 && up != s.metric->higher_is_better;
  auto facts_in = [&](std::size_t begin, std::size_t end) {
    std::vector<Facts> out;
    for (std::size_t i = begin; i < end; ++i) out.push_back(h.facts_of(pts[i].first, s.data->node, s.data->test));
    return out;
  };
  const auto before = facts_in(p.before.begin, p.before.end);
  const auto after = facts_in(p.after.begin, p.after.end);
  std::set<std::string> names;
  for (const auto* side : {&before, &after})
    for (const auto& f : *side)
      for (const auto& kv : f) names.insert(kv.first);
  for (const auto& name : names) {
    const auto b = segment_value(name, before);
    const auto a = segment_value(name, after);
    if (!b || !a) c.not_compared.push_back(name);
    else if (*b != *a) c.changed.push_back({name, *b, *a});
  }
  c.sentence = change_sentence(s, c);
  return c;
}

}  // namespace

std::string series_title(const SeriesAnalysis& s) {
  const std::string metric = s.metric != nullptr ? std::string(s.metric->label) : s.data->metric;
  return s.data->test + " " + metric + (s.data->node.empty() ? "" : " on " + s.data->node);
}

Analysis analyse(const History& h, const ChangePointOptions& options, std::optional<int64_t> accept_through) {
  Analysis a;
  a.history = &h;
  a.options = options;
  a.accept_through = accept_through;
  std::map<int64_t, std::size_t> order;  // run -> its place in the history
  for (std::size_t i = 0; i < h.runs.size(); ++i) order[h.runs[i].id] = i;
  for (const auto& d : h.series) {
    SeriesAnalysis s;
    s.data = &d;
    s.metric = find_metric(d.metric);
    std::vector<double> values;
    for (const auto& p : d.points) values.push_back(p.second);
    if (s.metric == nullptr) {
      s.note = "metric \"" + d.metric + "\" is unknown to this gdsb-report (a newer one added it)";
    } else if (values.size() < kMinRuns) {
      s.note = std::to_string(values.size()) + (values.size() == 1 ? " run" : " runs") +
               ": too few to judge (a change point needs " + std::to_string(kMinRuns) + " or more)";
    }
    std::vector<ChangePoint> points;
    if (s.note.empty() && options.method == ChangePointMethod::Level) {
      // The nights up to the accepted run (by the history's order) are accepted.
      std::size_t accepted_end = 0;
      if (accept_through)
        for (const auto& p : d.points)
          accepted_end += order[p.first] <= order[*accept_through] ? 1U : 0U;
      s.level = judge_level(values, s.metric->higher_is_better, accepted_end, options.level);
      points = describe_change_points(values, s.level->shifts);
    } else if (s.note.empty()) {
      points = find_change_points(values, options);
    }
    s.segments = summarize_segments(values, points);
    for (const auto& p : points) s.changes.push_back(attribute(h, s, p));
    a.series.push_back(std::move(s));
  }
  return a;
}

std::vector<FleetEvent> fleet_events(const Analysis& a) {
  std::map<int64_t, FleetEvent> by_run;
  for (const auto& s : a.series) {
    for (const auto& c : s.changes) {
      auto& e = by_run[c.run];
      e.run = c.run;
      e.time = c.time;
      ++e.changes;
      if (std::find(e.nodes.begin(), e.nodes.end(), s.data->node) == e.nodes.end()) e.nodes.push_back(s.data->node);
    }
  }
  std::vector<FleetEvent> out;
  for (auto& [run, e] : by_run)
    if (e.nodes.size() >= 2) out.push_back(std::move(e));
  return out;
}

}  // namespace gdsb::report::history
