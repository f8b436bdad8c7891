// Change points per series and what differed in the runs' context across each of them.
#include "gdsb/report/history_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>

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
             " went from " + f.before + " to " + f.after +
             (f.at_run == 0 ? "" : " (at run " + std::to_string(f.at_run) + ", near the change point)");
    }
  }
  if (!c.not_compared.empty()) {
    out += " (not recorded on both sides, so not compared:";
    for (const auto& n : c.not_compared) out += " " + fact_label(n) + (&n == &c.not_compared.back() ? "" : ",");
    out += ")";
  }
  return out;
}

// Attribution at the boundary: what differs between the last run before the change point
// and the first run after it, so a fact that changed earlier or later in either segment (a
// kernel update fifteen runs before a driver's step) is not named. Where nothing differs
// there, the neighbouring pairs of runs up to two runs either side of it, inside the two
// segments, are looked at: the point's place in noise is often off by one or two.
Change attribute(const History& h, const SeriesAnalysis& s, const ChangePoint& p) {
  const auto& pts = s.data->points;
  Change c;
  c.point = p;
  c.run = pts.at(p.index).first;
  if (const auto* r = h.run(c.run)) c.time = r->time;
  const bool up = p.forward_change_percent > 0;
  c.worse = s.metric != nullptr && p.forward_change_percent != 0 && up != s.metric->higher_is_better;
  const auto facts = [&](std::size_t i) { return h.facts_of(pts.at(i).first, s.data->node, s.data->test); };
  // The facts that differ between runs i - 1 and i; `unknown` gets those one of them lacks.
  const auto differ = [&](std::size_t i, std::vector<std::string>* unknown) {
    const Facts before = facts(i - 1), after = facts(i);
    std::set<std::string> names;
    for (const auto* f : {&before, &after})
      for (const auto& kv : *f) names.insert(kv.first);
    std::vector<FactChange> out;
    for (const auto& name : names) {
      const auto b = value_of(name, before);
      const auto a = value_of(name, after);
      if (!b || !a) {
        if (unknown != nullptr) unknown->push_back(name);
      } else if (*b != *a) {
        out.push_back({name, *b, *a, 0});
      }
    }
    return out;
  };
  c.changed = differ(p.index, &c.not_compared);
  if (c.changed.empty()) {
    constexpr std::size_t kNear = 2;
    const std::size_t first = std::max(p.before.begin + 1, p.index > kNear ? p.index - kNear : 1);
    const std::size_t last = std::min(p.after.end, p.index + kNear + 1);  // one past
    for (std::size_t i = first; i < last; ++i) {
      if (i == p.index) continue;
      for (auto f : differ(i, nullptr)) {
        f.at_run = pts[i].first;
        c.changed.push_back(std::move(f));
      }
    }
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
  // (night or "run N", fact) -> event
  std::map<std::pair<std::string, std::string>, FleetEvent> groups;
  const auto add = [&](const SeriesAnalysis& s, const Change& c, const std::string& fact, const std::string& value) {
    const std::string night = date_of(c.time);
    auto& e = groups[{night.empty() ? "run " + std::to_string(c.run) : night, fact}];
    e.night = night;
    e.fact = fact;
    if (e.run == 0 || c.run < e.run) e.run = c.run, e.time = c.time;
    ++e.changes;
    if (std::find(e.nodes.begin(), e.nodes.end(), s.data->node) == e.nodes.end()) e.nodes.push_back(s.data->node);
    if (!value.empty() && std::find(e.values.begin(), e.values.end(), value) == e.values.end())
      e.values.push_back(value);
  };
  for (const auto& s : a.series)
    for (const auto& c : s.changes) {
      if (c.changed.empty()) add(s, c, "", "");
      for (const auto& f : c.changed) add(s, c, f.name, f.before + " -> " + f.after);
    }
  std::vector<FleetEvent> out;
  for (auto& [key, e] : groups) {
    if (e.nodes.size() < 2) continue;
    std::sort(e.nodes.begin(), e.nodes.end());
    std::sort(e.values.begin(), e.values.end());
    out.push_back(std::move(e));
  }
  // In time; on one night the named facts before the change points that name none.
  std::stable_sort(out.begin(), out.end(), [](const FleetEvent& x, const FleetEvent& y) {
    return std::make_tuple(x.night, x.fact.empty(), x.run) < std::make_tuple(y.night, y.fact.empty(), y.run);
  });
  return out;
}

}  // namespace gdsb::report::history
